//! The `Data3D` column record (tag 0x2B): a height map and one biome storage per sub-chunk
//! (`docs/format/bedrock.md`, "Data3D").
//!
//! ```text
//! 256 × i16 LE        height map, index z * 16 + x
//! per sub-chunk, from the lowest up:
//!   u8 header         bits per entry << 1 (bit 0 clear); 0xFF: the same as the storage below
//!   bits 0:           i32 LE biome id for all 4,096 cells
//!   bits 1–6, 8, 16:  ceil(4096 / (32 / bits)) × u32 LE words, entries from the low bits up,
//!                     cell index x * 256 + z * 16 + y; then i32 LE palette length and the
//!                     palette's i32 LE biome ids
//! ```

use crate::error::{Error, Result};

/// Cells of one sub-chunk's biome storage.
pub const CELLS: usize = 4096;

/// One sub-chunk's biomes: a Bedrock biome id per cell.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BiomeStorage {
    /// Biome ids per cell, index `x * 256 + z * 16 + y`.
    pub ids: Box<[u32; CELLS]>,
}

impl BiomeStorage {
    /// A storage holding `id` in every cell.
    pub fn filled(id: u32) -> Self {
        BiomeStorage { ids: Box::new([id; CELLS]) }
    }

    /// The biome of a cell.
    pub fn get(&self, x: usize, y: usize, z: usize) -> u32 {
        self.ids[x * 256 + z * 16 + y]
    }
}

/// A decoded `Data3D` record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Data3D {
    /// Heights, index `z * 16 + x`.
    pub heights: [i16; 256],
    /// Biome storages from the lowest sub-chunk up ("the same as below" resolved).
    pub storages: Vec<BiomeStorage>,
}

const BITS: [u8; 8] = [1, 2, 3, 4, 5, 6, 8, 16];

fn bad(what: String) -> Error {
    Error::Data3D(what)
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Result<&[u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.b.len()).ok_or_else(|| {
            bad(format!("ends at byte {} inside a storage that needs {n} more", self.b.len()))
        })?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes")))
    }
}

impl Data3D {
    /// Decodes a record's value.
    pub fn decode(b: &[u8]) -> Result<Data3D> {
        if b.len() < 512 {
            return Err(bad(format!("{} bytes, shorter than the 512-byte height map", b.len())));
        }
        let mut heights = [0i16; 256];
        for (i, h) in heights.iter_mut().enumerate() {
            *h = i16::from_le_bytes([b[2 * i], b[2 * i + 1]]);
        }
        let mut c = Cursor { b, at: 512 };
        let mut storages: Vec<BiomeStorage> = Vec::new();
        while c.at < b.len() {
            if storages.len() >= 64 {
                return Err(bad("more than 64 biome storages".into()));
            }
            let header = c.take(1)?[0];
            if header == 0xFF {
                let below = storages
                    .last()
                    .ok_or_else(|| {
                        bad("the first storage says it is the same as the one below".into())
                    })?
                    .clone();
                storages.push(below);
                continue;
            }
            let bits = header >> 1;
            if bits == 0 {
                let id = c.i32()?;
                storages.push(BiomeStorage::filled(id as u32));
                continue;
            }
            if !BITS.contains(&bits) {
                return Err(bad(format!("storage {} has {bits} bits per entry", storages.len())));
            }
            let per = 32 / usize::from(bits);
            let words = CELLS.div_ceil(per);
            let raw = c.take(words * 4)?.to_vec();
            let len = c.i32()?;
            if !(1..=CELLS as i32).contains(&len) {
                return Err(bad(format!("storage {} has a palette of {len}", storages.len())));
            }
            let mut palette = Vec::with_capacity(len as usize);
            for _ in 0..len {
                palette.push(c.i32()? as u32);
            }
            let mask = (1u32 << bits) - 1;
            let mut ids = Box::new([0u32; CELLS]);
            for (i, id) in ids.iter_mut().enumerate() {
                let w = u32::from_le_bytes(
                    raw[(i / per) * 4..(i / per) * 4 + 4].try_into().expect("4"),
                );
                let e = (w >> ((i % per) * usize::from(bits))) & mask;
                *id = *palette.get(e as usize).ok_or_else(|| {
                    bad(format!("storage {} cell {i} indexes entry {e} of {len}", storages.len()))
                })?;
            }
            storages.push(BiomeStorage { ids });
        }
        Ok(Data3D { heights, storages })
    }

    /// Encodes: single-biome storages as one id, a storage equal to the one below as 0xFF.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(512 + self.storages.len() * 8);
        for h in self.heights {
            out.extend_from_slice(&h.to_le_bytes());
        }
        for (n, s) in self.storages.iter().enumerate() {
            if n > 0 && self.storages[n - 1] == *s {
                out.push(0xFF);
                continue;
            }
            let mut palette: Vec<u32> = Vec::new();
            let mut index = vec![0u16; CELLS];
            for (i, id) in s.ids.iter().enumerate() {
                let e = match palette.iter().position(|p| p == id) {
                    Some(e) => e,
                    None => {
                        palette.push(*id);
                        palette.len() - 1
                    }
                };
                index[i] = e as u16;
            }
            if palette.len() == 1 {
                out.push(0);
                out.extend_from_slice(&(palette[0] as i32).to_le_bytes());
                continue;
            }
            let need = usize::BITS - (palette.len() - 1).leading_zeros();
            let bits =
                *BITS.iter().find(|&&b| u32::from(b) >= need).expect("at most 4,096 entries");
            out.push(bits << 1);
            let per = 32 / usize::from(bits);
            for chunk in index.chunks(per) {
                let mut w = 0u32;
                for (j, e) in chunk.iter().enumerate() {
                    w |= u32::from(*e) << (j * usize::from(bits));
                }
                out.extend_from_slice(&w.to_le_bytes());
            }
            out.extend_from_slice(&(palette.len() as i32).to_le_bytes());
            for id in &palette {
                out.extend_from_slice(&(*id as i32).to_le_bytes());
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storages_round_trip_in_every_width() {
        let mut heights = [0i16; 256];
        heights[17] = 71;
        let mut storages = vec![BiomeStorage::filled(1), BiomeStorage::filled(1)];
        for n in [2u32, 3, 5, 17, 40, 70, 300] {
            let mut s = BiomeStorage::filled(0);
            for (i, id) in s.ids.iter_mut().enumerate() {
                *id = (i as u32 * 7) % n + 100;
            }
            storages.push(s);
        }
        let d = Data3D { heights, storages };
        let bytes = d.encode();
        assert_eq!(bytes[512], 0, "a single biome is one id");
        assert_eq!(bytes[517], 0xFF, "the same as below");
        assert_eq!(Data3D::decode(&bytes).unwrap(), d);
    }

    #[test]
    fn damaged_records_are_errors() {
        let ok = Data3D { heights: [0; 256], storages: vec![BiomeStorage::filled(4)] }.encode();
        assert!(Data3D::decode(&ok[..511]).is_err());
        assert!(Data3D::decode(&ok[..515]).is_err());
        let mut first_copy = ok[..512].to_vec();
        first_copy.push(0xFF);
        assert!(Data3D::decode(&first_copy).is_err());
        let mut seven_bits = ok[..512].to_vec();
        seven_bits.push(7 << 1);
        assert!(Data3D::decode(&seven_bits).is_err());
    }
}
