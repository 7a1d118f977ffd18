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

/// `cache_bytes` counts what is written into the memtables, and what reads bring into the
/// block cache after a flush (a soak tells these caps from a leak by it).
#[test]
fn cache_bytes_counts_memtables_and_the_block_cache() {
    use terrane_store::{ReadView, Store, tables};
    let dir = tempfile::tempdir().unwrap();
    let store =
        RocksStore::open_with(dir.path().join("db"), &conformance::config("caches"), &small())
            .unwrap();
    let empty = store.cache_bytes().expect("RocksDB reports its caches");
    // Values below the blob threshold, so that they live in the tables' data blocks (blob
    // files are read past the block cache).
    for i in 0..4096u32 {
        store.put(tables::CHUNK_L0, &i.to_be_bytes(), 1, &vec![i as u8; 256]).unwrap();
    }
    let written = store.cache_bytes().unwrap();
    assert!(written >= empty + (1 << 20), "1 MiB written, caches {empty} -> {written}");
    store.flush().unwrap();
    let flushed = store.cache_bytes().unwrap();
    assert!(flushed < written, "the flush emptied the memtable: {written} -> {flushed}");
    for i in 0..4096u32 {
        store.get(tables::CHUNK_L0, &i.to_be_bytes()).unwrap().unwrap();
    }
    let read = store.cache_bytes().unwrap();
    assert!(read >= flushed + (512 << 10), "reads filled the block cache: {flushed} -> {read}");
}

/// The row cache holds values that point reads found in table files: the same reads after a
/// flush leave at least their values' bytes more in `cache_bytes` than without one, and a
/// value overwritten and flushed again is read new, through `get` and `multi_get` (the suite
/// above runs with the row cache on).
#[test]
fn the_row_cache_keeps_values_read_and_never_serves_an_old_one() {
    use terrane_store::{ReadView, Store, tables};
    let grown = |options: RocksOptions, name: &str| {
        let dir = tempfile::tempdir().unwrap();
        let store =
            RocksStore::open_with(dir.path().join("db"), &conformance::config(name), &options)
                .unwrap();
        for i in 0..4096u32 {
            store.put(tables::CHUNK_L0, &i.to_be_bytes(), 1, &vec![i as u8; 256]).unwrap();
        }
        store.flush().unwrap();
        let before = store.cache_bytes().unwrap();
        for i in 0..4096u32 {
            store.get(tables::CHUNK_L0, &i.to_be_bytes()).unwrap().unwrap();
        }
        let grown = store.cache_bytes().unwrap() - before;
        // Overwritten and flushed: the new value, by either read.
        let key = 7u32.to_be_bytes();
        store.put(tables::CHUNK_L0, &key, 2, b"new").unwrap();
        store.flush().unwrap();
        assert_eq!(store.get(tables::CHUNK_L0, &key).unwrap().unwrap().data.as_slice(), b"new");
        let got = store.multi_get(tables::CHUNK_L0, &[&key, &8u32.to_be_bytes()]).unwrap();
        assert_eq!(got[0].as_ref().unwrap().data.as_slice(), b"new");
        assert_eq!(got[1].as_ref().unwrap().data.as_slice(), &[8u8; 256][..]);
        grown
    };
    let without = grown(small().row_cache_bytes(0), "no-rows");
    let with = grown(small(), "rows");
    assert!(with >= without + (1 << 20), "row cache off: +{without} bytes, on: +{with}");
}

/// Values in BlobDB's blob files read right through the row cache, twice (the second time
/// from the cache), and an overwritten one is read new.
#[test]
fn blob_values_read_right_through_the_row_cache() {
    use terrane_store::{ReadView, Store, tables};
    let dir = tempfile::tempdir().unwrap();
    let options = small().min_blob_size(64);
    let store =
        RocksStore::open_with(dir.path().join("db"), &conformance::config("blobs"), &options)
            .unwrap();
    let value =
        |i: u32, v: i64| -> Vec<u8> { (0..300).map(|k| (i as i64 + k + v) as u8).collect() };
    for i in 0..64u32 {
        store.put(tables::CHUNK_L0, &i.to_be_bytes(), 1, &value(i, 1)).unwrap();
    }
    store.flush().unwrap();
    let blob_files = std::fs::read_dir(dir.path().join("db"))
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().extension().is_some_and(|x| x == "blob"))
        .count();
    assert!(blob_files > 0, "the values went to blob files");
    for _ in 0..2 {
        for i in 0..64u32 {
            let got = store.get(tables::CHUNK_L0, &i.to_be_bytes()).unwrap().unwrap();
            assert_eq!((got.version, got.data), (1, value(i, 1)));
        }
    }
    store.put(tables::CHUNK_L0, &7u32.to_be_bytes(), 2, &value(7, 2)).unwrap();
    store.flush().unwrap();
    let got = store.get(tables::CHUNK_L0, &7u32.to_be_bytes()).unwrap().unwrap();
    assert_eq!((got.version, got.data), (2, value(7, 2)));
}
