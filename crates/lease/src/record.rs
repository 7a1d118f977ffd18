//! The lease object: its key and its bytes (`docs/format/lease-v1.md`).

use terrane_section::{ChunkPos, ColumnPos};

use crate::LeaseError;

/// The prefix of every lease key in the `worldMeta` table.
pub const KEY_PREFIX: &[u8] = b"lease:";

/// The format byte of a lease record.
const FORMAT: u8 = 1;

/// The longest server id.
pub const MAX_SERVER_ID: usize = 64;

/// An ownership area: 16 × 16 chunk columns, 256 × 256 blocks, every height. It is the L2
/// column of the storage levels, so the keys of one area's clusters are one contiguous range.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AreaId {
    /// Area x (chunk column x >> 4).
    pub x: i32,
    /// Area z (chunk column z >> 4).
    pub z: i32,
}

impl AreaId {
    /// The area at area coordinates `(x, z)`.
    pub fn new(x: i32, z: i32) -> Self {
        AreaId { x, z }
    }

    /// The area holding a chunk column.
    pub fn of_column(c: ColumnPos) -> Self {
        AreaId { x: c.x >> 4, z: c.z >> 4 }
    }

    /// The area holding a cubic chunk (every height of a column is in one area).
    pub fn of_chunk(p: ChunkPos) -> Self {
        AreaId { x: (p.x >> 4) as i32, z: (p.z >> 4) as i32 }
    }

    /// The lease key: [`KEY_PREFIX`], then x and z as big-endian `u32` with the sign bit
    /// flipped (so keys sort by x, then z, negatives first).
    pub fn key(self) -> Vec<u8> {
        let mut k = KEY_PREFIX.to_vec();
        k.extend(((self.x as u32) ^ 0x8000_0000).to_be_bytes());
        k.extend(((self.z as u32) ^ 0x8000_0000).to_be_bytes());
        k
    }

    /// The area of a lease key.
    pub fn from_key(key: &[u8]) -> Option<Self> {
        let rest = key.strip_prefix(KEY_PREFIX)?;
        let (x, z) = (rest.get(..4)?, rest.get(4..8)?);
        if rest.len() != 8 {
            return None;
        }
        let x = u32::from_be_bytes(x.try_into().ok()?) ^ 0x8000_0000;
        let z = u32::from_be_bytes(z.try_into().ok()?) ^ 0x8000_0000;
        Some(AreaId { x: x as i32, z: z as i32 })
    }
}

/// Who holds an area, until when. The epoch is the lease object's store version: it grows by
/// one at every change of owner and never goes back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The area.
    pub area: AreaId,
    /// The owning server's id.
    pub owner: String,
    /// The epoch (the lease object's version).
    pub epoch: i64,
    /// Until when the lease holds, in milliseconds since the Unix epoch (0: released).
    pub expires_ms: u64,
}

impl Lease {
    /// Whether the lease still holds at `now_ms`.
    pub fn is_live(&self, now_ms: u64) -> bool {
        self.expires_ms > now_ms
    }
}

/// The record's bytes: `u8 format (1)`, `u8 owner length`, the owner (UTF-8), `u64 expiry`
/// (little-endian).
pub(crate) fn encode(owner: &str, expires_ms: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(10 + owner.len());
    v.push(FORMAT);
    v.push(owner.len() as u8);
    v.extend(owner.as_bytes());
    v.extend(expires_ms.to_le_bytes());
    v
}

/// Decodes a lease record (untrusted bytes: a typed error, never a panic).
pub fn decode(area: AreaId, epoch: i64, bytes: &[u8]) -> Result<Lease, LeaseError> {
    let bad = |why: &str| LeaseError::Corrupt { area, detail: why.to_string() };
    let (&format, rest) = bytes.split_first().ok_or_else(|| bad("empty record"))?;
    if format != FORMAT {
        return Err(bad(&format!("unknown record format {format}")));
    }
    let (&len, rest) = rest.split_first().ok_or_else(|| bad("no owner length"))?;
    let len = len as usize;
    if len == 0 || len > MAX_SERVER_ID || rest.len() != len + 8 {
        return Err(bad("owner length does not match the record"));
    }
    let owner = std::str::from_utf8(&rest[..len]).map_err(|_| bad("owner is not UTF-8"))?;
    let expires_ms = u64::from_le_bytes(rest[len..].try_into().expect("8 bytes"));
    Ok(Lease { area, owner: owner.to_string(), epoch, expires_ms })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn keys_round_trip_and_sort_by_x_then_z(a in any::<(i32, i32)>(), b in any::<(i32, i32)>()) {
            let (ka, kb) = (AreaId::new(a.0, a.1).key(), AreaId::new(b.0, b.1).key());
            prop_assert_eq!(AreaId::from_key(&ka), Some(AreaId::new(a.0, a.1)));
            prop_assert_eq!(ka.cmp(&kb), a.cmp(&b));
        }

        #[test]
        fn records_round_trip_and_junk_is_an_error(owner in "[a-z0-9-]{1,64}", exp in any::<u64>(), junk in prop::collection::vec(any::<u8>(), 0..80)) {
            let area = AreaId::new(1, -2);
            let l = decode(area, 7, &encode(&owner, exp)).unwrap();
            prop_assert_eq!(l, Lease { area, owner, epoch: 7, expires_ms: exp });
            let _ = decode(area, 1, &junk);
        }
    }

    #[test]
    fn areas_of_columns_and_chunks() {
        assert_eq!(AreaId::of_column(ColumnPos::new(-1, 16)), AreaId::new(-1, 1));
        assert_eq!(AreaId::of_chunk(ChunkPos::new(31, -100, -17)), AreaId::new(1, -2));
        assert_eq!(AreaId::from_key(b"lease:short"), None);
    }
}
