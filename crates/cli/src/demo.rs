//! `terrane demo`: the main job, end to end on one world.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use indicatif::ProgressBar;
use serde::Serialize;
use terrane::cluster::TieredStoreBuilder;
use terrane::snapshot::ChunkAccess as _;
use terrane::{
    Backend, BlockBox, BlockPos, Chunk, ChunkPos, ColumnPos, PlayerPos, QueueConfig,
    RegionizerConfig, RestoreQueue, SchedulerConfig, SharedDistanceGraph, TickContext, TickSave,
    Uuid, World,
};

use crate::{Fail, backend_arg};
use terrane::worldgen::hills::{self as terrain, Palette};

/// Flags of `terrane demo`.
#[derive(clap::Args, Debug, Clone)]
pub struct DemoArgs {
    /// The world directory to create (must not exist or be empty, see --force).
    #[arg(default_value = "terrane-demo-world")]
    pub dir: PathBuf,
    /// Run on a PostgreSQL store instead of DIR: a connection string
    /// (`postgres://user@host/db`, or `host=/run/postgresql dbname=worlds`).
    #[arg(long, value_name = "CONNECTION")]
    pub store: Option<String>,
    /// Replace DIR when it already holds a terrane world (never anything else).
    #[arg(long)]
    pub force: bool,
    /// Storage backend: rocksdb (default) or blockfile.
    #[arg(long, value_parser = backend_arg)]
    pub backend: Option<Backend>,
    /// Terrain seed.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Game ticks to simulate (more run while the pre-generator or a restore finishes).
    #[arg(long, default_value_t = 300)]
    pub ticks: u64,
    /// Target ticks per second of the main loop and of the region scheduler.
    #[arg(long, default_value_t = 50.0)]
    pub tps: f64,
    /// Simulated players.
    #[arg(long, default_value_t = 4)]
    pub players: usize,
    /// View (simulation) distance in chunks: columns within it are loaded around each player.
    #[arg(long, default_value_t = 4)]
    pub view: i64,
    /// Players walk within this many blocks of spawn: they start spread on a circle of 0.8
    /// times it, in separate regions, and head across spawn, where their regions merge.
    #[arg(long, default_value_t = 640.0)]
    pub walk: f64,
    /// Player speed in blocks per tick.
    #[arg(long, default_value_t = 2.5)]
    pub speed: f64,
    /// Radius in chunks of the disc the pre-generator fills around spawn.
    #[arg(long, default_value_t = 20)]
    pub pregen_radius: u32,
    /// Pre-generator worker threads.
    #[arg(long, default_value_t = 2)]
    pub pregen_threads: usize,
    /// Region scheduler worker threads.
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Regionizer section shift (Folia presets: 4 or 2).
    #[arg(long, default_value_t = 2)]
    pub region_shift: u32,
    /// Simulated work per region tick (entities, redstone), in microseconds of CPU.
    #[arg(long, default_value_t = 1500)]
    pub region_work_us: u64,
    /// Arena edge in blocks (x and z; 24 blocks high).
    #[arg(long, default_value_t = 48)]
    pub arena: u32,
    /// Time budget per tick for the arena restore, in milliseconds.
    #[arg(long, default_value_t = 30.0)]
    pub restore_budget_ms: f64,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// The soak's flags.
    #[command(flatten)]
    pub soak: SoakArgs,
    /// The flags of one server of a shared world.
    #[command(flatten)]
    pub shared: SharedArgs,
}

/// Flags of `terrane demo --minutes` (the soak).
#[derive(clap::Args, Debug, Clone)]
pub struct SoakArgs {
    /// Soak: play for this many minutes of wall time instead of --ticks (and on until a first
    /// arena restore is counted), damaging and restoring the arena again every 200 ticks; the
    /// summary adds a row per minute (tick-save p50 / p99 / max, resident memory, restores)
    /// and the soak goal's verdict (flat memory, a p99 that does not grow). `cargo xtask
    /// soak` runs it.
    #[arg(long, value_name = "MINUTES", help_heading = "Soak")]
    pub minutes: Option<f64>,
    /// Seconds per soak row (default 60: one row a minute).
    #[arg(long, default_value_t = 60.0, hide = true)]
    pub soak_row_seconds: f64,
}

/// Flags of `terrane demo --server N` (one server of a world shared by several).
#[derive(clap::Args, Debug, Clone)]
pub struct SharedArgs {
    /// Run as server N of a world shared by --servers game servers (needs --store): each
    /// leases its areas, saves fenced by them and hands walkers off to the others.
    #[arg(long, value_name = "N", help_heading = "Shared world")]
    pub server: Option<usize>,
    /// How many servers share the world (with --server).
    #[arg(long, default_value_t = 1, help_heading = "Shared world")]
    pub servers: usize,
    /// How long a shared-world server runs, in seconds (with --server).
    #[arg(long, default_value_t = 10.0, help_heading = "Shared world")]
    pub seconds: f64,
    /// Lease time to live in milliseconds (with --server): an area whose server stops
    /// renewing is taken over this long after its last renewal.
    #[arg(long, default_value_t = 3000, help_heading = "Shared world")]
    pub lease_ms: u64,
    /// Save every this many ticks (with --server).
    #[arg(long, default_value_t = 5, help_heading = "Shared world")]
    pub save_every: u64,
    /// Log every write attempt and its outcome to FILE, and store an audit object per save
    /// (with --server; for crash tests).
    #[arg(long, value_name = "FILE", help_heading = "Shared world")]
    pub log: Option<PathBuf>,
}

/// The state the region ticks share with the main loop.
struct Shared {
    /// Loaded chunks, by position.
    loaded: RwLock<HashMap<ChunkPos, Mutex<Chunk>>>,
    /// Chunks changed since the last save.
    dirty: Mutex<HashSet<ChunkPos>>,
    /// Player block positions.
    players: RwLock<Vec<BlockPos>>,
    /// Blocks changed by region ticks.
    edits: AtomicU64,
    /// Block random-ticks sampled by region ticks.
    sampled: AtomicU64,
    /// Region ticks running now, and the most seen at once.
    running: AtomicUsize,
    max_running: AtomicUsize,
    palette: Palette,
    seed: u64,
    /// CPU time each region tick spends on simulated work.
    work: Duration,
}

/// A region tick: for every player in the region, a few random block updates around them
/// (a builder placing cobblestone on the surface and taking it away again).
fn region_tick(shared: &Shared, ctx: &TickContext<'_, ChunkPos, ()>) {
    let now = shared.running.fetch_add(1, Ordering::SeqCst) + 1;
    shared.max_running.fetch_max(now, Ordering::SeqCst);
    let t = Instant::now();
    region_work(shared, ctx);
    // The rest of a game's region tick (entities, redstone, ...): busy work.
    let mut h = ctx.id().get();
    while t.elapsed() < shared.work {
        for _ in 0..256 {
            h = mix(h, 1, 2);
        }
    }
    std::hint::black_box(h);
    shared.running.fetch_sub(1, Ordering::SeqCst);
}

fn region_work(shared: &Shared, ctx: &TickContext<'_, ChunkPos, ()>) {
    let players = shared.players.read().expect("players lock").clone();
    let rz = ctx.regionizer();
    let loaded = shared.loaded.read().expect("loaded lock");
    for (i, p) in players.iter().enumerate() {
        if rz.owner_of_chunk(p.chunk()) != Some(ctx.id()) {
            continue;
        }
        let h = mix(shared.seed ^ ctx.region().stats().ticks, i as i64, p.x ^ p.z);
        // Random ticks: 64 cells of each chunk around the player (crops grow, grass spreads).
        let c = p.chunk();
        let mut sampled = 0;
        for (dx, dz) in
            [(-1, -1), (0, -1), (1, -1), (-1, 0), (0, 0), (1, 0), (-1, 1), (0, 1), (1, 1)]
        {
            let Some(cell) = loaded.get(&ChunkPos::new(c.x + dx, c.y, c.z + dz)) else { continue };
            let chunk = cell.lock().expect("chunk lock");
            let mut r = h;
            for _ in 0..64 {
                r = mix(r, dx, dz);
                let i = (r % 4096) as u16;
                if chunk.get_index(i) == shared.palette.grass {
                    sampled += 1;
                }
            }
        }
        shared.sampled.fetch_add(sampled + 1, Ordering::Relaxed);
        let dx = (h % 9) as i64 - 4;
        let dz = ((h >> 8) % 9) as i64 - 4;
        let (x, z) = (p.x + dx, p.z + dz);
        let y = terrain::height(shared.seed, x, z) + 1;
        let pos = BlockPos::new(x, y, z);
        let Some(cell) = loaded.get(&pos.chunk()) else { continue };
        let mut c = cell.lock().expect("chunk lock");
        let (lx, ly, lz) = pos.local();
        let next = if c.get(lx, ly, lz) == shared.palette.cobble {
            shared.palette.air
        } else if c.get(lx, ly, lz) == shared.palette.air {
            shared.palette.cobble
        } else {
            continue;
        };
        c.set(lx, ly, lz, next);
        drop(c);
        shared.edits.fetch_add(1, Ordering::Relaxed);
        shared.dirty.lock().expect("dirty lock").insert(pos.chunk());
    }
}

fn mix(a: u64, b: i64, c: i64) -> u64 {
    let mut h = a ^ 0x2545_F491_4F6C_DD1D;
    for v in [b as u64, c as u64] {
        h = (h ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 32;
    }
    h
}

/// A walking player.
struct Player {
    uuid: Uuid,
    x: f64,
    z: f64,
    heading: f64,
    chunk: ChunkPos,
}

impl Player {
    fn block(&self, seed: u64) -> BlockPos {
        let (x, z) = (self.x.floor() as i64, self.z.floor() as i64);
        BlockPos::new(x, terrain::height(seed, x, z) + 1, z)
    }
}

/// What the demo measured.
#[derive(Serialize, Debug, Default)]
pub struct Summary {
    pub dir: String,
    pub backend: String,
    pub seed: u64,
    pub ticks: u64,
    pub wall_seconds: f64,
    pub chunks_generated: u64,
    pub columns_generated: u64,
    pub generation_chunks_per_sec: f64,
    pub pregen_seconds: f64,
    pub pregen_columns: u64,
    pub player_chunk_loads: u64,
    pub player_chunk_unloads: u64,
    pub tick_saves: u64,
    pub save_mean_ms: f64,
    pub save_max_ms: f64,
    pub saves_per_sec: f64,
    pub saved_chunk_writes: u64,
    pub region_ticks: u64,
    pub region_edits: u64,
    /// Most region ticks seen running at the same time.
    pub max_parallel_region_ticks: usize,
    /// (tick, regions) samples.
    pub regions_over_time: Vec<(u64, usize)>,
    pub maintenance_l0_to_l1: u64,
    pub maintenance_l1_to_l2: u64,
    pub level_chunks: [usize; 3],
    pub level_bytes: [u64; 3],
    pub disk_bytes: u64,
    pub arena_blocks: u64,
    pub arena_capture_ms: f64,
    pub arena_damaged_blocks: u64,
    pub restore_blocks_written: u64,
    pub restore_ticks: u64,
    pub restore_ms: f64,
    pub restore_max_tick_ms: f64,
    pub restore_budget_ms: f64,
    pub restore_exact: bool,
    /// With --minutes: a row per minute, and the verdict.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub soak: Vec<crate::soak::SoakRow>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub soak_verdict: Option<crate::soak::SoakVerdict>,
}

/// A generated column and its encoded chunks.
type Generated = (ColumnPos, Vec<(ChunkPos, Vec<u8>)>);

struct Pregen {
    /// Generated columns; `None` once shut down.
    rx: Option<mpsc::Receiver<Generated>>,
    stop: Arc<AtomicBool>,
    gen_nanos: Arc<AtomicU64>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Pregen {
    /// A generated column, if one is waiting.
    fn try_recv(&self) -> Option<Generated> {
        self.rx.as_ref()?.try_recv().ok()
    }

    /// Stops the threads and waits for them (dropping the receiver first frees those blocked
    /// on a full channel).
    fn shut_down(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.rx = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn start_pregen(
    graph: Arc<SharedDistanceGraph>,
    world_schema: &terrane::Schema,
    args: &DemoArgs,
    palette: Palette,
) -> Pregen {
    let (tx, rx) = mpsc::sync_channel(256);
    let stop = Arc::new(AtomicBool::new(false));
    let gen_nanos = Arc::new(AtomicU64::new(0));
    let threads = (0..args.pregen_threads.max(1))
        .map(|i| {
            let (graph, tx, stop, gen_nanos) =
                (graph.clone(), tx.clone(), stop.clone(), gen_nanos.clone());
            let schema = world_schema.clone();
            let (seed, r) = (args.seed, args.pregen_radius);
            std::thread::Builder::new()
                .name(format!("pregen-{i}"))
                .spawn(move || {
                    let centre = ColumnPos::new(0, 0);
                    while !stop.load(Ordering::Relaxed) {
                        let hit = match graph.claim_nearest(centre, r) {
                            Ok(Some(h)) => h,
                            Ok(None) => {
                                if graph.count_missing(centre, r).unwrap_or(0) == 0 {
                                    return;
                                }
                                std::thread::sleep(Duration::from_millis(2));
                                continue;
                            }
                            Err(e) => {
                                tracing::error!("pre-generator: {e}");
                                return;
                            }
                        };
                        for col in hit.chunks() {
                            let t = Instant::now();
                            let chunks: Vec<_> = terrain::column(seed, col, &palette)
                                .into_iter()
                                .map(|(p, c)| (p, c.encode(&schema)))
                                .collect();
                            gen_nanos.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
                            if tx.send((col, chunks)).is_err() {
                                return;
                            }
                        }
                    }
                })
                .expect("spawn pre-generator")
        })
        .collect();
    Pregen { rx: Some(rx), stop, gen_nanos, threads }
}

fn columns_around(p: BlockPos, view: i64) -> impl Iterator<Item = ColumnPos> {
    let (cx, cz) = (p.x >> 4, p.z >> 4);
    (cz - view..=cz + view)
        .flat_map(move |z| (cx - view..=cx + view).map(move |x| ColumnPos::new(x as i32, z as i32)))
}

fn bar(len: u64, msg: &str, quiet: bool) -> ProgressBar {
    let pb = crate::progress::bar(quiet, "");
    pb.set_length(len);
    pb.set_message(msg.to_string());
    pb
}

/// Runs the demo; returns the summary (printed by the caller).
pub fn run(args: &DemoArgs) -> Result<Summary, Fail> {
    let mut args = args.clone();
    if let Some(store) = args.store.take() {
        if terrane::connection_string(Path::new(&store)).is_none() {
            return Err(Fail::usage(format!(
                "--store {store:?} is not a PostgreSQL connection string"
            )));
        }
        args.dir = PathBuf::from(store);
        args.backend = Some(Backend::Postgres);
    }
    let args = &args;
    let started = Instant::now();
    prepare_dir(&args.dir, args.force)?;
    let schema = terrain::schema();
    let palette = Palette::of(&schema).expect("the demo schema registers its blocks");
    let shared = Arc::new(Shared {
        loaded: RwLock::new(HashMap::new()),
        dirty: Mutex::new(HashSet::new()),
        players: RwLock::new(Vec::new()),
        edits: AtomicU64::new(0),
        sampled: AtomicU64::new(0),
        running: AtomicUsize::new(0),
        max_running: AtomicUsize::new(0),
        palette,
        seed: args.seed,
        work: Duration::from_micros(args.region_work_us),
    });
    let rz_config = match args.region_shift {
        4 => RegionizerConfig::folia_shift4(),
        2 => RegionizerConfig::folia_shift2(),
        s => RegionizerConfig::builder()
            .shift(s)
            .build()
            .map_err(|e| Fail::usage(format!("--region-shift {s}: {e}")))?,
    };
    let tick_shared = shared.clone();
    let mut world = World::builder()
        .backend(args.backend.unwrap_or_default())
        .schema(schema.clone())
        .regionizer(rz_config)
        .tick_regions(
            SchedulerConfig::default()
                .workers(args.workers)
                .target_tps(args.tps)
                .align_to_grid(true),
            move |ctx| region_tick(&tick_shared, ctx),
        )
        // Demo-sized demotion: unloaded chunks go warm after 2 s, clusters cold after 6 s
        // idle or 16 chunks from every player.
        .tiers(|b: TieredStoreBuilder| {
            b.l0_idle_ticks(100).l1_idle_ticks(300).l1_distance_blocks(256)
        })
        .create(&args.dir)?;
    let result = simulate(args, &mut world, &shared, palette, started);
    let close = world.close();
    let mut summary = result?;
    close?;
    // Reopen read-only for the numbers the next commands will see.
    let world = World::open_read_only(&args.dir)?;
    let info = world.info()?;
    summary.level_chunks = info.levels.chunks;
    summary.level_bytes = info.levels.bytes;
    summary.disk_bytes = info.disk_bytes;
    summary.wall_seconds = started.elapsed().as_secs_f64();
    Ok(summary)
}

fn prepare_dir(dir: &Path, force: bool) -> Result<(), Fail> {
    if terrane::connection_string(dir).is_some() {
        // A PostgreSQL world: --force drops its schema (only a terrane store's); without it,
        // creating over an existing world fails.
        if !force {
            return Ok(());
        }
        return match World::remove(dir) {
            Ok(()) | Err(terrane::Error::Store(terrane::store::Error::NotFound(_))) => Ok(()),
            Err(e) => Err(e.into()),
        };
    }
    if !dir.exists()
        || fs::read_dir(dir).map_err(|e| Fail::io(dir, e))?.next().is_none()
        || World::is_unfinished_creation(dir)
    {
        // Empty, or a creation that was cut off: `create` takes it over.
        return Ok(());
    }
    if !force {
        return Err(Fail::usage(format!(
            "{} already exists and is not empty (use --force to replace a terrane world there)",
            dir.display()
        )));
    }
    World::remove(dir).map_err(|e| match e {
        terrane::Error::NotAWorld(_) => Fail::usage(format!(
            "{} is not a terrane world: --force only replaces terrane worlds",
            dir.display()
        )),
        e => e.into(),
    })
}

/// Runs the demo on `world`: set-up, the main tick loop, shut-down; returns the summary.
fn simulate(
    args: &DemoArgs,
    world: &mut World,
    shared: &Arc<Shared>,
    palette: Palette,
    started: Instant,
) -> Result<Summary, Fail> {
    let mut sim = Sim::new(args, world, shared, palette)?;
    sim.run_ticks()?;
    sim.pregen.shut_down();
    sim.tally_ticks();
    sim.log_out()?;
    sim.finish(started)
}

/// A demo run: the state its set-up, ticks and shut-down share, and the summary it fills in.
struct Sim<'a> {
    args: &'a DemoArgs,
    world: &'a mut World,
    shared: &'a Shared,
    palette: Palette,
    /// The world's distance graph: which columns are generated.
    graph: Arc<SharedDistanceGraph>,
    /// Target duration of a tick (zero: no pacing).
    period: Duration,
    /// The regionizer history: a line per chunk added or removed.
    region_log: Box<dyn Write>,
    /// Players stay within this many blocks of spawn.
    walk: f64,
    players: Vec<Player>,
    arena: Arena,
    pregen: Pregen,
    pregen_start: Instant,
    /// Columns in the disc the pre-generator fills.
    disc: u64,
    pregen_bar: ProgressBar,
    tick_bar: ProgressBar,
    /// How long after its start the pre-generator's disc was complete.
    pregen_done_at: Option<Duration>,
    /// How long each tick's save took.
    save_nanos: Vec<u64>,
    /// The current game tick, and the first one this run simulates.
    tick: u64,
    first_tick: u64,
    /// Loaded columns and their chunks.
    loaded_cols: HashMap<ColumnPos, Vec<ChunkPos>>,
    /// The chunk each player's entity is listed in.
    entity_chunk: HashMap<Uuid, ChunkPos>,
    /// State of the players' random turns.
    rng: u64,
    /// With --minutes: the per-minute recorder.
    soak: Option<crate::soak::SoakRecorder>,
    summary: Summary,
}

/// Ticks between the end of a restore and the next damage, in a soak.
const SOAK_ARENA_EVERY: u64 = 200;

/// The arena: captured, damaged, then restored through the queue under the tick budget.
struct Arena {
    bounds: BlockBox,
    /// Edge in blocks (x and z).
    edge: i64,
    /// Ticks after the first at which the arena is captured, and damaged.
    capture_tick: u64,
    damage_tick: u64,
    /// The arena's chunks and their snapshot, once captured.
    world: Option<terrane::ChunkWorld>,
    snapshot: Option<Arc<terrane::Snapshot>>,
    queue: RestoreQueue<terrane::ChunkWorld>,
    /// Set by the queue when the restore completes, with the blocks it wrote.
    restore_done: Arc<AtomicBool>,
    restore_written: Arc<AtomicU64>,
    /// Whether a restore is under way, and the tick it started.
    restore_pending: bool,
    restore_first_tick: u64,
}

impl Arena {
    /// Places the arena and sets its capture and damage ticks; nothing is loaded yet.
    fn new(args: &DemoArgs, walk: f64) -> Arena {
        // Arena: east of the walking area, inside the pre-generated disc when it is big enough.
        let edge = i64::from(args.arena.max(4));
        let ax = (walk as i64 + args.view * 16 + 32).max(64);
        let bounds = BlockBox::new(
            BlockPos::new(ax, 56, -edge / 2),
            BlockPos::new(ax + edge - 1, 79, edge / 2 - 1),
        );
        let capture_tick = (args.ticks / 5).max(2);
        Arena {
            bounds,
            edge,
            capture_tick,
            damage_tick: capture_tick + 10,
            world: None,
            snapshot: None,
            queue: RestoreQueue::new(QueueConfig {
                budget: Duration::from_secs_f64(args.restore_budget_ms / 1000.0),
                ..QueueConfig::default()
            }),
            restore_done: Arc::new(AtomicBool::new(false)),
            restore_written: Arc::new(AtomicU64::new(0)),
            restore_pending: false,
            restore_first_tick: 0,
        }
    }
}

/// Creates the region history beside the world (a sink for a PostgreSQL world) and writes
/// its header.
fn open_region_log(args: &DemoArgs) -> Result<Box<dyn Write>, Fail> {
    // The region history goes beside the world; a PostgreSQL world has no directory.
    let mut region_log: Box<dyn Write> = if terrane::connection_string(&args.dir).is_some() {
        Box::new(std::io::sink())
    } else {
        Box::new(
            fs::File::create(args.dir.join("regions.log")).map_err(|e| Fail::io(&args.dir, e))?,
        )
    };
    writeln!(
        region_log,
        "# terrane demo: regionizer history (replay: terrane regionizer replay --dim 3 --shift {})",
        args.region_shift
    )
    .map_err(|e| Fail::io(&args.dir, e))?;
    Ok(region_log)
}

/// The players, spread evenly on a circle of 0.8 times `walk` around spawn, each heading
/// across it.
fn spawn_players(args: &DemoArgs, walk: f64) -> Vec<Player> {
    (0..args.players)
        .map(|i| {
            let a = i as f64 / args.players.max(1) as f64 * std::f64::consts::TAU;
            let (x, z) = (a.cos() * walk * 0.8, a.sin() * walk * 0.8);
            let mut uuid = [0u8; 16];
            uuid[..8].copy_from_slice(&(0xdead_0000 + i as u64).to_be_bytes());
            uuid[8..].copy_from_slice(&args.seed.to_be_bytes());
            Player {
                uuid,
                x,
                z,
                heading: a + std::f64::consts::PI,
                chunk: ChunkPos::new(i64::MIN, 0, 0),
            }
        })
        .collect()
}

impl<'a> Sim<'a> {
    /// Sets the run up: summary, region log, players, arena and restore queue, the
    /// pre-generator's threads and the progress bars.
    fn new(
        args: &'a DemoArgs,
        world: &'a mut World,
        shared: &'a Shared,
        palette: Palette,
    ) -> Result<Sim<'a>, Fail> {
        let quiet = args.json;
        let mut summary = Summary {
            dir: args.dir.display().to_string(),
            backend: args.backend.unwrap_or_default().name().to_string(),
            seed: args.seed,
            restore_budget_ms: args.restore_budget_ms,
            ..Summary::default()
        };
        let graph = world.distance().clone();
        let period =
            if args.tps > 0.0 { Duration::from_secs_f64(1.0 / args.tps) } else { Duration::ZERO };
        let region_log = open_region_log(args)?;

        // Players: spread around spawn, walking; they stay within `walk` blocks of it.
        let walk = args.walk.max(16.0);
        let players = spawn_players(args, walk);

        let arena = Arena::new(args, walk);
        summary.arena_blocks = arena.bounds.volume() as u64;

        let pregen = start_pregen(graph.clone(), world.schema(), args, palette);
        let pregen_start = Instant::now();
        let disc = terrane::DistanceGraph::disc_size(ColumnPos::new(0, 0), args.pregen_radius)?;
        let pregen_bar = bar(disc, "pre-generate", quiet);
        let tick_bar = bar(args.ticks, "ticks", quiet);
        let tick = world.tick();
        Ok(Sim {
            args,
            world,
            shared,
            palette,
            graph,
            period,
            region_log,
            walk,
            players,
            arena,
            pregen,
            pregen_start,
            disc,
            pregen_bar,
            tick_bar,
            pregen_done_at: None,
            save_nanos: Vec::new(),
            tick,
            first_tick: tick + 1,
            loaded_cols: HashMap::new(),
            entity_chunk: HashMap::new(),
            rng: args.seed,
            soak: args.soak.minutes.map(|_| {
                crate::soak::SoakRecorder::new(Duration::from_secs_f64(
                    args.soak.soak_row_seconds.max(0.1),
                ))
            }),
            summary,
        })
    }

    /// The main loop, paced to --tps: tick after tick until the ticks asked for have run, the
    /// pre-generator has filled its disc and the arena is restored.
    fn run_ticks(&mut self) -> Result<(), Fail> {
        loop {
            self.tick += 1;
            let t0 = Instant::now();
            let mut save = TickSave::new();
            let mut written: HashSet<ChunkPos> = HashSet::new();

            // 1. Players walk.
            let blocks = self.walk_players();

            // 2. Chunks load and unload at the edges of the view distance.
            let want: HashSet<ColumnPos> =
                blocks.iter().flat_map(|b| columns_around(*b, self.args.view)).collect();
            self.unload_columns(&want, &mut save, &mut written)?;
            self.load_columns(&want, &mut save, &mut written)?;

            // 3. Players are entities: the chunk they stand in lists them; saved every tick.
            self.record_players(&mut save);

            // 4. Pre-generated columns arrive; those generated meanwhile by a load are dropped.
            self.receive_pregen(&mut save, &written)?;

            // 5. The arena: captured, damaged, restored under the tick budget.
            self.tick_arena(&mut save)?;

            // 6. Chunks the region ticks changed.
            self.save_dirty(&mut save);

            // 7. The tick's save: one atomic batch.
            self.save_tick(save)?;

            self.sample_and_maintain()?;
            if let Some(soak) = &mut self.soak {
                soak.tick(&self.save_nanos, || self.world.store().cache_bytes());
            }
            if self.progress()? {
                break;
            }
            if let Some(rest) = self.period.checked_sub(t0.elapsed()) {
                std::thread::sleep(rest);
            }
        }
        self.tick_bar.finish();
        Ok(())
    }

    /// Moves each player a step (turning now and then, back towards spawn at the edge) and
    /// tells the region ticks and the world where they stand; returns their blocks.
    fn walk_players(&mut self) -> Vec<BlockPos> {
        let (seed, tick) = (self.args.seed, self.tick);
        for p in &mut self.players {
            self.rng = mix(self.rng, tick as i64, 7);
            if self.rng.is_multiple_of(40) {
                p.heading += ((self.rng >> 16) as f64 / (u64::MAX >> 16) as f64 - 0.5) * 0.6;
            }
            p.x += p.heading.cos() * self.args.speed;
            p.z += p.heading.sin() * self.args.speed;
            if p.x.hypot(p.z) > self.walk {
                p.heading = p.z.atan2(p.x) + std::f64::consts::PI + 0.3;
            }
        }
        let blocks: Vec<BlockPos> = self.players.iter().map(|p| p.block(seed)).collect();
        *self.shared.players.write().expect("players lock") = blocks.clone();
        self.world.set_players(
            &blocks.iter().map(|b| PlayerPos::new(0, b.x, b.y, b.z)).collect::<Vec<_>>(),
        );
        blocks
    }

    /// Unloads the loaded columns outside `want`, putting their changed chunks in `save`.
    fn unload_columns(
        &mut self,
        want: &HashSet<ColumnPos>,
        save: &mut TickSave,
        written: &mut HashSet<ChunkPos>,
    ) -> Result<(), Fail> {
        let shared = self.shared;
        let mut leaving: Vec<ColumnPos> =
            self.loaded_cols.keys().filter(|c| !want.contains(c)).copied().collect();
        leaving.sort();
        for col in leaving {
            let chunks = self.loaded_cols.remove(&col).unwrap_or_default();
            for pos in chunks {
                // Save it if it changed since the last save, then let it go.
                if shared.dirty.lock().expect("dirty").remove(&pos)
                    && let Some(c) = shared.loaded.read().expect("loaded").get(&pos)
                {
                    save.put_chunk(0, pos, c.lock().expect("chunk").encode(self.world.schema()));
                    written.insert(pos);
                }
                shared.loaded.write().expect("loaded").remove(&pos);
                self.world.unload_chunk(pos)?;
                writeln!(self.region_log, "remove {} {} {}", pos.x, pos.y, pos.z)
                    .map_err(|e| Fail::io(&self.args.dir, e))?;
                self.summary.player_chunk_unloads += 1;
            }
        }
        Ok(())
    }

    /// Loads the columns of `want` not loaded yet, generating those not generated (their new
    /// chunks go in `save`).
    fn load_columns(
        &mut self,
        want: &HashSet<ColumnPos>,
        save: &mut TickSave,
        written: &mut HashSet<ChunkPos>,
    ) -> Result<(), Fail> {
        let (seed, palette) = (self.args.seed, self.palette);
        let mut arriving: Vec<ColumnPos> =
            want.iter().filter(|c| !self.loaded_cols.contains_key(c)).copied().collect();
        arriving.sort();
        for col in arriving {
            let mut fresh: HashMap<ChunkPos, Chunk> = HashMap::new();
            if !self.graph.contains(col) {
                // Not generated yet (or generated but not saved): generate it now.
                let t = Instant::now();
                for (p, c) in terrain::column(seed, col, &palette) {
                    fresh.insert(p, c);
                }
                self.pregen.gen_nanos.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
                self.summary.chunks_generated += fresh.len() as u64;
                self.summary.columns_generated += 1;
                self.world.mark_generated(col)?;
            }
            let top = terrain::top_layer(seed, col);
            let mut positions = Vec::new();
            for cy in 0..=top {
                let pos = ChunkPos::new(i64::from(col.x), cy, i64::from(col.z));
                let stored = self.world.load_chunk(pos)?;
                writeln!(self.region_log, "add {} {} {}", pos.x, pos.y, pos.z)
                    .map_err(|e| Fail::io(&self.args.dir, e))?;
                self.summary.player_chunk_loads += 1;
                let chunk = match (stored, fresh.remove(&pos)) {
                    (Some(c), _) => c,
                    (None, Some(c)) => {
                        save.put_chunk(0, pos, c.encode(self.world.schema()));
                        written.insert(pos);
                        c
                    }
                    (None, None) => Chunk::new(palette.air),
                };
                self.shared.loaded.write().expect("loaded").insert(pos, Mutex::new(chunk));
                positions.push(pos);
            }
            self.loaded_cols.insert(col, positions);
        }
        Ok(())
    }

    /// Lists each player in the chunk it stands in (taking it off the last one) and puts its
    /// position in `save`, as an entity and as a world property.
    fn record_players(&mut self, save: &mut TickSave) {
        let (seed, shared) = (self.args.seed, self.shared);
        for p in &mut self.players {
            let b = p.block(seed);
            let now = b.chunk();
            let loaded = shared.loaded.read().expect("loaded");
            if now != p.chunk && loaded.contains_key(&now) {
                if let Some(old) = self.entity_chunk.get(&p.uuid).and_then(|c| loaded.get(c)) {
                    old.lock().expect("chunk").remove_entity(&p.uuid);
                    shared.dirty.lock().expect("dirty").insert(p.chunk);
                }
                loaded[&now].lock().expect("chunk").add_entity(p.uuid);
                shared.dirty.lock().expect("dirty").insert(now);
                self.entity_chunk.insert(p.uuid, now);
                p.chunk = now;
            }
            let mut record = Vec::with_capacity(24);
            for v in [b.x, b.y, b.z] {
                record.extend_from_slice(&v.to_le_bytes());
            }
            save.put_entity(p.uuid, record.clone());
            save.put_object(
                terrane::tables::WORLD_PROPERTIES,
                [b"demo:player:".as_slice(), &p.uuid].concat(),
                record,
            );
        }
    }

    /// Puts up to 64 pre-generated columns in `save` (except chunks it already holds), marks
    /// them generated and moves the pre-generation bar on.
    fn receive_pregen(
        &mut self,
        save: &mut TickSave,
        written: &HashSet<ChunkPos>,
    ) -> Result<(), Fail> {
        let mut cols = Vec::new();
        while cols.len() < 64 {
            let Some((col, chunks)) = self.pregen.try_recv() else { break };
            if self.graph.contains(col) {
                continue;
            }
            self.summary.chunks_generated += chunks.len() as u64;
            self.summary.columns_generated += 1;
            self.summary.pregen_columns += 1;
            for (pos, bytes) in chunks {
                if !written.contains(&pos) {
                    save.put_chunk(0, pos, bytes);
                }
            }
            cols.push(col);
        }
        self.graph.complete_many(cols.iter().copied())?;
        let completed =
            self.graph.count_completed(ColumnPos::new(0, 0), self.args.pregen_radius)?;
        self.pregen_bar.set_position(completed);
        if completed >= self.disc && self.pregen_done_at.is_none() {
            self.pregen_done_at = Some(self.pregen_start.elapsed());
            self.pregen_bar.finish_with_message("pre-generated");
        }
        Ok(())
    }

    /// The arena's part of the tick: its capture, its damage, or a slice of its restore.
    fn tick_arena(&mut self, save: &mut TickSave) -> Result<(), Fail> {
        if self.tick == self.first_tick + self.arena.capture_tick {
            self.capture_arena(save)?;
        }
        let captured = self.arena.world.is_some() && self.arena.snapshot.is_some();
        if self.tick == self.first_tick + self.arena.damage_tick && captured {
            self.damage_arena(save);
        } else if self.arena.restore_pending && self.arena.world.is_some() {
            self.restore_arena(save)?;
        }
        Ok(())
    }

    /// Generates the arena's missing columns (into `save`), loads its chunks and captures its
    /// snapshot.
    fn capture_arena(&mut self, save: &mut TickSave) -> Result<(), Fail> {
        let (seed, palette, arena) = (self.args.seed, self.palette, self.arena.bounds);
        let cols: HashSet<ColumnPos> = arena
            .sub_regions()
            .map(|r| ColumnPos::new(r.chunk.x as i32, r.chunk.z as i32))
            .collect();
        let mut cols: Vec<_> = cols.into_iter().collect();
        cols.sort();
        let mut fresh = Vec::new();
        for col in cols {
            if !self.graph.contains(col) {
                for (p, c) in terrain::column(seed, col, &palette) {
                    fresh.push((p, c));
                }
                self.summary.columns_generated += 1;
                self.world.mark_generated(col)?;
            }
        }
        self.summary.chunks_generated += fresh.len() as u64;
        let mut aw = self.world.arena(arena)?;
        for (p, c) in fresh {
            if aw.chunks.contains_key(&p) {
                aw.chunks.insert(p, c.clone());
            }
            save.put_chunk(0, p, c.encode(self.world.schema()));
        }
        let t = Instant::now();
        let snap = terrane::Snapshot::capture(&aw, arena)?;
        self.summary.arena_capture_ms = t.elapsed().as_secs_f64() * 1e3;
        self.arena.snapshot = Some(Arc::new(snap));
        self.arena.world = Some(aw);
        Ok(())
    }

    /// Blows a crater into the captured arena, puts its chunks in `save` and queues its
    /// restore, which runs from the next tick on.
    fn damage_arena(&mut self, save: &mut TickSave) {
        let (arena, arena_edge, palette) = (self.arena.bounds, self.arena.edge, self.palette);
        let aw = self.arena.world.as_mut().expect("captured");
        let snap = self.arena.snapshot.as_ref().expect("captured");
        // An explosion in the middle and a crater of cobblestone rubble.
        let c = BlockPos::new(arena.min().x + arena_edge / 2, 68, 0);
        let r = (arena_edge / 3).max(2);
        for x in -r..=r {
            for y in -r..=r {
                for z in -r..=r {
                    let d2 = x * x + y * y + z * z;
                    let p = BlockPos::new(c.x + x, c.y + y, c.z + z);
                    if d2 <= r * r && arena.contains(p) {
                        let b = if d2 > (r - 2) * (r - 2) && (x + z) % 3 == 0 {
                            palette.cobble
                        } else {
                            palette.air
                        };
                        if aw.get_block(p) != Some(b) {
                            aw.set_block(p, b);
                            self.summary.arena_damaged_blocks += 1;
                        }
                    }
                }
            }
        }
        for (pos, ch) in &aw.chunks {
            save.put_chunk(0, *pos, ch.encode(self.world.schema()));
        }
        let (done, written) = (self.arena.restore_done.clone(), self.arena.restore_written.clone());
        self.arena.queue.on_complete(move |_, r| {
            if let Ok(stats) = r {
                written.store(stats.written, Ordering::Relaxed);
                done.store(true, Ordering::Relaxed);
            }
        });
        self.arena.queue.push(snap.clone(), true);
        self.arena.restore_pending = true;
        self.arena.restore_first_tick = self.tick + 1;
    }

    /// Runs the restore queue within the tick budget; once it is empty, puts the arena's
    /// chunks in `save` and checks the arena against the snapshot.
    fn restore_arena(&mut self, save: &mut TickSave) -> Result<(), Fail> {
        let (tick, s, arena) = (self.tick, &mut self.summary, &mut self.arena);
        let aw = arena.world.as_mut().expect("captured");
        let report = arena.queue.tick(aw);
        let ms = report.elapsed.as_secs_f64() * 1e3;
        s.restore_ms += ms;
        s.restore_max_tick_ms = s.restore_max_tick_ms.max(ms);
        s.restore_ticks += 1;
        if arena.queue.is_empty() {
            arena.restore_pending = false;
            for (pos, ch) in &aw.chunks {
                save.put_chunk(0, *pos, ch.encode(self.world.schema()));
            }
            let snap = arena.snapshot.as_ref().expect("captured");
            let again = terrane::Snapshot::capture(&*aw, arena.bounds)?;
            s.restore_exact = arena.restore_done.load(Ordering::Relaxed)
                && arena_positions(arena.bounds).all(|p| again.block(p) == snap.block(p));
            s.restore_blocks_written = arena.restore_written.load(Ordering::Relaxed);
            tracing::info!(tick, ticks = tick + 1 - arena.restore_first_tick, "arena restored");
            if let Some(soak) = &mut self.soak {
                // Continuous play: the arena is damaged again a while later.
                soak.restored(s.restore_exact);
                arena.damage_tick = tick - self.first_tick + SOAK_ARENA_EVERY;
                arena.restore_done.store(false, Ordering::Relaxed);
            }
        }
        Ok(())
    }

    /// Puts the chunks the region ticks changed in `save`.
    fn save_dirty(&self, save: &mut TickSave) {
        let dirty: Vec<ChunkPos> =
            std::mem::take(&mut *self.shared.dirty.lock().expect("dirty")).into_iter().collect();
        let loaded = self.shared.loaded.read().expect("loaded");
        for pos in dirty {
            if let Some(c) = loaded.get(&pos) {
                save.put_chunk(0, pos, c.lock().expect("chunk").encode(self.world.schema()));
            }
        }
    }

    /// Writes the tick's save and times it.
    fn save_tick(&mut self, save: TickSave) -> Result<(), Fail> {
        let t = Instant::now();
        self.world.save_tick(self.tick, save).map_err(|e| {
            let world = self.world.dir().map(|d| d.display().to_string()).unwrap_or_default();
            Fail::from(e).context(format!("world {world}: saving tick {}", self.tick))
        })?;
        self.save_nanos.push(t.elapsed().as_nanos() as u64);
        Ok(())
    }

    /// Samples the region count every 10 ticks; runs a maintenance pass every 50.
    fn sample_and_maintain(&mut self) -> Result<(), Fail> {
        if self.tick.is_multiple_of(10) {
            self.summary
                .regions_over_time
                .push((self.tick, self.world.regionizer().region_count()));
        }
        if self.tick.is_multiple_of(50) {
            let m = self.world.maintain(self.tick)?;
            self.summary.maintenance_l0_to_l1 += m.l0_to_l1 as u64;
            self.summary.maintenance_l1_to_l2 += m.l1_to_l2 as u64;
        }
        Ok(())
    }

    /// Moves the tick bar on; returns whether the run is done (its ticks ran, the disc is
    /// pre-generated, the arena restored), and fails when it runs far too long.
    fn progress(&self) -> Result<bool, Fail> {
        let ran = self.tick + 1 - self.first_tick;
        if let (Some(soak), Some(minutes)) = (&self.soak, self.args.soak.minutes) {
            // A soak ends on time, between two arena cycles, once a row has counted a
            // restore: a slow machine plays longer instead of ending with nothing to judge.
            return Ok(soak.elapsed().as_secs_f64() >= minutes * 60.0
                && !self.arena.restore_pending
                && soak.restores_in_rows() >= 1);
        }
        if ran <= self.args.ticks {
            self.tick_bar.set_position(ran);
        }
        let arena_finished =
            self.tick > self.first_tick + self.arena.damage_tick && !self.arena.restore_pending;
        if ran >= self.args.ticks && self.pregen_done_at.is_some() && arena_finished {
            return Ok(true);
        }
        if ran > self.args.ticks.saturating_mul(20).max(20_000) {
            return Err(Fail::other(
                "the demo did not finish: the pre-generator or the restore is stuck",
            ));
        }
        Ok(false)
    }

    /// Fills in the summary's numbers of the main loop: ticks, pre-generation, region ticks,
    /// generation and save rates.
    fn tally_ticks(&mut self) {
        let s = &mut self.summary;
        let save_nanos = &self.save_nanos;
        s.pregen_seconds = self.pregen_done_at.map_or(0.0, |d| d.as_secs_f64());
        s.ticks = self.tick + 1 - self.first_tick;
        s.region_ticks = self.world.scheduler().map_or(0, |sc| sc.ticks());
        s.region_edits = self.shared.edits.load(Ordering::Relaxed);
        s.max_parallel_region_ticks = self.shared.max_running.load(Ordering::SeqCst);
        let gen_s = self.pregen.gen_nanos.load(Ordering::Relaxed) as f64 / 1e9;
        s.generation_chunks_per_sec =
            if gen_s > 0.0 { s.chunks_generated as f64 / gen_s } else { 0.0 };
        s.tick_saves = save_nanos.len() as u64;
        let total: u64 = save_nanos.iter().sum();
        s.save_mean_ms = total as f64 / save_nanos.len().max(1) as f64 / 1e6;
        s.save_max_ms = save_nanos.iter().copied().max().unwrap_or(0) as f64 / 1e6;
        s.saves_per_sec =
            if total > 0 { save_nanos.len() as f64 / (total as f64 / 1e9) } else { 0.0 };
    }

    /// Everyone logs out: the last changes are saved, every chunk unloads, and a maintenance
    /// pass later in game time demotes what is idle or far.
    fn log_out(&mut self) -> Result<(), Fail> {
        let mut save = TickSave::new();
        let mut cols: Vec<_> = std::mem::take(&mut self.loaded_cols).into_iter().collect();
        cols.sort_by_key(|(c, _)| *c);
        let dirty = std::mem::take(&mut *self.shared.dirty.lock().expect("dirty"));
        for (_, chunks) in cols {
            for pos in chunks {
                if dirty.contains(&pos)
                    && let Some(c) = self.shared.loaded.read().expect("loaded").get(&pos)
                {
                    save.put_chunk(0, pos, c.lock().expect("chunk").encode(self.world.schema()));
                }
                // Not logged: regions.log keeps the history up to the last tick, so a replay
                // shows the partition the players left.
                self.world.unload_chunk(pos)?;
            }
        }
        self.tick += 1;
        self.world.save_tick(self.tick, save)?;
        let m = self.world.maintain(self.tick + 100)?;
        self.summary.maintenance_l0_to_l1 += m.l0_to_l1 as u64;
        self.summary.maintenance_l1_to_l2 += m.l1_to_l2 as u64;
        Ok(())
    }

    /// Flushes the region history; returns the summary, with the wall time so far.
    fn finish(mut self, started: Instant) -> Result<Summary, Fail> {
        self.region_log.flush().map_err(|e| Fail::io(&self.args.dir, e))?;
        if let Some(soak) = self.soak.take() {
            self.summary.soak_verdict = Some(crate::soak::verdict(&soak.rows));
            self.summary.soak = soak.rows;
        }
        self.summary.wall_seconds = started.elapsed().as_secs_f64();
        Ok(self.summary)
    }
}

fn arena_positions(b: BlockBox) -> impl Iterator<Item = BlockPos> {
    let (min, max) = (b.min(), b.max());
    (min.y..=max.y).flat_map(move |y| {
        (min.z..=max.z).flat_map(move |z| (min.x..=max.x).map(move |x| BlockPos::new(x, y, z)))
    })
}

/// Prints the summary for people.
pub fn print_human(s: &Summary) {
    let mb = |b: u64| b as f64 / (1024.0 * 1024.0);
    outln!();
    outln!("terrane demo: {} ({} backend, seed {})", s.dir, s.backend, s.seed);
    outln!("  ran {} ticks in {:.1} s", s.ticks, s.wall_seconds);
    outln!();
    outln!("generation");
    outln!(
        "  {} chunks in {} columns, {:.0} chunks/s per thread; pre-generator filled {} columns nearest-first in {:.2} s",
        s.chunks_generated,
        s.columns_generated,
        s.generation_chunks_per_sec,
        s.pregen_columns,
        s.pregen_seconds
    );
    outln!("players");
    outln!(
        "  {} chunk loads, {} unloads (each one a regionizer add/remove)",
        s.player_chunk_loads,
        s.player_chunk_unloads
    );
    outln!("regions");
    let counts: Vec<usize> = s.regions_over_time.iter().map(|r| r.1).collect();
    outln!(
        "  over time: {}  (min {}, max {}, final {})",
        sparkline(&counts),
        counts.iter().min().unwrap_or(&0),
        counts.iter().max().unwrap_or(&0),
        counts.last().unwrap_or(&0)
    );
    outln!(
        "  {} region ticks on the scheduler's workers, up to {} at the same time; {} block edits by region ticks",
        s.region_ticks,
        s.max_parallel_region_ticks,
        s.region_edits
    );
    outln!("saves");
    outln!(
        "  {} tick saves (one atomic batch each): mean {:.2} ms, max {:.2} ms = {:.0} saves/s",
        s.tick_saves,
        s.save_mean_ms,
        s.save_max_ms,
        s.saves_per_sec
    );
    outln!("tiers");
    outln!(
        "  maintenance moved {} chunks L0 -> L1 and {} clusters L1 -> L2",
        s.maintenance_l0_to_l1,
        s.maintenance_l1_to_l2
    );
    for (i, name) in ["L0 hot", "L1 warm", "L2 cold"].iter().enumerate() {
        let per = if s.level_chunks[i] > 0 {
            s.level_bytes[i] as f64 / s.level_chunks[i] as f64
        } else {
            0.0
        };
        outln!(
            "  {name:8} {:7} chunks {:9.2} MiB  {:7.0} bytes/chunk",
            s.level_chunks[i],
            mb(s.level_bytes[i]),
            per
        );
    }
    outln!(
        "  on disk: {:.2} MiB for {:.2} MiB of chunk values (plus the backend's own files and compression)",
        mb(s.disk_bytes),
        mb(s.level_bytes.iter().sum())
    );
    outln!("arena");
    outln!(
        "  {} blocks captured in {:.2} ms; {} damaged; restored in {:.2} ms over {} tick(s) (max {:.2} ms per tick, budget {:.0} ms): {}",
        s.arena_blocks,
        s.arena_capture_ms,
        s.arena_damaged_blocks,
        s.restore_ms,
        s.restore_ticks,
        s.restore_max_tick_ms,
        s.restore_budget_ms,
        if s.restore_exact { "identical to the snapshot" } else { "NOT identical" }
    );
    if let Some(v) = &s.soak_verdict {
        crate::soak::print_table(&s.soak, v);
    }
    outln!();
    outln!(
        "next: terrane info {0} | terrane verify {0} | terrane render --world {0} --regions map.png",
        s.dir
    );
}

fn sparkline(v: &[usize]) -> String {
    const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
    let max = v.iter().copied().max().unwrap_or(0).max(1);
    let step = v.len().div_ceil(40).max(1);
    v.chunks(step)
        .map(|c| {
            let m = c.iter().copied().max().unwrap_or(0);
            BARS[(m * 7).div_ceil(max).min(7)]
        })
        .collect()
}
