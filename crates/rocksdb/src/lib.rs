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
//! - [`RocksStore::checkpoint`] makes an online, consistent copy through a checkpoint (hard links
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
//! db.checkpoint(dir.path().join("copy"))?;
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
//! (`4 × write_buffer_bytes`) make RocksDB flush the families that hold the oldest one, and
//! all memtables together past [`RocksOptions::memtables_bytes`] (64 MiB) the largest one.
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
//!   process that has it open ([`RocksStore::checkpoint`]).
//! - Values over 1 GiB are refused ([`Error::ValueTooLarge`]).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod backup;
mod create;
mod error;
mod open;
mod options;
mod read;
mod write;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::error::rocks_err;
pub use options::{Compression, RocksOptions};
use rocksdb::{Cache, ColumnFamily, DB, checkpoint::Checkpoint};
#[cfg(doc)]
use terrane_store::{Batch, Store, StoreConfig};
pub use terrane_store::{Error, Result};

/// The largest value stored (1 GiB).
pub const MAX_VALUE_LEN: usize = 1 << 30;

/// The key of the format signature in the `default` column family.
pub const SIGNATURE_KEY: &[u8] = b"terrane:signature";

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
    /// [`RocksOptions::scans_fill_cache`].
    scans_fill_cache: bool,
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

impl RocksStore {
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
    pub fn checkpoint(&self, dir: impl AsRef<Path>) -> Result<()> {
        if self.read_only {
            return backup::copy_files(&self.path, dir.as_ref());
        }
        let cp = Checkpoint::new(&self.db).map_err(rocks_err)?;
        cp.create_checkpoint(dir.as_ref()).map_err(rocks_err)
    }

    /// The former name of [`checkpoint`](Self::checkpoint) (a backup in terrane is a
    /// `terrane-backup` repository's).
    #[deprecated(since = "0.1.1", note = "renamed `checkpoint`")]
    pub fn backup(&self, dir: impl AsRef<Path>) -> Result<()> {
        self.checkpoint(dir)
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
