//! The tick scheduler: independent regions tick at the same time (they meet at a barrier
//! that one thread alone could never pass), merges/splits between ticks are handled, new
//! regions get scheduled, and stats are observable. No timing asserts: timeouts only turn a
//! hang into a failure.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use terrane_regionizer::{NoCallbacks, RegionState, RegionizerConfig, Scheduler, SchedulerConfig};
use terrane_section::ColumnPos;

/// A barrier whose wait gives up after a timeout (returns false) instead of hanging.
struct TimeoutBarrier {
    n: usize,
    state: Mutex<usize>,
    cv: Condvar,
}

impl TimeoutBarrier {
    fn new(n: usize) -> Self {
        Self { n, state: Mutex::new(0), cv: Condvar::new() }
    }
    fn wait(&self, timeout: Duration) -> bool {
        let mut arrived = self.state.lock().unwrap();
        *arrived += 1;
        if *arrived >= self.n {
            self.cv.notify_all();
            return true;
        }
        let (g, res) = self.cv.wait_timeout_while(arrived, timeout, |a| *a < self.n).unwrap();
        drop(g);
        !res.timed_out()
    }
}

fn wait_until(limit: Duration, mut f: impl FnMut() -> bool) -> bool {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if f() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    f()
}

#[test]
fn independent_regions_tick_concurrently() {
    let barrier = Arc::new(TimeoutBarrier::new(2));
    let attempts = Arc::new(AtomicUsize::new(0));
    let met = Arc::new(AtomicUsize::new(0));
    let failed = Arc::new(AtomicBool::new(false));
    let (b, a, m, f) =
        (Arc::clone(&barrier), Arc::clone(&attempts), Arc::clone(&met), Arc::clone(&failed));
    let sched: Scheduler<ColumnPos, ()> = Scheduler::start(
        RegionizerConfig::folia_shift4(),
        SchedulerConfig::default().workers(2).target_tps(20.0),
        NoCallbacks,
        move |_ctx| {
            // The first tick of each of the two regions must meet the other one's: only
            // possible when both run at the same time.
            if a.fetch_add(1, Ordering::SeqCst) < 2 {
                if b.wait(Duration::from_secs(20)) {
                    m.fetch_add(1, Ordering::SeqCst);
                } else {
                    f.store(true, Ordering::SeqCst);
                }
            }
        },
    );
    let rz = Arc::clone(sched.regionizer());
    rz.add_chunk(ColumnPos::new(0, 0)).unwrap();
    rz.add_chunk(ColumnPos::new(10_000, 10_000)).unwrap();
    assert_eq!(rz.region_count(), 2);
    assert!(wait_until(Duration::from_secs(30), || met.load(Ordering::SeqCst) == 2
        || failed.load(Ordering::SeqCst)));
    assert!(!failed.load(Ordering::SeqCst), "a region tick waited alone at the barrier");
    assert_eq!(met.load(Ordering::SeqCst), 2);
    // Both keep ticking afterwards, with stats.
    assert!(wait_until(Duration::from_secs(30), || sched.ticks() >= 6));
    for id in rz.region_ids().unwrap() {
        let s = rz.region(id).unwrap().stats();
        assert!(s.ticks >= 1 && s.total_duration >= s.last_duration, "{s:?}");
    }
    sched.shutdown().unwrap();
}

#[test]
fn ticks_follow_their_deadlines_at_the_target_rate() {
    // 50 ticks/s: each region's consecutive deadlines are at least one period apart, and no
    // tick starts before its deadline (ordering facts, not timing bounds).
    let period = Duration::from_millis(20);
    let seen = Arc::new(Mutex::new(std::collections::BTreeMap::new()));
    let early = Arc::new(AtomicBool::new(false));
    let (s2, e2) = (Arc::clone(&seen), Arc::clone(&early));
    let sched: Scheduler<ColumnPos, ()> = Scheduler::start(
        RegionizerConfig::folia_shift4(),
        SchedulerConfig::default().workers(2).target_tps(50.0),
        NoCallbacks,
        move |ctx| {
            if Instant::now() < ctx.deadline() {
                e2.store(true, Ordering::SeqCst);
            }
            s2.lock().unwrap().entry(ctx.id()).or_insert_with(Vec::new).push(ctx.deadline());
        },
    );
    assert_eq!(sched.regionizer().region_count(), 0);
    for i in 0..3 {
        sched.regionizer().add_chunk(ColumnPos::new(i * 5000, 0)).unwrap();
    }
    assert!(wait_until(Duration::from_secs(30), || {
        let s = seen.lock().unwrap();
        s.len() == 3 && s.values().all(|v| v.len() >= 4)
    }));
    sched.shutdown().unwrap();
    assert!(!early.load(Ordering::SeqCst), "a tick started before its deadline");
    for (id, deadlines) in seen.lock().unwrap().iter() {
        for w in deadlines.windows(2) {
            assert!(w[1] >= w[0] + period, "{id}: deadlines closer than one period");
        }
    }
}

#[test]
fn aligned_schedules_share_one_tick_grid() {
    // With `align_to_grid`, regions that become READY at different moments still tick at the
    // same grid points: every deadline differs from every other by a whole number of periods.
    let period = Duration::from_millis(20);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = Arc::clone(&seen);
    let sched: Scheduler<ColumnPos, ()> = Scheduler::start(
        RegionizerConfig::folia_shift4(),
        SchedulerConfig::default().workers(2).tick_period(period).align_to_grid(true),
        NoCallbacks,
        move |ctx| s2.lock().unwrap().push((ctx.id(), ctx.deadline())),
    );
    for i in 0..3 {
        sched.regionizer().add_chunk(ColumnPos::new(i * 5000, 0)).unwrap();
        std::thread::sleep(Duration::from_millis(7));
    }
    assert!(wait_until(Duration::from_secs(30), || {
        let s = seen.lock().unwrap();
        let ids: std::collections::BTreeSet<_> = s.iter().map(|t| t.0).collect();
        ids.len() == 3 && s.len() >= 12
    }));
    sched.shutdown().unwrap();
    let seen = seen.lock().unwrap();
    let first = seen.iter().map(|t| t.1).min().unwrap();
    for (id, d) in seen.iter() {
        let off = d.duration_since(first).as_nanos();
        assert_eq!(off % period.as_nanos(), 0, "{id}: deadline off the grid by {off} ns");
    }
}

#[test]
fn churn_between_ticks_keeps_every_region_scheduled() {
    let ticks_seen = Arc::new(AtomicUsize::new(0));
    let t = Arc::clone(&ticks_seen);
    let sched: Scheduler<ColumnPos, ()> = Scheduler::start(
        RegionizerConfig::folia_shift2(),
        SchedulerConfig::default().workers(2).tick_period(Duration::ZERO),
        NoCallbacks,
        move |ctx| {
            assert_eq!(ctx.region().state(), RegionState::Ticking);
            assert!(ctx.data().is_ok());
            // A tick may load chunks: near ones land in transient regions.
            let _ = ctx.regionizer().owner_of_chunk(ColumnPos::new(0, 0));
            t.fetch_add(1, Ordering::Relaxed);
        },
    );
    let rz = Arc::clone(sched.regionizer());
    let mut s = 99u64;
    let mut loaded = std::collections::BTreeSet::new();
    for _ in 0..4000 {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let p = ColumnPos::new((s % 120) as i32 - 60, ((s >> 24) % 120) as i32 - 60);
        if loaded.remove(&p) {
            rz.remove_chunk(p).unwrap();
        } else {
            rz.add_chunk(p).unwrap();
            loaded.insert(p);
        }
    }
    // Churn stopped: every live region gets ticked (new ones were scheduled by on_active),
    // and dead sections are eventually purged by the ticks.
    let before: Vec<_> = rz.region_ids().unwrap();
    assert!(!before.is_empty());
    let ok = wait_until(Duration::from_secs(30), || {
        rz.region_ids()
            .unwrap()
            .iter()
            .all(|&id| rz.region(id).is_some_and(|r| r.stats().ticks >= 2))
    });
    assert!(ok, "a live region was never ticked");
    assert_eq!(sched.panics(), 0);
    let ticks = sched.ticks();
    assert!(ticks > 0 && ticks_seen.load(Ordering::Relaxed) as u64 >= ticks - 2);
    let rz2 = Arc::clone(&rz);
    sched.shutdown().unwrap();
    rz2.check_invariants().unwrap();
    for id in rz2.region_ids().unwrap() {
        assert_ne!(rz2.region(id).unwrap().state(), RegionState::Ticking, "released at shutdown");
    }
    assert_eq!(rz2.loaded_chunks().unwrap().len(), loaded.len());
}

#[test]
fn failed_releases_are_counted_not_swallowed() {
    let leaked = Arc::new(AtomicBool::new(false));
    let l2 = Arc::clone(&leaked);
    let sched: Scheduler<ColumnPos, ()> = Scheduler::start(
        RegionizerConfig::folia_shift4(),
        SchedulerConfig::default().workers(1).target_tps(50.0),
        NoCallbacks,
        move |ctx| {
            // Leak the data guard once: the region's release then fails with DataLocked.
            if !l2.swap(true, Ordering::SeqCst) {
                std::mem::forget(ctx.data().expect("ticking region's data"));
            }
        },
    );
    assert_eq!(sched.release_errors(), (0, None));
    sched.regionizer().add_chunk(ColumnPos::new(0, 0)).unwrap();
    assert!(wait_until(Duration::from_secs(20), || sched.release_errors().0 == 1), "counted");
    let (count, last) = sched.release_errors();
    assert_eq!(count, 1);
    assert!(last.is_some_and(|m| m.contains("lock")), "the error says why");
    let id = sched.regionizer().owner_of_chunk(ColumnPos::new(0, 0)).unwrap();
    assert_eq!(sched.regionizer().region(id).unwrap().state(), RegionState::Ticking);
    // The parking_lot mutex stays locked forever; the scheduler itself shuts down cleanly.
    sched.shutdown().unwrap();
}
