//! Server crashes and failover, with real processes: the postmaster is SIGKILLed while a
//! writer commits synced save batches; after a restart (or the promotion of the synchronous
//! standby) every acknowledged batch is there and none is partial.
//!
//! A batch whose `write` returned an error is **unknown**: it may or may not have committed
//! (never partly). The checks accept the state after the last acknowledged batch or after the
//! unknown one, nothing else. `TERRANE_CRASH_KILLS=N` sets the rounds of each test.

mod common;

use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use terrane_postgres::PgStore;
use terrane_postgres::testing::PgServer;
use terrane_store::conformance::crash::{check_saves, save_batch};
use terrane_store::{Store, StoreConfig};

fn rounds(default: u64) -> u64 {
    std::env::var("TERRANE_CRASH_KILLS").ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// How a writer thread's run ended: the last acknowledged batch, and the one in flight when
/// the server went away (its outcome unknown).
struct Written {
    acked: i64,
    unknown: Option<i64>,
}

/// Commits synced save batches from `first` until a write fails (the server is gone).
fn writer(store: Arc<PgStore>, first: i64) -> mpsc::Receiver<Written> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut w = Written { acked: first - 1, unknown: None };
        let start = Instant::now();
        for id in first.. {
            match store.write(&save_batch(id as u64)) {
                Ok(()) => w.acked = id,
                Err(_) => {
                    w.unknown = Some(id);
                    break;
                }
            }
            if start.elapsed() > Duration::from_secs(30) {
                break; // never run forever
            }
        }
        let _ = tx.send(w);
    });
    rx
}

fn rng(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

#[test]
fn server_killed_mid_stream_keeps_every_acknowledged_batch() {
    let server = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let config = StoreConfig::new("terrane server crash test");
    let dir = tempfile::tempdir().unwrap();
    let open = || common::open(&server.conninfo(), dir.path(), &config);
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let (mut next, mut acked_total, mut unknown_committed) = (0i64, 0u64, 0u64);
    let rounds = rounds(20);
    for round in 0..rounds {
        let store = Arc::new(open().unwrap_or_else(|e| panic!("round {round}: open: {e}")));
        let done = writer(Arc::clone(&store), next);
        std::thread::sleep(Duration::from_millis(30 + rng(&mut seed) % 150));
        server.kill_primary().unwrap();
        let w = done.recv_timeout(Duration::from_secs(60)).expect("the writer noticed the kill");
        assert!(w.unknown.is_some(), "round {round}: writes went on after the kill");
        drop(store);
        server.restart_primary().unwrap_or_else(|e| panic!("round {round}: restart: {e}"));
        let store = open().unwrap_or_else(|e| panic!("round {round}: reopen: {e}"));
        let at_most = w.unknown.unwrap_or(w.acked);
        let b = check_saves(&store, w.acked, at_most)
            .unwrap_or_else(|e| panic!("round {round}: {e}\n{}", server.log()));
        acked_total += (w.acked - next + 1).max(0) as u64;
        unknown_committed += u64::from(b > w.acked);
        next = b + 1;
    }
    eprintln!(
        "server crash: {rounds} SIGKILLs of the postmaster, {acked_total} synced batches \
         acknowledged, all present; {unknown_committed} in-flight batches committed, the rest \
         absent; none partial"
    );
    assert!(acked_total > 0, "no batch was acknowledged before the kills");
}

#[test]
fn failover_to_the_synchronous_standby_keeps_every_acknowledged_batch() {
    let config = StoreConfig::new("terrane failover test");
    let dir = tempfile::tempdir().unwrap();
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let rounds = rounds(10);
    let mut acked_total = 0u64;
    for round in 0..rounds {
        let server = PgServer::start_replicated().unwrap_or_else(|e| panic!("{e}"));
        let store = Arc::new(common::open(&server.conninfo(), dir.path(), &config).unwrap());
        let done = writer(Arc::clone(&store), 0);
        std::thread::sleep(Duration::from_millis(50 + rng(&mut seed) % 200));
        server.kill_primary().unwrap();
        let w = done.recv_timeout(Duration::from_secs(60)).expect("the writer noticed the kill");
        drop(store);
        server.promote_standby().unwrap_or_else(|e| panic!("round {round}: promote: {e}"));
        let standby = server.standby_conninfo().unwrap();
        let store = common::open(&standby, dir.path(), &config)
            .unwrap_or_else(|e| panic!("round {round}: open on the promoted standby: {e}"));
        let at_most = w.unknown.unwrap_or(w.acked);
        check_saves(&store, w.acked, at_most).unwrap_or_else(|e| panic!("round {round}: {e}"));
        acked_total += (w.acked + 1) as u64;
        // After the failover the store takes writes on the new primary.
        store.write(&save_batch((check_saves(&store, -1, at_most).unwrap() + 1) as u64)).unwrap();
    }
    eprintln!(
        "failover: {rounds} primaries SIGKILLed and standbys promoted, {acked_total} synced \
         batches acknowledged, all present on the standby, none partial"
    );
    assert!(acked_total > 0);
}
