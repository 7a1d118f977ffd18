//! A second process is refused while one writes, and a killed writer leaves no stale lock.
//!
//! A child process (the test binary re-executed with [`CHILD_ENV`] set) opens the store for
//! writing, commits a synced batch, prints `OPENED` and waits. The parent then checks that
//! opening the same store, for writing or read-only, fails with [`Error::Locked`] naming the
//! child's pid (on Linux); SIGKILLs the child; and opens the store at once, finding the
//! child's batch.
//!
//! ```ignore
//! #[test]
//! fn second_process() {
//!     terrane_store::conformance::process_lock::run("second_process", |dir, cfg| open(dir, cfg));
//! }
//! ```

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::time::Duration;

use crate::{Batch, Error, Result, Store, StoreConfig, tables};

use super::crash::CHILD_ENV;

/// Runs the check, or the child role when [`CHILD_ENV`] is set. `open(dir, config)` opens or
/// creates the backend's store in `dir`.
pub fn run<S: Store>(test_name: &str, open: impl Fn(&Path, &StoreConfig) -> Result<S>) {
    run_with_env(test_name, &[], open)
}

/// [`run`], with environment variables set for the child (e.g. where its server is).
pub fn run_with_env<S: Store>(
    test_name: &str,
    child_env: &[(String, String)],
    open: impl Fn(&Path, &StoreConfig) -> Result<S>,
) {
    let config = StoreConfig::new("terrane lock test");
    if let Some(dir) = std::env::var_os(CHILD_ENV) {
        let store = open(Path::new(&dir), &config).expect("child: open");
        let mut batch = Batch::new();
        batch.put(tables::WORLD_META, b"child".to_vec(), 1, b"was here".to_vec());
        store.write(&batch.synced()).expect("child: write");
        let mut out = std::io::stdout().lock();
        writeln!(out, "OPENED").expect("child: report");
        out.flush().expect("child: report");
        std::thread::sleep(Duration::from_secs(60));
        std::process::exit(0);
    }
    let tmp = tempfile::tempdir().expect("temporary directory");
    let dir = tmp.path().join("store");
    std::fs::create_dir_all(&dir).expect("store directory");
    let mut child = super::crash::spawn_child(test_name, &dir, child_env);
    let out = child.stdout.take().expect("child stdout");
    let opened = BufReader::new(out).lines().map_while(|l| l.ok()).any(|l| l.contains("OPENED"));
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        assert!(opened, "the child did not open the store");
        for read_only in [false, true] {
            match open(&dir, &config.clone().read_only(read_only)) {
                Err(e @ Error::Locked { .. }) => {
                    let Error::Locked { holder, .. } = &e else { unreachable!() };
                    if cfg!(target_os = "linux") {
                        assert_eq!(*holder, Some(child.id()), "the holder must be the child: {e}");
                        let pid = format!("pid {}", child.id());
                        assert!(e.to_string().contains(&pid), "message must name {pid}: {e}");
                    }
                }
                Err(e) => panic!("open beside a writing process must be Locked, got {e}"),
                Ok(_) => panic!("open (read_only: {read_only}) beside a writing process succeeded"),
            }
        }
    }));
    child.kill().expect("SIGKILL the child");
    child.wait().expect("reap the child");
    if let Err(p) = result {
        std::panic::resume_unwind(p);
    }
    let store = open(&dir, &config).expect("open right after the holder was killed");
    let found = store.get(tables::WORLD_META, b"child").expect("read");
    assert_eq!(found.map(|o| o.data), Some(b"was here".to_vec()), "the child's synced batch");
}
