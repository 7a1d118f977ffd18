//! Cubic chunks packed into clusters: the cluster container v1 and the hot / warm / cold
//! tiered chunk store of terrane.
//!
//! # Overview
//!
//! - [`ClusterBuilder`] builds a cluster v1 (4³ or 16³ chunks in one value, see
//!   `docs/format/cluster-v1.md`) from `(local index, chunk bytes)` pairs;
//!   [`ClusterView`] reads it back without copying and returns one chunk's bytes without
//!   touching the others. [`Scale`] maps chunk positions to clusters and local indices.
//! - [`TieredStore`]: the hot / warm / cold chunk store on any `terrane_store::Store`
//!   (memory, block file, RocksDB). Hot chunks live one per key in `chunkl0`, warm ones in 4³
//!   clusters in `chunkl1`, cold ones in 16³ clusters in `chunkl2`. Reads look at the finer
//!   levels first and read one chunk out of a cluster without moving it; a write or a load
//!   promotes the chunk to L0 (splitting its cluster path in one atomic batch);
//!   [`TieredStore::maintain`] demotes by game time and player distance. A [`TickSave`] is
//!   one atomic batch of chunks, entities and the game's other objects (player data). The
//!   world's schema is checked in `worldMeta` on open and the opacity map is kept current.
//!   Configure it with [`TieredStoreBuilder`] (defaults in [`TierConfig`]).
//!   [`TieredStore::for_each_chunk`] reads every stored chunk a page at a time,
//!   [`TieredStore::column_tiles`] and [`TieredStore::tile_chunks`] a square of columns (a
//!   region file's) at a time ([`TieredStore::top_blocks`]: a tile's highest opaque blocks,
//!   what a map shows), and
//!   [`TieredStore::rewrite_chunks`] rewrites chunks where they are (level, cluster and
//!   version kept, a page per atomic batch) for repairs.
//! - Every malformed input is a typed [`Error`]; decoding never panics.
//!
//! Formats and every decision behind them: `docs/format/cluster-v1.md`.
//!
//! # Example: the container
//!
//! ```
//! use terrane_cluster::{ClusterBuilder, ClusterView, Scale};
//! use terrane_section::ChunkPos;
//!
//! // Chunk (-1, 2, 5) sits in level-1 cluster (-1, 0, 1) at local (3, 2, 1).
//! let pos = ChunkPos::new(-1, 2, 5);
//! let scale = Scale::Cube4;
//! assert_eq!(scale.cluster_of(pos), ChunkPos::new(-1, 0, 1));
//! let index = scale.local_index(pos);
//! assert_eq!(scale.local_coords(index), Some((3, 2, 1)));
//!
//! let bytes = ClusterBuilder::from_pairs(scale, [(index, b"chunk v1 bytes".as_slice())])?.build()?;
//! let view = ClusterView::with_scale(&bytes, scale)?;
//! assert_eq!(view.get_pos(pos), Some(b"chunk v1 bytes".as_slice()));
//! assert_eq!(scale.chunk_pos(ChunkPos::new(-1, 0, 1), index), Some(pos));
//! # Ok::<(), terrane_cluster::Error>(())
//! ```
//!
//! # Example: the tiered store
//!
//! ```
//! use std::sync::Arc;
//! use terrane_chunk::{Chunk, Schema};
//! use terrane_cluster::{TickSave, TieredStore};
//! use terrane_section::{ChunkPos, keys::Level};
//! use terrane_store::MemStore;
//!
//! let mut schema = Schema::new();
//! let air = schema.add_block("minecraft:air", &[])?;
//! let stone = schema.add_block("minecraft:stone", &[])?;
//!
//! let store = Arc::new(MemStore::new());
//! let mut world = TieredStore::builder(schema.clone())
//!     .l0_idle_minutes(5) // x
//!     .l1_idle_minutes(30) // y
//!     .l1_distance_blocks(1024) // z
//!     .open(store.clone())?;
//!
//! // One tick saved atomically: the chunk, its entity and a player's data.
//! let mut chunk = Chunk::new(air);
//! chunk.set(0, 5, 0, stone);
//! chunk.add_entity([1; 16]);
//! let pos = ChunkPos::new(3, 4, -2);
//! let mut save = TickSave::new();
//! save.put_chunk(0, pos, chunk.encode(&schema))
//!     .put_entity([1; 16], b"pig".to_vec())
//!     .put_object("worldProperties", b"player:alice".to_vec(), b"inventory".to_vec());
//! world.save_tick(100, &save)?;
//! assert_eq!(world.level_of(0, pos)?, Some(Level::L0));
//! assert_eq!(world.opacity_at(0, 48, -32)?, Some(4 * 16 + 5));
//!
//! // Ten minutes later nobody has loaded it: it moves into its 4³ cluster.
//! world.maintain(100 + 10 * 1200)?;
//! assert_eq!(world.level_of(0, pos)?, Some(Level::L1));
//! assert_eq!(world.get_chunk_decoded(0, pos)?, Some(chunk.clone()));
//!
//! // A player comes near: loading promotes it back to L0.
//! world.load_chunk(0, pos, 100 + 11 * 1200)?;
//! assert_eq!(world.level_of(0, pos)?, Some(Level::L0));
//! # Ok::<(), terrane_cluster::Error>(())
//! ```
//!
//! # Features
//!
//! None.
//!
//! # What it does not guarantee
//!
//! - The container treats chunk blobs as opaque bytes: [`ClusterView::new`] validates the
//!   header and offset table only. Decode each blob (terrane-chunk) before trusting it.
//! - The container has no checksum of its own: the backend that stores it covers its bytes.
//! - The tiered store takes `&mut self` to write: one writer per world (wrap it in a lock to
//!   share it). Unload times live in memory; after a restart, chunks count as unloaded since
//!   their last write or promotion (they may go colder sooner, never lose data).
//! - The opacity map searches at most
//!   [`opacity_search_chunks`](TierConfig::opacity_search_chunks) chunks below a removed top
//!   block; an opaque block deeper than that is not found until a chunk above it is saved.
//! - Values over ~1 MiB (huge L2 clusters) are the backend's business: RocksDB puts them in
//!   BlobDB; the block file chains blocks.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod cluster_part;
mod config;
mod container;
mod error;
mod maintain;
mod opacity;
mod rewrite;
mod schema_meta;
mod tick_save;
mod tiered;
mod tiles;
mod top_blocks;
mod txn;

pub use config::{OpacityFn, TierConfig, TieredStoreBuilder, default_opacity};
pub use container::{ClusterBuilder, ClusterView, FORMAT_VERSION, Iter, Scale};
pub use error::{Error, Result};
pub use maintain::MaintenanceReport;
pub use opacity::{ColumnTops, OpacityTile, TILE_BYTES, TILE_EDGE, column_tops};
pub use rewrite::RewriteReport;
pub use schema_meta::stored_schema;
pub use terrane_section::keys::Level;
pub use tick_save::TickSave;
pub use tiered::{ChunkAddr, LevelStats, META_TICK, PlayerPos, TieredStore, tick_key, world_tick};
pub use tiles::{ColumnTile, MAX_TILE_SHIFT, MIN_TILE_SHIFT};
pub use top_blocks::{MAX_TOP_BLOCKS_SHIFT, StoredExtent, TopBlock, TopBlocks};
