//! The End: one island of end stone around (0, 0) over the void, its top near y 60
//! (Minecraft's End heights, y 0..256). Players arrive at (100, 49, 0), beyond its shore, on
//! the obsidian platform the game builds there.

use terrane_chunk::{BlockId, Chunk};
use terrane_section::ColumnPos;

use crate::noise::fractal;

/// The island's radius at its widest (blocks).
pub const RADIUS: f64 = 84.0;
/// Chunk layers generated per column: y chunks `0..LAYERS` (blocks 0..80).
pub const LAYERS: i64 = 5;

/// The block states the generator writes, registered in this order: air first.
pub const BLOCKS: [&str; 2] = ["minecraft:air", "minecraft:end_stone"];

/// The island's end stone at block column (`x`, `z`): its lowest and top block (y), `None`
/// over the void.
pub fn island(x: i64, z: i64) -> Option<(i64, i64)> {
    let r = ((x * x + z * z) as f64).sqrt();
    let edge = RADIUS + 10.0 * fractal(0x0045_4E44, x as f64, z as f64, 48.0, 2);
    if r >= edge {
        return None;
    }
    let t = 1.0 - (r / edge).powi(2);
    let top = (54.0 + 6.0 * t + 2.0 * fractal(0x0054_4F50, x as f64, z as f64, 16.0, 2)).round();
    let bottom = (top - 2.0 - 40.0 * t).round().max(6.0);
    Some((bottom as i64, top as i64))
}

/// The cubic chunks of End column `col` holding end stone, bottom up, as `(chunk y,
/// chunk)`; none over the void. `ids` are [`BLOCKS`]' ids in the world's schema.
///
/// # Panics
///
/// When `ids` holds fewer ids than [`BLOCKS`].
pub fn column(col: ColumnPos, ids: &[BlockId]) -> Vec<(i64, Chunk)> {
    let mut layers: Vec<Option<Chunk>> = vec![None; LAYERS as usize];
    for lx in 0..16u32 {
        for lz in 0..16u32 {
            let (x, z) =
                (i64::from(col.x) * 16 + i64::from(lx), i64::from(col.z) * 16 + i64::from(lz));
            let Some((bottom, top)) = island(x, z) else { continue };
            for y in bottom..=top {
                let c = layers[(y / 16) as usize].get_or_insert_with(|| Chunk::new(ids[0]));
                c.set(lx, (y % 16) as u32, lz, ids[1]);
            }
        }
    }
    layers.into_iter().enumerate().filter_map(|(cy, c)| Some((cy as i64, c?))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_island_at_the_centre_and_the_void_beyond() {
        let ids = [BlockId(0), BlockId(1)];
        let (bottom, top) = island(3, -4).expect("the centre is land");
        assert!(bottom < top && (50..=64).contains(&top), "{bottom}..{top}");
        let centre = column(ColumnPos::new(0, -1), &ids); // blocks x 0..16, z -16..0
        assert!(!centre.is_empty());
        let (cy, ly) = (top / 16, (top % 16) as u32);
        let layer = &centre.iter().find(|(y, _)| *y == cy).expect("the top's layer").1;
        assert_eq!(layer.get(3, ly, 12), BlockId(1), "block (3, {top}, -4)");
        assert!(island(100, 0).is_none(), "players arrive over the void, on a platform");
        assert!(column(ColumnPos::new(7, 0), &ids).is_empty());
        assert!(column(ColumnPos::new(-40, 17), &ids).is_empty());
    }
}
