//! Biomes of columns saved before 1.18, per column by number (`Level.Biomes`), read as 1.18+
//! section biomes by name for conversions between the editions (`docs/format/anvil.md`,
//! "Biomes"): an int array of 4 × 4 × 4 cells (1.15–1.17), of one biome per block column
//! (1.13–1.14), or a byte array of one per block column (before 1.13).
//!
//! The numbers are Java's before 1.18 (minecraft-data `pc/1.17.1/biomes.json`, which also
//! lists 1.16's Nether biomes and 1.17's caves); 1.18 renamed some of those biomes and merged
//! others into a neighbour (the hills, the plateaus, the "modified" and mountain variants):
//! [`LEGACY_BIOMES`] gives each number its 1.18+ name and says which it merged.

use std::collections::BTreeMap;

use terrane_nbt::{Compound, Tag};

use crate::biomes::{BIOME_CELLS, SectionBiomes};
use crate::error::{ChunkError, malformed};

/// Java's biome numbers before 1.18: number, name then, the 1.18+ name, and whether that is
/// the same biome (`true`: the same or renamed) or the one 1.18 merged it into (`false`).
pub const LEGACY_BIOMES: &[(i32, &str, &str, bool)] = &[
    (0, "ocean", "ocean", true),
    (1, "plains", "plains", true),
    (2, "desert", "desert", true),
    (3, "mountains", "windswept_hills", true),
    (4, "forest", "forest", true),
    (5, "taiga", "taiga", true),
    (6, "swamp", "swamp", true),
    (7, "river", "river", true),
    (8, "nether_wastes", "nether_wastes", true),
    (9, "the_end", "the_end", true),
    (10, "frozen_ocean", "frozen_ocean", true),
    (11, "frozen_river", "frozen_river", true),
    (12, "snowy_tundra", "snowy_plains", true),
    (13, "snowy_mountains", "snowy_plains", false),
    (14, "mushroom_fields", "mushroom_fields", true),
    (15, "mushroom_field_shore", "mushroom_fields", false),
    (16, "beach", "beach", true),
    (17, "desert_hills", "desert", false),
    (18, "wooded_hills", "forest", false),
    (19, "taiga_hills", "taiga", false),
    (20, "mountain_edge", "windswept_hills", false),
    (21, "jungle", "jungle", true),
    (22, "jungle_hills", "jungle", false),
    (23, "jungle_edge", "sparse_jungle", true),
    (24, "deep_ocean", "deep_ocean", true),
    (25, "stone_shore", "stony_shore", true),
    (26, "snowy_beach", "snowy_beach", true),
    (27, "birch_forest", "birch_forest", true),
    (28, "birch_forest_hills", "birch_forest", false),
    (29, "dark_forest", "dark_forest", true),
    (30, "snowy_taiga", "snowy_taiga", true),
    (31, "snowy_taiga_hills", "snowy_taiga", false),
    (32, "giant_tree_taiga", "old_growth_pine_taiga", true),
    (33, "giant_tree_taiga_hills", "old_growth_pine_taiga", false),
    (34, "wooded_mountains", "windswept_forest", true),
    (35, "savanna", "savanna", true),
    (36, "savanna_plateau", "savanna_plateau", true),
    (37, "badlands", "badlands", true),
    (38, "wooded_badlands_plateau", "wooded_badlands", true),
    (39, "badlands_plateau", "badlands", false),
    (40, "small_end_islands", "small_end_islands", true),
    (41, "end_midlands", "end_midlands", true),
    (42, "end_highlands", "end_highlands", true),
    (43, "end_barrens", "end_barrens", true),
    (44, "warm_ocean", "warm_ocean", true),
    (45, "lukewarm_ocean", "lukewarm_ocean", true),
    (46, "cold_ocean", "cold_ocean", true),
    (47, "deep_warm_ocean", "warm_ocean", false),
    (48, "deep_lukewarm_ocean", "deep_lukewarm_ocean", true),
    (49, "deep_cold_ocean", "deep_cold_ocean", true),
    (50, "deep_frozen_ocean", "deep_frozen_ocean", true),
    (127, "the_void", "the_void", true),
    (129, "sunflower_plains", "sunflower_plains", true),
    (130, "desert_lakes", "desert", false),
    (131, "gravelly_mountains", "windswept_gravelly_hills", true),
    (132, "flower_forest", "flower_forest", true),
    (133, "taiga_mountains", "taiga", false),
    (134, "swamp_hills", "swamp", false),
    (140, "ice_spikes", "ice_spikes", true),
    (149, "modified_jungle", "jungle", false),
    (151, "modified_jungle_edge", "sparse_jungle", false),
    (155, "tall_birch_forest", "old_growth_birch_forest", true),
    (156, "tall_birch_hills", "old_growth_birch_forest", false),
    (157, "dark_forest_hills", "dark_forest", false),
    (158, "snowy_taiga_mountains", "snowy_taiga", false),
    (160, "giant_spruce_taiga", "old_growth_spruce_taiga", true),
    (161, "giant_spruce_taiga_hills", "old_growth_spruce_taiga", false),
    (162, "modified_gravelly_mountains", "windswept_gravelly_hills", false),
    (163, "shattered_savanna", "windswept_savanna", true),
    (164, "shattered_savanna_plateau", "windswept_savanna", false),
    (165, "eroded_badlands", "eroded_badlands", true),
    (166, "modified_wooded_badlands_plateau", "wooded_badlands", false),
    (167, "modified_badlands_plateau", "badlands", false),
    (168, "bamboo_jungle", "bamboo_jungle", true),
    (169, "bamboo_jungle_hills", "bamboo_jungle", false),
    (170, "soul_sand_valley", "soul_sand_valley", true),
    (171, "crimson_forest", "crimson_forest", true),
    (172, "warped_forest", "warped_forest", true),
    (173, "basalt_deltas", "basalt_deltas", true),
    (174, "dripstone_caves", "dripstone_caves", true),
    (175, "lush_caves", "lush_caves", true),
];

/// Biome cells of a column before 1.18 in the 4 × 4 × 4 form (256 blocks high).
const CELLS_1_15: usize = 1024;
/// Block columns of a column.
const COLUMNS: usize = 256;

/// What a pre-1.18 column's biomes read as.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LegacyBiomes {
    /// The 1.18+ section biomes, by section `y` (0 to 15).
    pub sections: BTreeMap<i64, SectionBiomes>,
    /// Biome cells (4 × 4 × 4) whose biome 1.18 merged into another or whose number no
    /// release gave, by the old name (`minecraft:desert_hills`, `unknown biome 200`).
    pub approximated: BTreeMap<String, u64>,
}

/// The biome of number `id` in 1.18+ names, and whether it is the same biome.
fn modern(id: i32) -> (String, Option<String>) {
    match LEGACY_BIOMES.iter().find(|(n, ..)| *n == id) {
        Some((_, _, new, true)) => (format!("minecraft:{new}"), None),
        Some((_, old, new, false)) => {
            (format!("minecraft:{new}"), Some(format!("minecraft:{old}")))
        }
        None => ("minecraft:plains".into(), Some(format!("unknown biome {id}"))),
    }
}

/// A pre-1.18 column's biomes from its `Level` compound (`Biomes`), `None` when it has none
/// (a column saved before the game wrote them); an array of another length is an error.
pub fn legacy_sections(level: &Compound) -> Result<Option<LegacyBiomes>, ChunkError> {
    // The biome number of cell (x, y, z) of 4 × 4 × 4 cells, y counted from the bottom.
    let ids: Vec<i32> = match level.get("Biomes") {
        None => return Ok(None),
        Some(Tag::IntArray(v)) => v.clone(),
        Some(Tag::ByteArray(v)) => v.iter().map(|b| i32::from(*b as u8)).collect(),
        Some(_) => return Err(malformed("a column's Biomes is not an int or byte array")),
    };
    let cell: Box<dyn Fn(usize, usize, usize) -> i32> = match ids.len() {
        CELLS_1_15 => Box::new(|x, y, z| ids[(y << 4) | (z << 2) | x]),
        // One per block column (z * 16 + x): the cell takes its first block column's.
        COLUMNS => Box::new(|x, _, z| ids[(z * 4) * 16 + x * 4]),
        n => return Err(malformed(format!("a column's Biomes has {n} entries, not 256 or 1024"))),
    };
    let mut out = LegacyBiomes::default();
    for sy in 0..16usize {
        let mut palette: Vec<String> = Vec::new();
        let mut indices = [0u8; BIOME_CELLS];
        for y in 0..4 {
            for z in 0..4 {
                for x in 0..4 {
                    let (name, approx) = modern(cell(x, sy * 4 + y, z));
                    if let Some(a) = approx {
                        *out.approximated.entry(a).or_default() += 1;
                    }
                    let i = match palette.iter().position(|p| *p == name) {
                        Some(i) => i,
                        None => {
                            palette.push(name);
                            palette.len() - 1
                        }
                    };
                    indices[(y * 4 + z) * 4 + x] = i as u8;
                }
            }
        }
        out.sections.insert(sy as i64, SectionBiomes { palette, indices });
    }
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_form_reads_as_section_biomes_by_their_new_names() {
        // 1.15–1.17: cells; y 0..4 is desert (2), the rest desert hills (17), merged.
        let ids: Vec<i32> = (0..CELLS_1_15).map(|i| if i < 16 { 2 } else { 17 }).collect();
        let mut level = Compound::new();
        level.insert("Biomes", Tag::IntArray(ids));
        let b = legacy_sections(&level).unwrap().unwrap();
        assert_eq!(b.sections.len(), 16);
        assert_eq!(b.sections[&0].get(0, 0, 0), "minecraft:desert");
        assert_eq!(b.sections[&0].get(0, 1, 0), "minecraft:desert", "desert hills merged");
        assert_eq!(b.approximated.get("minecraft:desert_hills"), Some(&(1024 - 16)));
        // 1.13–1.14: one per block column, renamed biomes exact.
        let ids: Vec<i32> = (0..COLUMNS as i32).map(|i| if i % 16 < 8 { 12 } else { 3 }).collect();
        level.insert("Biomes", Tag::IntArray(ids));
        let b = legacy_sections(&level).unwrap().unwrap();
        assert_eq!(b.sections[&5].get(0, 2, 3), "minecraft:snowy_plains");
        assert_eq!(b.sections[&5].get(3, 2, 3), "minecraft:windswept_hills");
        assert!(b.approximated.is_empty());
        // Before 1.13: bytes, read unsigned (129, sunflower plains).
        level.insert("Biomes", Tag::ByteArray(vec![-127; COLUMNS]));
        let b = legacy_sections(&level).unwrap().unwrap();
        assert_eq!(b.sections[&0].palette, ["minecraft:sunflower_plains"]);
    }

    #[test]
    fn damage_is_an_error_and_unknown_numbers_are_counted() {
        let mut level = Compound::new();
        assert_eq!(legacy_sections(&level).unwrap(), None);
        level.insert("Biomes", Tag::IntArray(vec![1; 100]));
        assert!(legacy_sections(&level).is_err());
        level.insert("Biomes", Tag::String("plains".into()));
        assert!(legacy_sections(&level).is_err());
        level.insert("Biomes", Tag::IntArray(vec![200; COLUMNS]));
        let b = legacy_sections(&level).unwrap().unwrap();
        assert_eq!(b.sections[&0].palette, ["minecraft:plains"]);
        assert_eq!(b.approximated.get("unknown biome 200"), Some(&1024));
    }
}
