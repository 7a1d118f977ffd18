//! A hierarchical distance graph of completed chunks, for nearest-first world generation.
//!
//! # Overview
//!
//! A world pre-generator (or an LOD syncer) asks, thousands of times a second, "which chunks
//! not yet done are nearest to this player?", "how many are left within radius r?" and "which
//! done chunks do I send this player next, nearest first?". [`DistanceGraph`] answers these
//! over a world of up to 2^31 × 2^31 chunks in time that depends on the answer, not on the
//! world's size:
//!
//! - [`DistanceGraph`]: the set of completed chunks as a 4-level hierarchical bitmap (4×4-chunk
//!   batches, three levels of 8×8 nodes, roots of 2048×2048 chunks in a hash map; full and
//!   empty subtrees take one bit or nothing). `O(1)` [`insert`](DistanceGraph::insert),
//!   [`remove`](DistanceGraph::remove), [`contains`](DistanceGraph::contains).
//! - [`nearest_incomplete`](DistanceGraph::nearest_incomplete) → [`Hit`]: the batch with work
//!   left nearest to a centre, chunk-precise in the Euclidean disc `D(c, r)`, ties broken by
//!   `(d2, bz, bx)`, with an exclusion predicate.
//! - [`count_missing`](DistanceGraph::count_missing) /
//!   [`count_completed`](DistanceGraph::count_completed): exact, never chunk by chunk.
//! - [`completed_near_to_far`](DistanceGraph::completed_near_to_far) → [`NearToFar`]: completed
//!   chunks in increasing `(d2, z, x)`, resumable from a [`Near`] cursor.
//! - [`Claims`]: in-flight work; [`nearest_unclaimed`](DistanceGraph::nearest_unclaimed) skips it.
//! - [`to_bytes`](DistanceGraph::to_bytes) / [`from_bytes`](DistanceGraph::from_bytes):
//!   canonical and checksummed (format: `docs/format/distance-graph-v1.md`);
//!   [`save`](DistanceGraph::save) / [`load`](DistanceGraph::load): atomic file replacement.
//! - [`SharedDistanceGraph`]: the graph and its claims behind one lock, for many threads
//!   completing chunks while workers search and claim.
//!
//! Chunk positions are [`ColumnPos`] (from terrane-section); batch positions in [`Hit`] are
//! `ColumnPos` in batch coordinates (chunk `>> 2`).
//!
//! # Example
//!
//! ```
//! use terrane_distance::{Claims, DistanceGraph};
//! use terrane_section::ColumnPos;
//!
//! let mut g = DistanceGraph::new();
//! let centre = ColumnPos::new(3, 3);
//! // Everything within 5 chunks is done except (3, 7).
//! for z in -2..=8 {
//!     for x in -2..=8 {
//!         let p = ColumnPos::new(x, z);
//!         if (x - 3) * (x - 3) + (z - 3) * (z - 3) <= 25 && p != ColumnPos::new(3, 7) {
//!             g.insert(p)?;
//!         }
//!     }
//! }
//! assert_eq!(g.count_missing(centre, 5)?, 1);
//! let hit = g.nearest_incomplete(centre, 5, |_| false)?.unwrap();
//! assert_eq!((hit.batch, hit.d2), (ColumnPos::new(0, 1), 16));
//! assert_eq!(hit.chunks().collect::<Vec<_>>(), [ColumnPos::new(3, 7)]);
//!
//! // A worker claims it: the next search looks elsewhere (here: nothing left).
//! let mut claims = Claims::new();
//! claims.claim(&hit);
//! assert_eq!(g.nearest_unclaimed(centre, 5, &claims)?, None);
//!
//! // Completed chunks, nearest first, resumable.
//! let first: Vec<_> = g.completed_near_to_far(centre, 5, None)?.take(2).collect();
//! assert_eq!(first[0].pos, centre);
//! let rest = g.completed_near_to_far(centre, 5, Some(first[1]))?.count();
//! assert_eq!(rest as u64, g.count_completed(centre, 5)? - 2);
//!
//! // Canonical bytes.
//! let bytes = g.to_bytes();
//! assert_eq!(DistanceGraph::from_bytes(&bytes)?, g);
//! # Ok::<(), terrane_distance::Error>(())
//! ```
//!
//! # Features
//!
//! None.
//!
//! # What it does not guarantee
//!
//! - Chunk coordinates must satisfy `|x|, |z| < 2^30`; anything else is
//!   [`Error::OutOfRange`]. Discs are clipped to that range: chunks outside it are neither
//!   counted nor reported missing.
//! - Squared distances are `u64`; radii are `u32`. [`count_missing`](DistanceGraph::count_missing)
//!   costs `O(r)` row by row, so radii in the billions take seconds.
//! - [`Claims`] are memory only: they are not saved (in-flight work is found again after a
//!   restart), and the graph does not check that a claimed chunk is ever completed.
//! - [`SharedDistanceGraph`] serialises writers and searches on one lock: it scales to many
//!   threads completing chunks, not to many threads searching at full speed at once.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod claims;
mod codec;
mod error;
mod geom;
mod graph;
mod node;
mod query;
mod shared;

pub use claims::Claims;
pub use codec::{MAGIC, VERSION};
pub use error::Error;
pub use graph::DistanceGraph;
pub use query::{Hit, Near, NearToFar};
pub use shared::SharedDistanceGraph;
pub use terrane_section::ColumnPos;

/// The largest valid chunk coordinate magnitude: `|x|, |z| <= MAX_COORD` (`2^30 - 1`).
pub const MAX_COORD: i32 = (1 << 30) - 1;
