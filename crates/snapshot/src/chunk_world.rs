//! The [`ChunkAccess`] adapter for terrane-chunk cubic chunks (feature `chunk`, on by default).

use std::borrow::Cow;
use std::collections::HashMap;

use terrane_chunk::{BlockId, Chunk, Schema};
use terrane_section::ChunkPos;

use crate::world::{ChunkAccess, ChunkRead, ChunkWrite};

impl ChunkRead<BlockId> for &Chunk {
    #[inline]
    fn get(&self, x: u32, y: u32, z: u32) -> BlockId {
        Chunk::get(self, x, y, z)
    }
}

impl ChunkRead<BlockId> for &mut Chunk {
    #[inline]
    fn get(&self, x: u32, y: u32, z: u32) -> BlockId {
        Chunk::get(self, x, y, z)
    }
}

impl ChunkWrite<BlockId> for &mut Chunk {
    #[inline]
    fn set(&mut self, x: u32, y: u32, z: u32, block: BlockId) {
        Chunk::set(self, x, y, z, block);
    }
}

/// A world of loaded [`terrane_chunk::Chunk`]s with the [`Schema`] naming their blocks.
///
/// Block states cross by name through the schema's block registry. A state the schema does
/// not know is registered (without components) when [`grow_schema`](Self::grow_schema) is
/// set, and makes the restore fail with [`Error::UnknownState`](crate::Error) otherwise.
/// Chunks that are absent are not loaded: capture fails on them and restore reports them
/// unavailable, unless [`fill`](Self::fill) is set, in which case restore creates them
/// filled with that block.
#[derive(Debug, Default)]
pub struct ChunkWorld {
    /// The loaded chunks.
    pub chunks: HashMap<ChunkPos, Chunk>,
    /// The world's registries.
    pub schema: Schema,
    /// Register unknown states on restore (default `false`).
    pub grow_schema: bool,
    /// Create absent chunks on restore, filled with this block (default `None`).
    pub fill: Option<BlockId>,
}

impl ChunkWorld {
    /// A world with no chunks loaded.
    pub fn new(schema: Schema) -> Self {
        Self { chunks: HashMap::new(), schema, grow_schema: false, fill: None }
    }
}

impl ChunkAccess for ChunkWorld {
    type Block = BlockId;
    type Chunk<'a> = &'a Chunk;
    type ChunkMut<'a> = &'a mut Chunk;

    fn chunk(&self, pos: ChunkPos) -> Option<&Chunk> {
        self.chunks.get(&pos)
    }

    fn chunk_mut(&mut self, pos: ChunkPos) -> Option<&mut Chunk> {
        match self.fill {
            Some(f) => Some(self.chunks.entry(pos).or_insert_with(|| Chunk::new(f))),
            None => self.chunks.get_mut(&pos),
        }
    }

    fn state_name(&self, block: BlockId) -> Cow<'_, str> {
        match self.schema.blocks().get(block.0) {
            Some(n) => Cow::Borrowed(n),
            None => Cow::Owned(format!("terrane:unknown_{}", block.0)),
        }
    }

    fn resolve_state(&mut self, name: &str) -> Option<BlockId> {
        if let Some(id) = self.schema.blocks().find(name) {
            return Some(BlockId(id));
        }
        if self.grow_schema { self.schema.add_block(name, &[]).ok() } else { None }
    }
}
