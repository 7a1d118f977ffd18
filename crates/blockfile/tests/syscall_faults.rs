//! Failed system calls under the block file, injected by `strace` from outside the process:
//! the same harness RocksDB runs, beside the block file's own injector
//! (`tests/io_errors.rs`, `tests/read_errors.rs`). See
//! `terrane_store::conformance::syscall_faults` for what every run must show.

use terrane_blockfile::BlockFile;

#[test]
fn syscall_faults() {
    let report = terrane_store::conformance::syscall_faults::run("syscall_faults", |dir| {
        BlockFile::open(
            dir.join("world.tbf"),
            &terrane_store::StoreConfig::new("terrane syscall fault test"),
        )
    });
    eprintln!("terrane-blockfile: {report:#?}");
    assert!(report.injected() > 0, "no call was failed: {report:?}");
    assert!(report.acknowledged >= 0, "no batch was ever acknowledged: {report:?}");
}
