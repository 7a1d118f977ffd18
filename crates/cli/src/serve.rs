//! `terrane serve`: a Minecraft Java 1.20.1 server (offline mode) on a world, through
//! terrane-valence. This file parses and prints; the server is the library's.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use terrane::World;
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
}

/// Serves the world until Ctrl-C (SIGINT), then saves and returns. Prints `saved TICK` on
/// stdout after each acknowledged save, and a status line each second on stderr.
pub fn run(args: &ServeArgs) -> Result<(), Fail> {
    let world = World::open(&args.world)?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .map_err(|e| Fail::other(format!("cannot catch Ctrl-C: {e}")))?;
    let tick = ServerBuilder::new()
        .address(SocketAddr::new(args.bind, args.port))
        .max_players(usize::try_from(args.max_players).unwrap_or(usize::MAX))
        .save_every(args.save_every)
        .run(world, stop, |event| match event {
            ServerEvent::Listening { address } => eprintln!(
                "listening on {address}: Minecraft Java 1.20.1, offline mode (Multiplayer → \
                 Direct Connection → {address}); Ctrl-C saves and stops"
            ),
            ServerEvent::Saved { tick } => outln!("saved {tick}"),
            ServerEvent::Status(s) => eprintln!(
                "players {} | columns {} | durable tick {} | unsaved chunks {}",
                s.players, s.columns, s.durable_tick, s.unsaved_chunks
            ),
            ServerEvent::Stopped { tick } => eprintln!("stopping: saved up to tick {tick}"),
            _ => {}
        })
        .map_err(|e| match e {
            terrane_valence::Error::World(e) => Fail::from(e),
            e @ (terrane_valence::Error::Bind { .. } | terrane_valence::Error::Setting(_)) => {
                Fail::usage(e.to_string())
            }
            e => Fail::other(e.to_string()),
        })?;
    eprintln!("stopped: every change up to tick {tick} is saved");
    Ok(())
}
