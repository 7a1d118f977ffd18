//! Many threads adding and removing chunks while others tick and release regions; invariants
//! and the exact chunk set checked at quiescent points.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use terrane_regionizer::{NoCallbacks, Regionizer, RegionizerConfig};
use terrane_section::ColumnPos;

fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    }
}

fn stress(cfg: RegionizerConfig, span: i64) {
    const ADDERS: u64 = 3;
    const TICKERS: u64 = 2;
    let rz: Arc<Regionizer<ColumnPos, ()>> = Arc::new(Regionizer::new(cfg, NoCallbacks));
    let mut owned: Vec<BTreeSet<ColumnPos>> = vec![BTreeSet::new(); ADDERS as usize];
    for round in 0..3u64 {
        let adders_left = Arc::new(AtomicUsize::new(ADDERS as usize));
        let mut handles = Vec::new();
        for (t, mine) in owned.iter_mut().enumerate() {
            let rz = Arc::clone(&rz);
            let mut mine = std::mem::take(mine);
            let adders_left = Arc::clone(&adders_left);
            handles.push(thread::spawn(move || {
                let mut next = rng(round * 31 + t as u64 + 1);
                for _ in 0..2500 {
                    // Chunks of thread t: (x + z) mod ADDERS == t, so threads share sections.
                    let x = (next() % (2 * span as u64)) as i64 - span;
                    let mut z = (next() % (2 * span as u64)) as i64 - span;
                    z += (t as i64 - (x + z).rem_euclid(ADDERS as i64)).rem_euclid(ADDERS as i64);
                    let p = ColumnPos::new(x as i32, z as i32);
                    if mine.remove(&p) {
                        rz.remove_chunk(p).expect("remove of a chunk this thread loaded");
                    } else {
                        rz.add_chunk(p).expect("add of a chunk this thread does not hold");
                        mine.insert(p);
                    }
                }
                adders_left.fetch_sub(1, Ordering::Release);
                mine
            }));
        }
        let mut tickers = Vec::new();
        for t in 0..TICKERS {
            let rz = Arc::clone(&rz);
            let adders_left = Arc::clone(&adders_left);
            tickers.push(thread::spawn(move || {
                let mut next = rng(1000 + round * 7 + t);
                let (mut ticked, mut refused) = (0u64, 0u64);
                // At least 1500 attempts, and on until every adder is done and something was
                // ticked, so ticking overlaps the adds however the threads are scheduled.
                let mut attempts = 0u64;
                while attempts < 1500
                    || adders_left.load(Ordering::Acquire) > 0
                    || (ticked == 0 && attempts < 1_000_000)
                {
                    attempts += 1;
                    let x = (next() % (2 * span as u64)) as i64 - span;
                    let z = (next() % (2 * span as u64)) as i64 - span;
                    let Some(id) = rz.owner_of_chunk(ColumnPos::new(x as i32, z as i32)) else {
                        continue;
                    };
                    if rz.try_mark_ticking(id).expect("ids from lookups are known") {
                        ticked += 1;
                        thread::yield_now();
                        rz.mark_not_ticking(id).expect("release of a region this thread ticks");
                    } else {
                        refused += 1;
                    }
                }
                (ticked, refused)
            }));
        }
        for (slot, h) in owned.iter_mut().zip(handles) {
            *slot = h.join().expect("adder thread");
        }
        let mut ticked = 0;
        for h in tickers {
            ticked += h.join().expect("ticker thread").0;
        }
        assert!(ticked > 0, "tickers ticked something");
        // Quiescent point.
        rz.check_invariants().unwrap_or_else(|e| panic!("round {round}: {e}"));
        let all: BTreeSet<ColumnPos> = owned.iter().flatten().copied().collect();
        assert_eq!(
            rz.loaded_chunks().unwrap(),
            all.iter().copied().collect::<Vec<_>>(),
            "nothing lost"
        );
        for p in &all {
            assert!(rz.owner_of_chunk(*p).is_some_and(|id| rz.region(id).is_some()));
        }
    }
    // Drain: unload everything, tick every region until the world is empty.
    for p in owned.iter().flatten() {
        rz.remove_chunk(*p).unwrap();
    }
    for _ in 0..4 {
        for id in rz.region_ids().unwrap() {
            if rz.try_mark_ticking(id).unwrap() {
                rz.mark_not_ticking(id).unwrap();
            }
        }
    }
    rz.check_invariants().unwrap();
    assert_eq!(rz.section_count(), 0, "every section purged");
    assert_eq!(rz.region_count(), 0);
}

#[test]
fn concurrent_adds_removes_and_ticks_shift2() {
    stress(RegionizerConfig::folia_shift2(), 40);
}

#[test]
fn concurrent_adds_removes_and_ticks_small_sections() {
    let cfg = RegionizerConfig::builder()
        .shift(1)
        .create_radius(1)
        .merge_radius(1)
        .recalc_count(2)
        .max_dead_fraction(0.1)
        .build()
        .unwrap();
    stress(cfg, 24);
}
