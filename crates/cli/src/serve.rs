//! `terrane serve`: a Minecraft Java 1.20.1 server (offline mode) on a world, through
//! terrane-valence. This file parses and prints; the server is the library's.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use terrane::World;
use terrane::worldgen::Terrain;
use terrane_valence::valence::prelude::GameMode;
use terrane_valence::{ServerBuilder, ServerEvent};

use crate::Fail;

/// `terrane serve` arguments.
#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// The world (a directory or a connection string). Columns it does not hold are
    /// generated as flat ground and saved.
    pub world: PathBuf,
    /// The address to listen on.
    #[arg(long, default_value_t = IpAddr::V4(Ipv4Addr::LOCALHOST))]
    pub bind: IpAddr,
    /// The port to listen on.
    #[arg(long, default_value_t = 25565)]
    pub port: u16,
    /// Players admitted at once.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u64).range(1..))]
    pub max_players: u64,
    /// Save every N ticks (1: every tick that changed a block).
    #[arg(long, default_value_t = 1, value_name = "N",
          value_parser = clap::value_parser!(u32).range(1..))]
    pub save_every: u32,
    /// The largest view distance granted, in chunks (a client asking for more gets this).
    #[arg(long, default_value_t = 10, value_name = "CHUNKS",
          value_parser = clap::value_parser!(u8).range(2..=32))]
    pub view_distance: u8,
    /// The terrain of columns the world does not hold yet.
    #[arg(long, value_enum, default_value_t = TerrainArg::Hills)]
    pub terrain: TerrainArg,
    /// The seed of `--terrain hills`.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The game mode of players joining for the first time (returning players keep theirs).
    #[arg(long, value_enum, default_value_t = Mode::Creative)]
    pub game_mode: Mode,
    /// Save players apart from chunks and chests, every N ticks (chunks and chests every
    /// `--save-every` ticks), as vanilla Minecraft and most servers do. For comparison
    /// only: a crash between the two saves duplicates or loses the items players moved.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub players_apart: Option<u32>,
    /// Back the world up into this repository while it runs (created when missing; only
    /// what changed since its newest backup is written), at once and every --backup-every
    /// minutes. A line on stderr says what each backup wrote.
    #[arg(long, value_name = "REPO")]
    pub backup_repo: Option<PathBuf>,
    /// Minutes between backups (with --backup-repo).
    #[arg(long, value_name = "MINUTES", default_value_t = 10.0)]
    pub backup_every: f64,
    /// Keep only the newest N backups of --backup-repo: each backup is followed by a prune
    /// (the space of what changed since is freed; default: keep every backup).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub backup_keep: Option<u64>,
    /// Listen for restores on this Unix socket (`terrane restore REPO WORLD --area X,Z`
    /// reaches the server there); default WORLD/serve.sock for a world in a folder, none for
    /// a connection string.
    #[arg(long, value_name = "PATH")]
    pub control: Option<PathBuf>,
    /// Saves in flight at once: a tick's save crosses to the store while the next ticks run,
    /// and `saved TICK` is printed once it is durable (0: each tick waits for its save).
    /// When the store falls behind by this many saves, the ticks slow down (the status line
    /// shows the wait).
    #[arg(long, value_name = "N", default_value_t = 4)]
    pub saves_in_flight: usize,
    /// Print every applied block edit on stdout, `edit TICK X Y Z STATE`, before the
    /// `saved TICK` that makes it durable (for audits and crash tests).
    #[arg(long)]
    pub print_edits: bool,
}

/// A terrain generator (terrane-worldgen).
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum TerrainArg {
    /// Hills, a sea, beaches and snowy peaks from `--seed`.
    Hills,
    /// Flat ground: grass at y 64.
    Flat,
}

impl TerrainArg {
    /// The generator, with `seed` for hills.
    pub fn terrain(self, seed: u64) -> Terrain {
        match self {
            TerrainArg::Hills => Terrain::Hills { seed },
            TerrainArg::Flat => Terrain::Flat,
        }
    }
}

/// A game mode.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub enum Mode {
    /// Survival: digging takes time, placing uses up items.
    Survival,
    /// Creative.
    Creative,
    /// Adventure.
    Adventure,
    /// Spectator.
    Spectator,
}

/// Serves the world until Ctrl-C (SIGINT), then saves and returns. Prints `saved TICK` on
/// stdout after each acknowledged save, and a status line each second on stderr.
pub fn run(args: &ServeArgs) -> Result<(), Fail> {
    let world = World::builder().saves_in_flight(args.saves_in_flight).open(&args.world)?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .map_err(|e| Fail::other(format!("cannot catch Ctrl-C: {e}")))?;
    let backups = match &args.backup_repo {
        None => None,
        Some(repo) => {
            let every = std::time::Duration::from_secs_f64(args.backup_every.max(0.001) * 60.0);
            let keep = args.backup_keep.map(|n| terrane::backup::Keep {
                last: usize::try_from(n).unwrap_or(usize::MAX),
                ids: Vec::new(),
            });
            let thread = world.backup_source().spawn_every(
                repo.clone(),
                every,
                keep,
                Arc::clone(&stop),
                |r| match r {
                    Ok(s) => {
                        let b = &s.backup;
                        eprintln!(
                            "backup {}: tick {}, {} objects, {} changed, {} removed; wrote {:.2} MiB",
                            b.id,
                            b.tick,
                            b.objects,
                            b.changed,
                            b.removed,
                            b.written_bytes() as f64 / (1024.0 * 1024.0)
                        );
                        if let Some(p) = s.pruned.filter(|p| !p.removed.is_empty()) {
                            eprintln!(
                                "pruned backups {:?}: {:.2} MiB freed",
                                p.removed,
                                p.bytes_freed as f64 / (1024.0 * 1024.0)
                            );
                        }
                    }
                    Err(e) => eprintln!("backup failed (the next one is tried on time): {e}"),
                },
            )?;
            Some(thread)
        }
    };
    let control = args.control.clone().or_else(|| {
        args.world.is_dir().then(|| args.world.join(terrane_valence::control::SOCKET_NAME))
    });
    let mut server = ServerBuilder::new();
    if let Some(path) = control {
        server = server.control_socket(path);
    }
    let tick = server
        .address(SocketAddr::new(args.bind, args.port))
        .max_players(usize::try_from(args.max_players).unwrap_or(usize::MAX))
        .save_every(args.save_every)
        .game_mode(match args.game_mode {
            Mode::Survival => GameMode::Survival,
            Mode::Creative => GameMode::Creative,
            Mode::Adventure => GameMode::Adventure,
            Mode::Spectator => GameMode::Spectator,
        })
        .report_edits(args.print_edits)
        .terrain(args.terrain.terrain(args.seed))
        .players_apart(args.players_apart)
        .view_distance(args.view_distance)
        .run(world, stop, |event| match event {
            ServerEvent::Listening { address } => eprintln!(
                "listening on {address}: Minecraft Java 1.20.1, offline mode (Multiplayer → \
                 Direct Connection → {address}); Ctrl-C saves and stops"
            ),
            ServerEvent::Saved { tick } => outln!("saved {tick}"),
            ServerEvent::Status(s) => eprintln!(
                "players {} | columns {} | tick p50 {:.1} ms p99 {:.1} ms | {} saves p50 {:.1} ms \
                 p99 {:.1} ms | durable tick {} | unsaved {} | in flight {} waited {:.1} ms",
                s.players,
                s.columns,
                ms(s.tick_p50),
                ms(s.tick_p99),
                s.saves,
                ms(s.save_p50),
                ms(s.save_p99),
                s.durable_tick,
                s.unsaved_chunks,
                s.saves_in_flight,
                ms(s.save_wait)
            ),
            ServerEvent::Applied(a) => {
                let [x, y, z] = a.position;
                outln!("edit {} {x} {y} {z} {}", a.tick, a.state);
            }
            ServerEvent::Stopped { tick } => eprintln!("stopping: saved up to tick {tick}"),
            _ => {}
        })
        .map_err(|e| match e {
            terrane_valence::Error::World(e) => Fail::from(e),
            e @ (terrane_valence::Error::Bind { .. }
            | terrane_valence::Error::Setting(_)
            | terrane_valence::Error::Control { .. }) => Fail::usage(e.to_string()),
            e => Fail::other(e.to_string()),
        })?;
    if let Some(b) = backups {
        let _ = b.join();
    }
    eprintln!("stopped: every change up to tick {tick} is saved");
    Ok(())
}

fn ms(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
