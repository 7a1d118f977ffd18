//! [`RocksOptions`]: the RocksDB settings a store opens with, and the column-family options
//! they give each table.

use rocksdb::{BlockBasedOptions, Cache, DBCompressionType, DataBlockIndexType, Options};
use terrane_store::tables;

#[cfg(doc)]
use crate::RocksStore;
use crate::{Error, Result};

/// A compression algorithm for a column family.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Compression {
    /// No compression.
    None,
    /// LZ4: fast, for hot data.
    Lz4,
    /// Zstandard: smaller, for cold data.
    Zstd,
}

impl Compression {
    pub(crate) fn rocks(self) -> DBCompressionType {
        match self {
            Compression::None => DBCompressionType::None,
            Compression::Lz4 => DBCompressionType::Lz4,
            Compression::Zstd => DBCompressionType::Zstd,
        }
    }
}

/// RocksDB settings, with documented defaults. Build with [`RocksOptions::new`] and the
/// setters; pass to [`RocksStore::open_with`].
#[derive(Clone, Debug, PartialEq)]
pub struct RocksOptions {
    /// Shared LRU block cache for all column families. Default 64 MiB.
    pub block_cache_bytes: usize,
    /// RocksDB's row cache: whole values found by point reads (`get`, `multi_get`) in table
    /// files, kept for the next read of the same key, which then skips the block lookup,
    /// checksum and copy out of a block (the block file's `cache_bytes` does the same). Values
    /// still in a memtable are read from there. Default 32 MiB; 0 turns it off.
    pub row_cache_bytes: usize,
    /// Bloom filter bits per key on the chunk tables (and `entity`). Default 10 (~1% false
    /// positives). 0 disables the filters.
    pub bloom_bits_per_key: f64,
    /// Values at least this large go to BlobDB blob files (every table). Default 1 MiB.
    pub min_blob_size: u64,
    /// Target size of a blob file. Default 256 MiB.
    pub blob_file_size: u64,
    /// Compression of the hot tables (everything but `chunkl2`). Default lz4.
    pub hot_compression: Compression,
    /// Compression of the cold cluster level `chunkl2`. Default zstd.
    pub cold_compression: Compression,
    /// Memtable size per column family. Default 32 MiB.
    pub write_buffer_bytes: usize,
    /// All column families' memtables together: past this, RocksDB flushes the largest, so
    /// that a long import's memory does not grow with the tables it writes. Default 64 MiB;
    /// 0: no bound but each family's [`write_buffer_bytes`](Self::write_buffer_bytes).
    pub memtables_bytes: usize,
    /// Background flush and compaction threads. Default 2.
    pub background_jobs: i32,
    /// Whether the data blocks a scan reads go into the block cache. Default true; false
    /// for a store read once from end to end (a copy, an export, a backup): its cache then
    /// keeps the index and filter blocks and what point reads read, instead of turning
    /// over every block of the store.
    pub scans_fill_cache: bool,
}

impl Default for RocksOptions {
    fn default() -> Self {
        RocksOptions {
            block_cache_bytes: 64 << 20,
            row_cache_bytes: 32 << 20,
            bloom_bits_per_key: 10.0,
            min_blob_size: 1 << 20,
            blob_file_size: 256 << 20,
            hot_compression: Compression::Lz4,
            cold_compression: Compression::Zstd,
            write_buffer_bytes: 32 << 20,
            memtables_bytes: 64 << 20,
            background_jobs: 2,
            scans_fill_cache: true,
        }
    }
}

impl RocksOptions {
    /// The defaults.
    pub fn new() -> Self {
        RocksOptions::default()
    }
    /// Sets [`block_cache_bytes`](Self::block_cache_bytes).
    pub fn block_cache_bytes(mut self, v: usize) -> Self {
        self.block_cache_bytes = v;
        self
    }
    /// Sets [`row_cache_bytes`](Self::row_cache_bytes).
    pub fn row_cache_bytes(mut self, v: usize) -> Self {
        self.row_cache_bytes = v;
        self
    }
    /// Sets [`bloom_bits_per_key`](Self::bloom_bits_per_key).
    pub fn bloom_bits_per_key(mut self, v: f64) -> Self {
        self.bloom_bits_per_key = v;
        self
    }
    /// Sets [`min_blob_size`](Self::min_blob_size).
    pub fn min_blob_size(mut self, v: u64) -> Self {
        self.min_blob_size = v;
        self
    }
    /// Sets [`blob_file_size`](Self::blob_file_size).
    pub fn blob_file_size(mut self, v: u64) -> Self {
        self.blob_file_size = v;
        self
    }
    /// Sets [`hot_compression`](Self::hot_compression).
    pub fn hot_compression(mut self, v: Compression) -> Self {
        self.hot_compression = v;
        self
    }
    /// Sets [`cold_compression`](Self::cold_compression).
    pub fn cold_compression(mut self, v: Compression) -> Self {
        self.cold_compression = v;
        self
    }
    /// Sets [`write_buffer_bytes`](Self::write_buffer_bytes).
    pub fn write_buffer_bytes(mut self, v: usize) -> Self {
        self.write_buffer_bytes = v;
        self
    }
    /// Sets [`memtables_bytes`](Self::memtables_bytes).
    pub fn memtables_bytes(mut self, v: usize) -> Self {
        self.memtables_bytes = v;
        self
    }
    /// Sets [`scans_fill_cache`](Self::scans_fill_cache).
    pub fn scans_fill_cache(mut self, v: bool) -> Self {
        self.scans_fill_cache = v;
        self
    }
    /// Sets [`background_jobs`](Self::background_jobs).
    pub fn background_jobs(mut self, v: i32) -> Self {
        self.background_jobs = v;
        self
    }

    pub(crate) fn validate(&self) -> Result<()> {
        let bad = |what: &str| Err(Error::Backend(format!("invalid RocksOptions: {what}")));
        if !(0.0..=64.0).contains(&self.bloom_bits_per_key) {
            return bad("bloom_bits_per_key must be within 0..=64");
        }
        if self.background_jobs < 1 {
            return bad("background_jobs must be at least 1");
        }
        if self.write_buffer_bytes < (1 << 16) {
            return bad("write_buffer_bytes must be at least 64 KiB");
        }
        if self.blob_file_size < (1 << 20) {
            return bad("blob_file_size must be at least 1 MiB");
        }
        Ok(())
    }

    /// The options of one column family.
    pub(crate) fn cf_options(&self, table: &str, cache: &Cache) -> Options {
        let mut o = Options::default();
        let mut bb = BlockBasedOptions::default();
        bb.set_block_cache(cache);
        bb.set_cache_index_and_filter_blocks(true);
        let point = matches!(
            table,
            tables::CHUNK_L0 | tables::CHUNK_L1 | tables::CHUNK_L2 | tables::ENTITY
        );
        if point {
            // Point lookups dominate: bloom filters on whole keys, hash index in data blocks.
            if self.bloom_bits_per_key > 0.0 {
                bb.set_bloom_filter(self.bloom_bits_per_key, false);
                bb.set_whole_key_filtering(true);
                o.set_memtable_whole_key_filtering(true);
                o.set_memtable_prefix_bloom_ratio(0.05);
            }
            bb.set_data_block_index_type(DataBlockIndexType::BinaryAndHash);
        }
        o.set_block_based_table_factory(&bb);
        let compression =
            if table == tables::CHUNK_L2 { self.cold_compression } else { self.hot_compression };
        o.set_compression_type(compression.rocks());
        o.set_bottommost_compression_type(compression.rocks());
        o.set_enable_blob_files(true);
        o.set_min_blob_size(self.min_blob_size);
        o.set_blob_file_size(self.blob_file_size);
        o.set_blob_compression_type(compression.rocks());
        o.set_enable_blob_gc(true);
        o.set_write_buffer_size(self.write_buffer_bytes);
        o.set_level_compaction_dynamic_level_bytes(true);
        o
    }
}
