//! Failed system calls in the PostgreSQL server: the Nth write or the Nth
//! `fdatasync`/`fsync` of every server process on the WAL segment files fails once with `EIO`
//! (injected by `strace` attached to the server's processes and following those it starts),
//! for every N, while a child process commits synced save batches through terrane-postgres;
//! then the Nth `pread64` of any file (catalogs, the store's tables, the WAL), the server
//! restarted before each run so that the child's open and reads miss its shared buffers.
//! PostgreSQL answers such a failure by stopping and replaying its WAL (a failed WAL flush is
//! a PANIC since version 11: it never retries an fsync as if the data were safe); a fault in
//! that recovery stops the server, which the test starts again. What must hold: every error
//! the client sees is typed (`Io`: the server's failed write or flush, or the connection it
//! dropped; `Backend` only for its refusal while it recovers), never `Corrupt`; every
//! acknowledged batch is there afterwards, the failed one whole or absent. See
//! `terrane_store::conformance::syscall_faults`.

mod common;

use std::time::Duration;

use terrane_store::conformance::syscall_faults::{self, FaultKind, ServerCalls, Traced};

#[test]
fn syscall_faults() {
    let (server, conninfo) = common::server();
    let env = common::child_env(&conninfo);
    let open = |dir: &std::path::Path| {
        terrane_postgres::PgStore::open_with(
            &conninfo,
            &terrane_store::StoreConfig::new("terrane syscall fault test"),
            &common::options(dir).pool_timeout(Duration::from_secs(2)),
        )
    };
    let Some(server) = server else {
        // The child role (it exits inside `run_with`).
        syscall_faults::run_with("syscall_faults", &env, &Traced::Child, open);
        unreachable!("the child role exits");
    };
    let pids = || server.primary_pids();
    let recover = || server.ensure_primary_running().unwrap_or_else(|e| panic!("{e}"));
    // Writes and syncs fail on the WAL; reads (`pread64`, or `preadv` where a newer server
    // reads several blocks at once: relation files, the WAL and the commit log) on any file,
    // after a restart: the child's reads then miss the server's shared buffers and reach the
    // files (the catalogs' too).
    let calls = |kind| match kind {
        FaultKind::Reads => {
            ServerCalls { syscalls: "pread64,preadv,preadv2".into(), paths: Vec::new() }
        }
        kind => ServerCalls::of(kind, server.primary_wal_segments(64)),
    };
    let prepare = |kind| {
        if kind == FaultKind::Reads {
            server.restart_primary_cold().unwrap_or_else(|e| panic!("{e}"));
        }
    };
    let traced = Traced::Server {
        pids: &pids,
        kinds: vec![FaultKind::Writes, FaultKind::Syncs, FaultKind::Reads],
        calls: &calls,
        prepare: &prepare,
        recover: &recover,
        backend_errors_allowed: true,
    };
    let report = syscall_faults::run_with("syscall_faults", &env, &traced, open);
    eprintln!("terrane-postgres: {report:#?}");
    assert!(report.injected() > 0, "no call was failed: {report:?}");
    assert!(report.acknowledged >= 0, "no batch was ever acknowledged: {report:?}");
    let log = server.log();
    let count = |what: &str| log.matches(what).count();
    eprintln!(
        "server log: {} PANICs, {} restarts after a crash, {} recoveries stopped by a fault \
         (server started again by the test)",
        count("PANIC:"),
        count("all server processes terminated; reinitializing"),
        count("aborting startup due to startup process failure"),
    );
    assert!(log.contains("PANIC"), "the server never failed a WAL write or flush:\n{log}");
    let reads = &report.kinds[&FaultKind::Reads];
    assert!(
        reads.injected > 0 && reads.failed_reads + reads.failed_opens > 0,
        "no read of the server failed, or none reached the client: {reads:?}"
    );
    // A failed read of the server's files is an I/O error, never the server's refusal.
    for error in reads.errors.keys() {
        assert!(error.starts_with("Io"), "a failed read of the server is not an Io error: {error}");
    }
    // The server's own failures reach the client as I/O errors, not as a backend's refusal.
    for kind in report.kinds.values() {
        for error in kind.errors.keys() {
            assert!(
                !error.contains("Input/output error") || error.starts_with("Io"),
                "a failed call of the server is not an Io error: {error}"
            );
        }
    }
}
