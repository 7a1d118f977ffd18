//! NBT glue over terrane-nbt, the workspace's one NBT implementation: a region chunk's root
//! compound in, and records out with sorted compound keys, so that equal values always
//! encode to equal bytes.

pub use terrane_nbt::{Compound, Tag, Writer, id};

use crate::error::ChunkError;

/// Parses a root compound (named root, as in region chunks; the name is dropped and bytes
/// after the root are ignored). Bounded as terrane-nbt documents: nesting ≤ 512, lengths
/// checked against the bytes left before allocating, strings in modified UTF-8.
pub fn parse(bytes: &[u8]) -> Result<Compound, ChunkError> {
    Ok(Compound::from_bytes(bytes)?)
}

/// Encodes a root compound with an empty name, every compound's keys sorted.
pub fn write_root(root: &Compound) -> Result<Vec<u8>, ChunkError> {
    let mut w = Writer::sorted().with_buffer(Vec::with_capacity(4096));
    w.head(id::COMPOUND, "")?;
    w.compound(root, 0)?;
    Ok(w.out)
}
