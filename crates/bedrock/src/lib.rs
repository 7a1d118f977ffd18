//! Minecraft Bedrock Edition worlds in and out of terrane: a world folder's `level.dat` and
//! its `db/` (Mojang's LevelDB), sub-chunks converted to and from cubic 16³ terrane chunks.
//!
//! # Overview
//!
//! - [`db`]: the database through rusty-leveldb with Bedrock's compressions (raw deflate and
//!   zlib). [`db::ReadDb`] reads a private copy, so an import never changes the world it
//!   reads; [`db::WriteDb`] writes a new one as Bedrock does (raw-deflate tables).
//! - [`key`]: what each key is: a column's record ([`key::tag`]), an entity (`actorprefix`),
//!   a column's entity list (`digp`), or a world record kept as it is.
//! - [`SubChunk`]: the `SubChunkPrefix` record, versions 1, 8 and 9, one or more storages
//!   (block layers), any width; written as version 9.
//! - [`names`]: block states as registry names that keep every state's type
//!   (`minecraft:stone_slab[minecraft:vertical_half="top"]`), and back.
//! - [`read::read_db`]: a database read column by column, the three dimensions of one `x`,
//!   `z` together, with the entities each column lists.
//! - [`mapping`]: a column ↔ terrane chunks, entity records and a [`BedrockRecord`] that keeps
//!   everything else as stored.
//! - [`checksums`]: the `Checksums` column record (xxHash64 of sub-chunks and other
//!   records), rebuilt by an export from the bytes it writes.
//! - [`level_dat`]: `level.dat`'s header and settings ([`LevelDat`]), and the settings both
//!   editions keep read and written for conversions.
//! - [`is_bedrock_world`]: whether a folder is a Bedrock world folder; [`NATIVE_BLOCK_VERSION`]
//!   the block version of states that never came from Bedrock.
//! - [`data3d`]: the `Data3D` record (height map and 3D biomes), decoded and encoded.
//! - [`translate`]: block states between Java and Bedrock through the table in
//!   `data/java-bedrock.tsv.gz` (generated from minecraft-data by `cargo xtask tables`;
//!   `docs/format/java-bedrock-table.md`), and chunks re-encoded from one edition's states to
//!   the other's with a report of what was approximated or dropped.
//! - [`upgrade`]: states saved by older Bedrock versions brought up to date (the public
//!   upgrade schemas, vendored in `data/block-upgrade-schema/`) before the table looks them
//!   up, so an old world's `minecraft:grass` is today's `minecraft:grass_block`.
//! - [`block_entity`]: containers (with their items), signs and beds between Java's and
//!   Bedrock's forms, by the rules of the same document; the rest counted, never dropped
//!   silently.
//! - [`entity`]: mobs and dropped items between the editions' forms, and [`player`] the
//!   single-player world's player (`level.dat`'s `Player` ⇄ `~local_player`), likewise.
//!
//! The keys, the sub-chunk layout and the mapping are specified in `docs/format/bedrock.md`;
//! the facade's `terrane::bedrock` imports and exports whole world folders into a world.
//!
//! # Example
//!
//! ```
//! use terrane_bedrock::subchunk::{CELLS, Storage, SubChunk, bedrock_index};
//! use terrane_bedrock::names::{parse_state_name, state_name};
//!
//! // A sub-chunk of stone with one waterlogged cell: water in the second storage.
//! let stone = parse_state_name("minecraft:stone", 18_100_737)?;
//! let air = parse_state_name("minecraft:air", 18_100_737)?;
//! let water = parse_state_name("minecraft:water[liquid_depth=0]", 18_100_737)?;
//! let mut layer1 = Box::new([0u16; CELLS]);
//! layer1[bedrock_index(1, 2, 3)] = 1;
//! let bytes = SubChunk::encode(-4, &[
//!     Storage { palette: vec![stone.clone()], indices: Box::new([0; CELLS]) },
//!     Storage { palette: vec![air, water.clone()], indices: layer1 },
//! ])?;
//! let back = SubChunk::decode(&bytes)?;
//! assert_eq!((back.version, back.y, back.storages.len()), (9, Some(-4), 2));
//! assert_eq!(state_name(&back.storages[1].palette[1], 18_100_737), "minecraft:water[liquid_depth=0]");
//! # Ok::<(), terrane_bedrock::Error>(())
//! ```
//!
//! # Features
//!
//! None.
//!
//! # What it does not guarantee
//!
//! - Block states keep their Bedrock names and states on import and export (a Bedrock world
//!   stays Bedrock inside terrane); [`translate`] maps them to and from Java's only when asked,
//!   [`block_entity`] only containers, signs and beds, [`entity`] only mobs and dropped
//!   items, in their position, identity, name and common flags, and [`player`] only the
//!   single-player world's player (the rest is counted).
//! - Sub-chunks older than 1.2.13 (versions 0 and 2–7, numeric block ids) are not converted:
//!   they are kept as stored in the column record and written back as they were.
//! - Block entities, biomes, the pre-1.18.30 entity list and every other column record are
//!   kept as stored, not decoded into components; entities of current worlds become entity
//!   records.
//! - Reading copies the `db/` folder first (disk space of the world's database).
//! - Exports write version-9 sub-chunks with their palette in first-use order: an exported
//!   database equals the original record for record as blocks, not byte for byte; a
//!   column's `Checksums` record is rebuilt to match the bytes written.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod block_entity;
pub mod checksums;
pub mod data3d;
pub mod db;
pub mod entity;
mod error;
pub mod key;
pub mod legacy;
pub mod level_dat;
pub mod log_check;
pub mod mapping;
/// The former name of [`mapping`], kept so code written against it still builds: in terrane,
/// *convert* means Java ⇄ Bedrock conversion (terrane-convert), not one column's mapping.
#[deprecated(since = "0.1.1", note = "renamed `mapping`")]
pub mod convert {
    pub use crate::mapping::*;
}
pub mod names;
pub mod player;
pub mod read;
pub mod subchunk;
pub mod table_check;
pub mod translate;
pub mod upgrade;

pub use error::{Error, Result};
pub use level_dat::LevelDat;
pub use mapping::{BedrockRecord, ConvertedColumn};
pub use subchunk::SubChunk;

/// The block version of worlds that never came from Bedrock (1.21.0.3).
pub const NATIVE_BLOCK_VERSION: i32 = 0x0115_0003;

/// Whether `dir` is a Bedrock world folder (`db/CURRENT` is there).
pub fn is_bedrock_world(dir: &std::path::Path) -> bool {
    dir.join("db").join("CURRENT").is_file()
}
