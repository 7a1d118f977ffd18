//! The tiered store against its in-memory model (`crates/cluster/tests/tiered.rs`, model in
//! `crates/cluster/tests/common/model.rs`) on RocksDB. It runs here, not in terrane-cluster, so
//! that working on the cluster crate does not compile RocksDB's C++. Feature `rocksdb`.

#[path = "../../crates/cluster/tests/common/mod.rs"]
mod common;

use common::model::{Backend, run_model};
use proptest::prelude::*;
use terrane_store::Store;

/// RocksDB: a "crash" drops the store without flushing (the memtables are lost, the
/// write-ahead log is replayed at reopen on the same directory).
struct RocksBackend(tempfile::TempDir);
impl Backend for RocksBackend {
    fn open(&mut self) -> Box<dyn Store> {
        Box::new(
            terrane_rocksdb::RocksStore::open_with(
                self.0.path().join("world"),
                &terrane_store::StoreConfig::new("terrane cluster model"),
                &terrane_rocksdb::RocksOptions::new().block_cache_bytes(1 << 20),
            )
            .unwrap(),
        )
    }
}

proptest! {
    // Fewer cases: opening RocksDB (one column family per table) is the slow part.
    #![proptest_config(ProptestConfig::with_cases(12))]

    #[test]
    fn model_rocksdb(ops in prop::collection::vec(common::model::op(), 1..60)) {
        run_model(&mut RocksBackend(tempfile::tempdir().unwrap()), &ops)?;
    }
}
