//! Minecraft Java Edition worlds in and out of terrane: Anvil region files (`.mca`, `.mcc`)
//! converted to and from cubic 16³ terrane chunks.
//!
//! # Overview
//!
//! - [`region`]: the region container. [`region::RegionFile`] reads leniently (gzip, zlib,
//!   uncompressed and LZ4 chunks, `.mcc` side files, length fields one byte short, damage
//!   reported per chunk as a [`ChunkError`]); [`region::RegionWriter`] writes by Minecraft's
//!   rules (zlib, whole 4 KiB sectors, header of locations and timestamps, `.mcc` side files
//!   for chunks of 1 MiB and more).
//! - [`linear`]: Paper forks' Linear region files (`.linear`, zstd), read into an Anvil
//!   region in memory and written from one; the importer and the exporter take them beside
//!   `.mca` files ([`RegionFormat`]).
//! - [`Column`]: one chunk column decoded exactly: [`Section`]s of canonical block-state
//!   strings (`ns:name[k=v,...]`, properties sorted) for every layout: pre-1.13 numeric ids
//!   (`legacy:<id>:<data>`), 1.13–1.17 (`Level`, `Palette`/`BlockStates`, unpadded longs
//!   before DataVersion 2527, padded from it), 1.18+ (`sections`, `block_states`); block
//!   entities, entities and the rest of the NBT kept verbatim. [`Column::to_nbt`] writes it
//!   back (refusing legacy blocks).
//! - [`mapping`]: a column ↔ cubic terrane chunks ([`ImportedColumn`]): block states into the
//!   world's block registry, block entities as the component
//!   [`mapping::BLOCK_ENTITY_COMPONENT`], entities as entity records referenced by their
//!   chunk, everything else (biomes included) in the [`ColumnRecord`] side-table entry.
//! - [`biomes`]: a 1.18+ section's biomes (palette and packed 4 × 4 × 4 indices), read and
//!   written for conversions between the editions.
//! - [`import_region_dir`] / [`export_region_dir`]: whole region folders, with a progress
//!   callback, resumption (columns the [`ImportSink`] already has are skipped) and an
//!   [`ImportSummary`] / [`ExportSummary`]; [`MemColumns`] is an in-memory sink and source.
//! - [`folder`]: a Java world folder: where each layout keeps its dimensions and players
//!   ([`folder::JavaLayout`], [`folder::find_dimensions`]) and how player files are named.
//! - [`level_dat`]: a Java `level.dat`: the settings both editions keep
//!   ([`LevelSettings`](terrane_chunk::level_settings::LevelSettings)) read and written, and
//!   the single-player world's player.
//!
//! The file layouts and the mapping are specified in `docs/format/anvil.md`.
//!
//! # Example
//!
//! ```
//! use terrane_anvil::region::{RegionFile, RegionWriter};
//! use terrane_anvil::{Column, MemColumns};
//!
//! // A 1.21 chunk with one section: stone everywhere.
//! let mut col = Column::from_nbt(&minimal_chunk(), (3, -2))?;
//! assert_eq!(col.sections[0].palette, ["minecraft:stone"]);
//!
//! // Into a region folder, and imported into an in-memory world.
//! let dir = tempfile::tempdir().unwrap();
//! let mut w = RegionWriter::new(0, -1);
//! w.insert(3 + 32 * 30, col.to_nbt()?, 1_700_000_000);
//! let (bytes, _side_files) = w.finish()?;
//! std::fs::write(dir.path().join("r.0.-1.mca"), bytes).unwrap();
//! let mut world = MemColumns::new();
//! let summary = terrane_anvil::import_region_dir(dir.path(), &mut world, &mut |p| {
//!     eprintln!("{}/{} columns", p.columns_done, p.columns_total);
//! })?;
//! assert_eq!((summary.columns, summary.chunks, summary.blocks), (1, 1, 4096));
//! assert!(summary.damaged.is_empty());
//!
//! // And back out.
//! let out = tempfile::tempdir().unwrap();
//! let e = terrane_anvil::export_region_dir(&world, out.path(), &mut |_| {})?;
//! assert_eq!(e.columns, 1);
//! # fn minimal_chunk() -> Vec<u8> {
//! #     use terrane_anvil::nbt::{Compound, Tag, write_root};
//! #     let c = |kv: Vec<(&str, Tag)>| -> Compound {
//! #         kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
//! #     };
//! #     let stone = c(vec![("Name", Tag::String("minecraft:stone".into()))]);
//! #     let states = c(vec![("palette", Tag::compound_list([stone]))]);
//! #     let section = c(vec![("Y", Tag::Byte(0)), ("block_states", Tag::Compound(states))]);
//! #     let root = c(vec![
//! #         ("DataVersion", Tag::Int(3955)),
//! #         ("sections", Tag::compound_list([section])),
//! #     ]);
//! #     write_root(&root).unwrap()
//! # }
//! # Ok::<(), terrane_anvil::Error>(())
//! ```
//!
//! # Features
//!
//! - `testdata` (off): [`testdata`], the repository's real regions as Java world folders
//!   shaped for tests (with `terrane-section/testdata`'s fixtures). For dev-dependencies
//!   only.
//!
//! # What it does not guarantee
//!
//! - Import is lossless for what a region file holds (blocks, block entities, entities,
//!   biomes and every other tag), but NBT compound key order and the element type of empty
//!   lists are not kept, and palettes are rewritten in first-use order: exported files are
//!   equal to the originals as NBT values, not byte for byte.
//! - Entities of 1.17+ worlds live in the world's `entities/` folder: they are imported only
//!   when [`ImportOptions::entities_dir`] names it (and exported with
//!   [`ExportOptions::entities_dir`]); other folders (`poi/`, `data/`, `level.dat`) are not
//!   read.
//! - Pre-1.13 blocks keep their numeric id and data (`legacy:<id>:<data>`, air as
//!   `minecraft:air`): no flattening table is applied, and such columns cannot be exported.
//! - LZ4 block checksums (xxhash32) are not verified; the NBT parse that follows validates
//!   the structure.
//! - Export rewrites light, heightmaps and biomes as imported: a column whose blocks were
//!   edited in terrane keeps stale light until Minecraft recomputes it.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod biomes;
pub mod column;
mod column_read;
mod column_rest;
mod error;
pub mod folder;
pub mod item_data;
pub mod legacy_biomes;
pub mod level_dat;
pub mod linear;
pub mod mapping;
/// The former name of [`mapping`], kept so code written against it still builds: in terrane,
/// *convert* means Java ⇄ Bedrock conversion (terrane-convert), not one column's mapping.
#[deprecated(since = "0.1.1", note = "renamed `mapping`")]
pub mod convert {
    pub use crate::mapping::*;
}
pub mod nbt;
pub mod region;
#[cfg(feature = "testdata")]
pub mod testdata;
mod world;

pub use column::{Column, Layout, Section};
pub use error::{ChunkError, Error, Result};
pub use mapping::{ColumnChunks, ColumnRecord, ImportedColumn};
pub use world::{
    DamagedChunk, ExportOptions, ExportSource, ExportSummary, ImportOptions, ImportSink,
    ImportSummary, MemColumns, MissingEntity, Progress, RegionFormat, StoredColumn,
    export_region_dir, export_region_dir_with, import_region_dir, import_region_dir_with,
};
