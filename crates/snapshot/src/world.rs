//! The small world interface snapshots capture from and restore into, and an in-memory world.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::Hash;

use terrane_section::{BlockPos, ChunkPos, cell_index};

/// Read access to one loaded 16³ cubic chunk, by local coordinates (each `0..16`).
pub trait ChunkRead<B> {
    /// The block at local `(x, y, z)`.
    fn get(&self, x: u32, y: u32, z: u32) -> B;
}

/// Write access to one loaded 16³ cubic chunk.
pub trait ChunkWrite<B>: ChunkRead<B> {
    /// Sets the block at local `(x, y, z)`.
    fn set(&mut self, x: u32, y: u32, z: u32, block: B);
}

/// A world made of 16³ cubic chunks (a column world exposes each 16-block slice of a column
/// as one chunk). Snapshots read and write it one chunk at a time; block states cross worlds
/// by name (`minecraft:oak_stairs[facing=east,...]`), resolved once per palette entry.
pub trait ChunkAccess {
    /// The world's own block state handle (a registry id, usually).
    type Block: Copy + Eq + Hash;
    /// A read handle on a loaded chunk.
    type Chunk<'a>: ChunkRead<Self::Block>
    where
        Self: 'a;
    /// A write handle on a loaded chunk.
    type ChunkMut<'a>: ChunkWrite<Self::Block>
    where
        Self: 'a;

    /// The chunk at `pos`, or `None` when it is not loaded / does not exist.
    fn chunk(&self, pos: ChunkPos) -> Option<Self::Chunk<'_>>;
    /// The chunk at `pos` for writing, or `None` when it is not loaded.
    fn chunk_mut(&mut self, pos: ChunkPos) -> Option<Self::ChunkMut<'_>>;
    /// The state string of a block handle (called once per distinct block at capture).
    fn state_name(&self, block: Self::Block) -> Cow<'_, str>;
    /// The block handle for a state string, or `None` when the world does not know it
    /// (called once per distinct state at restore).
    fn resolve_state(&mut self, name: &str) -> Option<Self::Block>;

    /// Asks for `pos` to be loaded and kept loaded (a chunk ticket); restore queues call it
    /// ahead of use, within their limit of chunks in flight. Default: nothing to do.
    fn request_chunk(&mut self, _pos: ChunkPos) {}
    /// Whether a requested chunk is ready. Default: always.
    fn chunk_ready(&self, _pos: ChunkPos) -> bool {
        true
    }
    /// Releases a chunk requested with [`request_chunk`](Self::request_chunk).
    fn release_chunk(&mut self, _pos: ChunkPos) {}

    /// The block at `pos`, or `None` when its chunk is unavailable.
    fn get_block(&self, pos: BlockPos) -> Option<Self::Block> {
        let (x, y, z) = pos.local();
        Some(self.chunk(pos.chunk())?.get(x, y, z))
    }
    /// Sets the block at `pos`; `false` when its chunk is unavailable.
    fn set_block(&mut self, pos: BlockPos, block: Self::Block) -> bool {
        let (x, y, z) = pos.local();
        match self.chunk_mut(pos.chunk()) {
            Some(mut c) => {
                c.set(x, y, z, block);
                true
            }
            None => false,
        }
    }
}

/// A simple in-memory world: `u16` block ids over a name registry, one flat 4096-entry array
/// per cubic chunk. Missing chunks read as unavailable; [`ChunkAccess::chunk_mut`] creates them
/// (filled with id 0, `minecraft:air`). Useful for tests, tools and benchmarks.
#[derive(Clone, Debug)]
pub struct MemChunks {
    chunks: HashMap<ChunkPos, Box<[u16; 4096]>>,
    names: Vec<String>,
    ids: HashMap<String, u16>,
}

impl Default for MemChunks {
    fn default() -> Self {
        Self::new()
    }
}

/// A chunk of a [`MemChunks`].
#[derive(Debug)]
pub struct MemChunk<'a>(&'a [u16; 4096]);

/// A mutable chunk of a [`MemChunks`].
#[derive(Debug)]
pub struct MemChunkMut<'a>(&'a mut [u16; 4096]);

impl ChunkRead<u16> for MemChunk<'_> {
    #[inline]
    fn get(&self, x: u32, y: u32, z: u32) -> u16 {
        self.0[cell_index(x, y, z) as usize]
    }
}

impl ChunkRead<u16> for MemChunkMut<'_> {
    #[inline]
    fn get(&self, x: u32, y: u32, z: u32) -> u16 {
        self.0[cell_index(x, y, z) as usize]
    }
}

impl ChunkWrite<u16> for MemChunkMut<'_> {
    #[inline]
    fn set(&mut self, x: u32, y: u32, z: u32, block: u16) {
        self.0[cell_index(x, y, z) as usize] = block;
    }
}

impl MemChunks {
    /// An empty world whose registry holds `minecraft:air` as id 0.
    pub fn new() -> Self {
        let mut w = Self { chunks: HashMap::new(), names: Vec::new(), ids: HashMap::new() };
        w.register("minecraft:air");
        w
    }

    /// The id of `name`, registering it if new. Panics past 65536 distinct states.
    pub fn register(&mut self, name: &str) -> u16 {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        let id = u16::try_from(self.names.len()).expect("MemChunks holds at most 65536 states");
        self.names.push(name.to_owned());
        self.ids.insert(name.to_owned(), id);
        id
    }

    /// The name of a registered id.
    pub fn name(&self, id: u16) -> Option<&str> {
        self.names.get(id as usize).map(String::as_str)
    }

    /// Makes sure the chunk at `pos` exists (air-filled if new).
    pub fn ensure_chunk(&mut self, pos: ChunkPos) {
        self.chunks.entry(pos).or_insert_with(|| Box::new([0; 4096]));
    }

    /// Number of chunks present.
    pub fn chunk_count(&self) -> usize {
        self.chunks.len()
    }

    /// Sets a block by name, creating its chunk.
    pub fn set_named(&mut self, pos: BlockPos, name: &str) {
        let id = self.register(name);
        self.set_block(pos, id);
    }

    /// The name of the block at `pos`, or `None` when its chunk is absent.
    pub fn get_named(&self, pos: BlockPos) -> Option<&str> {
        self.name(self.get_block(pos)?)
    }
}

impl ChunkAccess for MemChunks {
    type Block = u16;
    type Chunk<'a> = MemChunk<'a>;
    type ChunkMut<'a> = MemChunkMut<'a>;

    fn chunk(&self, pos: ChunkPos) -> Option<MemChunk<'_>> {
        self.chunks.get(&pos).map(|c| MemChunk(c))
    }

    fn chunk_mut(&mut self, pos: ChunkPos) -> Option<MemChunkMut<'_>> {
        Some(MemChunkMut(self.chunks.entry(pos).or_insert_with(|| Box::new([0; 4096]))))
    }

    fn state_name(&self, block: u16) -> Cow<'_, str> {
        Cow::Borrowed(self.names.get(block as usize).map_or("minecraft:air", String::as_str))
    }

    fn resolve_state(&mut self, name: &str) -> Option<u16> {
        if let Some(&id) = self.ids.get(name) {
            return Some(id);
        }
        (self.names.len() < 65536).then(|| self.register(name))
    }
}
