//! Full disk on PostgreSQL: the server's data directory on a small tmpfs,
//! filled by synced save batches until the file system is full. The save that meets the full
//! disk fails with an error that says so (an `Io` error of kind `StorageFull`), nothing panics,
//! every acknowledged batch is there and the failed one whole or absent; once space is freed
//! (and the server started again, should it have stopped), saving resumes.
//!
//! The tmpfs is mounted by the test (it runs as root, as CI does); when the mount is refused
//! the test fails and says why.

mod common;

use std::time::{Duration, Instant};

use terrane_postgres::PgStore;
use terrane_postgres::testing::PgServer;
use terrane_store::conformance::crash::{check_saves, save_batch};
use terrane_store::conformance::full_disk::Tmpfs;
use terrane_store::{Error, Store, StoreConfig};

fn open(server: &PgServer, dir: &std::path::Path) -> PgStore {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        match PgStore::open_with(
            &server.conninfo(),
            &StoreConfig::new("terrane full disk test"),
            &common::options(dir).pool_timeout(Duration::from_secs(2)),
        ) {
            Ok(s) => return s,
            Err(e) if Instant::now() > deadline => panic!("the store does not open: {e}"),
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

/// Megabytes free on the file system holding `path` (from `df`).
fn free_kib(path: &std::path::Path) -> u64 {
    let out = std::process::Command::new("df").args(["-k", "--output=avail"]).arg(path).output();
    let out = out.expect("running df");
    String::from_utf8_lossy(&out.stdout).lines().nth(1).and_then(|l| l.trim().parse().ok()).unwrap()
}

#[test]
fn a_full_disk_fails_the_save_loses_nothing_acknowledged_and_saving_resumes() {
    let fs = Tmpfs::mount(128 * 1024);
    let server = PgServer::start_in(fs.path()).unwrap_or_else(|e| panic!("{e}"));
    let dir = fs.path().join("store-name"); // names the schema only
    let store = open(&server, &dir);
    drop(store);
    // Ballast: leave about 8 MiB free.
    let ballast = fs.path().join("ballast");
    let free = free_kib(fs.path());
    assert!(free > 12 * 1024, "the fresh cluster left only {free} KiB of the 128 MiB tmpfs");
    std::fs::write(&ballast, vec![1u8; ((free - 8 * 1024) * 1024) as usize]).unwrap();
    let mut store = open(&server, &dir);
    let (mut last_acked, mut failed) = (-1i64, None);
    for id in 0..10_000u64 {
        match store.write(&save_batch(id)) {
            Ok(()) => last_acked = id as i64,
            Err(e) => {
                // An Io error of kind StorageFull, as the file backends give, not the
                // server's refusal (`Backend`).
                let full =
                    matches!(&e, Error::Io(io) if io.kind() == std::io::ErrorKind::StorageFull);
                eprintln!("postgres: batch {id}: {e}");
                assert!(full, "the error does not say the disk is full: {e:?}");
                failed = Some(id as i64);
                break;
            }
        }
    }
    let failed = failed.expect("10 000 batches never filled the disk");
    assert!(last_acked >= 0, "the first batch already failed");
    // Still full: every acknowledged batch reads back (the server stays up on a full data
    // disk; only a full WAL would stop it).
    drop(store);
    server.ensure_primary_running().unwrap_or_else(|e| panic!("{e}"));
    store = open(&server, &dir);
    let while_full = check_saves(&store, last_acked, failed).unwrap_or_else(|e| panic!("{e}"));
    drop(store);
    std::fs::remove_file(&ballast).unwrap();
    server.ensure_primary_running().unwrap_or_else(|e| panic!("{e}"));
    store = open(&server, &dir);
    let at = check_saves(&store, last_acked, failed).unwrap_or_else(|e| panic!("{e}"));
    eprintln!(
        "postgres: {} batches acknowledged, batch {failed} failed on the full disk; after \
         freeing the ballast the store holds batch {at} (on the full disk: {while_full})",
        last_acked + 1
    );
    // Saving resumes.
    for id in at + 1..at + 6 {
        store
            .write(&save_batch(id as u64))
            .unwrap_or_else(|e| panic!("batch {id} after freeing space: {e}"));
    }
    check_saves(&store, at + 5, at + 5).unwrap_or_else(|e| panic!("{e}"));
    let log = server.log();
    eprintln!(
        "server log: {} lines with 'No space left on device', {} PANICs",
        log.matches("No space left on device").count(),
        log.matches("PANIC:").count()
    );
}
