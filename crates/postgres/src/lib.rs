//! PostgreSQL backend for terrane's object store, so a world can outgrow one machine.
//!
//! # Overview
//!
//! [`PgStore`] implements [`terrane_store::Store`] on a PostgreSQL server
//! (`docs/format/postgres-v1.md` has the layout):
//!
//! - a store is one SQL schema ([`PgOptions::schema`], default `terrane`); each store table is
//!   a table `(key bytea PRIMARY KEY, version bigint, data bytea)` (`bytea` sorts bytewise,
//!   so Morton ranges stay contiguous), values compressed with lz4 when TOASTed where the
//!   server has it; a `meta` table holds the format and the application's signature, checked
//!   on every open (a schema holding anything else is refused, never changed);
//! - a [`Batch`] is one transaction, sent as one statement (array parameters, one round trip
//!   once prepared); `multi_get` is one round trip; scans stream keyset pages of one
//!   `REPEATABLE READ` snapshot; [`Store::snapshot`] is a `REPEATABLE READ READ ONLY`
//!   transaction held on a connection of its own;
//! - `PgStore` is `Send + Sync` over an [r2d2](https://docs.rs/r2d2) pool sized by
//!   [`PgOptions`]; connect, pool and statement timeouts bound every call;
//! - one writer or many readers per store, as on the file backends, through a session
//!   advisory lock ([`Error::Locked`] names the holder's pid);
//! - a sole writer keeps the objects it reads and writes in memory
//!   ([`PgOptions::cache_bytes`], 64 MiB by default) and answers `get` and `multi_get` from
//!   there after one empty query proves its lock session alive: its lock guarantees that
//!   nobody else changed them. Readers, shared writers, snapshots and scans read the server;
//! - with the `testing` feature, [`testing::PgServer`] starts a throwaway server (and a
//!   synchronous standby) for tests, and [`testing::FaultProxy`] stands between a test and
//!   its server as a network would: per direction delay, jitter and bandwidth, refused
//!   connections, resets and partitions, and a count of the round trips that crossed it.
//!
//! Connection strings are `postgres://user:password@host:port/db` URLs or libpq
//! `key=value` strings; a `host` starting with `/` is a Unix socket directory
//! (`host=/run/postgresql dbname=worlds`). terrane adds one setting of its own, `schema=NAME`
//! (`…/db?schema=nether`, or `schema=nether` among the pairs), so that one string names one
//! world ([`split_schema`]).
//!
//! # Example
//!
//! ```no_run
//! use terrane_postgres::{PgOptions, PgStore};
//! use terrane_store::{Batch, ReadView, Store, StoreConfig, tables};
//!
//! let db = PgStore::open_with(
//!     "host=/run/postgresql dbname=worlds",
//!     &StoreConfig::new("my-game world v1"),
//!     &PgOptions::new().schema("overworld"),
//! )?;
//! let mut save = Batch::new();
//! save.put(tables::CHUNK_L0, vec![1; 32], 1, vec![0xab; 10_000])
//!     .put(tables::ENTITY, vec![2; 16], 1, b"zombie".to_vec());
//! db.write(&save.synced())?;
//! assert_eq!(db.get(tables::ENTITY, &[2; 16])?.unwrap().data, b"zombie");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Durability
//!
//! A batch that returned `Ok` is committed: a crash of the client never loses or splits it.
//! What a crash of the *server* (or of its machine) can take depends on the batch:
//!
//! - a **synced** batch commits with `synchronous_commit = on`: it returns only after its
//!   commit record is flushed to the server's disk and, when the server lists synchronous
//!   standbys (`synchronous_standby_names`), to a standby's too. It survives a server crash,
//!   power loss, and (with a synchronous standby) the loss of the primary followed by a
//!   failover to that standby. When the standby does not confirm it within
//!   `statement_timeout` (it is cut off), the server stops waiting and commits on the primary
//!   alone; the store then returns an error (outcome unknown), never `Ok`: a batch reported
//!   durable is on the standby;
//! - an **unsynced** batch commits with `synchronous_commit = off`: it returns before the
//!   flush, and a server crash can lose the last commits (up to three times the server's
//!   `wal_writer_delay`, 200 ms by default), always whole batches, never part of one;
//! - [`Store::sync`] commits a small synced transaction, which makes every earlier commit
//!   durable too; [`Store::flush`] does nothing.
//!
//! A batch whose `write` returned an error (the connection broke, the server stopped) may or
//! may not have committed: its outcome is **unknown**, never partial. Read it back to know.
//!
//! # Features
//!
//! - `testing`: [`testing::PgServer`], a throwaway server from the Debian `postgresql`
//!   package for tests.
//!
//! # What it does not guarantee
//!
//! - The store's lock is a session of the server: a server restart or failover ends it while
//!   the store stays open. Its reads then reconnect by themselves (once); a write in flight
//!   fails with a lost-connection error (outcome unknown) and the next one reconnects. If
//!   another process opened the store for writing meanwhile, every later write of this store
//!   fails with [`Error::Poisoned`] and writes nothing (the writer epoch): reopen it.
//! - Values over [`MAX_VALUE_LEN`] (256 MiB) are refused ([`Error::ValueTooLarge`]).
//! - No TLS: connect over a Unix socket or a trusted network (the `postgres` crate's `NoTls`).
//! - The read cache assumes that only terrane stores write the schema: rows changed with
//!   plain SQL behind a sole writer's back are not seen by its cached reads (set
//!   `cache_bytes(0)` if something else writes them).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod cache;
mod conn;
mod lock;
mod options;
mod read;
mod schema;
#[cfg(feature = "testing")]
pub mod testing;
mod write;

use std::collections::BTreeMap;
use std::sync::Mutex;

use r2d2::PooledConnection;
use terrane_store::{
    Batch, KeyRange, Object, Parts, ReadView, Scan, Store, StoreConfig, cut_parts_then,
};
pub use terrane_store::{Error, Result};

use conn::{Conn, Manager, is_lost, pg_err, pool_err};
pub use options::PgOptions;
use read::{Holder, Pager, PgSnapshot};
pub use schema::FORMAT;

/// The largest value stored (256 MiB).
pub const MAX_VALUE_LEN: usize = 256 << 20;

/// The most entries a scan reads in one statement without a snapshot (`Store::scan`): the
/// scans a game server makes while it ticks (an area's entities, the lease table) cost one
/// round trip.
pub const SHORT_SCAN_ROWS: u32 = 64;

/// Whether `location` names a PostgreSQL store rather than a path: a `postgres://` or
/// `postgresql://` URL, or a libpq `key=value` string with a `host=` or `dbname=` key.
pub fn is_connection_string(location: &str) -> bool {
    location.starts_with("postgres://")
        || location.starts_with("postgresql://")
        || location
            .split_whitespace()
            .any(|kv| kv.starts_with("host=") || kv.starts_with("dbname="))
}

/// Splits terrane's own `schema` setting off a connection string: `schema=NAME` among libpq
/// `key=value` pairs, or `schema=NAME` in a URL's query (`postgres://host/db?schema=NAME`).
/// Returns the string PostgreSQL understands and the schema, if one was named.
pub fn split_schema(conninfo: &str) -> (String, Option<String>) {
    if let Some((base, query)) = conninfo.split_once('?')
        && (conninfo.starts_with("postgres://") || conninfo.starts_with("postgresql://"))
    {
        let mut schema = None;
        let rest: Vec<&str> = query
            .split('&')
            .filter(|kv| match kv.strip_prefix("schema=") {
                Some(s) => {
                    schema = Some(s.to_string());
                    false
                }
                None => !kv.is_empty(),
            })
            .collect();
        let url =
            if rest.is_empty() { base.to_string() } else { format!("{base}?{}", rest.join("&")) };
        return (url, schema);
    }
    let mut schema = None;
    let rest: Vec<&str> = conninfo
        .split_whitespace()
        .filter(|kv| match kv.strip_prefix("schema=") {
            Some(s) => {
                schema = Some(s.to_string());
                false
            }
            None => true,
        })
        .collect();
    (rest.join(" "), schema)
}

/// A first connection to a store's server: the options with the connection string's
/// `schema=` applied and validated, where the store is, the connection manager, one connection.
struct Connected {
    options: PgOptions,
    location: String,
    manager: Manager,
    conn: Conn,
}

impl Connected {
    fn to(conninfo: &str, options: &PgOptions, read_only: bool) -> Result<Self> {
        let (conninfo, schema) = split_schema(conninfo);
        let options = PgOptions {
            schema: schema.unwrap_or_else(|| options.schema.clone()),
            ..options.clone()
        };
        options.validate()?;
        let location = schema::location(&options.schema, &conninfo);
        let manager = Manager::new(conn::config(&conninfo, &options)?, read_only);
        let conn = manager
            .connect_one()
            .map_err(|e| pg_err(&format!("connecting to {}", schema::redact(&conninfo)), e))?;
        Ok(Connected { options, location, manager, conn })
    }
}

/// A [`Store`] in a PostgreSQL schema. See the [crate docs](crate).
pub struct PgStore {
    pool: r2d2::Pool<Manager>,
    /// Store table name → qualified relation name.
    tables: BTreeMap<String, String>,
    signature: String,
    read_only: bool,
    location: String,
    options: PgOptions,
    /// Shares the pool's generation: [`Manager::retire_all`] after a lost connection.
    retirer: Manager,
    /// The writer epoch this store took at open: its writes apply only while the store's
    /// `writer_epoch` row still holds it (a later writer's open fences this one out).
    pub(crate) epoch: Vec<u8>,
    /// `"schema".meta`.
    pub(crate) meta: String,
    /// The key of the store's write lock (transaction advisory lock; opens take it too).
    pub(crate) write_key: i64,
    /// The session holding the store's advisory lock.
    _lock: Mutex<Conn>,
    /// A sole writer's read cache (`PgOptions::cache_bytes`).
    cache: Option<cache::Cache>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("location", &self.location)
            .field("signature", &self.signature)
            .field("tables", &self.tables.keys().collect::<Vec<_>>())
            .field("read_only", &self.read_only)
            .finish_non_exhaustive()
    }
}

impl PgStore {
    /// Opens (or creates, per `config.mode`) the store in the default schema with the default
    /// [`PgOptions`].
    pub fn open(conninfo: &str, config: &StoreConfig) -> Result<Self> {
        PgStore::open_with(conninfo, config, &PgOptions::default())
    }

    /// Opens (or creates) the store: connects, checks the schema's format and signature (or
    /// creates the schema and every table of `config` in one transaction), adds missing
    /// tables, and takes the store's lock.
    ///
    /// A `schema=NAME` in the connection string ([`split_schema`]) overrides
    /// [`PgOptions::schema`].
    pub fn open_with(conninfo: &str, config: &StoreConfig, options: &PgOptions) -> Result<Self> {
        config.validate()?;
        let Connected { options, location, manager, conn: mut lock_conn } =
            Connected::to(conninfo, options, config.read_only)?;
        let options = &options;
        // The lock first: a second writer is refused before it can fence out the first.
        lock::acquire(
            &mut lock_conn,
            schema::lock_key(&options.schema),
            config.read_only || options.shared_writers,
            options.lock_grace,
            &location,
        )?;
        let opened = schema::open(
            &mut lock_conn.client,
            &options.schema,
            config,
            &location,
            !config.read_only && !options.shared_writers,
        )?;
        let tables = opened
            .tables
            .into_iter()
            .map(|(name, rel)| {
                (name, format!("{}.{}", schema::ident(&options.schema), schema::ident(&rel)))
            })
            .collect();
        Ok(PgStore {
            retirer: manager.sibling(),
            pool: conn::pool(manager, options),
            tables,
            signature: config.signature.clone(),
            read_only: config.read_only,
            location,
            epoch: opened.epoch,
            meta: format!("{}.meta", schema::ident(&options.schema)),
            write_key: schema::lock_key(&options.schema) | 1,
            options: options.clone(),
            _lock: Mutex::new(lock_conn),
            cache: (!config.read_only && !options.shared_writers && options.cache_bytes > 0)
                .then(|| cache::Cache::new(options.cache_bytes)),
        })
    }

    /// Deletes the store (`DROP SCHEMA … CASCADE`): refused with `NotAStore` when the schema
    /// is not a terrane store, `NotFound` when there is none, `Locked` while it is open.
    pub fn remove(conninfo: &str, options: &PgOptions) -> Result<()> {
        let Connected { options, location, mut conn, .. } =
            Connected::to(conninfo, options, false)?;
        let options = &options;
        schema::check_ours(&mut conn.client, &options.schema, &location)?;
        lock::acquire(
            &mut conn,
            schema::lock_key(&options.schema),
            false,
            options.lock_grace,
            &location,
        )?;
        conn.client
            .batch_execute(&format!("DROP SCHEMA {} CASCADE", schema::ident(&options.schema)))
            .map_err(|e| pg_err("removing the store", e))
    }

    /// Bytes of objects the sole writer's read cache holds now ([`PgOptions::cache_bytes`]
    /// bounds it); 0 for a store without one.
    pub fn cache_usage(&self) -> usize {
        self.cache.as_ref().map_or(0, cache::Cache::held_bytes)
    }

    /// Where the store is: its schema and the connection string (without password).
    pub fn location(&self) -> &str {
        &self.location
    }

    /// Whether the store was opened read-only ([`StoreConfig::read_only`]).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// A pooled connection.
    pub(crate) fn conn(&self) -> Result<PooledConnection<Manager>> {
        self.pool.get().map_err(|e| pool_err(e, &self.options))
    }

    /// Runs a read on a pooled connection; when the connection turns out lost (the server
    /// restarted or failed over), retires the pool's connections and runs it once more.
    pub(crate) fn reading<T>(&self, f: impl Fn(&mut Conn) -> Result<T>) -> Result<T> {
        match f(&mut *self.conn()?) {
            Err(e) if is_lost(&e) => {
                self.retirer.retire_all();
                f(&mut *self.conn()?)
            }
            r => r,
        }
    }

    /// Notes an error: a lost connection retires the pool's connections.
    pub(crate) fn noted<T>(&self, r: Result<T>) -> Result<T> {
        if let Err(e) = &r
            && is_lost(e)
        {
            self.retirer.retire_all();
        }
        r
    }

    /// The read cache of a sole writer (each of its operations does nothing once it is off).
    fn cache(&self) -> Option<&cache::Cache> {
        self.cache.as_ref()
    }

    /// Whether the lock's session still lives (one empty query); turns the cache off when it
    /// does not.
    fn lock_alive(&self) -> bool {
        let alive = match self._lock.lock() {
            Ok(mut c) => c.client.batch_execute("").is_ok(),
            Err(_) => false,
        };
        if !alive && let Some(c) = &self.cache {
            c.turn_off();
        }
        alive
    }

    /// The qualified relation of a store table.
    pub(crate) fn rel(&self, table: &str) -> Result<&str> {
        self.tables.get(table).map(String::as_str).ok_or_else(|| Error::UnknownTable(table.into()))
    }
}

impl Drop for PgStore {
    fn drop(&mut self) {
        // Release the lock now rather than when the server notices the closed session, so
        // that the next open (a restart of the same process) finds it free at once.
        if let Ok(conn) = self._lock.get_mut() {
            let _ = conn.client.batch_execute("SELECT pg_advisory_unlock_all()");
        }
    }
}

impl ReadView for PgStore {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        let rel = self.rel(table)?;
        let Some(cache) = self.cache() else {
            return self.reading(|c| read::get(c, rel, key));
        };
        if let Some(hit) = cache.get(table, key)
            && self.lock_alive()
        {
            return Ok(hit);
        }
        let ticket = cache.read_ticket();
        let found = self.reading(|c| read::get(c, rel, key))?;
        cache.fill(&ticket, table, [(key, &found)]);
        Ok(found)
    }

    /// Cut from the read cache when the object is there (and the lock still holds), else by
    /// the server (`substring`), so that only the ranges cross the socket.
    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<Parts>> {
        let rel = self.rel(table)?;
        if let Some(cache) = self.cache()
            && let Some(hit) = cache.parts(table, key, ranges)
            && self.lock_alive()
        {
            return Ok(hit);
        }
        self.reading(|c| read::get_parts(c, rel, key, ranges))
    }

    /// From the read cache when the object is there; otherwise the whole object, read once
    /// (two part reads would need a transaction: two round trips more).
    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        if let Some(cache) = self.cache()
            && let Some(hit) = cache.parts_then(table, key, first, then)
            && self.lock_alive()
        {
            return Ok(hit);
        }
        Ok(self.get(table, key)?.map(|o| cut_parts_then(o.version, &o.data, first, then)))
    }

    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        let rel = self.rel(table)?;
        let Some(cache) = self.cache() else {
            return self.reading(|c| read::multi_get(c, rel, keys));
        };
        let mut out: Vec<Option<Option<Object>>> =
            keys.iter().map(|k| cache.get(table, k)).collect();
        if out.iter().any(Option::is_some) && !self.lock_alive() {
            return self.reading(|c| read::multi_get(c, rel, keys));
        }
        let missing: Vec<&[u8]> =
            keys.iter().zip(&out).filter(|(_, o)| o.is_none()).map(|(k, _)| *k).collect();
        if !missing.is_empty() {
            let ticket = cache.read_ticket();
            let found = self.reading(|c| read::multi_get(c, rel, &missing))?;
            cache.fill(&ticket, table, missing.iter().copied().zip(&found));
            let mut found = found.into_iter();
            for o in out.iter_mut().filter(|o| o.is_none()) {
                *o = Some(found.next().flatten());
            }
        }
        Ok(out.into_iter().map(Option::flatten).collect())
    }

    /// A range that fits one short page (up to [`SHORT_SCAN_ROWS`] entries, or
    /// `scan_page_rows` when fewer) is read in one statement: one round trip, and a
    /// consistent view by itself. A longer one pages through a snapshot (its first page read
    /// again there), which costs two round trips more.
    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        let rel = self.rel(table)?.to_string();
        if range.is_empty() {
            return Ok(Box::new(std::iter::empty()));
        }
        let short = SHORT_SCAN_ROWS.min(self.options.scan_page_rows);
        let probe =
            self.reading(|c| read::page(c, &rel, &range.start, &range.end, i64::from(short)))?;
        if probe.len() < short as usize {
            return Ok(Box::new(probe.into_iter().map(Ok)));
        }
        let snap = self.noted(PgSnapshot::new(self))?;
        Ok(Box::new(Pager::new(Holder::Owned(Box::new(snap)), rel, range)))
    }
}

impl Store for PgStore {
    fn signature(&self) -> &str {
        &self.signature
    }

    fn tables(&self) -> Vec<String> {
        self.tables.keys().cloned().collect()
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly(self.location.clone().into()));
        }
        batch.validate(|t| self.tables.contains_key(t), MAX_VALUE_LEN)?;
        if batch.is_empty() && batch.preconditions().is_empty() {
            return if batch.is_synced() { self.sync() } else { Ok(()) };
        }
        let Some(cache) = self.cache() else {
            return self.noted(write::write(self, batch));
        };
        let ticket = cache.begin_write(batch);
        let r = self.noted(write::write(self, batch));
        cache.end_write(ticket, batch, r.is_ok());
        r
    }

    fn snapshot(&self) -> Result<Box<dyn ReadView + '_>> {
        Ok(Box::new(self.noted(PgSnapshot::new(self))?))
    }

    fn flush(&self) -> Result<()> {
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        // A commit record written with synchronous_commit on is flushed (and replicated to a
        // synchronous standby) with every commit before it. The server flushes and waits for
        // the standby only for a transaction that wrote to the log: the format row is
        // rewritten as it is (an xid alone writes nothing, and its commit neither flushes nor
        // waits).
        let sql = format!(
            "BEGIN; SET LOCAL synchronous_commit TO on; \
             UPDATE {} SET value = value WHERE name = 'format'; COMMIT",
            self.meta
        );
        let r = self.conn().and_then(|mut c| {
            conn::confirmed(|| c.client.batch_execute(&sql).map_err(|e| pg_err("syncing", e)))
        });
        self.noted(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_setting_is_split_off_both_forms() {
        assert_eq!(
            split_schema("postgres://me@db/w?schema=nether&sslmode=disable"),
            ("postgres://me@db/w?sslmode=disable".into(), Some("nether".into()))
        );
        assert_eq!(
            split_schema("postgres://me@db/w?schema=end"),
            ("postgres://me@db/w".into(), Some("end".into()))
        );
        assert_eq!(
            split_schema("host=/tmp schema=w1 dbname=x"),
            ("host=/tmp dbname=x".into(), Some("w1".into()))
        );
        assert_eq!(split_schema("host=/tmp dbname=x"), ("host=/tmp dbname=x".into(), None));
        assert!(is_connection_string("host=/run/postgresql dbname=w"));
        assert!(is_connection_string("postgresql://x"));
        assert!(!is_connection_string("worlds/overworld"));
    }
}
