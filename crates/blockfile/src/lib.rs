//! A crash-safe single-file object store for voxel worlds, after the SeaOfMemes block file.
//!
//! # Overview
//!
//! [`BlockFile`] implements [`terrane_store::Store`] in one file:
//!
//! - the first line of the file is the format signature (`terrane-blockfile/2 <yours>`), which
//!   [`read_signature`] reads without understanding anything else;
//! - the file is a sequence of 4 KiB blocks; every block ends with a trailer naming the object
//!   it belongs to (table, key, version, transaction, position in the chain, next block) and a
//!   CRC-32C of the block;
//! - the index object (every key's version, length and blocks, and the free list) starts in
//!   block 0 and is rewritten in place, reusing its chain;
//! - a [`Batch`] is written in the order *new blocks (with a commit record) → index → one
//!   flush → free the old blocks*; when the index is torn or damaged, or names a batch whose
//!   blocks a power loss kept from the disk, [`BlockFile::open`] rebuilds the state by
//!   scanning every block (see [`Recovery`]);
//! - objects read recently are kept in memory with the transaction that wrote them
//!   ([`BlockFileOptions::cache_bytes`], 32 MiB by default) and serve a read only while the
//!   index names that transaction;
//! - freed blocks are reused (lowest first) and free blocks at the end of the file are cut
//!   off, so a file that is overwritten again and again stays bounded. Blocks freed by an
//!   unsynced batch are reused only after the next `fdatasync` (a synced batch,
//!   [`Store::sync`], or one a write makes itself when more than a quarter of the file
//!   waits), so that an older durable index never points at overwritten blocks.
//!
//! The format and the argument for each crash point: `docs/format/blockfile.md`.
//!
//! # Opening: the lock, read-only, damage
//!
//! - **One writer.** [`BlockFile::open`] locks the file (`flock`, through
//!   [`terrane_store::lock`]) before reading it, for the life of the store: a writer
//!   exclusively, a read-only open ([`StoreConfig::read_only`](terrane_store::StoreConfig::read_only))
//!   shared. A second writer, or a reader beside a writer, in this process or another, gets
//!   [`Error::Locked`] naming the holder; the kernel drops the lock when a process dies.
//! - **Read-only opens write nothing**: the file is opened for reading only (read-only media
//!   and files work), a recovery scan runs in memory only, a partial last block is ignored,
//!   writes fail with [`Error::ReadOnly`] ([`Store::flush`] and [`Store::sync`] do nothing).
//! - **Damage is never silent.** A crash never loses a committed batch and opens cleanly.
//!   When the file cannot account for everything its own records (the index, the last commit
//!   record) say it holds, a default open fails with [`Error::Damaged`] naming what is
//!   missing and writes nothing; [`BlockFileOptions::repair`] opens anyway, keeps every intact
//!   object and lists each lost one in [`Recovery`] and [`BlockFile::verify`].
//!
//! # Example
//!
//! ```
//! use terrane_blockfile::BlockFile;
//! use terrane_store::{Batch, ReadView, Store, StoreConfig, tables};
//!
//! let dir = tempfile::tempdir()?;
//! let path = dir.path().join("world.tbf");
//! let config = StoreConfig::new("my-game world v1");
//! {
//!     let db = BlockFile::open(&path, &config)?;
//!     let mut save = Batch::new();
//!     save.put(tables::CHUNK_L0, vec![1; 32], 1, vec![0xab; 10_000])
//!         .put(tables::ENTITY, vec![2; 16], 1, b"zombie".to_vec());
//!     db.write(&save.synced())?;
//! }
//! assert_eq!(terrane_blockfile::read_signature(&path)?, "my-game world v1");
//! let db = BlockFile::open(&path, &config)?;
//! assert_eq!(db.get(tables::CHUNK_L0, &[1; 32])?.unwrap().data.len(), 10_000);
//! assert!(!db.recovery().scanned);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Durability
//!
//! As documented by [`terrane_store`](terrane_store#durability): a returned `write` survives a
//! process crash (every write goes straight to the OS); a synced batch (or one followed by
//! [`Store::sync`]) survives power loss: a synced batch calls `fdatasync` once, after its new
//! blocks and its index ([`Stats::syncs`] counts them). A power loss during that flush opens
//! to the state before the batch or after it, never a mix ([`Recovery::rolled_back`]).
//! [`Store::flush`] does nothing (there is no user-space buffer).
//!
//! # Features
//!
//! None.
//!
//! # What it does not guarantee
//!
//! - Batches that were not synced may be lost on power loss, and the file may then need a
//!   recovery scan; their objects may then read as [`Error::Corrupt`] or be reported in
//!   [`Recovery::damaged`] (a default open then refuses with [`Error::Damaged`]: open in repair
//!   mode to keep the rest), or drop (and report) a key whose newer unsynced version was
//!   partly written. When the index still names its last durable transaction, the batches
//!   kept after it are a whole prefix of those written (each commit record names the batch it
//!   follows); when no index part can be read, a scan may keep a later unsynced batch while
//!   losing an earlier one. Checksums
//!   still keep torn objects from being returned, and the blocks of synced batches are never
//!   erased or reused while the durable index names them.
//! - Data damaged on disk is reported ([`Error::Corrupt`] on read, [`Error::Damaged`] at
//!   open), never repaired from elsewhere: repair mode only drops what was lost. Keep backups.
//!   One exception, as in every database that flushes a commit once: damage to the blocks of
//!   the last batches written before a crash (those after the last completed flush the
//!   index records) cannot be told from a flush the crash cut short, and rolls them back
//!   ([`Recovery::rolled_back`]). A clean close records the flush and closes this window.
//! - The whole index is rewritten by every batch and held in memory: like the original, this
//!   is for stores of up to some hundred thousand objects, not billions.
//! - The lock is advisory (`flock`): it keeps out every terrane opener, not a program that
//!   writes the file without asking. On network file systems `flock` may be local only.
//! - Damage under an intact index (a flipped byte in an object) is found when the object is
//!   read ([`Error::Corrupt`]) or by [`BlockFile::verify`], not at open: opening does not
//!   read every block.
//! - Unix only (positioned reads and writes through `std::os::unix::fs::FileExt`).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod blocks;
mod cache;
mod commit;
mod faults;
mod format;
mod index;
mod open;
mod read;
mod recover;
mod report;
mod signature;
mod store_impl;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

#[cfg(doc)]
use terrane_store::{Batch, Store};
pub use terrane_store::{Error, Result};

pub use open::BlockFileOptions;
#[doc(hidden)]
pub use read::{read_error_pending, simulate_read_error_at};
pub use report::Recovery;
pub use signature::read_signature;

use blocks::Blocks;
use commit::encode_index;
use faults::erase_trailer;
use format::{BLOCK, MAX_VALUE, from_runs};
pub(crate) use read::read_blocks;
use read::{read_chain, read_entry};
use signature::{parse_signature_line, signature_line};

/// The block size of the format, in bytes.
pub const BLOCK_SIZE: usize = BLOCK;

/// The largest value a block file stores (1 GiB).
pub const MAX_VALUE_LEN: usize = MAX_VALUE;

/// Where an object lives: its version, transaction, length and blocks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub version: i64,
    pub txn: u64,
    pub len: u64,
    pub runs: Box<[(u32, u32)]>,
}

impl Entry {
    fn blocks(&self) -> impl Iterator<Item = u32> + '_ {
        from_runs(&self.runs)
    }
    fn block_count(&self) -> u32 {
        self.runs.iter().map(|r| r.1).sum()
    }
}

type Table = Arc<BTreeMap<Vec<u8>, Entry>>;

/// The in-memory state, guarded by the lock.
#[derive(Debug, Default)]
pub(crate) struct State {
    pub tables: BTreeMap<String, Table>,
    /// The last committed transaction.
    pub txn: u64,
    /// The next transaction or index write number (greater than every number on disk).
    pub next_txn: u64,
    pub file_blocks: u32,
    pub free: BTreeSet<u32>,
    pub index_chain: Vec<u32>,
    pub commit_chain: Vec<u32>,
    /// Chains freed but not yet erased and reusable (first block first), with the transaction
    /// whose index dropped them: held until that index is durable (`durable_txn`) and no
    /// snapshot or scan is alive.
    deferred: Vec<(u64, Vec<u32>)>,
    /// The last transaction whose index is durable (an `fdatasync` followed its write).
    pub durable_txn: u64,
    /// The durable transaction that the index on disk names (see `durable_txn` in
    /// `docs/format/blockfile.md`): batches after it are checked at open.
    index_durable: u64,
    /// Every chain dropped by a transaction `<=` this one has been erased (the erase may not
    /// be durable yet).
    erased_txn: u64,
    /// Keys deleted while the erasure of their old blocks is not yet durable: (table, key,
    /// txn).
    graveyard: Vec<(String, Vec<u8>, u64)>,
    poisoned: Option<String>,
}

impl State {
    fn objects(&self) -> u64 {
        self.tables.values().map(|t| t.len() as u64).sum()
    }
}

/// Counts of a block file's blocks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Blocks in the file.
    pub file_blocks: u32,
    /// Free blocks (reusable).
    pub free_blocks: u32,
    /// Blocks freed but held for live snapshots or scans.
    pub deferred_blocks: u32,
    /// Blocks freed by batches whose index is not durable yet: reusable after the next
    /// `fdatasync` (a synced batch, [`Store::sync`], or one the store makes itself when they
    /// exceed a quarter of the file).
    pub pending_blocks: u32,
    /// Blocks of the index chain.
    pub index_blocks: u32,
    /// Objects in all tables.
    pub objects: u64,
    /// The last committed transaction.
    pub txn: u64,
    /// `fdatasync` calls made by this handle since it was opened (its open's own included):
    /// one per synced batch, [`Store::sync`] or empty synced batch, plus the rare one a write
    /// makes to reuse freed blocks.
    pub syncs: u64,
}

/// A [`Store`] in one file of checksummed 4 KiB blocks. See the [crate docs](crate).
#[derive(Debug)]
pub struct BlockFile {
    path: PathBuf,
    /// Locked (exclusively, or shared when read-only) for the life of the store.
    file: File,
    signature: String,
    /// Opened read-only: nothing is ever written.
    read_only: bool,
    state: RwLock<State>,
    /// Cloned by every snapshot and scan: while shared, freed blocks are deferred.
    pin: Arc<()>,
    recovery: Recovery,
    /// Testing: I/O operations left before a simulated crash (negative: off).
    crash_budget: std::sync::atomic::AtomicI64,
    /// Testing: the fault at the end of the budget is one I/O error, not a crash.
    transient_fault: std::sync::atomic::AtomicBool,
    /// `fdatasync` calls made through this handle (see [`Stats::syncs`]).
    syncs: std::sync::atomic::AtomicU64,
    /// Objects read recently ([`BlockFileOptions::cache_bytes`]).
    cache: cache::ReadCache,
}

impl BlockFile {
    /// What opening found: whether the index was rebuilt by a scan, what was dropped.
    pub fn recovery(&self) -> &Recovery {
        &self.recovery
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Counts of the file's blocks.
    pub fn stats(&self) -> Result<Stats> {
        let st = self.read_state()?;
        Ok(Stats {
            file_blocks: st.file_blocks,
            free_blocks: st.free.len() as u32,
            deferred_blocks: st
                .deferred
                .iter()
                .filter(|(t, _)| *t <= st.durable_txn)
                .map(|(_, c)| c.len() as u32)
                .sum(),
            pending_blocks: st.pending_blocks() as u32,
            index_blocks: st.index_chain.len() as u32,
            objects: st.objects(),
            txn: st.txn,
            syncs: self.syncs.load(std::sync::atomic::Ordering::Relaxed),
        })
    }

    /// Reads every object and checks every checksum: the keys that fail, with the error.
    ///
    /// Also reports what this handle's open lost (an open in
    /// [`repair`](BlockFileOptions::repair) mode of a damaged file, see [`recovery`](Self::recovery)):
    /// first each lost object by table and key, then, when objects were lost that cannot be
    /// named (or the open could not verify the last batch), one entry with an empty table
    /// name and key whose message says how many and why. So a verify after a lossy repair
    /// fails; a later open of the repaired file is clean, and its verify checks what is there.
    pub fn verify(&self) -> Result<Vec<(String, Vec<u8>, String)>> {
        let mut bad = Vec::new();
        let r = &self.recovery;
        if !r.is_clean() {
            for (t, k) in &r.damaged {
                bad.push((
                    t.clone(),
                    k.clone(),
                    "lost: damaged or cut off, dropped when the store was opened in repair mode"
                        .to_string(),
                ));
            }
            if r.unnamed_losses() > 0 || r.damaged.is_empty() {
                bad.push((
                    String::new(),
                    Vec::new(),
                    format!("opened in repair mode: {}", r.describe()),
                ));
            }
        }
        let st = self.read_state()?;
        for (name, t) in &st.tables {
            for (k, e) in t.iter() {
                if let Err(err) = read_entry(&self.file, name, k, e) {
                    bad.push((name.clone(), k.clone(), err.to_string()));
                }
            }
        }
        Ok(bad)
    }

    fn read_state(&self) -> Result<RwLockReadGuard<'_, State>> {
        self.state.read().map_err(|_| Error::Poisoned("a thread panicked while writing".into()))
    }

    fn write_state(&self) -> Result<RwLockWriteGuard<'_, State>> {
        self.state.write().map_err(|_| Error::Poisoned("a thread panicked while writing".into()))
    }

    fn pinned(&self) -> bool {
        Arc::strong_count(&self.pin) > 1
    }
}

impl Drop for BlockFile {
    /// When every batch is durable but the index on disk still names an older durable
    /// transaction (the last batch was synced in the same flush as its index), rewrites the
    /// index and syncs it, so that the next open checks no batch. Errors are ignored: the
    /// file is correct either way, this only shortens the next open.
    fn drop(&mut self) {
        if self.read_only {
            return;
        }
        let Ok(mut st) = self.state.write() else { return };
        if st.poisoned.is_none()
            && !self.pinned()
            && st.durable_txn == st.txn
            && st.index_durable < st.txn
            && st.next_txn.checked_add(1).is_some()
            && self.write_index(&mut st).is_ok()
            && self.io_sync().is_ok()
        {
            st.synced();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{FIXED_AT, KIND_INDEX, KIND_OBJECT, build_block};
    use std::os::unix::fs::FileExt;
    use terrane_store::{Batch, ReadView, Store, StoreConfig};

    fn config() -> StoreConfig {
        StoreConfig::new("terrane unit test")
    }

    /// A store with one object, closed.
    fn small_store(path: &Path) {
        let db = BlockFile::open(path, &config()).unwrap();
        db.put(terrane_store::tables::ENTITY, b"k", 1, b"v").unwrap();
    }

    /// Overwrites the index chain from block 0 with one written under `write_no`, whose
    /// payload says `next` is the next number (a valid checksum either way).
    fn rewrite_index(path: &Path, write_no: u64, next: u64) {
        let db = BlockFile::open(path, &config()).unwrap();
        let st = db.write_state().unwrap();
        let mut payload = signature_line(&db.signature);
        let mut body = encode_index(&st, 0);
        body[8..16].copy_from_slice(&next.to_le_bytes());
        payload.extend_from_slice(&body);
        let mut blocks = Blocks::default();
        blocks.chain(KIND_INDEX, &[], &[], &payload, 0, write_no, &st.index_chain);
        blocks.write(&db.file, None).unwrap();
    }

    fn assert_corrupt(r: Result<BlockFile>) {
        match r {
            Err(Error::Corrupt(why)) => assert!(why.contains("u64::MAX"), "{why}"),
            other => panic!("expected Corrupt, got {other:?}"),
        }
    }

    /// Goal of the format: a synced batch costs one `fdatasync`, an unsynced one none (while
    /// few freed blocks wait), whatever its size.
    #[test]
    fn a_synced_batch_is_one_fdatasync() {
        let dir = tempfile::tempdir().unwrap();
        let db = BlockFile::open(dir.path().join("s.tbf"), &config()).unwrap();
        let syncs = || db.stats().unwrap().syncs;
        for round in 0..20u8 {
            let before = syncs();
            let mut b = Batch::new();
            for k in 0..=round {
                b.put(terrane_store::tables::CHUNK_L0, vec![k], 1, vec![round; 9000]);
            }
            b.delete(terrane_store::tables::CHUNK_L0, vec![round / 2]);
            db.write(&b.synced()).unwrap();
            assert_eq!(syncs() - before, 1, "synced batch {round}");
            let before = syncs();
            db.put(terrane_store::tables::ENTITY, &[round], 1, b"unsynced").unwrap();
            assert_eq!(syncs() - before, 0, "unsynced batch {round}");
        }
        let before = syncs();
        db.sync().unwrap();
        assert_eq!(syncs() - before, 1);
    }

    /// The read cache serves only the version the index names: overwrites, deletes and
    /// snapshots read what they would read without it; `verify` never uses it.
    #[test]
    fn the_read_cache_never_serves_another_version() {
        use terrane_store::tables::CHUNK_L0 as T;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.tbf");
        let db = BlockFile::open(&path, &config()).unwrap();
        db.put(T, b"k", 1, &[1; 9000]).unwrap();
        assert_eq!(db.get(T, b"k").unwrap().unwrap().data, vec![1; 9000]); // now cached
        let snap = db.snapshot().unwrap();
        db.put(T, b"k", 1, &[2; 9000]).unwrap(); // same version, other bytes
        assert_eq!(db.get(T, b"k").unwrap().unwrap().data, vec![2; 9000]);
        assert_eq!(snap.get(T, b"k").unwrap().unwrap().data, vec![1; 9000]);
        drop(snap);
        db.delete(T, b"k").unwrap();
        assert_eq!(db.get(T, b"k").unwrap(), None);
        db.put(T, b"k", 1, &[1; 9000]).unwrap();
        db.sync().unwrap(); // durable: the damage below is not taken for a torn flush
        assert_eq!(db.multi_get(T, &[b"k"]).unwrap()[0].as_ref().unwrap().data, vec![1; 9000]);
        // Damage after a read: the cached copy still answers, `verify` reads the file.
        let e = db.read_state().unwrap().tables[T][&b"k"[..]].clone();
        let at = e.runs[0].0 as u64 * BLOCK as u64 + 100;
        db.file.write_all_at(&[0xee], at).unwrap();
        assert_eq!(db.get(T, b"k").unwrap().unwrap().data, vec![1; 9000]);
        assert_eq!(db.verify().unwrap().len(), 1);
        drop(db);
        let cold = BlockFile::open_with(&path, &config(), &BlockFileOptions::new().cache_bytes(0))
            .unwrap();
        assert!(matches!(cold.get(T, b"k"), Err(Error::Corrupt(_))));
    }

    #[test]
    fn transaction_numbers_near_u64_max_are_corrupt_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        // A valid index whose next number is u64::MAX: the open's index write would need
        // the number after it.
        let path = dir.path().join("a.tbf");
        small_store(&path);
        rewrite_index(&path, u64::MAX - 1, u64::MAX);
        assert_corrupt(BlockFile::open(&path, &config()));
        // An index written under u64::MAX (its `next` cannot be right): the scan then finds
        // u64::MAX on a block with a valid checksum.
        let path = dir.path().join("b.tbf");
        small_store(&path);
        rewrite_index(&path, u64::MAX, 0);
        assert_corrupt(BlockFile::open(&path, &config()));
        // An object block (appended, valid checksum) with txn u64::MAX, found by a scan.
        let path = dir.path().join("c.tbf");
        small_store(&path);
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[FIXED_AT - 1] ^= 1; // break the index: open scans
        let mut block = vec![0u8; BLOCK];
        build_block(&mut block, KIND_OBJECT, b"entity", b"x", b"", 1, u64::MAX, 0, 1, -1);
        bytes.extend_from_slice(&block);
        std::fs::write(&path, &bytes).unwrap();
        assert_corrupt(BlockFile::open(&path, &config()));
        // Just below the limit still opens (and writes until the numbers run out).
        let path = dir.path().join("d.tbf");
        small_store(&path);
        rewrite_index(&path, u64::MAX - 3, u64::MAX - 2);
        let db = BlockFile::open(&path, &config()).unwrap();
        assert_eq!(db.get(terrane_store::tables::ENTITY, b"k").unwrap().unwrap().data, b"v");
        assert!(matches!(
            db.put(terrane_store::tables::ENTITY, b"k", 2, b"w"),
            Err(Error::Corrupt(_))
        ));
    }
}
