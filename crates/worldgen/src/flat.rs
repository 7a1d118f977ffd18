//! Flat ground over Minecraft 1.20.1's Overworld heights: bedrock at y −64, stone, three
//! layers of dirt, grass at y 64.

use terrane_chunk::{BlockId, Chunk};

/// The lowest block of a column (Minecraft 1.20.1's Overworld).
pub const MIN_Y: i32 = -64;
/// Blocks in a column, from [`MIN_Y`].
pub const HEIGHT: u32 = 384;
/// The cubic chunk layer of [`MIN_Y`].
pub const MIN_CHUNK_Y: i64 = MIN_Y as i64 / 16;
/// One past the cubic chunk layer of the column's top block.
pub const END_CHUNK_Y: i64 = (MIN_Y as i64 + HEIGHT as i64) / 16;
/// The top block of flat ground (grass); players stand at `TOP_Y + 1`.
pub const TOP_Y: i32 = 64;

/// The block states flat ground is made of: air, then bottom to top.
pub const BLOCKS: [&str; 5] = [
    "minecraft:air",
    "minecraft:bedrock",
    "minecraft:stone",
    "minecraft:dirt",
    "minecraft:grass_block[snowy=false]",
];

/// The block at height `y` of flat ground, as an index into [`BLOCKS`]; `None` for air.
pub fn block_at(y: i32) -> Option<usize> {
    match y {
        _ if y == MIN_Y => Some(1),
        _ if y < TOP_Y - 3 => Some(2),
        _ if y < TOP_Y => Some(3),
        _ if y == TOP_Y => Some(4),
        _ => None,
    }
}

/// The cubic chunks of one flat column, bottom up, as `(chunk y, chunk)`; layers of only air
/// are left out. `ids` are [`BLOCKS`]' ids in the world's schema.
///
/// # Panics
///
/// When `ids` holds fewer than five ids.
pub fn column(ids: &[BlockId]) -> Vec<(i64, Chunk)> {
    let mut out = Vec::new();
    for cy in MIN_CHUNK_Y..END_CHUNK_Y {
        let mut chunk = None;
        for ly in 0..16u32 {
            let y = (cy * 16) as i32 + ly as i32;
            let Some(b) = block_at(y) else { continue };
            let c = chunk.get_or_insert_with(|| Chunk::new(ids[0]));
            for x in 0..16 {
                for z in 0..16 {
                    c.set(x, ly, z, ids[b]);
                }
            }
        }
        if let Some(c) = chunk {
            out.push((cy, c));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layers_cover_the_overworld() {
        assert_eq!(MIN_CHUNK_Y, -4);
        assert_eq!(END_CHUNK_Y, 20);
        assert_eq!(block_at(MIN_Y), Some(1));
        assert_eq!(block_at(MIN_Y + 1), Some(2));
        assert_eq!(block_at(TOP_Y - 1), Some(3));
        assert_eq!(block_at(TOP_Y), Some(4));
        assert_eq!(block_at(TOP_Y + 1), None);
        let ids: Vec<BlockId> = (0..5).map(BlockId).collect();
        let col = column(&ids);
        assert_eq!(
            col.iter().map(|c| c.0).collect::<Vec<_>>(),
            vec![-4, -3, -2, -1, 0, 1, 2, 3, 4]
        );
        let top = &col.last().unwrap().1;
        assert_eq!(top.get(5, 0, 5), BlockId(4));
        assert_eq!(top.get(5, 1, 5), BlockId(0));
        assert_eq!(col[0].1.get(3, 0, 3), BlockId(1));
    }
}
