//! SIGKILL crash test: a child process commits synced game-save batches and is killed at
//! random moments; every reopen must show exactly the state after the last acknowledged batch
//! (or the one in flight), with no partial batch and no torn object.
//!
//! `TERRANE_CRASH_KILLS=N` overrides the number of kills (`cargo xtask crash --kills N`).

use terrane_blockfile::BlockFile;
use terrane_store::conformance::crash;

#[test]
fn crash() {
    let report = crash::run("crash", 200, |dir| {
        BlockFile::open(
            dir.join("world.tbf"),
            &terrane_store::StoreConfig::new("terrane crash test"),
        )
    });
    eprintln!("terrane-blockfile: {report:?}");
    assert!(report.kills > 0);
    assert!(report.committed >= report.acknowledged);
}
