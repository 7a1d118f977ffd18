//! Rewriting chunks in place: every level, several pages, versions and levels kept, refused
//! rewrites leave their page untouched, and a key changed meanwhile fails its batch.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;

use common::model::builder;
use common::*;
use terrane_chunk::{BlockId, Chunk, ChunkView, Schema};
use terrane_cluster::{ChunkAddr, Error, Level, TieredStore};
use terrane_section::ChunkPos;
use terrane_store::{KeyRange, MemStore, ReadView, Store, tables};

/// 300 chunks at L2, 100 at L1, 100 at L0 (two pages of L0 keys): `(seed, level)` by
/// address.
fn filled<S: Store>(t: &mut TieredStore<S>) -> BTreeMap<ChunkAddr, (u32, Level)> {
    let s = schema();
    let mut want = BTreeMap::new();
    let mut seed = 0;
    let mut put = |t: &mut TieredStore<S>, x: i64, y: i64, z: i64, tick: u64| {
        seed += 1;
        t.put_chunk(0, ChunkPos::new(x, y, z), chunk_bytes(&s, seed), tick).unwrap();
        seed
    };
    let mut cold = Vec::new();
    for i in 0..300 {
        cold.push(((0, ChunkPos::new(i % 20, i / 20, 0)), put(t, i % 20, i / 20, 0, 0)));
    }
    t.maintain(10).unwrap();
    t.maintain(100).unwrap();
    let mut warm = Vec::new();
    for i in 0..100 {
        warm.push(((0, ChunkPos::new(i % 10, 40, i / 10)), put(t, i % 10, 40, i / 10, 100)));
    }
    t.maintain(110).unwrap();
    let mut hot = Vec::new();
    for i in 0..100 {
        hot.push(((0, ChunkPos::new(-1 - i, -5, 3)), put(t, -1 - i, -5, 3, 111)));
    }
    for (list, level) in [(cold, Level::L2), (warm, Level::L1), (hot, Level::L0)] {
        for (addr, seed) in list {
            want.insert(addr, (seed, level));
        }
    }
    assert_eq!(t.verify().unwrap().chunks, [100, 100, 300]);
    want
}

/// Every key of the chunk tables with its version.
fn versions(store: &dyn Store) -> BTreeMap<(&'static str, Vec<u8>), i64> {
    let mut out = BTreeMap::new();
    for table in [tables::CHUNK_L0, tables::CHUNK_L1, tables::CHUNK_L2] {
        for e in store.scan(table, KeyRange::all()).unwrap() {
            let (k, o) = e.unwrap();
            out.insert((table, k), o.version);
        }
    }
    out
}

/// `bytes` with every `from` block made `to`, `None` when it holds no `from`.
fn replaced(schema: &Schema, bytes: &[u8], from: BlockId, to: BlockId) -> Option<Vec<u8>> {
    if !ChunkView::parse(bytes).unwrap().palette_iter().any(|b| b == from) {
        return None;
    }
    let mut c = Chunk::decode(bytes, schema).unwrap();
    for i in 0..4096 {
        if c.get_index(i) == from {
            c.set_index(i, to);
        }
    }
    Some(c.encode(schema))
}

#[test]
fn chunks_are_rewritten_where_they_are() {
    let s = schema();
    let store = Arc::new(MemStore::new());
    let mut t = builder().open(Arc::clone(&store)).unwrap();
    let want = filled(&mut t);
    let before = versions(&*store);

    let mut seen = Vec::new();
    t.for_each_chunk(|addr, level, _| -> terrane_cluster::Result<()> {
        seen.push((addr, level));
        Ok(())
    })
    .unwrap();
    seen.sort();
    assert_eq!(seen, want.iter().map(|(a, (_, l))| (*a, *l)).collect::<Vec<_>>());
    // The caller's first error (of its own type) stops the walk and comes back as it was.
    #[derive(Debug)]
    enum Stop {
        Third,
        Store,
    }
    impl From<terrane_cluster::Error> for Stop {
        fn from(_: terrane_cluster::Error) -> Self {
            Stop::Store
        }
    }
    let mut shown = 0;
    let stopped = t.for_each_chunk(|_, _, _| {
        shown += 1;
        if shown == 3 { Err(Stop::Third) } else { Ok(()) }
    });
    assert!(matches!(stopped, Err(Stop::Third)), "{stopped:?}");
    assert_eq!(shown, 3);

    // Dirt (in every chunk) becomes glass: both opaque.
    let report = t.rewrite_chunks(|_, bytes| Ok(replaced(&s, bytes, DIRT, GLASS))).unwrap();
    assert_eq!(report.seen, [100, 100, 300]);
    assert_eq!(report.rewritten, [100, 100, 300]);
    assert_eq!(report.keys, before.len());
    assert!(report.batches >= 3, "{report:?}");
    assert_eq!(versions(&*store), before, "same keys, same versions");
    for ((dim, pos), (seed, level)) in &want {
        let mut c = chunk(*seed);
        for i in 0..4096 {
            if c.get_index(i) == DIRT {
                c.set_index(i, GLASS);
            }
        }
        assert_eq!(t.get_chunk_at(*dim, *pos).unwrap(), Some((*level, c.encode(&s))), "{pos:?}");
    }
    t.verify().unwrap();

    // Run again: nothing left to change, nothing written.
    let again = t.rewrite_chunks(|_, bytes| Ok(replaced(&s, bytes, DIRT, GLASS))).unwrap();
    assert_eq!((again.rewritten, again.keys, again.batches), ([0; 3], 0, 0));
}

#[test]
fn a_rewrite_that_changes_opacity_is_refused_before_its_page_is_written() {
    let s = schema();
    let store = Arc::new(MemStore::new());
    let mut t = builder().open(Arc::clone(&store)).unwrap();
    let want = filled(&mut t);
    let all = t.all_chunks().unwrap();
    // Stone becomes air in the hot chunks: their columns' highest opaque block moves.
    let err = t
        .rewrite_chunks(|(_, pos), bytes| {
            Ok(if pos.y == -5 { replaced(&s, bytes, STONE, AIR) } else { None })
        })
        .unwrap_err();
    assert!(matches!(&err, Error::Inconsistent(m) if m.contains("opaque")), "{err}");
    assert_eq!(t.all_chunks().unwrap(), all, "nothing written");
    assert_eq!(want.len(), all.len());
}

#[test]
fn a_key_changed_meanwhile_fails_its_batch() {
    let s = schema();
    let mem = Arc::new(MemStore::new());
    let spy = Arc::new(SpyStore::new(Arc::clone(&mem)));
    let mut t = builder().open(Arc::clone(&spy)).unwrap();
    filled(&mut t);
    let before = t.all_chunks().unwrap();
    // Just before the first rewrite batch, another writer bumps the first L0 key's version.
    let first = mem.scan(tables::CHUNK_L0, KeyRange::all()).unwrap().next().unwrap().unwrap();
    let (key, obj) = first;
    let other = Arc::clone(&mem);
    *spy.before_first_write.lock().unwrap() = Some(Box::new(move || {
        let mut b = terrane_store::Batch::new();
        b.put(tables::CHUNK_L0, key, obj.version + 1, obj.data);
        other.write(&b).unwrap();
    }));
    let err = t.rewrite_chunks(|_, bytes| Ok(replaced(&s, bytes, DIRT, GLASS))).unwrap_err();
    assert!(matches!(err, Error::Store(terrane_store::Error::PreconditionFailed { .. })), "{err}");
    assert_eq!(t.all_chunks().unwrap(), before, "the page was not applied");
}
