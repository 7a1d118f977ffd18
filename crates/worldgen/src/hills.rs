//! Hills: fractal value noise over a seed, hills and valleys, a sea, beaches and snowy peaks,
//! written as cubic chunks of blocks 0..128.

use terrane_chunk::{BlockId, Chunk, Schema};
use terrane_section::{ChunkPos, ColumnPos};

use crate::noise::{fractal, value_noise};

/// Sea level (blocks).
pub const SEA: i64 = 62;
/// Chunk layers generated per column: y chunks `0..LAYERS` (blocks 0..128).
pub const LAYERS: i64 = 8;

/// The block states the generator writes, registered in this order.
pub const BLOCKS: [&str; 10] = [
    "minecraft:air",
    "minecraft:bedrock",
    "minecraft:stone",
    "minecraft:dirt",
    "minecraft:grass_block[snowy=false]",
    "minecraft:sand",
    "minecraft:water[level=0]",
    "minecraft:snow_block",
    "minecraft:gravel",
    "minecraft:cobblestone",
];

/// A schema of the generator's blocks alone, in [`BLOCKS`]' order.
pub fn schema() -> Schema {
    let mut s = Schema::new();
    for b in BLOCKS {
        s.add_block(b, &[]).expect("distinct names");
    }
    s
}

/// Block ids of [`BLOCKS`] in a schema that registered them first.
#[derive(Clone, Copy, Debug)]
#[allow(missing_docs)] // each field is the id of the block it is named after
pub struct Palette {
    pub air: BlockId,
    pub bedrock: BlockId,
    pub stone: BlockId,
    pub dirt: BlockId,
    pub grass: BlockId,
    pub sand: BlockId,
    pub water: BlockId,
    pub snow: BlockId,
    pub gravel: BlockId,
    pub cobble: BlockId,
}

impl Palette {
    /// Looks the generator's blocks up in `schema`.
    pub fn of(schema: &Schema) -> Option<Self> {
        let ids: Option<Vec<BlockId>> =
            BLOCKS.iter().map(|name| schema.blocks().find(name).map(BlockId)).collect();
        Self::from_ids(&ids?)
    }

    /// The palette of ids given in [`BLOCKS`]' order; `None` when fewer are given.
    pub fn from_ids(ids: &[BlockId]) -> Option<Self> {
        let id = |i: usize| ids.get(i).copied();
        Some(Self {
            air: id(0)?,
            bedrock: id(1)?,
            stone: id(2)?,
            dirt: id(3)?,
            grass: id(4)?,
            sand: id(5)?,
            water: id(6)?,
            snow: id(7)?,
            gravel: id(8)?,
            cobble: id(9)?,
        })
    }
}

/// Surface height (the top solid block's y) of block column `(x, z)`.
pub fn height(seed: u64, x: i64, z: i64) -> i64 {
    let (x, z) = (x as f64, z as f64);
    let h = fractal(seed, x, z, 160.0, 5);
    // Ridges: mountains where a low-frequency mask is high.
    let mask = (value_noise(seed ^ 0xA5A5, x, z, 400.0) + 1.0) * 0.5;
    let y = 64.0 + 22.0 * h + 30.0 * mask * mask * h.abs();
    (y.round() as i64).clamp(4, LAYERS * 16 - 2)
}

/// The highest chunk layer of column `col` holding anything but air.
pub fn top_layer(seed: u64, col: ColumnPos) -> i64 {
    let mut top = 0;
    for lx in 0..16 {
        for lz in 0..16 {
            let h = height(seed, i64::from(col.x) * 16 + lx, i64::from(col.z) * 16 + lz);
            top = top.max(h.max(SEA));
        }
    }
    (top / 16).min(LAYERS - 1)
}

/// Generates every non-air chunk of column `col`, bottom up.
pub fn column(seed: u64, col: ColumnPos, p: &Palette) -> Vec<(ChunkPos, Chunk)> {
    let mut heights = [[0i64; 16]; 16];
    let mut top = 0;
    for (lx, row) in heights.iter_mut().enumerate() {
        for (lz, h) in row.iter_mut().enumerate() {
            *h = height(seed, i64::from(col.x) * 16 + lx as i64, i64::from(col.z) * 16 + lz as i64);
            top = top.max((*h).max(SEA));
        }
    }
    let layers = (top / 16 + 1).min(LAYERS);
    let mut out = Vec::with_capacity(layers as usize);
    for cy in 0..layers {
        let mut c = Chunk::new(p.air);
        for (lx, row) in heights.iter().enumerate() {
            for (lz, &h) in row.iter().enumerate() {
                for ly in 0..16 {
                    let y = cy * 16 + ly;
                    let b = if y == 0 {
                        p.bedrock
                    } else if y <= h {
                        let depth = h - y;
                        if h > 100 && depth == 0 {
                            p.snow
                        } else if h <= SEA + 1 && depth < 3 {
                            if h < SEA - 4 { p.gravel } else { p.sand }
                        } else if depth == 0 {
                            p.grass
                        } else if depth < 4 {
                            p.dirt
                        } else {
                            p.stone
                        }
                    } else if y <= SEA {
                        p.water
                    } else {
                        continue;
                    };
                    c.set(lx as u32, ly as u32, lz as u32, b);
                }
            }
        }
        out.push((ChunkPos::new(i64::from(col.x), cy, i64::from(col.z)), c));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hills_not_flat_and_deterministic() {
        let hs: Vec<i64> = (0..64).map(|i| height(7, i * 16, i * 5)).collect();
        assert_eq!(hs, (0..64).map(|i| height(7, i * 16, i * 5)).collect::<Vec<_>>());
        let (min, max) = (hs.iter().min().unwrap(), hs.iter().max().unwrap());
        assert!(max - min >= 10, "terrain is too flat: {min}..{max}");
        assert_ne!(height(7, 0, 0), height(8, 0, 0) + 1000);
    }

    #[test]
    fn columns_have_a_surface() {
        let s = schema();
        let p = Palette::of(&s).unwrap();
        let chunks = column(1, ColumnPos::new(3, -2), &p);
        assert!(!chunks.is_empty());
        assert_eq!(chunks[0].1.get(0, 0, 0), p.bedrock);
        let h = height(1, 3 * 16, -2 * 16);
        let (cy, ly) = (h / 16, h % 16);
        let top = chunks[cy as usize].1.get(0, ly as u32, 0);
        assert_ne!(top, p.air);
        assert_eq!(top_layer(1, ColumnPos::new(3, -2)) + 1, chunks.len() as i64);
    }
}
