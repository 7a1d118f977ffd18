//! The store across a shaped network ([`FaultProxy`] between it and a real server): what each
//! call costs in round trips, and what a cut, a reset and a refusal do to it.

use std::time::{Duration, Instant};

use terrane_postgres::testing::{Direction, FaultProxy, Link, PgServer};
use terrane_postgres::{PgOptions, PgStore};
use terrane_store::{Batch, KeyRange, ReadView, Store, StoreConfig, tables};

fn config() -> StoreConfig {
    StoreConfig::new("terrane network test")
}

fn proxied() -> (PgServer, FaultProxy) {
    let server = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let proxy = FaultProxy::start(server.upstream()).unwrap();
    (server, proxy)
}

/// A store opened through `proxy` whose every read reaches the server (no read cache).
fn uncached(server: &PgServer, proxy: &FaultProxy) -> PgStore {
    let options = PgOptions::new().cache_bytes(0);
    PgStore::open_with(&server.conninfo_via(proxy), &config(), &options).unwrap()
}

/// The time `f` takes, in round trips of `rtt`.
fn round_trips(rtt: Duration, f: impl FnOnce()) -> f64 {
    let start = Instant::now();
    f();
    start.elapsed().as_secs_f64() / rtt.as_secs_f64()
}

#[test]
fn the_delay_is_paid_per_round_trip_and_a_multi_get_is_one() {
    let (server, proxy) = proxied();
    let store = uncached(&server, &proxy);
    let mut b = Batch::new();
    for i in 0..2_000u32 {
        b.put(tables::CHUNK_L0, i.to_be_bytes().to_vec(), 1, vec![7; 64]);
    }
    store.write(&b).unwrap();
    let keys: Vec<Vec<u8>> = (0..2_000u32).map(|i| i.to_be_bytes().to_vec()).collect();
    let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
    // Warm the statements and the pool's connections.
    store.multi_get(tables::CHUNK_L0, &refs).unwrap();
    store.get(tables::CHUNK_L0, &keys[0]).unwrap();

    let rtt = Duration::from_millis(40);
    proxy.set_delay(rtt / 2);
    // Counted by the proxy (exact whatever the machine's load), and timed: the delay is a
    // floor on every exchange.
    let counted = |f: &dyn Fn()| {
        let before = proxy.round_trips();
        let took = round_trips(rtt, f);
        (proxy.round_trips() - before, took)
    };
    let (one, took) = counted(&|| {
        store.get(tables::CHUNK_L0, &keys[1]).unwrap();
    });
    assert_eq!(one, 1, "a get");
    assert!(took >= 0.95, "a get took {took:.2} round trips of time");
    let (many, took) = counted(&|| {
        let got = store.multi_get(tables::CHUNK_L0, &refs).unwrap();
        assert!(got.iter().all(|o| o.as_ref().is_some_and(|o| o.data == [7; 64])));
    });
    assert_eq!(many, 1, "a multi_get of 2,000 keys");
    assert!(took >= 0.95, "a multi_get took {took:.2} round trips of time");
    let (ten, took) = counted(&|| {
        for k in &keys[..10] {
            store.get(tables::CHUNK_L0, k).unwrap();
        }
    });
    assert_eq!(ten, 10, "ten gets");
    assert!(took >= 9.5, "ten gets took {took:.2} round trips of time");

    // A short scan is one statement; a long one pages through a snapshot (begin, its pages,
    // rollback) after the short probe.
    let scan = |from: u32, to: u32| -> usize {
        let range = KeyRange::between(&from.to_be_bytes(), &to.to_be_bytes());
        store.scan(tables::CHUNK_L0, range).unwrap().inspect(|e| assert!(e.is_ok())).count()
    };
    scan(0, 2_000);
    let (short, _) = counted(&|| assert_eq!(scan(1_000, 1_016), 16));
    assert_eq!(short, 1, "a scan of 16 entries");
    let (one_page, _) = counted(&|| assert_eq!(scan(0, 200), 200));
    assert_eq!(one_page, 1 + 1 + 1 + 1, "a scan of 200 entries: one page after the probe");
    let pages = 2_000_usize.div_ceil(terrane_postgres::PgOptions::new().scan_page_rows as usize);
    let (long, _) = counted(&|| assert_eq!(scan(0, 2_000), 2_000));
    assert_eq!(long, 1 + 1 + pages as u64 + 1, "a scan of 2,000 entries");
}

#[test]
fn bandwidth_and_jitter_shape_each_direction() {
    let (server, proxy) = proxied();
    let store = uncached(&server, &proxy);
    store.put(tables::CHUNK_L0, b"big", 1, &[0x5a; 1 << 20]).unwrap();
    store.get(tables::CHUNK_L0, b"big").unwrap();
    // 1 MiB back at 4 MiB/s: at least a quarter of a second, whatever loopback does.
    proxy
        .set_link(Direction::ToClient, Link { bytes_per_second: Some(4 << 20), ..Link::default() });
    let start = Instant::now();
    assert_eq!(store.get(tables::CHUNK_L0, b"big").unwrap().unwrap().data.len(), 1 << 20);
    let slow = start.elapsed();
    assert!(slow >= Duration::from_millis(240), "1 MiB at 4 MiB/s took {slow:?}");
    // The other direction is not throttled: a small read is quick.
    proxy.set_link(Direction::ToClient, Link::default());
    proxy.set_link(
        Direction::ToServer,
        Link {
            delay: Duration::from_millis(5),
            jitter: Duration::from_millis(20),
            ..Link::default()
        },
    );
    let mut took = Vec::new();
    for _ in 0..20 {
        let start = Instant::now();
        store.get(tables::CHUNK_L0, b"none").unwrap();
        took.push(start.elapsed());
    }
    let (lo, hi) = (took.iter().min().unwrap(), took.iter().max().unwrap());
    assert!(*lo >= Duration::from_millis(5), "the delay is a floor: {took:?}");
    assert!(*hi - *lo >= Duration::from_millis(5), "jitter varies the delay: {took:?}");
}

#[test]
fn a_cut_holds_a_write_until_it_heals_and_the_write_lands_once() {
    let (server, proxy) = proxied();
    let store = PgStore::open(&server.conninfo_via(&proxy), &config()).unwrap();
    store.put(tables::ENTITY, b"before", 1, b"x").unwrap();
    proxy.cut();
    assert!(proxy.is_cut());
    let started = Instant::now();
    std::thread::scope(|s| {
        let write = s.spawn(|| {
            let mut b = Batch::new();
            b.put(tables::ENTITY, b"during".to_vec(), 1, b"y".to_vec());
            store.write(&b.synced())
        });
        std::thread::sleep(Duration::from_millis(500));
        assert!(!write.is_finished(), "a write crossed a cut link");
        // Nothing reached the server: it does not hold the write.
        let mut direct = postgres::Client::connect(&server.conninfo(), postgres::NoTls).unwrap();
        let held: i64 = direct
            .query_one("SELECT count(*) FROM terrane.entity WHERE key = 'during'::bytea", &[])
            .unwrap()
            .get(0);
        assert_eq!(held, 0, "the server holds a write sent during the cut");
        proxy.heal();
        write.join().unwrap().unwrap();
    });
    assert!(started.elapsed() >= Duration::from_millis(500));
    assert_eq!(store.get(tables::ENTITY, b"during").unwrap().unwrap().data, b"y");
}

#[test]
fn a_reset_breaks_open_connections_and_the_store_reconnects() {
    let (server, proxy) = proxied();
    let store = PgStore::open(&server.conninfo_via(&proxy), &config()).unwrap();
    store.put(tables::ENTITY, b"a", 1, b"1").unwrap();
    assert!(proxy.open_connections() >= 1);
    let reset = proxy.reset_open();
    assert!(reset >= 1, "no open connection to reset");
    // A broken connection is an error or a transparent reconnect, never wrong data; a few
    // calls later the store works again.
    let mut ok = false;
    for _ in 0..5 {
        match store.get(tables::ENTITY, b"a") {
            Ok(o) => {
                assert_eq!(o.unwrap().data, b"1");
                ok = true;
                break;
            }
            Err(e) => assert!(e.to_string().to_lowercase().contains("connection"), "{e}"),
        }
    }
    assert!(ok, "the store never reconnected after a reset");
    store.put(tables::ENTITY, b"b", 1, b"2").unwrap();
}

#[test]
fn refused_connections_fail_the_open_in_bounded_time() {
    let (server, proxy) = proxied();
    proxy.refuse_new(true);
    let start = Instant::now();
    let e = PgStore::open_with(
        &server.conninfo_via(&proxy),
        &config(),
        &PgOptions::new().connect_timeout(Duration::from_secs(2)),
    )
    .unwrap_err();
    assert!(start.elapsed() < Duration::from_secs(10), "{:?}: {e}", start.elapsed());
    assert!(proxy.accepted() >= 1, "the open never reached the proxy: {e}");
    proxy.refuse_new(false);
    PgStore::open(&server.conninfo_via(&proxy), &config()).unwrap();
}
