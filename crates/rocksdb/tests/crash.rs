//! SIGKILL crash test: a child process commits synced game-save batches and is killed at
//! random moments; every reopen must show exactly the state after the last acknowledged batch
//! (or the one in flight), with no partial batch and no torn object.
//!
//! `TERRANE_CRASH_KILLS=N` overrides the number of kills (`cargo xtask crash --kills N`).

use terrane_rocksdb::{RocksOptions, RocksStore};
use terrane_store::conformance::crash;

#[test]
fn crash() {
    let options = RocksOptions::new().block_cache_bytes(8 << 20).write_buffer_bytes(1 << 20);
    let report = crash::run("crash", 200, |dir| {
        RocksStore::open_with(
            dir.join("db"),
            &terrane_store::StoreConfig::new("terrane crash test"),
            &options,
        )
    });
    eprintln!("terrane-rocksdb: {report:?}");
    assert!(report.kills > 0);
    assert!(report.committed >= report.acknowledged);
}
