//! Sub-chunks: the `SubChunkPrefix` record, 16³ blocks in one or more paletted storages
//! (`docs/format/bedrock.md`, "Sub-chunks").
//!
//! ```text
//! version: u8 (1, 8 or 9; 0 and 2–7 before 1.2.13: `legacy`)
//! [8, 9]  storage count: u8
//! [9]     y index: i8
//! per storage:
//!   header: u8 = bits per index << 1 | runtime flag (0 on disk)
//!   words:  ceil(4096 / floor(32 / bits)) × u32 LE, indices low bits first, no index spans
//!           two words; cell order x, z, y (y fastest); absent when bits = 0
//!   palette size: i32 LE (absent when bits = 0: one entry)
//!   palette: that many little-endian NBT compounds {name, states, version}
//! ```

use terrane_nbt::{Compound, Reader, Writer};

use crate::error::{Error, Result};

/// Cells per sub-chunk.
pub const CELLS: usize = 4096;

/// Bits per index a storage may use on disk.
const WIDTHS: [u8; 9] = [0, 1, 2, 3, 4, 5, 6, 8, 16];

/// One storage (block layer) of a sub-chunk: its palette and one index into it per cell, in
/// Bedrock's cell order ([`bedrock_index`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Storage {
    /// Block states: `{name, states, version}` compounds as the file has them.
    pub palette: Vec<Compound>,
    /// Index into `palette` of each cell.
    pub indices: Box<[u16; CELLS]>,
}

/// A decoded sub-chunk.
#[derive(Clone, Debug, PartialEq)]
pub struct SubChunk {
    /// The record's version (1, 8 or 9).
    pub version: u8,
    /// The `y` index the record carries (version 9 only).
    pub y: Option<i8>,
    /// The storages, layer 0 first.
    pub storages: Vec<Storage>,
}

/// Bedrock's cell index of local coordinates: `x << 8 | z << 4 | y`.
#[inline]
pub const fn bedrock_index(x: u32, y: u32, z: u32) -> usize {
    (((x & 15) << 8) | ((z & 15) << 4) | (y & 15)) as usize
}

impl SubChunk {
    /// Decodes a `SubChunkPrefix` value. Versions 0 and 2–7 (worlds older than 1.2.13: numeric
    /// ids and metas) become one storage of `{name, val}` entries
    /// ([`legacy::decode_subchunk`](crate::legacy::decode_subchunk)). Other versions and
    /// runtime-id storages are [`Error::UnsupportedSubChunk`]; every other defect is
    /// [`Error::SubChunk`].
    pub fn decode(b: &[u8]) -> Result<SubChunk> {
        let bad = |why: String| Error::SubChunk(why);
        let (&version, rest) = b.split_first().ok_or_else(|| bad("empty value".into()))?;
        let (count, y, mut at) = match version {
            1 => (1usize, None, 1usize),
            8 => (*rest.first().ok_or_else(|| bad("no storage count".into()))? as usize, None, 2),
            9 => {
                if rest.len() < 2 {
                    return Err(bad("no storage count and y index".into()));
                }
                (rest[0] as usize, Some(rest[1] as i8), 3)
            }
            // Before 1.2.13: numeric ids and metas (`legacy`).
            0 | 2..=7 => {
                let storages = vec![crate::legacy::decode_subchunk(rest)?];
                return Ok(SubChunk { version, y: None, storages });
            }
            v => return Err(Error::UnsupportedSubChunk(format!("sub-chunk version {v}"))),
        };
        let mut storages = Vec::with_capacity(count.min(4));
        for layer in 0..count {
            let (s, used) = decode_storage(&b[at..]).map_err(|e| match e {
                Error::SubChunk(why) => bad(format!("storage {layer}: {why}")),
                other => other,
            })?;
            storages.push(s);
            at += used;
        }
        if at != b.len() {
            return Err(bad(format!("{} bytes after the last storage", b.len() - at)));
        }
        Ok(SubChunk { version, y, storages })
    }

    /// Encodes as version 9 with the `y` index given; each storage at the narrowest width its
    /// palette needs (at least 1 bit).
    pub fn encode(y: i8, storages: &[Storage]) -> Result<Vec<u8>> {
        let n = u8::try_from(storages.len())
            .map_err(|_| Error::SubChunk(format!("{} storages (at most 255)", storages.len())))?;
        let mut out = vec![9, n, y as u8];
        for s in storages {
            encode_storage(s, &mut out)?;
        }
        Ok(out)
    }
}

fn decode_storage(b: &[u8]) -> Result<(Storage, usize)> {
    let bad = |why: &str| Error::SubChunk(why.to_string());
    let (&header, _) = b.split_first().ok_or_else(|| bad("truncated before a storage"))?;
    if header & 1 == 1 {
        return Err(Error::UnsupportedSubChunk("runtime block ids (network format)".into()));
    }
    let bits = header >> 1;
    if !WIDTHS.contains(&bits) {
        return Err(Error::SubChunk(format!("{bits} bits per index (1-6, 8 or 16 allowed)")));
    }
    let mut at = 1;
    let mut indices = Box::new([0u16; CELLS]);
    if bits > 0 {
        let per_word = 32 / bits as usize;
        let words = CELLS.div_ceil(per_word);
        let data = b.get(at..at + 4 * words).ok_or_else(|| bad("truncated block indices"))?;
        let mask = (1u32 << bits) - 1;
        for (w, c) in data.chunks_exact(4).enumerate() {
            let word = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            for k in 0..per_word {
                let i = w * per_word + k;
                if i < CELLS {
                    indices[i] = ((word >> (k * bits as usize)) & mask) as u16;
                }
            }
        }
        at += 4 * words;
    }
    // A zero-bit storage holds one block and no palette size.
    let n = if bits == 0 {
        1
    } else {
        let n = b.get(at..at + 4).ok_or_else(|| bad("truncated palette size"))?;
        at += 4;
        i32::from_le_bytes([n[0], n[1], n[2], n[3]])
    };
    // Each entry takes at least 4 bytes (an empty compound with an empty name).
    let n = usize::try_from(n)
        .ok()
        .filter(|&n| n >= 1 && n <= (b.len() - at) / 4 && n <= 1 << 16)
        .ok_or_else(|| Error::SubChunk(format!("palette size {n} out of range")))?;
    let mut r = Reader::little_endian(&b[at..]);
    let mut palette = Vec::with_capacity(n);
    for _ in 0..n {
        palette.push(r.root_compound()?);
    }
    at += r.position();
    if let Some(&max) = indices.iter().max()
        && max as usize >= n
    {
        return Err(Error::SubChunk(format!("block index {max} past a palette of {n}")));
    }
    Ok((Storage { palette, indices }, at))
}

/// The narrowest on-disk width for a palette of `n` entries (at least 1).
fn width_for(n: usize) -> u8 {
    let need = usize::BITS - (n.max(2) - 1).leading_zeros();
    WIDTHS.into_iter().find(|&w| u32::from(w) >= need).unwrap_or(16)
}

fn encode_storage(s: &Storage, out: &mut Vec<u8>) -> Result<()> {
    let n = s.palette.len();
    if n == 0 || n > 1 << 16 {
        return Err(Error::SubChunk(format!("palette of {n} entries (1 to 65536 allowed)")));
    }
    let bits = width_for(n);
    out.push(bits << 1);
    let per_word = 32 / bits as usize;
    for cells in s.indices.chunks(per_word) {
        let mut word = 0u32;
        for (k, &i) in cells.iter().enumerate() {
            if i as usize >= n {
                return Err(Error::SubChunk(format!("block index {i} past a palette of {n}")));
            }
            word |= u32::from(i) << (k * bits as usize);
        }
        out.extend_from_slice(&word.to_le_bytes());
    }
    out.extend_from_slice(&(n as i32).to_le_bytes());
    let mut w = Writer::new().little_endian().with_buffer(std::mem::take(out));
    for c in &s.palette {
        w.named("", &terrane_nbt::Tag::Compound(c.clone()))?;
    }
    *out = w.out;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use terrane_nbt::Tag;

    pub(crate) fn state(name: &str) -> Compound {
        let mut c = Compound::new();
        c.insert("name", Tag::String(name.into()));
        c.insert("states", Tag::Compound(Compound::new()));
        c.insert("version", Tag::Int(18_100_737));
        c
    }

    #[test]
    fn every_width_round_trips_and_layout_is_pinned() {
        for n in [1usize, 2, 3, 5, 9, 17, 33, 65, 257, 4096] {
            let palette: Vec<Compound> = (0..n).map(|i| state(&format!("b{i}"))).collect();
            let mut indices = Box::new([0u16; CELLS]);
            for (c, i) in indices.iter_mut().enumerate() {
                *i = ((c * 7919) % n) as u16;
            }
            let s = Storage { palette, indices };
            let bytes = SubChunk::encode(-4, std::slice::from_ref(&s)).unwrap();
            let bits = width_for(n);
            assert_eq!(&bytes[..4], &[9, 1, (-4i8) as u8, bits << 1], "{n} entries");
            let d = SubChunk::decode(&bytes).unwrap();
            assert_eq!((d.version, d.y), (9, Some(-4)));
            assert_eq!(d.storages, [s]);
        }
        // 3, 5 and 6 bits leave the top bits of a word unused: 10, 6 and 5 cells per word.
        assert_eq!([width_for(5), width_for(17), width_for(33)], [3, 5, 6]);
        let two: Vec<Compound> = (0..5).map(|i| state(&format!("b{i}"))).collect();
        let mut idx = Box::new([0u16; CELLS]);
        idx[10] = 4; // the 11th cell opens the second word
        let b = SubChunk::encode(0, &[Storage { palette: two, indices: idx }]).unwrap();
        assert_eq!(&b[8..12], &4u32.to_le_bytes());
        // Then the palette size and five 39-byte entries: root head (3), `name` (1 + 2 + 4 +
        // 2 + 2), `states` (1 + 2 + 6 + 1), `version` (1 + 2 + 7 + 4), end (1).
        assert_eq!(b.len(), 4 + 410 * 4 + 4 + 5 * 39);
    }

    #[test]
    fn versions_one_and_eight_and_zero_bits_decode() {
        let s = Storage { palette: vec![state("minecraft:stone")], indices: Box::new([0; CELLS]) };
        let v9 = SubChunk::encode(2, std::slice::from_ref(&s)).unwrap();
        // Version 8: no y index; version 1: no count either.
        let v8: Vec<u8> = [&[8u8, 1][..], &v9[3..]].concat();
        let v1: Vec<u8> = [&[1u8][..], &v9[3..]].concat();
        for (b, v) in [(v8, 8), (v1, 1)] {
            let d = SubChunk::decode(&b).unwrap();
            assert_eq!((d.version, d.y, d.storages.len()), (v, None, 1));
            assert_eq!(d.storages[0], s);
        }
        // A zero-bit storage has no words and no palette size: every cell is its one entry.
        let pal = &v9[4 + 128 * 4 + 4..];
        let z: Vec<u8> = [&[9u8, 1, 2, 0][..], pal].concat();
        assert_eq!(SubChunk::decode(&z).unwrap().storages[0], s);
    }

    #[test]
    fn damage_is_a_typed_error() {
        let s = Storage { palette: vec![state("a"), state("b")], indices: Box::new([1; CELLS]) };
        let good = SubChunk::encode(0, &[s.clone(), s]).unwrap();
        for cut in 0..good.len() {
            assert!(SubChunk::decode(&good[..cut]).is_err(), "cut at {cut}");
        }
        for i in 0..good.len() {
            let mut b = good.clone();
            b[i] ^= 0x5A;
            let _ = SubChunk::decode(&b);
        }
        assert!(matches!(SubChunk::decode(&[4, 0]), Err(Error::SubChunk(_))), "too short");
        assert!(matches!(SubChunk::decode(&[10, 0]), Err(Error::UnsupportedSubChunk(_))));
        assert!(matches!(SubChunk::decode(&[9, 1, 0, 3]), Err(Error::UnsupportedSubChunk(_))));
        assert!(matches!(SubChunk::decode(&[9, 1, 0, 7 << 1]), Err(Error::SubChunk(_))));
        // An index past the palette.
        let mut bad = good.clone();
        bad[3] = 2 << 1;
        assert!(SubChunk::decode(&bad).is_err());
    }
}
