//! The keys of a Bedrock world's database (`docs/format/bedrock.md`, "Keys").
//!
//! A chunk record's key is the column's `x` and `z` (`i32` little-endian), the dimension
//! (`i32` little-endian, left out for the Overworld), a one-byte record tag and, for a
//! sub-chunk, its `y` index (`i8`). Entities of current worlds are keyed by `actorprefix` and
//! their 8-byte unique id; `digp` and a column's key prefix lists the ids of its entities.
//! Every other key (players, maps, villages, ...) is a world record kept as it is.

/// Record tags of chunk keys, by name (the tags a current world writes; any other tag is kept
/// as an opaque chunk record).
pub mod tag {
    /// `Data3D`: height map and 3D biomes (1.18+).
    pub const DATA_3D: u8 = 0x2B;
    /// `Version`: the chunk's format version (1.16.100+).
    pub const VERSION: u8 = 0x2C;
    /// `Data2D`: height map and 2D biomes (before 1.18).
    pub const DATA_2D: u8 = 0x2D;
    /// `SubChunkPrefix`: one sub-chunk of blocks (the key ends with its `y` index).
    pub const SUB_CHUNK: u8 = 0x2F;
    /// `BlockEntity`: the column's block entities, little-endian NBT compounds back to back.
    pub const BLOCK_ENTITY: u8 = 0x31;
    /// `Entity`: the column's entities before 1.18.30, NBT compounds back to back.
    pub const ENTITY: u8 = 0x32;
    /// `FinalizedState`: generation stage (`i32`).
    pub const FINALIZED_STATE: u8 = 0x36;
    /// `Checksums`: xxHash64 of the column's other records ([`crate::checksums`]).
    pub const CHECKSUMS: u8 = 0x3B;
    /// `LegacyVersion`: the chunk's format version (before 1.16.100).
    pub const LEGACY_VERSION: u8 = 0x76;
}

/// Prefix of an entity's key (then its unique id, `i64` little-endian).
pub const ACTOR_PREFIX: &[u8] = b"actorprefix";
/// Prefix of a column's entity list key (then the column's key prefix).
pub const DIGP_PREFIX: &[u8] = b"digp";

/// A column of one dimension, as Bedrock keys it.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BedrockColumnPos {
    /// Bedrock dimension: 0 Overworld, 1 Nether, 2 End.
    pub dim: i32,
    /// Column x (blocks / 16).
    pub x: i32,
    /// Column z (blocks / 16).
    pub z: i32,
}

impl BedrockColumnPos {
    /// The key prefix of the column's records: `x`, `z`, and the dimension unless 0.
    pub fn prefix(&self) -> Vec<u8> {
        let mut k = Vec::with_capacity(14);
        k.extend_from_slice(&self.x.to_le_bytes());
        k.extend_from_slice(&self.z.to_le_bytes());
        if self.dim != 0 {
            k.extend_from_slice(&self.dim.to_le_bytes());
        }
        k
    }

    /// The key of the column's record `tag` (not a sub-chunk).
    pub fn key(&self, tag: u8) -> Vec<u8> {
        let mut k = self.prefix();
        k.push(tag);
        k
    }

    /// The key of the column's sub-chunk `y`.
    pub fn sub_chunk_key(&self, y: i8) -> Vec<u8> {
        let mut k = self.key(tag::SUB_CHUNK);
        k.push(y as u8);
        k
    }

    /// The key of the column's entity list (`digp` + prefix).
    pub fn digp_key(&self) -> Vec<u8> {
        [DIGP_PREFIX, &self.prefix()].concat()
    }
}

/// What a key of a Bedrock world's database is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DbKey {
    /// A record of a column: its tag, and the `y` index for a sub-chunk.
    Chunk {
        /// The column.
        pos: BedrockColumnPos,
        /// The record tag ([`tag`]).
        tag: u8,
        /// The sub-chunk's `y` index ([`tag::SUB_CHUNK`] only).
        y: Option<i8>,
    },
    /// An entity (`actorprefix` + unique id).
    Actor(i64),
    /// A column's entity list (`digp` + column prefix).
    Digp(BedrockColumnPos),
    /// Any other key: a world record (players, maps, villages, ...).
    Other,
}

/// Chunk record tags a key is taken as a chunk key for: 0x2B–0x44 (`Data3D` to
/// `ActorDigestVersion`, the blending records of 1.18 included) and the legacy version.
fn is_chunk_tag(t: u8) -> bool {
    (0x2B..=0x44).contains(&t) || t == tag::LEGACY_VERSION
}

fn column(b: &[u8]) -> Option<BedrockColumnPos> {
    let i = |o: usize| i32::from_le_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]);
    match b.len() {
        8 => Some(BedrockColumnPos { dim: 0, x: i(0), z: i(4) }),
        12 if matches!(i(8), 1 | 2) => Some(BedrockColumnPos { dim: i(8), x: i(0), z: i(4) }),
        _ => None,
    }
}

impl DbKey {
    /// Classifies a key. Chunk keys are told apart by their length (9 or 13 bytes, one more
    /// for a sub-chunk), a known record tag and a dimension of 1 or 2 when one is present;
    /// anything else is [`DbKey::Other`].
    pub fn parse(k: &[u8]) -> DbKey {
        if let Some(Ok(b)) = k.strip_prefix(ACTOR_PREFIX).map(<[u8; 8]>::try_from) {
            return DbKey::Actor(i64::from_le_bytes(b));
        }
        if let Some(p) = k.strip_prefix(DIGP_PREFIX).and_then(column) {
            return DbKey::Digp(p);
        }
        let (body, y) = match k.len() {
            10 | 14 if k[k.len() - 2] == tag::SUB_CHUNK => {
                (&k[..k.len() - 1], Some(k[k.len() - 1] as i8))
            }
            9 | 13 => (k, None),
            _ => return DbKey::Other,
        };
        let t = body[body.len() - 1];
        if !is_chunk_tag(t) || (t == tag::SUB_CHUNK) != y.is_some() {
            return DbKey::Other;
        }
        match column(&body[..body.len() - 1]) {
            Some(pos) => DbKey::Chunk { pos, tag: t, y },
            None => DbKey::Other,
        }
    }
}

/// The key of an entity (`actorprefix` + its unique id).
pub fn actor_key(id: i64) -> Vec<u8> {
    [ACTOR_PREFIX, &id.to_le_bytes()].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_and_others_stay_others() {
        for dim in 0..3 {
            let p = BedrockColumnPos { dim, x: -3, z: 70_000 };
            assert_eq!(
                DbKey::parse(&p.sub_chunk_key(-4)),
                DbKey::Chunk { pos: p, tag: tag::SUB_CHUNK, y: Some(-4) }
            );
            assert_eq!(
                DbKey::parse(&p.key(tag::VERSION)),
                DbKey::Chunk { pos: p, tag: tag::VERSION, y: None }
            );
            assert_eq!(DbKey::parse(&p.digp_key()), DbKey::Digp(p));
        }
        assert_eq!(DbKey::parse(&actor_key(-5)), DbKey::Actor(-5));
        // `~local_player` is 13 bytes: its "dimension" is not 1 or 2 and its "tag" is 'r'.
        for k in [&b"~local_player"[..], b"BiomeData", b"portals", b"Overworld", b"map_-12", b""] {
            assert_eq!(DbKey::parse(k), DbKey::Other, "{:?}", String::from_utf8_lossy(k));
        }
        // The blending and digest tags of 1.18 (up to 0x44) are column records; 0x45 is not.
        let p0 = BedrockColumnPos { dim: 0, x: 5, z: 6 };
        for t in [0x40, 0x44, tag::LEGACY_VERSION] {
            assert_eq!(DbKey::parse(&p0.key(t)), DbKey::Chunk { pos: p0, tag: t, y: None });
        }
        assert_eq!(DbKey::parse(&p0.key(0x45)), DbKey::Other);
        assert_eq!(DbKey::parse(&p0.key(0x2A)), DbKey::Other);
        // A sub-chunk tag without a y, or a y after another tag, is not a chunk key.
        let p = BedrockColumnPos { dim: 0, x: 1, z: 2 };
        assert_eq!(DbKey::parse(&p.key(tag::SUB_CHUNK)), DbKey::Other);
        let mut k = p.key(tag::VERSION);
        k.push(0);
        assert_eq!(DbKey::parse(&k), DbKey::Other);
    }
}
