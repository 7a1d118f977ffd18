//! The terrane-chunk adapter: capture from and restore into `terrane_chunk::Chunk`s.
#![cfg(feature = "chunk")]

use std::sync::Arc;

use terrane_chunk::{BlockId, Chunk, Schema};
use terrane_section::{BlockPos, ChunkPos};
use terrane_snapshot::{
    BlockBox, ChunkAccess, ChunkWorld, Error, MemChunks, QueueConfig, RestoreQueue, Snapshot,
};

fn name_at(w: &ChunkWorld, p: BlockPos) -> Option<String> {
    let b = w.get_block(p)?;
    Some(w.schema.blocks().get(b.0)?.to_owned())
}

#[test]
fn capture_from_chunks_restore_into_other_schema() {
    let mut schema = Schema::new();
    let air = schema.add_block("minecraft:air", &[]).unwrap();
    let names: Vec<String> = (0..200).map(|i| format!("test:block_{i}")).collect();
    let ids: Vec<BlockId> = names.iter().map(|n| schema.add_block(n, &[]).unwrap()).collect();
    let mut src = ChunkWorld::new(schema);
    let bbox = BlockBox::new(BlockPos::new(-7, -20, 3), BlockPos::new(18, 5, 33));
    for r in bbox.sub_regions() {
        src.chunks.insert(r.chunk, Chunk::new(air));
    }
    let mut k = 0usize;
    for x in -7..=18 {
        for y in -20..=5 {
            for z in 3..=33 {
                k = (k * 31 + 7) % 211;
                if k < 200 {
                    assert!(src.set_block(BlockPos::new(x, y, z), ids[k]));
                }
            }
        }
    }
    let snap = Arc::new(Snapshot::capture(&src, bbox).unwrap());

    // A target whose schema lists the blocks in another order and lacks most of them.
    let mut schema2 = Schema::new();
    schema2.add_block("test:block_199", &[]).unwrap();
    let air2 = schema2.add_block("minecraft:air", &[]).unwrap();
    let mut dst = ChunkWorld::new(schema2);
    // Unknown states are an error unless the schema may grow.
    dst.fill = Some(air2);
    assert!(matches!(snap.restore(&mut dst, false), Err(Error::UnknownState(_))));
    dst.grow_schema = true;
    let mut q = RestoreQueue::new(QueueConfig::default());
    q.push(snap.clone(), true);
    while !q.is_empty() {
        q.tick(&mut dst);
    }
    for x in -7..=18 {
        for y in -20..=5 {
            for z in 3..=33 {
                let p = BlockPos::new(x, y, z);
                assert_eq!(name_at(&dst, p), name_at(&src, p), "{p:?}");
            }
        }
    }
    assert_ne!(dst.schema.blocks().find("test:block_0"), src.schema.blocks().find("test:block_0"));
}

#[test]
fn memory_world_to_chunks_and_missing_chunks() {
    let mut mem = MemChunks::new();
    let bbox = BlockBox::new(BlockPos::new(0, 0, 0), BlockPos::new(20, 3, 3));
    for r in bbox.sub_regions() {
        mem.ensure_chunk(r.chunk);
    }
    mem.set_named(BlockPos::new(20, 3, 3), "minecraft:stone");
    let snap = Snapshot::capture(&mem, bbox).unwrap();

    let mut schema = Schema::new();
    let air = schema.add_block("minecraft:air", &[]).unwrap();
    schema.add_block("minecraft:stone", &[]).unwrap();
    let mut dst = ChunkWorld::new(schema);
    // Not loaded: reported, not invented.
    let e = snap.restore(&mut dst, false).unwrap_err();
    assert!(matches!(e, Error::ChunkUnavailable(c) if c == ChunkPos::new(0, 0, 0)), "{e}");
    assert!(matches!(Snapshot::capture(&dst, bbox), Err(Error::ChunkUnavailable(_))));
    dst.chunks.insert(ChunkPos::new(0, 0, 0), Chunk::new(air));
    dst.chunks.insert(ChunkPos::new(1, 0, 0), Chunk::new(air));
    let st = snap.restore(&mut dst, true).unwrap();
    assert_eq!(st.written, 1);
    assert_eq!(name_at(&dst, BlockPos::new(20, 3, 3)).as_deref(), Some("minecraft:stone"));
}
