//! Connections: the r2d2 pool's manager, a per-connection statement cache, the session's
//! commit mode, and the mapping of PostgreSQL's errors to the store's.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use postgres::error::SqlState;
use postgres::{Client, NoTls, Statement};
use terrane_store::{Error, Result};

use crate::PgOptions;

/// A pooled connection: the client, its prepared statements, its `synchronous_commit`, and
/// the pool generation it was made in.
pub(crate) struct Conn {
    pub(crate) client: Client,
    statements: HashMap<String, Statement>,
    synced: Option<bool>,
    generation: u64,
}

impl Conn {
    /// The prepared statement for `sql`, prepared once per connection.
    pub(crate) fn prepare(&mut self, sql: &str) -> std::result::Result<Statement, postgres::Error> {
        if let Some(s) = self.statements.get(sql) {
            return Ok(s.clone());
        }
        let s = self.client.prepare(sql)?;
        self.statements.insert(sql.to_string(), s.clone());
        Ok(s)
    }

    /// Sets the session's `synchronous_commit` (a round trip only when it changes).
    pub(crate) fn set_synced(&mut self, synced: bool) -> std::result::Result<(), postgres::Error> {
        if self.synced != Some(synced) {
            self.synced = None;
            let mode = if synced { "on" } else { "off" };
            self.client.batch_execute(&format!("SET synchronous_commit TO {mode}"))?;
            self.synced = Some(synced);
        }
        Ok(())
    }
}

/// Opens connections for the pool, and retires every connection older than the last
/// [`Manager::retire_all`] (a connection found closed means the server restarted or failed
/// over: its siblings are dead too).
pub(crate) struct Manager {
    config: postgres::Config,
    generation: Arc<AtomicU64>,
    /// Sessions are made read-only after they connect (not through the startup options, so
    /// that `target_session_attrs=read-write` still finds the primary).
    read_only: bool,
}

/// Why the pool could not hand out a connection.
#[derive(Debug)]
pub(crate) enum ConnError {
    /// Connecting failed.
    Pg(postgres::Error),
    /// The connection belongs to a retired generation.
    Retired,
}

impl std::fmt::Display for ConnError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConnError::Pg(e) => write!(f, "{e}"),
            ConnError::Retired => f.write_str("connection retired after a server restart"),
        }
    }
}

impl std::error::Error for ConnError {}

/// Parses a connection string (a `postgres://` URL or libpq `key=value` pairs, with `host` a
/// Unix socket directory when it starts with `/`) and applies the options.
pub(crate) fn config(conninfo: &str, options: &PgOptions) -> Result<postgres::Config> {
    let mut config: postgres::Config = conninfo.parse().map_err(|e| {
        Error::Backend(format!(
            "invalid PostgreSQL connection string ({e}): use postgres://user@host/db or \
             `host=/run/postgresql dbname=db user=me`"
        ))
    })?;
    if config.get_user().is_none() {
        let user = std::env::var("USER").unwrap_or_else(|_| "postgres".into());
        config.user(&user);
    }
    config.connect_timeout(options.connect_timeout);
    config.application_name(&format!("terrane pid={}", std::process::id()));
    config.options(&format!("-c statement_timeout={}", options.statement_timeout.as_millis()));
    config.notice_callback(|notice| {
        if notice.message().contains("wait for synchronous replication") {
            UNCONFIRMED_COMMIT.with(|c| c.set(true));
        }
    });
    Ok(config)
}

thread_local! {
    /// Set when the server said it stopped waiting for a synchronous standby to confirm a
    /// commit (a cancelled wait: `statement_timeout` ran out while the standby was away). The
    /// commit then reports success, yet only the primary holds it. The client is driven on
    /// the calling thread, so the notice of a commit arrives on the thread that committed.
    static UNCONFIRMED_COMMIT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `commit` (a statement that commits) and fails when the server stopped waiting for
/// its synchronous standby: the batch is on the primary only, and a failover would lose it,
/// so it must not be reported durable. Its outcome is then unknown to the caller, as for a
/// lost connection: whole or absent after a failover, whole otherwise.
pub(crate) fn confirmed<T>(commit: impl FnOnce() -> Result<T>) -> Result<T> {
    UNCONFIRMED_COMMIT.with(|c| c.set(false));
    let out = commit()?;
    if UNCONFIRMED_COMMIT.with(|c| c.replace(false)) {
        return Err(Error::Backend(
            "postgres: the batch committed on the primary, but its synchronous standby did not \
             confirm it within statement_timeout (the standby is unreachable or behind): it \
             would not survive a failover, so it is not reported durable; its outcome is \
             unknown (whole, or absent after a failover). Restore the standby's link, or \
             change synchronous_standby_names, then save again"
                .into(),
        ));
    }
    Ok(out)
}

impl Manager {
    pub(crate) fn new(config: postgres::Config, read_only: bool) -> Self {
        Manager { config, generation: Arc::new(AtomicU64::new(0)), read_only }
    }

    /// A manager of the same server sharing the generation.
    pub(crate) fn sibling(&self) -> Self {
        Manager {
            config: self.config.clone(),
            generation: Arc::clone(&self.generation),
            read_only: self.read_only,
        }
    }

    /// One connection, outside the pool.
    pub(crate) fn connect_one(&self) -> std::result::Result<Conn, postgres::Error> {
        let generation = self.generation.load(Ordering::SeqCst);
        let mut client = self.config.connect(NoTls)?;
        if self.read_only {
            client.batch_execute("SET default_transaction_read_only = on")?;
        }
        Ok(Conn { client, statements: HashMap::new(), synced: None, generation })
    }

    /// Retires every connection made so far: the pool replaces them as they are checked out.
    pub(crate) fn retire_all(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }
}

impl r2d2::ManageConnection for Manager {
    type Connection = Conn;
    type Error = ConnError;

    fn connect(&self) -> std::result::Result<Conn, ConnError> {
        self.connect_one().map_err(ConnError::Pg)
    }

    /// Checked at every checkout, without a round trip: retired connections are replaced.
    fn is_valid(&self, conn: &mut Conn) -> std::result::Result<(), ConnError> {
        if conn.generation < self.generation.load(Ordering::SeqCst) || conn.client.is_closed() {
            return Err(ConnError::Retired);
        }
        Ok(())
    }

    fn has_broken(&self, conn: &mut Conn) -> bool {
        conn.client.is_closed()
    }
}

/// Builds the pool (connections are made on demand; the open made one already).
pub(crate) fn pool(manager: Manager, options: &PgOptions) -> r2d2::Pool<Manager> {
    r2d2::Pool::builder()
        .max_size(options.pool_size)
        .min_idle(Some(0))
        .connection_timeout(options.pool_timeout.max(Duration::from_millis(100)))
        .test_on_check_out(true)
        .build_unchecked(manager)
}

/// Whether an error means the connection is gone (the server restarted, failed over, or the
/// network dropped): the statement did not run, or its outcome is unknown.
pub(crate) fn is_connection_lost(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    if let Some(db) = e.as_db_error() {
        let c = db.code();
        return *c == SqlState::ADMIN_SHUTDOWN
            || *c == SqlState::CRASH_SHUTDOWN
            || *c == SqlState::CANNOT_CONNECT_NOW;
    }
    // An I/O error below the protocol (a reset socket).
    std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>())
}

/// Maps an error of PostgreSQL (or of the connection to it) to the store's error, with what
/// was being done.
pub(crate) fn pg_err(what: &str, e: postgres::Error) -> Error {
    if let Some(db) = e.as_db_error().filter(|_| !is_connection_lost(&e)) {
        let code = db.code();
        let text = format!("{}: {} ({})", what, db.message(), code.code());
        let hint = if *code == SqlState::INVALID_PASSWORD
            || *code == SqlState::INVALID_AUTHORIZATION_SPECIFICATION
        {
            ": check the user and password of the connection string"
        } else if *code == SqlState::INVALID_CATALOG_NAME {
            ": create the database first (createdb), or name another in the connection string"
        } else if *code == SqlState::QUERY_CANCELED {
            ": the statement ran past statement_timeout (PgOptions::statement_timeout)"
        } else if *code == SqlState::READ_ONLY_SQL_TRANSACTION {
            return Error::ReadOnly(PathBuf::from(text));
        } else if *code == SqlState::ADMIN_SHUTDOWN || *code == SqlState::CRASH_SHUTDOWN {
            ": the server is shutting down or restarting; retry once it is back (the store reconnects)"
        } else if *code == SqlState::INSUFFICIENT_PRIVILEGE {
            ": grant the user rights on the database and schema"
        } else if *code == SqlState::DISK_FULL {
            // The server's own files: an I/O error, as the file backends give for a full disk.
            return Error::Io(std::io::Error::new(
                std::io::ErrorKind::StorageFull,
                format!(
                    "postgres: {text}: the server's disk is full; the batch was not written \
                     (nothing of it is kept): free space there, then save again"
                ),
            ));
        } else if code.code().starts_with("58") {
            // Class 58, "system error": the server could not read or write its own files
            // (EIO and the like), an I/O error though the server's.
            return Error::Io(std::io::Error::other(format!(
                "postgres: {text}: the server failed to read or write its own files (see its \
                 log); a failed WAL write or flush makes it restart and recover, after which the \
                 store reconnects; a failed read may succeed if tried again"
            )));
        } else {
            ""
        };
        return Error::Backend(format!("postgres: {text}{hint}"));
    }
    if is_connection_lost(&e) {
        return Error::Io(std::io::Error::new(
            std::io::ErrorKind::ConnectionAborted,
            format!(
                "postgres: {what}: the connection to the server was lost ({e}{}); the next call \
                 reconnects",
                e.as_db_error().map(|d| format!(": {}", d.message())).unwrap_or_default()
            ),
        ));
    }
    let source = std::error::Error::source(&e).map(|s| format!(": {s}")).unwrap_or_default();
    Error::Io(std::io::Error::other(format!("postgres: {what}: {e}{source}")))
}

/// Whether a store error is a lost connection (see [`pg_err`]).
pub(crate) fn is_lost(e: &Error) -> bool {
    matches!(e, Error::Io(io) if io.kind() == std::io::ErrorKind::ConnectionAborted)
}

/// Maps a pool error (no connection within the pool timeout: the server is unreachable, or
/// every connection is busy).
pub(crate) fn pool_err(e: r2d2::Error, options: &PgOptions) -> Error {
    Error::Io(std::io::Error::new(
        std::io::ErrorKind::TimedOut,
        format!(
            "postgres: no connection within {:?} (the server is unreachable, or all {} pooled \
             connections are busy): {e}",
            options.pool_timeout, options.pool_size
        ),
    ))
}
