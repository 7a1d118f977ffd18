//! Large discs (compactness, exact counts far beyond what an oracle enumerates) and threads.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use terrane_distance::{ColumnPos, DistanceGraph, SharedDistanceGraph};

fn disc(c: ColumnPos, r: i32) -> impl Iterator<Item = ColumnPos> {
    let r2 = r as i64 * r as i64;
    (c.z - r..=c.z + r).flat_map(move |z| {
        (c.x - r..=c.x + r).filter_map(move |x| {
            let (dx, dz) = ((x - c.x) as i64, (z - c.z) as i64);
            (dx * dx + dz * dz <= r2).then_some(ColumnPos::new(x, z))
        })
    })
}

#[test]
fn completed_disc_of_1_3_million_chunks() {
    let c = ColumnPos::new(-300, 1000);
    let mut g = DistanceGraph::new();
    let mut n = 0u64;
    for p in disc(c, 643) {
        assert!(g.insert(p).unwrap());
        n += 1;
    }
    assert!(n > 1_290_000, "{n}");
    assert_eq!(g.len(), n);
    assert_eq!(DistanceGraph::disc_size(c, 643).unwrap(), n);
    assert_eq!(g.count_completed(c, 643).unwrap(), n);
    assert_eq!(g.count_missing(c, 643).unwrap(), 0);
    assert_eq!(g.nearest_incomplete(c, 643, |_| false).unwrap(), None);
    // Just outside: the rim.
    let hit = g.nearest_incomplete(c, 700, |_| false).unwrap().unwrap();
    assert!(hit.d2 > 643 * 643 && hit.d2 <= 644 * 644 + 2 * 644, "{hit:?}");
    for p in hit.chunks() {
        assert!(!g.contains(p));
    }
    // Counts at a radius far beyond the set.
    assert_eq!(g.count_completed(ColumnPos::new(0, 0), 100_000).unwrap(), n);
    assert_eq!(
        g.count_missing(ColumnPos::new(0, 0), 100_000).unwrap(),
        DistanceGraph::disc_size(ColumnPos::new(0, 0), 100_000).unwrap() - n
    );
    // Compact: under 10 KB serialised, tens of KB in memory.
    let bytes = g.to_bytes();
    assert!(bytes.len() < 10_000, "{} bytes", bytes.len());
    assert!(g.memory_bytes() < 64 * 1024, "{} bytes", g.memory_bytes());
    g.check_invariants().unwrap();
    // The iterator: first items, near to far, and a count.
    let first: Vec<_> = g.completed_near_to_far(c, 643, None).unwrap().take(5).collect();
    assert_eq!(first[0].pos, c);
    assert!(first.windows(2).all(|w| w[0] < w[1]) && first[4].d2 == 1);
    let tail = g.completed_near_to_far(c, 643, Some(first[4])).unwrap().take(3).count();
    assert_eq!(tail, 3);
    // Removing everything again leaves nothing allocated.
    for p in disc(c, 643) {
        assert!(g.remove(p).unwrap());
    }
    assert!(g.is_empty());
    assert_eq!(g.node_count(), (0, 0));
    assert_eq!(g.to_bytes(), DistanceGraph::new().to_bytes());
}

#[test]
fn huge_radii_and_edges_of_the_range() {
    let g = DistanceGraph::new();
    let m = terrane_distance::MAX_COORD;
    let corner = ColumnPos::new(m, -m);
    let hit = g.nearest_incomplete(corner, u32::MAX, |_| false).unwrap().unwrap();
    // The whole batch is missing except its row z = -2^30, outside the valid range.
    assert_eq!((hit.d2, hit.batch, hit.missing), (0, ColumnPos::new(m >> 2, -m >> 2), 0xFFF0));
    // Excluding the corner's batch (which spans z = -m - 1 ..= -m + 2, the first row out of
    // range), the next batch starts 3 rows up.
    let hit = g
        .nearest_incomplete(corner, 10, |b| b == ColumnPos::new(m >> 2, -m >> 2))
        .unwrap()
        .unwrap();
    assert_eq!((hit.d2, hit.batch), (9, ColumnPos::new(m >> 2, (-m >> 2) + 1)));
    // The disc is clipped to the valid range: a quarter disc at the corner.
    let quarter = DistanceGraph::disc_size(corner, 3).unwrap();
    assert_eq!(quarter, 11);
    let side = 2 * m as u64 + 1;
    assert_eq!(DistanceGraph::disc_size(ColumnPos::new(0, 0), u32::MAX).unwrap(), side * side);
    assert_eq!(g.count_missing(corner, 3).unwrap(), 11);
}

#[test]
fn threads_complete_while_workers_claim() {
    let players = [
        (ColumnPos::new(0, 0), 24u32),
        (ColumnPos::new(40, -10), 20),
        (ColumnPos::new(-2050, 2047), 12),
    ];
    let shared = Arc::new(SharedDistanceGraph::new(DistanceGraph::new()));
    let handed: Arc<Mutex<Vec<ColumnPos>>> = Arc::default();
    let mut workers = Vec::new();
    for w in 0..4 {
        let shared = Arc::clone(&shared);
        let handed = Arc::clone(&handed);
        workers.push(std::thread::spawn(move || {
            let mut pending: Vec<ColumnPos> = Vec::new();
            loop {
                match shared.claim_nearest_any(&players).unwrap() {
                    Some((_, hit)) => {
                        let chunks: Vec<_> = hit.chunks().collect();
                        handed.lock().unwrap().extend(&chunks);
                        pending.extend(chunks);
                    }
                    None if pending.is_empty() => break,
                    None => {
                        shared.complete_many(pending.drain(..)).unwrap();
                    }
                }
                // Complete out of order: every other round, the newest half first.
                if pending.len() > 8 || w % 2 == 0 {
                    let half = pending.len() / 2;
                    let done: Vec<_> = pending.drain(half..).rev().collect();
                    shared.complete_many(done).unwrap();
                }
                if pending.len() > 32 {
                    shared.complete_many(pending.drain(..)).unwrap();
                }
            }
        }));
    }
    for w in workers {
        w.join().unwrap();
    }
    let handed = handed.lock().unwrap();
    let unique: HashSet<_> = handed.iter().collect();
    assert_eq!(unique.len(), handed.len(), "a chunk was handed to two workers");
    let want: HashSet<ColumnPos> = players.iter().flat_map(|&(c, r)| disc(c, r as i32)).collect();
    assert_eq!(unique.len(), want.len());
    assert_eq!(shared.len(), want.len() as u64);
    assert_eq!(shared.claimed_chunks(), 0);
    for &(c, r) in &players {
        assert_eq!(shared.count_missing(c, r).unwrap(), 0);
    }
    let g = Arc::try_unwrap(shared).unwrap().into_inner();
    g.check_invariants().unwrap();
}
