//! Helpers shared by the damage, read-only and locking tests: a store with known content, the
//! model of that content, and where each object's blocks are in the file.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use terrane_blockfile::{BLOCK_SIZE, BlockFile};
use terrane_store::conformance::{Rng, collect};
use terrane_store::{Batch, KeyRange, Object, OpenMode, Store, StoreConfig, tables};

/// (table, key) → object.
pub type Model = BTreeMap<(String, Vec<u8>), Object>;
/// (table, key).
pub type Id = (String, Vec<u8>);

/// The tables the helpers write.
pub const TABLES: [&str; 3] = [tables::CHUNK_L0, tables::CHUNK_L2, tables::ENTITY];

/// The configuration of the test stores (opening, not creating).
pub fn config() -> StoreConfig {
    StoreConfig::new("terrane damage test").mode(OpenMode::Open)
}

/// A store with known content: a few hundred objects of several sizes (empty, small, a few
/// blocks, many blocks) in three tables, written in six synced batches with overwrites and
/// deletes. Every batch `v` writes version `v`, so an object's blocks are the object blocks
/// whose trailer names its table, key and version.
pub fn build(path: &Path) -> Model {
    let s = BlockFile::open(path, &config().mode(OpenMode::Create)).unwrap();
    let mut rng = Rng::new(77);
    let mut model = Model::new();
    for v in 0..6i64 {
        let mut b = Batch::new();
        for _ in 0..90 {
            let t = TABLES[rng.below(3) as usize];
            let k = format!("key-{:03}", rng.below(130)).into_bytes();
            if v > 0 && rng.below(8) == 0 {
                b.delete(t, k.clone());
                model.remove(&(t.to_string(), k));
                continue;
            }
            let len = match rng.below(4) {
                0 => rng.below(3) as usize,
                1 => 10 + rng.below(300) as usize,
                2 => 1000 + rng.below(6000) as usize,
                _ => 9000 + rng.below(20_000) as usize,
            };
            let data = rng.bytes(len);
            b.put(t, k.clone(), v, data.clone());
            model.insert((t.to_string(), k), Object::new(v, data));
        }
        s.write(&b.synced()).unwrap();
    }
    assert_eq!(state(&s), model);
    assert!(model.len() > 200, "{} objects", model.len());
    model
}

/// Everything a store holds in [`TABLES`].
pub fn state(s: &BlockFile) -> Model {
    let mut m = Model::new();
    for t in TABLES {
        for (k, o) in collect(s, t, KeyRange::all()) {
            m.insert((t.to_string(), k), o);
        }
    }
    m
}

fn u16_at(b: &[u8], at: usize) -> usize {
    u16::from_le_bytes([b[at], b[at + 1]]) as usize
}

/// The blocks of each object of `model` in the file `bytes` (read from the block trailers:
/// `docs/format/blockfile.md`).
pub fn live_blocks(bytes: &[u8], model: &Model) -> BTreeMap<Id, Vec<usize>> {
    let mut out: BTreeMap<Id, Vec<usize>> = BTreeMap::new();
    for (n, block) in bytes.chunks_exact(BLOCK_SIZE).enumerate().skip(1) {
        let f = BLOCK_SIZE - 48;
        if block[f] != 1 {
            continue;
        }
        let (t, k) = (block[f + 1] as usize, u16_at(block, f + 2));
        let table = String::from_utf8_lossy(&block[f - k - t..f - k]).into_owned();
        let key = block[f - k..f].to_vec();
        let version = i64::from_le_bytes(block[f + 8..f + 16].try_into().unwrap());
        let id = (table, key);
        if model.get(&id).is_some_and(|o| o.version == version) {
            out.entry(id).or_default().push(n);
        }
    }
    assert_eq!(out.len(), model.len(), "every object has blocks");
    out
}

/// The blocks whose trailer says `kind` (2 index, 3 commit record).
pub fn blocks_of_kind(bytes: &[u8], kind: u8) -> Vec<usize> {
    (0..bytes.len() / BLOCK_SIZE)
        .filter(|n| bytes[n * BLOCK_SIZE + BLOCK_SIZE - 48] == kind)
        .collect()
}

/// The objects of `model` that lose a block when the file is cut to `len` bytes.
pub fn lost_to_truncation(bytes: &[u8], model: &Model, len: usize) -> BTreeSet<Id> {
    live_blocks(bytes, model)
        .into_iter()
        .filter(|(_, blocks)| blocks.iter().any(|b| (b + 1) * BLOCK_SIZE > len))
        .map(|(id, _)| id)
        .collect()
}

/// The model without `lost`.
pub fn without(model: &Model, lost: &BTreeSet<Id>) -> Model {
    model
        .iter()
        .filter(|(id, _)| !lost.contains(*id))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Lowercase hex, as error messages name keys.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
