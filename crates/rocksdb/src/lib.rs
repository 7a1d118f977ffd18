//! RocksDB backend for terrane's object store: one column family per table, tuned per table.
//!
//! # Overview
//!
//! [`RocksStore`] implements [`terrane_store::Store`] on RocksDB:
//!
//! - every table is a column family; the chunk tables (`chunkl0`, `chunkl1`, `chunkl2`) get
//!   bloom filters, hash-indexed data blocks and memtable whole-key filters for point
//!   lookups, and a row cache ([`RocksOptions::row_cache_bytes`], 32 MiB) keeps values that
//!   point reads found; values over [`RocksOptions::min_blob_size`] (1 MiB) go to BlobDB blob
//!   files;
//!   the cold level `chunkl2` is compressed with zstd, everything else with lz4;
//! - a [`Batch`] is one `WriteBatch` across column families (atomic), synced batches set
//!   `WriteOptions::sync`;
//! - snapshots are RocksDB snapshots, scans are RocksDB iterators (an implicit snapshot);
//! - [`RocksStore::backup`] makes an online, consistent copy through a checkpoint (hard links
//!   where possible);
//! - [`RocksOptions`] is the typed options builder, with documented defaults;
//! - one writer at a time: the store's directory carries terrane's advisory lock
//!   ([`terrane_store::lock`]), exclusive for a writer and shared for readers
//!   ([`StoreConfig::read_only`], opened with RocksDB's read-only mode, which writes nothing
//!   into the directory); a refused open is [`Error::Locked`], naming the holder's pid;
//! - a creation killed before RocksDB wrote its `CURRENT` file leaves only RocksDB's creation
//!   files; the next open that may create recognises them and starts again, and refuses any
//!   other non-empty directory.
//!
//! Values are stored as the `i64` version (little-endian) followed by the bytes. The format
//! signature lives in the `default` column family under the key `terrane:signature`.
//!
//! # Example
//!
//! ```
//! use terrane_rocksdb::{RocksOptions, RocksStore};
//! use terrane_store::{Batch, ReadView, Store, StoreConfig, tables};
//!
//! let dir = tempfile::tempdir()?;
//! let db = RocksStore::open_with(
//!     dir.path().join("world"),
//!     &StoreConfig::new("my-game world v1"),
//!     &RocksOptions::new().block_cache_bytes(16 << 20),
//! )?;
//! let mut save = Batch::new();
//! save.put(tables::CHUNK_L0, vec![1; 32], 1, vec![0xab; 10_000])
//!     .put(tables::ENTITY, vec![2; 16], 1, b"zombie".to_vec());
//! db.write(&save.synced())?;
//! assert_eq!(db.get(tables::ENTITY, &[2; 16])?.unwrap().data, b"zombie");
//! db.backup(dir.path().join("backup"))?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Durability
//!
//! As documented by [`terrane_store`](terrane_store#durability): every write goes to the
//! write-ahead log before `write` returns, which survives a process crash; synced batches and
//! [`Store::sync`] `fsync` the log (power loss). [`Store::flush`] writes the memtables of every
//! column family to SST files and waits, after which RocksDB deletes the logs they made
//! obsolete; dropping a writable store does the same before RocksDB closes, so a store closed
//! cleanly holds its tables and an empty log, not a copy of what it wrote since the last flush
//! (RocksDB itself does not flush on close while the log is on). Logs past four memtables
//! (`4 × write_buffer_bytes`) make RocksDB flush the families that hold the oldest one.
//!
//! # Features
//!
//! None. RocksDB is built from source with lz4 and zstd (librocksdb-sys: a C++ compiler and
//! libclang are needed at build time). Its hardware CRC-32C is compiled in only when the
//! target enables SSE 4.2 and PCLMUL (`RUSTFLAGS="-C target-cpu=native"`, or
//! `CXXFLAGS_x86_64_unknown_linux_gnu="-msse4.2 -mpclmul"`); without it, checksums took a
//! quarter of a write in terrane's benchmarks.
//!
//! # What it does not guarantee
//!
//! - Damaged files are RocksDB's to detect: it checks block checksums on every read and file
//!   sizes at open, and errors surface as [`Error::Corrupt`]; a record torn at the tail of the
//!   write-ahead log (a crash while it was written, never acknowledged as synced) is dropped,
//!   and damage before the tail is an error at open.
//! - Readers do not run beside a writer: a live backup of a world in use is made by the
//!   process that has it open ([`RocksStore::backup`]).
//! - Values over 1 GiB are refused ([`Error::ValueTooLarge`]).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod backup;
mod create;

use std::collections::BTreeSet;
use std::ops::Bound;
use std::path::{Path, PathBuf};

use rocksdb::{
    BlockBasedOptions, Cache, ColumnFamily, ColumnFamilyDescriptor, DB, DBCompressionType,
    DBRecoveryMode, DataBlockIndexType, IteratorMode, Options, ReadOptions, SnapshotWithThreadMode,
    WriteBatch, WriteOptions, checkpoint::Checkpoint,
};
use terrane_store::lock::{LockMode, lock_path};
use terrane_store::{
    Batch, KeyRange, Object, Op, OpenMode, Parts, PartsThen, ReadView, Scan, Store, StoreConfig,
    check_key, cut_parts, tables,
};
pub use terrane_store::{Error, Result};

/// The largest value stored (1 GiB).
pub const MAX_VALUE_LEN: usize = 1 << 30;

/// The key of the format signature in the `default` column family.
pub const SIGNATURE_KEY: &[u8] = b"terrane:signature";

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
    fn rocks(self) -> DBCompressionType {
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
    /// Background flush and compaction threads. Default 2.
    pub background_jobs: i32,
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
            background_jobs: 2,
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
    /// Sets [`background_jobs`](Self::background_jobs).
    pub fn background_jobs(mut self, v: i32) -> Self {
        self.background_jobs = v;
        self
    }

    fn validate(&self) -> Result<()> {
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
    fn cf_options(&self, table: &str, cache: &Cache) -> Options {
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

/// Maps a RocksDB error to the store's error.
///
/// A full disk becomes an [`Error::Io`] of kind
/// [`StorageFull`](std::io::ErrorKind::StorageFull) (so [`Error::is_storage_full`] says so):
/// RocksDB reports it only as text, the operating system's "No space left on device".
fn rocks_err(e: rocksdb::Error) -> Error {
    rocks_err_text(e.kind(), e.into_string())
}

/// [`rocks_err`] of an error's kind and text.
fn rocks_err_text(kind: rocksdb::ErrorKind, text: String) -> Error {
    // RocksDB's text starts with its own "IO error: "; `Error::Io` says it already.
    let io_text =
        |text: String| text.strip_prefix("IO error: ").map(str::to_string).unwrap_or(text);
    if text.contains(NO_SPACE) {
        return Error::Io(std::io::Error::new(std::io::ErrorKind::StorageFull, io_text(text)));
    }
    match kind {
        rocksdb::ErrorKind::Corruption => Error::Corrupt(text),
        rocksdb::ErrorKind::IOError => Error::Io(std::io::Error::other(io_text(text))),
        _ => Error::Backend(text),
    }
}

/// How RocksDB's messages say the disk is full: `strerror(ENOSPC)`.
const NO_SPACE: &str = "No space left on device";

/// Maps an error of opening the database; RocksDB's own lock error (another program holds its
/// `LOCK` file) becomes [`Error::Locked`], like terrane's own lock.
fn open_err(e: rocksdb::Error, path: &Path) -> Error {
    let text = e.to_string();
    if text.contains("While lock file") || text.contains("lock hold by current process") {
        return Error::Locked { path: path.into(), holder: None };
    }
    rocks_err(e)
}

/// Splits a stored value into version and bytes.
fn decode(table: &str, raw: &[u8]) -> Result<Object> {
    if raw.len() < 8 {
        return Err(Error::Corrupt(format!("value in {table} shorter than its 8-byte version")));
    }
    let version = i64::from_le_bytes(raw[..8].try_into().expect("8 bytes"));
    Ok(Object { version, data: raw[8..].to_vec() })
}

fn encode(version: i64, data: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + data.len());
    v.extend_from_slice(&version.to_le_bytes());
    v.extend_from_slice(data);
    v
}

/// Read options bounding an iterator to `range` (the start bound is applied by seeking).
fn bounded(range: &KeyRange) -> ReadOptions {
    let mut ro = ReadOptions::default();
    match &range.start {
        Bound::Included(s) | Bound::Excluded(s) => ro.set_iterate_lower_bound(s.clone()),
        Bound::Unbounded => {}
    }
    match &range.end {
        Bound::Excluded(e) => ro.set_iterate_upper_bound(e.clone()),
        Bound::Included(e) => {
            let mut after = e.clone();
            after.push(0);
            ro.set_iterate_upper_bound(after);
        }
        Bound::Unbounded => {}
    }
    ro
}

/// A [`Store`] on RocksDB. See the [crate docs](crate).
pub struct RocksStore {
    db: DB,
    path: PathBuf,
    signature: String,
    tables: BTreeSet<String>,
    read_only: bool,
    /// Held by `write` from its precondition check to its commit.
    write_lock: std::sync::Mutex<()>,
    /// The advisory lock on the directory (terrane_store::lock), held for the store's life.
    _lock: std::fs::File,
    _cache: Cache,
    /// The row cache, when [`RocksOptions::row_cache_bytes`] is not 0 (its usage is part of
    /// `cache_bytes`).
    row_cache: Option<Cache>,
}

impl std::fmt::Debug for RocksStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RocksStore")
            .field("path", &self.path)
            .field("signature", &self.signature)
            .field("tables", &self.tables)
            .finish_non_exhaustive()
    }
}

/// Whether the `default` column family and every column family in `names` hold no key.
fn all_empty(db: &DB, names: &BTreeSet<String>) -> Result<bool> {
    let mut default = db.raw_iterator();
    default.seek_to_first();
    if default.valid() {
        return Ok(false);
    }
    default.status().map_err(rocks_err)?;
    for name in names {
        let Some(cf) = db.cf_handle(name) else { continue };
        let mut it = db.raw_iterator_cf(cf);
        it.seek_to_first();
        if it.valid() {
            return Ok(false);
        }
        it.status().map_err(rocks_err)?;
    }
    Ok(true)
}

impl RocksStore {
    /// Opens (or creates, per `config.mode`) the store in directory `path` with the default
    /// [`RocksOptions`].
    pub fn open(path: impl AsRef<Path>, config: &StoreConfig) -> Result<Self> {
        RocksStore::open_with(path, config, &RocksOptions::default())
    }

    /// Opens (or creates) the store in directory `path`: checks the signature, opens every
    /// existing column family and creates the missing tables of `config`.
    pub fn open_with(
        path: impl AsRef<Path>,
        config: &StoreConfig,
        options: &RocksOptions,
    ) -> Result<Self> {
        config.validate()?;
        options.validate()?;
        let path = path.as_ref();
        let read_only = config.read_only;
        let may_create = !read_only && config.mode != OpenMode::Open;
        if !path.exists() {
            if !may_create {
                return Err(Error::NotFound(path.into()));
            }
            std::fs::create_dir_all(path)?;
        }
        // The lock comes first: nothing below reads or changes the directory while another
        // process has the store open for writing (or, for a writer, open at all).
        let lock = lock_path(path, LockMode::for_read_only(read_only))?;
        let exists = path.join("CURRENT").exists();
        match (config.mode, exists) {
            (OpenMode::Create, true) => return Err(Error::AlreadyExists(path.into())),
            (_, false) if !may_create => return Err(Error::NotFound(path.into())),
            _ => {}
        }
        if !exists && std::fs::read_dir(path)?.next().is_some() {
            if !create::is_unfinished_creation(path)? {
                return Err(Error::NotAStore {
                    backend: "terrane-rocksdb",
                    detail: format!(
                        "{} is a non-empty directory without a RocksDB CURRENT file",
                        path.display()
                    ),
                });
            }
            // A creation killed before RocksDB wrote CURRENT: it holds no data. Start again.
            create::clear(path)?;
        }
        let mut db_opts = Options::default();
        db_opts.create_if_missing(!exists);
        // A new database gets every table at once; an existing one is opened with the column
        // families it has, so a stranger's database is refused below without being changed.
        db_opts.create_missing_column_families(!exists);
        db_opts.set_paranoid_checks(true);
        // A record torn by a crash at the log's tail is dropped (it was never acknowledged as
        // synced); a damaged record before the tail is an error at open. The default
        // (point-in-time recovery) would silently stop replaying there and drop every later,
        // acknowledged batch.
        db_opts.set_wal_recovery_mode(DBRecoveryMode::TolerateCorruptedTailRecords);
        // Logs are deleted once flushed: a MANIFEST cut short (damage, not a crash) would
        // name them again and open without what they held. With the closed logs and their
        // sizes recorded in the MANIFEST, a recorded log that is missing is an error at open
        // (`docs/format/rocksdb-v1.md`, "Crash safety", says what this leaves).
        db_opts.set_track_and_verify_wals_in_manifest(true);
        db_opts.set_max_background_jobs(options.background_jobs);
        // A family that gets few writes (world properties, one key per save) would keep every
        // log alive until RocksDB's own bound (four times all the memtables, over a GiB): past
        // four memtables of logs, the families holding the oldest one are flushed.
        db_opts.set_max_total_wal_size(4 * options.write_buffer_bytes as u64);
        db_opts.set_keep_log_file_num(4);
        if read_only {
            // A read-only open writes nothing into the store's directory: RocksDB's info log
            // (which it would create and rotate there) goes to the temporary directory.
            let logs = std::env::temp_dir().join("terrane-rocksdb-read-only-logs");
            std::fs::create_dir_all(&logs)?;
            db_opts.set_db_log_dir(logs);
        }
        let cache = Cache::new_lru_cache(options.block_cache_bytes);
        let row_cache =
            (options.row_cache_bytes > 0).then(|| Cache::new_lru_cache(options.row_cache_bytes));
        if let Some(rc) = &row_cache {
            db_opts.set_row_cache(rc);
        }
        let mut names: BTreeSet<String> = BTreeSet::new();
        if exists {
            for cf in DB::list_cf(&db_opts, path).map_err(rocks_err)? {
                if cf != "default" {
                    names.insert(cf);
                }
            }
        } else {
            names.extend(config.tables.iter().cloned());
        }
        // `default` holds the signature alone: memtables of the tables' size. RocksDB's 64 MiB
        // would set the preallocation of the logs (1.1 times the largest memtable; the unused
        // part is given back when a log is closed).
        let mut default_opts = Options::default();
        default_opts.set_write_buffer_size(options.write_buffer_bytes);
        let cfs = std::iter::once(ColumnFamilyDescriptor::new("default", default_opts)).chain(
            names.iter().map(|t| ColumnFamilyDescriptor::new(t, options.cf_options(t, &cache))),
        );
        let mut db = if read_only {
            DB::open_cf_descriptors_read_only(&db_opts, path, cfs, false)
        } else {
            DB::open_cf_descriptors(&db_opts, path, cfs)
        }
        .map_err(|e| open_err(e, path))?;
        let found = db.get(SIGNATURE_KEY).map_err(rocks_err)?;
        match found {
            Some(sig) if sig != config.signature.as_bytes() => {
                return Err(Error::SignatureMismatch {
                    expected: config.signature.clone(),
                    found: String::from_utf8_lossy(&sig).into_owned(),
                });
            }
            Some(_) => {}
            // A database without a signature that holds data is a stranger's. An empty one is
            // a creation cut off before its signature was written (a crash between RocksDB
            // creating its files and the synced signature write): finish it.
            None if exists && !all_empty(&db, &names)? => {
                return Err(Error::NotAStore {
                    backend: "terrane-rocksdb",
                    detail: "a RocksDB database without a terrane signature".into(),
                });
            }
            None if read_only => {
                return Err(Error::NotFound(path.into()));
            }
            None => {
                let mut wo = WriteOptions::default();
                wo.set_sync(true);
                db.put_opt(SIGNATURE_KEY, config.signature.as_bytes(), &wo).map_err(rocks_err)?;
                // The signature is the `default` family's only write: flushed now, it never
                // keeps a write-ahead log (and every later one) alive while the store is open.
                db.flush_opt(&rocksdb::FlushOptions::default()).map_err(rocks_err)?;
            }
        }
        if !read_only {
            for table in &config.tables {
                if names.insert(table.clone()) {
                    db.create_cf(table, &options.cf_options(table, &cache)).map_err(rocks_err)?;
                }
            }
        }
        Ok(RocksStore {
            db,
            path: path.into(),
            signature: config.signature.clone(),
            tables: names,
            read_only,
            write_lock: std::sync::Mutex::new(()),
            _lock: lock,
            _cache: cache,
            row_cache,
        })
    }

    /// Whether the store was opened read-only ([`StoreConfig::read_only`]).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// Writes a consistent copy of the store to `dir` (which must not exist) while it stays
    /// online: a RocksDB checkpoint (SST files are hard-linked when on the same file system,
    /// the log is copied). Open the copy with [`RocksStore::open`].
    ///
    /// A read-only store is copied file by file instead (a checkpoint of RocksDB's read-only
    /// mode would miss what only its write-ahead log holds): the shared lock keeps writers
    /// away, so the files do not change while they are copied.
    pub fn backup(&self, dir: impl AsRef<Path>) -> Result<()> {
        if self.read_only {
            return backup::copy_files(&self.path, dir.as_ref());
        }
        let cp = Checkpoint::new(&self.db).map_err(rocks_err)?;
        cp.create_checkpoint(dir.as_ref()).map_err(rocks_err)
    }

    /// The directory of the store.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The underlying RocksDB handle (for statistics and maintenance; writing to the column
    /// families directly bypasses the value encoding).
    pub fn db(&self) -> &DB {
        &self.db
    }

    /// Compacts every column family (reclaims space of overwritten values).
    pub fn compact(&self) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly(self.path.clone()));
        }
        for t in &self.tables {
            let cf = self.cf(t)?;
            self.db.compact_range_cf(cf, None::<&[u8]>, None::<&[u8]>);
        }
        Ok(())
    }

    /// Flushes the memtables of every column family, `default` included, and waits. A log
    /// stays until every column family with data in it has flushed: the signature alone in
    /// `default` would keep the first log, and every later one, to the next open.
    fn flush_all(&self) -> Result<()> {
        let cfs: Vec<&ColumnFamily> = std::iter::once("default")
            .chain(self.tables.iter().map(String::as_str))
            .filter_map(|t| self.db.cf_handle(t))
            .collect();
        self.db.flush_cfs_opt(&cfs, &rocksdb::FlushOptions::default()).map_err(rocks_err)
    }

    fn cf(&self, table: &str) -> Result<&ColumnFamily> {
        if !self.tables.contains(table) {
            return Err(Error::UnknownTable(table.into()));
        }
        self.db.cf_handle(table).ok_or_else(|| Error::UnknownTable(table.into()))
    }

    fn scan_with<'a>(
        &'a self,
        table: &str,
        range: KeyRange,
        snapshot: Option<&SnapshotWithThreadMode<'a, DB>>,
    ) -> Result<Scan<'a>> {
        let cf = self.cf(table)?;
        if range.is_empty() {
            return Ok(Box::new(std::iter::empty()));
        }
        let mut ro = bounded(&range);
        if let Some(s) = snapshot {
            ro.set_snapshot(s);
        }
        let mode = match &range.start {
            Bound::Included(s) | Bound::Excluded(s) => {
                IteratorMode::From(s, rocksdb::Direction::Forward)
            }
            Bound::Unbounded => IteratorMode::Start,
        };
        let table = table.to_string();
        let it = self.db.iterator_cf_opt(cf, ro, mode);
        Ok(Box::new(
            it.filter(move |item| match (item, &range.start) {
                (Ok((k, _)), Bound::Excluded(s)) => **k != **s,
                _ => true,
            })
            .map(move |item| {
                let (k, v) = item.map_err(rocks_err)?;
                Ok((k.into_vec(), decode(&table, &v)?))
            }),
        ))
    }

    fn get_with(&self, table: &str, key: &[u8], ro: &ReadOptions) -> Result<Option<Object>> {
        check_key(key)?;
        let cf = self.cf(table)?;
        match self.db.get_pinned_cf_opt(cf, key, ro).map_err(rocks_err)? {
            Some(v) => Ok(Some(decode(table, &v)?)),
            None => Ok(None),
        }
    }

    /// Ranges of a pinned value: only the ranges are copied out of RocksDB's block (both
    /// steps of `get_parts_then` cut the same pinned value).
    fn get_parts_with(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: Option<&mut PartsThen<'_>>,
        ro: &ReadOptions,
    ) -> Result<Option<(Parts, Option<Parts>)>> {
        check_key(key)?;
        let cf = self.cf(table)?;
        let Some(v) = self.db.get_pinned_cf_opt(cf, key, ro).map_err(rocks_err)? else {
            return Ok(None);
        };
        if v.len() < 8 {
            return Err(Error::Corrupt(format!(
                "value in {table} shorter than its 8-byte version"
            )));
        }
        let version = i64::from_le_bytes(v[..8].try_into().expect("8 bytes"));
        let a = cut_parts(version, &v[8..], first);
        let b = then.map(|f| cut_parts(version, &v[8..], &f(&a)));
        Ok(Some((a, b)))
    }

    fn multi_get_with(
        &self,
        table: &str,
        keys: &[&[u8]],
        ro: &ReadOptions,
    ) -> Result<Vec<Option<Object>>> {
        let cf = self.cf(table)?;
        for k in keys {
            check_key(k)?;
        }
        self.db
            .batched_multi_get_cf_opt(cf, keys.iter().copied(), false, ro)
            .into_iter()
            .map(|r| match r.map_err(rocks_err)? {
                Some(v) => Ok(Some(decode(table, &v)?)),
                None => Ok(None),
            })
            .collect()
    }
}

impl ReadView for RocksStore {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        self.get_with(table, key, &ReadOptions::default())
    }

    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<Parts>> {
        Ok(self.get_parts_with(table, key, ranges, None, &ReadOptions::default())?.map(|(a, _)| a))
    }

    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        let found = self.get_parts_with(table, key, first, Some(then), &ReadOptions::default())?;
        Ok(found.map(|(a, b)| (a, b.unwrap_or_default())))
    }

    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        self.multi_get_with(table, keys, &ReadOptions::default())
    }

    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        self.scan_with(table, range, None)
    }
}

/// Closing a writable store flushes every column family first (`docs/format/rocksdb-v1.md`,
/// "Closing"): RocksDB does not flush on close when the write-ahead log is on, and would
/// keep every byte written since the last flush in the log until the next open replays it.
/// A failed flush loses nothing (the log still holds the writes); it is not reported.
impl Drop for RocksStore {
    fn drop(&mut self) {
        if !self.read_only {
            let _ = self.flush_all();
        }
    }
}

/// A RocksDB snapshot of a [`RocksStore`].
struct RocksSnapshot<'a> {
    store: &'a RocksStore,
    snap: SnapshotWithThreadMode<'a, DB>,
}

impl RocksSnapshot<'_> {
    fn ro(&self) -> ReadOptions {
        let mut ro = ReadOptions::default();
        ro.set_snapshot(&self.snap);
        ro
    }
}

impl ReadView for RocksSnapshot<'_> {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        self.store.get_with(table, key, &self.ro())
    }

    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<Parts>> {
        Ok(self.store.get_parts_with(table, key, ranges, None, &self.ro())?.map(|(a, _)| a))
    }

    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        let found = self.store.get_parts_with(table, key, first, Some(then), &self.ro())?;
        Ok(found.map(|(a, b)| (a, b.unwrap_or_default())))
    }

    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        self.store.multi_get_with(table, keys, &self.ro())
    }

    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        self.store.scan_with(table, range, Some(&self.snap))
    }
}

impl Store for RocksStore {
    fn signature(&self) -> &str {
        &self.signature
    }

    fn tables(&self) -> Vec<String> {
        self.tables.iter().cloned().collect()
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly(self.path.clone()));
        }
        batch.validate(|t| self.tables.contains(t), MAX_VALUE_LEN)?;
        // Writes of this store are serialised, so that a batch's preconditions still hold when
        // its WriteBatch applies (RocksDB serialises the writes themselves anyway).
        let _serial = self
            .write_lock
            .lock()
            .map_err(|_| Error::Poisoned("a thread panicked while writing".into()))?;
        batch.check_preconditions(|t, k| Ok(self.get(t, k)?.map(|o| o.version)))?;
        let mut wb = WriteBatch::default();
        for op in batch.ops() {
            let cf = self.cf(op.table())?;
            match op {
                Op::Put { key, version, data, .. } => wb.put_cf(cf, key, encode(*version, data)),
                Op::Delete { key, .. } => wb.delete_cf(cf, key),
            }
        }
        let mut wo = WriteOptions::default();
        wo.set_sync(batch.is_synced());
        self.db.write_opt(wb, &wo).map_err(rocks_err)
    }

    fn snapshot(&self) -> Result<Box<dyn ReadView + '_>> {
        Ok(Box::new(RocksSnapshot { store: self, snap: self.db.snapshot() }))
    }

    /// Writes the memtables of every column family (the `default` one with the signature
    /// included) to SST files and waits: every write-ahead log before the current one is then
    /// obsolete, and RocksDB deletes it.
    fn flush(&self) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        self.flush_all()
    }

    fn sync(&self) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        self.db.flush_wal(true).map_err(rocks_err)
    }

    /// Memtables of every column family (active, immutable and pinned), the shared block
    /// cache's usage (index and filter blocks included: they are cached there), the row
    /// cache's and the table readers' own memory.
    fn cache_bytes(&self) -> Option<u64> {
        let mut total = 0u64;
        let mut shared_cache = None;
        for t in &self.tables {
            let cf = self.db.cf_handle(t)?;
            for property in ["rocksdb.size-all-mem-tables", "rocksdb.estimate-table-readers-mem"] {
                total += self.db.property_int_value_cf(cf, property).ok().flatten()?;
            }
            // Every table's factory has the one shared cache (the `default` family, not a
            // table, has RocksDB's own): ask one of them.
            if shared_cache.is_none() {
                shared_cache =
                    self.db.property_int_value_cf(cf, "rocksdb.block-cache-usage").ok().flatten();
            }
        }
        let rows = self.row_cache.as_ref().map_or(0, |c| c.get_usage() as u64);
        Some(total + shared_cache? + rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_a_typed_storage_full_error() {
        let text = "IO error: No space left on device: While appending to file: /w/db/000012.log";
        let e = rocks_err_text(rocksdb::ErrorKind::IOError, text.into());
        assert!(e.is_storage_full(), "{e:?}");
        assert!(e.to_string().contains("No space left on device"), "{e}");
        assert!(!e.to_string().contains("IO error: "), "{e}");
        // Also when the background error arrives under another kind.
        let e = rocks_err_text(rocksdb::ErrorKind::Unknown, "No space left on device".into());
        assert!(e.is_storage_full(), "{e:?}");
    }

    #[test]
    fn other_io_errors_are_not_storage_full() {
        let e = rocks_err_text(rocksdb::ErrorKind::IOError, "IO error: Input/output error".into());
        assert!(matches!(&e, Error::Io(_)) && !e.is_storage_full(), "{e:?}");
        let e = rocks_err_text(rocksdb::ErrorKind::Corruption, "Corruption: bad block".into());
        assert!(matches!(e, Error::Corrupt(_)));
    }
}
