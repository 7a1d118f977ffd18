//! A primary cut off from its synchronous standby (the standby streams through a proxy,
//! `PgServer::replication_link`): a synced batch is never reported durable without the
//! standby. It waits while the link is cut (`statement_timeout` does not end that wait) and
//! lands once it heals; when the wait is cancelled, the server commits on the primary alone
//! and says so in a warning, and the store returns an error instead of `Ok` (after a
//! failover the batch would be gone).

use std::sync::Arc;
use std::time::{Duration, Instant};

use terrane_postgres::testing::PgServer;
use terrane_postgres::{PgOptions, PgStore};
use terrane_store::{Batch, ReadView, Store, StoreConfig, tables};

fn store(conninfo: &str) -> PgStore {
    // A short statement timeout: the server does not apply it to a commit's wait for the
    // standby, so the cut below outlasts it.
    let options = PgOptions::default().statement_timeout(Duration::from_millis(500));
    PgStore::open_with(conninfo, &StoreConfig::new("replication test"), &options).unwrap()
}

fn synced(key: &[u8]) -> Batch {
    let mut b = Batch::new();
    b.put(tables::ENTITY, key.to_vec(), 1, b"saved".to_vec());
    b.synced()
}

#[test]
fn a_synced_batch_is_never_reported_durable_without_its_standby() {
    let pg = PgServer::start_replicated().unwrap_or_else(|e| panic!("{e}"));
    let link = pg.replication_link().expect("a replicated server has a replication link");
    let s = Arc::new(store(&pg.conninfo()));
    s.write(&synced(b"before")).unwrap();

    // Cut: the synced write waits for the standby, and lands once the link heals.
    link.cut();
    let writer = {
        let s = Arc::clone(&s);
        std::thread::spawn(move || {
            let started = Instant::now();
            s.write(&synced(b"during")).map(|()| started.elapsed())
        })
    };
    std::thread::sleep(Duration::from_millis(1500));
    assert!(!writer.is_finished(), "a synced write returned while its standby was cut off");
    link.heal();
    let waited = writer.join().unwrap().expect("the write lands once the standby is back");
    assert!(waited >= Duration::from_millis(1400), "returned after {waited:?}");

    // Cut, and the wait cancelled (an administrator's `pg_cancel_backend`, a pooler's
    // cancel): the server stops waiting and commits on the primary alone, with a warning. The
    // store must not say Ok.
    link.cut();
    for (what, key) in [("sync", b"".as_slice()), ("write", b"unconfirmed".as_slice())] {
        let writer = {
            let s = Arc::clone(&s);
            let key = key.to_vec();
            std::thread::spawn(
                move || if key.is_empty() { s.sync() } else { s.write(&synced(&key)) },
            )
        };
        std::thread::sleep(Duration::from_millis(500));
        assert!(!writer.is_finished(), "a {what} returned while the standby was cut off");
        let deadline = Instant::now() + Duration::from_secs(20);
        while pg.cancel_standby_waits().unwrap() == 0 {
            assert!(Instant::now() < deadline, "no backend ever waited for the standby");
            std::thread::sleep(Duration::from_millis(20));
        }
        let e = writer.join().unwrap().expect_err("reported durable without the standby");
        assert!(e.to_string().contains("synchronous standby did not confirm"), "{what}: {e}");
    }
    // An unsynced batch does not wait for the standby (and promises nothing against a
    // failover).
    let mut b = Batch::new();
    b.put(tables::ENTITY, b"unsynced".to_vec(), 1, b"x".to_vec());
    s.write(&b).unwrap();
    link.heal();
    assert!(s.get(tables::ENTITY, b"unconfirmed").unwrap().is_some(), "the primary holds it");
    s.write(&synced(b"after")).unwrap();
}
