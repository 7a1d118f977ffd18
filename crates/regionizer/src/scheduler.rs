//! A parallel tick scheduler: every READY region ticks on a pool of worker threads at a
//! target rate, earliest deadline first.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, MappedMutexGuard, Mutex};
use terrane_section::GridPos;

use crate::{Callbacks, Error, Region, RegionData, RegionId, Regionizer, RegionizerConfig, Result};

/// Scheduler parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SchedulerConfig {
    workers: usize,
    period: Duration,
    aligned: bool,
}

impl Default for SchedulerConfig {
    /// 2 workers, 20 ticks per second (a 50 ms period), schedules not aligned.
    fn default() -> Self {
        Self { workers: 2, period: Duration::from_millis(50), aligned: false }
    }
}

impl SchedulerConfig {
    /// Worker threads (default 2, at least 1).
    pub fn workers(mut self, n: usize) -> Self {
        self.workers = n.max(1);
        self
    }
    /// Target ticks per second per region (default 20). Non-finite or non-positive values
    /// mean "as fast as possible" (a zero period).
    pub fn target_tps(mut self, tps: f64) -> Self {
        self.period = if tps.is_finite() && tps > 0.0 {
            Duration::from_secs_f64(1.0 / tps)
        } else {
            Duration::ZERO
        };
        self
    }
    /// The tick period directly (zero: as fast as possible).
    pub fn tick_period(mut self, period: Duration) -> Self {
        self.period = period;
        self
    }
    /// Starts every region's schedule on one shared tick grid (multiples of the period since
    /// the scheduler started), so that the regions due in the same game tick start it
    /// together on the workers, as in a server that ticks its world at tick boundaries.
    /// Default `false`: a region's schedule starts when it becomes READY (as in Folia), so
    /// regions tick at independent phases.
    pub fn align_to_grid(mut self, aligned: bool) -> Self {
        self.aligned = aligned;
        self
    }
    /// Worker threads.
    pub fn worker_count(&self) -> usize {
        self.workers
    }
    /// The tick period.
    pub fn period(&self) -> Duration {
        self.period
    }
}

/// What a tick function sees.
pub struct TickContext<'a, P: GridPos, D: RegionData<P>> {
    regionizer: &'a Regionizer<P, D>,
    region: &'a Region<D>,
    deadline: Instant,
}

impl<P: GridPos, D: RegionData<P>> TickContext<'_, P, D> {
    /// The region being ticked (TICKING for the whole call).
    pub fn region(&self) -> &Region<D> {
        self.region
    }
    /// Its id.
    pub fn id(&self) -> RegionId {
        self.region.id()
    }
    /// The regionizer, e.g. to load or unload chunks from the tick (its section set stays
    /// frozen until the tick ends; new nearby sections go to transient regions).
    pub fn regionizer(&self) -> &Regionizer<P, D> {
        self.regionizer
    }
    /// The region's data (drop the guard before the tick function returns).
    ///
    /// # Errors
    /// Never in practice (the region is TICKING while its tick runs).
    pub fn data(&self) -> Result<MappedMutexGuard<'_, D>> {
        self.region.lock_data()
    }
    /// When this tick was due.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }
}

struct Queue {
    heap: BinaryHeap<Reverse<(Instant, u64, RegionId)>>,
    seq: u64,
}

struct SchedShared {
    /// With `align_to_grid`, the start of the tick grid and its period.
    grid: Option<(Instant, Duration)>,
    queue: Mutex<Queue>,
    cv: Condvar,
    stop: AtomicBool,
    ticks: AtomicU64,
    panics: AtomicU64,
    release_errors: AtomicU64,
    last_release_error: Mutex<Option<String>>,
}

impl SchedShared {
    /// The first deadline of a region that becomes READY at `now`: `now`, or with a grid the
    /// first grid point at or after it.
    fn first_deadline(&self, now: Instant) -> Instant {
        match self.grid {
            Some((epoch, period)) => grid_point(epoch, period, now),
            None => now,
        }
    }

    fn push(&self, at: Instant, id: RegionId) {
        let mut q = self.queue.lock();
        q.seq += 1;
        let s = q.seq;
        q.heap.push(Reverse((at, s, id)));
        drop(q);
        self.cv.notify_one();
    }
}

/// Forwards every callback to the user's and schedules regions that become active.
struct SchedCallbacks<P: GridPos, D> {
    user: Box<dyn Callbacks<P, D>>,
    shared: Arc<SchedShared>,
}

impl<P: GridPos, D: 'static> Callbacks<P, D> for SchedCallbacks<P, D> {
    fn new_data(&self, region: RegionId) -> D {
        self.user.new_data(region)
    }
    fn on_create(&self, region: RegionId) {
        self.user.on_create(region);
    }
    fn on_destroy(&self, region: RegionId) {
        self.user.on_destroy(region);
    }
    fn on_active(&self, region: RegionId) {
        self.user.on_active(region);
        self.shared.push(self.shared.first_deadline(Instant::now()), region);
    }
    fn on_inactive(&self, region: RegionId) {
        self.user.on_inactive(region);
    }
    fn pre_merge(&self, from: RegionId, into: RegionId) {
        self.user.pre_merge(from, into);
    }
    fn pre_split(&self, from: RegionId, into: &[RegionId]) {
        self.user.pre_split(from, into);
    }
}

/// The tick scheduler: owns a [`Regionizer`] whose `on_active` callback queues new READY
/// regions, and worker threads that tick them.
///
/// Each worker pops the region with the earliest deadline, waits for the deadline, calls
/// `try_mark_ticking` (a region that became TRANSIENT or died meanwhile is dropped from the
/// queue: it will be absorbed, and the regions that replace it are queued by `on_active`),
/// runs the tick function, records the duration and lag ([`Region::stats`]), and calls
/// `mark_not_ticking`; when that returns true the region is queued again one period after
/// its previous deadline (ticks missed by more than 5 periods are skipped, not replayed).
/// A region found TICKING by someone else (ticked by hand) keeps its slot: it is looked at
/// again one period later, counted from now when its deadline is already that far behind.
/// A panicking tick function is caught and counted ([`panics`](Self::panics)); the region is
/// still released. A release that fails is counted too ([`release_errors`](Self::release_errors)).
pub struct Scheduler<P: GridPos, D: RegionData<P>> {
    rz: Arc<Regionizer<P, D>>,
    shared: Arc<SchedShared>,
    workers: Vec<JoinHandle<()>>,
}

impl<P: GridPos, D: RegionData<P>> std::fmt::Debug for Scheduler<P, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field("workers", &self.workers.len())
            .field("ticks", &self.ticks())
            .finish()
    }
}

impl<P: GridPos, D: RegionData<P>> Scheduler<P, D> {
    /// Creates the regionizer (with `callbacks` wrapped) and starts the workers, which run
    /// `tick` for every READY region at the configured rate.
    pub fn start<F>(
        config: RegionizerConfig,
        scheduler: SchedulerConfig,
        callbacks: impl Callbacks<P, D>,
        tick: F,
    ) -> Self
    where
        F: Fn(&TickContext<'_, P, D>) + Send + Sync + 'static,
    {
        let shared = Arc::new(SchedShared {
            grid: scheduler.aligned.then(|| (Instant::now(), scheduler.period)),
            queue: Mutex::new(Queue { heap: BinaryHeap::new(), seq: 0 }),
            cv: Condvar::new(),
            stop: AtomicBool::new(false),
            ticks: AtomicU64::new(0),
            panics: AtomicU64::new(0),
            release_errors: AtomicU64::new(0),
            last_release_error: Mutex::new(None),
        });
        let cbs = SchedCallbacks { user: Box::new(callbacks), shared: Arc::clone(&shared) };
        let rz = Arc::new(Regionizer::with_boxed_callbacks(config, Box::new(cbs)));
        let tick = Arc::new(tick);
        let period = scheduler.period;
        let workers = (0..scheduler.workers)
            .map(|i| {
                let (rz, shared, tick) = (Arc::clone(&rz), Arc::clone(&shared), Arc::clone(&tick));
                std::thread::Builder::new()
                    .name(format!("terrane-tick-{i}"))
                    .spawn(move || worker(&rz, &shared, &*tick, period))
                    .expect("spawn tick worker")
            })
            .collect();
        Self { rz, shared, workers }
    }

    /// The regionizer: load and unload chunks through it from any thread.
    pub fn regionizer(&self) -> &Arc<Regionizer<P, D>> {
        &self.rz
    }

    /// Ticks completed so far, over all regions.
    pub fn ticks(&self) -> u64 {
        self.shared.ticks.load(Ordering::Relaxed)
    }

    /// Tick functions that panicked.
    pub fn panics(&self) -> u64 {
        self.shared.panics.load(Ordering::Relaxed)
    }

    /// Ends of ticks whose `mark_not_ticking` failed, and the last such error. A region whose
    /// release failed (for example [`Error::DataLocked`]: another thread held its data guard
    /// past the tick) stays TICKING and out of the schedule until it is released by hand;
    /// `(0, None)` in a healthy server.
    pub fn release_errors(&self) -> (u64, Option<String>) {
        (
            self.shared.release_errors.load(Ordering::Relaxed),
            self.shared.last_release_error.lock().clone(),
        )
    }

    /// Regions waiting in the queue (some may have died since they were queued).
    pub fn queued(&self) -> usize {
        self.shared.queue.lock().heap.len()
    }

    /// Stops the workers after their current tick and joins them.
    ///
    /// # Errors
    /// [`Error::Poisoned`] when a worker thread panicked outside a tick function (a bug).
    pub fn shutdown(mut self) -> Result<()> {
        self.stop()
    }

    fn stop(&mut self) -> Result<()> {
        self.shared.stop.store(true, Ordering::Release);
        {
            let _q = self.shared.queue.lock();
            self.shared.cv.notify_all();
        }
        let mut ok = true;
        for h in self.workers.drain(..) {
            ok &= h.join().is_ok();
        }
        if ok { Ok(()) } else { Err(Error::Poisoned) }
    }
}

impl<P: GridPos, D: RegionData<P>> Drop for Scheduler<P, D> {
    fn drop(&mut self) {
        let _ = self.stop();
    }
}

/// The first point of the grid `epoch + k × period` at or after `now` (`now` for a zero
/// period).
fn grid_point(epoch: Instant, period: Duration, now: Instant) -> Instant {
    if period.is_zero() {
        return now;
    }
    let steps = now.saturating_duration_since(epoch).as_nanos().div_ceil(period.as_nanos());
    epoch + Duration::from_nanos(u64::try_from(steps * period.as_nanos()).unwrap_or(u64::MAX))
}

/// When to look again at a region someone else holds TICKING (ticked by hand): one period
/// (at least 1 ms) after its deadline, which keeps its place in the earliest-deadline-first
/// order while it is late by less than that; otherwise one period from `now`. Always after
/// `now`, so a deadline long past (the workers were busy meanwhile) is not popped, retried
/// under the write lock and re-queued in the past over and over until it catches up.
fn retry_at(deadline: Instant, period: Duration, now: Instant) -> Instant {
    let step = period.max(Duration::from_millis(1));
    let next = deadline + step;
    if next > now { next } else { now + step }
}

fn worker<P: GridPos, D: RegionData<P>>(
    rz: &Regionizer<P, D>,
    sh: &SchedShared,
    tick: &(dyn Fn(&TickContext<'_, P, D>) + Send + Sync),
    period: Duration,
) {
    loop {
        let (deadline, id) = {
            let mut q = sh.queue.lock();
            loop {
                if sh.stop.load(Ordering::Acquire) {
                    return;
                }
                match q.heap.peek() {
                    None => sh.cv.wait(&mut q),
                    Some(&Reverse((at, _, id))) => {
                        if at <= Instant::now() {
                            q.heap.pop();
                            break (at, id);
                        }
                        sh.cv.wait_until(&mut q, at);
                    }
                }
            }
        };
        if !matches!(rz.try_mark_ticking(id), Ok(true)) {
            // Someone else is ticking it by hand: keep its slot. TRANSIENT or DEAD: drop it
            // (it will be absorbed; its successors are queued by `on_active`).
            if rz.region(id).is_some_and(|r| r.state() == crate::RegionState::Ticking) {
                sh.push(retry_at(deadline, period, Instant::now()), id);
            }
            continue;
        }
        let Some(region) = rz.region(id) else { continue };
        let start = Instant::now();
        let ctx = TickContext { regionizer: rz, region: &region, deadline };
        if catch_unwind(AssertUnwindSafe(|| tick(&ctx))).is_err() {
            sh.panics.fetch_add(1, Ordering::Relaxed);
        }
        let now = Instant::now();
        region.record_tick(now - start, start.saturating_duration_since(deadline));
        sh.ticks.fetch_add(1, Ordering::Relaxed);
        match rz.mark_not_ticking(id) {
            Ok(true) => {
                let mut next = deadline + period;
                if next + period * 5 < now {
                    next = sh.first_deadline(now);
                }
                sh.push(next, id);
            }
            Ok(false) => {}
            Err(e) => {
                sh.release_errors.fetch_add(1, Ordering::Relaxed);
                *sh.last_release_error.lock() = Some(e.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_points_round_up_to_the_period() {
        let e = Instant::now();
        let p = Duration::from_millis(20);
        assert_eq!(grid_point(e, p, e), e);
        assert_eq!(grid_point(e, p, e + Duration::from_millis(1)), e + p);
        assert_eq!(grid_point(e, p, e + p), e + p);
        assert_eq!(grid_point(e, p, e + p * 7 + Duration::from_nanos(1)), e + p * 8);
        assert_eq!(grid_point(e, Duration::ZERO, e + p), e + p);
    }

    /// Pops of a queue entry held by hand (each one a `try_mark_ticking` under the write lock)
    /// before its retry lies in the future, with the clock standing still at `now`: what the
    /// worker loop does when it finds an old entry. A pure count, no timing.
    fn pops(deadline: Instant, period: Duration, now: Instant) -> u32 {
        let (mut at, mut n) = (deadline, 0);
        while at <= now {
            n += 1;
            assert!(n <= 1_000, "busy-spin re-queueing in the past");
            at = retry_at(at, period, now);
        }
        n
    }

    #[test]
    fn hand_held_region_is_not_retried_in_a_loop() {
        let t0 = Instant::now();
        let p = Duration::from_millis(50);
        // Late by less than a period: keeps its deadline-based slot (EDF order unchanged).
        assert_eq!(retry_at(t0, p, t0 + Duration::from_millis(30)), t0 + p);
        assert_eq!(retry_at(t0, p, t0), t0 + p);
        // Late by a period or more: one period from now, never in the past.
        let late = t0 + Duration::from_secs(10);
        assert_eq!(retry_at(t0, p, late), late + p);
        assert_eq!(retry_at(t0, p, t0 + p), t0 + 2 * p);
        // A zero period still waits at least 1 ms.
        let ms = Duration::from_millis(1);
        assert_eq!(retry_at(t0, Duration::ZERO, late), late + ms);
        assert_eq!(retry_at(t0, Duration::ZERO, t0), t0 + ms);
        // An entry 10 s overdue is popped once, not 200 (or 10 000) times in a row.
        for period in [p, Duration::ZERO, Duration::from_secs(1)] {
            assert_eq!(pops(t0, period, late), 1, "{period:?}");
            assert!(retry_at(t0, period, late) > late);
        }
    }
}
