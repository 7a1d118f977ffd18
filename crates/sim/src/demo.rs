//! The demo: one world, end to end. Players walk and load the columns around them, a
//! pre-generator fills a disc nearest first, regions tick in parallel, every tick saves one
//! atomic batch, idle chunks move down the tiers, and an arena is captured, damaged and
//! restored under a time budget per tick.

use std::fs;
use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use serde::Serialize;
use terrane::cluster::TieredStoreBuilder;
use terrane::worldgen::hills::{self as terrain, Palette};
use terrane::{Backend, LoadedColumns, RegionizerConfig, SchedulerConfig, World};

use crate::demo_loop;
use crate::region_tick::{Shared, region_tick};
use crate::soak::{SoakConfig, SoakRow, SoakVerdict};
use crate::{Error, Event, Result};

/// The demo's settings; [`DemoConfig::DEFAULT`] gives each default.
#[derive(Clone, Debug, PartialEq)]
pub struct DemoConfig {
    /// Replace the location when it already holds a terrane world (never anything else; a
    /// PostgreSQL world's store is dropped). Default `false`.
    pub replace: bool,
    /// The storage backend of the new world. Default `None`: terrane's default backend
    /// (RocksDB when built).
    pub backend: Option<Backend>,
    /// Terrain seed. Default 42.
    pub seed: u64,
    /// Game ticks to simulate (more run while the pre-generator or a restore finishes).
    /// Default 300.
    pub ticks: u64,
    /// Target ticks per second of the main loop and of the region scheduler (0: no pacing).
    /// Default 50.
    pub tps: f64,
    /// Simulated players. Default 4.
    pub players: usize,
    /// View (simulation) distance in chunks: columns within it are loaded around each
    /// player. Default 4.
    pub view: i64,
    /// Players walk within this many blocks of spawn: they start spread on a circle of 0.8
    /// times it, in separate regions, and head across spawn, where their regions merge.
    /// Default 640.
    pub walk: f64,
    /// Player speed in blocks per tick. Default 2.5.
    pub speed: f64,
    /// Radius in chunks of the disc the pre-generator fills around spawn. Default 20.
    pub pregen_radius: u32,
    /// Pre-generator worker threads. Default 2.
    pub pregen_threads: usize,
    /// Region scheduler worker threads. Default 2.
    pub workers: usize,
    /// Regionizer section shift (Folia's presets: 4 or 2). Default 2.
    pub region_shift: u32,
    /// Simulated work per region tick (entities, redstone), in microseconds of CPU.
    /// Default 1,500.
    pub region_work_us: u64,
    /// Arena edge in blocks (x and z; 24 blocks high). Default 48.
    pub arena: u32,
    /// Time budget per tick for the arena restore, in milliseconds. Default 30.
    pub restore_budget_ms: f64,
    /// Play as a soak instead of for `ticks`. Default `None`.
    pub soak: Option<SoakConfig>,
}

impl DemoConfig {
    /// Every setting at its default.
    pub const DEFAULT: DemoConfig = DemoConfig {
        replace: false,
        backend: None,
        seed: 42,
        ticks: 300,
        tps: 50.0,
        players: 4,
        view: 4,
        walk: 640.0,
        speed: 2.5,
        pregen_radius: 20,
        pregen_threads: 2,
        workers: 2,
        region_shift: 2,
        region_work_us: 1500,
        arena: 48,
        restore_budget_ms: 30.0,
        soak: None,
    };
}

impl Default for DemoConfig {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// What the demo measured.
#[derive(Serialize, Debug, Default, Clone)]
#[non_exhaustive]
pub struct DemoSummary {
    /// The world's directory or connection string.
    pub dir: String,
    /// The backend's name.
    pub backend: String,
    /// The terrain seed.
    pub seed: u64,
    /// Ticks run.
    pub ticks: u64,
    /// Wall time of the whole run, seconds.
    pub wall_seconds: f64,
    /// Chunks generated (by the pre-generator, by loads and for the arena).
    pub chunks_generated: u64,
    /// Columns generated.
    pub columns_generated: u64,
    /// Generation speed: chunks per second of generating time.
    pub generation_chunks_per_sec: f64,
    /// How long the pre-generator took to fill its disc, seconds.
    pub pregen_seconds: f64,
    /// Columns the pre-generator generated and the main loop saved.
    pub pregen_columns: u64,
    /// Chunks loaded around players (each one a regionizer add).
    pub player_chunk_loads: u64,
    /// Chunks unloaded behind players (each one a regionizer remove).
    pub player_chunk_unloads: u64,
    /// Tick saves (one atomic batch each).
    pub tick_saves: u64,
    /// Mean tick-save time, milliseconds.
    pub save_mean_ms: f64,
    /// Longest tick save, milliseconds.
    pub save_max_ms: f64,
    /// Tick saves per second of saving time.
    pub saves_per_sec: f64,
    /// Region ticks run by the scheduler's workers.
    pub region_ticks: u64,
    /// Blocks changed by region ticks.
    pub region_edits: u64,
    /// Most region ticks seen running at the same time.
    pub max_parallel_region_ticks: usize,
    /// (tick, regions) samples.
    pub regions_over_time: Vec<(u64, usize)>,
    /// Chunks maintenance moved from the hot to the warm level.
    pub maintenance_l0_to_l1: u64,
    /// Clusters maintenance moved from the warm to the cold level.
    pub maintenance_l1_to_l2: u64,
    /// Chunks per level (hot, warm, cold) at the end.
    pub level_chunks: [usize; 3],
    /// Value bytes per level at the end.
    pub level_bytes: [u64; 3],
    /// Bytes the world takes on disk.
    pub disk_bytes: u64,
    /// Blocks in the arena.
    pub arena_blocks: u64,
    /// Time to capture the arena's snapshot, milliseconds.
    pub arena_capture_ms: f64,
    /// Blocks the explosion changed.
    pub arena_damaged_blocks: u64,
    /// Blocks the restore wrote.
    pub restore_blocks_written: u64,
    /// Ticks the restore took.
    pub restore_ticks: u64,
    /// Time the restore took in all, milliseconds.
    pub restore_ms: f64,
    /// The restore's longest slice in one tick, milliseconds.
    pub restore_max_tick_ms: f64,
    /// The restore's budget per tick, milliseconds.
    pub restore_budget_ms: f64,
    /// The restored arena is identical to its snapshot.
    pub restore_exact: bool,
    /// In a soak: a row per interval.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub soak: Vec<SoakRow>,
    /// In a soak: the verdict.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soak_verdict: Option<SoakVerdict>,
}

/// Runs the demo on a new world at `location` (a directory, or a PostgreSQL connection
/// string with [`Backend::Postgres`]); returns what it measured. Progress goes to
/// `on_event` ([`Event::Pregenerated`], [`Event::Ticked`]).
///
/// The location must not exist, be empty, or hold a world creation that was cut off;
/// a terrane world there is replaced only with [`DemoConfig::replace`]. The world is left
/// closed, with its regionizer history in `regions.log` beside it (a directory only).
pub fn run(
    location: &Path,
    config: &DemoConfig,
    mut on_event: impl FnMut(Event<'_>),
) -> Result<DemoSummary> {
    let started = Instant::now();
    prepare_location(location, config.replace)?;
    let schema = terrain::schema();
    let palette = Palette::of(&schema).expect("the demo schema registers its blocks");
    let seed = config.seed;
    let shared = Arc::new(Shared {
        loaded: RwLock::new(LoadedColumns::with_heights(move |c| {
            0..terrain::top_layer(seed, c) + 1
        })),
        players: RwLock::new(Vec::new()),
        edits: Default::default(),
        sampled: Default::default(),
        running: Default::default(),
        max_running: Default::default(),
        palette,
        seed: config.seed,
        work: Duration::from_micros(config.region_work_us),
    });
    let rz_config = match config.region_shift {
        4 => RegionizerConfig::folia_shift4(),
        2 => RegionizerConfig::folia_shift2(),
        s => RegionizerConfig::builder()
            .shift(s)
            .build()
            .map_err(|e| Error::Setting(format!("region shift {s}: {e}")))?,
    };
    let tick_shared = shared.clone();
    let mut world = World::builder()
        .backend(config.backend.unwrap_or_default())
        .schema(schema.clone())
        .regionizer(rz_config)
        .tick_regions(
            SchedulerConfig::default()
                .workers(config.workers)
                .target_tps(config.tps)
                .align_to_grid(true),
            move |ctx| region_tick(&tick_shared, ctx),
        )
        // Demo-sized demotion: unloaded chunks go warm after 2 s, clusters cold after 6 s
        // idle or 16 chunks from every player.
        .tiers(|b: TieredStoreBuilder| {
            b.l0_idle_ticks(100).l1_idle_ticks(300).l1_distance_blocks(256)
        })
        .create(location)?;
    let result = demo_loop::simulate(location, config, &mut world, &shared, palette, &mut on_event);
    let close = world.close();
    let mut summary = result?;
    close?;
    // Reopen read-only for the numbers the next commands will see.
    let world = World::open_read_only(location)?;
    let info = world.info()?;
    summary.level_chunks = info.levels.chunks;
    summary.level_bytes = info.levels.bytes;
    summary.disk_bytes = info.disk_bytes;
    summary.wall_seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

/// Makes `location` ready for a new world: an existing terrane world there is removed when
/// `replace` is set; anything else but nothing, an empty directory or a cut-off creation is
/// refused.
fn prepare_location(dir: &Path, replace: bool) -> Result<()> {
    if terrane::connection_string(dir).is_some() {
        // A PostgreSQL world: replacing drops its schema (only a terrane store's); without
        // it, creating over an existing world fails.
        if !replace {
            return Ok(());
        }
        return match World::remove(dir) {
            Ok(()) | Err(terrane::Error::Store(terrane::store::Error::NotFound(_))) => Ok(()),
            Err(e) => Err(e.into()),
        };
    }
    if !dir.exists()
        || fs::read_dir(dir).map_err(|e| Error::io(dir, e))?.next().is_none()
        || World::is_unfinished_creation(dir)
    {
        // Empty, or a creation that was cut off: `create` takes it over.
        return Ok(());
    }
    if !replace {
        return Err(Error::NotEmpty(dir.to_path_buf()));
    }
    World::remove(dir).map_err(|e| match e {
        terrane::Error::NotAWorld(_) => Error::NotAWorld(dir.to_path_buf()),
        e => e.into(),
    })
}
