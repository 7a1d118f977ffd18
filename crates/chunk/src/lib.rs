//! The terrane cubic chunk binary format v1: 16³ cells, a block palette, extra block layers,
//! per-cell components and entity references.
//!
//! # Overview
//!
//! - [`ChunkView`]: a validated zero-copy view over encoded bytes: O(1) block lookup at
//!   layer 0, the palette, the extra layers, the entity UUIDs, and (with the [`Schema`]) the
//!   [`Components`] rank index reading any component value in O(1). The bulk read,
//!   [`ChunkView::parse_blocks`], validates and copies all 4096 blocks in one pass.
//! - [`Chunk`]: an owned, editable chunk: get/set blocks at any layer (and all 4096 at once,
//!   [`Chunk::set_blocks`]), a palette that grows and drops its unused entries when it fills
//!   (no use counts on the hot path; [`Chunk::compact`] shrinks it on demand), component
//!   values, entities; [`Chunk::encode`] writes the canonical bytes and [`Chunk::decode`]
//!   reads them back.
//! - [`Schema`]: the world's block, component, entity and structure [`Registry`]s, component
//!   sizes ([`ComponentKind`]) and the block → components map, with their `worldMeta`
//!   encodings ([`SchemaBytes`]) and [`Schema::check_extends`] for registries that only grow.
//! - [`block_state`]: Java block-state strings, parsed and in the one canonical form
//!   (`minecraft:oak_stairs[facing=east,half=top]`) every Java importer registers them under.
//! - [`Error`]: every malformed input is a typed error; decoding never panics.
//!
//! The byte layout, and every decision the design left open, is specified in
//! `docs/format/chunk-v1.md`.
//!
//! # Example
//!
//! ```
//! use terrane_chunk::{BlockId, Chunk, ChunkView, ComponentKind, Schema};
//!
//! let mut schema = Schema::new();
//! let sign_text = schema.add_component("sign_text", ComponentKind::Variable)?;
//! let air = schema.add_block("air", &[])?;
//! let stone = schema.add_block("stone", &[])?;
//! let sign = schema.add_block("sign", &[sign_text])?;
//!
//! let mut chunk = Chunk::new(air);
//! chunk.set(1, 2, 3, stone);
//! chunk.set(0, 0, 1, sign);
//! let cell = terrane_section::cell_index(0, 0, 1);
//! chunk.set_component(&schema, cell, 0, sign_text, b"hello")?;
//! chunk.add_entity([7; 16]);
//!
//! let bytes = chunk.encode(&schema);
//! let view = ChunkView::parse(&bytes)?;
//! assert_eq!(view.block_at(1, 2, 3), stone);
//! assert_eq!(view.palette_len(), 3);
//! let comps = view.components(&schema)?;
//! assert_eq!(comps.get(cell, 0, sign_text), Some(&b"hello"[..]));
//! assert_eq!(Chunk::decode(&bytes, &schema)?, chunk);
//! # Ok::<(), terrane_chunk::Error>(())
//! ```
//!
//! # Features
//!
//! None.
//!
//! # What it does not guarantee
//!
//! - Only canonical encodings decode (sorted palette without unused entries, sorted layer
//!   records, smallest offset widths, zero padding, sorted UUIDs): anything else is a typed
//!   error, so `encode(decode(x)) == x` for every accepted `x`.
//! - No checksum: the chunk relies on its container (cluster, store) for integrity; a
//!   corrupted chunk that is still well-formed decodes to different blocks.
//! - Component values are opaque bytes; their meaning belongs to the schema's owner.
//!
//! # Unsafe code
//!
//! One call: on x86-64 CPUs with AVX2 (detected at run time), the bulk read of palettes of
//! up to 16 entries runs a function compiled for AVX2 (`src/bits_avx2.rs`, 2.5× faster on
//! real terrain); every other CPU takes the portable path, and a test compares the two.
#![deny(missing_docs)]
#![deny(unsafe_code)]

mod bits;
#[cfg(target_arch = "x86_64")]
mod bits_avx2;
pub mod block_state;
mod chunk;
mod error;
pub mod level_settings;
mod schema;
mod view;

pub use chunk::{Chunk, count_indices};
pub use error::{Error, Result};
pub use schema::{BlockId, ComponentId, ComponentKind, Registry, Schema, SchemaBytes};
pub use view::{ChunkView, Components, LayerRecord, Layers, Uuid};

/// The chunk format version this crate reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// Cells per chunk (16³).
pub const CELLS: usize = 4096;
