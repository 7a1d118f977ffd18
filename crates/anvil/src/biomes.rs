//! A 1.18+ section's biomes (`sections[].biomes`: `palette` of biome names, `data` packed
//! indices of 4 × 4 × 4 cells, index `(y * 4 + z) * 4 + x`, each long holding whole entries
//! from the low bits up; no `data` when the palette has one entry), read and written for
//! conversions between the editions (`docs/format/anvil.md`, "Biomes").

use terrane_nbt::{Compound, Tag};

use crate::error::{ChunkError, malformed};

/// Biome cells of one section.
pub const BIOME_CELLS: usize = 64;

/// One section's biomes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SectionBiomes {
    /// Biome names (`minecraft:plains`).
    pub palette: Vec<String>,
    /// Palette index per cell, index `(y * 4 + z) * 4 + x`.
    pub indices: [u8; BIOME_CELLS],
}

impl SectionBiomes {
    /// The biome of cell `(x, y, z)` (each 0..4).
    pub fn get(&self, x: usize, y: usize, z: usize) -> &str {
        &self.palette[usize::from(self.indices[(y * 4 + z) * 4 + x])]
    }

    /// The biomes of a section compound (`{Y, biomes: {palette, data}}`), `None` when it has
    /// none (sections before 1.18 keep biomes per column).
    pub fn from_section(section: &Compound) -> Result<Option<SectionBiomes>, ChunkError> {
        let Some(b) = section.get("biomes") else { return Ok(None) };
        let b = b.as_compound().ok_or_else(|| malformed("a section's biomes is not a compound"))?;
        let palette: Vec<String> = match b.get("palette").and_then(Tag::as_list) {
            Some(l) if !l.is_empty() && l.len() <= BIOME_CELLS => l
                .iter()
                .map(|t| t.as_str().map(str::to_string))
                .collect::<Option<_>>()
                .ok_or_else(|| malformed("a biome palette entry is not a string"))?,
            _ => return Err(malformed("a section's biome palette is missing, empty or over 64")),
        };
        let mut indices = [0u8; BIOME_CELLS];
        if palette.len() > 1 {
            let bits = usize::BITS - (palette.len() - 1).leading_zeros();
            let per = 64 / bits as usize;
            let data = match b.get("data") {
                Some(Tag::LongArray(d)) if d.len() == BIOME_CELLS.div_ceil(per) => d,
                _ => return Err(malformed("a section's biome data does not fit its palette")),
            };
            let mask = (1u64 << bits) - 1;
            for (i, e) in indices.iter_mut().enumerate() {
                let v = ((data[i / per] as u64) >> ((i % per) as u32 * bits)) & mask;
                if v as usize >= palette.len() {
                    return Err(malformed(format!(
                        "biome cell {i} indexes entry {v} of {}",
                        palette.len()
                    )));
                }
                *e = v as u8;
            }
        }
        Ok(Some(SectionBiomes { palette, indices }))
    }

    /// The `biomes` compound of these biomes.
    pub fn to_compound(&self) -> Compound {
        let mut b = Compound::new();
        b.insert(
            "palette".to_string(),
            Tag::list(self.palette.iter().map(|p| Tag::String(p.clone())).collect()),
        );
        if self.palette.len() > 1 {
            let bits = usize::BITS - (self.palette.len() - 1).leading_zeros();
            let per = 64 / bits as usize;
            let mut data = vec![0u64; BIOME_CELLS.div_ceil(per)];
            for (i, &e) in self.indices.iter().enumerate() {
                data[i / per] |= u64::from(e) << ((i % per) as u32 * bits);
            }
            b.insert(
                "data".to_string(),
                Tag::LongArray(data.into_iter().map(|v| v as i64).collect()),
            );
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn biomes_round_trip_and_damage_is_an_error() {
        let mut s = SectionBiomes { palette: vec![], indices: [0; BIOME_CELLS] };
        for n in [1usize, 2, 3, 5, 9, 33] {
            s.palette = (0..n).map(|i| format!("minecraft:b{i}")).collect();
            for (i, e) in s.indices.iter_mut().enumerate() {
                *e = (i % n) as u8;
            }
            let mut sec = Compound::new();
            sec.insert("biomes".to_string(), Tag::Compound(s.to_compound()));
            assert_eq!(SectionBiomes::from_section(&sec).unwrap(), Some(s.clone()), "{n}");
        }
        assert_eq!(s.get(1, 0, 0), "minecraft:b1");
        let mut sec = Compound::new();
        let mut b = s.to_compound();
        b.insert("data".to_string(), Tag::LongArray(vec![-1; 11]));
        sec.insert("biomes".to_string(), Tag::Compound(b));
        assert!(SectionBiomes::from_section(&sec).is_err(), "indices past the palette");
        assert_eq!(SectionBiomes::from_section(&Compound::new()).unwrap(), None);
    }
}
