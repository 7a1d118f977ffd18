//! The tiered store against an in-memory model: the operations, and the run that checks a
//! backend against the model after each one (used by `tests/tiered.rs` and, for RocksDB, by
//! the terrane-benches package, so that this crate's tests do not compile RocksDB).

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use terrane_cluster::{PlayerPos, TieredStore, TieredStoreBuilder};
use terrane_section::ChunkPos;
use terrane_section::keys::Level;
use terrane_store::Store;

use super::{chunk_bytes, schema};

pub fn builder() -> TieredStoreBuilder {
    TieredStore::builder(schema())
        .l0_idle_ticks(10)
        .l1_idle_ticks(40)
        .l1_distance_blocks(300)
        .sync_saves(false)
}

#[derive(Clone, Debug)]
pub enum Op {
    Write(u64, ChunkPos, u32),
    Delete(u64, ChunkPos),
    Read(u64, ChunkPos),
    Load(u64, ChunkPos),
    /// Several chunks of one dimension loaded together (`load_chunks`).
    LoadMany(u64, Vec<ChunkPos>),
    Unload(u64, ChunkPos),
    Players(Vec<PlayerPos>),
    Maintain,
    Advance(u64),
    Crash,
}

/// A small pool of positions, so that operations meet: neighbours in one L1 cell, other L1
/// cells of the same L2 cluster, other L2 clusters, negative coordinates, two dimensions.
pub fn pos() -> impl Strategy<Value = (u64, ChunkPos)> {
    let x = prop::sample::select(vec![-17i64, -1, 0, 1, 4, 16]);
    let y = prop::sample::select(vec![-1i64, 0]);
    let z = prop::sample::select(vec![-16i64, 0, 3]);
    let d = prop_oneof![5 => Just(0u64), 1 => Just(1u64)];
    (d, x, y, z).prop_map(|(d, x, y, z)| (d, ChunkPos::new(x, y, z)))
}

pub fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (pos(), any::<u32>()).prop_map(|((d, p), s)| Op::Write(d, p, s % 100_000)),
        1 => pos().prop_map(|(d, p)| Op::Delete(d, p)),
        3 => pos().prop_map(|(d, p)| Op::Read(d, p)),
        2 => pos().prop_map(|(d, p)| Op::Load(d, p)),
        2 => (0u64..2, prop::collection::vec(pos(), 0..8))
            .prop_map(|(d, v)| Op::LoadMany(d, v.into_iter().map(|(_, p)| p).collect())),
        2 => pos().prop_map(|(d, p)| Op::Unload(d, p)),
        1 => prop::collection::vec((0u64..2, -400i64..400, -40i64..40, -400i64..400), 0..3)
            .prop_map(|v| Op::Players(v.into_iter().map(|(d, x, y, z)| PlayerPos::new(d, x, y, z)).collect())),
        2 => Just(Op::Maintain),
        2 => (1u64..30).prop_map(Op::Advance),
        1 => Just(Op::Crash),
    ]
}

/// A backend the test can reopen after a "crash".
pub trait Backend {
    fn open(&mut self) -> Box<dyn Store>;
}

pub fn run_model(backend: &mut dyn Backend, ops: &[Op]) -> Result<(), TestCaseError> {
    let schema = schema();
    let mut model: BTreeMap<(u64, ChunkPos), Vec<u8>> = BTreeMap::new();
    let mut loaded: BTreeSet<(u64, ChunkPos)> = BTreeSet::new();
    let mut tick = 0u64;
    let mut ts = Some(builder().open(backend.open()).unwrap());
    for op in ops {
        let t = ts.as_mut().unwrap();
        match op {
            Op::Write(d, p, seed) => {
                let b = chunk_bytes(&schema, *seed);
                t.put_chunk(*d, *p, b.clone(), tick).unwrap();
                model.insert((*d, *p), b);
                prop_assert_eq!(t.level_of(*d, *p).unwrap(), Some(Level::L0));
            }
            Op::Delete(d, p) => {
                t.delete_chunk(*d, *p, tick).unwrap();
                model.remove(&(*d, *p));
            }
            Op::Read(d, p) => {
                let before = t.level_of(*d, *p).unwrap();
                prop_assert_eq!(t.get_chunk(*d, *p).unwrap(), model.get(&(*d, *p)).cloned());
                // Reads never move a chunk.
                prop_assert_eq!(t.level_of(*d, *p).unwrap(), before);
            }
            Op::Load(d, p) => {
                let got = t.load_chunk(*d, *p, tick).unwrap();
                prop_assert_eq!(&got, &model.get(&(*d, *p)).cloned());
                if got.is_some() {
                    prop_assert_eq!(t.level_of(*d, *p).unwrap(), Some(Level::L0));
                }
                loaded.insert((*d, *p));
            }
            Op::LoadMany(d, ps) => {
                let got = t.load_chunks(*d, ps, tick).unwrap();
                prop_assert_eq!(got.len(), ps.len());
                for (p, got) in ps.iter().zip(&got) {
                    prop_assert_eq!(got, &model.get(&(*d, *p)).cloned());
                    if got.is_some() {
                        prop_assert_eq!(t.level_of(*d, *p).unwrap(), Some(Level::L0));
                    }
                    loaded.insert((*d, *p));
                }
            }
            Op::Unload(d, p) => {
                t.unload_chunk(*d, *p, tick);
                loaded.remove(&(*d, *p));
            }
            Op::Players(v) => t.set_players(v),
            Op::Maintain => {
                t.maintain(tick).unwrap();
                for (d, p) in &loaded {
                    if model.contains_key(&(*d, *p)) {
                        prop_assert_eq!(
                            t.level_of(*d, *p).unwrap(),
                            Some(Level::L0),
                            "loaded chunk demoted"
                        );
                    }
                }
            }
            Op::Advance(n) => tick += n,
            Op::Crash => {
                // Drop without flush; the in-memory load state is lost.
                drop(ts.take());
                loaded.clear();
                ts = Some(builder().open(backend.open()).unwrap());
                prop_assert!(ts.as_ref().unwrap().tick() <= tick);
            }
        }
        let t = ts.as_ref().unwrap();
        // Exactly one level per chunk, and contents as last written.
        let stats = t.verify().unwrap();
        prop_assert_eq!(stats.chunks.iter().sum::<usize>(), model.len());
        let all = t.all_chunks().unwrap();
        let contents: BTreeMap<_, _> = all.into_iter().map(|(k, (_, b))| (k, b)).collect();
        prop_assert_eq!(&contents, &model);
    }
    // Everything demotes to L2 eventually once nobody is around.
    let t = ts.as_mut().unwrap();
    for (d, p) in &loaded {
        t.unload_chunk(*d, *p, tick);
    }
    t.set_players(&[]);
    t.maintain(tick + 1000).unwrap();
    let stats = t.verify().unwrap();
    prop_assert_eq!(stats.chunks, [0, 0, model.len()]);
    for ((d, p), b) in &model {
        prop_assert_eq!(t.get_chunk_at(*d, *p).unwrap(), Some((Level::L2, b.clone())));
    }
    Ok(())
}
