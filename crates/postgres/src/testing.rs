//! A throwaway PostgreSQL server for tests (feature `testing`).
//!
//! [`PgServer::start`] runs the Debian `postgresql` package's binaries
//! (`/usr/lib/postgresql/<version>/bin`): `initdb` into a temporary directory, then the server
//! listening on a Unix socket in that directory only (no TCP port). PostgreSQL refuses to run
//! as root, so when the test runs as root the server runs as the `postgres` system user (which
//! the package creates), with the directory handed to it. The server is stopped (and its
//! directory removed) when the `PgServer` is dropped, also when the test panics.
//! [`PgServer::start_replicated`] adds a synchronous standby made with `pg_basebackup`, which
//! streams from the primary through a [`FaultProxy`] of its own
//! ([`PgServer::replication_link`]): a test can cut the primary from its standby.
//!
//! A missing package is an error naming the command that installs it: tests fail, never skip.
//!
//! Where a network is the point, [`FaultProxy`] stands between the client and the server: a
//! loopback TCP port forwarding to the server's socket that delays, throttles, resets and
//! partitions ([`PgServer::upstream`], [`PgServer::conninfo_via`]).
//!
//! ```no_run
//! let server = terrane_postgres::testing::PgServer::start()?;
//! let store = terrane_postgres::PgStore::open(
//!     &server.conninfo(),
//!     &terrane_store::StoreConfig::new("test"),
//! )?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::io::Write as _;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use terrane_store::conformance::process_alive;

mod proxy;

pub use proxy::{Direction, FaultProxy, Link, Upstream};

/// What went wrong starting or driving a test server: a message naming the command and its
/// output.
pub type ServerResult<T> = std::result::Result<T, String>;

/// The database user the test servers create (a superuser).
pub const USER: &str = "terrane";

/// The environment variable through which a test hands its server to the child processes it
/// starts (crash harnesses): see [`server_or_parents`].
pub const CONNINFO_ENV: &str = "TERRANE_PG_TEST_CONNINFO";

/// A test's server: in a child process of a crash test (where [`CONNINFO_ENV`] is set), the
/// parent's, and no server of its own (`None`); otherwise a new one. Returns the server to
/// keep alive for the test and its connection string; pass
/// `(CONNINFO_ENV, conninfo)` to the children. A missing PostgreSQL panics with the command
/// that installs it.
pub fn server_or_parents() -> (Option<PgServer>, String) {
    if let Ok(c) = std::env::var(CONNINFO_ENV) {
        return (None, c);
    }
    let s = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let c = s.conninfo();
    (Some(s), c)
}

/// One server: its data directory and socket directory.
#[derive(Debug)]
struct Node {
    data: PathBuf,
    socket: PathBuf,
    log: PathBuf,
}

/// A throwaway PostgreSQL server (and optionally a synchronous standby). See the
/// [module docs](self).
#[derive(Debug)]
pub struct PgServer {
    bin: PathBuf,
    /// The postgres user's (uid, gid) when running as root.
    run_as: Option<(u32, u32)>,
    primary: Node,
    standby: Option<Node>,
    /// The standby's link to the primary.
    replication: Option<FaultProxy>,
    // Last: removed after the servers are stopped.
    dir: tempfile::TempDir,
}

/// The newest `/usr/lib/postgresql/<version>/bin` holding `initdb`.
fn find_bin() -> ServerResult<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").exists().then_some((v, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, b)| b).ok_or_else(|| {
        "PostgreSQL's server binaries are missing (no /usr/lib/postgresql/*/bin/initdb): install \
         them with `apt-get install -y postgresql` (`cargo xtask test` does it when run as root)"
            .to_string()
    })
}

/// The postgres user's (uid, gid) when this process runs as root, `None` otherwise.
fn run_as() -> ServerResult<Option<(u32, u32)>> {
    let me = std::fs::metadata("/proc/self").map_err(|e| format!("reading /proc/self: {e}"))?;
    if me.uid() != 0 {
        return Ok(None);
    }
    let passwd = std::fs::read_to_string("/etc/passwd").map_err(|e| format!("/etc/passwd: {e}"))?;
    passwd
        .lines()
        .find_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            (f.first() == Some(&"postgres"))
                .then(|| Some((f.get(2)?.parse().ok()?, f.get(3)?.parse().ok()?)))?
        })
        .map(Some)
        .ok_or_else(|| {
            "running as root, and there is no `postgres` system user to run the server as \
             (the Debian `postgresql` package creates it)"
                .to_string()
        })
}

impl PgServer {
    /// Starts a server in a new temporary directory.
    pub fn start() -> ServerResult<PgServer> {
        PgServer::start_in(&std::env::temp_dir())
    }

    /// Starts a server in a new temporary directory under `parent` (e.g. a small file system
    /// to fill; `parent` must be reachable by the `postgres` user when running as root).
    pub fn start_in(parent: &Path) -> ServerResult<PgServer> {
        let bin = find_bin()?;
        let run_as = run_as()?;
        let dir = tempfile::Builder::new()
            .prefix("terrane-pg-")
            .tempdir_in(parent)
            .map_err(|e| format!("temporary directory in {}: {e}", parent.display()))?;
        if let Some((uid, gid)) = run_as {
            std::os::unix::fs::chown(dir.path(), Some(uid), Some(gid))
                .map_err(|e| format!("handing {} to postgres: {e}", dir.path().display()))?;
        }
        let primary = Node {
            data: dir.path().join("primary"),
            socket: dir.path().join("p"),
            log: dir.path().join("primary.log"),
        };
        let server = PgServer { bin, run_as, primary, standby: None, replication: None, dir };
        server.mkdir(&server.primary.socket)?;
        server.run(
            Command::new(server.bin.join("initdb")).args(["-D"]).arg(&server.primary.data).args([
                "-U",
                USER,
                "-A",
                "trust",
                "-E",
                "UTF8",
                "-N",
                "--no-instructions",
            ]),
        )?;
        server.configure(&server.primary, &["synchronous_standby_names = ''"])?;
        server.pg_ctl_start(&server.primary)?;
        Ok(server)
    }

    /// Starts a primary and a synchronous standby (`pg_basebackup -R`, streaming): a synced
    /// commit on the primary returns once the standby has flushed it. The standby streams
    /// through a loopback proxy ([`replication_link`](Self::replication_link)).
    pub fn start_replicated() -> ServerResult<PgServer> {
        let mut server = PgServer::start()?;
        server.configure(&server.primary, &["synchronous_standby_names = '*'"])?;
        server.run(
            Command::new(server.bin.join("pg_ctl"))
                .args(["reload", "-D"])
                .arg(&server.primary.data),
        )?;
        let standby = Node {
            data: server.dir.path().join("standby"),
            socket: server.dir.path().join("s"),
            log: server.dir.path().join("standby.log"),
        };
        server.mkdir(&standby.socket)?;
        server.run(
            Command::new(server.bin.join("pg_basebackup"))
                .arg("-D")
                .arg(&standby.data)
                .arg("-h")
                .arg(&server.primary.socket)
                .args(["-U", USER, "-X", "stream", "-R", "-c", "fast"]),
        )?;
        // The copy carries the primary's settings: the standby listens on its own socket, and
        // streams through the proxy (postgresql.auto.conf, where `-R` wrote the setting, is
        // read last: a later line there wins).
        let link = FaultProxy::start(server.upstream())
            .map_err(|e| format!("starting the replication link's proxy: {e}"))?;
        server.configure(&standby, &[])?;
        let auto = standby.data.join("postgresql.auto.conf");
        std::fs::OpenOptions::new()
            .append(true)
            .open(&auto)
            .and_then(|mut f| {
                writeln!(
                    f,
                    "primary_conninfo = 'host=127.0.0.1 port={} user={USER} application_name=standby'",
                    link.port()
                )
            })
            .map_err(|e| format!("{}: {e}", auto.display()))?;
        server.replication = Some(link);
        server.pg_ctl_start(&standby)?;
        server.standby = Some(standby);
        server.wait_for_sync_standby()?;
        Ok(server)
    }

    /// The primary's connection string (Unix socket, user [`USER`], database `postgres`).
    pub fn conninfo(&self) -> String {
        conninfo(&self.primary)
    }

    /// The primary's socket, for a [`FaultProxy`] to forward to.
    pub fn upstream(&self) -> Upstream {
        Upstream::Unix(self.primary.socket.join(".s.PGSQL.5432"))
    }

    /// A connection string that reaches the primary through `proxy` (loopback TCP), as a
    /// client on another machine would.
    pub fn conninfo_via(&self, proxy: &FaultProxy) -> String {
        format!("host=127.0.0.1 port={} user={USER} dbname=postgres", proxy.port())
    }

    /// The proxy the standby streams from the primary through (`None` without a standby):
    /// [`cut`](FaultProxy::cut) it to part them; synced commits then wait for the standby.
    pub fn replication_link(&self) -> Option<&FaultProxy> {
        self.replication.as_ref()
    }

    /// Cancels the primary's waits for its standby (`pg_cancel_backend` of every session
    /// waiting on `SyncRep`), as an administrator or a pooler would; returns how many. A
    /// cancelled wait leaves its commit on the primary alone.
    pub fn cancel_standby_waits(&self) -> ServerResult<i64> {
        let mut c = postgres::Client::connect(&self.conninfo(), postgres::NoTls)
            .map_err(|e| format!("connecting to the primary: {e}"))?;
        let row = c
            .query_one(
                "SELECT count(pg_cancel_backend(pid)) FROM pg_stat_activity \
                 WHERE wait_event = 'SyncRep'",
                &[],
            )
            .map_err(|e| format!("cancelling the waits for the standby: {e}"))?;
        Ok(row.get(0))
    }

    /// The standby's connection string.
    pub fn standby_conninfo(&self) -> Option<String> {
        self.standby.as_ref().map(conninfo)
    }

    /// The server's log (for failure messages).
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.primary.log).unwrap_or_default()
    }

    /// SIGKILLs the primary's postmaster (its backends exit when they notice).
    pub fn kill_primary(&self) -> ServerResult<()> {
        kill_node(&self.primary)
    }

    /// Starts the primary again after [`kill_primary`](Self::kill_primary) (crash recovery
    /// runs as it starts).
    pub fn restart_primary(&self) -> ServerResult<()> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            // Backends of the killed postmaster may still hold its shared memory for a moment.
            match self.pg_ctl_start(&self.primary) {
                Ok(()) => return Ok(()),
                Err(e) if Instant::now() > deadline => return Err(e),
                Err(_) => std::thread::sleep(Duration::from_millis(200)),
            }
        }
    }

    /// Stops the primary cleanly (`pg_ctl stop -m fast`, which checkpoints) and starts it
    /// again: its shared buffers start empty, so the next reads reach the files (for failing
    /// the server's reads).
    pub fn restart_primary_cold(&self) -> ServerResult<()> {
        self.run(
            Command::new(self.bin.join("pg_ctl"))
                .args(["stop", "-m", "fast", "-w", "-t", "60", "-D"])
                .arg(&self.primary.data),
        )?;
        self.restart_primary()
    }

    /// The primary's running processes: its postmaster (the first line of `postmaster.pid`)
    /// and every process it started (backends, WAL writer, checkpointer...). Empty when it
    /// is not running. For tracing the server (injected system-call faults).
    pub fn primary_pids(&self) -> Vec<u32> {
        let Some(postmaster) = postmaster_pid(&self.primary) else { return Vec::new() };
        let mut pids = vec![postmaster];
        for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
            let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            // Field 4 of /proc/PID/stat, after the parenthesised name, is the parent's pid.
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let parent = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                .and_then(|p| p.parse::<u32>().ok());
            if parent == Some(postmaster) {
                pids.push(pid);
            }
        }
        pids
    }

    /// The paths of the primary's first `n` WAL segment files (timeline 1, as a new cluster
    /// and its crash recoveries write them), existing or not.
    pub fn primary_wal_segments(&self, n: u32) -> Vec<PathBuf> {
        (1..=n).map(|i| self.primary.data.join(format!("pg_wal/00000001{:016X}", i))).collect()
    }

    /// Starts the primary again when it is not running (a fault stopped it), and waits until
    /// it accepts connections.
    pub fn ensure_primary_running(&self) -> ServerResult<()> {
        if !postmaster_pid(&self.primary).is_some_and(process_alive) {
            self.restart_primary()?;
        }
        Ok(())
    }

    /// Promotes the standby (`pg_ctl promote`) after the primary was lost, and clears its
    /// `synchronous_standby_names` (it has no standby of its own: synced commits would wait
    /// forever). Afterwards [`conninfo`](Self::conninfo) still names the old primary; connect
    /// to [`standby_conninfo`](Self::standby_conninfo).
    pub fn promote_standby(&self) -> ServerResult<()> {
        let standby = self.standby.as_ref().ok_or("no standby to promote")?;
        self.run(
            Command::new(self.bin.join("pg_ctl")).args(["promote", "-w", "-D"]).arg(&standby.data),
        )?;
        let mut c = postgres::Client::connect(&conninfo(standby), postgres::NoTls)
            .map_err(|e| format!("connecting to the promoted standby: {e}"))?;
        // ALTER SYSTEM runs outside a transaction block: one statement per call.
        for sql in ["ALTER SYSTEM SET synchronous_standby_names = ''", "SELECT pg_reload_conf()"] {
            c.batch_execute(sql).map_err(|e| {
                let detail = e.as_db_error().map(|d| d.message().to_string()).unwrap_or_default();
                format!("{sql}: {e} {detail}")
            })?;
        }
        Ok(())
    }

    fn mkdir(&self, path: &Path) -> ServerResult<()> {
        std::fs::create_dir_all(path).map_err(|e| format!("{}: {e}", path.display()))?;
        if let Some((uid, gid)) = self.run_as {
            std::os::unix::fs::chown(path, Some(uid), Some(gid))
                .map_err(|e| format!("handing {} to postgres: {e}", path.display()))?;
        }
        Ok(())
    }

    /// Appends settings to a node's `postgresql.conf` (later lines win): Unix socket only.
    fn configure(&self, node: &Node, extra: &[&str]) -> ServerResult<()> {
        let path = node.data.join("postgresql.conf");
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        let mut text = format!(
            "\n# terrane test server\nlisten_addresses = ''\nunix_socket_directories = '{}'\n\
             max_connections = 100\nshared_buffers = 32MB\nfsync = on\n",
            node.socket.display()
        );
        for line in extra {
            text.push_str(line);
            text.push('\n');
        }
        f.write_all(text.as_bytes()).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn pg_ctl_start(&self, node: &Node) -> ServerResult<()> {
        self.run(
            Command::new(self.bin.join("pg_ctl"))
                .args(["start", "-w", "-t", "60", "-D"])
                .arg(&node.data)
                .arg("-l")
                .arg(&node.log),
        )
    }

    fn wait_for_sync_standby(&self) -> ServerResult<()> {
        let deadline = Instant::now() + Duration::from_secs(60);
        let mut c = postgres::Client::connect(&self.conninfo(), postgres::NoTls)
            .map_err(|e| format!("connecting to the primary: {e}"))?;
        loop {
            let rows = c
                .query("SELECT sync_state FROM pg_stat_replication", &[])
                .map_err(|e| format!("reading pg_stat_replication: {e}"))?;
            if rows.iter().any(|r| r.get::<_, Option<String>>(0).as_deref() == Some("sync")) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err("the standby never became a synchronous standby".into());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Runs a server binary (as the postgres user when root), failing with its output.
    fn run(&self, cmd: &mut Command) -> ServerResult<()> {
        cmd.current_dir(self.dir.path()).stdin(Stdio::null());
        if let Some((uid, gid)) = self.run_as {
            cmd.uid(uid).gid(gid);
        }
        let shown = format!("{cmd:?}");
        let out = cmd.output().map_err(|e| format!("cannot run {shown}: {e}"))?;
        if out.status.success() {
            return Ok(());
        }
        Err(format!(
            "{shown} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }

    fn stop(&self, node: &Node) {
        let stopped = self.run(
            Command::new(self.bin.join("pg_ctl"))
                .args(["stop", "-m", "immediate", "-w", "-t", "20", "-D"])
                .arg(&node.data),
        );
        if stopped.is_err() {
            let _ = kill_node(node);
        }
    }
}

fn conninfo(node: &Node) -> String {
    format!("host={} user={USER} dbname=postgres", node.socket.display())
}

/// A node's postmaster pid (the first line of `postmaster.pid`), if the file is there.
fn postmaster_pid(node: &Node) -> Option<u32> {
    let text = std::fs::read_to_string(node.data.join("postmaster.pid")).ok()?;
    text.lines().next()?.trim().parse().ok()
}

/// SIGKILLs a node's postmaster (the pid is the first line of `postmaster.pid`).
fn kill_node(node: &Node) -> ServerResult<()> {
    let pid = postmaster_pid(node).ok_or_else(|| {
        format!("{}: no postmaster pid", node.data.join("postmaster.pid").display())
    })?;
    let status = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .map_err(|e| format!("kill -KILL {pid}: {e}"))?;
    if !status.success() {
        return Err(format!("kill -KILL {pid} failed"));
    }
    // Wait for it to be gone.
    let deadline = Instant::now() + Duration::from_secs(10);
    while process_alive(pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    Ok(())
}

impl Drop for PgServer {
    fn drop(&mut self) {
        if let Some(s) = &self.standby {
            self.stop(s);
        }
        self.stop(&self.primary);
    }
}
