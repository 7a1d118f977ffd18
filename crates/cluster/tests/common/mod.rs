//! Shared helpers of the tiered-store tests: a schema, chunk bytes, backends.
#![allow(dead_code)]

use terrane_chunk::{BlockId, Chunk, Schema};

pub const AIR: BlockId = BlockId(0);
pub const STONE: BlockId = BlockId(1);
pub const GLASS: BlockId = BlockId(2);
pub const DIRT: BlockId = BlockId(3);

pub fn schema() -> Schema {
    let mut s = Schema::new();
    for name in ["minecraft:air", "minecraft:stone", "minecraft:glass", "minecraft:dirt"] {
        s.add_block(name, &[]).unwrap();
    }
    s.add_entity("minecraft:pig").unwrap();
    s
}

/// Distinct, valid chunk bytes for each `seed`: a column of stone of height `seed % 17` at
/// local (seed % 16, *, seed / 16 % 16) and one dirt block coding the seed.
pub fn chunk_bytes(schema: &Schema, seed: u32) -> Vec<u8> {
    chunk(seed).encode(schema)
}

pub fn chunk(seed: u32) -> Chunk {
    let mut c = Chunk::new(AIR);
    let (x, z) = (seed % 16, (seed / 16) % 16);
    for y in 0..(seed % 17) {
        c.set(x, y, z, STONE);
    }
    let k = seed / 256;
    c.set(k % 16, (k / 16) % 16, 15 - (seed % 16), DIRT);
    c
}
