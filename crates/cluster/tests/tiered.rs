//! The tiered store against an in-memory model: random writes, reads, loads, player moves,
//! demotion passes and crashes (drop without flush, reopen on the same backend).

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::model::{Backend, builder, op, run_model};
use common::*;
use proptest::prelude::*;
use terrane_chunk::{Chunk, Schema};
use terrane_cluster::{ClusterView, Error, PlayerPos, Scale, TickSave, TieredStore};
use terrane_section::ChunkPos;
use terrane_section::keys::{self, Level};
use terrane_store::{MemStore, ReadView, Store, tables};

struct Mem(Arc<MemStore>);
impl Backend for Mem {
    fn open(&mut self) -> Box<dyn Store> {
        Box::new(self.0.clone())
    }
}

struct BlockFileBackend(tempfile::TempDir);
impl Backend for BlockFileBackend {
    fn open(&mut self) -> Box<dyn Store> {
        Box::new(
            terrane_blockfile::BlockFile::open(
                self.0.path().join("world.tbf"),
                &terrane_store::StoreConfig::new("terrane cluster model"),
            )
            .unwrap(),
        )
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn model_memstore(ops in prop::collection::vec(op(), 1..60)) {
        run_model(&mut Mem(Arc::new(MemStore::new())), &ops)?;
    }

    #[test]
    fn model_blockfile(ops in prop::collection::vec(op(), 1..60)) {
        run_model(&mut BlockFileBackend(tempfile::tempdir().unwrap()), &ops)?;
    }
}

/// PostgreSQL: a "crash" drops the store (its sessions end, its lock is released); every case
/// gets a schema of its own on one throwaway server.
struct PgBackend<'a> {
    conninfo: &'a str,
    schema: String,
}
impl Backend for PgBackend<'_> {
    fn open(&mut self) -> Box<dyn Store> {
        Box::new(
            terrane_postgres::PgStore::open_with(
                self.conninfo,
                &terrane_store::StoreConfig::new("terrane cluster model"),
                &terrane_postgres::PgOptions::new().schema(self.schema.clone()).pool_size(4),
            )
            .unwrap(),
        )
    }
}

#[test]
fn model_postgres() {
    use proptest::test_runner::{Config, TestRunner};
    let server = terrane_postgres::testing::PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let conninfo = server.conninfo();
    let mut runner = TestRunner::new(Config::with_cases(12));
    let case = std::sync::atomic::AtomicU32::new(0);
    runner
        .run(&prop::collection::vec(op(), 1..60), |ops| {
            let n = case.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            run_model(&mut PgBackend { conninfo: &conninfo, schema: format!("model_{n}") }, &ops)
        })
        .unwrap();
}

fn open_mem() -> TieredStore<Arc<MemStore>> {
    builder().open(Arc::new(MemStore::new())).unwrap()
}

#[test]
fn promotion_splits_the_cluster_path() {
    let s = schema();
    let mut t = open_mem();
    // 3 chunks of one L1 cell, one in another L1 cell of the same L2 cluster.
    let a = ChunkPos::new(0, 0, 0);
    let b = ChunkPos::new(1, 0, 0);
    let c = ChunkPos::new(3, 3, 3);
    let far = ChunkPos::new(8, 0, 0);
    for (i, p) in [a, b, c, far].into_iter().enumerate() {
        t.put_chunk(0, p, chunk_bytes(&s, i as u32 + 1), 0).unwrap();
    }
    t.maintain(10).unwrap();
    assert_eq!(t.verify().unwrap().chunks, [0, 4, 0]);
    assert_eq!(t.verify().unwrap().keys, [0, 2, 0]);
    t.maintain(100).unwrap();
    assert_eq!(t.verify().unwrap().chunks, [0, 0, 4]);
    assert_eq!(t.verify().unwrap().keys, [0, 0, 1]);
    // Reading from L2 does not promote.
    assert_eq!(t.get_chunk_at(0, b).unwrap(), Some((Level::L2, chunk_bytes(&s, 2))));
    // Loading `a`: it goes to L0, b and c to their L1 cluster, `far` stays in L2.
    assert_eq!(t.load_chunk(0, a, 101).unwrap(), Some(chunk_bytes(&s, 1)));
    assert_eq!(t.level_of(0, a).unwrap(), Some(Level::L0));
    assert_eq!(t.level_of(0, b).unwrap(), Some(Level::L1));
    assert_eq!(t.level_of(0, c).unwrap(), Some(Level::L1));
    assert_eq!(t.level_of(0, far).unwrap(), Some(Level::L2));
    assert_eq!(t.verify().unwrap().keys, [1, 1, 1]);
    // Loaded chunks never demote; the L1 cluster is fresh (y counts from the split).
    t.maintain(130).unwrap();
    assert_eq!(t.level_of(0, a).unwrap(), Some(Level::L0));
    assert_eq!(t.level_of(0, b).unwrap(), Some(Level::L1));
    t.unload_chunk(0, a, 131);
    t.maintain(140).unwrap();
    assert_eq!(t.level_of(0, a).unwrap(), Some(Level::L0));
    t.maintain(141).unwrap();
    assert_eq!(t.level_of(0, a).unwrap(), Some(Level::L1));
    // Deleting the last chunk of a cluster deletes the key.
    t.delete_chunk(0, far, 142).unwrap();
    assert_eq!(t.verify().unwrap().keys, [0, 1, 0]);
    assert!(
        t.store().get(tables::CHUNK_L2, &keys::chunk_key(0, far, Level::L2)).unwrap().is_none()
    );
}

#[test]
fn distance_rule_demotes_far_clusters_only() {
    let s = schema();
    let mut t = open_mem();
    let near = ChunkPos::new(0, 0, 0);
    let far = ChunkPos::new(100, 0, 0); // 1600 blocks away
    t.put_chunk(0, near, chunk_bytes(&s, 1), 0).unwrap();
    t.put_chunk(0, far, chunk_bytes(&s, 2), 0).unwrap();
    t.maintain(10).unwrap();
    assert_eq!(t.verify().unwrap().chunks, [0, 2, 0]);
    // No player check yet: only time counts (not idle long enough).
    t.maintain(11).unwrap();
    assert_eq!(t.verify().unwrap().chunks, [0, 2, 0]);
    t.set_players(&[PlayerPos::new(0, 8, 8, 8)]);
    t.maintain(12).unwrap();
    assert_eq!(t.level_of(0, near).unwrap(), Some(Level::L1));
    assert_eq!(t.level_of(0, far).unwrap(), Some(Level::L2));
    // A player in another dimension does not keep it warm.
    t.set_players(&[PlayerPos::new(1, 8, 8, 8)]);
    t.maintain(13).unwrap();
    assert_eq!(t.level_of(0, near).unwrap(), Some(Level::L2));
}

#[test]
fn saving_chunks_keeps_nothing_in_memory_per_chunk_and_they_still_age_from_the_save() {
    let s = schema();
    let mut t = open_mem();
    // An import's shape: many columns saved, none loaded.
    for x in 0..40 {
        let mut save = TickSave::new();
        for y in 0..6 {
            save.put_chunk(0, ChunkPos::new(x, y, 0), chunk_bytes(&s, (x * 6 + y) as u32));
        }
        t.save_tick(1_000, &save).unwrap();
    }
    assert!(format!("{t:?}").contains("unloaded: 0"), "{t:?}");
    // A chunk a player loaded and left is remembered until it moves.
    t.load_chunk(0, ChunkPos::new(0, 0, 0), 1_000).unwrap();
    t.unload_chunk(0, ChunkPos::new(0, 0, 0), 1_200);
    assert!(format!("{t:?}").contains("unloaded: 1"), "{t:?}");
    // The saved chunks age from the save's tick (their version), the unloaded one from its
    // unload: x ticks after the save, all but that one leave L0.
    let x = t.config().l0_idle_ticks;
    t.maintain(1_000 + x - 1).unwrap();
    assert_eq!(t.verify().unwrap().chunks, [240, 0, 0]);
    t.maintain(1_000 + x).unwrap();
    assert_eq!(t.verify().unwrap().chunks, [1, 239, 0]);
    t.maintain(1_200 + x).unwrap();
    assert_eq!(t.verify().unwrap().chunks[0], 0);
    assert!(format!("{t:?}").contains("unloaded: 0"), "{t:?}");
}

#[test]
fn access_times_survive_restart() {
    let s = schema();
    let store = Arc::new(MemStore::new());
    let mut t = builder().open(store.clone()).unwrap();
    t.put_chunk(0, ChunkPos::new(0, 0, 0), chunk_bytes(&s, 1), 1000).unwrap();
    drop(t);
    let mut t = builder().open(store.clone()).unwrap();
    assert_eq!(t.tick(), 1000);
    // Written at 1000: not idle at 1005 even though the restart lost the in-memory state.
    t.maintain(1005).unwrap();
    assert_eq!(t.level_of(0, ChunkPos::new(0, 0, 0)).unwrap(), Some(Level::L0));
    t.maintain(1010).unwrap();
    assert_eq!(t.level_of(0, ChunkPos::new(0, 0, 0)).unwrap(), Some(Level::L1));
    let o = store
        .get(tables::CHUNK_L1, &keys::chunk_key(0, ChunkPos::new(0, 0, 0), Level::L1))
        .unwrap()
        .unwrap();
    assert_eq!(o.version, 1000);
    assert!(ClusterView::with_scale(&o.data, Scale::Cube4).is_ok());
}

#[test]
fn tick_save_is_one_batch_with_entities_and_players() {
    let s = schema();
    let store = Arc::new(MemStore::new());
    let mut t = builder().open(store.clone()).unwrap();
    let pig = [7u8; 16];
    let mut c = chunk(5);
    c.add_entity(pig);
    let mut save = TickSave::new();
    save.put_chunk(0, ChunkPos::new(0, 4, 0), c.encode(&s))
        .put_entity(pig, b"pig nbt".to_vec())
        .put_object(tables::WORLD_PROPERTIES, b"player:alice".to_vec(), b"inventory".to_vec());
    t.save_tick(50, &save).unwrap();
    assert_eq!(t.get_entity(&pig).unwrap().as_deref(), Some(b"pig nbt".as_slice()));
    assert_eq!(
        store.get(tables::WORLD_PROPERTIES, b"player:alice").unwrap().unwrap().data,
        b"inventory"
    );
    assert_eq!(t.get_chunk_decoded(0, ChunkPos::new(0, 4, 0)).unwrap(), Some(c.clone()));

    // A chunk listing an entity nobody saved is refused, and nothing is written.
    let mut c2 = chunk(6);
    c2.add_entity([9u8; 16]);
    let mut bad = TickSave::new();
    bad.put_chunk(0, ChunkPos::new(1, 0, 0), c2.encode(&s)).put_object(
        tables::WORLD_PROPERTIES,
        b"player:bob".to_vec(),
        b"dupe".to_vec(),
    );
    assert!(
        matches!(t.save_tick(51, &bad), Err(Error::DanglingEntity { uuid, dim: 0, .. }) if uuid == [9; 16])
    );
    assert!(store.get(tables::WORLD_PROPERTIES, b"player:bob").unwrap().is_none());
    assert_eq!(t.get_chunk(0, ChunkPos::new(1, 0, 0)).unwrap(), None);

    // Reserved tables and malformed chunk bytes are refused.
    let mut bad = TickSave::new();
    bad.put_object(tables::CHUNK_L0, vec![0; 32], b"x".to_vec());
    assert!(matches!(t.save_tick(52, &bad), Err(Error::ReservedTable(_))));
    let mut bad = TickSave::new();
    bad.put_chunk(0, ChunkPos::new(2, 0, 0), b"not a chunk".to_vec());
    assert!(matches!(t.save_tick(52, &bad), Err(Error::Chunk(_))));
    let mut unknown = Chunk::new(AIR);
    unknown.set(0, 0, 0, terrane_chunk::BlockId(99));
    let mut bad = TickSave::new();
    bad.put_chunk(0, ChunkPos::new(2, 0, 0), unknown.encode(&s));
    assert!(matches!(t.save_tick(52, &bad), Err(Error::UnknownBlock(99))));
}

#[test]
fn schema_checked_on_open() {
    let store = Arc::new(MemStore::new());
    drop(TieredStore::open(store.clone(), schema()).unwrap());
    // A grown schema is accepted and stored.
    let mut grown = schema();
    grown.add_block("minecraft:gold_block", &[]).unwrap();
    drop(TieredStore::open(store.clone(), grown.clone()).unwrap());
    // The old one no longer extends the stored one.
    assert!(matches!(TieredStore::open(store.clone(), schema()), Err(Error::Chunk(_))));
    // A reordered one never does.
    let mut other = Schema::new();
    for name in ["minecraft:stone", "minecraft:air"] {
        other.add_block(name, &[]).unwrap();
    }
    assert!(matches!(TieredStore::open(store.clone(), other), Err(Error::Chunk(_))));
    assert!(TieredStore::open(store, grown).is_ok());
}

#[test]
fn opacity_map_follows_saves() {
    let s = schema();
    let mut t = open_mem();
    // Stone up to local y 9 at column (3, 5) of chunk (0, 2, 0): block y 32 + 9 = 41.
    let mut c = Chunk::new(AIR);
    for y in 0..10 {
        c.set(3, y, 5, STONE);
    }
    c.set(4, 4, 4, terrane_cluster_glass());
    t.put_chunk(0, ChunkPos::new(0, 2, 0), c.encode(&s), 1).unwrap();
    assert_eq!(t.opacity_at(0, 3, 5).unwrap(), Some(41));
    assert_eq!(t.opacity_at(0, 4, 4).unwrap(), Some(36)); // glass is opaque by default
    assert_eq!(t.opacity_at(0, 0, 0).unwrap(), None);
    // A chunk below does not change the top.
    let mut below = Chunk::new(AIR);
    below.set(3, 0, 5, DIRT);
    t.put_chunk(0, ChunkPos::new(0, 0, 0), below.encode(&s), 2).unwrap();
    assert_eq!(t.opacity_at(0, 3, 5).unwrap(), Some(41));
    // Clearing the top chunk falls back to the chunk below (y 0).
    t.put_chunk(0, ChunkPos::new(0, 2, 0), Chunk::new(AIR).encode(&s), 3).unwrap();
    assert_eq!(t.opacity_at(0, 3, 5).unwrap(), Some(0));
    assert_eq!(t.opacity_at(0, 4, 4).unwrap(), None);
    // Deleting it too leaves no opaque block; the empty tile is deleted.
    t.delete_chunk(0, ChunkPos::new(0, 0, 0), 4).unwrap();
    assert_eq!(t.opacity_at(0, 3, 5).unwrap(), None);
    assert_eq!(t.opacity_tile(0, 0, 0).unwrap(), None);
    // Negative coordinates land in their own tile.
    let mut neg = Chunk::new(AIR);
    neg.set(15, 15, 15, STONE);
    t.put_chunk(0, ChunkPos::new(-1, -1, -1), neg.encode(&s), 5).unwrap();
    assert_eq!(t.opacity_at(0, -1, -1).unwrap(), Some(-1));
    assert!(t.opacity_tile(0, -1, -1).unwrap().is_some());
}

fn terrane_cluster_glass() -> terrane_chunk::BlockId {
    GLASS
}

#[test]
fn air_chunk_is_present_not_absent() {
    let s = schema();
    let mut t = open_mem();
    let air = Chunk::new(AIR).encode(&s);
    assert_eq!(air.len(), 56);
    t.put_chunk(0, ChunkPos::new(0, 0, 0), air.clone(), 0).unwrap();
    t.maintain(100).unwrap();
    t.maintain(200).unwrap();
    assert_eq!(t.get_chunk_at(0, ChunkPos::new(0, 0, 0)).unwrap(), Some((Level::L2, air)));
    assert_eq!(t.get_chunk(0, ChunkPos::new(0, 0, 1)).unwrap(), None);
}

/// A failed write (injected at every possible point of a scenario) changes nothing: the
/// tiers stay consistent and hold the contents of the operations that succeeded.
#[test]
fn failed_writes_change_nothing() {
    use terrane_store::{FaultPlan, FaultyStore};
    let s = schema();
    let ps: Vec<ChunkPos> = [(0, 0, 0), (1, 0, 0), (5, 0, 0), (17, 1, 0), (-1, 0, -1)]
        .into_iter()
        .map(|(x, y, z)| ChunkPos::new(x, y, z))
        .collect();
    let scenario = |t: &mut TieredStore<FaultyStore<MemStore>>,
                    model: &mut BTreeMap<ChunkPos, Vec<u8>>|
     -> usize {
        let mut failures = 0;
        let mut tick = 0;
        for round in 0..3u32 {
            for (k, p) in ps.iter().enumerate() {
                tick += 1;
                let b = chunk_bytes(&s, round * 10 + k as u32);
                match t.put_chunk(0, *p, b.clone(), tick) {
                    Ok(()) => {
                        model.insert(*p, b);
                    }
                    Err(Error::Store(terrane_store::Error::Injected(_))) => failures += 1,
                    Err(e) => panic!("{e}"),
                }
            }
            tick += 100;
            if t.maintain(tick).is_err() {
                failures += 1;
            }
            tick += 100;
            if t.maintain(tick).is_err() {
                failures += 1;
            }
            match t.load_chunk(0, ps[round as usize], tick) {
                Ok(got) => assert_eq!(got.as_ref(), model.get(&ps[round as usize])),
                Err(_) => failures += 1,
            }
            if round == 1 {
                match t.delete_chunk(0, ps[4], tick) {
                    Ok(()) => {
                        model.remove(&ps[4]);
                    }
                    Err(_) => failures += 1,
                }
            }
            t.verify().unwrap();
            let all: BTreeMap<_, _> =
                t.all_chunks().unwrap().into_iter().map(|((_, p), (_, b))| (p, b)).collect();
            assert_eq!(&all, model);
        }
        failures
    };
    // Count the writes of a fault-free run, then fail each of them in turn.
    let mut t = builder().open(FaultyStore::new(MemStore::new(), FaultPlan::default())).unwrap();
    let mut model = BTreeMap::new();
    assert_eq!(scenario(&mut t, &mut model), 0);
    let writes = t.store().writes();
    assert!(writes > 20);
    for n in 2..=writes {
        // Write 1 is the schema at open.
        let mut t =
            builder().open(FaultyStore::new(MemStore::new(), FaultPlan::nth_write(n))).unwrap();
        let mut model = BTreeMap::new();
        assert_eq!(scenario(&mut t, &mut model), 1, "fault at write {n}");
    }
}

/// A fenced store (`set_fence`): its tick saves and tier moves apply while the fence holds, and
/// once the lease object moves on (another server took the area over) every batch is refused
/// whole, with the store's typed error.
#[test]
fn fenced_saves_and_moves_are_refused_whole_after_a_takeover() {
    let store = Arc::new(MemStore::new());
    store.put(tables::WORLD_META, b"lease:area", 1, b"mine").unwrap();
    let mut t = builder().open(Arc::clone(&store)).unwrap();
    let mut fence = terrane_store::Batch::new();
    fence.expect(tables::WORLD_META, b"lease:area".to_vec(), Some(1));
    t.set_fence(fence.preconditions().to_vec());
    let schema = schema();
    let p = ChunkPos::new(1, 2, 3);
    let mut save = TickSave::new();
    save.put_chunk(0, p, chunk_bytes(&schema, 1));
    t.save_tick(1, &save).unwrap();
    // Another server takes the area over: the lease object's version moves on.
    store.put(tables::WORLD_META, b"lease:area", 2, b"theirs").unwrap();
    let before = terrane_store::conformance::collect(
        &*store,
        tables::CHUNK_L0,
        terrane_store::KeyRange::all(),
    );
    let mut late = TickSave::new();
    late.put_chunk(0, p, chunk_bytes(&schema, 2)).put_chunk(
        0,
        ChunkPos::new(9, 9, 9),
        chunk_bytes(&schema, 3),
    );
    let err = t.save_tick(2, &late).unwrap_err();
    assert!(err.to_string().contains("precondition failed"), "{err}");
    t.unload_chunk(0, p, 2);
    assert!(t.maintain(5000).is_err(), "a tier move after the takeover must be refused");
    let after = terrane_store::conformance::collect(
        &*store,
        tables::CHUNK_L0,
        terrane_store::KeyRange::all(),
    );
    assert_eq!(before, after, "a refused batch wrote");
    assert_eq!(t.get_chunk(0, p).unwrap(), Some(chunk_bytes(&schema, 1)));
}

/// A tick save reads the L0 objects of its chunks in one `multi_get` (one round trip on a
/// networked store), not one `get` per chunk. (The opacity search below chunks without an
/// opaque block reads other chunks; it is turned off here to count the save's own reads.)
#[test]
fn a_tick_save_reads_its_chunks_ahead_in_one_multi_get() {
    use std::sync::atomic::Ordering;
    let store = Arc::new(SpyStore::new(Arc::new(MemStore::new())));
    let mut t = builder().opacity_search_chunks(0).open(Arc::clone(&store)).unwrap();
    let schema = schema();
    let save = |seed: u32| {
        let mut s = TickSave::new();
        for i in 0..64 {
            s.put_chunk(0, ChunkPos::new(i % 8, 0, i / 8), chunk_bytes(&schema, seed));
        }
        s
    };
    t.save_tick(1, &save(1)).unwrap();
    store.gets.store(0, Ordering::SeqCst);
    store.multi_gets.store(0, Ordering::SeqCst);
    t.save_tick(2, &save(2)).unwrap();
    assert_eq!(store.multi_gets.load(Ordering::SeqCst), 1);
    assert_eq!(store.gets.load(Ordering::SeqCst), 0, "no chunk read one by one");
    assert_eq!(t.get_chunk(0, ChunkPos::new(7, 0, 7)).unwrap(), Some(chunk_bytes(&schema, 2)));
}

/// Loading many chunks (a view of columns) reads each level once, with one `multi_get`, and
/// promotes them all in one batch: a few round trips on a networked store, whatever their
/// number. Chunks L0 holds need one read; chunks in clusters three (L0, L1, L2) and a write.
#[test]
fn loading_many_chunks_reads_each_level_in_one_multi_get() {
    use std::sync::atomic::Ordering;
    let store = Arc::new(SpyStore::new(Arc::new(MemStore::new())));
    let mut t = builder().opacity_search_chunks(0).open(Arc::clone(&store)).unwrap();
    let schema = schema();
    // Four columns of 24 chunks, each chunk its own contents.
    let positions: Vec<ChunkPos> =
        (0..4).flat_map(|c| (-4..20).map(move |y| ChunkPos::new(c * 5, y, -c))).collect();
    let mut save = TickSave::new();
    for (i, p) in positions.iter().enumerate() {
        save.put_chunk(0, *p, chunk_bytes(&schema, i as u32));
    }
    t.save_tick(1, &save).unwrap();
    let want: Vec<Option<Vec<u8>>> =
        (0..positions.len()).map(|i| Some(chunk_bytes(&schema, i as u32))).collect();
    let count = |store: &SpyStore| {
        (
            store.gets.swap(0, Ordering::SeqCst),
            store.multi_gets.swap(0, Ordering::SeqCst),
            store.cluster_reads.swap(0, Ordering::SeqCst),
            store.writes.swap(0, Ordering::SeqCst),
        )
    };
    // Hot: one multi_get.
    count(&store);
    assert_eq!(t.load_chunks(0, &positions, 2).unwrap(), want);
    assert_eq!(count(&store), (0, 1, 0, 0), "(gets, multi_gets, cluster reads, writes): hot");
    // Cold: demoted to L2, then loaded back: one multi_get per level, one write.
    for p in &positions {
        t.unload_chunk(0, *p, 3);
    }
    t.set_players(&[]);
    t.maintain(1_000).unwrap();
    assert_eq!(t.verify().unwrap().chunks[0], 0, "every chunk left L0");
    count(&store);
    let mut asked = positions.clone();
    asked.push(ChunkPos::new(100, 0, 100)); // never written
    let mut want_absent = want.clone();
    want_absent.push(None);
    assert_eq!(t.load_chunks(0, &asked, 1_001).unwrap(), want_absent);
    assert_eq!(count(&store), (0, 1, 2, 1), "(gets, multi_gets, cluster reads, writes): cold");
    for p in &positions {
        assert_eq!(t.level_of(0, *p).unwrap(), Some(Level::L0));
        assert!(t.is_loaded(0, *p));
    }
    assert_eq!(t.verify().unwrap().chunks, [positions.len(), 0, 0]);
}

/// A save of chunks the store does not hold yet (generated columns) reads each level once:
/// L0, then the L1 and L2 clusters, in one `multi_get` each, never one read per chunk.
#[test]
fn a_save_of_new_columns_reads_each_level_in_one_multi_get() {
    use std::sync::atomic::Ordering;
    let store = Arc::new(SpyStore::new(Arc::new(MemStore::new())));
    let mut t = builder().open(Arc::clone(&store)).unwrap();
    store.writes.store(0, Ordering::SeqCst); // the open's own
    let schema = schema();
    let mut save = TickSave::new();
    for c in 0..4 {
        for y in -4..20 {
            save.put_chunk(
                0,
                ChunkPos::new(c * 3, y, c),
                chunk_bytes(&schema, (c * 100 + y) as u32),
            );
        }
    }
    t.save_tick(1, &save).unwrap();
    let counts = (
        store.gets.load(Ordering::SeqCst),
        store.multi_gets.load(Ordering::SeqCst),
        store.cluster_reads.load(Ordering::SeqCst),
        store.writes.load(Ordering::SeqCst),
    );
    assert_eq!(counts, (0, 1, 2, 1), "(gets, multi_gets, cluster reads, writes)");
    assert_eq!(t.verify().unwrap().chunks, [96, 0, 0]);
}
