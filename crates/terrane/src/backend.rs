//! Where a world's objects live: the [`Backend`] choices, and the store each one opens
//! (RocksDB, block file, memory, PostgreSQL) with the world's signature and open mode. The
//! world builder (`world.rs`) and the world folder's marker (`world_dir.rs`) both use it;
//! it uses neither.

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use terrane_store::{MemStore, OpenMode, Store, StoreConfig};

use crate::error::{Error, Result};

/// The store signature of a terrane world (checked by the backend on every open).
pub const SIGNATURE: &str = "terrane world v1";

/// Where a world's objects live.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Embedded RocksDB in `<dir>/db` (feature `rocksdb`, the default).
    RocksDb,
    /// One crash-safe block file, `<dir>/world.tbf` (feature `blockfile`).
    BlockFile,
    /// Memory only: nothing is written to the directory, everything is lost on drop.
    Memory,
    /// A PostgreSQL schema, at a connection string in place of the directory (feature
    /// `postgres`; `docs/format/postgres-v1.md`).
    Postgres,
}

impl Default for Backend {
    /// [`Backend::RocksDb`] when built with feature `rocksdb`, else [`Backend::BlockFile`]
    /// with feature `blockfile`, else [`Backend::Memory`].
    fn default() -> Self {
        if cfg!(feature = "rocksdb") {
            Backend::RocksDb
        } else if cfg!(feature = "blockfile") {
            Backend::BlockFile
        } else {
            Backend::Memory
        }
    }
}

impl Backend {
    /// The backend's name as written in the marker file: `rocksdb`, `blockfile`, `memory`.
    pub fn name(self) -> &'static str {
        match self {
            Backend::RocksDb => "rocksdb",
            Backend::BlockFile => "blockfile",
            Backend::Memory => "memory",
            Backend::Postgres => "postgres",
        }
    }

    /// Parses a [`name`](Self::name).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "rocksdb" => Some(Backend::RocksDb),
            "blockfile" => Some(Backend::BlockFile),
            "memory" => Some(Backend::Memory),
            "postgres" => Some(Backend::Postgres),
            _ => None,
        }
    }

    /// Whether this build includes the backend.
    pub fn is_available(self) -> bool {
        match self {
            Backend::RocksDb => cfg!(feature = "rocksdb"),
            Backend::BlockFile => cfg!(feature = "blockfile"),
            Backend::Memory => true,
            Backend::Postgres => cfg!(feature = "postgres"),
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The concrete backend, kept beside the `dyn Store` for what only it can do (backups).
#[derive(Clone)]
pub(crate) enum Handle {
    #[cfg(feature = "rocksdb")]
    Rocks(Arc<terrane_rocksdb::RocksStore>),
    #[cfg(feature = "blockfile")]
    Block(Arc<terrane_blockfile::BlockFile>),
    Mem(Arc<MemStore>),
    #[cfg(feature = "postgres")]
    Pg(Arc<terrane_postgres::PgStore>),
}

impl Handle {
    /// The store as the world uses it.
    pub(crate) fn store(&self) -> Arc<dyn Store> {
        match self {
            #[cfg(feature = "rocksdb")]
            Handle::Rocks(s) => s.clone(),
            #[cfg(feature = "blockfile")]
            Handle::Block(s) => s.clone(),
            Handle::Mem(s) => s.clone(),
            #[cfg(feature = "postgres")]
            Handle::Pg(s) => s.clone(),
        }
    }
}

/// How a world's store is opened.
#[derive(Copy, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    /// A new world.
    Create,
    /// An existing world.
    Open,
    /// Open, or finish a creation that was cut off.
    Finish,
}

/// The store configuration of a world opened in `mode`.
pub(crate) fn store_config(mode: Mode, read_only: bool) -> StoreConfig {
    StoreConfig::new(SIGNATURE)
        .mode(match mode {
            Mode::Create => OpenMode::Create,
            Mode::Open => OpenMode::Open,
            Mode::Finish => OpenMode::OpenOrCreate,
        })
        .read_only(read_only)
}

/// The connection string `location` holds, when it names a PostgreSQL world rather than a
/// directory: a `postgres://` URL, or (with feature `postgres`) libpq `key=value` pairs. Every
/// `World` constructor takes either.
pub fn connection_string(location: &Path) -> Option<&str> {
    let s = location.to_str()?;
    #[cfg(feature = "postgres")]
    if terrane_postgres::is_connection_string(s) {
        return Some(s);
    }
    #[cfg(not(feature = "postgres"))]
    if s.starts_with("postgres://") || s.starts_with("postgresql://") {
        return Some(s);
    }
    None
}

/// Opens (or creates) the PostgreSQL store of a world in the default schema, with a small read
/// cache when `one_pass`.
pub(crate) fn open_postgres(
    conninfo: &str,
    mode: Mode,
    read_only: bool,
    shared: bool,
    one_pass: bool,
) -> Result<Handle> {
    #[cfg(feature = "postgres")]
    {
        let cfg = store_config(mode, read_only);
        let mut options = terrane_postgres::PgOptions::default().shared_writers(shared);
        if one_pass {
            options = options.cache_bytes(ONE_PASS_PG_CACHE);
        }
        let store = terrane_postgres::PgStore::open_with(conninfo, &cfg, &options)?;
        Ok(Handle::Pg(Arc::new(store)))
    }
    #[cfg(not(feature = "postgres"))]
    {
        let _ = (conninfo, mode, read_only, shared, one_pass);
        Err(Error::BackendNotBuilt { backend: Backend::Postgres, world: None })
    }
}

/// Read caches of a store opened for one pass over its objects (`WorldBuilder::one_pass`):
/// RocksDB's block cache, holding the tables' index and filter blocks and what point reads
/// read; a scan's blocks stay out of it (`RocksOptions::scans_fill_cache`).
#[cfg(feature = "rocksdb")]
pub(crate) const ONE_PASS_BLOCK_CACHE: usize = 8 << 20;

/// RocksDB's memtables, all tables together, in one pass: what a whole-world command that
/// writes (import, copy, restore) holds of what it wrote before a flush (RocksDB flushes the
/// largest past it).
#[cfg(feature = "rocksdb")]
pub(crate) const ONE_PASS_MEMTABLES: usize = 32 << 20;

/// One table's memtable in one pass. A table holds two at most (one filling while the full
/// one is flushed; a writer faster than the flush waits), so a writer faster than the flush
/// thread, writing a table after another, holds about twice [`ONE_PASS_MEMTABLES`] at most.
#[cfg(feature = "rocksdb")]
pub(crate) const ONE_PASS_WRITE_BUFFER: usize = 8 << 20;

/// The block file's read cache in one pass.
#[cfg(feature = "blockfile")]
pub(crate) const ONE_PASS_BLOCKFILE_CACHE: usize = 4 << 20;

/// A sole PostgreSQL writer's read cache in one pass: the objects of the last batches written
/// (`PgOptions::cache_bytes`).
#[cfg(feature = "postgres")]
pub(crate) const ONE_PASS_PG_CACHE: usize = 4 << 20;

/// Opens (or creates) a directory world's store: the block file in repair mode when
/// `repair`, with small read caches when `one_pass`.
pub(crate) fn open_backend_with(
    dir: &Path,
    backend: Backend,
    mode: Mode,
    read_only: bool,
    repair: bool,
    one_pass: bool,
) -> Result<Handle> {
    let mut cfg = store_config(mode, read_only);
    if !read_only {
        // A directory world records its changes for its backups (`backup_changes`).
        cfg = cfg.table(crate::backup_changes::BACKUP_CHANGES_TABLE);
    }
    // Only the block file has a repair mode (RocksDB checks its own files).
    #[cfg(not(feature = "blockfile"))]
    let _ = repair;
    #[cfg(not(any(feature = "rocksdb", feature = "blockfile")))]
    let _ = one_pass;
    // A build with neither file backend opens only memory worlds.
    #[cfg(not(any(feature = "rocksdb", feature = "blockfile")))]
    let _ = dir;
    match backend {
        #[cfg(feature = "rocksdb")]
        Backend::RocksDb => {
            let mut options = terrane_rocksdb::RocksOptions::default();
            if one_pass {
                options = options
                    .block_cache_bytes(ONE_PASS_BLOCK_CACHE)
                    .row_cache_bytes(0)
                    .scans_fill_cache(false)
                    .memtables_bytes(ONE_PASS_MEMTABLES)
                    .write_buffer_bytes(ONE_PASS_WRITE_BUFFER);
            }
            Ok(Handle::Rocks(Arc::new(terrane_rocksdb::RocksStore::open_with(
                dir.join("db"),
                &cfg,
                &options,
            )?)))
        }
        #[cfg(feature = "blockfile")]
        Backend::BlockFile => Ok(Handle::Block(Arc::new(terrane_blockfile::BlockFile::open_with(
            dir.join("world.tbf"),
            &cfg,
            &if one_pass {
                terrane_blockfile::BlockFileOptions::new().cache_bytes(ONE_PASS_BLOCKFILE_CACHE)
            } else {
                terrane_blockfile::BlockFileOptions::new()
            }
            .repair(repair),
        )?))),
        Backend::Memory => Ok(Handle::Mem(Arc::new(MemStore::open(&cfg)?))),
        #[allow(unreachable_patterns)]
        other => Err(Error::BackendNotBuilt { backend: other, world: None }),
    }
}

#[cfg(all(test, feature = "rocksdb"))]
mod tests {
    use super::*;

    fn block_cache(one_pass: bool) -> u64 {
        let dir = tempfile::tempdir().unwrap();
        let handle =
            open_backend_with(dir.path(), Backend::RocksDb, Mode::Create, false, false, one_pass)
                .unwrap();
        let Handle::Rocks(store) = handle else { panic!("a RocksDB world") };
        let cf = store.db().cf_handle(terrane_store::tables::CHUNK_L0).unwrap();
        store.db().property_int_value_cf(&cf, "rocksdb.block-cache-capacity").unwrap().unwrap()
    }

    /// What the memtables of two tables hold once 20 MiB were written into each and the
    /// flushes that set off are done.
    fn memtables_after_40_mib(one_pass: bool) -> u64 {
        use terrane_store::{Store, tables};
        let dir = tempfile::tempdir().unwrap();
        let handle =
            open_backend_with(dir.path(), Backend::RocksDb, Mode::Create, false, false, one_pass)
                .unwrap();
        let Handle::Rocks(store) = handle else { panic!("a RocksDB world") };
        let value = vec![7u8; 64 << 10];
        for table in [tables::CHUNK_L0, tables::CHUNK_L1] {
            for i in 0..320u32 {
                store.put(table, &i.to_be_bytes(), 1, &value).unwrap();
            }
        }
        let db = store.db();
        let int = |p: &str| db.property_int_value(p).unwrap().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while int("rocksdb.mem-table-flush-pending") + int("rocksdb.num-running-flushes") > 0 {
            assert!(std::time::Instant::now() < deadline, "a flush that never ends");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        [tables::CHUNK_L0, tables::CHUNK_L1]
            .iter()
            .map(|t| {
                let cf = db.cf_handle(t).unwrap();
                db.property_int_value_cf(&cf, "rocksdb.cur-size-all-mem-tables").unwrap().unwrap()
            })
            .sum()
    }

    #[test]
    fn one_pass_holds_half_the_memtables_of_a_game() {
        // A game's world keeps all 40 MiB (64 MiB together, 32 MiB a table); one pass
        // flushes past 32 MiB together.
        let (game, one_pass) = (memtables_after_40_mib(false), memtables_after_40_mib(true));
        assert!(game >= 40 << 20, "a game's world flushed at {game} bytes");
        assert!(one_pass <= ONE_PASS_MEMTABLES as u64, "one pass held {one_pass} bytes");
    }

    /// The block cache's usage after 8 MiB of a table, flushed to a table file, were
    /// scanned from end to end.
    fn block_cache_after_a_scan(one_pass: bool) -> u64 {
        use terrane_store::{KeyRange, ReadView, Store, tables};
        let dir = tempfile::tempdir().unwrap();
        let handle =
            open_backend_with(dir.path(), Backend::RocksDb, Mode::Create, false, false, one_pass)
                .unwrap();
        let Handle::Rocks(store) = handle else { panic!("a RocksDB world") };
        // Values that do not compress: 8 MiB of blocks on disk as in memory.
        let mut x = 0x9E37_79B9_7F4A_7C15u64;
        for i in 0..2048u32 {
            let value: Vec<u8> = (0..4096)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x as u8
                })
                .collect();
            store.put(tables::CHUNK_L0, &i.to_be_bytes(), 1, &value).unwrap();
        }
        store.flush().unwrap();
        let snap = store.snapshot().unwrap();
        let read = snap.scan(tables::CHUNK_L0, KeyRange::all()).unwrap().count();
        assert_eq!(read, 2048);
        let db = store.db();
        let cf = db.cf_handle(tables::CHUNK_L0).unwrap();
        db.property_int_value_cf(&cf, "rocksdb.block-cache-usage").unwrap().unwrap()
    }

    #[test]
    fn one_pass_scans_leave_the_block_cache_to_index_and_filter_blocks() {
        let (game, one_pass) = (block_cache_after_a_scan(false), block_cache_after_a_scan(true));
        assert!(game >= 8 << 20, "a game's scan cached {game} bytes");
        assert!(one_pass < 1 << 20, "one pass cached {one_pass} bytes of a scan");
    }

    #[test]
    fn one_pass_opens_rocksdb_with_the_small_block_cache() {
        assert_eq!(block_cache(true), ONE_PASS_BLOCK_CACHE as u64);
        assert_eq!(
            block_cache(false),
            terrane_rocksdb::RocksOptions::default().block_cache_bytes as u64
        );
    }
}

#[cfg(all(test, feature = "postgres"))]
mod postgres_tests {
    use super::*;
    use terrane_postgres::testing::PgServer;

    /// What a sole writer's read cache holds once 16 MiB were written in batches of 2 MiB, as
    /// a copy writes them.
    fn cache_after_16_mib(pg: &PgServer, schema: &str, one_pass: bool) -> usize {
        use terrane_store::{Batch, Store, tables};
        let conninfo = format!("{} schema={schema}", pg.conninfo());
        let handle = open_postgres(&conninfo, Mode::Create, false, false, one_pass).unwrap();
        let Handle::Pg(store) = handle else { panic!("a PostgreSQL world") };
        let value = vec![7u8; 64 << 10];
        for b in 0..8u32 {
            let mut batch = Batch::new();
            for i in 0..32u32 {
                batch.put(tables::CHUNK_L0, (b * 32 + i).to_be_bytes().to_vec(), 1, value.clone());
            }
            store.write(&batch).unwrap();
        }
        store.cache_usage()
    }

    #[test]
    fn one_pass_keeps_a_small_postgres_read_cache() {
        let pg = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
        let game = cache_after_16_mib(&pg, "game", false);
        let one_pass = cache_after_16_mib(&pg, "one_pass", true);
        assert!(game >= 16 << 20, "a game's writer cached {game} bytes");
        assert!(one_pass <= ONE_PASS_PG_CACHE, "one pass cached {one_pass} bytes");
    }
}
