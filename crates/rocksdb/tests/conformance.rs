//! The conformance suite of terrane-store, unmodified, on RocksDB.

use terrane_rocksdb::{RocksOptions, RocksStore};
use terrane_store::conformance;

fn small() -> RocksOptions {
    RocksOptions::new().block_cache_bytes(8 << 20).write_buffer_bytes(4 << 20)
}

#[test]
fn rocksdb_conforms() {
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    conformance::run_all(|| {
        n += 1;
        RocksStore::open_with(
            dir.path().join(format!("db{n}")),
            &conformance::config("conformance"),
            &small(),
        )
        .unwrap()
    });
}

#[test]
fn rocksdb_conforms_across_reopens() {
    conformance::run_persistent(|dir, config| {
        RocksStore::open_with(dir.join("db"), config, &small())
    });
}
