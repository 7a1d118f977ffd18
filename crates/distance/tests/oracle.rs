//! Differential tests against a `BTreeSet` oracle, after every operation of random sequences.

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use terrane_distance::{Claims, ColumnPos, DistanceGraph, Error, Hit, MAX_COORD, Near};

type Set = BTreeSet<(i32, i32)>;

fn valid(x: i64, z: i64) -> bool {
    let m = MAX_COORD as i64;
    (-m..=m).contains(&x) && (-m..=m).contains(&z)
}

fn d2(c: ColumnPos, x: i64, z: i64) -> u64 {
    let dx = x.abs_diff(c.x as i64);
    let dz = z.abs_diff(c.z as i64);
    dx * dx + dz * dz
}

/// Every valid chunk of the disc, brute force (square scan).
fn disc(c: ColumnPos, r: u32) -> impl Iterator<Item = (i64, i64, u64)> {
    let r = r as i64;
    let r2 = (r * r) as u64;
    (c.z as i64 - r..=c.z as i64 + r).flat_map(move |z| {
        (c.x as i64 - r..=c.x as i64 + r).filter_map(move |x| {
            let d = d2(c, x, z);
            (d <= r2 && valid(x, z)).then_some((x, z, d))
        })
    })
}

fn oracle_nearest(set: &Set, c: ColumnPos, r: u32, excluded: &BTreeSet<(i32, i32)>) -> Option<Hit> {
    // (bz, bx) -> (key, missing)
    let mut batches: BTreeMap<(i64, i64), (u64, u16)> = BTreeMap::new();
    for (x, z, d) in disc(c, r) {
        if set.contains(&(x as i32, z as i32)) {
            continue;
        }
        let (bx, bz) = (x >> 2, z >> 2);
        if excluded.contains(&(bx as i32, bz as i32)) {
            continue;
        }
        let e = batches.entry((bz, bx)).or_insert((u64::MAX, 0));
        e.0 = e.0.min(d);
        e.1 |= 1 << ((x & 3) + 4 * (z & 3));
    }
    batches.into_iter().map(|((bz, bx), (key, m))| (key, bz, bx, m)).min().map(
        |(key, bz, bx, m)| Hit { batch: ColumnPos::new(bx as i32, bz as i32), d2: key, missing: m },
    )
}

fn oracle_completed(set: &Set, c: ColumnPos, r: u32) -> Vec<Near> {
    let r2 = r as u64 * r as u64;
    let mut v: Vec<Near> = set
        .iter()
        .map(|&(x, z)| Near { d2: d2(c, x as i64, z as i64), pos: ColumnPos::new(x, z) })
        .filter(|n| n.d2 <= r2)
        .collect();
    v.sort();
    v
}

/// Checks every query of the spec against the oracle at centre `c`, radius `r`.
fn check_queries(
    g: &DistanceGraph,
    set: &Set,
    c: ColumnPos,
    r: u32,
    excluded: &BTreeSet<(i32, i32)>,
) {
    g.check_invariants().unwrap();
    assert_eq!(g.len(), set.len() as u64);
    // Nearest, with and without the excluded set.
    let got = g.nearest_incomplete(c, r, |b| excluded.contains(&(b.x, b.z))).unwrap();
    assert_eq!(got, oracle_nearest(set, c, r, excluded), "nearest c={c:?} r={r}");
    let got = g.nearest_incomplete(c, r, |_| false).unwrap();
    assert_eq!(got, oracle_nearest(set, c, r, &BTreeSet::new()), "nearest c={c:?} r={r}");
    // Counts.
    let size = disc(c, r).count() as u64;
    assert_eq!(DistanceGraph::disc_size(c, r).unwrap(), size);
    let done = oracle_completed(set, c, r);
    assert_eq!(
        g.count_completed(c, r).unwrap(),
        done.len() as u64,
        "count_completed c={c:?} r={r}"
    );
    assert_eq!(g.count_missing(c, r).unwrap(), size - done.len() as u64);
    // The iterator and its resume splits.
    let all: Vec<Near> = g.completed_near_to_far(c, r, None).unwrap().collect();
    assert_eq!(all, done, "near_to_far c={c:?} r={r}");
    let splits: Vec<usize> = if all.len() <= 48 {
        (0..all.len()).collect()
    } else {
        (0..8).map(|i| i * all.len() / 8).chain([all.len() - 1]).collect()
    };
    for i in splits {
        let rest: Vec<Near> = g.completed_near_to_far(c, r, Some(all[i])).unwrap().collect();
        assert_eq!(rest, all[i + 1..], "resume after {i} of {}", all.len());
    }
}

fn check_bytes(g: &DistanceGraph, set: &Set) {
    let bytes = g.to_bytes();
    let back = DistanceGraph::from_bytes(&bytes).unwrap();
    assert_eq!(&back, g);
    assert_eq!(back.to_bytes(), bytes);
    // The same set through another history: inserted in reverse order, with detours.
    let mut h = DistanceGraph::new();
    for &(x, z) in set.iter().rev() {
        h.insert(ColumnPos::new(x, z)).unwrap();
        // A detour: a neighbour added and removed again when it is not in the set.
        let n = (x ^ 1, z);
        if !set.contains(&n) && valid(n.0 as i64, n.1 as i64) {
            h.insert(ColumnPos::new(n.0, n.1)).unwrap();
            h.remove(ColumnPos::new(n.0, n.1)).unwrap();
        }
    }
    assert_eq!(h.to_bytes(), bytes, "different history, different bytes");
}

#[derive(Clone, Debug)]
enum Op {
    Insert(i32, i32),
    Remove(i32, i32),
    /// Fill (true) or clear (false) a `w × h` rectangle.
    Rect(i32, i32, i32, i32, bool),
    Clear,
}

/// Coordinates clustered at 0, -1, node seams and the edges of the valid range.
fn coord() -> impl Strategy<Value = i32> {
    let m = MAX_COORD;
    let anchors = prop::sample::select(vec![
        0,
        -1,
        32,
        31,
        -32,
        -33,
        256,
        255,
        -256,
        -257,
        2048,
        2047,
        -2048,
        -2049,
        m,
        -m,
        m - 3,
        -m + 3,
    ]);
    (anchors, -12i32..12).prop_map(|(a, d)| a.saturating_add(d))
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (coord(), coord()).prop_map(|(x, z)| Op::Insert(x, z)),
        3 => (coord(), coord()).prop_map(|(x, z)| Op::Remove(x, z)),
        2 => (coord(), coord(), 1i32..40, 1i32..40, prop::bool::weighted(0.7))
            .prop_map(|(x, z, w, h, fill)| Op::Rect(x, z, w, h, fill)),
        1 => Just(Op::Clear),
    ]
}

fn radius() -> impl Strategy<Value = u32> {
    prop_oneof![4 => 0u32..=5, 3 => prop::sample::select(vec![5u32, 25, 65]), 2 => 0u32..=100]
}

fn apply(g: &mut DistanceGraph, set: &mut Set, x: i32, z: i32, ins: bool) {
    let p = ColumnPos::new(x, z);
    let res = if ins { g.insert(p) } else { g.remove(p) };
    if !valid(x as i64, z as i64) {
        assert!(matches!(res, Err(Error::OutOfRange { .. })), "{p:?} must be out of range");
        return;
    }
    let want = if ins { set.insert((x, z)) } else { set.remove(&(x, z)) };
    assert_eq!(res.unwrap(), want, "{} {p:?}", if ins { "insert" } else { "remove" });
    assert_eq!(g.contains(p), ins);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    #[test]
    fn differential(
        ops in prop::collection::vec(op(), 1..20),
        queries in prop::collection::vec((coord(), coord(), radius(), prop::collection::vec((-8i32..8, -8i32..8), 0..6)), 20),
    ) {
        let mut g = DistanceGraph::new();
        let mut set = Set::new();
        for (i, op) in ops.iter().enumerate() {
            match *op {
                Op::Insert(x, z) => apply(&mut g, &mut set, x, z, true),
                Op::Remove(x, z) => apply(&mut g, &mut set, x, z, false),
                Op::Rect(x0, z0, w, h, fill) => {
                    for z in z0..z0.saturating_add(h) {
                        for x in x0..x0.saturating_add(w) {
                            apply(&mut g, &mut set, x, z, fill);
                        }
                    }
                }
                Op::Clear => {
                    g.clear();
                    set.clear();
                }
            }
            // Queries around the op's position or a clustered centre, after every op.
            let (cx, cz, r, ex) = &queries[i % queries.len()];
            let centre = match *op {
                Op::Insert(x, z) | Op::Remove(x, z) | Op::Rect(x, z, ..) if i % 2 == 0 => (x, z),
                _ => (*cx, *cz),
            };
            let c = ColumnPos::new(centre.0.clamp(-MAX_COORD, MAX_COORD), centre.1.clamp(-MAX_COORD, MAX_COORD));
            // Excluded batches near the centre, some of them outside the disc.
            let excluded: BTreeSet<(i32, i32)> = ex
                .iter()
                .map(|&(dx, dz)| ((c.x >> 2) + dx * (1 + *r as i32 / 8), (c.z >> 2) + dz * (1 + *r as i32 / 8)))
                .collect();
            check_queries(&g, &set, c, *r, &excluded);
            for &(x, z) in set.iter().take(4) {
                prop_assert!(g.contains(ColumnPos::new(x, z)));
            }
            check_bytes(&g, &set);
        }
    }

    #[test]
    fn claims_follow_the_oracle(
        points in prop::collection::vec((-20i32..20, -20i32..20), 0..200),
        r in radius(),
        take in 1usize..20,
    ) {
        let mut g = DistanceGraph::new();
        let mut set = Set::new();
        for &(x, z) in &points {
            g.insert(ColumnPos::new(x, z)).unwrap();
            set.insert((x, z));
        }
        let c = ColumnPos::new(1, -2);
        // Claim `take` hits in a row: they must be the oracle's nearest with the claimed
        // chunks treated as completed, and never overlap.
        let mut claims = Claims::new();
        let mut claimed = set.clone();
        for _ in 0..take {
            let hit = g.nearest_unclaimed(c, r, &claims).unwrap();
            prop_assert_eq!(hit, oracle_nearest(&claimed, c, r, &BTreeSet::new()));
            let Some(hit) = hit else { break };
            prop_assert_eq!(claims.claim(&hit), hit.missing);
            for p in hit.chunks() {
                prop_assert!(claimed.insert((p.x, p.z)));
            }
        }
        prop_assert_eq!(claims.chunks() as usize, claimed.len() - set.len());
        // Releasing is idempotent and makes the chunks candidates again.
        for &(x, z) in claimed.difference(&set) {
            prop_assert!(claims.release(ColumnPos::new(x, z)));
            prop_assert!(!claims.release(ColumnPos::new(x, z)));
        }
        prop_assert!(claims.is_empty());
        prop_assert_eq!(g.nearest_unclaimed(c, r, &claims).unwrap(), oracle_nearest(&set, c, r, &BTreeSet::new()));
    }
}

#[test]
fn regression_far_corner() {
    // Centre (3, 3), r = 128, everything done except (93, 93).
    let c = ColumnPos::new(3, 3);
    let mut g = DistanceGraph::new();
    for z in 3 - 128..=3 + 128 {
        for x in 3 - 128..=3 + 128 {
            if d2(c, x, z) <= 128 * 128 && (x, z) != (93, 93) {
                g.insert(ColumnPos::new(x as i32, z as i32)).unwrap();
            }
        }
    }
    let hit = g.nearest_incomplete(c, 128, |_| false).unwrap().unwrap();
    assert_eq!(hit, Hit { batch: ColumnPos::new(23, 23), d2: 16200, missing: 1 << 5 });
    assert_eq!(g.count_missing(c, 128).unwrap(), 1);
    // Claimed, there is nothing left; excluded, likewise.
    let mut claims = Claims::new();
    claims.claim(&hit);
    assert_eq!(g.nearest_unclaimed(c, 128, &claims).unwrap(), None);
    assert_eq!(g.nearest_incomplete(c, 128, |b| b == ColumnPos::new(23, 23)).unwrap(), None);
    g.insert(ColumnPos::new(93, 93)).unwrap();
    assert_eq!(g.nearest_incomplete(c, 128, |_| false).unwrap(), None);
    assert_eq!(g.count_missing(c, 128).unwrap(), 0);
    // One more ring: the nearest is just outside r = 128.
    let hit = g.nearest_incomplete(c, 129, |_| false).unwrap().unwrap();
    assert!(hit.d2 > 128 * 128 && hit.d2 <= 129 * 129);
}

#[test]
fn clusters_and_small_radii_exhaustively() {
    // Deterministic: a checkerboard-ish pattern around every cluster, every radius 0..=6 and
    // the exact-on-circle radii, every centre of a small window.
    let m = MAX_COORD;
    for &(ax, az) in
        &[(0, 0), (-1, -1), (32, -33), (256, 255), (-2048, 2047), (m - 2, -m + 2), (-m + 1, m - 1)]
    {
        let mut g = DistanceGraph::new();
        let mut set = Set::new();
        for dz in -9..=9i64 {
            for dx in -9..=9i64 {
                let (x, z) = (ax as i64 + dx, az as i64 + dz);
                if valid(x, z) && (dx * 7 + dz * 3).rem_euclid(5) != 0 {
                    g.insert(ColumnPos::new(x as i32, z as i32)).unwrap();
                    set.insert((x as i32, z as i32));
                }
            }
        }
        for &(dx, dz) in &[(0, 0), (1, -1), (-2, 3)] {
            let c = ColumnPos::new((ax + dx).clamp(-m, m), (az + dz).clamp(-m, m));
            for r in (0..=6).chain([25]) {
                let ex: BTreeSet<(i32, i32)> =
                    [(c.x >> 2, c.z >> 2), ((c.x >> 2) + 1, c.z >> 2)].into();
                check_queries(&g, &set, c, r, &ex);
            }
        }
        check_bytes(&g, &set);
    }
}

#[test]
fn out_of_range_is_a_typed_error() {
    let mut g = DistanceGraph::new();
    for p in [
        ColumnPos::new(1 << 30, 0),
        ColumnPos::new(0, -(1 << 30)),
        ColumnPos::new(i32::MIN, i32::MAX),
    ] {
        assert!(matches!(g.insert(p), Err(Error::OutOfRange { .. })));
        assert!(matches!(g.remove(p), Err(Error::OutOfRange { .. })));
        assert!(!g.contains(p));
        assert!(matches!(g.nearest_incomplete(p, 3, |_| false), Err(Error::OutOfRange { .. })));
        assert!(matches!(g.count_missing(p, 3), Err(Error::OutOfRange { .. })));
        assert!(g.completed_near_to_far(p, 3, None).is_err());
    }
    assert!(g.insert(ColumnPos::new(MAX_COORD, -MAX_COORD)).unwrap());
    assert_eq!(g.len(), 1);
}

#[test]
fn every_resume_split_and_arbitrary_cursors() {
    // A set with full batches, a full level-1 node and scattered chunks around a node seam.
    let mut g = DistanceGraph::new();
    let mut set = Set::new();
    let mut add = |x: i32, z: i32| {
        g.insert(ColumnPos::new(x, z)).unwrap();
        set.insert((x, z));
    };
    for z in 0..32 {
        for x in 0..32 {
            add(x, z); // a full level-1 node
        }
    }
    for z in -8..0 {
        for x in -8..4 {
            if (x + z) % 3 != 0 {
                add(x, z);
            }
        }
    }
    for i in 0..40 {
        add(-20 + i, 40 - (i * 7) % 23);
    }
    for (c, r) in
        [(ColumnPos::new(0, 0), 25u32), (ColumnPos::new(-1, 31), 65), (ColumnPos::new(16, 16), 5)]
    {
        let all: Vec<Near> = g.completed_near_to_far(c, r, None).unwrap().collect();
        assert_eq!(all, oracle_completed(&set, c, r));
        for i in 0..all.len() {
            let rest: Vec<Near> = g.completed_near_to_far(c, r, Some(all[i])).unwrap().collect();
            assert_eq!(
                rest,
                all[i + 1..],
                "resume after item {i} of {} (c={c:?}, r={r})",
                all.len()
            );
        }
        // Cursors that are not items: strictly after in (d2, z, x) order all the same.
        for d2 in [0u64, 1, 2, 24, 25, 26, 600, 625, 4225, 5000] {
            for (x, z) in [(0, 0), (-1, 31), (7, -3), (i32::MIN, i32::MAX)] {
                let cur = Near { d2, pos: ColumnPos::new(x, z) };
                let rest: Vec<Near> = g.completed_near_to_far(c, r, Some(cur)).unwrap().collect();
                let want: Vec<Near> = all.iter().copied().filter(|n| *n > cur).collect();
                assert_eq!(rest, want, "cursor {cur:?}");
            }
        }
    }
}
