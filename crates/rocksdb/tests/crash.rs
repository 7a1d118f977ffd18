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

/// A creation killed at any point (before, during and after RocksDB writes `CURRENT`) opens
/// again: finished, or recognised as an unfinished creation and started again.
#[test]
fn creation_kills() {
    let report = terrane_store::conformance::creation::run("creation_kills", 100, |dir| {
        RocksStore::open_with(
            dir.join("db"),
            &terrane_store::StoreConfig::new("terrane creation test"),
            &RocksOptions::new().block_cache_bytes(8 << 20).write_buffer_bytes(1 << 20),
        )
    });
    assert_eq!(report.reopened, report.kills);
    assert!(report.during_creation > 0, "no kill landed during creation: {report:?}");
}

/// A second process is refused with the holder's pid; killing the holder frees the store.
#[test]
fn second_process() {
    terrane_store::conformance::process_lock::run("second_process", |dir, config| {
        RocksStore::open_with(
            dir.join("db"),
            config,
            &RocksOptions::new().block_cache_bytes(8 << 20).write_buffer_bytes(1 << 20),
        )
    });
}

/// What RocksDB leaves when killed before it writes `CURRENT` (seen in the wild: `LOCK`, `LOG`
/// and the `*.dbtmp` of its first manifest) is replaced by the next creating open, and a
/// directory holding anything else is refused and left alone.
#[test]
fn unfinished_creation_is_replaced_and_strangers_are_not() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("db");
    std::fs::create_dir_all(&db).unwrap();
    for (name, bytes) in
        [("LOCK", &b""[..]), ("LOG", b"RocksDB version: 11"), ("000001.dbtmp", b"")]
    {
        std::fs::write(db.join(name), bytes).unwrap();
    }
    let config = terrane_store::StoreConfig::new("terrane creation test");
    match RocksStore::open(&db, &config.clone().mode(terrane_store::OpenMode::Open)) {
        Err(terrane_store::Error::NotFound(_)) => {}
        other => panic!("opening an unfinished creation must be NotFound, got {other:?}"),
    }
    assert!(db.join("000001.dbtmp").exists(), "an open that may not create must not clean up");
    drop(RocksStore::open(&db, &config).expect("the unfinished creation is replaced"));
    let stranger = tmp.path().join("stranger");
    std::fs::create_dir_all(&stranger).unwrap();
    std::fs::write(stranger.join("LOG"), b"mine").unwrap();
    std::fs::write(stranger.join("notes.txt"), b"mine").unwrap();
    match RocksStore::open(&stranger, &config) {
        Err(terrane_store::Error::NotAStore { .. }) => {}
        other => panic!("a stranger's directory must be refused, got {other:?}"),
    }
    assert_eq!(std::fs::read(stranger.join("notes.txt")).unwrap(), b"mine");
}

/// A database that another RocksDB user (not terrane, so without terrane's lock) holds is
/// refused with the same typed error, not RocksDB's raw lock text.
#[test]
fn rocksdb_own_lock_is_the_same_typed_error() {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("db");
    let config = terrane_store::StoreConfig::new("terrane lock test");
    drop(RocksStore::open(&path, &config).unwrap());
    let raw = rocksdb::DB::open_cf(
        &rocksdb::Options::default(),
        &path,
        [
            "default",
            "worldMeta",
            "worldProperties",
            "chunkl0",
            "chunkl1",
            "chunkl2",
            "entity",
            "opacityMap",
        ],
    )
    .unwrap();
    match RocksStore::open(&path, &config) {
        Err(e @ terrane_store::Error::Locked { .. }) => {
            assert!(e.to_string().contains("is in use"), "{e}");
        }
        other => panic!("expected Locked, got {other:?}"),
    }
    drop(raw);
    drop(RocksStore::open(&path, &config).unwrap());
}
