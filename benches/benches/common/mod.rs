//! Real terrain for the benches: an Anvil region read with fastanvil, each 16×16 column
//! section converted to a cubic terrane chunk (block states named by their encoded
//! description, registered in first-seen order).
#![allow(missing_docs)]

use std::collections::HashMap;

use fastanvil::{Chunk as _, JavaChunk, Region};
use terrane_chunk::{BlockId, Chunk, Schema};
use terrane_section::ChunkPos;

pub const REGION: &str = "anvil/1.18.2/r.0.0.mca";

pub use terrane_section::testdata::dir as testdata;

pub struct Terrain {
    pub schema: Schema,
    /// Cubic chunks (dimension 0) with their v1 bytes, in region order.
    pub chunks: Vec<(ChunkPos, Vec<u8>)>,
    /// Columns read from the region.
    pub columns: usize,
    /// Size of the `.mca` file.
    pub mca_bytes: u64,
    /// The raw `.mca` bytes (for the fastanvil peer).
    pub mca: Vec<u8>,
    /// Present (x, z) columns of the region.
    pub present: Vec<(usize, usize)>,
}

pub fn load() -> Terrain {
    let path = testdata().join(REGION);
    let mca = std::fs::read(&path)
        .unwrap_or_else(|e| panic!("fixture {}: {e} (part of the repository)", path.display()));
    let mut region = Region::from_stream(std::io::Cursor::new(mca.clone())).unwrap();
    let mut schema = Schema::new();
    let mut ids: HashMap<String, BlockId> = HashMap::new();
    let air = schema.add_block("minecraft:air|", &[]).unwrap();
    ids.insert("minecraft:air|".into(), air);
    let mut chunks = Vec::new();
    let mut present = Vec::new();
    for cx in 0..32 {
        for cz in 0..32 {
            let Some(data) = region.read_chunk(cx, cz).unwrap() else { continue };
            let Ok(col) = JavaChunk::from_bytes(&data) else { continue };
            present.push((cx, cz));
            let yr = col.y_range();
            let (lo, hi) = (yr.start.div_euclid(16), (yr.end + 15).div_euclid(16));
            for sy in lo..hi {
                let mut c = Chunk::new(air);
                for x in 0..16u32 {
                    for y in 0..16u32 {
                        for z in 0..16u32 {
                            let by = sy * 16 + y as isize;
                            let Some(b) = col.block(x as usize, by, z as usize) else { continue };
                            let name = b.encoded_description();
                            let id = match ids.get(name) {
                                Some(id) => *id,
                                None => {
                                    let id = schema.add_block(name, &[]).unwrap();
                                    ids.insert(name.to_string(), id);
                                    id
                                }
                            };
                            if id != air {
                                c.set(x, y, z, id);
                            }
                        }
                    }
                }
                chunks.push((ChunkPos::new(cx as i64, sy as i64, cz as i64), c));
            }
        }
    }
    let chunks = chunks.into_iter().map(|(p, c)| (p, c.encode(&schema))).collect();
    Terrain { schema, chunks, columns: present.len(), mca_bytes: mca.len() as u64, mca, present }
}
