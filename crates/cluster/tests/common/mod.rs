//! Shared helpers of the tiered-store tests: a schema, chunk bytes, backends.
#![allow(dead_code)]

pub mod kills;
pub mod model;

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

/// A [`MemStore`](terrane_store::MemStore) (shared through an `Arc`) that counts the reads of
/// `chunkl0` reaching it (and of the cluster tables, and its writes) and can run a hook just before the first batch it writes: for tests
/// that count round trips or slip another writer in between a read and a write.
pub struct SpyStore {
    pub inner: std::sync::Arc<terrane_store::MemStore>,
    pub gets: std::sync::atomic::AtomicUsize,
    pub multi_gets: std::sync::atomic::AtomicUsize,
    /// Reads (`get` or `multi_get`) of `chunkl1` and `chunkl2`.
    pub cluster_reads: std::sync::atomic::AtomicUsize,
    pub writes: std::sync::atomic::AtomicUsize,
    pub before_first_write: std::sync::Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

impl SpyStore {
    pub fn new(inner: std::sync::Arc<terrane_store::MemStore>) -> Self {
        SpyStore {
            inner,
            gets: Default::default(),
            multi_gets: Default::default(),
            cluster_reads: Default::default(),
            writes: Default::default(),
            before_first_write: std::sync::Mutex::new(None),
        }
    }

    fn count_cluster_read(&self, table: &str) {
        use terrane_store::tables::{CHUNK_L1, CHUNK_L2};
        if table == CHUNK_L1 || table == CHUNK_L2 {
            self.cluster_reads.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

impl terrane_store::ReadView for SpyStore {
    fn get(&self, table: &str, key: &[u8]) -> terrane_store::Result<Option<terrane_store::Object>> {
        if table == terrane_store::tables::CHUNK_L0 {
            self.gets.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        self.count_cluster_read(table);
        self.inner.get(table, key)
    }
    fn multi_get(
        &self,
        table: &str,
        keys: &[&[u8]],
    ) -> terrane_store::Result<Vec<Option<terrane_store::Object>>> {
        if table == terrane_store::tables::CHUNK_L0 {
            self.multi_gets.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        self.count_cluster_read(table);
        self.inner.multi_get(table, keys)
    }
    fn scan(
        &self,
        table: &str,
        range: terrane_store::KeyRange,
    ) -> terrane_store::Result<terrane_store::Scan<'_>> {
        self.inner.scan(table, range)
    }
}

impl terrane_store::Store for SpyStore {
    fn signature(&self) -> &str {
        self.inner.signature()
    }
    fn tables(&self) -> Vec<String> {
        self.inner.tables()
    }
    fn write(&self, batch: &terrane_store::Batch) -> terrane_store::Result<()> {
        self.writes.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let hook = self.before_first_write.lock().unwrap().take();
        if let Some(hook) = hook {
            hook();
        }
        self.inner.write(batch)
    }
    fn snapshot(&self) -> terrane_store::Result<Box<dyn terrane_store::ReadView + '_>> {
        self.inner.snapshot()
    }
    fn flush(&self) -> terrane_store::Result<()> {
        self.inner.flush()
    }
    fn sync(&self) -> terrane_store::Result<()> {
        self.inner.sync()
    }
}
