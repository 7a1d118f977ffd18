//! The opacity map: per block column, the highest opaque block's y (`docs/format/cluster-v1.md`).

use terrane_chunk::ChunkView;
use terrane_section::ChunkPos;

use crate::error::{Error, Result};

/// Block columns along one edge of a tile (4 chunk columns of 16).
pub const TILE_EDGE: usize = 64;
/// Bytes of an encoded tile: 64 × 64 `i64` LE.
pub const TILE_BYTES: usize = TILE_EDGE * TILE_EDGE * 8;

/// Per block column of one chunk (index `x * 16 + z`), the local y of its highest opaque
/// block, or -1.
pub type ColumnTops = [i8; 256];

/// One `opacityMap` value: 64×64 block columns (4×4 chunk columns), each the y of its highest
/// opaque block or `None` (`i64::MIN` on disk). Columns are stored x-major, z fastest:
/// entry `x * 64 + z` for local block column `(x, z)`.
#[derive(Clone, PartialEq, Eq)]
pub struct OpacityTile {
    heights: Vec<i64>,
}

impl std::fmt::Debug for OpacityTile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let set = self.heights.iter().filter(|&&h| h != i64::MIN).count();
        f.debug_struct("OpacityTile").field("columns_set", &set).finish()
    }
}

impl OpacityTile {
    /// A tile without any opaque block.
    pub fn empty() -> Self {
        Self { heights: vec![i64::MIN; TILE_EDGE * TILE_EDGE] }
    }

    /// Decodes a stored tile: exactly [`TILE_BYTES`] bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        if bytes.len() != TILE_BYTES {
            return Err(Error::BadOpacityTile { len: bytes.len() });
        }
        let heights = bytes
            .chunks_exact(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b.copy_from_slice(c);
                i64::from_le_bytes(b)
            })
            .collect();
        Ok(Self { heights })
    }

    /// The stored encoding.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(TILE_BYTES);
        for h in &self.heights {
            out.extend_from_slice(&h.to_le_bytes());
        }
        out
    }

    /// The highest opaque y of local block column `(x, z)` (each taken mod 64).
    pub fn get(&self, x: i64, z: i64) -> Option<i64> {
        let h = self.heights[Self::index(x, z)];
        (h != i64::MIN).then_some(h)
    }

    /// Whether no column has an opaque block.
    pub fn is_empty(&self) -> bool {
        self.heights.iter().all(|&h| h == i64::MIN)
    }

    fn index(x: i64, z: i64) -> usize {
        ((x & 63) as usize) * TILE_EDGE + (z & 63) as usize
    }
}

/// The highest opaque layer-0 block of each column of `view`.
pub fn column_tops(view: &ChunkView<'_>, opaque: &[bool]) -> ColumnTops {
    let mut tops = [-1i8; 256];
    let is_opaque = |i: usize| {
        opaque.get(view.palette(i).map_or(usize::MAX, |b| b.0 as usize)).copied().unwrap_or(true)
    };
    let local_opaque: Vec<bool> = (0..view.palette_len()).map(is_opaque).collect();
    if !local_opaque.iter().any(|&o| o) {
        return tops;
    }
    for x in 0..16u32 {
        for z in 0..16u32 {
            for y in (0..16u32).rev() {
                let cell = terrane_section::cell_index(x, y, z);
                if local_opaque[view.local(cell)] {
                    tops[(x * 16 + z) as usize] = y as i8;
                    break;
                }
            }
        }
    }
    tops
}

/// Updates `tile` for chunk `pos` now holding `view` (`None`: deleted). Where the column's
/// recorded top was inside this chunk and is gone, searches up to `search` chunks below via
/// `tops_below`.
pub(crate) fn update(
    tile: &mut OpacityTile,
    pos: ChunkPos,
    view: Option<&ChunkView<'_>>,
    opaque: &[bool],
    search: u32,
    tops_below: &mut dyn FnMut(ChunkPos) -> Result<Option<ColumnTops>>,
) -> Result<()> {
    let Some(base) = pos.y.checked_mul(16) else { return Ok(()) };
    let top_of_chunk = base + 15;
    let tops = view.map(|v| column_tops(v, opaque)).unwrap_or([-1; 256]);
    for lx in 0..16i64 {
        for lz in 0..16i64 {
            let (x, z) = ((pos.x & 3) * 16 + lx, (pos.z & 3) * 16 + lz);
            let i = OpacityTile::index(x, z);
            let cur = tile.heights[i];
            let t = tops[(lx * 16 + lz) as usize];
            if t >= 0 {
                if cur <= top_of_chunk {
                    tile.heights[i] = base + i64::from(t);
                }
            } else if (base..=top_of_chunk).contains(&cur) {
                let mut found = i64::MIN;
                for k in 1..=i64::from(search) {
                    let Some(y) = pos.y.checked_sub(k) else { break };
                    if let Some(below) = tops_below(ChunkPos::new(pos.x, y, pos.z))? {
                        let t = below[(lx * 16 + lz) as usize];
                        if t >= 0 {
                            found = y * 16 + i64::from(t);
                            break;
                        }
                    }
                }
                tile.heights[i] = found;
            }
        }
    }
    Ok(())
}
