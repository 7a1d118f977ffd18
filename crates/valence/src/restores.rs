//! Restores from a backup into the world a server is playing: an area or a box goes back to
//! a backup between two ticks, and the players viewing it are sent its columns again.
//!
//! A running server holds its world's only writer, so a restore into a served world is the
//! server's own work: a [`LiveRestoreRequest`] reaches it through a [`LiveRestoreHandle`] (or the
//! control socket, [`crate::control`]), and [`TerraneWorld::restore`] carries it out between
//! two ticks.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Mutex;
use std::sync::mpsc::{Receiver, Sender, channel};

use serde::{Deserialize, Serialize};
use terrane::backup::{BackupContents, Repo};
use terrane::section::AreaId;
use terrane::worldgen::flat::{HEIGHT, MIN_Y};
use terrane::{AreaRestoreReport, BlockBox, BlockPos, BoxRestoreReport, Refusal, game};
use valence::inventory::OpenInventory;
use valence::prelude::*;

use crate::Dimension;
use crate::containers::{self, Containers};
use crate::plugin::{DimensionLayers, Saved, TerraneLayer};
use crate::world::{SaveParts, TerraneWorld};
use crate::{Error, Result};

/// What to restore from a backup repository into the served world.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "restore", rename_all = "snake_case")]
#[non_exhaustive]
pub enum LiveRestoreRequest {
    /// One area (256 × 256 blocks, every height) of dimension `dim`, as
    /// [`World::restore_area`](terrane::World::restore_area) restores it: its chunks,
    /// entities and containers' records, in one atomic batch.
    Area {
        /// The backup repository (an absolute path: the server may run elsewhere).
        repo: PathBuf,
        /// The backup; `None` for the newest.
        at: Option<u64>,
        /// The dimension (0 the Overworld, 1 the Nether, 2 the End).
        dim: u64,
        /// Area x (block x div 256).
        x: i32,
        /// Area z (block z div 256).
        z: i32,
    },
    /// The blocks of a box of the Overworld, as
    /// [`World::restore_box`](terrane::World::restore_box) restores them, in one save: within
    /// the served height (y −64..319), at most [`MAX_BOX_CHUNKS`] chunks.
    Box {
        /// The backup repository (an absolute path).
        repo: PathBuf,
        /// The backup; `None` for the newest.
        at: Option<u64>,
        /// One corner, `[x, y, z]`.
        from: [i64; 3],
        /// The opposite corner.
        to: [i64; 3],
    },
}

impl LiveRestoreRequest {
    fn repo(&self) -> &PathBuf {
        match self {
            LiveRestoreRequest::Area { repo, .. } | LiveRestoreRequest::Box { repo, .. } => repo,
        }
    }

    fn at(&self) -> Option<u64> {
        match self {
            LiveRestoreRequest::Area { at, .. } | LiveRestoreRequest::Box { at, .. } => *at,
        }
    }

    /// Why the server refuses the request before touching anything: a box beyond the
    /// served height (y −64..319) or of more than [`MAX_BOX_CHUNKS`] chunks.
    fn refusal(&self) -> Option<Refusal> {
        let LiveRestoreRequest::Box { from, to, .. } = self else { return None };
        let b = bbox(*from, *to);
        let (lo, hi) = (i64::from(MIN_Y), i64::from(MIN_Y) + i64::from(HEIGHT) - 1);
        if b.min().y < lo || b.max().y > hi {
            return Some(Refusal::BeyondHeight { lo, hi });
        }
        let (c0, c1) = (b.min().chunk(), b.max().chunk());
        let span = |lo: i64, hi: i64| i128::from(hi) - i128::from(lo) + 1;
        let chunks = span(c0.x, c1.x) * span(c0.y, c1.y) * span(c0.z, c1.z);
        (chunks > i128::from(MAX_BOX_CHUNKS)).then(|| Refusal::BoxTooBig {
            chunks: u64::try_from(chunks).unwrap_or(u64::MAX),
            max: MAX_BOX_CHUNKS,
        })
    }

    /// The dimension the restore writes into (the Overworld for a dimension the server does
    /// not serve: no column of it is loaded).
    fn dimension(&self) -> Dimension {
        match self {
            LiveRestoreRequest::Area { dim, .. } => {
                Dimension::from_id(*dim).unwrap_or(Dimension::Overworld)
            }
            LiveRestoreRequest::Box { .. } => Dimension::Overworld,
        }
    }

    /// The dimension and the areas the restore writes into (none of a dimension the server
    /// does not serve); a box is the Overworld's.
    fn areas(&self) -> (Dimension, BTreeSet<AreaId>) {
        match self {
            LiveRestoreRequest::Area { dim, x, z, .. } => match Dimension::from_id(*dim) {
                Some(d) => (d, BTreeSet::from([AreaId::new(*x, *z)])),
                None => (Dimension::Overworld, BTreeSet::new()),
            },
            LiveRestoreRequest::Box { from, to, .. } => (
                Dimension::Overworld,
                bbox(*from, *to).sub_regions().map(|r| AreaId::of_chunk(r.chunk)).collect(),
            ),
        }
    }
}

/// The most chunks a box restored into a served world may touch (a tick waits for it):
/// four areas' worth of columns, every served height.
pub const MAX_BOX_CHUNKS: u64 = 4 * 256 * 24;

fn bbox(from: [i64; 3], to: [i64; 3]) -> BlockBox {
    BlockBox::new(BlockPos::new(from[0], from[1], from[2]), BlockPos::new(to[0], to[1], to[2]))
}

/// What a restore into the served world wrote, as the world reported it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "restored", rename_all = "snake_case")]
#[non_exhaustive]
pub enum LiveRestoreReport {
    /// An area ([`terrane::AreaRestoreReport`]).
    Area {
        /// The backup restored.
        backup: u64,
        /// The world tick the backup holds.
        backup_tick: u64,
        /// Objects of the area the world held before.
        objects_before: u64,
        /// Objects written from the backup.
        objects_written: u64,
        /// Bytes of their values.
        bytes_written: u64,
        /// Objects the backup does not hold, removed.
        objects_removed: u64,
        /// Objects that held the backup's bytes already.
        objects_unchanged: u64,
        /// Columns generated since the backup, to be generated again.
        columns_regenerated: u64,
        /// Loaded columns sent again to the players viewing them.
        columns_resent: u64,
    },
    /// A box's blocks ([`terrane::BoxRestoreReport`]).
    Box {
        /// The backup restored.
        backup: u64,
        /// The world tick the backup holds.
        backup_tick: u64,
        /// Chunks the box touches.
        chunks: u64,
        /// Of them, chunks written.
        chunks_written: u64,
        /// Blocks set back to the backup's.
        blocks_changed: u64,
        /// Loaded columns sent again to the players viewing them.
        columns_resent: u64,
    },
}

/// A restore carried out by [`TerraneWorld::restore`].
#[derive(Debug)]
pub struct LiveRestored {
    /// What the restore wrote, or why it wrote nothing (the backup is missing or damaged,
    /// the area is leased elsewhere): the world is as before and the server plays on.
    pub outcome: std::result::Result<LiveRestoreReport, terrane::Error>,
    /// Whether the changes made before it were saved first, as the tick given (durable once
    /// [`TerraneWorld::take_landed`] reports it: send [`Saved`] then).
    pub saved: bool,
    /// The dimension restored.
    pub dimension: Dimension,
    /// The loaded columns of the restored areas, as the world holds them now: show them in
    /// the dimension's layer (`ChunkLayer::insert_chunk` sends a column again to its viewers).
    pub columns: Vec<(ChunkPos, UnloadedChunk)>,
}

impl TerraneWorld {
    /// Restores `request` from its backup at tick `tick`, between two ticks:
    ///
    /// 1. what changed is saved first (one tick save, as `tick`), so nothing acknowledged
    ///    or pending outside the restore is lost;
    /// 2. the loaded columns of the areas it writes are unloaded from terrane (the world
    ///    refuses to restore a loaded area);
    /// 3. the world restores the area or box (one atomic batch or tick save);
    /// 4. those columns are loaded again and returned, for the layer to show.
    ///
    /// An area restore brings its containers' records back too: close their open
    /// inventories first, or their contents are staged over the restored ones (the plugin
    /// does). `Err` only when the world failed (a save, a load): the server must stop.
    pub fn restore(&mut self, tick: u64, request: &LiveRestoreRequest) -> Result<LiveRestored> {
        if let Some(why) = request.refusal() {
            let (outcome, dimension) = (Err(why.into()), request.dimension());
            return Ok(LiveRestored { outcome, saved: false, dimension, columns: Vec::new() });
        }
        let (dimension, areas) = request.areas();
        let saved = self.save_parts(tick, SaveParts::All)?;
        let columns = self.loaded_columns_in(dimension, &areas);
        for &(x, z) in &columns {
            self.unload_column(dimension, x, z)?;
        }
        if let LiveRestoreRequest::Area { dim, x, z, .. } = *request {
            self.forget_records(|key| game::container_in_area(key, dim, AreaId::new(x, z)));
        }
        let outcome = restore_world(self.world_mut(), request);
        // Answered once what it wrote is durable, like a save.
        self.world_mut().settle_saves()?;
        let mut shown = Vec::with_capacity(columns.len());
        for (x, z) in columns {
            shown.push((ChunkPos::new(x, z), self.load_column(dimension, x, z)?));
        }
        let outcome = outcome.map(|r| r.resent(shown.len() as u64));
        Ok(LiveRestored { outcome, saved, dimension, columns: shown })
    }
}

/// The world's part of a restore: open the backup, restore into `world`.
fn restore_world(
    world: &mut terrane::World,
    request: &LiveRestoreRequest,
) -> terrane::Result<LiveRestoreReport> {
    let repo = Repo::open(request.repo())?;
    let id = match request.at() {
        Some(id) => id,
        None => repo.latest()?.ok_or_else(|| {
            terrane::Error::from(Refusal::NoBackupYet(request.repo().to_path_buf()))
        })?,
    };
    let contents = repo.contents(id)?;
    Ok(match *request {
        LiveRestoreRequest::Area { dim, x, z, .. } => LiveRestoreReport::of_area(
            &contents,
            &world.restore_area(&contents, dim, AreaId::new(x, z))?,
        ),
        LiveRestoreRequest::Box { from, to, .. } => {
            LiveRestoreReport::of_box(&contents, &world.restore_box(&contents, bbox(from, to))?)
        }
    })
}

impl LiveRestoreReport {
    /// The report of [`World::restore_area`](terrane::World::restore_area) restoring
    /// `backup` (no column sent again).
    pub fn of_area(backup: &BackupContents<'_>, r: &AreaRestoreReport) -> Self {
        LiveRestoreReport::Area {
            backup: backup.id(),
            backup_tick: backup.tick(),
            objects_before: r.objects_before,
            objects_written: r.objects_written,
            bytes_written: r.bytes_written,
            objects_removed: r.objects_removed,
            objects_unchanged: r.objects_unchanged,
            columns_regenerated: r.columns_regenerated,
            columns_resent: 0,
        }
    }

    /// The report of [`World::restore_box`](terrane::World::restore_box) restoring `backup`
    /// (no column sent again).
    pub fn of_box(backup: &BackupContents<'_>, r: &BoxRestoreReport) -> Self {
        LiveRestoreReport::Box {
            backup: backup.id(),
            backup_tick: backup.tick(),
            chunks: r.chunks,
            chunks_written: r.chunks_written,
            blocks_changed: r.blocks_changed,
            columns_resent: 0,
        }
    }

    fn resent(mut self, n: u64) -> Self {
        match &mut self {
            LiveRestoreReport::Area { columns_resent, .. }
            | LiveRestoreReport::Box { columns_resent, .. } => *columns_resent = n,
        }
        self
    }
}

/// A restore waiting for the server, and where its answer goes.
type Job = (LiveRestoreRequest, Sender<Result<LiveRestoreReport>>);

/// Hands [`LiveRestoreRequest`]s to a running server ([`TerranePlugin::restore_handle`]); it
/// carries each out between two ticks.
///
/// [`TerranePlugin::restore_handle`]: crate::TerranePlugin::restore_handle
#[derive(Clone, Debug)]
pub struct LiveRestoreHandle {
    jobs: Sender<Job>,
}

impl LiveRestoreHandle {
    /// Asks the server to restore `request`; blocks until it did ([`Error::RestoreRefused`]
    /// when it changed nothing, [`Error::ServerFailed`] when it failed meanwhile), or until
    /// it stopped without doing it ([`Error::ServerGone`]).
    pub fn restore(&self, request: LiveRestoreRequest) -> Result<LiveRestoreReport> {
        let (tx, rx) = channel();
        self.jobs.send((request, tx)).map_err(|_| Error::ServerGone)?;
        rx.recv().map_err(|_| Error::ServerGone)?
    }
}

/// The restores waiting for the server: the plugin's resource.
#[derive(Resource)]
pub(crate) struct LiveRestoreJobs {
    jobs: Mutex<Receiver<Job>>,
}

/// A queue and the handle that fills it.
pub(crate) fn queue() -> (LiveRestoreHandle, LiveRestoreJobs) {
    let (tx, rx) = channel();
    (LiveRestoreHandle { jobs: tx }, LiveRestoreJobs { jobs: Mutex::new(rx) })
}

/// Carries out the restores asked for since the last tick, after the tick's save.
#[allow(clippy::too_many_arguments)]
pub(crate) fn serve(
    mut commands: Commands,
    queue: Res<LiveRestoreJobs>,
    mut layers: Query<&mut ChunkLayer, With<TerraneLayer>>,
    dimension_layers: Res<DimensionLayers>,
    mut tw: ResMut<TerraneWorld>,
    mut open: ResMut<Containers>,
    viewers: Query<(Entity, &OpenInventory)>,
    server: Res<Server>,
    mut saved: EventWriter<Saved>,
) {
    // Left queued when the server is failing: they end unanswered as it stops.
    if tw.failed() {
        return;
    }
    let jobs: Vec<Job> = match queue.jobs.lock() {
        Ok(rx) => rx.try_iter().collect(),
        Err(_) => return,
    };
    for (request, answer) in jobs {
        if let LiveRestoreRequest::Area { dim, x, z, .. } = request {
            // Their records come back from the backup: the open inventories close, so their
            // contents are read again from the world at the next use.
            containers::forget(&mut commands, &mut open, &viewers, |(d, p)| {
                d.id() == dim && (p.x >> 8, p.z >> 8) == (x, z)
            });
        }
        let tick = tw.tick_of(server.current_tick());
        match tw.restore(tick, &request) {
            Ok(r) => {
                crate::plugin::send_landed(&mut tw, &mut saved);
                if let Ok(mut layer) = layers.get_mut(dimension_layers.of(r.dimension)) {
                    for (pos, column) in r.columns {
                        if layer.chunk(pos).is_some() {
                            layer.insert_chunk(pos, column);
                        }
                    }
                }
                let _ = answer.send(r.outcome.map_err(|e| Error::RestoreRefused(e.to_string())));
            }
            Err(e) => {
                let _ = answer.send(Err(Error::ServerFailed(e.to_string())));
                return tw.fail(e);
            }
        }
    }
}
