//! Reading a dimension a square of columns at a time, against a model: every stored chunk
//! (hot, in 4³ and in 16³ clusters, in several dimensions, far from the origin) is shown
//! once, by the one tile that holds its column, with its bytes and level; the tiles are the
//! squares that hold chunks, in order.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use common::model::builder;
use common::*;
use proptest::prelude::*;
use terrane_cluster::{
    ClusterBuilder, Error, Level, MAX_TILE_SHIFT, MAX_TOP_BLOCKS_SHIFT, MIN_TILE_SHIFT, Scale,
    TieredStore,
};
use terrane_section::ChunkPos;
use terrane_store::MemStore;

const DIMS: [u64; 3] = [0, 1, u64::MAX];

fn pos() -> impl Strategy<Value = (u64, ChunkPos)> {
    let near = (-70i64..70, -40i64..40, -70i64..70);
    let far = prop_oneof![Just(-(1i64 << 40)), Just((1i64 << 40) + 3), -70i64..70];
    (0..DIMS.len(), prop_oneof![4 => near, 1 => (far.clone(), far.clone(), far)])
        .prop_map(|(d, (x, y, z))| (DIMS[d], ChunkPos::new(x, y, z)))
}

/// Writes `cold` (then demoted to 16³ clusters), `warm` (4³ clusters) and `hot` (stays L0),
/// later writes replacing earlier ones: the model of what is stored, by address.
fn fill(
    t: &mut TieredStore<Arc<MemStore>>,
    groups: [&[(u64, ChunkPos)]; 3],
) -> BTreeMap<(u64, ChunkPos), u32> {
    let s = schema();
    let mut model = BTreeMap::new();
    let mut seed = 0;
    for (g, (list, tick)) in groups.iter().zip([0, 100, 111]).enumerate() {
        for &(dim, p) in *list {
            seed += 1;
            t.put_chunk(dim, p, chunk_bytes(&s, seed), tick).unwrap();
            model.insert((dim, p), seed);
        }
        match g {
            0 => {
                t.maintain(10).unwrap();
                t.maintain(100).unwrap();
            }
            1 => {
                t.maintain(110).unwrap();
            }
            _ => {}
        }
    }
    model
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn every_chunk_once_in_its_tile(
        cold in prop::collection::vec(pos(), 0..120),
        warm in prop::collection::vec(pos(), 0..60),
        hot in prop::collection::vec(pos(), 0..60),
        shift in MIN_TILE_SHIFT..8,
    ) {
        let s = schema();
        let mut t = builder().open(Arc::new(MemStore::new())).unwrap();
        let model = fill(&mut t, [&cold, &warm, &hot]);
        let levels: BTreeSet<Level> = DIMS
            .iter()
            .flat_map(|&d| {
                let t = &t;
                model.keys().filter(move |(m, _)| *m == d).map(move |(_, p)| {
                    t.get_chunk_at(d, *p).unwrap().unwrap().0
                })
            })
            .collect();
        let dims: BTreeSet<u64> = model.keys().map(|(d, _)| *d).collect();
        prop_assert_eq!(t.chunk_dimensions().unwrap(), dims.into_iter().collect::<Vec<_>>());
        for dim in DIMS {
            let tiles = t.column_tiles(dim, shift).unwrap();
            let want_tiles: BTreeSet<(i64, i64)> = model
                .keys()
                .filter(|(d, _)| *d == dim)
                .map(|(_, p)| (p.x >> shift, p.z >> shift))
                .collect();
            let got_tiles: Vec<(i64, i64)> = tiles.iter().map(|t| (t.x, t.z)).collect();
            prop_assert_eq!(&got_tiles, &want_tiles.iter().copied().collect::<Vec<_>>());
            let mut seen = BTreeMap::new();
            for tile in &tiles {
                prop_assert_eq!((tile.dim, tile.shift), (dim, shift));
                let mut shown = 0;
                t.tile_chunks(tile, |p, level, bytes| -> terrane_cluster::Result<()> {
                    assert!(tile.contains(p.x, p.z), "{p:?} shown by tile {},{}", tile.x, tile.z);
                    assert_eq!(t.get_chunk_at(dim, p).unwrap().map(|(l, _)| l), Some(level));
                    assert!(seen.insert(p, bytes.to_vec()).is_none(), "{p:?} shown twice");
                    shown += 1;
                    Ok(())
                })
                .unwrap();
                prop_assert!(shown > 0, "an empty tile {},{}", tile.x, tile.z);
            }
            let want: BTreeMap<ChunkPos, Vec<u8>> = model
                .iter()
                .filter(|((d, _), _)| *d == dim)
                .map(|((_, p), seed)| (*p, chunk_bytes(&s, *seed)))
                .collect();
            prop_assert_eq!(seen, want);
        }
        // The groups reached their levels: the cases cover clusters, not only L0.
        if !cold.is_empty() && hot.is_empty() && warm.is_empty() {
            prop_assert!(levels.contains(&Level::L2), "{levels:?}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// A map's view: every block column's highest opaque block over every level, and the box
    /// of the stored chunks, against the chunks' own blocks.
    #[test]
    fn top_blocks_and_the_stored_extent_match_the_chunks(
        cold in prop::collection::vec(pos(), 0..60),
        warm in prop::collection::vec(pos(), 0..30),
        hot in prop::collection::vec(pos(), 0..30),
    ) {
        let mut t = builder().open(Arc::new(MemStore::new())).unwrap();
        let model = fill(&mut t, [&cold, &warm, &hot]);
        for dim in DIMS {
            // Block column -> (y, block) of its highest non-air block.
            let mut want: BTreeMap<(i64, i64), (i64, u32)> = BTreeMap::new();
            let mut columns = BTreeSet::new();
            let (mut lo, mut hi) = ([i64::MAX; 3], [i64::MIN; 3]);
            for ((_, p), seed) in model.iter().filter(|((d, _), _)| *d == dim) {
                columns.insert((p.x, p.z));
                for (i, v) in [p.x, p.y, p.z].into_iter().enumerate() {
                    lo[i] = lo[i].min(v * 16);
                    hi[i] = hi[i].max(v * 16 + 15);
                }
                let c = chunk(*seed);
                for (lx, ly, lz) in cells() {
                    let b = c.get(lx, ly, lz);
                    if b == AIR {
                        continue;
                    }
                    let (x, y, z) = (p.x * 16 + i64::from(lx), p.y * 16 + i64::from(ly), p.z * 16 + i64::from(lz));
                    let e = want.entry((x, z)).or_insert((i64::MIN, 0));
                    if y > e.0 {
                        *e = (y, b.0);
                    }
                }
            }
            let extent = t.stored_extent(dim).unwrap();
            if columns.is_empty() {
                prop_assert_eq!(extent, None);
                continue;
            }
            let extent = extent.unwrap();
            prop_assert_eq!((extent.x, extent.y, extent.z), ((lo[0], hi[0]), (lo[1], hi[1]), (lo[2], hi[2])));
            prop_assert_eq!(extent.columns, columns.len() as u64);
            let mut got = BTreeMap::new();
            let mut counted = 0;
            for tile in t.column_tiles(dim, MIN_TILE_SHIFT).unwrap() {
                let tops = t.top_blocks(&tile).unwrap();
                counted += tops.columns();
                let (bx, bz) = (tile.x * 256, tile.z * 256);
                for x in bx..bx + 256 {
                    for z in bz..bz + 256 {
                        if let Some(top) = tops.get(x, z) {
                            got.insert((x, z), (top.y, top.block.0));
                        }
                    }
                }
                prop_assert_eq!(tops.get(bx - 1, bz), None);
                prop_assert_eq!(tops.get(bx, bz + 256), None);
            }
            prop_assert_eq!(counted, columns.len() as u64);
            prop_assert_eq!(got, want);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// `verify_each` shows every stored chunk once with its level and bytes, and counts its
    /// tiles (64 × 64 columns, every dimension) to the end.
    #[test]
    fn verify_shows_every_chunk_once_and_counts_its_tiles(
        cold in prop::collection::vec(pos(), 0..60),
        warm in prop::collection::vec(pos(), 0..30),
        hot in prop::collection::vec(pos(), 0..30),
    ) {
        let s = schema();
        let mut t = builder().open(Arc::new(MemStore::new())).unwrap();
        let model = fill(&mut t, [&cold, &warm, &hot]);
        let mut seen = BTreeMap::new();
        let mut calls = Vec::new();
        let stats = t
            .verify_each(
                |addr, level, view| -> terrane_cluster::Result<()> {
                    let bytes = view.as_bytes();
                    assert_eq!(t.get_chunk_at(addr.0, addr.1).unwrap().map(|(l, _)| l), Some(level));
                    assert!(seen.insert(addr, bytes.to_vec()).is_none(), "{addr:?} shown twice");
                    Ok(())
                },
                |done, all| calls.push((done, all)),
            )
            .unwrap();
        let want: BTreeMap<(u64, ChunkPos), Vec<u8>> =
            model.iter().map(|(a, seed)| (*a, chunk_bytes(&s, *seed))).collect();
        prop_assert_eq!(seen, want);
        prop_assert_eq!(stats.chunks.iter().sum::<usize>(), model.len());
        let tiles: BTreeSet<(u64, i64, i64)> =
            model.keys().map(|(d, p)| (*d, p.x >> 6, p.z >> 6)).collect();
        let n = tiles.len();
        prop_assert_eq!(calls.first().copied(), Some((0, n)));
        prop_assert_eq!(calls.last().copied(), Some((n, n)));
        prop_assert_eq!(calls.len(), n + 1);
    }
}

/// Every cell of a chunk as `(x, y, z)`.
fn cells() -> impl Iterator<Item = (u32, u32, u32)> {
    (0..16).flat_map(|x| (0..16).flat_map(move |y| (0..16).map(move |z| (x, y, z))))
}

#[test]
fn a_region_of_a_real_shaped_world_is_two_ranges_at_each_level_it_uses() {
    // 3 × 3 regions of Minecraft columns (24 chunks, y -4..=19), half of them clustered.
    let mut t = builder().open(Arc::new(MemStore::new())).unwrap();
    let s = schema();
    let mut seed = 0;
    let mut put = |t: &mut TieredStore<Arc<MemStore>>, x: i64, z: i64, tick| {
        for y in -4..20 {
            seed += 1;
            t.put_chunk(0, ChunkPos::new(x, y, z), chunk_bytes(&s, seed), tick).unwrap();
        }
    };
    for x in (-32..64).step_by(7) {
        for z in (-32..64).step_by(5) {
            put(&mut t, x, z, 0);
        }
    }
    t.maintain(10).unwrap();
    t.maintain(100).unwrap();
    for x in (-32..64).step_by(11) {
        put(&mut t, x, 1, 200);
    }
    let tiles = t.column_tiles(0, 5).unwrap();
    assert_eq!(tiles.len(), 9);
    for tile in &tiles {
        // y -4..=19 is two cubes of 32 chunks (below and above 0), at L2 and at L0.
        assert!(tile.ranges() <= 4, "tile {},{}: {} ranges", tile.x, tile.z, tile.ranges());
    }
}

#[test]
fn a_tile_shift_outside_the_range_is_refused() {
    let t = builder().open(Arc::new(MemStore::new())).unwrap();
    for shift in [0, MIN_TILE_SHIFT - 1, MAX_TILE_SHIFT + 1] {
        assert!(matches!(t.column_tiles(0, shift), Err(Error::TileShift(s)) if s == shift));
    }
    assert_eq!(t.column_tiles(0, MIN_TILE_SHIFT).unwrap(), vec![]);
}

#[test]
fn verify_reads_by_tile_and_still_finds_a_chunk_twice_and_a_key_that_does_not_parse() {
    use terrane_section::keys;
    use terrane_store::{Batch, Store, tables};
    // Chunks in tiles far apart, cold ones in 16³ clusters.
    let store = Arc::new(MemStore::new());
    let mut t = builder().open(store.clone()).unwrap();
    let s = schema();
    let spots = [(0, 0), (-200, 70), (1 << 20, -(1 << 20)), (5, 900)];
    let mut seed = 0;
    for (x, z) in spots {
        for y in -2..3 {
            seed += 1;
            t.put_chunk(0, ChunkPos::new(x, y, z), chunk_bytes(&s, seed), 0).unwrap();
        }
    }
    t.maintain(10).unwrap();
    t.maintain(100).unwrap();
    assert_eq!(t.verify().unwrap().chunks, [0, 0, 20]);

    // The same chunk again as a hot key, in a tile of its own far from the first.
    let twice = ChunkPos::new(1 << 20, 1, -(1 << 20));
    let mut b = Batch::new();
    b.put(tables::CHUNK_L0, keys::chunk_key(0, twice, Level::L0).to_vec(), 1, chunk_bytes(&s, 99));
    store.write(&b).unwrap();
    let err = t.verify().unwrap_err();
    assert!(matches!(&err, Error::Inconsistent(m) if m.contains("is at")), "{err}");

    // A key that is no chunk's, between two tiles' keys.
    let mut b = Batch::new();
    b.delete(tables::CHUNK_L0, keys::chunk_key(0, twice, Level::L0).to_vec());
    let mut odd = keys::chunk_key(0, ChunkPos::new(5, 0, 900), Level::L0).to_vec();
    odd.truncate(odd.len() - 3);
    b.put(tables::CHUNK_L0, odd.clone(), 1, b"x".to_vec());
    store.write(&b).unwrap();
    let err = t.verify().unwrap_err();
    assert!(matches!(err, Error::CorruptKey { len, .. } if len == odd.len()), "{err}");
}

#[test]
fn top_blocks_refuses_a_tile_too_large_to_hold() {
    let mut t = builder().open(Arc::new(MemStore::new())).unwrap();
    t.put_chunk(0, ChunkPos::new(3, 0, 3), chunk_bytes(&schema(), 7), 0).unwrap();
    let big = t.column_tiles(0, MAX_TOP_BLOCKS_SHIFT + 1).unwrap();
    let err = t.top_blocks(&big[0]).unwrap_err();
    assert!(matches!(err, Error::TopBlocksTileShift(s) if s == MAX_TOP_BLOCKS_SHIFT + 1), "{err}");
    let ok = t.column_tiles(0, MAX_TOP_BLOCKS_SHIFT).unwrap();
    assert!(t.top_blocks(&ok[0]).unwrap().get(55, 48).is_some(), "the stone of chunk 7");
}

#[test]
fn verify_finds_an_empty_cluster() {
    use terrane_section::keys;
    use terrane_store::{Batch, Store, tables};
    let store = Arc::new(MemStore::new());
    let t = builder().open(store.clone()).unwrap();
    let empty = ClusterBuilder::new(Scale::Cube4).build().unwrap();
    let mut b = Batch::new();
    b.put(tables::CHUNK_L1, keys::cell_key(0, ChunkPos::new(4, 0, 4)).to_vec(), 1, empty);
    store.write(&b).unwrap();
    let err = t.verify().unwrap_err();
    assert!(matches!(&err, Error::Inconsistent(m) if m.contains("empty L1 cluster")), "{err}");
}
