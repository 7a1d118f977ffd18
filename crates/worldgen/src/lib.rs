//! terrane-worldgen: terrain for terrane worlds, as cubic chunks.
//!
//! # Overview
//!
//! [`Terrain`] picks a generator; [`Terrain::column`] writes one column (the non-air cubic
//! chunks of a 16 × 16 column, bottom up) from the column's position and, for hills, a seed
//! alone, so columns come out the same in any order: a server generates those players come
//! near, nearest first, and a pre-generator the rest.
//!
//! - [`flat`]: flat ground over Minecraft's Overworld heights (y −64..320): bedrock, stone,
//!   dirt, grass at y 64.
//! - [`hills`]: fractal value noise over a seed: hills and valleys, a sea at y 62, beaches,
//!   snowy peaks, blocks 0..128.
//! - [`nether`]: the Nether's cavern over a seed, between netherrack floor and ceiling, a
//!   lava sea at y 31, bedrock at y 0 and 127.
//! - [`end`]: the End's island of end stone around (0, 0) over the void.
//!
//! The generators write block ids of the world's schema: [`Terrain::blocks`] names the states
//! a generator writes, which the world registers first ([`Terrain::ids`] finds them).
//!
//! # Example
//!
//! ```
//! use terrane_chunk::Schema;
//! use terrane_section::ColumnPos;
//! use terrane_worldgen::Terrain;
//!
//! let terrain = Terrain::Hills { seed: 7 };
//! let mut schema = Schema::new();
//! for name in terrain.blocks() {
//!     schema.add_block(name, &[]).unwrap();
//! }
//! let ids = terrain.ids(&schema).expect("every state registered");
//! let chunks = terrain.column(ColumnPos::new(3, -2), &ids);
//! assert!(!chunks.is_empty());
//! // The same column again is the same terrain.
//! assert_eq!(terrain.column(ColumnPos::new(3, -2), &ids)[0].1, chunks[0].1);
//! ```
//!
//! # Features
//!
//! None.
//!
//! # What it does not guarantee
//!
//! - The terrain of a seed is stable within a major version of this crate, not across them.
//! - No biomes, caves, trees, structures or lighting: terrain to walk, build and test on.
//! - Not Minecraft's generator: a seed does not give a vanilla world.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod end;
pub mod flat;
pub mod hills;
pub mod nether;
mod noise;

use terrane_chunk::{BlockId, Chunk, Schema};
use terrane_section::ColumnPos;

/// A terrain generator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Terrain {
    /// Flat ground: bedrock at y −64, stone, three layers of dirt, grass at y 64.
    Flat,
    /// Hills, a sea, beaches and snowy peaks from `seed` (blocks 0..128).
    Hills {
        /// The seed.
        seed: u64,
    },
    /// The Nether's cavern from `seed`: netherrack, a lava sea, bedrock floor and roof
    /// (blocks 0..128 of Minecraft's Nether, y 0..256).
    Nether {
        /// The seed.
        seed: u64,
    },
    /// The End's island around (0, 0) over the void (Minecraft's End, y 0..256).
    End,
}

impl Terrain {
    /// The block states the generator writes, air first.
    pub fn blocks(&self) -> &'static [&'static str] {
        match self {
            Terrain::Flat => &flat::BLOCKS,
            Terrain::Hills { .. } => &hills::BLOCKS,
            Terrain::Nether { .. } => &nether::BLOCKS,
            Terrain::End => &end::BLOCKS,
        }
    }

    /// The ids of [`blocks`](Self::blocks) in `schema`, in that order; `None` when one is not
    /// registered.
    pub fn ids(&self, schema: &Schema) -> Option<Vec<BlockId>> {
        self.blocks().iter().map(|name| schema.blocks().find(name).map(BlockId)).collect()
    }

    /// The non-air cubic chunks of column `col`, bottom up, as `(chunk y, chunk)`; `ids` are
    /// [`ids`](Self::ids) of the world's schema.
    ///
    /// # Panics
    ///
    /// When `ids` is shorter than [`blocks`](Self::blocks).
    pub fn column(&self, col: ColumnPos, ids: &[BlockId]) -> Vec<(i64, Chunk)> {
        match self {
            Terrain::Flat => flat::column(ids),
            Terrain::Hills { seed } => {
                let p = hills::Palette::from_ids(ids).expect("the ids of every hills::BLOCKS");
                hills::column(*seed, col, &p).into_iter().map(|(pos, c)| (pos.y, c)).collect()
            }
            Terrain::Nether { seed } => nether::column(*seed, col, ids),
            Terrain::End => end::column(col, ids),
        }
    }

    /// The y of the block a player stands on at block column (`x`, `z`): the surface, or the
    /// sea's (the Nether's floor or its lava; in the End the island's top, 0 over the void).
    pub fn surface(&self, x: i64, z: i64) -> i64 {
        match self {
            Terrain::Flat => i64::from(flat::TOP_Y),
            Terrain::Hills { seed } => hills::height(*seed, x, z).max(hills::SEA),
            Terrain::Nether { seed } => nether::floor(*seed, x, z).max(nether::LAVA_SEA),
            Terrain::End => end::island(x, z).map_or(0, |(_, top)| top),
        }
    }
}
