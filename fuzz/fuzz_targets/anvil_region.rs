//! Reads arbitrary bytes as an Anvil region file and pushes every chunk through the whole
//! pipeline (decompress, NBT, column decode, pre-1.18 biomes, cubic conversion, export back
//! to NBT): typed errors only, never a panic; and the import's path
//! (`mapping::chunk_to_terrane`, no tree for the column record) gives what the tree path
//! gives, or fails where it fails.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_anvil::region::{Compression, RegionFile, RegionWriter};
use terrane_anvil::{Column, mapping};

fn pipeline(bytes: Vec<u8>) {
    let Ok(region) = RegionFile::new(bytes) else { return };
    let region = region.with_max_decompressed(4 << 20);
    let mut schema = terrane_chunk::Schema::new();
    // The import's path, on its own schema (both register the same blocks in the same order).
    let mut schema_copy = terrane_chunk::Schema::new();
    for e in region.entries() {
        let Ok(raw) = region.read(&e) else { continue };
        let pos = (e.local_x() as i32, e.local_z() as i32);
        let copied = mapping::chunk_to_terrane(&raw.nbt, pos, e.timestamp, &mut schema_copy);
        let Ok(col) = Column::from_nbt(&raw.nbt, pos) else {
            assert!(copied.is_err(), "the import took a chunk the tree path refuses");
            continue;
        };
        let _ = col.block_counts();
        let _ = col.to_nbt();
        // A column before 1.18: its biomes by number.
        if let Some(level) = col.rest.get("Level").and_then(terrane_nbt::Tag::as_compound) {
            let _ = terrane_anvil::legacy_biomes::legacy_sections(level);
        }
        // The same bytes as a 1.17+ entity chunk.
        let mut with_entities = col.clone();
        if with_entities.add_entity_chunk(&raw.nbt).is_ok() {
            let _ = with_entities.entity_chunk_nbt();
        }
        let tree = mapping::column_to_terrane(&col, e.timestamp, &mut schema);
        match (&tree, &copied) {
            (Ok(a), Ok(b)) => assert!(a.0 == b.0, "the import differs from the tree path"),
            (Err(_), Err(_)) => {}
            _ => panic!("tree path ok: {}, import ok: {}", tree.is_ok(), copied.is_ok()),
        }
        if let Ok((imp, _)) = tree {
            if let Ok((back, _)) = mapping::terrane_to_column(&imp, &schema) {
                let _ = back.to_nbt();
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    // Whole region files (the fixture seeds, and mutations that keep their sector-aligned
    // length) are read as they are.
    if data.len() >= 8192 && data.len() % 4096 == 0 {
        pipeline(data.to_vec());
        return;
    }
    // Otherwise the first byte picks how the rest is used, so the fuzzer reaches past zlib
    // and the header: 0 = a raw region file, 1 = one uncompressed chunk, 2 = one zlib chunk,
    // 3 = one LZ4 chunk.
    let Some((&mode, rest)) = data.split_first() else { return };
    match mode % 4 {
        0 => pipeline(rest.to_vec()),
        m => {
            let mut w = RegionWriter::new(0, 0);
            match m {
                1 => w.insert_compressed(3, rest.to_vec(), Compression::None, 1),
                2 => w.insert(3, rest.to_vec(), 1),
                _ => w.insert_compressed(
                    3,
                    terrane_anvil::region::lz4_block_encode(rest),
                    Compression::Lz4,
                    1,
                ),
            }
            if let Ok((bytes, _)) = w.finish() {
                pipeline(bytes);
            }
        }
    }
});
