//! [`PgOptions`]: the connection, pool and layout settings, with documented defaults.

use std::time::Duration;

use terrane_store::{Error, Result};

/// Settings of [`PgStore::open_with`](crate::PgStore::open_with). Build with
/// [`PgOptions::new`] and the setters.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct PgOptions {
    /// The SQL schema holding the store (one world per schema). Default `terrane`.
    pub schema: String,
    /// Connections in the pool (reads, writes, snapshots and scans each hold one while they
    /// run). Default 8.
    pub pool_size: u32,
    /// How long connecting may take before the open (or a later reconnect) fails. Default 5 s.
    pub connect_timeout: Duration,
    /// How long a call waits for a free connection of the pool. Default 10 s.
    pub pool_timeout: Duration,
    /// The server aborts a statement running longer than this (`statement_timeout`), so a
    /// stalled server gives an error, not a hang. Default 30 s. A commit waiting for its
    /// synchronous standby is not a statement the server times out: while the standby is
    /// away, a synced write waits (it is never reported durable without the standby).
    pub statement_timeout: Duration,
    /// Rows fetched per round trip by a scan. Default 256.
    pub scan_page_rows: u32,
    /// How long opening waits for another process's lock on the store to go away (its session
    /// may take a moment to end after the process died). Default 3 s.
    pub lock_grace: Duration,
    /// Several writing processes share the store (default `false`: one writer, fenced by the
    /// writer epoch). Shared writers take the store's lock shared (a single writer is refused
    /// while they are in, and they while it is), take no writer epoch, and must fence their
    /// own batches with preconditions (terrane-lease's leases).
    pub shared_writers: bool,
    /// Bytes of objects a sole writer keeps in memory to answer reads without the server
    /// (default 64 MiB; 0: none). Only a store opened for writing without `shared_writers`
    /// caches: its exclusive lock guarantees that only its own writes change the store, and
    /// every read served from memory first checks that the lock's session still lives
    /// (one empty query). Snapshots and scans always read the server.
    pub cache_bytes: usize,
}

impl Default for PgOptions {
    fn default() -> Self {
        PgOptions {
            schema: "terrane".into(),
            pool_size: 8,
            connect_timeout: Duration::from_secs(5),
            pool_timeout: Duration::from_secs(10),
            statement_timeout: Duration::from_secs(30),
            scan_page_rows: 256,
            lock_grace: Duration::from_secs(3),
            shared_writers: false,
            cache_bytes: 64 << 20,
        }
    }
}

impl PgOptions {
    /// The defaults.
    pub fn new() -> Self {
        PgOptions::default()
    }

    /// Sets [`schema`](Self::schema).
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = schema.into();
        self
    }

    /// Sets [`pool_size`](Self::pool_size).
    pub fn pool_size(mut self, n: u32) -> Self {
        self.pool_size = n;
        self
    }

    /// Sets [`connect_timeout`](Self::connect_timeout).
    pub fn connect_timeout(mut self, t: Duration) -> Self {
        self.connect_timeout = t;
        self
    }

    /// Sets [`pool_timeout`](Self::pool_timeout).
    pub fn pool_timeout(mut self, t: Duration) -> Self {
        self.pool_timeout = t;
        self
    }

    /// Sets [`statement_timeout`](Self::statement_timeout).
    pub fn statement_timeout(mut self, t: Duration) -> Self {
        self.statement_timeout = t;
        self
    }

    /// Sets [`scan_page_rows`](Self::scan_page_rows).
    pub fn scan_page_rows(mut self, n: u32) -> Self {
        self.scan_page_rows = n;
        self
    }

    /// Sets [`lock_grace`](Self::lock_grace).
    pub fn lock_grace(mut self, t: Duration) -> Self {
        self.lock_grace = t;
        self
    }

    /// Sets [`shared_writers`](Self::shared_writers).
    pub fn shared_writers(mut self, shared: bool) -> Self {
        self.shared_writers = shared;
        self
    }

    /// Sets [`cache_bytes`](Self::cache_bytes).
    pub fn cache_bytes(mut self, bytes: usize) -> Self {
        self.cache_bytes = bytes;
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Backend(format!("invalid PgOptions: {m}")));
        let s = &self.schema;
        if s.is_empty()
            || s.len() > 48
            || !s.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
            || s.as_bytes()[0].is_ascii_digit()
        {
            return bad(format!(
                "schema {s:?}: use 1 to 48 lowercase ASCII letters, digits or `_`, not starting with a digit"
            ));
        }
        if self.pool_size < 2 {
            return bad(
                "pool_size must be at least 2 (one connection holds the store's lock)".into()
            );
        }
        if self.scan_page_rows == 0 {
            return bad("scan_page_rows must be at least 1".into());
        }
        for (name, t) in [
            ("connect_timeout", self.connect_timeout),
            ("pool_timeout", self.pool_timeout),
            ("statement_timeout", self.statement_timeout),
        ] {
            if t.is_zero() {
                return bad(format!("{name} must be above zero"));
            }
        }
        Ok(())
    }
}
