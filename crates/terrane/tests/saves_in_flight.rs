//! Saves in flight (`WorldBuilder::saves_in_flight`) on a PostgreSQL world across a shaped
//! network (`FaultProxy`): a save returns while its batch crosses, is reported durable only
//! once the database holds it, never while the link is cut, and a connection reset in the
//! middle of the line leaves every reported save there and nothing after the failed one.
#![cfg(feature = "postgres")]

use std::time::{Duration, Instant};

use terrane::postgres::testing::{FaultProxy, PgServer};
use terrane::section::keys;
use terrane::{Backend, Chunk, ChunkPos, Schema, TickSave, World};

fn schema() -> Schema {
    let mut s = Schema::new();
    s.add_block("minecraft:air", &[]).unwrap();
    s.add_block("minecraft:stone", &[]).unwrap();
    s
}

/// A chunk with `n` stone blocks, so that each tick's save is told apart.
fn chunk(world: &World, n: u32) -> Vec<u8> {
    let stone = terrane::BlockId(world.schema().blocks().find("minecraft:stone").unwrap());
    let mut c = Chunk::new(world.air());
    for i in 0..n.min(4096) {
        c.set(i % 16, i / 256, (i / 16) % 16, stone);
    }
    c.encode(world.schema())
}

fn save(world: &mut World, tick: u64) {
    let mut s = TickSave::new();
    s.put_chunk(0, ChunkPos::new(0, 0, 0), chunk(world, tick as u32));
    world.save_tick(tick, s).unwrap();
}

/// A server, a world created directly on it, and a proxy in front of it.
fn setup(name: &str) -> (PgServer, FaultProxy, Db, String) {
    let pg = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let direct = format!("{} schema={name}", pg.conninfo());
    let w = World::builder().backend(Backend::Postgres).schema(schema()).create(&direct).unwrap();
    w.close().unwrap();
    let proxy = FaultProxy::start(pg.upstream()).unwrap();
    let via = format!("{} schema={name}", pg.conninfo_via(&proxy));
    let db = Db { conninfo: pg.conninfo(), schema: name.to_string() };
    (pg, proxy, db, via)
}

/// The database as an independent reader sees it: plain SQL past the proxy and past the
/// world's lock (docs/format/postgres-v1.md).
struct Db {
    conninfo: String,
    schema: String,
}

impl Db {
    /// The world's tick and the stone count of its one chunk, as the database holds them.
    fn stored(&self) -> (u64, u32) {
        let mut c = postgres::Client::connect(&self.conninfo, postgres::NoTls).unwrap();
        let s = &self.schema;
        let tick: Vec<u8> = c
            .query_one(
                &format!("SELECT data FROM \"{s}\".\"worldMeta\" WHERE key = $1"),
                &[&b"gameTick".as_slice()],
            )
            .unwrap()
            .get(0);
        let tick = u64::from_le_bytes(tick.try_into().expect("8 bytes"));
        let key = keys::chunk_key(0, ChunkPos::new(0, 0, 0), keys::Level::L0);
        let sql = format!("SELECT data FROM \"{s}\".chunkl0 WHERE key = $1");
        let row = c.query_opt(&sql, &[&key.as_slice()]).unwrap();
        let schema = schema();
        let stone = terrane::BlockId(schema.blocks().find("minecraft:stone").unwrap());
        let n = row.map_or(0, |r| {
            let c = Chunk::decode(&r.get::<_, Vec<u8>>(0), &schema).unwrap();
            (0..4096u32).filter(|i| c.get(i % 16, i / 256, (i / 16) % 16) == stone).count() as u32
        });
        (tick, n)
    }
}

#[test]
fn a_save_returns_while_it_crosses_and_is_reported_once_the_database_holds_it() {
    let (_pg, proxy, db, via) = setup("in_flight");
    let mut w = World::builder().saves_in_flight(4).open(&via).unwrap();
    // The first save of a chunk reads where it was (a round trip per level); later saves of
    // it read what the world wrote, from memory.
    save(&mut w, 1);
    w.settle_saves().unwrap();
    assert_eq!(w.landed_saves().unwrap(), [1]);
    proxy.set_delay(Duration::from_millis(50));
    // Four saves return without waiting for their 100 ms round trips.
    let start = Instant::now();
    for tick in 2..=5 {
        save(&mut w, tick);
    }
    let took = start.elapsed();
    assert!(w.saves_in_flight() > 0, "saves landed before the link could carry them");
    assert!(took < Duration::from_millis(400), "four saves waited on the network: {took:?}");
    // Nothing is reported before the database holds it.
    let reported = w.landed_saves().unwrap();
    let (held, _) = db.stored();
    assert!(reported.iter().all(|t| *t <= held), "{reported:?} reported, {held} held");
    w.settle_saves().unwrap();
    let mut all = reported;
    all.extend(w.landed_saves().unwrap());
    assert_eq!(all, [2, 3, 4, 5], "each save reported once, in order");
    assert_eq!(db.stored(), (5, 5));
    assert_eq!(w.saves_in_flight(), 0);
}

#[test]
fn during_a_cut_saves_are_held_not_reported_and_a_full_line_slows_the_saver() {
    let (_pg, proxy, db, via) = setup("cut");
    let mut w = World::builder().saves_in_flight(2).open(&via).unwrap();
    save(&mut w, 1);
    w.settle_saves().unwrap();
    assert_eq!(w.landed_saves().unwrap(), [1]);
    proxy.cut();
    save(&mut w, 2);
    save(&mut w, 3);
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(w.landed_saves().unwrap(), Vec::<u64>::new(), "a save reported across a cut");
    assert_eq!(db.stored(), (1, 1), "the database has only what was reported");
    // A third save waits for room: the line is full.
    std::thread::scope(|s| {
        let third = s.spawn(|| {
            save(&mut w, 4);
            w
        });
        std::thread::sleep(Duration::from_millis(300));
        assert!(!third.is_finished(), "a save went past a full line");
        proxy.heal();
        let mut w = third.join().unwrap();
        assert!(w.take_save_wait() >= Duration::from_millis(250));
        w.settle_saves().unwrap();
        assert_eq!(w.landed_saves().unwrap(), [2, 3, 4]);
    });
    assert_eq!(db.stored(), (4, 4));
}

#[test]
fn a_reset_mid_line_reports_only_what_the_database_holds_and_nothing_after_lands() {
    let (_pg, proxy, db, via) = setup("reset");
    let mut w = World::builder().saves_in_flight(4).open(&via).unwrap();
    proxy.set_delay(Duration::from_millis(20));
    let mut reported = Vec::new();
    let mut failed = None;
    for tick in 1..=40u64 {
        if tick == 20 {
            // A write held mid-flight by a cut, then every connection reset under it.
            proxy.cut();
            std::thread::sleep(Duration::from_millis(200));
            proxy.reset_open();
            proxy.heal();
        }
        let mut s = TickSave::new();
        s.put_chunk(0, ChunkPos::new(0, 0, 0), chunk(&w, tick as u32));
        if w.save_tick(tick, s).is_err() {
            break;
        }
        match w.landed_saves() {
            Ok(t) => reported.extend(t),
            Err(e) => {
                failed = Some(e);
                break;
            }
        }
    }
    if failed.is_none() {
        match w.settle_saves().and_then(|()| w.landed_saves()) {
            Ok(t) => reported.extend(t),
            Err(e) => failed = Some(e),
        }
    }
    let e = failed.expect("a reset of every connection mid-line fails a save");
    assert!(w.landed_saves().is_err(), "the line stays stopped: {e}");
    drop(w);
    let (held, stones) = db.stored();
    let last = *reported.last().unwrap_or(&0);
    // Every reported save is there; the failed one is whole or absent (the chunk always
    // matches the tick); nothing was written past it.
    assert!(held >= last, "{last} reported, {held} held: {e}");
    assert_eq!(stones, held as u32, "the chunk is the held tick's, whole");
    assert!(held <= last + 5, "more than the line held landed: {held} after {last}");
    assert_eq!(reported, (1..=last).collect::<Vec<_>>(), "reported in order, none twice");
}

/// Where the read-ahead test keeps a chest.
const CHEST: [i64; 3] = [48, 64, -30];

/// The chest's contents.
fn chest() -> terrane::game::ContainerRecord {
    terrane::game::ContainerRecord {
        items: vec![terrane::game::ItemSlot::new(3, "minecraft:diamond", 5)],
    }
}

/// Chunks (and records) read ahead on the world's own thread load afterwards without a round
/// trip: the tick that loads a player's next columns, or opens a chest, does not wait on the
/// network. Without saves in flight there is nothing to read into, and `read_ahead_chunks`
/// says so.
#[test]
fn chunks_read_ahead_load_without_a_round_trip() {
    let (_pg, proxy, _db, via) = setup("read_ahead");
    let stored: Vec<ChunkPos> = (0..24).map(|y| ChunkPos::new(3, y - 4, -2)).collect();
    {
        let mut w = World::builder().open(&via).unwrap();
        let mut s = TickSave::new();
        for (i, &pos) in stored.iter().enumerate() {
            s.put_chunk(0, pos, chunk(&w, i as u32 + 1));
        }
        terrane::game::put_container(&mut s, 0, CHEST, &chest());
        w.save_tick(1, s).unwrap();
        assert_eq!(w.read_ahead_chunks(&stored), None, "no saves in flight: nothing to read into");
        w.close().unwrap();
    }
    proxy.set_delay(Duration::from_millis(10));
    let mut w = World::builder().saves_in_flight(4).open(&via).unwrap();
    let mut positions = stored.clone();
    positions.extend((0..24).map(|y| ChunkPos::new(4, y - 4, -2))); // never saved
    let before = proxy.round_trips();
    let ticket = w.read_ahead_chunks(&positions).expect("a world with saves in flight reads ahead");
    let chests = terrane::game::read_ahead_containers(&w, 0, &[CHEST, [49, 64, -30]]).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !(w.is_read_ahead(ticket) && w.is_read_ahead(chests)) {
        assert!(Instant::now() < deadline, "the read ahead never finished");
        std::thread::sleep(Duration::from_millis(2));
    }
    let read = proxy.round_trips();
    assert!(read > before, "the read ahead read nothing");
    let started = Instant::now();
    let loaded = w.load_chunks(&positions).unwrap();
    assert_eq!(terrane::game::container(&w, 0, CHEST).unwrap(), Some(chest()));
    assert_eq!(terrane::game::container(&w, 0, [49, 64, -30]).unwrap(), None);
    assert_eq!(proxy.round_trips(), read, "the load went to the database again");
    assert!(
        started.elapsed() < Duration::from_millis(20),
        "the load waited {:?}",
        started.elapsed()
    );
    for (i, c) in loaded.iter().enumerate() {
        match stored.get(i) {
            Some(_) => assert_eq!(c.as_ref().unwrap().encode(w.schema()), chunk(&w, i as u32 + 1)),
            None => assert!(c.is_none(), "chunk {i} was never saved"),
        }
    }
}
