//! A store closed cleanly holds its tables, not a write-ahead log of what it wrote: dropping a
//! writable store, or flushing it, leaves logs of a few bytes, and the directory stays within
//! a small factor of the data it holds.

use std::path::Path;

use terrane_rocksdb::RocksStore;
use terrane_store::{Batch, ReadView, Store, conformance, tables};

/// Bytes of the files of `dir` whose name ends with `suffix`, and of every file.
fn bytes(dir: &Path, suffix: &str) -> (u64, u64) {
    let (mut matching, mut all) = (0, 0);
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let len = e.metadata().unwrap().len();
        all += len;
        if e.file_name().to_string_lossy().ends_with(suffix) {
            matching += len;
        }
    }
    (matching, all)
}

/// Incompressible bytes (the conformance suite's generator): the data's size on disk is its
/// size.
fn noise(seed: u64, len: usize) -> Vec<u8> {
    terrane_store::conformance::Rng::new(seed).bytes(len)
}

/// Writes 4 MiB as a game does (chunks in batches, one small world property per save) and
/// returns the bytes written.
fn write_a_few_mib(store: &RocksStore) -> u64 {
    let mut data = 0;
    for save in 0..64u64 {
        let mut b = Batch::new();
        for i in 0..16u64 {
            let value = noise(save * 16 + i, 4096);
            data += value.len() as u64;
            b.put(tables::CHUNK_L0, (save * 16 + i).to_be_bytes().to_vec(), 1, value);
        }
        b.put(tables::WORLD_PROPERTIES, b"gameTick".to_vec(), save as i64 + 1, vec![0; 8]);
        store.write(&b).unwrap();
    }
    data
}

fn check_and_reopen(path: &Path, data: u64) {
    let (logs, all) = bytes(path, ".log");
    assert!(logs < 64 << 10, "{logs} bytes of write-ahead log in a closed store");
    assert!(all < data * 3 / 2, "{all} bytes on disk for {data} bytes of data");
    let store = RocksStore::open(path, &conformance::config("close").read_only(true)).unwrap();
    for k in 0..64 * 16u64 {
        let o = store.get(tables::CHUNK_L0, &k.to_be_bytes()).unwrap().unwrap();
        assert_eq!(o.data, noise(k, 4096), "key {k}");
    }
    assert_eq!(store.get(tables::WORLD_PROPERTIES, b"gameTick").unwrap().unwrap().version, 64);
}

#[test]
fn a_dropped_store_keeps_no_write_ahead_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = RocksStore::open(&path, &conformance::config("close")).unwrap();
    let data = write_a_few_mib(&store);
    // Open, the log holds the writes (they are in the memtables only).
    assert!(bytes(&path, ".log").0 >= data, "the writes are in the log while open");
    drop(store);
    check_and_reopen(&path, data);
}

#[test]
fn a_flushed_store_keeps_no_write_ahead_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let store = RocksStore::open(&path, &conformance::config("close")).unwrap();
    let data = write_a_few_mib(&store);
    store.flush().unwrap();
    // Flushed, the logs are obsolete already, with the store still open.
    let (logs, _) = bytes(&path, ".log");
    assert!(logs < 64 << 10, "{logs} bytes of write-ahead log after a flush");
    drop(store);
    check_and_reopen(&path, data);
    // A second session that writes again closes as small.
    let store = RocksStore::open(&path, &conformance::config("close")).unwrap();
    let more = write_a_few_mib(&store);
    drop(store);
    check_and_reopen(&path, data + more);
}
