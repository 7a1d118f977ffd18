//! The Nether: a cavern between a netherrack floor and ceiling over a seed, a lava sea at
//! y 31, soul sand in patches, bedrock at y 0 and y 127 (Minecraft's Nether heights, y 0..256,
//! of which blocks 0..128 are generated).

use terrane_chunk::{BlockId, Chunk};
use terrane_section::ColumnPos;

use crate::noise::fractal;

/// The lava sea's top (blocks).
pub const LAVA_SEA: i64 = 31;
/// The roof's bedrock (blocks); nothing is generated above it.
pub const ROOF: i64 = 127;
/// Chunk layers generated per column: y chunks `0..LAYERS` (blocks 0..128).
pub const LAYERS: i64 = 8;

/// The block states the generator writes, registered in this order: air first.
pub const BLOCKS: [&str; 5] = [
    "minecraft:air",
    "minecraft:bedrock",
    "minecraft:netherrack",
    "minecraft:lava[level=0]",
    "minecraft:soul_sand",
];

/// The floor's top block (y) at block column (`x`, `z`).
pub fn floor(seed: u64, x: i64, z: i64) -> i64 {
    let h = fractal(seed ^ 0x4E45_5448, x as f64, z as f64, 96.0, 4);
    (36.0 + 16.0 * h).round().clamp(6.0, 90.0) as i64
}

/// The ceiling's lowest block (y) at block column (`x`, `z`): always above the floor.
pub fn ceiling(seed: u64, x: i64, z: i64) -> i64 {
    let h = fractal(seed ^ 0x4345_494C, x as f64, z as f64, 80.0, 3);
    let c = (100.0 + 14.0 * h).round().clamp(70.0, 124.0) as i64;
    c.max(floor(seed, x, z) + 4)
}

/// The block at height `y` of block column (`x`, `z`), as an index into [`BLOCKS`].
fn block_at(seed: u64, x: i64, z: i64, y: i64, floor: i64, ceiling: i64) -> usize {
    if y == 0 || y == ROOF {
        1
    } else if y > ROOF {
        0
    } else if y <= floor {
        let soul = y == floor && fractal(seed ^ 0x534F_554C, x as f64, z as f64, 24.0, 2) > 0.6;
        if soul { 4 } else { 2 }
    } else if y >= ceiling {
        2
    } else if y <= LAVA_SEA {
        3
    } else {
        0
    }
}

/// The cubic chunks of Nether column `col`, bottom up, as `(chunk y, chunk)`. `ids` are
/// [`BLOCKS`]' ids in the world's schema.
///
/// # Panics
///
/// When `ids` holds fewer ids than [`BLOCKS`].
pub fn column(seed: u64, col: ColumnPos, ids: &[BlockId]) -> Vec<(i64, Chunk)> {
    let mut columns = [[(0i64, 0i64); 16]; 16];
    for (lx, row) in columns.iter_mut().enumerate() {
        for (lz, fc) in row.iter_mut().enumerate() {
            let (x, z) = (i64::from(col.x) * 16 + lx as i64, i64::from(col.z) * 16 + lz as i64);
            *fc = (floor(seed, x, z), ceiling(seed, x, z));
        }
    }
    let mut out = Vec::with_capacity(LAYERS as usize);
    for cy in 0..LAYERS {
        let mut c = Chunk::new(ids[0]);
        for (lx, row) in columns.iter().enumerate() {
            for (lz, &(f, ceil)) in row.iter().enumerate() {
                let (x, z) = (i64::from(col.x) * 16 + lx as i64, i64::from(col.z) * 16 + lz as i64);
                for ly in 0..16 {
                    let b = block_at(seed, x, z, cy * 16 + ly, f, ceil);
                    if b != 0 {
                        c.set(lx as u32, ly as u32, lz as u32, ids[b]);
                    }
                }
            }
        }
        out.push((cy, c));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cavern_between_bedrock_with_a_lava_sea() {
        let ids: Vec<BlockId> = (0..BLOCKS.len() as u32).map(BlockId).collect();
        let col = column(3, ColumnPos::new(-2, 5), &ids);
        assert_eq!(col.len(), LAYERS as usize);
        let at = |y: i64, lx: u32, lz: u32| col[(y / 16) as usize].1.get(lx, (y % 16) as u32, lz);
        let (x, z) = (-2 * 16 + 4, 5 * 16 + 9);
        let (f, c) = (floor(3, x, z), ceiling(3, x, z));
        assert!(f < c, "a cavern: floor {f}, ceiling {c}");
        assert_eq!(at(0, 4, 9), BlockId(1));
        assert_eq!(at(ROOF, 4, 9), BlockId(1));
        assert!(matches!(at(f, 4, 9), BlockId(2) | BlockId(4)));
        assert_eq!(at(c, 4, 9), BlockId(2));
        let above = f + 1;
        let want = if above <= LAVA_SEA { BlockId(3) } else { BlockId(0) };
        assert_eq!(at(above, 4, 9), want);
        // The floor varies: hills and lava lakes, not a plane.
        let floors: Vec<i64> = (0..64).map(|i| floor(3, i * 16, i * 7)).collect();
        assert!(floors.iter().max().unwrap() - floors.iter().min().unwrap() >= 10, "{floors:?}");
        assert!(floors.iter().any(|&f| f < LAVA_SEA) && floors.iter().any(|&f| f > LAVA_SEA));
        assert_eq!(column(3, ColumnPos::new(-2, 5), &ids)[2].1, col[2].1, "deterministic");
    }
}
