//! The demo's arena: a box east of the walking area, captured as a snapshot, blown up, and
//! restored through a restore queue within a time budget per tick.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::time::Duration;

use terrane::{BlockBox, BlockPos, QueueConfig, RestoreQueue};

use crate::demo::DemoConfig;

/// Ticks between the end of a restore and the next damage, in a soak.
pub(crate) const SOAK_ARENA_EVERY: u64 = 200;

/// The arena: captured, damaged, then restored through the queue under the tick budget.
pub(crate) struct Arena {
    /// The arena's blocks.
    pub(crate) bounds: BlockBox,
    /// Edge in blocks (x and z).
    pub(crate) edge: i64,
    /// Ticks after the first at which the arena is captured, and damaged.
    pub(crate) capture_tick: u64,
    pub(crate) damage_tick: u64,
    /// The arena's chunks and their snapshot, once captured.
    pub(crate) world: Option<terrane::ChunkWorld>,
    pub(crate) snapshot: Option<Arc<terrane::Snapshot>>,
    pub(crate) queue: RestoreQueue<terrane::ChunkWorld>,
    /// Set by the queue when the restore completes, with the blocks it wrote.
    pub(crate) restore_done: Arc<AtomicBool>,
    pub(crate) restore_written: Arc<AtomicU64>,
    /// Whether a restore is under way, and the tick it started.
    pub(crate) restore_pending: bool,
    pub(crate) restore_first_tick: u64,
}

impl Arena {
    /// Places the arena and sets its capture and damage ticks; nothing is loaded yet.
    pub(crate) fn new(config: &DemoConfig, walk: f64) -> Arena {
        // Arena: east of the walking area, inside the pre-generated disc when it is big enough.
        let edge = i64::from(config.arena.max(4));
        let ax = (walk as i64 + config.view * 16 + 32).max(64);
        let bounds = BlockBox::new(
            BlockPos::new(ax, 56, -edge / 2),
            BlockPos::new(ax + edge - 1, 79, edge / 2 - 1),
        );
        let capture_tick = (config.ticks / 5).max(2);
        Arena {
            bounds,
            edge,
            capture_tick,
            damage_tick: capture_tick + 10,
            world: None,
            snapshot: None,
            queue: RestoreQueue::new(QueueConfig {
                budget: Duration::from_secs_f64(config.restore_budget_ms / 1000.0),
                ..QueueConfig::default()
            }),
            restore_done: Arc::new(AtomicBool::new(false)),
            restore_written: Arc::new(AtomicU64::new(0)),
            restore_pending: false,
            restore_first_tick: 0,
        }
    }
}

/// Every block position of `b`.
pub(crate) fn arena_positions(b: BlockBox) -> impl Iterator<Item = BlockPos> {
    let (min, max) = (b.min(), b.max());
    (min.y..=max.y).flat_map(move |y| {
        (min.z..=max.z).flat_map(move |z| (min.x..=max.x).map(move |x| BlockPos::new(x, y, z)))
    })
}
