//! What a map of a dimension shows, a square of columns at a time: [`TieredStore::stored_extent`]
//! bounds the stored chunks (reading keys and cluster tables, decoding no chunk), and
//! [`TieredStore::top_blocks`] finds the highest opaque block of every block column of one
//! [`ColumnTile`]. A map drawn tile row by tile row holds one row of tiles, not the world.
//!
//! "Opaque" is the store's own rule, the one its opacity map keeps
//! ([`TieredStoreBuilder::opaque`](crate::TieredStoreBuilder::opaque)).

use terrane_chunk::{BlockId, ChunkView};

use crate::error::{Error, Result};
use crate::opacity::column_tops;
use crate::tiered::TieredStore;
use crate::tiles::{ColumnTile, MIN_TILE_SHIFT};
use terrane_store::Store;

/// The largest tile shift [`TieredStore::top_blocks`] takes: 256 × 256 chunk columns.
pub const MAX_TOP_BLOCKS_SHIFT: u32 = 8;

/// The box of a dimension's stored chunks, in blocks (both ends inclusive), and how many chunk
/// columns hold them ([`TieredStore::stored_extent`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredExtent {
    /// Lowest and highest block x.
    pub x: (i64, i64),
    /// Lowest and highest block y.
    pub y: (i64, i64),
    /// Lowest and highest block z.
    pub z: (i64, i64),
    /// Chunk columns holding at least one stored chunk.
    pub columns: u64,
}

/// The highest opaque block of one block column.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TopBlock {
    /// Its block y.
    pub y: i64,
    /// The block.
    pub block: BlockId,
}

/// The top block of each block column of one [`ColumnTile`] ([`TieredStore::top_blocks`]).
#[derive(Clone, Debug)]
pub struct TopBlocks {
    x0: i64,
    z0: i64,
    side: usize,
    /// `x * side + z`, relative to `(x0, z0)`.
    cells: Vec<Option<TopBlock>>,
    columns: u64,
}

impl TopBlocks {
    /// The top block of block column `(x, z)`: `None` outside the tile, or where no stored
    /// chunk of the column holds an opaque block.
    pub fn get(&self, x: i64, z: i64) -> Option<TopBlock> {
        let (dx, dz) = (x.checked_sub(self.x0)?, z.checked_sub(self.z0)?);
        let (dx, dz) = (usize::try_from(dx).ok()?, usize::try_from(dz).ok()?);
        if dx >= self.side || dz >= self.side {
            return None;
        }
        self.cells[dx * self.side + dz]
    }

    /// Chunk columns of the tile holding at least one stored chunk.
    pub fn columns(&self) -> u64 {
        self.columns
    }
}

impl<S: Store> TieredStore<S> {
    /// The box of dimension `dim`'s stored chunks and how many chunk columns hold them, or
    /// `None` when it has none. Reads every key and cluster table once and decodes no chunk;
    /// memory holds one tile's columns.
    pub fn stored_extent(&self, dim: u64) -> Result<Option<StoredExtent>> {
        let mut ext: Option<StoredExtent> = None;
        for tile in self.column_tiles(dim, MIN_TILE_SHIFT)? {
            let mut columns = std::collections::BTreeSet::new();
            let mut lo = [i64::MAX; 3];
            let mut hi = [i64::MIN; 3];
            self.tile_chunks(&tile, |p, _, _| -> Result<()> {
                columns.insert((p.x, p.z));
                for (i, v) in [p.x, p.y, p.z].into_iter().enumerate() {
                    lo[i] = lo[i].min(v);
                    hi[i] = hi[i].max(v);
                }
                Ok(())
            })?;
            if columns.is_empty() {
                continue;
            }
            // Chunk coordinates to the blocks they span (saturating at the domain's edge).
            let block =
                |c: i64, last: bool| c.saturating_mul(16).saturating_add(if last { 15 } else { 0 });
            let e = ext.get_or_insert(StoredExtent {
                x: (i64::MAX, i64::MIN),
                y: (i64::MAX, i64::MIN),
                z: (i64::MAX, i64::MIN),
                columns: 0,
            });
            for (i, axis) in [&mut e.x, &mut e.y, &mut e.z].into_iter().enumerate() {
                axis.0 = axis.0.min(block(lo[i], false));
                axis.1 = axis.1.max(block(hi[i], true));
            }
            e.columns += columns.len() as u64;
        }
        Ok(ext)
    }

    /// The highest opaque block of each of `tile`'s block columns, over every stored chunk
    /// of the tile (each decoded once). Holds the tile's top blocks: 16 bytes a block column
    /// (1 MiB for a tile of 16 × 16 chunk columns).
    ///
    /// A tile too large to hold (more than 2^24 block columns: `shift` above
    /// [`MAX_TOP_BLOCKS_SHIFT`]) is [`Error::TopBlocksTileShift`].
    pub fn top_blocks(&self, tile: &ColumnTile) -> Result<TopBlocks> {
        if tile.shift > MAX_TOP_BLOCKS_SHIFT {
            return Err(Error::TopBlocksTileShift(tile.shift));
        }
        let side = 16usize << tile.shift;
        // The tile's first block column (saturating for tiles at the domain's edge, whose
        // blocks have no i64 coordinates).
        let first = |t: i64| (t << tile.shift).saturating_mul(16);
        let (x0, z0) = (first(tile.x), first(tile.z));
        let mask = (1i64 << tile.shift) - 1;
        let mut cells: Vec<Option<TopBlock>> = vec![None; side * side];
        let mut columns = std::collections::BTreeSet::new();
        let opaque = self.opaque_table();
        self.tile_chunks(tile, |p, _, bytes| -> Result<()> {
            columns.insert((p.x, p.z));
            let view = ChunkView::parse(bytes)?;
            let tops = column_tops(&view, opaque);
            let base = p.y.saturating_mul(16);
            // Where the chunk's column sits in the (aligned) tile: its low bits.
            let (cx, cz) = ((p.x & mask) as usize, (p.z & mask) as usize);
            for lx in 0..16usize {
                for lz in 0..16usize {
                    let t = tops[lx * 16 + lz];
                    if t < 0 {
                        continue;
                    }
                    let y = base.saturating_add(i64::from(t));
                    let cell = &mut cells[(cx * 16 + lx) * side + cz * 16 + lz];
                    if cell.is_none_or(|c| y > c.y) {
                        let block = view.block_at(lx as u32, t as u32, lz as u32);
                        *cell = Some(TopBlock { y, block });
                    }
                }
            }
            Ok(())
        })?;
        Ok(TopBlocks { x0, z0, side, cells, columns: columns.len() as u64 })
    }
}
