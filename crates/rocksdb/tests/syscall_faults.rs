//! Failed system calls under RocksDB: the Nth `write`, `fsync`/`fdatasync`
//! or `read` of every thread fails once with `EIO` (injected by `strace`, since RocksDB's file
//! layer is C++), for every N, while a child process opens the store and commits synced save
//! batches or reads them back. See `terrane_store::conformance::syscall_faults` for what every
//! run must show.

use terrane_rocksdb::{RocksOptions, RocksStore};

#[test]
fn syscall_faults() {
    let options = RocksOptions::new().block_cache_bytes(8 << 20).write_buffer_bytes(1 << 20);
    let report = terrane_store::conformance::syscall_faults::run("syscall_faults", |dir| {
        RocksStore::open_with(
            dir.join("db"),
            &terrane_store::StoreConfig::new("terrane syscall fault test"),
            &options,
        )
    });
    eprintln!("terrane-rocksdb: {report:#?}");
    assert!(report.injected() > 0, "no call was failed: {report:?}");
    assert!(report.acknowledged >= 0, "no batch was ever acknowledged: {report:?}");
    // RocksDB's own "IO error: " prefix is not repeated after the store's "I/O error: ".
    for kind in report.kinds.values() {
        for error in kind.errors.keys() {
            assert!(!error.contains("I/O error: IO error"), "{error}");
        }
    }
}
