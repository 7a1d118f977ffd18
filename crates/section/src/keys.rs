//! Table keys of the storage design (specified in `docs/format/keys.md`).
//!
//! | table | key |
//! |---|---|
//! | chunkl0 / chunkl1 / chunkl2 | dimension `u64` BE ‖ [`morton::encode3`] of chunk coords `>> 0`, `>> 2`, `>> 4` (32 bytes) |
//! | entity (shared worlds) | [`AreaId::to_bytes`] ‖ UUID (24 bytes); 16-byte keys are a single server's bare UUIDs |
//! | opacityMap | dimension `u64` BE ‖ [`morton::encode2`] of column coords `>> 2` (24 bytes) |

use crate::{AreaId, ChunkPos, morton};

/// Length of a chunk key (chunkl0, chunkl1, chunkl2).
pub const CHUNK_KEY_LEN: usize = 32;
/// Length of a column key (opacityMap).
pub const COLUMN_KEY_LEN: usize = 24;

/// A storage level: L0 holds single chunks, L1 clusters of 4³ chunks, L2 clusters of 16³.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Level {
    /// Hot: one chunk per key.
    L0,
    /// Warm: clusters of 4×4×4 chunks (coords `>> 2`).
    L1,
    /// Cold: clusters of 16×16×16 chunks (coords `>> 4`).
    L2,
}

impl Level {
    /// All levels, finest first.
    pub const ALL: [Level; 3] = [Level::L0, Level::L1, Level::L2];

    /// Right shift from chunk coordinates to this level's cell coordinates (0, 2 or 4).
    #[inline]
    pub const fn shift(self) -> u32 {
        match self {
            Level::L0 => 0,
            Level::L1 => 2,
            Level::L2 => 4,
        }
    }

    /// Chunks along one edge of a cell at this level (1, 4 or 16).
    #[inline]
    pub const fn edge(self) -> u32 {
        1 << self.shift()
    }

    /// The level index (0, 1, 2).
    #[inline]
    pub const fn index(self) -> u8 {
        self as u8
    }

    /// The level with index `i`, if any.
    pub const fn from_index(i: u8) -> Option<Level> {
        match i {
            0 => Some(Level::L0),
            1 => Some(Level::L1),
            2 => Some(Level::L2),
            _ => None,
        }
    }
}

/// The key of the cell holding chunk `pos` at `level` in dimension `dim`: `dim` big-endian,
/// then the Morton key of `pos >> level.shift()`.
#[inline]
pub fn chunk_key(dim: u64, pos: ChunkPos, level: Level) -> [u8; CHUNK_KEY_LEN] {
    let s = level.shift();
    cell_key(dim, ChunkPos::new(pos.x >> s, pos.y >> s, pos.z >> s))
}

/// The key of a cell given in level coordinates (already shifted).
#[inline]
pub fn cell_key(dim: u64, cell: ChunkPos) -> [u8; CHUNK_KEY_LEN] {
    let mut k = [0u8; CHUNK_KEY_LEN];
    k[..8].copy_from_slice(&dim.to_be_bytes());
    k[8..].copy_from_slice(&morton::encode3(cell.x, cell.y, cell.z));
    k
}

/// Splits a chunk key into dimension and cell coordinates (in the level's coordinates);
/// `None` unless it is exactly [`CHUNK_KEY_LEN`] bytes.
pub fn parse_chunk_key(key: &[u8]) -> Option<(u64, ChunkPos)> {
    let key: &[u8; CHUNK_KEY_LEN] = key.try_into().ok()?;
    let dim = u64::from_be_bytes(key[..8].try_into().ok()?);
    let (x, y, z) = morton::decode3(key[8..].try_into().ok()?);
    Some((dim, ChunkPos::new(x, y, z)))
}

/// The half-open key range `[lo, hi)` of every key in dimension `dim`: a prefix scan bound.
pub fn dimension_range(dim: u64) -> ([u8; 8], Option<[u8; 8]>) {
    (dim.to_be_bytes(), dim.checked_add(1).map(u64::to_be_bytes))
}

/// The opacity-map key of the tile of 4×4 chunk columns (64×64 block columns) holding
/// chunk column `(x, z)`: `dim` big-endian,
/// then the 2D Morton key of `(x >> 2, z >> 2)`.
#[inline]
pub fn column_key(dim: u64, x: i64, z: i64) -> [u8; COLUMN_KEY_LEN] {
    column_key_at(dim, x, z, Level::L1)
}

/// The 2D key of chunk column `(x, z)` at `level` (coords `>> 0`, `>> 2` or `>> 4`):
/// `dim` big-endian, then the 2D Morton key of the shifted coordinates. Byte order is Morton
/// order, so the columns of one 4×4 or 16×16 tile form one contiguous key range at the finer
/// levels. [`column_key`] is the opacity map's use of it (`Level::L1`).
#[inline]
pub fn column_key_at(dim: u64, x: i64, z: i64, level: Level) -> [u8; COLUMN_KEY_LEN] {
    let s = level.shift();
    let mut k = [0u8; COLUMN_KEY_LEN];
    k[..8].copy_from_slice(&dim.to_be_bytes());
    k[8..].copy_from_slice(&morton::encode2(x >> s, z >> s));
    k
}

/// Splits a 2D key ([`column_key`], [`column_key_at`]) into dimension and the coordinates
/// it was made from, in its level's coordinates (column coords `>> 2` for the opacity map).
pub fn parse_column_key(key: &[u8]) -> Option<(u64, i64, i64)> {
    let key: &[u8; COLUMN_KEY_LEN] = key.try_into().ok()?;
    let dim = u64::from_be_bytes(key[..8].try_into().ok()?);
    let (x, z) = morton::decode2(key[8..].try_into().ok()?);
    Some((dim, x, z))
}

/// Length of an area entity key (`entity` table of a shared world).
pub const AREA_ENTITY_KEY_LEN: usize = 24;

/// The key of entity `uuid` in `area` (`entity` table, shared-world layout): the area's bytes,
/// then the UUID, so that one area's entities are one contiguous range.
pub fn area_entity_key(area: AreaId, uuid: &[u8; 16]) -> [u8; AREA_ENTITY_KEY_LEN] {
    let mut k = [0u8; AREA_ENTITY_KEY_LEN];
    k[..8].copy_from_slice(&area.to_bytes());
    k[8..].copy_from_slice(uuid);
    k
}

/// The area and UUID of an [`area_entity_key`]; `None` for any other length.
pub fn parse_area_entity_key(key: &[u8]) -> Option<(AreaId, [u8; 16])> {
    if key.len() != AREA_ENTITY_KEY_LEN {
        return None;
    }
    Some((AreaId::from_bytes(&key[..8])?, key[8..].try_into().ok()?))
}
