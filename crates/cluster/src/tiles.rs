//! A dimension's chunks one square of columns at a time: [`TieredStore::column_tiles`] finds
//! the squares that hold chunks, [`TieredStore::tile_chunks`] reads one. What writes a world
//! out a region file after another holds one region's chunks, not the world's.
//!
//! Chunk keys are 3D Morton keys (`docs/format/keys.md`), so an aligned cube of cells is one
//! contiguous key range. A tile of 2^s × 2^s columns is, at each level, a stack of aligned
//! cubes of 2^s chunks on a side; finding the occupied cubes costs one seek each (the first
//! key at or after a cube's start names the next occupied cube), not a read of the world.

use std::collections::BTreeMap;
use std::ops::Bound;

use terrane_section::ChunkPos;
use terrane_section::keys::{self, CHUNK_KEY_LEN, Level};
use terrane_store::{KeyRange, Store};

use crate::error::{Error, Result};
use crate::rewrite::chunks_of;
use crate::tiered::{TieredStore, table_of};

/// The smallest tile shift: a tile holds whole L2 clusters (16 columns on a side).
pub const MIN_TILE_SHIFT: u32 = 4;
/// The largest tile shift (tiles of 2^30 columns on a side).
pub const MAX_TILE_SHIFT: u32 = 30;
/// The tile shift [`TieredStore::verify`] reads by: 64 × 64 columns.
pub(crate) const VERIFY_TILE_SHIFT: u32 = 6;

/// An aligned square of `2^shift` × `2^shift` chunk columns of one dimension that holds
/// stored chunks, with the key ranges that hold them ([`TieredStore::column_tiles`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnTile {
    /// The dimension.
    pub dim: u64,
    /// The tile's x: the chunk columns' `x >> shift`.
    pub x: i64,
    /// The tile's z: the chunk columns' `z >> shift`.
    pub z: i64,
    /// The tile's shift.
    pub shift: u32,
    /// Each occupied cube: level, first and last key (inclusive).
    cubes: Vec<(Level, [u8; CHUNK_KEY_LEN], [u8; CHUNK_KEY_LEN])>,
}

impl ColumnTile {
    /// Whether chunk column `(x, z)` lies in the tile.
    pub fn contains(&self, x: i64, z: i64) -> bool {
        x >> self.shift == self.x && z >> self.shift == self.z
    }

    /// The number of key ranges reading the tile scans (one per occupied cube per level).
    pub fn ranges(&self) -> usize {
        self.cubes.len()
    }

    /// Each key range holding the tile's chunks, with its level.
    pub(crate) fn key_ranges(&self) -> impl Iterator<Item = (Level, KeyRange)> + '_ {
        self.cubes.iter().map(|(level, lo, hi)| {
            let range =
                KeyRange { start: Bound::Included(lo.to_vec()), end: Bound::Included(hi.to_vec()) };
            (*level, range)
        })
    }
}

impl<S: Store> TieredStore<S> {
    /// Every tile of `2^shift` × `2^shift` chunk columns of dimension `dim` that holds a
    /// stored chunk at any level, in `(x, z)` order. Costs one seek per occupied cube of
    /// `2^shift` chunks on a side at each level, and holds only the tiles' key ranges.
    ///
    /// `shift` is at least [`MIN_TILE_SHIFT`] (a tile holds whole clusters) and at most
    /// [`MAX_TILE_SHIFT`]; another is [`Error::TileShift`]. Not a snapshot: chunks
    /// written meanwhile may or may not be found.
    pub fn column_tiles(&self, dim: u64, shift: u32) -> Result<Vec<ColumnTile>> {
        if !(MIN_TILE_SHIFT..=MAX_TILE_SHIFT).contains(&shift) {
            return Err(Error::TileShift(shift));
        }
        let mut tiles: BTreeMap<(i64, i64), ColumnTile> = BTreeMap::new();
        let (dim_lo, dim_hi) = keys::dimension_range(dim);
        let end = match dim_hi {
            Some(hi) => Bound::Excluded(hi.to_vec()),
            None => Bound::Unbounded,
        };
        for level in Level::ALL {
            let table = table_of(level);
            // Cells of this level per cube side.
            let w = shift - level.shift();
            let mut start = Bound::Included(dim_lo.to_vec());
            loop {
                let range = KeyRange { start, end: end.clone() };
                let Some(first) = self.store().scan(table, range)?.next() else { break };
                let (key, _) = first?;
                let (_, cell) = keys::parse_chunk_key(&key)
                    .ok_or(Error::CorruptKey { table, len: key.len() })?;
                let low = |v: i64| v & !((1i64 << w) - 1);
                let corner = ChunkPos::new(low(cell.x), low(cell.y), low(cell.z));
                let side = (1i64 << w) - 1;
                let far = ChunkPos::new(corner.x + side, corner.y + side, corner.z + side);
                let (lo, hi) = (keys::cell_key(dim, corner), keys::cell_key(dim, far));
                let (tx, tz) = (corner.x >> w, corner.z >> w);
                tiles
                    .entry((tx, tz))
                    .or_insert_with(|| ColumnTile { dim, x: tx, z: tz, shift, cubes: Vec::new() })
                    .cubes
                    .push((level, lo, hi));
                start = Bound::Excluded(hi.to_vec());
            }
        }
        Ok(tiles.into_values().collect())
    }

    /// Every dimension holding a stored chunk at any level, ascending: one seek per
    /// dimension per level.
    pub fn chunk_dimensions(&self) -> Result<Vec<u64>> {
        let mut dims = std::collections::BTreeSet::new();
        for level in Level::ALL {
            let table = table_of(level);
            let mut start = Bound::Unbounded;
            loop {
                let range = KeyRange { start, end: Bound::Unbounded };
                let Some(first) = self.store().scan(table, range)?.next() else { break };
                let (key, _) = first?;
                let (dim, _) = keys::parse_chunk_key(&key)
                    .ok_or(Error::CorruptKey { table, len: key.len() })?;
                dims.insert(dim);
                match keys::dimension_range(dim).1 {
                    Some(next) => start = Bound::Included(next.to_vec()),
                    None => break,
                }
            }
        }
        Ok(dims.into_iter().collect())
    }

    /// Shows `f` every chunk stored in `tile` (at any level: clusters are read whole), with
    /// its position and level, level after level, in key order within each cube. `f`'s
    /// first error stops it and is returned.
    pub fn tile_chunks<E: From<Error>>(
        &self,
        tile: &ColumnTile,
        mut f: impl FnMut(ChunkPos, Level, &[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        for (level, range) in tile.key_ranges() {
            let table = table_of(level);
            for e in self.store().scan(table, range).map_err(Error::from)? {
                let (key, obj) = e.map_err(Error::from)?;
                for ((dim, pos), _, blob) in chunks_of(level, &key, &obj.data)? {
                    if dim == tile.dim && tile.contains(pos.x, pos.z) {
                        f(pos, level, blob)?;
                    }
                }
            }
        }
        Ok(())
    }
}
