//! Property tests: round trips, ordering, cluster contiguity, negatives and domain edges.

use proptest::prelude::*;
use terrane_section::keys::{self, Level};
use terrane_section::morton::{decode2, decode3, encode2, encode2_u128, encode3};
use terrane_section::{BlockPos, ChunkPos, ColumnPos, GridPos, cell_coords, cell_index};

/// Coordinates biased to the interesting places: 0, -1, powers of two and the domain edges.
fn coord() -> impl Strategy<Value = i64> {
    prop_oneof![
        any::<i64>(),
        -40i64..40,
        (0u32..63).prop_map(|s| 1i64 << s),
        (0u32..63).prop_map(|s| -(1i64 << s)),
        Just(i64::MIN),
        Just(i64::MAX),
        Just(i64::MIN + 1),
        Just(i64::MAX - 1),
    ]
}

/// Numeric Morton value of a 3D key computed bit by bit, as (high 128 bits, low 64 bits).
fn numeric3(x: i64, y: i64, z: i64) -> (u128, u64) {
    let flip = |v: i64| v as u64 ^ (1 << 63);
    let c = [flip(x), flip(y), flip(z)];
    let (mut hi, mut lo) = (0u128, 0u64);
    for i in (0..64).rev() {
        for v in c {
            let bit = (v >> i) & 1;
            hi = (hi << 1) | (lo >> 63) as u128;
            lo = (lo << 1) | bit;
        }
    }
    (hi, lo)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1000))]

    #[test]
    fn morton3_round_trips(x in coord(), y in coord(), z in coord()) {
        prop_assert_eq!(decode3(&encode3(x, y, z)), (x, y, z));
    }

    #[test]
    fn morton2_round_trips(x in coord(), z in coord()) {
        prop_assert_eq!(decode2(&encode2(x, z)), (x, z));
        prop_assert_eq!(u128::from_be_bytes(encode2(x, z)), encode2_u128(x, z));
    }

    #[test]
    fn morton3_byte_order_is_numeric_order(a in (coord(), coord(), coord()), b in (coord(), coord(), coord())) {
        let ka = encode3(a.0, a.1, a.2);
        let kb = encode3(b.0, b.1, b.2);
        prop_assert_eq!(ka.cmp(&kb), numeric3(a.0, a.1, a.2).cmp(&numeric3(b.0, b.1, b.2)));
    }

    #[test]
    fn morton_preserves_per_axis_order(x in coord(), y in coord(), z in coord(), d in 1i64..1000) {
        // Moving along one axis only never moves backwards in Morton order.
        if let Some(x2) = x.checked_add(d) {
            prop_assert!(encode3(x, y, z) < encode3(x2, y, z));
            prop_assert!(encode2(x, z) < encode2(x2, z));
        }
        if let Some(z2) = z.checked_add(d) {
            prop_assert!(encode3(x, y, z) < encode3(x, y, z2));
        }
    }

    #[test]
    fn cluster_is_one_contiguous_key_range(x in coord(), y in coord(), z in coord(),
                                           other in (coord(), coord(), coord()),
                                           level in prop_oneof![Just(Level::L1), Just(Level::L2)]) {
        // Every chunk of the cluster holding (x, y, z) lies between its first and last chunk,
        // and any chunk outside the cluster lies outside that range.
        let s = level.shift();
        let base = |v: i64| (v >> s) << s;
        let last = |v: i64| base(v) | ((1 << s) - 1);
        let lo = keys::chunk_key(7, ChunkPos::new(base(x), base(y), base(z)), Level::L0);
        let hi = keys::chunk_key(7, ChunkPos::new(last(x), last(y), last(z)), Level::L0);
        let k = keys::chunk_key(7, ChunkPos::new(x, y, z), Level::L0);
        prop_assert!(lo <= k && k <= hi);
        let o = ChunkPos::new(other.0, other.1, other.2);
        let ko = keys::chunk_key(7, o, Level::L0);
        let same_cluster = o.section(s) == ChunkPos::new(x, y, z).section(s);
        prop_assert_eq!(lo <= ko && ko <= hi, same_cluster);
        // And the whole range is exactly (edge^3) keys wide.
        let span = numeric3(last(x), last(y), last(z)).1.wrapping_sub(numeric3(base(x), base(y), base(z)).1);
        prop_assert_eq!(span, (1u64 << (3 * s)) - 1);
    }

    #[test]
    fn chunk_keys_round_trip(dim in any::<u64>(), x in coord(), y in coord(), z in coord()) {
        for level in Level::ALL {
            let k = keys::chunk_key(dim, ChunkPos::new(x, y, z), level);
            let s = level.shift();
            prop_assert_eq!(keys::parse_chunk_key(&k), Some((dim, ChunkPos::new(x >> s, y >> s, z >> s))));
        }
        let ck = keys::column_key(dim, x, z);
        prop_assert_eq!(keys::parse_column_key(&ck), Some((dim, x >> 2, z >> 2)));
        for level in Level::ALL {
            let s = level.shift();
            let k = keys::column_key_at(dim, x, z, level);
            prop_assert_eq!(keys::parse_column_key(&k), Some((dim, x >> s, z >> s)));
        }
    }

    #[test]
    fn column_tile_is_one_contiguous_key_range(x in coord(), z in coord(), other in (coord(), coord()),
                                               level in prop_oneof![Just(Level::L1), Just(Level::L2)]) {
        // The 2D twin of `cluster_is_one_contiguous_key_range`: every column of the tile
        // holding (x, z) lies between its first and last column, every other column outside.
        let s = level.shift();
        let base = |v: i64| (v >> s) << s;
        let last = |v: i64| base(v) | ((1 << s) - 1);
        let lo = keys::column_key_at(3, base(x), base(z), Level::L0);
        let hi = keys::column_key_at(3, last(x), last(z), Level::L0);
        let k = keys::column_key_at(3, x, z, Level::L0);
        prop_assert!(lo <= k && k <= hi);
        let ko = keys::column_key_at(3, other.0, other.1, Level::L0);
        let same_tile = (other.0 >> s, other.1 >> s) == (x >> s, z >> s);
        prop_assert_eq!(lo <= ko && ko <= hi, same_tile);
        // Byte order of the 2D key is the order of the bit-by-bit interleave.
        let naive = |x: i64, z: i64| {
            let (ux, uz) = ((x as u64) ^ (1 << 63), (z as u64) ^ (1 << 63));
            let mut v = 0u128;
            for bit in (0..64).rev() {
                v = (v << 1) | u128::from((ux >> bit) & 1);
                v = (v << 1) | u128::from((uz >> bit) & 1);
            }
            v
        };
        prop_assert_eq!(k.cmp(&ko), naive(x, z).cmp(&naive(other.0, other.1)));
    }

    #[test]
    fn dimension_prefix_sorts_first(d1 in any::<u64>(), d2 in any::<u64>(), a in (coord(), coord(), coord()), b in (coord(), coord(), coord())) {
        prop_assume!(d1 != d2);
        let (d1, d2) = (d1.min(d2), d1.max(d2));
        let ka = keys::chunk_key(d1, ChunkPos::new(a.0, a.1, a.2), Level::L0);
        let kb = keys::chunk_key(d2, ChunkPos::new(b.0, b.1, b.2), Level::L0);
        prop_assert!(ka < kb);
    }

    #[test]
    fn column_pack_round_trips(x in any::<i32>(), z in any::<i32>()) {
        let c = ColumnPos::new(x, z);
        prop_assert_eq!(ColumnPos::from_u64(c.to_u64()), c);
        prop_assert_eq!(ColumnPos::from_coords(&c.coords()), Some(c));
    }

    #[test]
    fn sections_floor(x in any::<i32>(), z in any::<i32>(), shift in 0u32..31) {
        let s = ColumnPos::new(x, z).section(shift);
        let d = 1i64 << shift;
        prop_assert_eq!(s.x as i64, (x as i64).div_euclid(d));
        prop_assert_eq!(s.z as i64, (z as i64).div_euclid(d));
        // The section's first position holds the original position's section.
        let min = s.section_min(shift).unwrap();
        prop_assert!(min.x <= x && min.z <= z);
        prop_assert_eq!(min.section(shift), s);
        // Local index is below n^2, z fastest, and with the section gives back the position.
        let li = ColumnPos::new(x, z).local_index(shift);
        prop_assert!((li as u64) < 1u64 << (2 * shift));
        let (lx, lz) = ((x as i64).rem_euclid(d), (z as i64).rem_euclid(d));
        prop_assert_eq!(li as i64, (lx << shift) | lz);
        prop_assert_eq!((min.x as i64 + lx, min.z as i64 + lz), (x as i64, z as i64));
    }

    #[test]
    fn sections_floor_3d(x in coord(), y in coord(), z in coord(), shift in 0u32..8) {
        let p = ChunkPos::new(x, y, z);
        let s = p.section(shift);
        let d = 1i64 << shift;
        prop_assert_eq!(s, ChunkPos::new(x.div_euclid(d), y.div_euclid(d), z.div_euclid(d)));
        let li = p.local_index(shift);
        let n = 1usize << shift;
        prop_assert!(li < n * n * n);
        prop_assert_eq!(li, ((((x & (d - 1)) as usize) * n + (y & (d - 1)) as usize) * n) + (z & (d - 1)) as usize);
    }

    #[test]
    fn distances_never_overflow_2d(a in any::<(i32, i32)>(), b in any::<(i32, i32)>()) {
        let (p, q) = (ColumnPos::new(a.0, a.1), ColumnPos::new(b.0, b.1));
        let dx = (a.0 as i128 - b.0 as i128).unsigned_abs();
        let dz = (a.1 as i128 - b.1 as i128).unsigned_abs();
        prop_assert_eq!(p.dist2(q), dx * dx + dz * dz);
        prop_assert_eq!(p.chebyshev(q) as u128, dx.max(dz));
        prop_assert_eq!(p.dist2(q), q.dist2(p));
    }

    #[test]
    fn distances_exact_in_chunk_domain_3d(a in (coord(), coord(), coord()), b in (coord(), coord(), coord())) {
        // Chunk coordinates from i64 block coordinates: >> 4.
        let p = ChunkPos::new(a.0 >> 4, a.1 >> 4, a.2 >> 4);
        let q = ChunkPos::new(b.0 >> 4, b.1 >> 4, b.2 >> 4);
        let d = |u: i64, v: i64| (u as i128 - v as i128).unsigned_abs();
        let want = d(p.x, q.x).pow(2) + d(p.y, q.y).pow(2) + d(p.z, q.z).pow(2);
        prop_assert_eq!(p.dist2(q), want);
        // Full i64 range: no panic, saturates instead of wrapping.
        let big = ChunkPos::new(a.0, a.1, a.2).dist2(ChunkPos::new(b.0, b.1, b.2));
        prop_assert!(big >= d(a.0, b.0).pow(2));
    }

    #[test]
    fn dist_to_box_matches_brute_force(p in (-12i32..12, -12i32..12), a in (-8i32..8, -8i32..8), w in (0i32..6, 0i32..6)) {
        let (min, max) = (ColumnPos::new(a.0, a.1), ColumnPos::new(a.0 + w.0, a.1 + w.1));
        let pos = ColumnPos::new(p.0, p.1);
        let mut best = u128::MAX;
        for x in min.x..=max.x {
            for z in min.z..=max.z {
                best = best.min(pos.dist2(ColumnPos::new(x, z)));
            }
        }
        prop_assert_eq!(pos.dist2_to_box(min, max), best);
        let p3 = ChunkPos::new(p.0 as i64, 3, p.1 as i64);
        let (b0, b1) = (ChunkPos::new(min.x as i64, 0, min.z as i64), ChunkPos::new(max.x as i64, 1, max.z as i64));
        prop_assert_eq!(p3.dist2_to_box(b0, b1), best + 4);
    }

    #[test]
    fn within_is_the_chebyshev_ball(x in -5i32..5, z in -5i32..5, r in 0u32..4) {
        let c = ColumnPos::new(x, z);
        let got: Vec<ColumnPos> = c.within(r).collect();
        let mut want = Vec::new();
        for dx in -(r as i32)..=r as i32 {
            for dz in -(r as i32)..=r as i32 {
                want.push(ColumnPos::new(x + dx, z + dz));
            }
        }
        want.sort();
        prop_assert_eq!(&got, &want);
        prop_assert!(got.iter().all(|q| q.chebyshev(c) <= r as u64));
        let c3 = ChunkPos::new(x as i64, z as i64, 0);
        let n3 = c3.within(r).count();
        prop_assert_eq!(n3, (2 * r as usize + 1).pow(3));
        let v3: Vec<_> = c3.within(r).collect();
        prop_assert!(v3.windows(2).all(|w| w[0] < w[1]));
    }

    /// `within_runs` covers exactly `within`: every position of a run is between its ends in
    /// sort order, and a sorted set's range search per run finds the ball's members.
    #[test]
    fn within_runs_are_the_ball_in_sorted_runs(x in -5i32..5, z in -5i32..5, r in 0u32..4, extra in proptest::collection::btree_set((-12i32..12, -12i32..12), 0..80)) {
        let c = ColumnPos::new(x, z);
        let set: std::collections::BTreeSet<ColumnPos> = extra.iter().map(|&(x, z)| ColumnPos::new(x, z)).collect();
        let mut by_runs = Vec::new();
        for (lo, hi) in c.within_runs(r) {
            by_runs.extend(set.range(lo..=hi).copied());
        }
        let by_ball: Vec<ColumnPos> = c.within(r).filter(|p| set.contains(p)).collect();
        prop_assert_eq!(by_runs, by_ball);
        let c3 = ChunkPos::new(x as i64, z as i64, 1);
        let set3: std::collections::BTreeSet<ChunkPos> = extra.iter().map(|&(x, z)| ChunkPos::new(x as i64, (x + z).rem_euclid(3) as i64, z as i64)).collect();
        let mut runs3 = Vec::new();
        for (lo, hi) in c3.within_runs(r) {
            runs3.extend(set3.range(lo..=hi).copied());
        }
        let ball3: Vec<ChunkPos> = c3.within(r).filter(|p| set3.contains(p)).collect();
        prop_assert_eq!(runs3, ball3);
    }

    #[test]
    fn blocks_map_to_chunks(x in coord(), y in coord(), z in coord()) {
        let b = BlockPos::new(x, y, z);
        let c = b.chunk();
        let (lx, ly, lz) = b.local();
        prop_assert_eq!(c.block(lx, ly, lz), Some(b));
        prop_assert_eq!(cell_coords(b.cell_index()), (lx, ly, lz));
    }
}

#[test]
fn within_skips_out_of_domain_positions() {
    let edge = ColumnPos::new(i32::MAX, i32::MIN);
    assert_eq!(edge.within(1).count(), 4);
    let edge3 = ChunkPos::new(i64::MAX, 0, i64::MIN);
    assert_eq!(edge3.within(2).count(), 3 * 5 * 3);
    // The same positions in the same order as nested loops over the clamped ranges.
    let mut want = Vec::new();
    for x in (i32::MAX - 1)..=i32::MAX {
        for z in i32::MIN..=(i32::MIN + 1) {
            want.push(ColumnPos::new(x, z));
        }
    }
    assert_eq!(edge.within(1).collect::<Vec<_>>(), want);
    let runs: Vec<_> = edge.within_runs(1).collect();
    assert_eq!(runs, want.chunks(2).map(|r| (r[0], r[1])).collect::<Vec<_>>());
    let mut want3 = Vec::new();
    for x in (i64::MAX - 2)..=i64::MAX {
        for y in -2..=2 {
            for z in i64::MIN..=(i64::MIN + 2) {
                want3.push(ChunkPos::new(x, y, z));
            }
        }
    }
    assert_eq!(edge3.within(2).collect::<Vec<_>>(), want3);
    let runs3: Vec<_> = edge3.within_runs(2).collect();
    assert_eq!(runs3, want3.chunks(3).map(|r| (r[0], r[2])).collect::<Vec<_>>());
}

#[test]
fn cell_index_is_z_fastest() {
    assert_eq!(cell_index(0, 0, 1), 1);
    assert_eq!(cell_index(0, 1, 0), 16);
    assert_eq!(cell_index(1, 0, 0), 256);
    assert_eq!(cell_index(15, 15, 15), 4095);
    for i in 0..4096u16 {
        let (x, y, z) = cell_coords(i);
        assert_eq!(cell_index(x, y, z), i);
    }
}

#[test]
fn negative_sections_floor() {
    assert_eq!(ColumnPos::new(-1, -16).section(4), ColumnPos::new(-1, -1));
    assert_eq!(ColumnPos::new(-17, 15).section(4), ColumnPos::new(-2, 0));
    assert_eq!(ChunkPos::new(-1, -4, -5).section(2), ChunkPos::new(-1, -1, -2));
    assert_eq!(ColumnPos::new(-1, 0).local_index(2), 3 * 4);
}

#[test]
fn morton_extremes() {
    // The smallest key is all-minimum coordinates, the largest all-maximum.
    assert_eq!(encode3(i64::MIN, i64::MIN, i64::MIN), [0u8; 24]);
    assert_eq!(encode3(i64::MAX, i64::MAX, i64::MAX), [0xFF; 24]);
    assert_eq!(encode2(i64::MIN, i64::MIN), [0u8; 16]);
    assert_eq!(encode2(i64::MAX, i64::MAX), [0xFF; 16]);
}
