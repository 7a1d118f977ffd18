//! Kills during creation: a store whose creation was cut off at any point opens again.
//!
//! A child process (the test binary re-executed with [`CHILD_ENV`] set) creates the store in
//! a fresh directory and prints `OPENED`. The parent SIGKILLs it after a delay that sweeps
//! the whole creation (from before the process starts creating to after it finished), then
//! opens the store with the same function: the open must succeed every time, either
//! finishing the creation or recognising the unfinished one and starting again, and the store
//! must then take a synced batch and read it back. A kill that leaves a directory the backend
//! refuses (the RocksDB defect: `LOCK`, `LOG` and `*.dbtmp` but no `CURRENT`) fails the test.
//!
//! ```ignore
//! #[test]
//! fn creation_kills() {
//!     let report = terrane_store::conformance::creation::run("creation_kills", 100, |dir| open(dir));
//!     assert_eq!(report.reopened, 100);
//! }
//! ```

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::{Batch, Result, Store, tables};

use super::crash::CHILD_ENV;

/// What a creation-kill run did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CreationReport {
    /// Children killed (each in a fresh directory).
    pub kills: u64,
    /// Kills that landed before the child reported its store open (during creation).
    pub during_creation: u64,
    /// Reopens that succeeded (must equal `kills`).
    pub reopened: u64,
    /// How long an unkilled creation took, child start to `OPENED`.
    pub creation_time: Duration,
}

/// Starts the child on `dir`, which is created empty first (as the crash harness does).
fn spawn(test_name: &str, dir: &Path) -> super::child::ChildGuard {
    std::fs::create_dir_all(dir).expect("store directory");
    super::crash::spawn_child(test_name, dir, &[])
}

/// Runs `rounds` kills (overridden by [`KILLS_ENV`](super::crash::KILLS_ENV)), or the child
/// role when [`CHILD_ENV`] is set. `test_name` is the calling `#[test]` function's name; `open` opens or creates the store in the directory.
/// Panics when a reopen fails.
pub fn run<S: Store>(
    test_name: &str,
    rounds: u64,
    open: impl Fn(&Path) -> Result<S>,
) -> CreationReport {
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        let store = open(Path::new(&dir)).expect("child: create");
        let mut out = std::io::stdout().lock();
        writeln!(out, "OPENED").expect("child: report");
        out.flush().expect("child: report");
        drop(store);
        std::process::exit(0);
    }
    let rounds =
        std::env::var(super::crash::KILLS_ENV).ok().and_then(|v| v.parse().ok()).unwrap_or(rounds);
    let tmp = tempfile::tempdir().expect("temporary directory");
    let mut report = CreationReport::default();
    // One creation to its end, to know the span the kills must sweep.
    let dir = tmp.path().join("probe");
    let start = Instant::now();
    let mut child = spawn(test_name, &dir);
    let out = child.stdout.take().expect("child stdout");
    let opened = BufReader::new(out).lines().map_while(|l| l.ok()).any(|l| l.contains("OPENED"));
    report.creation_time = start.elapsed();
    assert!(child.wait().expect("reap").success() && opened, "an unkilled creation failed");
    let span = report.creation_time.mul_f64(1.2);
    for round in 0..rounds {
        let dir = tmp.path().join(format!("round-{round}"));
        let mut child = spawn(test_name, &dir);
        let out = child.stdout.take().expect("child stdout");
        let reader = std::thread::spawn(move || {
            BufReader::new(out).lines().map_while(|l| l.ok()).any(|l| l.contains("OPENED"))
        });
        std::thread::sleep(span.mul_f64(round as f64 / rounds.max(1) as f64));
        child.kill().expect("SIGKILL the child");
        child.wait().expect("reap the child");
        let opened = reader.join().expect("reader thread");
        report.kills += 1;
        if !opened {
            report.during_creation += 1;
        }
        let store = open(&dir).unwrap_or_else(|e| {
            panic!(
                "round {round} (killed {} creation): reopen failed: {e}",
                if opened { "after" } else { "during" }
            )
        });
        let mut batch = Batch::new();
        batch.put(tables::WORLD_META, b"after-kill".to_vec(), 1, b"ok".to_vec());
        store.write(&batch.synced()).unwrap_or_else(|e| panic!("round {round}: write: {e}"));
        let back = store.get(tables::WORLD_META, b"after-kill").expect("read back");
        assert_eq!(back.map(|o| o.data), Some(b"ok".to_vec()), "round {round}");
        report.reopened += 1;
        drop(store);
        let _ = std::fs::remove_dir_all(&dir);
    }
    println!(
        "creation: {} kills ({} during creation, which takes {:?}); {} reopened",
        report.kills, report.during_creation, report.creation_time, report.reopened
    );
    report
}
