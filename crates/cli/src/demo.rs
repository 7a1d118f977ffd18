//! `terrane demo`: the main job, end to end on one world.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use serde::Serialize;
use terrane::cluster::TieredStoreBuilder;
use terrane::snapshot::ChunkAccess as _;
use terrane::{
    Backend, BlockBox, BlockPos, Chunk, ChunkPos, ColumnPos, PlayerPos, QueueConfig,
    RegionizerConfig, RestoreQueue, SchedulerConfig, SharedDistanceGraph, TickContext, TickSave,
    Uuid, World,
};

use crate::terrain::{self, Palette};
use crate::{Fail, backend_arg};

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
}

/// A generated column and its encoded chunks.
type Generated = (ColumnPos, Vec<(ChunkPos, Vec<u8>)>);

struct Pregen {
    rx: mpsc::Receiver<Generated>,
    stop: Arc<AtomicBool>,
    gen_nanos: Arc<AtomicU64>,
    threads: Vec<std::thread::JoinHandle<()>>,
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
    Pregen { rx, stop, gen_nanos, threads }
}

fn columns_around(p: BlockPos, view: i64) -> impl Iterator<Item = ColumnPos> {
    let (cx, cz) = (p.x >> 4, p.z >> 4);
    (cz - view..=cz + view)
        .flat_map(move |z| (cx - view..=cx + view).map(move |x| ColumnPos::new(x as i32, z as i32)))
}

fn bar(len: u64, msg: &str, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg:>12} [{bar:30}] {pos}/{len} {per_sec} eta {eta}")
            .expect("valid template")
            .progress_chars("=> "),
    );
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

fn simulate(
    args: &DemoArgs,
    world: &mut World,
    shared: &Arc<Shared>,
    palette: Palette,
    started: Instant,
) -> Result<Summary, Fail> {
    let seed = args.seed;
    let quiet = args.json;
    let mut s = Summary {
        dir: args.dir.display().to_string(),
        backend: args.backend.unwrap_or_default().name().to_string(),
        seed,
        restore_budget_ms: args.restore_budget_ms,
        ..Summary::default()
    };
    let graph = world.distance().clone();
    let period =
        if args.tps > 0.0 { Duration::from_secs_f64(1.0 / args.tps) } else { Duration::ZERO };
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

    // Players: spread around spawn, walking; they stay within `walk` blocks of it.
    let walk = args.walk.max(16.0);
    let mut players: Vec<Player> = (0..args.players)
        .map(|i| {
            let a = i as f64 / args.players.max(1) as f64 * std::f64::consts::TAU;
            let (x, z) = (a.cos() * walk * 0.8, a.sin() * walk * 0.8);
            let mut uuid = [0u8; 16];
            uuid[..8].copy_from_slice(&(0xdead_0000 + i as u64).to_be_bytes());
            uuid[8..].copy_from_slice(&seed.to_be_bytes());
            Player {
                uuid,
                x,
                z,
                heading: a + std::f64::consts::PI,
                chunk: ChunkPos::new(i64::MIN, 0, 0),
            }
        })
        .collect();

    // Arena: east of the walking area, inside the pre-generated disc when it is big enough.
    let arena_edge = i64::from(args.arena.max(4));
    let ax = (walk as i64 + args.view * 16 + 32).max(64);
    let arena = BlockBox::new(
        BlockPos::new(ax, 56, -arena_edge / 2),
        BlockPos::new(ax + arena_edge - 1, 79, arena_edge / 2 - 1),
    );
    s.arena_blocks = arena.volume() as u64;
    let arena_tick = (args.ticks / 5).max(2);
    let damage_tick = arena_tick + 10;
    let mut arena_world = None;
    let mut snapshot = None;
    let mut queue: RestoreQueue<terrane::ChunkWorld> = RestoreQueue::new(QueueConfig {
        budget: Duration::from_secs_f64(args.restore_budget_ms / 1000.0),
        ..QueueConfig::default()
    });
    let restore_done = Arc::new(AtomicBool::new(false));
    let restore_written = Arc::new(AtomicU64::new(0));
    let mut restore_pending = false;
    let mut restore_first_tick = 0;

    let pregen = start_pregen(graph.clone(), world.schema(), args, palette);
    let pregen_start = Instant::now();
    let disc = terrane::DistanceGraph::disc_size(ColumnPos::new(0, 0), args.pregen_radius)?;
    let pb = bar(disc, "pre-generate", quiet);
    let tick_bar = bar(args.ticks, "ticks", quiet);
    let mut pregen_done_at = None;
    let mut save_nanos: Vec<u64> = Vec::new();
    let mut tick: u64 = world.tick();
    let mut loaded_cols: HashMap<ColumnPos, Vec<ChunkPos>> = HashMap::new();
    let mut entity_chunk: HashMap<Uuid, ChunkPos> = HashMap::new();
    let first_tick = tick + 1;
    let mut rng = seed;

    loop {
        tick += 1;
        let t0 = Instant::now();
        let mut save = TickSave::new();
        let mut written: HashSet<ChunkPos> = HashSet::new();

        // 1. Players walk.
        for p in &mut players {
            rng = mix(rng, tick as i64, 7);
            if rng.is_multiple_of(40) {
                p.heading += ((rng >> 16) as f64 / (u64::MAX >> 16) as f64 - 0.5) * 0.6;
            }
            p.x += p.heading.cos() * args.speed;
            p.z += p.heading.sin() * args.speed;
            if p.x.hypot(p.z) > walk {
                p.heading = p.z.atan2(p.x) + std::f64::consts::PI + 0.3;
            }
        }
        let blocks: Vec<BlockPos> = players.iter().map(|p| p.block(seed)).collect();
        *shared.players.write().expect("players lock") = blocks.clone();
        world.set_players(
            &blocks.iter().map(|b| PlayerPos::new(0, b.x, b.y, b.z)).collect::<Vec<_>>(),
        );

        // 2. Chunks load and unload at the edges of the view distance.
        let want: HashSet<ColumnPos> =
            blocks.iter().flat_map(|b| columns_around(*b, args.view)).collect();
        let mut leaving: Vec<ColumnPos> =
            loaded_cols.keys().filter(|c| !want.contains(c)).copied().collect();
        leaving.sort();
        for col in leaving {
            let chunks = loaded_cols.remove(&col).unwrap_or_default();
            for pos in chunks {
                // Save it if it changed since the last save, then let it go.
                if shared.dirty.lock().expect("dirty").remove(&pos)
                    && let Some(c) = shared.loaded.read().expect("loaded").get(&pos)
                {
                    save.put_chunk(0, pos, c.lock().expect("chunk").encode(world.schema()));
                    written.insert(pos);
                }
                shared.loaded.write().expect("loaded").remove(&pos);
                world.unload_chunk(pos)?;
                writeln!(region_log, "remove {} {} {}", pos.x, pos.y, pos.z)
                    .map_err(|e| Fail::io(&args.dir, e))?;
                s.player_chunk_unloads += 1;
            }
        }
        let mut arriving: Vec<ColumnPos> =
            want.iter().filter(|c| !loaded_cols.contains_key(c)).copied().collect();
        arriving.sort();
        for col in arriving {
            let mut fresh: HashMap<ChunkPos, Chunk> = HashMap::new();
            if !graph.contains(col) {
                // Not generated yet (or generated but not saved): generate it now.
                let t = Instant::now();
                for (p, c) in terrain::column(seed, col, &palette) {
                    fresh.insert(p, c);
                }
                pregen.gen_nanos.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
                s.chunks_generated += fresh.len() as u64;
                s.columns_generated += 1;
                world.mark_generated(col)?;
            }
            let top = terrain::top_layer(seed, col);
            let mut positions = Vec::new();
            for cy in 0..=top {
                let pos = ChunkPos::new(i64::from(col.x), cy, i64::from(col.z));
                let stored = world.load_chunk(pos)?;
                writeln!(region_log, "add {} {} {}", pos.x, pos.y, pos.z)
                    .map_err(|e| Fail::io(&args.dir, e))?;
                s.player_chunk_loads += 1;
                let chunk = match (stored, fresh.remove(&pos)) {
                    (Some(c), _) => c,
                    (None, Some(c)) => {
                        save.put_chunk(0, pos, c.encode(world.schema()));
                        written.insert(pos);
                        c
                    }
                    (None, None) => Chunk::new(palette.air),
                };
                shared.loaded.write().expect("loaded").insert(pos, Mutex::new(chunk));
                positions.push(pos);
            }
            loaded_cols.insert(col, positions);
        }

        // 3. Players are entities: the chunk they stand in lists them; saved every tick.
        for p in &mut players {
            let b = p.block(seed);
            let now = b.chunk();
            let loaded = shared.loaded.read().expect("loaded");
            if now != p.chunk && loaded.contains_key(&now) {
                if let Some(old) = entity_chunk.get(&p.uuid).and_then(|c| loaded.get(c)) {
                    old.lock().expect("chunk").remove_entity(&p.uuid);
                    shared.dirty.lock().expect("dirty").insert(p.chunk);
                }
                loaded[&now].lock().expect("chunk").add_entity(p.uuid);
                shared.dirty.lock().expect("dirty").insert(now);
                entity_chunk.insert(p.uuid, now);
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

        // 4. Pre-generated columns arrive; those generated meanwhile by a load are dropped.
        let mut cols = Vec::new();
        while cols.len() < 64 {
            match pregen.rx.try_recv() {
                Ok((col, chunks)) => {
                    if graph.contains(col) {
                        continue;
                    }
                    s.chunks_generated += chunks.len() as u64;
                    s.columns_generated += 1;
                    s.pregen_columns += 1;
                    for (pos, bytes) in chunks {
                        if !written.contains(&pos) {
                            save.put_chunk(0, pos, bytes);
                        }
                    }
                    cols.push(col);
                }
                Err(_) => break,
            }
        }
        graph.complete_many(cols.iter().copied())?;
        let completed = graph.count_completed(ColumnPos::new(0, 0), args.pregen_radius)?;
        pb.set_position(completed);
        if completed >= disc && pregen_done_at.is_none() {
            pregen_done_at = Some(pregen_start.elapsed());
            pb.finish_with_message("pre-generated");
        }

        // 5. The arena: captured, damaged, restored under the tick budget.
        if tick == first_tick + arena_tick {
            let cols: HashSet<ColumnPos> = arena
                .sub_regions()
                .map(|r| ColumnPos::new(r.chunk.x as i32, r.chunk.z as i32))
                .collect();
            let mut cols: Vec<_> = cols.into_iter().collect();
            cols.sort();
            let mut fresh = Vec::new();
            for col in cols {
                if !graph.contains(col) {
                    for (p, c) in terrain::column(seed, col, &palette) {
                        fresh.push((p, c));
                    }
                    s.columns_generated += 1;
                    world.mark_generated(col)?;
                }
            }
            s.chunks_generated += fresh.len() as u64;
            let mut aw = world.arena(arena)?;
            for (p, c) in fresh {
                if aw.chunks.contains_key(&p) {
                    aw.chunks.insert(p, c.clone());
                }
                save.put_chunk(0, p, c.encode(world.schema()));
            }
            let t = Instant::now();
            let snap = terrane::Snapshot::capture(&aw, arena)?;
            s.arena_capture_ms = t.elapsed().as_secs_f64() * 1e3;
            snapshot = Some(Arc::new(snap));
            arena_world = Some(aw);
        }
        if tick == first_tick + damage_tick
            && let (Some(aw), Some(snap)) = (arena_world.as_mut(), snapshot.as_ref())
        {
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
                                s.arena_damaged_blocks += 1;
                            }
                        }
                    }
                }
            }
            for (pos, ch) in &aw.chunks {
                save.put_chunk(0, *pos, ch.encode(world.schema()));
            }
            let (done, written) = (restore_done.clone(), restore_written.clone());
            queue.on_complete(move |_, r| {
                if let Ok(stats) = r {
                    written.store(stats.written, Ordering::Relaxed);
                    done.store(true, Ordering::Relaxed);
                }
            });
            queue.push(snap.clone(), true);
            restore_pending = true;
            restore_first_tick = tick + 1;
        } else if restore_pending && let Some(aw) = arena_world.as_mut() {
            let report = queue.tick(aw);
            let ms = report.elapsed.as_secs_f64() * 1e3;
            s.restore_ms += ms;
            s.restore_max_tick_ms = s.restore_max_tick_ms.max(ms);
            s.restore_ticks += 1;
            if queue.is_empty() {
                restore_pending = false;
                for (pos, ch) in &aw.chunks {
                    save.put_chunk(0, *pos, ch.encode(world.schema()));
                }
                let snap = snapshot.as_ref().expect("captured");
                let again = terrane::Snapshot::capture(&*aw, arena)?;
                s.restore_exact = restore_done.load(Ordering::Relaxed)
                    && arena_positions(arena).all(|p| again.block(p) == snap.block(p));
                s.restore_blocks_written = restore_written.load(Ordering::Relaxed);
                tracing::info!(tick, ticks = tick + 1 - restore_first_tick, "arena restored");
            }
        }

        // 6. Chunks the region ticks changed.
        let dirty: Vec<ChunkPos> =
            std::mem::take(&mut *shared.dirty.lock().expect("dirty")).into_iter().collect();
        {
            let loaded = shared.loaded.read().expect("loaded");
            for pos in dirty {
                if let Some(c) = loaded.get(&pos) {
                    save.put_chunk(0, pos, c.lock().expect("chunk").encode(world.schema()));
                }
            }
        }

        // 7. The tick's save: one atomic batch.
        let t = Instant::now();
        world.save_tick(tick, save)?;
        save_nanos.push(t.elapsed().as_nanos() as u64);

        if tick.is_multiple_of(10) {
            s.regions_over_time.push((tick, world.regionizer().region_count()));
        }
        if tick.is_multiple_of(50) {
            let m = world.maintain(tick)?;
            s.maintenance_l0_to_l1 += m.l0_to_l1 as u64;
            s.maintenance_l1_to_l2 += m.l1_to_l2 as u64;
        }
        let ran = tick + 1 - first_tick;
        if ran <= args.ticks {
            tick_bar.set_position(ran);
        }
        let arena_finished = tick > first_tick + damage_tick && !restore_pending;
        if ran >= args.ticks && pregen_done_at.is_some() && arena_finished {
            break;
        }
        if ran > args.ticks.saturating_mul(20).max(20_000) {
            return Err(Fail::other(
                "the demo did not finish: the pre-generator or the restore is stuck",
            ));
        }
        if let Some(rest) = period.checked_sub(t0.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    tick_bar.finish();
    pregen.stop.store(true, Ordering::Relaxed);
    drop(pregen.rx);
    for t in pregen.threads {
        let _ = t.join();
    }
    s.pregen_seconds = pregen_done_at.map_or(0.0, |d| d.as_secs_f64());
    s.ticks = tick + 1 - first_tick;
    s.region_ticks = world.scheduler().map_or(0, |sc| sc.ticks());
    s.region_edits = shared.edits.load(Ordering::Relaxed);
    s.max_parallel_region_ticks = shared.max_running.load(Ordering::SeqCst);
    let gen_s = pregen.gen_nanos.load(Ordering::Relaxed) as f64 / 1e9;
    s.generation_chunks_per_sec = if gen_s > 0.0 { s.chunks_generated as f64 / gen_s } else { 0.0 };
    s.tick_saves = save_nanos.len() as u64;
    let total: u64 = save_nanos.iter().sum();
    s.save_mean_ms = total as f64 / save_nanos.len().max(1) as f64 / 1e6;
    s.save_max_ms = save_nanos.iter().copied().max().unwrap_or(0) as f64 / 1e6;
    s.saves_per_sec = if total > 0 { save_nanos.len() as f64 / (total as f64 / 1e9) } else { 0.0 };

    // Everyone logs out: the last changes are saved, every chunk unloads, and a maintenance
    // pass later in game time demotes what is idle or far.
    let mut save = TickSave::new();
    let mut cols: Vec<_> = loaded_cols.into_iter().collect();
    cols.sort_by_key(|(c, _)| *c);
    let dirty = std::mem::take(&mut *shared.dirty.lock().expect("dirty"));
    for (_, chunks) in cols {
        for pos in chunks {
            if dirty.contains(&pos)
                && let Some(c) = shared.loaded.read().expect("loaded").get(&pos)
            {
                save.put_chunk(0, pos, c.lock().expect("chunk").encode(world.schema()));
            }
            // Not logged: regions.log keeps the history up to the last tick, so a replay
            // shows the partition the players left.
            world.unload_chunk(pos)?;
        }
    }
    tick += 1;
    world.save_tick(tick, save)?;
    let m = world.maintain(tick + 100)?;
    s.maintenance_l0_to_l1 += m.l0_to_l1 as u64;
    s.maintenance_l1_to_l2 += m.l1_to_l2 as u64;
    region_log.flush().map_err(|e| Fail::io(&args.dir, e))?;
    s.wall_seconds = started.elapsed().as_secs_f64();
    Ok(s)
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
