//! The `Checksums` column record (tag 0x3B): an xxHash64 of some of the column's other
//! records (`docs/format/bedrock.md`, "Checksums").
//!
//! An export re-encodes every sub-chunk, so the hashes an imported world held no longer match
//! what is written: [`rebuild`] makes the record again from the records an export writes, and
//! [`mapping::terrane_to_column`](crate::mapping::terrane_to_column) puts it in place of the
//! stored one. [`Checksums::decode`] reads a stored record (untrusted bytes: every length is
//! checked, nothing panics).

use crate::error::{Error, Result};
use crate::key::{BedrockColumnPos, DbKey, tag};

/// The tags of the records a `Checksums` record covers: `Data2D`, every `SubChunkPrefix`,
/// `BlockEntity` and the old `Entity` list.
pub const COVERED: [u8; 4] = [tag::DATA_2D, tag::SUB_CHUNK, tag::BLOCK_ENTITY, tag::ENTITY];

/// Bytes of one entry: tag (`u16`), sub-chunk index (`u8`), hash (`u64`).
const ENTRY: usize = 11;

/// xxHash64 with seed 0, the hash of a `Checksums` entry.
pub fn xxhash64(bytes: &[u8]) -> u64 {
    twox_hash::XxHash64::oneshot(0, bytes)
}

/// One entry: the record it names and that record's hash.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ChecksumEntry {
    /// The named record's tag ([`tag`]; stored as a `u16`).
    pub tag: u16,
    /// The sub-chunk's `y` index as a byte for a `SubChunkPrefix` entry, 0 for the others.
    pub sub: u8,
    /// xxHash64 (seed 0) of the named record's value ([`xxhash64`]).
    pub hash: u64,
}

impl ChecksumEntry {
    /// The key of the record the entry names in column `pos`; `None` when its tag is not a
    /// record tag (above 255).
    pub fn record_key(&self, pos: BedrockColumnPos) -> Option<Vec<u8>> {
        let t = u8::try_from(self.tag).ok()?;
        Some(if t == tag::SUB_CHUNK { pos.sub_chunk_key(self.sub as i8) } else { pos.key(t) })
    }
}

/// A decoded `Checksums` record: its entries in stored order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Checksums {
    /// The entries.
    pub entries: Vec<ChecksumEntry>,
}

impl Checksums {
    /// Decodes a stored record: a `u32` count, then that many 11-byte entries, nothing after.
    pub fn decode(b: &[u8]) -> Result<Checksums> {
        let bad = |what: String| Error::Checksums(what);
        let (count, rest) = b
            .split_first_chunk::<4>()
            .ok_or_else(|| bad(format!("{} bytes, shorter than its 4-byte count", b.len())))?;
        let count = u32::from_le_bytes(*count) as usize;
        if Some(rest.len()) != count.checked_mul(ENTRY) {
            return Err(bad(format!(
                "{count} entries need {} bytes after the count, the record has {}",
                count.saturating_mul(ENTRY),
                rest.len()
            )));
        }
        let entries = rest
            .chunks_exact(ENTRY)
            .map(|e| ChecksumEntry {
                tag: u16::from_le_bytes([e[0], e[1]]),
                sub: e[2],
                hash: u64::from_le_bytes(e[3..].try_into().expect("8 bytes")),
            })
            .collect();
        Ok(Checksums { entries })
    }

    /// Encodes as stored (the inverse of [`decode`](Self::decode)).
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(4 + ENTRY * self.entries.len());
        // A column has a few dozen records: the count always fits.
        out.extend_from_slice(&(self.entries.len() as u32).to_le_bytes());
        for e in &self.entries {
            out.extend_from_slice(&e.tag.to_le_bytes());
            out.push(e.sub);
            out.extend_from_slice(&e.hash.to_le_bytes());
        }
        out
    }
}

/// The `Checksums` record of column `pos` for its records `written` (key and value, as an
/// export writes them; records of other columns and other keys are passed over): one entry
/// per record of a [`COVERED`] tag, and per record one of the entries of `also` names (the
/// stored record's entries: a record it named is hashed again even if its tag is not
/// covered), in the order of `written`, each the hash of the bytes written. An entry of `also`
/// whose record is not written is left out.
pub fn rebuild(
    pos: BedrockColumnPos,
    written: &[(Vec<u8>, Vec<u8>)],
    also: &[ChecksumEntry],
) -> Checksums {
    let entries = written
        .iter()
        .filter_map(|(k, v)| {
            let DbKey::Chunk { pos: p, tag: t, y } = DbKey::parse(k) else { return None };
            let sub = y.map_or(0, |y| y as u8);
            let named = also.iter().any(|e| e.tag == u16::from(t) && e.sub == sub);
            (p == pos && t != tag::CHECKSUMS && (COVERED.contains(&t) || named))
                .then(|| ChecksumEntry { tag: u16::from(t), sub, hash: xxhash64(v) })
        })
        .collect();
    Checksums { entries }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xxhash64_matches_the_reference_vectors() {
        assert_eq!(xxhash64(b""), 0xEF46_DB37_51D8_E999);
        assert_eq!(xxhash64(b"a"), 0xD24E_C4F1_A98C_6E5B);
        assert_eq!(xxhash64(b"abc"), 0x44BC_2CF5_AD77_0999);
        // Longer than one 32-byte stripe: the four-lane loop and its merge.
        assert_eq!(xxhash64(b"Nobody inspects the spammish repetition"), 0xFBCE_A83C_8A37_8BF1);
        assert_eq!(xxhash64(b"The quick brown fox jumps over the lazy dog"), 0x0B24_2D36_1FDA_71BC);
    }

    #[test]
    fn the_layout_is_count_then_tag_sub_hash() {
        // rbedrock's example: Data2D, then sub-chunk 1.
        let (a, b) = (xxhash64(&[0, 1, 2]), xxhash64(&[7; 300]));
        let mut bytes = vec![2, 0, 0, 0, 45, 0, 0];
        bytes.extend_from_slice(&a.to_le_bytes());
        bytes.extend_from_slice(&[47, 0, 1]);
        bytes.extend_from_slice(&b.to_le_bytes());
        let c = Checksums::decode(&bytes).unwrap();
        assert_eq!(
            c.entries,
            [
                ChecksumEntry { tag: 45, sub: 0, hash: a },
                ChecksumEntry { tag: 47, sub: 1, hash: b }
            ]
        );
        assert_eq!(c.encode(), bytes);
        let pos = BedrockColumnPos { dim: 1, x: -2, z: 3 };
        assert_eq!(c.entries[1].record_key(pos), Some(pos.sub_chunk_key(1)));
        assert_eq!(c.entries[0].record_key(pos), Some(pos.key(tag::DATA_2D)));
        // Damaged records are errors, never panics.
        for cut in 0..bytes.len() {
            assert!(Checksums::decode(&bytes[..cut]).is_err(), "cut at {cut}");
        }
        assert!(Checksums::decode(&[0xff; 4]).is_err());
        assert_eq!(Checksums::decode(&[0; 4]).unwrap(), Checksums::default());
    }

    #[test]
    fn rebuild_hashes_the_covered_records_and_the_named_ones() {
        let pos = BedrockColumnPos { dim: 0, x: 4, z: -9 };
        let other = BedrockColumnPos { dim: 2, x: 4, z: -9 };
        let mut written = vec![
            (pos.key(tag::DATA_3D), vec![1; 10]),
            (pos.key(tag::VERSION), vec![40]),
            (pos.sub_chunk_key(-4), vec![9, 1, 2]),
            (pos.sub_chunk_key(0), vec![9, 1, 3]),
            (pos.key(tag::BLOCK_ENTITY), vec![10, 0, 0]),
            (pos.key(tag::CHECKSUMS), vec![0; 4]),
            (other.sub_chunk_key(0), vec![9, 9, 9]),
            (b"actorprefix\0\0\0\0\0\0\0\x01".to_vec(), vec![10]),
        ];
        written.sort();
        let also = [
            ChecksumEntry { tag: tag::DATA_3D.into(), sub: 0, hash: 1 },
            ChecksumEntry { tag: tag::DATA_2D.into(), sub: 0, hash: 2 },
        ];
        let c = rebuild(pos, &written, &also);
        let got: Vec<(u16, u8, u64)> = c.entries.iter().map(|e| (e.tag, e.sub, e.hash)).collect();
        assert_eq!(
            got,
            [
                (0x2B, 0, xxhash64(&[1; 10])),
                (0x2F, 0, xxhash64(&[9, 1, 3])),
                (0x2F, 0xFC, xxhash64(&[9, 1, 2])),
                (0x31, 0, xxhash64(&[10, 0, 0])),
            ]
        );
    }
}
