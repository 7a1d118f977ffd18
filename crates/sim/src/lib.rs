//! terrane-sim: a simulated game server on a terrane world, for demos, soaks, benchmarks and
//! crash tests: the load a real server puts on terrane, without a game.
//!
//! # Overview
//!
//! - [`demo::run`]: one world, end to end. Players walk and load the columns within their
//!   view distance (each chunk a regionizer add, each unload a remove); a pre-generator's
//!   threads fill a disc of columns nearest first from the world's distance graph; regions
//!   tick in parallel on the scheduler's workers (random block ticks, a builder's edits,
//!   simulated CPU work); every tick saves its changes as one atomic batch; maintenance moves
//!   idle chunks down the tiers; an arena is captured as a snapshot, blown up and restored
//!   within a time budget per tick. Returns a [`demo::DemoSummary`] of what it measured.
//! - A soak ([`demo::DemoConfig::soak`], [`soak`]): the same world played for minutes, the
//!   arena damaged and restored again and again, one [`soak::SoakRow`] per interval
//!   (tick-save percentiles, resident memory, restores) and a [`soak::SoakVerdict`]: flat
//!   memory, a p99 that does not grow, every restore exact.
//! - [`shared_server::run`]: one game server of several sharing a world on PostgreSQL, on
//!   [`terrane::shared`]'s policy: it leases its home areas, saves fenced by them, hands
//!   walkers off to the others' areas, takes over areas whose owner is gone and hands them
//!   back when it returns, and reads its areas back after a save of unknown outcome.
//!
//! The terrain is terrane-worldgen's hills. Runs report through an [`Event`] callback and
//! never print: `terrane demo` draws the progress bars and prints the summaries.
//!
//! # Example
//!
//! ```
//! use terrane_sim::demo::{self, DemoConfig};
//! use terrane::Backend;
//!
//! let dir = tempfile::tempdir()?;
//! let config = DemoConfig {
//!     backend: Some(Backend::BlockFile),
//!     ticks: 40,
//!     tps: 0.0, // as fast as it goes
//!     players: 2,
//!     view: 2,
//!     walk: 64.0,
//!     pregen_radius: 3,
//!     region_work_us: 0,
//!     arena: 16,
//!     ..DemoConfig::DEFAULT
//! };
//! let summary = demo::run(&dir.path().join("world"), &config, |_| {})?;
//! assert!(summary.restore_exact, "the arena is back as captured");
//! assert!(summary.tick_saves >= 40 && summary.chunks_generated > 0);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! `rocksdb`, `blockfile`, `postgres`: the backends of the facade, for the embedder to
//! choose (`terrane demo` builds all three). [`shared_server::run`] needs a PostgreSQL
//! world.
//!
//! # What it does not guarantee
//!
//! - Not a game: no physics, no mobs' behaviour, no network. Players and walkers follow
//!   seeded random walks; what a region tick does stands in for a server's work.
//! - Runs are repeatable in what they write only with `tps` and worker counts fixed and a
//!   quiet machine: the pre-generator and the region ticks race the main loop by design.
//! - Timings are the machine's: the summaries report them, nothing asserts on them.
//! - The walker records and the `demo:` keys it writes in `worldProperties` are this crate's
//!   own (see [`shared_server`]), not a format other tools read.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod arena;
pub mod demo;
mod demo_loop;
mod error;
mod event;
mod pregen;
mod region_tick;
pub mod shared_server;
pub mod soak;
mod walker;

pub use error::{Error, Result};
pub use event::{Event, ServerStatus};
