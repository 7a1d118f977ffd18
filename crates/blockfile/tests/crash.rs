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

/// A creation killed at any point opens again (the file appears whole, by rename, or not at
/// all).
#[test]
fn creation_kills() {
    let report = terrane_store::conformance::creation::run("creation_kills", 100, |dir| {
        BlockFile::open(
            dir.join("world.tbf"),
            &terrane_store::StoreConfig::new("terrane creation test"),
        )
    });
    assert_eq!(report.reopened, report.kills);
}

/// A second process is refused with the holder's pid; killing the holder frees the store.
#[test]
fn second_process() {
    terrane_store::conformance::process_lock::run("second_process", |dir, config| {
        std::fs::create_dir_all(dir)?;
        BlockFile::open(dir.join("world.tbf"), config)
    });
}
