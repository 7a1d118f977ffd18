//! The tiered store's SIGKILL crash harness (`crates/cluster/tests/crash.rs`, harness in
//! `crates/cluster/tests/common/kills.rs`) on RocksDB. It runs here, not in terrane-cluster,
//! so that working on the cluster crate does not compile RocksDB's C++. Feature `rocksdb`;
//! `cargo xtask crash` runs it with the others.

#[path = "../../crates/cluster/tests/common/mod.rs"]
mod common;

use common::kills::run;
use terrane_store::StoreConfig;

#[test]
fn crash_rocksdb() {
    run("crash_rocksdb", 200, |dir| {
        terrane_rocksdb::RocksStore::open_with(
            dir.join("world"),
            &StoreConfig::new("terrane cluster crash"),
            &terrane_rocksdb::RocksOptions::new().block_cache_bytes(1 << 20),
        )
        .unwrap()
    });
}
