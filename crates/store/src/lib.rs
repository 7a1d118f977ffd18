//! A versioned object store interface for voxel worlds: named tables of `key → (version, bytes)`.
//!
//! # Overview
//!
//! - [`Store`]: a store with named [tables], atomic [`Batch`]es across tables, [snapshots]
//!   and [`flush`](Store::flush) / [`sync`](Store::sync). Object-safe: `&dyn Store` and
//!   `Box<dyn Store>` work, so code above it (the chunk store) runs on any backend.
//! - [`ReadView`]: the read half shared by stores and snapshots: [`get`](ReadView::get),
//!   [`multi_get`](ReadView::multi_get), ordered [`scan`](ReadView::scan) over a
//!   [`KeyRange`] and [`scan_prefix`](ReadView::scan_prefix).
//! - [`Object`]: a value with its `i64` version (the application's version of the object, as in
//!   the SeaOfMemes object store: a new write replaces the old version, whatever its number).
//! - [`MemStore`]: the in-memory backend, and [`FaultyStore`]: a wrapper that fails the Nth
//!   write or sync, for testing the error paths of code built on a store.
//! - [`WritePipeline`]: a store whose writes return once queued and land in order from a
//!   thread of their own, at most `depth` in flight, reporting which have landed: a game's
//!   tick does not wait on a network round trip for its save.
//! - [`ReadAhead`]: reads run on a thread of their own, into a pipeline's cache: a tick asks
//!   for what it will need and finds it there a tick later, without a round trip.
//! - [`Precondition`]s ([`Batch::expect`]): compare-version conditions checked inside the same
//!   atomic write that applies the batch (a failed one is [`Error::PreconditionFailed`] and
//!   nothing applies): how a writer fences its saves on a lease object.
//! - [`StoreConfig`]: what every backend takes when it opens: the format signature, the
//!   tables, whether to create, and whether to open read-only.
//! - [`lock`]: one writer or many readers per store, for the file backends.
//! - `conformance` (feature `conformance`): the test suite every backend runs unmodified.
//!
//! Backends: `terrane-blockfile` (one crash-safe file, pure Rust), `terrane-rocksdb` and
//! `terrane-postgres`.
//!
//! [snapshots]: Store::snapshot
//!
//! # Example
//!
//! ```
//! use terrane_store::{Batch, MemStore, ReadView, Store, StoreConfig, tables};
//!
//! let store = MemStore::open(&StoreConfig::new("my-game world v1"))?;
//! let mut save = Batch::new();
//! save.put(tables::CHUNK_L0, b"chunk-key".to_vec(), 1, b"chunk bytes".to_vec())
//!     .put(tables::ENTITY, [7u8; 16].to_vec(), 1, b"entity".to_vec())
//!     .delete(tables::CHUNK_L1, b"old cluster".to_vec());
//! store.write(&save.synced())?;  // all or nothing, durable against power loss
//!
//! let snap = store.snapshot()?;
//! store.put(tables::CHUNK_L0, b"chunk-key", 2, b"newer")?;
//! assert_eq!(snap.get(tables::CHUNK_L0, b"chunk-key")?.unwrap().version, 1);
//! assert_eq!(store.get(tables::CHUNK_L0, b"chunk-key")?.unwrap().version, 2);
//!
//! let keys: Vec<Vec<u8>> = store
//!     .scan_prefix(tables::CHUNK_L0, b"chunk")?
//!     .map(|e| e.map(|(k, _)| k))
//!     .collect::<Result<_, _>>()?;
//! assert_eq!(keys, vec![b"chunk-key".to_vec()]);
//! # Ok::<(), terrane_store::Error>(())
//! ```
//!
//! # Durability
//!
//! Every backend gives the same guarantees, which the conformance and crash suites check:
//!
//! - [`Store::write`] is atomic: after any crash a batch is either wholly present or wholly
//!   absent, and an object reads as its old or its new version, never torn.
//! - When `write` returns, the batch is visible to every later read and **survives a crash
//!   of the process** (it has reached the operating system).
//! - A batch marked [`Batch::synced`], or any batch followed by a successful
//!   [`Store::sync`], also **survives power loss and OS crashes** (it has reached stable
//!   storage: `fsync`). Unsynced batches may be lost on power loss, newest first.
//! - [`Store::flush`] moves buffered state to its durable home (RocksDB: memtables to SST
//!   files; the block file: nothing to do) without adding guarantees beyond the above.
//!
//! [`MemStore`] keeps nothing: its `flush` and `sync` succeed and do nothing.
//!
//! # Features
//!
//! - `conformance`: exports the `conformance` module (pulls in `tempfile`).
//!
//! # What it does not guarantee
//!
//! - Versions are the application's: stores keep the number they are given and do not check
//!   that it increases.
//! - Scans and snapshots are consistent (they see one point in time), but a backend may
//!   bound how long a snapshot can live (see each backend's docs).
//! - Object sizes are bounded by the backend ([`Error::ValueTooLarge`]).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod batch;
mod error;
mod faulty;
pub mod file;
pub mod lock;
mod mem;
mod pipeline;
mod range;
mod read_ahead;

#[cfg(feature = "conformance")]
pub mod conformance;

pub use batch::{Batch, Op, Precondition};
pub use error::{Error, Result};
pub use faulty::{FaultPlan, FaultyStore};
pub use mem::MemStore;
pub use pipeline::{DEFAULT_CACHE_BYTES, WritePipeline};
pub use range::{KeyRange, prefix_successor};
pub use read_ahead::{JobError, ReadAhead};

/// The longest key a store accepts, in bytes.
pub const MAX_KEY_LEN: usize = 512;

/// The longest table name a store accepts, in bytes.
pub const MAX_TABLE_NAME_LEN: usize = 64;

/// The longest format signature a store accepts, in bytes.
pub const MAX_SIGNATURE_LEN: usize = 200;

/// The tables of the storage design (RocksDB column family names).
pub mod tables {
    /// Registries and intrinsic world properties, keyed by ASCII property name.
    pub const WORLD_META: &str = "worldMeta";
    /// Custom properties, keyed `namespace:name`.
    pub const WORLD_PROPERTIES: &str = "worldProperties";
    /// Hot chunks, one chunk per key (chunk format v1).
    pub const CHUNK_L0: &str = "chunkl0";
    /// Warm clusters of 4³ chunks.
    pub const CHUNK_L1: &str = "chunkl1";
    /// Cold clusters of 16³ chunks.
    pub const CHUNK_L2: &str = "chunkl2";
    /// Entities, keyed by 16-byte UUID.
    pub const ENTITY: &str = "entity";
    /// Opacity maps of 64×64 columns.
    pub const OPACITY_MAP: &str = "opacityMap";
    /// Every table of the design, in this order.
    pub const ALL: [&str; 7] =
        [WORLD_META, WORLD_PROPERTIES, CHUNK_L0, CHUNK_L1, CHUNK_L2, ENTITY, OPACITY_MAP];
}

/// A stored value: the application's version number and the bytes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Object {
    /// The version given when the object was written.
    pub version: i64,
    /// The object's bytes.
    pub data: Vec<u8>,
}

impl Object {
    /// An object from its version and bytes.
    pub fn new(version: i64, data: impl Into<Vec<u8>>) -> Self {
        Object { version, data: data.into() }
    }
}

/// Parts of a stored value, read without the rest of it where the backend can (see
/// [`ReadView::get_parts`]).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Parts {
    /// The object's version.
    pub version: i64,
    /// The length of the whole value.
    pub len: u64,
    /// The bytes of each range asked for, in order, each cut to the value's length (empty when
    /// it starts at or past the end).
    pub data: Vec<Vec<u8>>,
}

/// Cuts `ranges` of `value` as [`ReadView::get_parts`] returns them.
pub fn cut_parts(version: i64, value: &[u8], ranges: &[std::ops::Range<u64>]) -> Parts {
    let len = value.len() as u64;
    let data = ranges
        .iter()
        .map(|r| {
            let r = cut_range(r, len);
            value[r.start as usize..r.end as usize].to_vec()
        })
        .collect();
    Parts { version, len, data }
}

/// `range` cut to a value of `len` bytes, as [`ReadView::get_parts`] cuts it (empty when it
/// starts at or past the end, or is reversed).
pub fn cut_range(range: &std::ops::Range<u64>, len: u64) -> std::ops::Range<u64> {
    let end = range.end.min(len);
    range.start.min(end)..end
}

/// The second step of [`ReadView::get_parts_then`]: the ranges to read, from the first
/// step's parts.
pub type PartsThen<'a> = dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>> + 'a;

/// Cuts the two steps of [`ReadView::get_parts_then`] from a whole value.
pub fn cut_parts_then(
    version: i64,
    value: &[u8],
    first: &[std::ops::Range<u64>],
    then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
) -> (Parts, Parts) {
    let a = cut_parts(version, value, first);
    let b = cut_parts(version, value, &then(&a));
    (a, b)
}

/// One item of a scan: the key and its object.
pub type Entry = (Vec<u8>, Object);

/// An ordered scan: entries in ascending byte order of their keys.
///
/// Errors (I/O, corruption) are reported per item; iteration may continue after one.
pub type Scan<'a> = Box<dyn Iterator<Item = Result<Entry>> + 'a>;

/// Whether [`StoreConfig`] creates the store, opens an existing one, or either.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Default)]
pub enum OpenMode {
    /// Open an existing store; [`Error::NotFound`] when there is none.
    Open,
    /// Create a new store; [`Error::AlreadyExists`] when there is one.
    Create,
    /// Open the store, creating it when missing (the default).
    #[default]
    OpenOrCreate,
}

/// What every backend is given when it opens a store.
///
/// Defaults: the tables of the design ([`tables::ALL`]) and [`OpenMode::OpenOrCreate`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoreConfig {
    /// The format signature: written at creation, checked on every open (the application
    /// names its data format here, e.g. `"my-game world v3"`). Printable ASCII, at most
    /// [`MAX_SIGNATURE_LEN`] bytes.
    pub signature: String,
    /// The tables. Opening an existing store with extra tables adds them; tables present in
    /// the store but not listed stay stored and are reported by [`Store::tables`].
    pub tables: Vec<String>,
    /// Create, open or either.
    pub mode: OpenMode,
    /// Open for reading only (default `false`): the store must exist, nothing is written to
    /// it (not even recovery), writes fail with [`Error::ReadOnly`], and file backends take a
    /// shared lock instead of the exclusive one, so readers run beside each other but never
    /// beside a writer (see [`lock`]).
    pub read_only: bool,
}

impl StoreConfig {
    /// A configuration with the given signature and the defaults.
    pub fn new(signature: impl Into<String>) -> Self {
        StoreConfig {
            signature: signature.into(),
            tables: tables::ALL.iter().map(|t| t.to_string()).collect(),
            mode: OpenMode::OpenOrCreate,
            read_only: false,
        }
    }

    /// Adds a table to the list (no-op when already listed).
    pub fn table(mut self, name: impl Into<String>) -> Self {
        let name = name.into();
        if !self.tables.contains(&name) {
            self.tables.push(name);
        }
        self
    }

    /// Replaces the table list.
    pub fn tables<I, T>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = T>,
        T: Into<String>,
    {
        self.tables = names.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the open mode.
    pub fn mode(mut self, mode: OpenMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets [`read_only`](Self::read_only).
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Checks the signature and the table names.
    pub fn validate(&self) -> Result<()> {
        check_signature(&self.signature)?;
        for t in &self.tables {
            check_table_name(t)?;
        }
        Ok(())
    }
}

/// Checks a format signature: 1 to [`MAX_SIGNATURE_LEN`] bytes of printable ASCII.
pub fn check_signature(sig: &str) -> Result<()> {
    if sig.is_empty()
        || sig.len() > MAX_SIGNATURE_LEN
        || !sig.bytes().all(|b| (0x20..0x7f).contains(&b))
    {
        return Err(Error::InvalidSignature(sig.to_string()));
    }
    Ok(())
}

/// Checks a table name: 1 to [`MAX_TABLE_NAME_LEN`] bytes of ASCII letters, digits, `_`,
/// `-`, `.` or `:`.
pub fn check_table_name(name: &str) -> Result<()> {
    if name.is_empty()
        || name.len() > MAX_TABLE_NAME_LEN
        || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.:".contains(&b))
    {
        return Err(Error::InvalidTableName(name.to_string()));
    }
    Ok(())
}

/// Checks a key's length.
#[inline]
pub fn check_key(key: &[u8]) -> Result<()> {
    if key.len() > MAX_KEY_LEN {
        return Err(Error::KeyTooLong { len: key.len() });
    }
    Ok(())
}

/// The read operations, shared by stores and their snapshots.
pub trait ReadView {
    /// The object stored under `key` in `table`, if any.
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>>;

    /// The objects under `keys` (in the same order; `None` where absent).
    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        keys.iter().map(|k| self.get(table, k)).collect()
    }

    /// Byte ranges of the object under `key` in `table`, all from the same version of it,
    /// with its version and whole length; `None` when absent. Each range is cut to the value's
    /// length. Backends read and copy only what the ranges cover where they can (the block
    /// file reads only the blocks they touch, RocksDB slices a pinned value, PostgreSQL sends
    /// only the ranges); the default reads the whole object. A reader that needs one chunk of
    /// a cluster reads its offsets, then its bytes.
    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<Parts>> {
        Ok(self.get(table, key)?.map(|o| cut_parts(o.version, &o.data, ranges)))
    }

    /// Two steps of [`get_parts`](Self::get_parts) on one version of the object: the ranges
    /// `first`, then the ranges `then` computes from them (a cluster's offsets, then the chunk
    /// they point at). Both steps see the same bytes even when a write comes between them.
    /// The default reads the whole object once.
    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        Ok(self.get(table, key)?.map(|o| cut_parts_then(o.version, &o.data, first, then)))
    }

    /// The entries of `table` whose keys fall in `range`, in ascending key order. The scan
    /// sees one point in time: writes made while it runs are not visible to it.
    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>>;

    /// The entries of `table` whose keys start with `prefix`, in ascending key order.
    fn scan_prefix(&self, table: &str, prefix: &[u8]) -> Result<Scan<'_>> {
        self.scan(table, KeyRange::prefix(prefix))
    }

    /// Whether `key` exists in `table`.
    fn contains(&self, table: &str, key: &[u8]) -> Result<bool> {
        Ok(self.get(table, key)?.is_some())
    }
}

/// A versioned object store: named tables, atomic batches, snapshots (see the
/// [crate docs](crate#durability) for durability).
pub trait Store: ReadView + Send + Sync {
    /// The format signature the store was created with.
    fn signature(&self) -> &str;

    /// The names of the store's tables, sorted.
    fn tables(&self) -> Vec<String>;

    /// Applies `batch` atomically: every operation or none. Validates the whole batch first
    /// (table names, key lengths, value sizes); an invalid batch changes nothing. Within a
    /// batch, a later operation on the same key wins.
    fn write(&self, batch: &Batch) -> Result<()>;

    /// A consistent read-only view of the store as it is now.
    fn snapshot(&self) -> Result<Box<dyn ReadView + '_>>;

    /// Moves buffered state to its durable home (see [durability](crate#durability)).
    fn flush(&self) -> Result<()>;

    /// Makes every write acknowledged so far survive power loss.
    fn sync(&self) -> Result<()>;

    /// Bytes of memory the backend holds in its own bounded caches and write buffers
    /// (RocksDB: memtables, block cache, table readers), so that a long run can tell them
    /// filling towards their caps from a leak. `None` (the default) for a backend without
    /// such caches or that cannot say.
    fn cache_bytes(&self) -> Option<u64> {
        None
    }

    /// Writes one object (a batch of one put).
    fn put(&self, table: &str, key: &[u8], version: i64, data: &[u8]) -> Result<()> {
        let mut b = Batch::new();
        b.put(table, key.to_vec(), version, data.to_vec());
        self.write(&b)
    }

    /// Deletes one object (no error when absent).
    fn delete(&self, table: &str, key: &[u8]) -> Result<()> {
        let mut b = Batch::new();
        b.delete(table, key.to_vec());
        self.write(&b)
    }
}

impl<S: ReadView + ?Sized> ReadView for &S {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        (**self).get(table, key)
    }
    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        (**self).multi_get(table, keys)
    }
    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<Parts>> {
        (**self).get_parts(table, key, ranges)
    }
    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        (**self).get_parts_then(table, key, first, then)
    }
    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        (**self).scan(table, range)
    }
}

impl<S: ReadView + ?Sized> ReadView for Box<S> {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        (**self).get(table, key)
    }
    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        (**self).multi_get(table, keys)
    }
    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<Parts>> {
        (**self).get_parts(table, key, ranges)
    }
    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        (**self).get_parts_then(table, key, first, then)
    }
    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        (**self).scan(table, range)
    }
}

impl<S: Store + ?Sized> Store for Box<S> {
    fn signature(&self) -> &str {
        (**self).signature()
    }
    fn tables(&self) -> Vec<String> {
        (**self).tables()
    }
    fn write(&self, batch: &Batch) -> Result<()> {
        (**self).write(batch)
    }
    fn snapshot(&self) -> Result<Box<dyn ReadView + '_>> {
        (**self).snapshot()
    }
    fn flush(&self) -> Result<()> {
        (**self).flush()
    }
    fn sync(&self) -> Result<()> {
        (**self).sync()
    }
    fn cache_bytes(&self) -> Option<u64> {
        (**self).cache_bytes()
    }
}

impl<S: Store + ?Sized> Store for std::sync::Arc<S> {
    fn signature(&self) -> &str {
        (**self).signature()
    }
    fn tables(&self) -> Vec<String> {
        (**self).tables()
    }
    fn write(&self, batch: &Batch) -> Result<()> {
        (**self).write(batch)
    }
    fn snapshot(&self) -> Result<Box<dyn ReadView + '_>> {
        (**self).snapshot()
    }
    fn flush(&self) -> Result<()> {
        (**self).flush()
    }
    fn sync(&self) -> Result<()> {
        (**self).sync()
    }
    fn cache_bytes(&self) -> Option<u64> {
        (**self).cache_bytes()
    }
}

impl<S: ReadView + ?Sized> ReadView for std::sync::Arc<S> {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        (**self).get(table, key)
    }
    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        (**self).multi_get(table, keys)
    }
    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<Parts>> {
        (**self).get_parts(table, key, ranges)
    }
    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        (**self).get_parts_then(table, key, first, then)
    }
    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        (**self).scan(table, range)
    }
}
