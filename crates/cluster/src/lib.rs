//! Cubic chunks packed into clusters: the cluster container v1 and the hot / warm / cold
//! tiered chunk store of terrane.
//!
//! # Overview
//!
//! - [`ClusterBuilder`] builds a cluster v1 (4³ or 16³ chunks in one value, see
//!   `docs/format/cluster-v1.md`) from `(local index, chunk bytes)` pairs;
//!   [`ClusterView`] reads it back without copying and returns one chunk's bytes without
//!   touching the others. [`Scale`] maps chunk positions to clusters and local indices.
//! - Every malformed input is a typed [`Error`]; decoding never panics.
//!
//! # Example
//!
//! ```
//! use terrane_cluster::{ClusterBuilder, ClusterView, Scale};
//! use terrane_section::ChunkPos;
//!
//! // Chunk (-1, 2, 5) sits in level-1 cluster (-1, 0, 1) at local (3, 2, 1).
//! let pos = ChunkPos::new(-1, 2, 5);
//! let scale = Scale::L1;
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
//! # Features
//!
//! None.
//!
//! # What it does not guarantee
//!
//! - The container treats chunk blobs as opaque bytes: [`ClusterView::new`] validates the
//!   header and offset table only. Decode each blob (terrane-chunk) before trusting it.
//! - The container has no checksum of its own: the backend that stores it covers its bytes.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod config;
mod container;
mod error;
mod opacity;
mod tiered;
mod txn;

pub use config::{OpacityFn, TierConfig, TieredStoreBuilder, default_opacity};
pub use container::{ClusterBuilder, ClusterView, FORMAT_VERSION, Iter, Scale};
pub use error::{Error, Result};
pub use opacity::{ColumnTops, OpacityTile, TILE_BYTES, TILE_EDGE, column_tops};
pub use tiered::{
    ChunkAddr, LevelStats, META_TICK, MaintenanceReport, PlayerPos, TickSave, TieredStore,
};
