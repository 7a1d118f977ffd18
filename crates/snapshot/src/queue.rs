//! The restore queue: snapshot restores processed each tick under a time budget.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::Error;
use crate::snapshot::{RestoreCursor, RestoreStats, Snapshot};
use crate::world::ChunkAccess;

/// A monotonic clock; injectable so tests can drive the budget deterministically.
pub trait Clock {
    /// Time since an arbitrary fixed epoch.
    fn now(&self) -> Duration;
}

impl<C: Clock + ?Sized> Clock for std::rc::Rc<C> {
    fn now(&self) -> Duration {
        (**self).now()
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now(&self) -> Duration {
        (**self).now()
    }
}

/// The real clock ([`Instant`]).
#[derive(Clone, Copy, Debug)]
pub struct StdClock(Instant);

impl Default for StdClock {
    fn default() -> Self {
        Self(Instant::now())
    }
}

impl Clock for StdClock {
    fn now(&self) -> Duration {
        self.0.elapsed()
    }
}

/// A fake clock for tests: every [`now`](Clock::now) call returns the current time and then
/// advances it by `step`; [`advance`](Self::advance) moves it by hand. Clones share the time.
#[derive(Clone, Debug, Default)]
pub struct FakeClock {
    nanos: Arc<AtomicU64>,
    step: u64,
}

impl FakeClock {
    /// A clock at 0 that advances by `step` on each read.
    pub fn new(step: Duration) -> Self {
        Self { nanos: Arc::default(), step: step.as_nanos() as u64 }
    }

    /// Moves the clock forward.
    pub fn advance(&self, d: Duration) {
        self.nanos.fetch_add(d.as_nanos() as u64, Ordering::Relaxed);
    }

    /// The current time, without advancing.
    pub fn peek(&self) -> Duration {
        Duration::from_nanos(self.nanos.load(Ordering::Relaxed))
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.fetch_add(self.step, Ordering::Relaxed))
    }
}

/// Queue settings; see each field for its default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueueConfig {
    /// Time allowed per [`tick`](RestoreQueue::tick) (default 30 ms, 60 % of a 50 ms tick).
    pub budget: Duration,
    /// Chunks requested from the world and not yet released, over all operations (default 16).
    pub max_chunks_in_flight: usize,
    /// Blocks restored between two clock reads (default 1024): bounds the overshoot to the
    /// time of that many blocks.
    pub check_every: u32,
}

impl Default for QueueConfig {
    fn default() -> Self {
        Self { budget: Duration::from_millis(30), max_chunks_in_flight: 16, check_every: 1024 }
    }
}

/// Identifies a queued operation.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpId(pub u64);

/// Where an operation stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Progress {
    /// The operation.
    pub op: OpId,
    /// Blocks visited so far.
    pub blocks_done: u64,
    /// Blocks in the snapshot.
    pub blocks_total: u64,
    /// Sub-regions completed.
    pub regions_done: u64,
    /// Sub-regions in the snapshot.
    pub regions_total: u64,
    /// Blocks written so far (fewer than visited in a diff restore).
    pub blocks_written: u64,
}

/// What one tick did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TickReport {
    /// Blocks visited this tick.
    pub blocks: u64,
    /// Operations completed (successfully or not) this tick.
    pub completed: usize,
    /// Time spent, by the queue's clock.
    pub elapsed: Duration,
    /// `true` when the tick stopped because the budget was spent.
    pub budget_exhausted: bool,
}

struct Op<B> {
    id: OpId,
    snapshot: Arc<Snapshot>,
    cursor: RestoreCursor<B>,
    /// Sub-regions `cursor.region..requested` have been requested from the world.
    requested: usize,
    total: u64,
}

type ProgressFn = Box<dyn FnMut(&Progress) + Send>;
type CompleteFn = Box<dyn FnMut(OpId, Result<RestoreStats, Error>) + Send>;

/// Restores queued snapshots a slice at a time: each [`tick`](Self::tick) works through the
/// operations in order until the time budget is spent, keeps at most
/// [`max_chunks_in_flight`](QueueConfig::max_chunks_in_flight) chunks requested, and stops
/// mid-chunk if need be; the next tick resumes at the exact block. The queue is `Send` when
/// the world's block type and the clock are (callbacks must be `Send`).
pub struct RestoreQueue<W: ChunkAccess, C: Clock = StdClock> {
    ops: VecDeque<Op<W::Block>>,
    config: QueueConfig,
    clock: C,
    in_flight: usize,
    next_id: u64,
    on_progress: Option<ProgressFn>,
    on_complete: Option<CompleteFn>,
}

impl<W: ChunkAccess, C: Clock> fmt::Debug for RestoreQueue<W, C> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RestoreQueue")
            .field("ops", &self.ops.len())
            .field("config", &self.config)
            .field("in_flight", &self.in_flight)
            .finish()
    }
}

impl<W: ChunkAccess> RestoreQueue<W, StdClock> {
    /// A queue with the real clock.
    pub fn new(config: QueueConfig) -> Self {
        Self::with_clock(config, StdClock::default())
    }
}

impl<W: ChunkAccess, C: Clock> RestoreQueue<W, C> {
    /// A queue with an injected clock.
    pub fn with_clock(config: QueueConfig, clock: C) -> Self {
        Self {
            ops: VecDeque::new(),
            config: QueueConfig {
                check_every: config.check_every.max(1),
                max_chunks_in_flight: config.max_chunks_in_flight.max(1),
                ..config
            },
            clock,
            in_flight: 0,
            next_id: 0,
            on_progress: None,
            on_complete: None,
        }
    }

    /// Called after each tick for every operation that made progress.
    pub fn on_progress(&mut self, f: impl FnMut(&Progress) + Send + 'static) {
        self.on_progress = Some(Box::new(f));
    }

    /// Called once per operation when it finishes or fails.
    pub fn on_complete(
        &mut self,
        f: impl FnMut(OpId, Result<RestoreStats, Error>) + Send + 'static,
    ) {
        self.on_complete = Some(Box::new(f));
    }

    /// Queues a restore of `snapshot`; with `diff`, only differing blocks are written.
    pub fn push(&mut self, snapshot: Arc<Snapshot>, diff: bool) -> OpId {
        let id = OpId(self.next_id);
        self.next_id += 1;
        let total = RestoreCursor::<W::Block>::total(&snapshot);
        self.ops.push_back(Op {
            id,
            snapshot,
            cursor: RestoreCursor::new(diff),
            requested: 0,
            total,
        });
        id
    }

    /// Number of operations not yet complete.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// `true` when nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// Chunks currently requested and not released.
    pub fn chunks_in_flight(&self) -> usize {
        self.in_flight
    }

    /// The progress of a queued operation.
    pub fn progress(&self, id: OpId) -> Option<Progress> {
        self.ops.iter().find(|o| o.id == id).map(progress_of)
    }

    /// Processes operations until the budget is spent or nothing is ready.
    pub fn tick(&mut self, world: &mut W) -> TickReport {
        let start = self.clock.now();
        let deadline = start + self.config.budget;
        let check_every = self.config.check_every;
        let mut report = TickReport::default();
        let mut since_check = 0u32;
        let mut i = 0;
        'ops: while i < self.ops.len() {
            let op = &mut self.ops[i];
            let regions = op.snapshot.region_count();
            let before = op.cursor.stats.visited;
            let mut failed = None;
            loop {
                // Keep the window of requested chunks full.
                while op.requested < regions && self.in_flight < self.config.max_chunks_in_flight {
                    let r = op.snapshot.region(op.requested).expect("in range");
                    world.request_chunk(r.chunk);
                    op.requested += 1;
                    self.in_flight += 1;
                }
                if op.cursor.done(&op.snapshot) || op.cursor.region >= op.requested {
                    break;
                }
                let r = op.snapshot.region(op.cursor.region).expect("in range");
                if !world.chunk_ready(r.chunk) {
                    break; // next operation; this one waits for its chunk
                }
                let region_before = op.cursor.region;
                match op.cursor.step(&op.snapshot, world, check_every - since_check) {
                    Ok(n) => {
                        since_check += n;
                        report.blocks += n as u64;
                    }
                    Err(e) => {
                        failed = Some(e);
                        break;
                    }
                }
                if op.cursor.region != region_before {
                    world.release_chunk(r.chunk);
                    self.in_flight -= 1;
                }
                if since_check >= check_every {
                    since_check = 0;
                    if self.clock.now() >= deadline {
                        report.budget_exhausted = true;
                        if op.cursor.stats.visited != before {
                            notify(&mut self.on_progress, op);
                        }
                        if op.cursor.done(&op.snapshot) {
                            self.finish(i, world, None);
                            report.completed += 1;
                        }
                        break 'ops;
                    }
                }
            }
            let op = &mut self.ops[i];
            if op.cursor.stats.visited != before {
                notify(&mut self.on_progress, op);
            }
            if failed.is_some() || op.cursor.done(&op.snapshot) {
                self.finish(i, world, failed);
                report.completed += 1;
            } else {
                i += 1;
            }
        }
        report.elapsed = self.clock.now().saturating_sub(start);
        report
    }

    /// Removes operation `i`, releases its chunks and reports its completion.
    fn finish(&mut self, i: usize, world: &mut W, err: Option<Error>) {
        let op = self.ops.remove(i).expect("in range");
        for k in op.cursor.region..op.requested {
            if let Some(r) = op.snapshot.region(k) {
                world.release_chunk(r.chunk);
                self.in_flight -= 1;
            }
        }
        if let Some(f) = &mut self.on_complete {
            f(
                op.id,
                match err {
                    Some(e) => Err(e),
                    None => Ok(op.cursor.stats),
                },
            );
        }
    }
}

fn progress_of<B>(op: &Op<B>) -> Progress {
    Progress {
        op: op.id,
        blocks_done: op.cursor.stats.visited,
        blocks_total: op.total,
        regions_done: op.cursor.stats.regions,
        regions_total: op.snapshot.region_count() as u64,
        blocks_written: op.cursor.stats.written,
    }
}

fn notify<B>(f: &mut Option<ProgressFn>, op: &Op<B>) {
    if let Some(f) = f {
        f(&progress_of(op));
    }
}
