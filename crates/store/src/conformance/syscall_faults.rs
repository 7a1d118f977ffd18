//! Failed system calls under any backend, injected by the kernel's tracer: the Nth `write`,
//! the Nth `fsync`/`fdatasync` or the Nth `read` of every thread of a process that opens the
//! store and commits synced save batches (or reads them back) fails once with `EIO`, for
//! every N until a run makes fewer than N such calls.
//!
//! Backends written in Rust can carry their own injector (the block file's
//! `simulate_*` functions); a backend whose file layer is C++ (RocksDB) cannot, so the faults
//! come from `strace -f -p PID -e inject=SET:error=EIO:when=N`. The tracer is attached once
//! the child process is ready (after libtest has printed its header), so only the calls of
//! the store's own work are counted: `when=N` counts per thread, and RocksDB's background
//! threads get their Nth call failed too.
//!
//! Every other run's child exits without closing the store, like a crash, and the check after
//! it opens a copy, so the next child's open recovers (replays the log, scans for the batches
//! after the last index) under its own faults: the sweeps cross a save and a recovery.
//!
//! What every run must show (a panic names the run otherwise):
//! - every failure reaches the caller as a typed error: [`Error::Io`] (or [`Error::Poisoned`]
//!   / [`Error::ReadOnly`] for a write refused after one), never [`Error::Corrupt`],
//!   [`Error::Damaged`] or a panic or abort of the process;
//! - after a failed write or sync, no later write of the same process is acknowledged: the
//!   failed call may have lost pages that a later successful `fsync` would not bring back
//!   (the "fsyncgate" rule), so the store must refuse until it is reopened;
//! - the store reopens without the fault, holding every acknowledged batch, the failed one
//!   whole or absent ([`super::crash::check_saves`]);
//! - a read either returns the exact object or fails with a typed error: never wrong data,
//!   never a missing object.
//!
//! A database server's calls can be failed instead ([`Traced::Server`], [`run_with`]): the
//! tracer attaches to the server's processes, follows those they start, and fails only the
//! calls named per kind (PostgreSQL: writes and syncs on its WAL segments; `pread64` on any
//! file, the server restarted before each read run so that its cache is cold); the server,
//! not the client, then owns the recovery, so a write acknowledged after a failed one is
//! allowed there.
//!
//! Needs the `strace` binary (Debian package `strace`, which `cargo xtask test` installs) and
//! the right to trace a process that is not strace's own child: root (as CI runs the suite)
//! or `kernel.yama.ptrace_scope = 0`.
//!
//! ```ignore
//! #[test]
//! fn syscall_faults() {
//!     let report = terrane_store::conformance::syscall_faults::run("syscall_faults", |dir| open(dir));
//!     assert!(report.injected() > 0);
//! }
//! ```

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::crash::{PLAYER_KEY, SAVE_TABLES, check_saves, save_batch, state_after};
use crate::{Error, KeyRange, Result, Store, tables};

/// The environment variable that selects the child role
/// (`<kind>:<batch>:<abandon|close>:<store dir>`).
pub const CHILD_ENV: &str = "TERRANE_SYSCALL_FAULT_CHILD";

/// Batches a writing child commits (fewer when one fails).
const BATCHES: u64 = 6;
/// The largest N tried for one kind of call (a run past it would mean a store that makes
/// thousands of calls for six batches).
const MAX_N: u64 = 2000;
/// Set to `1` to try every N (`cargo xtask crash` does); by default every N up to
/// 24, then steps of an eighth (N = 24, 27, 30, 33, 37, ...), so that the
/// normal suite stays short.
pub const EVERY_N_ENV: &str = "TERRANE_SYSCALL_FAULT_EVERY_N";
const EVERY_N_UP_TO: u64 = 24;

/// Which calls fail.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum FaultKind {
    /// `write`, `pwrite64`, `writev`, `pwritev`, `pwritev2`, while the child opens the store
    /// and commits batches.
    Writes,
    /// `fsync`, `fdatasync`, `sync_file_range`, while the child opens the store and commits
    /// batches.
    Syncs,
    /// `read`, `pread64`, `readv`, `preadv`, `preadv2`, while the child opens the store and
    /// reads every object back.
    Reads,
}

impl FaultKind {
    /// Every kind, in the order [`run`] tries them.
    pub const ALL: [FaultKind; 3] = [FaultKind::Writes, FaultKind::Syncs, FaultKind::Reads];

    /// The system calls of this kind, as strace's `trace=` takes them.
    pub fn syscalls(self) -> &'static str {
        match self {
            FaultKind::Writes => "write,pwrite64,writev,pwritev,pwritev2",
            FaultKind::Syncs => "fsync,fdatasync,sync_file_range",
            FaultKind::Reads => "read,pread64,readv,preadv,preadv2",
        }
    }

    fn name(self) -> &'static str {
        match self {
            FaultKind::Writes => "writes",
            FaultKind::Syncs => "syncs",
            FaultKind::Reads => "reads",
        }
    }

    fn parse(s: &str) -> Option<FaultKind> {
        FaultKind::ALL.into_iter().find(|k| k.name() == s)
    }
}

/// What one kind of fault did over its runs.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KindReport {
    /// Child processes run under the tracer (N = 1 up to the first run with no injection).
    pub runs: u64,
    /// Calls failed by the tracer, over all runs.
    pub injected: u64,
    /// Opens that failed (each with a typed error).
    pub failed_opens: u64,
    /// Writes (batches) that failed, including those refused after an earlier failure.
    pub failed_writes: u64,
    /// Reads that failed.
    pub failed_reads: u64,
    /// The errors seen, by variant and message start, with how often.
    pub errors: BTreeMap<String, u64>,
}

/// What a whole run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SyscallFaultReport {
    /// Per kind of fault.
    pub kinds: BTreeMap<FaultKind, KindReport>,
    /// The last batch acknowledged by any child.
    pub acknowledged: i64,
    /// The last batch found in the store at the end.
    pub committed: i64,
}

impl SyscallFaultReport {
    /// Calls failed over every kind.
    pub fn injected(&self) -> u64 {
        self.kinds.values().map(|k| k.injected).sum()
    }
}

/// Whose calls fail: the child process's own (a backend whose files the process writes: the
/// block file, RocksDB), or a database server's.
pub enum Traced<'a> {
    /// Every thread of the child process.
    Child,
    /// A server's processes, and every process they start while traced (a server that
    /// restarts after a failure restarts under the tracer): only the calls `calls` names fail
    /// (e.g. writes on PostgreSQL's WAL segments). A server recovers from a failed write or
    /// sync itself (PostgreSQL stops and replays its WAL), so a write acknowledged after a
    /// failed one is allowed; every acknowledged batch must still be there afterwards.
    Server {
        /// The server's process ids at the moment of attaching.
        pids: &'a dyn Fn() -> Vec<u32>,
        /// The kinds of call to fail.
        kinds: Vec<FaultKind>,
        /// Per kind, the calls that fail: the system calls (an strace `trace=` set) and the
        /// files (none: any file). A server's calls of a kind are not the client's: e.g. a
        /// server that reads its relation files with `pread64` also reads its wake-up pipes.
        calls: &'a dyn Fn(FaultKind) -> ServerCalls,
        /// Run before each child: e.g. restarts the server before a read run, so that what
        /// the child reads comes from the files, not from the server's cache.
        prepare: &'a dyn Fn(FaultKind),
        /// Run after each child, the tracer detached: brings the server back when the fault
        /// stopped it (e.g. a failed write during its own recovery).
        recover: &'a dyn Fn(),
        /// Error variants a client may see beyond `Io`, `Poisoned` and `ReadOnly` (a server's
        /// own refusals: `Backend`).
        backend_errors_allowed: bool,
    },
}

/// The calls of a server that fail in one kind of run ([`Traced::Server`]).
#[derive(Clone, Debug)]
pub struct ServerCalls {
    /// The system calls, as strace's `trace=` takes them (e.g. `pread64`).
    pub syscalls: String,
    /// Only the calls on these files fail; empty: the calls on any file.
    pub paths: Vec<PathBuf>,
}

impl ServerCalls {
    /// Every system call of `kind` ([`FaultKind::syscalls`]) on `paths`.
    pub fn of(kind: FaultKind, paths: Vec<PathBuf>) -> Self {
        Self { syscalls: kind.syscalls().to_string(), paths }
    }
}

/// The error's variant and its message up to the first path, numbers as `N`, for the report.
fn error_kind(e: &Error) -> String {
    let debug = format!("{e:?}");
    let variant = debug.split(['(', ' ', '{']).next().unwrap_or("?").to_string();
    let text = e.to_string();
    let text = text.split(" /").next().unwrap_or("");
    let mut short = String::new();
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !short.ends_with('N') {
                short.push('N');
            }
        } else {
            short.push(c);
        }
    }
    format!("{variant}: {}", short.trim_end_matches([' ', ':']))
}

/// The tag of an error in the child's report: `typed` (an I/O error, or a write refused after
/// one), `server` (a server's own refusal, allowed when the server is traced) or `untyped`.
fn error_tag(e: &Error) -> &'static str {
    match e {
        Error::Io(_) | Error::Poisoned(_) | Error::ReadOnly(_) => "typed",
        Error::Backend(_) => "server",
        _ => "untyped",
    }
}

/// Prints a protocol line, retrying: the child's own `write` to its stdout is counted and may
/// be the one that fails.
fn say(line: &str) {
    let stdout = std::io::stdout();
    for _ in 0..5 {
        let mut out = stdout.lock();
        if out.write_all(format!("{line}\n").as_bytes()).is_ok() && out.flush().is_ok() {
            return;
        }
    }
}

/// The child role: waits until the tracer is attached, then works on the store.
fn child<S: Store>(spec: &str, open: &dyn Fn(&Path) -> Result<S>) {
    let mut parts = spec.splitn(4, ':');
    let kind = parts.next().and_then(FaultKind::parse).expect("child: fault kind");
    let batch: i64 = parts.next().and_then(|b| b.parse().ok()).expect("child: batch");
    let abandon = parts.next() == Some("abandon");
    let dir = PathBuf::from(parts.next().expect("child: store dir"));
    say("READY");
    // Wait for the parent's go (the tracer is attached); a failed read is retried.
    let mut line = String::new();
    let stdin = std::io::stdin();
    for _ in 0..5 {
        line.clear();
        if stdin.lock().read_line(&mut line).is_ok() && !line.is_empty() {
            break;
        }
    }
    let store = match open(&dir) {
        Ok(s) => s,
        Err(e) => {
            say(&format!("OPEN-ERR {}", error_tag(&e)));
            say(&format!("KIND {}", error_kind(&e)));
            say("DONE");
            return;
        }
    };
    match kind {
        FaultKind::Writes | FaultKind::Syncs => {
            let next = match store.get(tables::WORLD_META, PLAYER_KEY) {
                Ok(Some(o)) => o.version as u64 + 1,
                Ok(None) => 0,
                Err(e) => {
                    say(&format!("READ-ERR {}", error_tag(&e)));
                    say(&format!("KIND {}", error_kind(&e)));
                    say("DONE");
                    return;
                }
            };
            let mut failed = false;
            for id in next..next + BATCHES {
                match store.write(&save_batch(id)) {
                    Ok(()) => {
                        say(&format!("ACK {id} {}", if failed { "after-error" } else { "ok" }))
                    }
                    Err(e) => {
                        say(&format!("WRITE-ERR {id} {}", error_tag(&e)));
                        say(&format!("KIND {}", error_kind(&e)));
                        if failed {
                            break; // refused twice: the store is poisoned, as it must be
                        }
                        failed = true;
                        // Try the same batch again (a batch is idempotent): the store must
                        // refuse it, since the failed call may have lost earlier pages.
                        match store.write(&save_batch(id)) {
                            Ok(()) => say(&format!("ACK {id} after-error")),
                            Err(e) => {
                                say(&format!("WRITE-ERR {id} {}", error_tag(&e)));
                                say(&format!("KIND {}", error_kind(&e)));
                                break;
                            }
                        }
                    }
                }
            }
        }
        FaultKind::Reads => read_back(&store, batch),
    }
    if abandon {
        // Exit without closing, like a crash: the next open recovers (replays the log,
        // scans for the batches after the last index), under the next run's faults.
        std::mem::forget(store);
    } else {
        drop(store);
    }
    say("DONE");
}

/// Reads every object of the state after `batch` one by one, then every table by a scan:
/// each read is the exact object or a typed error (`READ-ERR`), else `WRONG`. The first failed
/// read is tried again on the same handle and the reads go on: one failed call must not keep
/// a store from reading (`RETRY-ERR` when every try fails). The tracer fails the Nth call of
/// each thread or process, so a try may meet another one's fault (a server's other backend,
/// through another pooled connection): up to eight tries.
fn read_back(store: &dyn Store, batch: i64) {
    let model = state_after(batch);
    let mut failed = false;
    // Whether the sweep goes on (not after wrong data, nor after a retry that failed too).
    let mut check = |what: &str, read: &dyn Fn() -> Result<bool>| -> bool {
        match read() {
            Ok(true) => return true,
            Ok(false) => {
                say(&format!("WRONG {what}"));
                return false;
            }
            Err(e) => {
                say(&format!("READ-ERR {}", error_tag(&e)));
                say(&format!("KIND {}", error_kind(&e)));
            }
        }
        // Only the first failure is tried again; a later one (another thread's fault) ends
        // the sweep.
        if std::mem::replace(&mut failed, true) {
            return false;
        }
        let mut last = String::new();
        for _ in 0..8 {
            match read() {
                Ok(true) => return true,
                Ok(false) => {
                    say(&format!("WRONG {what} (read again)"));
                    return false;
                }
                Err(e) => last = error_kind(&e),
            }
        }
        say(&format!("RETRY-ERR {last}"));
        false
    };
    for ((table, key), want) in &model {
        let get = || store.get(table, key).map(|got| got.as_ref() == Some(want));
        if !check(&format!("get {table} {key:?}"), &get) {
            return;
        }
    }
    for table in SAVE_TABLES {
        let want: Vec<_> = model
            .iter()
            .filter(|(k, _)| k.0 == table)
            .map(|(k, v)| (k.1.clone(), v.clone()))
            .collect();
        let scan = || -> Result<bool> {
            let got = store.scan(table, KeyRange::all())?.collect::<Result<Vec<_>>>()?;
            Ok(got == want)
        };
        if !check(&format!("scan of {table}"), &scan) {
            return;
        }
    }
    say("READ-OK");
}

/// Waits until every thread of `pid` is traced by `tracer`, or `pid` is gone (a server's
/// short-lived process may end between the listing and the attach).
fn wait_attached(pid: u32, tracer: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    let want = format!("TracerPid:\t{tracer}");
    while Instant::now() < deadline {
        if !super::process_alive(pid) {
            return true;
        }
        let tasks = std::fs::read_dir(format!("/proc/{pid}/task"));
        let all = tasks.map(|entries| {
            let mut any = false;
            let all = entries.flatten().all(|t| {
                any = true;
                std::fs::read_to_string(t.path().join("status"))
                    .map(|s| s.lines().any(|l| l == want))
                    .unwrap_or(false)
            });
            any && all
        });
        if all.unwrap_or(false) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

/// One child run under the tracer: the lines it printed and how many calls were failed.
struct TracedRun {
    lines: Vec<String>,
    injected: u64,
}

#[allow(clippy::too_many_arguments)]
fn traced_run(
    test_name: &str,
    child_env: &[(String, String)],
    traced: &Traced<'_>,
    kind: FaultKind,
    n: u64,
    batch: i64,
    dir: &Path,
    log: &Path,
) -> TracedRun {
    if let Traced::Server { prepare, .. } = traced {
        prepare(kind);
    }
    let exe = std::env::current_exe().expect("test binary path");
    let child = Command::new(exe)
        .args([test_name, "--exact", "--nocapture", "--test-threads", "1", "-q"])
        .env(
            CHILD_ENV,
            format!(
                "{}:{batch}:{}:{}",
                kind.name(),
                if n % 2 == 1 { "abandon" } else { "close" },
                dir.display()
            ),
        )
        .envs(child_env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log.with_extension("stderr")).expect("child stderr file"))
        .spawn()
        .expect("spawn the child");
    let mut child = super::child::ChildGuard(child);
    let mut out = BufReader::new(child.stdout.take().expect("child stdout"));
    let mut seen = String::new();
    while !seen.contains("READY") {
        let mut line = String::new();
        let n = out.read_line(&mut line).expect("child: READY line");
        assert!(n > 0, "the child did not start: it printed {seen:?}");
        seen.push_str(&line);
    }
    let (calls, pids) = match traced {
        Traced::Child => (ServerCalls::of(kind, Vec::new()), vec![child.id()]),
        Traced::Server { pids, calls, .. } => (calls(kind), pids()),
    };
    let set = calls.syscalls;
    let mut strace = Command::new("strace");
    strace
        .args(["-f", "-qq", "-o"])
        .arg(log)
        .args(["-e", &format!("trace={set}")])
        .args(["-e", &format!("inject={set}:error=EIO:when={n}")]);
    for p in &calls.paths {
        strace.arg("-P").arg(p);
    }
    for pid in &pids {
        strace.args(["-p", &pid.to_string()]);
    }
    let tracer = strace.stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn();
    let mut tracer = match tracer {
        Ok(t) => super::child::ChildGuard(t),
        Err(e) => {
            let _ = child.kill();
            panic!(
                "cannot run strace ({e}): the injected-fault tests need it (Debian package \
                 `strace`; `cargo xtask test` installs it)"
            )
        }
    };
    if !pids.iter().all(|&pid| wait_attached(pid, tracer.id())) {
        let _ = child.kill();
        let _ = tracer.kill();
        let mut why = String::new();
        if let Some(mut e) = tracer.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut e, &mut why);
        }
        panic!("strace did not attach to the child within 10 s: {}", why.trim());
    }
    child.stdin.take().expect("child stdin").write_all(b"GO\n").expect("tell the child to go");
    // Collect its lines (with a deadline: a store that hangs after a failed call is a defect).
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in out.lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut lines = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(l) => lines.push(l),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
                if Instant::now() > deadline {
                    let _ = child.kill();
                    let _ = tracer.kill();
                    panic!(
                        "{} fault at N = {n}: the child hung for 60 s after {lines:?}",
                        kind.name()
                    );
                }
            }
        }
    }
    let status = child.wait().expect("reap the child");
    if let Traced::Server { recover, .. } = traced {
        // Detach from the server (strace detaches on SIGTERM), then bring it back if needed.
        let _ = Command::new("kill").args(["-TERM", &tracer.id().to_string()]).status();
        let _ = tracer.wait();
        recover();
    } else {
        let _ = tracer.wait();
    }
    if !status.success() || !lines.iter().any(|l| l == "DONE") {
        let stderr = std::fs::read_to_string(log.with_extension("stderr")).unwrap_or_default();
        let tail: String =
            stderr.chars().rev().take(3000).collect::<Vec<_>>().into_iter().rev().collect();
        panic!(
            "{} fault at N = {n}: the child died ({status}) instead of returning an error; it \
             printed {lines:?}; its stderr ends:\n{tail}",
            kind.name()
        );
    }
    let injected = std::fs::read_to_string(log)
        .map(|s| s.lines().filter(|l| l.contains("(INJECTED)")).count() as u64)
        .unwrap_or(0);
    TracedRun { lines, injected }
}

/// Runs the harness (or the child role when [`CHILD_ENV`] is set): for each [`FaultKind`],
/// N = 1, 2, ... (see [`EVERY_N_ENV`]) until a run has no call failed. `test_name` is the calling `#[test]`
/// function's name; `open` opens or creates the store in the given directory.
pub fn run<S: Store>(test_name: &str, open: impl Fn(&Path) -> Result<S>) -> SyscallFaultReport {
    run_with(test_name, &[], &Traced::Child, open)
}

/// [`run`], with environment variables for every child (e.g. where its server is) and the
/// calls of a server failed instead of the child's ([`Traced::Server`]).
pub fn run_with<S: Store>(
    test_name: &str,
    child_env: &[(String, String)],
    traced: &Traced<'_>,
    open: impl Fn(&Path) -> Result<S>,
) -> SyscallFaultReport {
    if let Ok(spec) = std::env::var(CHILD_ENV) {
        child(&spec, &open);
        std::process::exit(0);
    }
    let tmp = tempfile::tempdir().expect("temporary directory");
    let dir = tmp.path().join("store");
    std::fs::create_dir_all(&dir).expect("store directory");
    let log = tmp.path().join("strace.log");
    let mut report =
        SyscallFaultReport { acknowledged: -1, committed: -1, ..SyscallFaultReport::default() };
    let mut attempted: i64 = -1;
    let (kinds, server, backend_ok) = match traced {
        Traced::Child => (FaultKind::ALL.to_vec(), false, false),
        Traced::Server { kinds, backend_errors_allowed, .. } => {
            (kinds.clone(), true, *backend_errors_allowed)
        }
    };
    // A server may be back only a moment after a failure stopped it: the reopen waits.
    // The check opens a copy of the store, so that what the child left (a log to replay, the
    // batches after the last index) is recovered by the next child, under its faults. A
    // server's store is checked in place; it may be back only a moment after a fault stopped
    // it, so the open waits.
    let check_dir = tmp.path().join("check");
    let reopen = |n: u64, kind: FaultKind| {
        let at = if server {
            dir.clone()
        } else {
            let _ = std::fs::remove_dir_all(&check_dir);
            super::copy_dir(&dir, &check_dir).expect("copying the store for the check");
            check_dir.clone()
        };
        let deadline = Instant::now() + Duration::from_secs(if server { 60 } else { 0 });
        loop {
            match open(&at) {
                Ok(s) => return s,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    // A server that was still up when the child ended may have stopped since
                    // (its recovery failed on a fault injected just before the tracer left):
                    // bring it back, not only wait.
                    if let Traced::Server { recover, .. } = traced {
                        recover();
                    }
                    std::thread::sleep(Duration::from_millis(200));
                }
                Err(e) => {
                    panic!("{} fault at N = {n}: the store does not reopen: {e}", kind.name())
                }
            }
        }
    };
    for kind in kinds {
        let mut kr = KindReport::default();
        let every = std::env::var(EVERY_N_ENV).is_ok_and(|v| v == "1");
        let mut n = 0;
        loop {
            n = if every || n < EVERY_N_UP_TO { n + 1 } else { n + n / 8 };
            let run =
                traced_run(test_name, child_env, traced, kind, n, report.committed, &dir, &log);
            kr.runs += 1;
            kr.injected += run.injected;
            let mut failed = false;
            let mut kind_line = None;
            for line in &run.lines {
                let mut words = line.split_whitespace();
                let (Some(tag), rest) = (words.next(), words.collect::<Vec<_>>()) else {
                    continue;
                };
                let context = || format!("{} fault at N = {n}: {:?}", kind.name(), run.lines);
                match tag {
                    "OPEN-ERR" | "WRITE-ERR" | "READ-ERR" => {
                        assert!(
                            rest.last() == Some(&"typed")
                                || (backend_ok && rest.last() == Some(&"server")),
                            "an injected EIO surfaced as an untyped or wrong error (Corrupt, \
                             Damaged...): {}",
                            context()
                        );
                        match tag {
                            "OPEN-ERR" => kr.failed_opens += 1,
                            "WRITE-ERR" => kr.failed_writes += 1,
                            _ => kr.failed_reads += 1,
                        }
                        if tag == "WRITE-ERR" {
                            failed = true;
                            let id: i64 = rest[0].parse().expect("batch id");
                            attempted = attempted.max(id);
                        }
                    }
                    "KIND" => kind_line = Some(rest.join(" ")),
                    "ACK" => {
                        let id: i64 = rest[0].parse().expect("batch id");
                        assert!(
                            server || (rest.get(1) != Some(&"after-error") && !failed),
                            "a write was acknowledged after a failed one in the same process \
                             (a failed write or fsync may have lost pages that a later \
                             successful sync does not bring back): {}",
                            context()
                        );
                        attempted = attempted.max(id);
                        report.acknowledged = report.acknowledged.max(id);
                    }
                    "WRONG" => panic!("a read returned wrong data: {}", context()),
                    "RETRY-ERR" => panic!(
                        "a read failed on every one of eight tries after a single failed call: \
                         one fault must not keep a store from reading: {}",
                        context()
                    ),
                    _ => {}
                }
                if let Some(k) = kind_line.take() {
                    *kr.errors.entry(k).or_default() += 1;
                }
            }
            // Reopen without the fault: every acknowledged batch, the failed one whole or absent.
            let store = reopen(n, kind);
            let at_most = attempted.max(report.committed);
            report.committed =
                check_saves(&store, report.acknowledged, at_most).unwrap_or_else(|e| {
                    panic!(
                        "{} fault at N = {n}, reopened: {e}; the child printed {:?}",
                        kind.name(),
                        run.lines
                    )
                });
            drop(store);
            if run.injected == 0 {
                break;
            }
            assert!(n < MAX_N, "{} faults: still injecting at N = {n}", kind.name());
        }
        eprintln!("syscall faults, {}: {kr:?}", kind.name());
        report.kinds.insert(kind, kr);
    }
    report
}
