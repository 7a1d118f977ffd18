//! Minecraft worlds from one edition to the other: a Java world folder to a Bedrock world
//! folder and back, block states translated through terrane-bedrock's table
//! ([`translate`](terrane_bedrock::translate)), column by column.
//!
//! # Overview
//!
//! - **Java → Bedrock** ([`java_to_bedrock`]): terrane-anvil's importer reads each dimension's
//!   regions, one column at a time, and hands its chunks over decoded; each is translated and
//!   encoded once, as a Bedrock sub-chunk, into the new database. Nothing else of the world is
//!   held.
//! - **Bedrock → Java** ([`bedrock_to_java`]): the Bedrock database is read column by column;
//!   each column's chunks are translated as decoded, encoded once and appended to a spill
//!   file of its region beside the destination; then each region's spill is written as a region file by terrane-anvil's
//!   exporter, which reads the spill back one column at a time and writes the region file
//!   as it goes. The spill files' format and crash argument: `docs/format/convert-spill.md`.
//!
//! Memory therefore does not grow with the number of columns (`docs/BENCHMARKS.md`, "Whole
//! worlds"). The destination must be missing or an empty folder; the world is written under
//! a temporary name beside it and renamed into place once whole, so a failed conversion
//! leaves nothing behind, and a conversion run again after a crash goes on where the
//! crashed one stopped ([`ConvertSummary::columns_resumed`]).
//!
//! What is translated, and what is reported instead ([`ConvertSummary`]):
//! - block states, with the waterlogged layer, by the table's rules: every approximated or
//!   dropped state is counted by name ([`TranslationReport`](terrane_bedrock::translate::TranslationReport));
//! - the Overworld, the Nether and the End (Java's other dimensions are counted as skipped);
//! - finished columns only: a column saved before its last generation stage (Java's
//!   `Status`, `ColumnRecord::is_finished`; Bedrock's `FinalizedState`,
//!   `RawColumn::unfinished_stage`) is left out and counted by its stage
//!   ([`ConvertSummary::unfinished`]), so that the other edition generates it rather than
//!   showing it unfinished;
//! - `level.dat`: the name, spawn, seed, game mode, difficulty and last-played time both
//!   editions keep ([`LevelSettings`](terrane_chunk::level_settings::LevelSettings), read and
//!   written by [`terrane_anvil::level_dat`] and [`terrane_bedrock::level_dat`]); a converted
//!   Java world has no world-generation settings; a source `level.dat` that does not read is
//!   refused ([`Error::DamagedLevelDat`]) unless [`ConvertOptions::rebuild_level_dat`] says to
//!   write one from defaults;
//! - biomes: Java's section biomes ⇄ Bedrock's `Data3D` record, with its height map (a
//!   Java column before 1.18 by its biome numbers, read by their 1.18+ names); legacy and
//!   missing biomes are counted as approximated ([`ConvertSummary`]);
//! - block entities: containers (their items through the table's item lines) and signs
//!   ([`block_entity`](terrane_bedrock::block_entity)); the others are counted as left out;
//! - entities: mobs and dropped items, in their position, identity, name and common flags
//!   ([`entity`](terrane_bedrock::entity)); the other kinds are counted as left out, and
//!   the fields of translated ones that are not kept as approximated;
//! - the single-player world's player (Java `level.dat`'s `Player` ⇄ Bedrock
//!   `~local_player`): place, game mode, experience and every item it carries
//!   ([`player`](terrane_bedrock::player)), and every other player the same way (Java's
//!   player files ⇄ Bedrock's `player_server_` records; a Java UUID is the Bedrock id,
//!   [`bedrock_player_uuid`], [`BEDROCK_PLAYER_IDS`]);
//! - light and the rest of each column are not translated: the game computes light anew.
//!
//! # Example
//!
//! The repository's test Bedrock world to Java, and back:
//!
//! ```
//! use std::path::Path;
//!
//! let bedrock = Path::new(env!("CARGO_MANIFEST_DIR")).join("../bedrock/tests/data/world");
//! let out = tempfile::tempdir()?;
//! let java = out.path().join("java");
//! let s = terrane_convert::bedrock_to_java(&bedrock, &java, &mut |_| {})?;
//! assert!(s.columns > 0 && java.join("level.dat").is_file());
//! println!("{} columns, {} cells approximated", s.columns, s.blocks.approximated_cells());
//!
//! let again = out.path().join("bedrock");
//! let back = terrane_convert::java_to_bedrock(&java, &again, &mut |p| {
//!     eprintln!("{} columns", p.columns_done)
//! })?;
//! assert_eq!(back.columns, s.columns);
//!
//! // A conversion writes a new world: a destination that holds one is refused.
//! let e = terrane_convert::java_to_bedrock(&java, &again, &mut |_| {}).unwrap_err();
//! assert!(matches!(e, terrane_convert::Error::Destination { .. }), "{e}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! None.
//!
//! # What it does not guarantee
//!
//! - A conversion translates what the table and the rules above cover; everything else is
//!   counted in the [`ConvertSummary`], not kept.
//! - A crash leaves the temporary folder beside the destination (`.NAME.terrane-convert`):
//!   the same conversion run again (same direction and source, same terrane version) goes on
//!   from it; another conversion, or a failure that is not a crash, removes it.
//! - Damaged source records are skipped and listed ([`ConvertSummary::damaged`]); a source
//!   whose every column read was damaged writes no world ([`Error::NothingConverted`]).
//! - Bedrock → Java needs disk space for the spill files besides the new world (about the
//!   size of the translated chunks), removed region by region as they are written.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod bedrock_to_java;
mod biomes;
pub mod block_entities;
pub mod entities;
mod error;
mod java_to_bedrock;
mod options;
pub mod place;
mod players;
mod spill;
mod summary;

pub use bedrock_to_java::{bedrock_to_java, bedrock_to_java_with};
pub use error::{Error, Result};
pub use java_to_bedrock::{java_to_bedrock, java_to_bedrock_with};
pub use options::ConvertOptions;
pub use place::Found;
pub use players::{BEDROCK_PLAYER_IDS, bedrock_player_uuid};
pub use summary::{ConvertProgress, ConvertSummary};

/// The Minecraft Java `DataVersion` written into converted Java columns: 1.21.11's, the Java
/// release whose block states the table holds.
pub const JAVA_DATA_VERSION: i32 = 4671;
