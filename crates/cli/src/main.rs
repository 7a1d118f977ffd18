//! `terrane`: run the demo world; serve a world to Minecraft players; inspect, verify and back
//! up terrane worlds; read and write raw chunks and Sponge schematics; replay regionizer
//! histories; render maps; import and export Minecraft Java (Anvil) and Bedrock worlds.
//!
//! Logs go to stderr (`RUST_LOG` or `-v` / `-q`), results to stdout (human text, or JSON
//! with `--json`). Bad input exits with status 2 and a message naming what to fix; any other
//! failure exits with status 1.
#![forbid(unsafe_code)]

#[macro_use]
mod out;

mod anvil;
mod backup;
mod bedrock;
mod commands;
mod convert;
mod demo;
mod demo_shared;
mod fail;
mod logs;
mod own_binary;
mod progress;
mod refusal;
mod render;
mod restore;
mod serve;
mod soak;
mod trim;
mod when;

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use terrane::Backend;

pub use fail::Fail;

impl Fail {
    /// The same failure, its message prefixed with `context: `.
    pub fn context(self, context: impl fmt::Display) -> Self {
        Self { message: format!("{context}: {}", self.message), status: self.status }
    }
    /// An I/O error on `path`.
    pub fn io(path: &Path, e: std::io::Error) -> Self {
        Self::other(format!("{}: {e}", path.display()))
    }
}

impl From<terrane::Error> for Fail {
    fn from(e: terrane::Error) -> Self {
        match e {
            terrane::Error::Store(terrane::store::Error::Damaged { ref path, .. }) => {
                let world = path.parent().unwrap_or(path).display();
                Fail::other(format!("{e}\n(`terrane repair {world}` does that)"))
            }
            terrane::Error::Backup(e) => Fail::from(e),
            terrane::Error::NotAWorld(ref path) => not_a_world(path),
            terrane::Error::WouldOverwrite { .. } | terrane::Error::Refused(_) => {
                Fail::usage(refusal::with_flags(&e))
            }
            terrane::Error::Convert(e) => Fail::from(e),
            terrane::Error::CreationNotStarted(_) => Fail::usage(format!(
                "{e}\n(`terrane create PATH` creates a world; `terrane demo --force` replaces a \
                 demo world)"
            )),
            terrane::Error::AlreadyExists(_)
            | terrane::Error::UnknownBackend { .. }
            | terrane::Error::BackendNotBuilt { .. }
            | terrane::Error::BackendMismatch { .. }
            | terrane::Error::InvalidMarker { .. }
            | terrane::Error::CreateReadOnly
            | terrane::Error::OpenInMemory(_)
            | terrane::Error::BackupInMemory
            | terrane::Error::CreationUnfinished(_)
            | terrane::Error::NoServerId
            | terrane::Error::InvalidServerId(_)
            | terrane::Error::Lease(terrane::lease::LeaseError::InvalidServerId(_))
            | terrane::Error::CopyTableMissing(_)
            | terrane::Error::Store(
                terrane::store::Error::NotFound(_)
                | terrane::store::Error::AlreadyExists(_)
                | terrane::store::Error::NotAStore { .. },
            ) => Fail::usage(e.to_string()),
            _ if e.is_storage_full() => Fail::other(format!(
                "{e}\n(the disk is full: every save before this one is kept; free space, then \
                 open the world again)"
            )),
            _ => Fail::other(e.to_string()),
        }
    }
}

impl From<terrane::backup::Error> for Fail {
    fn from(e: terrane::backup::Error) -> Self {
        use terrane::backup::Error as E;
        match e {
            E::Store(e) => Fail::from(terrane::Error::Store(e)),
            E::NotARepository(ref path) => {
                Fail::usage(format!("{e}\n(`terrane backup WORLD {}` creates one)", path.display()))
            }
            E::NoSuchBackup(_) => {
                Fail::usage(format!("{e}\n(`terrane backup list REPO` shows them)"))
            }
            E::NotEmpty(_) | E::Empty | E::UnsupportedFormat { .. } => Fail::usage(e.to_string()),
            e => Fail::other(e.to_string()),
        }
    }
}

impl From<terrane_sim::Error> for Fail {
    fn from(e: terrane_sim::Error) -> Self {
        use terrane_sim::Error as E;
        match e {
            E::World(e) => Fail::from(e),
            E::Store(e) => Fail::from(terrane::Error::from(e)),
            E::SaveTick { world, tick, source } => {
                Fail::from(source).context(format!("world {world}: saving tick {tick}"))
            }
            E::Unreachable(e) => Fail::from(*e).context("the world was unreachable for a minute"),
            E::NotEmpty(_) | E::NotAWorld(_) | E::Setting(_) => Fail::usage(e.to_string()),
            e => Fail::other(e.to_string()),
        }
    }
}

/// A path that holds no terrane world, with the command that makes one.
fn not_a_world(path: &Path) -> Fail {
    let p = path.display();
    Fail::usage(if !path.exists() {
        format!(
            "{p} does not exist: no terrane world there; create one with `terrane create {p}`, \
             or import one (`terrane import anvil|bedrock SOURCE {p}`)"
        )
    } else if std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none()) {
        format!("{p} is empty, not a terrane world: create one there with `terrane create {p}`")
    } else {
        format!(
            "{p} is not a terrane world (no terrane-world file): check the path, or create a \
             world in a new folder (`terrane create NEW-FOLDER`)"
        )
    })
}

macro_rules! fail_from {
    ($($t:ty),*) => {$(
        impl From<$t> for Fail {
            fn from(e: $t) -> Self {
                Fail::other(e.to_string())
            }
        }
    )*};
}
fail_from!(
    terrane::store::Error,
    terrane::anvil::Error,
    terrane::cluster::Error,
    terrane::chunk::Error,
    terrane::distance::Error,
    terrane::regionizer::Error,
    terrane::snapshot::Error
);

/// A position or size as users type them on the command line: `x,y,z`.
pub fn xyz<T: fmt::Display>(v: [T; 3]) -> String {
    let [x, y, z] = v;
    format!("{x},{y},{z}")
}

/// Opens a world for reading it once through (verify, copy, export, backup, render): read-only,
/// with the small caches of `WorldBuilder::one_pass`.
pub fn open_one_pass(world: &std::path::Path) -> Result<terrane::World, terrane::Error> {
    terrane::World::builder().read_only(true).one_pass(true).open(world)
}

/// Parses a backend name for clap.
pub fn backend_arg(s: &str) -> Result<Backend, String> {
    let b = Backend::parse(s)
        .filter(|b| *b != Backend::Memory)
        .ok_or_else(|| format!("unknown backend {s:?} (rocksdb, blockfile or postgres)"))?;
    if !b.is_available() {
        return Err(format!("this build of terrane has no {b} backend"));
    }
    Ok(b)
}

#[derive(Parser, Debug)]
#[command(
    name = "terrane",
    version,
    about = "terrane worlds: demo, inspect, verify, back up, convert, render"
)]
struct Cli {
    /// More logging on stderr (-v: debug, -vv: trace). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    /// Only errors on stderr.
    #[arg(short, long, global = true)]
    quiet: bool,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Create a world and run the main job on it: terrain generation, walking players,
    /// regions ticking in parallel, nearest-first pre-generation, atomic tick saves, an arena
    /// snapshot damaged and restored. Prints what it measured.
    Demo(demo::DemoArgs),
    /// Create an empty world: a directory (RocksDB by default, or the block file) or a
    /// PostgreSQL connection string. It holds only `minecraft:air` unless --blocks names more
    /// block states; registries grow later as blocks are imported or saved.
    Create {
        /// The new world (a directory that must not exist or be empty, or a connection string
        /// whose schema holds no world).
        world: PathBuf,
        /// Backend of a directory world: rocksdb (default) or blockfile (one file that
        /// rewrites its whole index at every save: for worlds of a few thousand columns).
        #[arg(long, value_parser = backend_arg)]
        backend: Option<Backend>,
        /// A text file of block states to register, one per line as Minecraft writes them
        /// (`minecraft:oak_stairs[facing=east,half=top]`); blank lines and `#` comments are
        /// skipped.
        #[arg(long, value_name = "FILE")]
        blocks: Option<PathBuf>,
        /// Print JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Summary of a world: backend, tick, registries, chunks and bytes per level.
    Info(commands::WorldArgs),
    /// Full consistency check: every chunk decodes, one level per chunk, registries, entity
    /// references, the distance graph, checksums. Exit status 1 when anything is wrong.
    Verify(commands::WorldArgs),
    /// Open a damaged world anyway: keep every intact object, list each lost one, verify the
    /// rest. Worlds are never repaired silently: other commands refuse a damaged world. Also
    /// merges block states stored under several ids (spellings from before imports
    /// canonicalised them) into one id each.
    Repair(commands::WorldArgs),
    /// Copy a whole world into a new world of any backend: a directory (RocksDB or block
    /// file) or a PostgreSQL connection string, either way; the copy is verified.
    Copy {
        /// The world (a directory or a connection string).
        src: PathBuf,
        /// The new world (a directory that must not exist or be empty, or a connection
        /// string whose schema holds no world).
        dst: PathBuf,
        /// Backend of a new directory world: rocksdb (default) or blockfile (one file that
        /// rewrites its whole index at every save: for worlds of a few thousand columns).
        #[arg(long, value_parser = backend_arg)]
        backend: Option<Backend>,
    },
    /// Back a world up into a repository folder, writing only what changed since the
    /// repository's newest backup (`terrane backup WORLD REPO`); or list, verify or prune a
    /// repository's backups.
    Backup(backup::BackupArgs),
    /// Restore a backup (`--at ID`, default the newest) into a new world, or one area of an
    /// existing world (`--area X,Z`).
    Restore(restore::RestoreArgs),
    /// Remove the columns nobody changed since they were generated (compared with the
    /// generator's output), so that they are generated again when players come near;
    /// --dry-run counts them first.
    Trim(trim::TrimArgs),
    /// Raw chunk access, for debugging.
    #[command(subcommand)]
    Chunk(commands::ChunkCmd),
    /// Sponge schematics: inspect, import into a world, export a box of a world.
    #[command(subcommand)]
    Schem(commands::SchemCmd),
    /// The regionizer's tools.
    #[command(subcommand)]
    Regionizer(commands::RegionizerCmd),
    /// Import a Minecraft Java world (its folder, or one region folder) or a Bedrock world
    /// folder into a new or existing world.
    #[command(subcommand)]
    Import(anvil::ImportCmd),
    /// Export a world to a Minecraft Java region folder or, with --world-folder, a whole Java
    /// world folder; or to a Bedrock world folder.
    #[command(subcommand)]
    Export(anvil::ExportCmd),
    /// Convert a Java world folder (classic or 26.1 layout) into a new Bedrock world folder,
    /// or back: block states (the waterlogged layer included), biomes, containers with their
    /// items, signs and beds translated, column by column in bounded memory, resumable after a
    /// crash; the report counts every state, biome and block entity approximated or dropped,
    /// by name, and what was left behind.
    Convert(convert::ConvertArgs),
    /// Serve a world to Minecraft Java 1.20.1 players (offline mode; Valence): columns load
    /// from the world as players come near, every block change is saved in one atomic tick
    /// save (`saved TICK` on stdout). Ctrl-C saves and stops.
    Serve(serve::ServeArgs),
    /// Write a PNG: a top-down map of a world, or the regions of a replayed history.
    Render(render::RenderArgs),
}

fn run(cli: Cli) -> Result<(), Fail> {
    match cli.command {
        Command::Demo(args) if args.shared.server.is_some() => {
            let s = demo_shared::run(&args, args.shared.server.unwrap_or(0))?;
            if args.json {
                outln!("{}", serde_json::to_string_pretty(&s)?);
            } else {
                demo_shared::print_human(&s);
            }
            Ok(())
        }
        Command::Demo(args) => {
            let s = demo::run(&args)?;
            if args.json {
                outln!("{}", serde_json::to_string_pretty(&s)?);
            } else {
                demo::print_human(&s);
            }
            if !s.restore_exact {
                return Err(Fail::other(
                    "the demo's arena restore did not finish identical to its snapshot",
                ));
            }
            if let Some(v) = s.soak_verdict.as_ref().filter(|v| !v.goal_met) {
                return Err(Fail::other(format!(
                    "the soak goal was not met: memory x{:.3} (goal <= {}), tick-save p99 x{:.2} \
                     (goal <= {}), restores {} (a soak needs four minutes or more to be judged)",
                    v.memory_growth,
                    terrane_sim::soak::MAX_MEMORY_GROWTH,
                    v.p99_growth,
                    terrane_sim::soak::MAX_P99_GROWTH,
                    if v.restores_exact { "exact" } else { "NOT all exact" }
                )));
            }
            Ok(())
        }
        Command::Create { world, backend, blocks, json } => {
            commands::create(&world, backend, blocks.as_deref(), json)
        }
        Command::Info(a) => commands::info(&a),
        Command::Verify(a) => commands::verify(&a),
        Command::Repair(a) => commands::repair(&a),
        Command::Copy { src, dst, backend } => commands::copy(&src, &dst, backend),
        Command::Backup(a) => backup::run(&a),
        Command::Restore(a) => restore::run(&a),
        Command::Trim(a) => trim::run(&a),
        Command::Chunk(c) => commands::chunk(c),
        Command::Schem(c) => commands::schem(c),
        Command::Regionizer(c) => commands::regionizer(c),
        Command::Import(c) => anvil::import(c),
        Command::Export(c) => anvil::export(c),
        Command::Convert(a) => own_binary::convert(&a),
        Command::Serve(a) => serve::run(&a),
        Command::Render(a) => render::run(&a),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    logs::init(cli.verbose, cli.quiet);
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            eprintln!("error: {f}");
            ExitCode::from(f.status)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Fail;
    use std::io;

    /// Where a library message names a library call, the command names its own command.
    #[test]
    fn library_errors_get_the_command_that_does_what_they_ask() {
        let cases = [
            (Fail::from(terrane::backup::Error::NoSuchBackup(3)), "`terrane backup list REPO`"),
            (
                Fail::from(terrane::backup::Error::NotARepository("r".into())),
                "`terrane backup WORLD r` creates one",
            ),
            (
                Fail::from(terrane::Error::CreationNotStarted("w".into())),
                "`terrane create PATH` creates a world",
            ),
        ];
        for (fail, says) in cases {
            assert_eq!(fail.status, 2, "{fail}");
            assert!(fail.message.contains(says), "{fail}");
        }
    }

    #[test]
    fn a_full_disk_says_so_and_what_to_do() {
        let full = io::Error::new(io::ErrorKind::StorageFull, "No space left on device");
        let fail = Fail::from(terrane::Error::Store(terrane::store::Error::Io(full)));
        assert_eq!(fail.status, 1);
        assert!(fail.message.contains("No space left on device"), "{fail}");
        assert!(fail.message.contains("the disk is full: every save before this one is kept"));
        // The text alone does not make a full disk.
        let other = io::Error::other("No space left on device");
        let fail = Fail::from(terrane::Error::Store(terrane::store::Error::Io(other)));
        assert!(!fail.message.contains("the disk is full"), "{fail}");
    }

    #[test]
    fn configuration_errors_are_usage_errors() {
        let e = terrane::Error::BackendMismatch {
            dir: Some("w".into()),
            found: terrane::Backend::BlockFile,
            requested: terrane::Backend::RocksDb,
        };
        assert_eq!(Fail::from(e).status, 2);
        assert_eq!(Fail::from(terrane::Error::CreateReadOnly).status, 2);
    }
}
