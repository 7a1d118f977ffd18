//! Arena snapshots for voxel game servers: capture a box of blocks into a compact in-memory
//! form, restore it under a per-tick time budget, and exchange it as a Sponge schematic.
//!
//! # Overview
//!
//! - [`ChunkAccess`]: the small interface a world implements (chunk-at-a-time read/write access,
//!   block get/set by position, state names). [`MemChunks`] is an in-memory implementation
//!   and `ChunkWorld` (feature `chunk`) the adapter for terrane-chunk chunks.
//! - [`BlockBox`] and [`SubRegion`]: a box (not necessarily chunk-aligned) split into the parts
//!   that fall inside each 16³ chunk.
//! - [`Snapshot`]: a captured box, one sub-region per chunk stored as a small palette plus
//!   bit-packed indices (`⌈log₂ palette⌉` bits per block, 0 for a uniform chunk). Block
//!   positions always come from block counters, never from byte offsets. [`Snapshot::copy`]
//!   plus [`CapturedBlocks::encode`] split a capture into a cheap copy on the world's thread
//!   and the encoding anywhere else.
//! - [`RestoreCursor`]: a resumable restore (sub-region + block counter); palette entries are
//!   mapped to the target world's blocks once per sub-region, and a diff restore writes only
//!   the blocks that differ.
//! - [`RestoreQueue`]: restores processed each tick under a time budget (default 30 ms) with a
//!   limit of chunks in flight, progress and completion callbacks, and an injectable
//!   [`Clock`] ([`FakeClock`] for tests).
//! - [`Schematic`]: Sponge schematic reader (v1, v2, v3) and v3 writer, carrying block
//!   entities, entities and biomes through; [`nbt`] (terrane-nbt) is the NBT
//!   tree and cursor underneath.
//!
//! # Example
//!
//! ```
//! use std::sync::Arc;
//! use terrane_section::BlockPos;
//! use terrane_snapshot::{BlockBox, MemChunks, QueueConfig, RestoreQueue, Snapshot, ChunkAccess};
//!
//! let mut world = MemChunks::new();
//! let bbox = BlockBox::new(BlockPos::new(-3, 0, 5), BlockPos::new(20, 9, 17));
//! for p in [BlockPos::new(-3, 0, 5), BlockPos::new(20, 9, 17)] {
//!     world.set_named(p, "minecraft:oak_stairs[facing=east,half=top,shape=straight,waterlogged=false]");
//! }
//! for r in bbox.sub_regions() {
//!     world.ensure_chunk(r.chunk);
//! }
//! let snap = Arc::new(Snapshot::capture(&world, bbox).unwrap());
//!
//! // The round breaks things ...
//! world.set_named(BlockPos::new(-3, 0, 5), "minecraft:tnt");
//!
//! // ... and the queue puts them back, 30 ms per tick at most.
//! let mut queue = RestoreQueue::new(QueueConfig::default());
//! queue.push(snap.clone(), true);
//! while !queue.is_empty() {
//!     queue.tick(&mut world);
//! }
//! assert_eq!(world.get_named(BlockPos::new(-3, 0, 5)), snap.block(BlockPos::new(-3, 0, 5)));
//!
//! // Exchange with WorldEdit: a v3 schematic that pastes back in place with `//paste -o`.
//! let bytes = snap.to_schematic(3955).unwrap().write().unwrap();
//! let schem = terrane_snapshot::Schematic::read(&bytes).unwrap();
//! assert_eq!(schem.world_min(), [-3, 0, 5]);
//! assert_eq!(schem.block(0, 0, 0), snap.block(BlockPos::new(-3, 0, 5)));
//! ```
//!
//! # Sponge schematics
//!
//! [`Schematic::read`] accepts:
//! - versions 1, 2 and 3; a missing `Version` means 1; v3 with the spec's nested
//!   `{ Schematic: {...} }` root or with a flat root (as some writers produce);
//! - gzip (also multi-member) or, leniently, uncompressed NBT;
//! - fields in any order (`Palette` after `Data`), palette keys in any order (mapped by their
//!   int value), `TileEntities` (v1) as well as `BlockEntities`, block entities with their data
//!   inline (v1/v2, and flat v3 files) or nested in `Data` (v3), `Id` or `id`;
//! - strings in legacy plain UTF-8 or Java modified UTF-8 (NUL as `C0 80`, CESU-8 surrogate
//!   pairs);
//! - `Width`/`Height`/`Length` shorts read as unsigned (up to 65535).
//!
//! It rejects with a typed [`Error`]: a zero dimension or a volume over `i32::MAX`; a data
//! array whose varint count is not exactly W·H·L (a truncated trailing varint counts as one);
//! varints over 5 bytes or over `i32`; palette ids that repeat or fall outside
//! `0..palette size`; data ids not in the palette; NBT nested deeper than 512; lengths larger
//! than the bytes left (checked before allocating); inflated data over
//! [`ReadOptions::max_inflated`] (256 MiB), volumes over [`ReadOptions::max_blocks`] (2^26
//! blocks) and palettes over [`ReadOptions::max_palette`] (65 536), each before anything of
//! that size is allocated ([`Error::OverLimit`] names the bound to raise). `PaletteMax` is
//! ignored (the palette itself is the truth).
//! Unknown top-level keys are skipped.
//!
//! The writer always writes v3, compatible with WorldEdit and FastAsyncWorldEdit: an
//! unnamed root holding `Schematic`; palette ids from 0 in order of first use in the data,
//! unused entries dropped, state strings in their canonical form
//! (`terrane_chunk::block_state::canonical`: namespaced, properties trimmed and sorted, two
//! spellings of one state merged into one entry); `Blocks.BlockEntities` always present (WorldEdit before 7.3.10 rejects files
//! without it) with each entry as `{Pos, Id, Data}`; `Metadata.WorldEdit.Origin` kept, and
//! set by [`Schematic::set_placement`] with `Offset = min - origin`; 2-D v2 biomes expanded to
//! v3's 3-D layout; `DataVersion` [`FALLBACK_DATA_VERSION`] when the source had none (v1).
//!
//! NBT walking: the reader is a purpose-built walker over the inflated bytes that borrows the
//! big `Data` arrays instead of copying them, decodes their varints eight single-byte ones at
//! a time, and only builds trees for the small parts (metadata, block entities, entities),
//! iteratively (no recursion, so hostile nesting cannot overflow the stack). It measured
//! faster than a fastnbt tree read in the same run (`docs/BENCHMARKS.md`).
//!
//! # Features
//!
//! - `chunk` (default): [`ChunkWorld`], the [`ChunkAccess`] adapter for `terrane-chunk` cubic
//!   chunks named by their `Schema`.
//!
//! Other dependencies: `terrane-section`, `terrane-chunk` (its `block_state`, always),
//! `flate2`, `ahash`, `thiserror`.
//!
//! # What it does not guarantee
//!
//! - Capture needs every chunk of the box loaded ([`Error::ChunkUnavailable`] otherwise);
//!   block entities and entities are not captured from worlds (schematics carry them).
//! - The restore queue bounds the work between clock reads by
//!   [`QueueConfig::check_every`] blocks, not by time: a tick may overshoot the budget by
//!   the time those blocks take (plus whatever the world's own calls cost).
//! - Lighting, heightmaps and neighbour updates are the world's business.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod block_ids;
#[cfg(feature = "chunk")]
mod chunk_world;
mod error;
mod queue;
mod schematic;
mod snapshot;
mod world;

pub use block_ids::BlockIds;
#[cfg(feature = "chunk")]
pub use chunk_world::ChunkWorld;
pub use error::Error;
pub use queue::{
    Clock, FakeClock, OpId, Progress, QueueConfig, RestoreQueue, StdClock, TickReport,
};
pub use schematic::{Biomes, BlockEntity, Entity, FALLBACK_DATA_VERSION, ReadOptions, Schematic};
pub use snapshot::{BlockBox, CapturedBlocks, RestoreCursor, RestoreStats, Snapshot, SubRegion};
/// The NBT tree and reader underneath (terrane-nbt, the workspace's one NBT implementation).
pub use terrane_nbt as nbt;
pub use world::{ChunkAccess, ChunkRead, ChunkWrite, MemChunk, MemChunkMut, MemChunks};
