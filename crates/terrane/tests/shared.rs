//! `SharedWorld`: two servers on one PostgreSQL world. Saves fenced by leases, an area handed
//! over with its last save in one batch, hand-offs of entities, per-server progress keys and
//! the world-wide view, a single-server world opened by a shared server, and saves in flight
//! fenced when they land.

#![cfg(feature = "postgres")]

use std::time::{Duration, Instant};
use terrane::lease::AreaId;

use terrane::postgres::testing::{FaultProxy, PgServer};
use terrane::shared::{SaveError, SharedWorld};
use terrane::{Backend, Chunk, ChunkPos, ColumnPos, Schema, TickSave, World};

fn schema() -> Schema {
    let mut s = Schema::new();
    s.add_block("minecraft:air", &[]).unwrap();
    s.add_block("minecraft:stone", &[]).unwrap();
    s
}

fn open(conninfo: &str, id: &str) -> SharedWorld {
    let w = World::builder()
        .backend(Backend::Postgres)
        .schema(schema())
        .server(id)
        .open(conninfo)
        .unwrap();
    SharedWorld::new(w, 1_000).unwrap()
}

fn chunk(world: &World, y: u32) -> Chunk {
    let stone = terrane::BlockId(world.schema().blocks().find("minecraft:stone").unwrap());
    let mut c = Chunk::new(world.air());
    c.set(1, y, 3, stone);
    c
}

#[test]
fn two_servers_share_one_world() {
    let pg = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let conninfo = format!("{} schema=shared", pg.conninfo());
    // A single-server world first, with progress of its own.
    {
        let mut w =
            World::builder().backend(Backend::Postgres).schema(schema()).create(&conninfo).unwrap();
        w.mark_generated(ColumnPos::new(100, 100)).unwrap();
        w.save_tick(30, TickSave::new()).unwrap();
        w.close().unwrap();
    }
    let (area_a, area_b) = (AreaId::new(0, 0), AreaId::new(1, 0));
    let mut a = open(&conninfo, "a");
    let mut b = open(&conninfo, "b");
    assert_eq!(a.world().tick(), 30, "the single-server world's tick is the world's");
    assert!(a.world().distance().contains(ColumnPos::new(100, 100)));
    let now = 1_000_000;
    a.acquire(area_a, now).unwrap();
    b.acquire(area_b, now).unwrap();
    assert!(b.acquire(area_a, now).is_err(), "a's lease is live");

    // Each server's progress under its own keys; the world-wide view is the union.
    a.world_mut().mark_generated(ColumnPos::new(1, 1)).unwrap();
    b.world_mut().mark_generated(ColumnPos::new(17, 1)).unwrap();
    let pa = ChunkPos::new(2, 0, 2);
    let mut s = TickSave::new();
    s.put_chunk(0, pa, chunk(a.world(), 1).encode(a.world().schema()));
    s.put_area_entity(area_a, [1; 16], b"walker".to_vec());
    a.save(40, s).unwrap();
    b.save(41, TickSave::new()).unwrap();
    {
        let r = World::builder().read_only(true).open(&conninfo).unwrap();
        assert_eq!(r.tick(), 41);
        for c in [(1, 1), (17, 1), (100, 100)] {
            assert!(r.distance().contains(ColumnPos::new(c.0, c.1)), "{c:?}");
        }
        assert!(r.verify().unwrap().entities >= 1);
    }

    // A hand-off a -> b: gone from a's area, in b's, in one save of a's.
    let mut s = TickSave::new();
    a.hand_off(&mut s, [1; 16], area_a, area_b, b"walker, moved".to_vec()).unwrap();
    a.save(42, s).unwrap();
    assert_eq!(a.arrivals(area_a).unwrap(), vec![]);
    assert_eq!(b.arrivals(area_b).unwrap(), vec![([1; 16], b"walker, moved".to_vec())]);
    // What a server reads back after a save of unknown outcome: every held area's entities.
    assert_eq!(
        b.held_entities().unwrap(),
        vec![(area_b, vec![([1; 16], b"walker, moved".to_vec())])]
    );
    assert!(a.held_entities().unwrap().iter().all(|(area, e)| *area == area_a && e.is_empty()));

    // a pauses past its lease; b takes area_a over; a's late save is refused whole and a
    // no longer holds the area.
    let later = now + 5_000;
    b.acquire(area_a, later).unwrap();
    let mut late = TickSave::new();
    late.put_chunk(0, pa, chunk(a.world(), 9).encode(a.world().schema()));
    match a.save(43, late) {
        Err(SaveError::Refused { lost }) => assert_eq!(lost, vec![area_a]),
        other => panic!("a stale save must be refused, got {other:?}"),
    }
    assert!(!a.owns(area_a));
    // Its next tick does not write there either, and its regionizer cannot take the area's
    // chunks: both are refused before anything is written.
    let mut next = TickSave::new();
    next.put_chunk(0, pa, chunk(a.world(), 10).encode(a.world().schema()));
    assert!(matches!(a.save(44, next), Err(SaveError::World(_))));
    assert!(a.world_mut().load_chunk(pa).is_err());
    assert!(!a.world().regionizer().is_loaded(pa), "a region of a holds b's chunk");
    assert!(a.world_mut().load_chunk(ChunkPos::new(-1, 0, 2)).is_err(), "never a's");
    assert_eq!(b.world().get_chunk(pa).unwrap(), Some(chunk(b.world(), 1)), "the stale save wrote");

    // b hands area_a back with its last save, in one batch; a takes it and finds it.
    let mut last = TickSave::new();
    last.put_chunk(0, pa, chunk(b.world(), 5).encode(b.world().schema()));
    assert!(b.hand_over(area_a, 44, last).unwrap());
    assert!(!b.owns(area_a));
    let lease = a.acquire(area_a, later + 1).expect("released: free at once");
    assert_eq!(lease.epoch, 3, "each change of owner raises the epoch");
    assert_eq!(a.world().get_chunk(pa).unwrap(), Some(chunk(a.world(), 5)));

    // A hand-over whose area was taken meanwhile writes nothing, not even the last save.
    let evil_later = later + 10_000;
    let mut c = open(&conninfo, "c");
    c.acquire(area_b, evil_later).unwrap();
    let mut last = TickSave::new();
    last.put_chunk(0, ChunkPos::new(20, 0, 2), chunk(b.world(), 2).encode(b.world().schema()));
    assert!(matches!(b.hand_over(area_b, 45, last), Err(SaveError::Refused { .. })));
    assert_eq!(c.world().get_chunk(ChunkPos::new(20, 0, 2)).unwrap(), None);
}

/// A second process started with a server id already in use is another lease owner: it cannot
/// take (or renew) the first one's areas while they live, and once it takes one over after
/// the expiry, the first one's saves there are refused.
#[test]
fn a_second_instance_of_a_server_id_is_another_owner() {
    let pg = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let conninfo = format!("{} schema=twice", pg.conninfo());
    World::builder().backend(Backend::Postgres).schema(schema()).create(&conninfo).unwrap();
    let area = AreaId::new(0, 0);
    let mut first = open(&conninfo, "eu-1");
    let mut second = open(&conninfo, "eu-1");
    assert_eq!(first.server(), second.server());
    assert_ne!(first.lease_owner(), second.lease_owner());
    first.acquire(area, 1_000).unwrap();
    assert!(second.acquire(area, 1_500).is_err(), "the same id must not share a live lease");
    let lease = second.acquire(area, 10_000).unwrap();
    assert_eq!(lease.epoch, 2, "taken over after the expiry: a new epoch");
    let mut s = TickSave::new();
    s.put_area_entity(area, [5; 16], b"first's".to_vec());
    assert!(matches!(first.save(2, s), Err(SaveError::Refused { .. })));
    let mut s = TickSave::new();
    s.put_area_entity(area, [5; 16], b"second's".to_vec());
    second.save(3, s).unwrap();
    assert_eq!(second.arrivals(area).unwrap(), vec![([5; 16], b"second's".to_vec())]);
    assert!(
        World::builder()
            .backend(Backend::Memory)
            .server("x".repeat(33))
            .create("unused")
            .map(|w| SharedWorld::new(w, 1_000))
            .unwrap()
            .is_err(),
        "ids over 32 characters are refused"
    );
}

/// `SharedWorld::balance`: a server takes its home areas and free ones, hands an area back
/// once its home server announces itself, and takes a gone owner's area only after its
/// lease has been expired for a whole lease time.
#[test]
fn balancing_takes_free_areas_hands_back_and_waits_out_a_gone_owner() {
    use terrane::shared::Balance;
    let pg = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let conninfo = format!("{} schema=balance", pg.conninfo());
    World::builder().backend(Backend::Postgres).schema(schema()).create(&conninfo).unwrap();
    let (home_a, home_b) = (AreaId::new(0, 0), AreaId::new(1, 0));
    let home = |a: AreaId| if a == home_a { "a".to_string() } else { "b".to_string() };
    let take = |s: &mut SharedWorld, now: u64| {
        let plan = s.balance([home_a, home_b], home, now).unwrap();
        for (area, b) in &plan {
            if *b == Balance::Acquire {
                s.acquire(*area, now).unwrap();
            }
        }
        plan
    };
    // a alone: it takes its home area and b's, which no lease holds.
    let mut a = open(&conninfo, "a");
    a.announce(0).unwrap();
    let plan = take(&mut a, 0);
    assert_eq!(plan, [(home_a, Balance::Acquire), (home_b, Balance::Acquire)]);
    // b starts: a's leases are live, so b takes nothing; a hands b's home area back.
    let mut b = open(&conninfo, "b");
    b.announce(300).unwrap();
    assert_eq!(b.live_servers(300).unwrap().len(), 2);
    assert!(take(&mut b, 300).is_empty());
    let plan = a.balance([home_a, home_b], home, 400).unwrap();
    assert_eq!(plan, [(home_b, Balance::HandBack { home: "b".into() })]);
    assert!(a.hand_over(home_b, 1, TickSave::new()).unwrap());
    assert_eq!(take(&mut b, 500), [(home_b, Balance::Acquire)]);
    // a is gone (its lease on home_a expires at 1,000): b waits a whole lease time more.
    assert!(take(&mut b, 1_500).is_empty(), "expired, but maybe only slow");
    assert_eq!(take(&mut b, 2_100), [(home_a, Balance::Acquire)]);
    assert!(b.owns(home_a) && b.owns(home_b));
    // a announced at 0: two lease times later it no longer counts as live.
    assert_eq!(b.live_servers(2_100).unwrap().into_iter().collect::<Vec<_>>(), ["b"]);
}

/// With saves in flight a shared world's save returns while it crosses the network, and its
/// fence is checked when it lands: once another server took the area over, the saves in
/// flight are refused whole, every one after them too, and the line opens again. Scans see
/// the saves in flight, and an area taken back is read afresh, not from the cache.
#[test]
fn saves_in_flight_are_fenced_when_they_land() {
    let pg = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let direct = format!("{} schema=in_flight", pg.conninfo());
    World::builder().backend(Backend::Postgres).schema(schema()).create(&direct).unwrap();
    let proxy = FaultProxy::start(pg.upstream()).unwrap();
    let via = format!("{} schema=in_flight", pg.conninfo_via(&proxy));
    let w = World::builder()
        .backend(Backend::Postgres)
        .schema(schema())
        .server("a")
        .saves_in_flight(4)
        .open(&via)
        .unwrap();
    let mut a = SharedWorld::new(w, 1_000).unwrap();
    let mut b = open(&direct, "b");
    let (area_a, area_b) = (AreaId::new(0, 0), AreaId::new(1, 0));
    let now = 1_000_000;
    a.acquire(area_a, now).unwrap();
    b.acquire(area_b, now).unwrap();
    proxy.set_delay(Duration::from_millis(100));
    let t = Instant::now();
    for tick in 1..=3u8 {
        let mut s = TickSave::new();
        s.put_area_entity(area_a, [tick; 16], b"walker".to_vec());
        a.save(u64::from(tick), s).unwrap();
    }
    assert!(t.elapsed() < Duration::from_millis(150), "returned while crossing: {:?}", t.elapsed());
    assert_eq!(a.arrivals(area_a).unwrap().len(), 3, "a scan sees the saves in flight");
    a.world().settle_saves().unwrap();
    assert_eq!(a.landed().unwrap(), [1, 2, 3]);

    // a pauses past its lease and b takes area_a over: a's saves accepted meanwhile are
    // refused when they land, none of them written.
    proxy.set_delay(Duration::from_millis(20));
    b.acquire(area_a, now + 5_000).unwrap();
    for tick in 4..=6u8 {
        let mut s = TickSave::new();
        s.put_area_entity(area_a, [9; 16], vec![tick]);
        a.save(u64::from(tick), s).unwrap();
    }
    assert!(a.world().settle_saves().is_err());
    // A save after the failure, before it is reported, is not written either.
    let mut after = TickSave::new();
    after.put_area_entity(area_a, [9; 16], b"after".to_vec());
    assert!(matches!(a.save(7, after), Err(SaveError::Stopped)));
    match a.landed() {
        Err(SaveError::Refused { lost }) => assert_eq!(lost, [area_a]),
        other => panic!("stale saves in flight must be refused, got {other:?}"),
    }
    assert!(!a.owns(area_a));
    assert!(b.arrivals(area_a).unwrap().iter().all(|(u, _)| *u != [9; 16]), "a stale save landed");
    // The line is open again.
    a.save(7, TickSave::new()).unwrap();
    a.world().settle_saves().unwrap();
    assert_eq!(a.landed().unwrap(), [7]);

    // a reads a chunk of b's area before b writes it (and caches its absence); b writes it
    // and hands its area over; a takes it and reads b's chunk, not its cache.
    let pb = ChunkPos::new(18, 0, 2);
    assert_eq!(a.world().get_chunk(pb).unwrap(), None);
    let mut last = TickSave::new();
    last.put_chunk(0, pb, chunk(b.world(), 4).encode(b.world().schema()));
    assert!(b.hand_over(area_b, 8, last).unwrap());
    a.acquire(area_b, now + 5_001).unwrap();
    assert_eq!(a.world().get_chunk(pb).unwrap(), Some(chunk(a.world(), 4)));
}

/// A balance pass off the tick (`Surveyor::balance` on another thread, applied with
/// `note_survey`): it takes the free areas, renews the held ones, says which to hand back,
/// reads their entities, and reports a lease another server took as lost.
#[test]
fn a_balance_pass_runs_off_the_tick() {
    let pg = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let conninfo = format!("{} schema=survey", pg.conninfo());
    World::builder().backend(Backend::Postgres).schema(schema()).create(&conninfo).unwrap();
    let (home_a, home_b) = (AreaId::new(0, 0), AreaId::new(1, 0));
    let areas = [home_a, home_b];
    let home = move |a: AreaId| if a == home_a { "a".to_string() } else { "b".to_string() };
    let mut a = open(&conninfo, "a");
    let surveyor = a.surveyor();
    let pass = |held: Vec<terrane::lease::Lease>, now: u64| {
        let s = surveyor.clone();
        std::thread::spawn(move || s.balance(&held, &areas, home, now).unwrap()).join().unwrap()
    };
    // a alone: both areas taken on the other thread, held once noted.
    let survey = pass(a.held().cloned().collect(), 0);
    assert_eq!(survey.acquired.iter().map(|l| l.area).collect::<Vec<_>>(), areas);
    assert!(!a.owns(home_a), "not held before it is noted");
    assert!(a.note_survey(&survey).is_empty());
    assert!(a.owns(home_a) && a.owns(home_b));
    let mut s = TickSave::new();
    s.put_area_entity(home_b, [3; 16], b"walker".to_vec());
    a.save(1, s).unwrap();
    // The next pass renews both; b announces itself, so b's home area goes back.
    let mut b = open(&conninfo, "b");
    b.announce(400).unwrap();
    let survey = pass(a.held().cloned().collect(), 500);
    assert_eq!(survey.renewals.len(), 2);
    assert!(survey.acquired.is_empty());
    assert_eq!(survey.hand_backs, [(home_b, "b".to_string())]);
    let stored: Vec<_> = survey.arrivals.iter().filter(|(a, _)| *a == home_b).collect();
    assert_eq!(stored[0].1, [([3; 16], b"walker".to_vec())], "the held areas' entities");
    assert!(a.note_survey(&survey).is_empty());
    let renewed = a.held().find(|l| l.area == home_a).unwrap().expires_ms;
    assert_eq!(renewed, 500 + 1_000, "renewed off the tick, noted here");
    assert!(a.hand_over(home_b, 2, TickSave::new()).unwrap());
    // b takes a's home area once a's lease has long expired: a's next renewal finds it lost.
    b.acquire(home_a, 5_000).unwrap();
    let survey = pass(a.held().cloned().collect(), 5_001);
    assert_eq!(a.note_survey(&survey), [home_a]);
    assert!(!a.owns(home_a));
}
