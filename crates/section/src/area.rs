//! [`AreaId`]: the unit of ownership of a world shared by several servers.

use crate::{ChunkPos, ColumnPos};

/// An ownership area: 16 × 16 chunk columns, 256 × 256 blocks, every height and every
/// dimension. It is the L2 column of the storage levels, so the keys of one area's clusters
/// are one contiguous range; terrane-lease leases it to one server at a time.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct AreaId {
    /// Area x (chunk column x >> 4).
    pub x: i32,
    /// Area z (chunk column z >> 4).
    pub z: i32,
}

impl AreaId {
    /// The length of [`to_bytes`](Self::to_bytes).
    pub const LEN: usize = 8;

    /// The area at area coordinates `(x, z)`.
    pub const fn new(x: i32, z: i32) -> Self {
        AreaId { x, z }
    }

    /// The area holding a chunk column.
    pub const fn of_column(c: ColumnPos) -> Self {
        AreaId { x: c.x >> 4, z: c.z >> 4 }
    }

    /// The area holding a cubic chunk (every height of a column is in one area).
    pub const fn of_chunk(p: ChunkPos) -> Self {
        AreaId { x: (p.x >> 4) as i32, z: (p.z >> 4) as i32 }
    }

    /// The area's key bytes: x, then z, as big-endian `u32` with the sign bit flipped, so
    /// that keys sort by x, then z, negatives first.
    pub const fn to_bytes(self) -> [u8; 8] {
        let x = ((self.x as u32) ^ 0x8000_0000).to_be_bytes();
        let z = ((self.z as u32) ^ 0x8000_0000).to_be_bytes();
        [x[0], x[1], x[2], x[3], z[0], z[1], z[2], z[3]]
    }

    /// The area of [`to_bytes`](Self::to_bytes) output; `None` unless exactly 8 bytes.
    pub fn from_bytes(b: &[u8]) -> Option<Self> {
        let b: [u8; 8] = b.try_into().ok()?;
        let x = u32::from_be_bytes([b[0], b[1], b[2], b[3]]) ^ 0x8000_0000;
        let z = u32::from_be_bytes([b[4], b[5], b[6], b[7]]) ^ 0x8000_0000;
        Some(AreaId { x: x as i32, z: z as i32 })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn areas_of_columns_and_chunks_and_their_bytes() {
        assert_eq!(AreaId::of_column(ColumnPos::new(-1, 16)), AreaId::new(-1, 1));
        assert_eq!(AreaId::of_chunk(ChunkPos::new(31, -100, -17)), AreaId::new(1, -2));
        let pairs = [(-3, 4), (-3, -4), (0, 0), (5, i32::MIN), (i32::MAX, 2)];
        for a in pairs {
            let id = AreaId::new(a.0, a.1);
            assert_eq!(AreaId::from_bytes(&id.to_bytes()), Some(id));
            for b in pairs {
                assert_eq!(id.to_bytes().cmp(&AreaId::new(b.0, b.1).to_bytes()), a.cmp(&b));
            }
        }
        assert_eq!(AreaId::from_bytes(b"short"), None);
    }
}
