//! Position and section math for voxel worlds: the coordinates every terrane crate shares.
//!
//! # Overview
//!
//! - [`ColumnPos`]: a 2D chunk column (`i32` x, z), as in column worlds (Minecraft Java).
//! - [`ChunkPos`]: a 3D cubic chunk of 16³ blocks (`i64` x, y, z: the world bound of the
//!   storage design).
//! - [`BlockPos`]: a block, with its chunk and its [cell index](cell_index) inside the chunk.
//! - [`GridPos`]: the trait that lets the regionizer and the distance graph be written once for
//!   2D and 3D: sections at a shift, distances, neighbours, local indices inside sections.
//! - [`morton`]: Morton keys whose big-endian bytes sort in Morton order, and [`keys`]: the
//!   table keys of the storage design (dimension ‖ Morton at cluster level 0, 1 or 2).
//!
//! # Example
//!
//! ```
//! use terrane_section::{BlockPos, ChunkPos, ColumnPos, GridPos, keys::{self, Level}};
//!
//! // Sections use an arithmetic shift: -1 >> 4 == -1.
//! assert_eq!(ColumnPos::new(-1, 17).section(4), ColumnPos::new(-1, 1));
//!
//! // Chebyshev neighbours within a radius, in ascending order.
//! let around: Vec<ColumnPos> = ColumnPos::new(0, 0).within(1).collect();
//! assert_eq!(around.len(), 9);
//!
//! // A block, its chunk, and the chunk's key in the level-1 cluster table.
//! let b = BlockPos::new(-5, 70, 33);
//! assert_eq!(b.chunk(), ChunkPos::new(-1, 4, 2));
//! let key = keys::chunk_key(0, b.chunk(), Level::L1);
//! assert_eq!(keys::parse_chunk_key(&key), Some((0, ChunkPos::new(-1, 1, 0))));
//! ```
//!
//! # Features
//!
//! No dependencies. `testdata` (off by default, for dev-dependencies) adds the `testdata` module: where
//! the workspace's tests and benches find the real files other tools wrote, and the guard that
//! kills a test's child processes on every exit path.
//!
//! # What it does not guarantee
//!
//! - Squared Euclidean distances between 3D positions are exact whenever the true value fits
//!   in `u128` (always, for chunk coordinates derived from `i64` block coordinates) and
//!   saturate at `u128::MAX` beyond that.
//! - Neighbour iteration skips positions outside the coordinate type's range instead of
//!   wrapping, so a position at the edge of the domain has fewer neighbours.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod area;
mod pos;

pub mod keys;
pub mod morton;
#[cfg(feature = "testdata")]
pub mod testdata;

pub use area::AreaId;
pub use pos::{BlockPos, ChunkPos, ColumnPos, GridPos, cell_coords, cell_index};
