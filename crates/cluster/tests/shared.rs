//! The tiered store in a world shared by several servers: writes limited to the areas a
//! server owns (`set_areas`), area-keyed entities and their hand-offs, per-server game ticks.

mod common;

use std::collections::BTreeSet;
use std::sync::Arc;

use common::*;
use terrane_cluster::{Error, TickSave, TieredStore, TieredStoreBuilder, tick_key, world_tick};
use terrane_section::keys::{self, Level};
use terrane_section::{AreaId, ChunkPos};
use terrane_store::{Batch, MemStore, ReadView, Store, tables};

fn builder(server: &str) -> TieredStoreBuilder {
    TieredStore::builder(schema()).l0_idle_ticks(10).sync_saves(false).server(server)
}

fn areas(a: &[AreaId]) -> Option<BTreeSet<AreaId>> {
    Some(a.iter().copied().collect())
}

/// Chunks and entities outside the areas set are refused before anything is written; loads
/// too; maintenance leaves other areas' chunks where they are.
#[test]
fn writes_stay_inside_the_areas_owned() {
    let store = Arc::new(MemStore::new());
    let schema = schema();
    let (mine, theirs) = (AreaId::new(0, 0), AreaId::new(1, 0));
    let p_mine = ChunkPos::new(3, 0, 3);
    let p_theirs = ChunkPos::new(16 + 3, 0, 3);
    assert_eq!(AreaId::of_chunk(p_theirs), theirs);
    // Their chunk, written by their server, unloaded long ago.
    let mut b = builder("b").open(Arc::clone(&store)).unwrap();
    b.set_areas(areas(&[theirs]));
    b.put_chunk(0, p_theirs, chunk_bytes(&schema, 7), 1).unwrap();
    let mut a = builder("a").open(Arc::clone(&store)).unwrap();
    a.set_areas(areas(&[mine]));
    let mut save = TickSave::new();
    save.put_chunk(0, p_mine, chunk_bytes(&schema, 1)).put_chunk(
        0,
        p_theirs,
        chunk_bytes(&schema, 2),
    );
    assert!(matches!(a.save_tick(5, &save), Err(Error::OutOfScope { area }) if area == theirs));
    assert_eq!(a.get_chunk(0, p_mine).unwrap(), None, "a refused save wrote");
    let mut stray = TickSave::new();
    stray.put_area_entity(theirs, [1; 16], b"x".to_vec());
    assert!(matches!(a.save_tick(5, &stray), Err(Error::OutOfScope { .. })));
    assert!(matches!(a.load_chunk(0, p_theirs, 5), Err(Error::OutOfScope { .. })));
    // Maintenance by `a` does not demote `b`'s idle chunk; `b`'s own does.
    let mut ok = TickSave::new();
    ok.put_chunk(0, p_mine, chunk_bytes(&schema, 1));
    a.save_tick(6, &ok).unwrap();
    a.maintain(1000).unwrap();
    assert_eq!(a.level_of(0, p_theirs).unwrap(), Some(Level::L0));
    assert_eq!(a.level_of(0, p_mine).unwrap(), Some(Level::L1));
    b.maintain(1000).unwrap();
    assert_eq!(b.level_of(0, p_theirs).unwrap(), Some(Level::L1));
    // `None`: every area again.
    a.set_areas(None);
    a.save_tick(7, &save).unwrap();
}

/// An entity handed off leaves its area and arrives in the other in one batch, fenced by the
/// extra precondition; a refused hand-off moves nothing.
#[test]
fn hand_offs_move_an_entity_between_areas_in_one_batch() {
    let store = Arc::new(MemStore::new());
    let (from, to) = (AreaId::new(0, 0), AreaId::new(-1, 0));
    let mut a = builder("a").open(Arc::clone(&store)).unwrap();
    a.set_areas(areas(&[from]));
    let uuid = [9; 16];
    let mut s = TickSave::new();
    s.put_area_entity(from, uuid, b"walker v1".to_vec());
    a.save_tick(1, &s).unwrap();
    assert_eq!(a.area_entities(from).unwrap(), vec![(uuid, b"walker v1".to_vec())]);
    // Fenced on the target's lease (absent here): refused once the lease exists.
    store.put(tables::WORLD_META, b"lease:to", 1, b"b").unwrap();
    let mut h = TickSave::new();
    h.hand_off_entity(uuid, from, to, b"walker v2".to_vec()).expect(terrane_store::Precondition {
        table: tables::WORLD_META.into(),
        key: b"lease:to".to_vec(),
        version: None,
    });
    let err = a.save_tick(2, &h).unwrap_err();
    assert!(err.to_string().contains("precondition failed"), "{err}");
    assert_eq!(a.area_entities(to).unwrap(), vec![]);
    assert_eq!(a.get_area_entity(from, &uuid).unwrap(), Some(b"walker v1".to_vec()));
    // At the right epoch: moved, exactly once.
    let mut h = TickSave::new();
    h.hand_off_entity(uuid, from, to, b"walker v2".to_vec()).expect(terrane_store::Precondition {
        table: tables::WORLD_META.into(),
        key: b"lease:to".to_vec(),
        version: Some(1),
    });
    a.save_tick(3, &h).unwrap();
    assert_eq!(a.area_entities(from).unwrap(), vec![]);
    assert_eq!(a.area_entities(to).unwrap(), vec![(uuid, b"walker v2".to_vec())]);
    let all: Vec<_> = store.scan(tables::ENTITY, terrane_store::KeyRange::all()).unwrap().collect();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].as_ref().unwrap().0, keys::area_entity_key(to, &uuid).to_vec());
    // Writing the arrival as an ordinary entity of `to` is still refused: not a's area.
    let mut w = TickSave::new();
    w.put_area_entity(to, uuid, b"v3".to_vec());
    assert!(matches!(a.save_tick(4, &w), Err(Error::OutOfScope { .. })));
}

/// Each server keeps its own game tick; the world's is the largest, the old single-server key
/// included; `append` puts raw operations in the same batch.
#[test]
fn per_server_ticks_and_appended_operations() {
    let store = Arc::new(MemStore::new());
    store.put(tables::WORLD_META, b"gameTick", 0, &40u64.to_le_bytes()).unwrap();
    let mut a = builder("a").open(Arc::clone(&store)).unwrap();
    assert_eq!(a.tick(), 40, "a new server starts at the world's tick");
    let mut extra = Batch::new();
    extra.put(tables::WORLD_META, b"lease:x".to_vec(), 3, b"released".to_vec());
    let mut s = TickSave::new();
    s.append(&extra);
    a.save_tick(55, &s).unwrap();
    let mut b = builder("b").open(Arc::clone(&store)).unwrap();
    b.save_tick(50, &TickSave::new()).unwrap();
    assert_eq!(world_tick(&*store).unwrap(), 55);
    let t = |k: &str| store.get(tables::WORLD_META, k.as_bytes()).unwrap().unwrap().data;
    assert_eq!(t(&tick_key(Some("a"))), 55u64.to_le_bytes());
    assert_eq!(t(&tick_key(Some("b"))), 50u64.to_le_bytes());
    assert_eq!(t("gameTick"), 40u64.to_le_bytes(), "the single-server key is left alone");
    assert_eq!(t("lease:x"), b"released");
    // A damaged tick is a typed error, not a panic.
    store.put(tables::WORLD_META, b"gameTick/c", 0, b"short").unwrap();
    assert!(matches!(world_tick(&*store), Err(Error::CorruptMeta(_))));
}

/// Two servers extending the registries from the same stored schema at once: the one whose
/// write lands second loses its compare-and-set and its open fails, instead of overwriting
/// the first's registry ids.
#[test]
fn concurrent_schema_extensions_cannot_both_win() {
    let store = Arc::new(MemStore::new());
    drop(builder("a").open(Arc::clone(&store)).unwrap());
    let mut one = schema();
    one.add_block("test:one", &[]).unwrap();
    let mut two = schema();
    two.add_block("test:two", &[]).unwrap();
    // `b` reads the stored schema; `a`'s extension lands before `b`'s write.
    let a_store = Arc::clone(&store);
    let b_store = SpyStore::new(Arc::clone(&store));
    *b_store.before_first_write.lock().unwrap() = Some(Box::new(move || {
        TieredStore::builder(one).server("a").open(a_store).unwrap();
    }));
    let err = TieredStore::builder(two.clone()).server("b").open(b_store).unwrap_err();
    assert!(err.to_string().contains("precondition failed"), "{err}");
    let stored = store.get(tables::WORLD_META, b"blocks").unwrap().unwrap();
    let mut expected = schema();
    expected.add_block("test:one", &[]).unwrap();
    assert_eq!(stored.data, expected.encode().blocks, "a's extension was overwritten");
    // Reopening with its own extension now fails the schema check: it must extend a's.
    assert!(TieredStore::builder(two).server("b").open(Arc::clone(&store)).is_err());
}
