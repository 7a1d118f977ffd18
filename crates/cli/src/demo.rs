//! `terrane demo`: the main job, end to end on one world (terrane-sim's demo, soak and
//! shared-world server), with its progress bars and its summary.

use std::path::{Path, PathBuf};

use terrane::Backend;
use terrane_sim::Event;
use terrane_sim::demo::{DemoConfig, DemoSummary};
use terrane_sim::shared_server::SharedServerConfig;
use terrane_sim::soak::SoakConfig;

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
    /// Storage backend: rocksdb (default) or blockfile (one file that
    /// rewrites its whole index at every save: for worlds of a few thousand columns).
    #[arg(long, value_parser = backend_arg)]
    pub backend: Option<Backend>,
    /// Terrain seed.
    #[arg(long, default_value_t = DemoConfig::DEFAULT.seed)]
    pub seed: u64,
    /// Game ticks to simulate (more run while the pre-generator or a restore finishes).
    #[arg(long, default_value_t = DemoConfig::DEFAULT.ticks)]
    pub ticks: u64,
    /// Target ticks per second of the main loop and of the region scheduler.
    #[arg(long, default_value_t = DemoConfig::DEFAULT.tps)]
    pub tps: f64,
    /// Simulated players.
    #[arg(long, default_value_t = DemoConfig::DEFAULT.players)]
    pub players: usize,
    /// View (simulation) distance in chunks: columns within it are loaded around each player.
    #[arg(long, default_value_t = DemoConfig::DEFAULT.view)]
    pub view: i64,
    /// Players walk within this many blocks of spawn: they start spread on a circle of 0.8
    /// times it, in separate regions, and head across spawn, where their regions merge.
    #[arg(long, default_value_t = DemoConfig::DEFAULT.walk)]
    pub walk: f64,
    /// Player speed in blocks per tick.
    #[arg(long, default_value_t = DemoConfig::DEFAULT.speed)]
    pub speed: f64,
    /// Radius in chunks of the disc the pre-generator fills around spawn.
    #[arg(long, default_value_t = DemoConfig::DEFAULT.pregen_radius)]
    pub pregen_radius: u32,
    /// Pre-generator worker threads.
    #[arg(long, default_value_t = DemoConfig::DEFAULT.pregen_threads)]
    pub pregen_threads: usize,
    /// Region scheduler worker threads.
    #[arg(long, default_value_t = DemoConfig::DEFAULT.workers)]
    pub workers: usize,
    /// Regionizer section shift (Folia presets: 4 or 2).
    #[arg(long, default_value_t = DemoConfig::DEFAULT.region_shift)]
    pub region_shift: u32,
    /// Simulated work per region tick (entities, redstone), in microseconds of CPU.
    #[arg(long, default_value_t = DemoConfig::DEFAULT.region_work_us)]
    pub region_work_us: u64,
    /// Arena edge in blocks (x and z; 24 blocks high).
    #[arg(long, default_value_t = DemoConfig::DEFAULT.arena)]
    pub arena: u32,
    /// Time budget per tick for the arena restore, in milliseconds.
    #[arg(long, default_value_t = DemoConfig::DEFAULT.restore_budget_ms)]
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
    #[arg(long, default_value_t = SoakConfig::minutes(0.0).row_seconds, hide = true)]
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
    #[arg(long, default_value_t = SharedServerConfig::DEFAULT.servers, help_heading = "Shared world")]
    pub servers: usize,
    /// How long a shared-world server runs, in seconds (with --server).
    #[arg(long, default_value_t = SharedServerConfig::DEFAULT.seconds, help_heading = "Shared world")]
    pub seconds: f64,
    /// Lease time to live in milliseconds (with --server): an area whose server stops
    /// renewing is taken over this long after its last renewal.
    #[arg(long, default_value_t = SharedServerConfig::DEFAULT.lease_ms, help_heading = "Shared world")]
    pub lease_ms: u64,
    /// Save every this many ticks (with --server).
    #[arg(long, default_value_t = SharedServerConfig::DEFAULT.save_every, help_heading = "Shared world")]
    pub save_every: u64,
    /// Log every write attempt and its outcome to FILE, and store an audit object per save
    /// (with --server; for crash tests).
    #[arg(long, value_name = "FILE", help_heading = "Shared world")]
    pub log: Option<PathBuf>,
    /// Saves in flight at once (with --server): a save crosses to the database while the next
    /// ticks run, and counts as acknowledged once it is durable (0: each save waits).
    #[arg(long, value_name = "N", default_value_t = SharedServerConfig::DEFAULT.saves_in_flight, help_heading = "Shared world")]
    pub saves_in_flight: usize,
}

impl DemoArgs {
    /// The world's location and the demo's settings.
    fn config(&self) -> Result<(PathBuf, DemoConfig), Fail> {
        let mut config = DemoConfig {
            replace: self.force,
            backend: self.backend,
            seed: self.seed,
            ticks: self.ticks,
            tps: self.tps,
            players: self.players,
            view: self.view,
            walk: self.walk,
            speed: self.speed,
            pregen_radius: self.pregen_radius,
            pregen_threads: self.pregen_threads,
            workers: self.workers,
            region_shift: self.region_shift,
            region_work_us: self.region_work_us,
            arena: self.arena,
            restore_budget_ms: self.restore_budget_ms,
            soak: self
                .soak
                .minutes
                .map(|minutes| SoakConfig { minutes, row_seconds: self.soak.soak_row_seconds }),
        };
        let Some(store) = &self.store else { return Ok((self.dir.clone(), config)) };
        if terrane::connection_string(Path::new(store)).is_none() {
            return Err(Fail::usage(format!(
                "--store {store:?} is not a PostgreSQL connection string"
            )));
        }
        config.backend = Some(Backend::Postgres);
        Ok((PathBuf::from(store), config))
    }

    /// The settings of one server of a shared world.
    pub fn shared_config(&self) -> SharedServerConfig {
        SharedServerConfig {
            servers: self.shared.servers,
            seconds: self.shared.seconds,
            lease_ms: self.shared.lease_ms,
            save_every: self.shared.save_every,
            log: self.shared.log.clone(),
            walkers: self.players,
            tps: self.tps,
            speed: self.speed,
            saves_in_flight: self.shared.saves_in_flight,
        }
    }
}

/// Runs the demo with a progress bar per phase; returns the summary (printed by the caller).
pub fn run(args: &DemoArgs) -> Result<DemoSummary, Fail> {
    let (location, config) = args.config()?;
    let pregen = crate::progress::bar(args.json, "");
    pregen.set_message("pre-generate");
    let ticks = crate::progress::bar(args.json, "");
    ticks.set_message("ticks");
    ticks.set_length(config.ticks);
    let summary = terrane_sim::demo::run(&location, &config, |event| match event {
        Event::Pregenerated { completed, disc } => {
            pregen.set_length(disc);
            pregen.set_position(completed);
            if completed >= disc && !pregen.is_finished() {
                pregen.finish_with_message("pre-generated");
            }
        }
        Event::Ticked { ran, .. } => ticks.set_position(ran),
        _ => {}
    });
    ticks.finish();
    Ok(summary?)
}

/// Prints the summary for people.
pub fn print_human(s: &DemoSummary) {
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
