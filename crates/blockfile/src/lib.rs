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
mod format;
mod index;
mod open;
mod read;
mod recover;
mod report;

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use terrane_store::{Batch, KeyRange, Object, Op, Parts, ReadView, Scan, Store, check_key};
pub use terrane_store::{Error, Result};

pub use open::BlockFileOptions;
pub use report::Recovery;

use blocks::Blocks;
use format::{
    BLOCK, FIXED, FIXED_AT, KIND_COMMIT, KIND_INDEX, KIND_OBJECT, MAX_VALUE, SIGNATURE_PREFIX,
    SIGNATURE_PREFIX_V1, Writer, blocks_for, capacity, from_runs, to_runs,
};
pub(crate) use read::read_blocks;
use read::{read_chain, read_entry, read_parts, read_parts_then};

/// The block size of the format, in bytes.
pub const BLOCK_SIZE: usize = BLOCK;

/// A write calls `fdatasync` itself (to make blocks freed by unsynced batches reusable) when
/// more than this many blocks, and more than a quarter of the file, wait for one.
const PENDING_SYNC_MIN: usize = 64;

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
    /// `fdatasync` calls made through this handle (see [`Stats::syncs`]).
    syncs: std::sync::atomic::AtomicU64,
    /// Objects read recently ([`BlockFileOptions::cache_bytes`]).
    cache: cache::ReadCache,
}

/// Reads the format signature of a block file: the application's part of its first line.
/// Reads at most the first 4 KiB and nothing else (the SeaOfMemes `getFormat`).
pub fn read_signature(path: impl AsRef<Path>) -> Result<String> {
    let path = path.as_ref();
    let mut f = File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => Error::NotFound(path.into()),
        _ => Error::Io(e),
    })?;
    let mut head = Vec::with_capacity(BLOCK);
    Read::by_ref(&mut f).take(BLOCK as u64).read_to_end(&mut head)?;
    parse_signature_line(&head).map(|(s, ..)| s)
}

/// Parses `terrane-blockfile/<version> <sig>\n` at the start of `head`: the signature, the
/// line's length and the format version (1 or 2).
fn parse_signature_line(head: &[u8]) -> Result<(String, usize, u8)> {
    let not_ours =
        |detail: &str| Error::NotAStore { backend: "terrane-blockfile", detail: detail.into() };
    let limit = head.len().min(SIGNATURE_PREFIX.len() + terrane_store::MAX_SIGNATURE_LEN + 1);
    let nl = head[..limit]
        .iter()
        .position(|b| *b == b'\n')
        .ok_or_else(|| not_ours("no signature line in the first bytes"))?;
    let line = &head[..nl];
    let (sig, version) = match line.strip_prefix(SIGNATURE_PREFIX.as_bytes()) {
        Some(sig) => (sig, 2),
        None => match line.strip_prefix(SIGNATURE_PREFIX_V1.as_bytes()) {
            Some(sig) => (sig, 1),
            None => {
                return Err(not_ours(
                    "the first line does not start with `terrane-blockfile/2 ` (or `/1 `)",
                ));
            }
        },
    };
    let sig = std::str::from_utf8(sig).map_err(|_| not_ours("the signature is not UTF-8"))?;
    terrane_store::check_signature(sig)
        .map_err(|_| not_ours("the signature is not printable ASCII"))?;
    Ok((sig.to_string(), nl + 1, version))
}

fn signature_line(sig: &str) -> Vec<u8> {
    format!("{SIGNATURE_PREFIX}{sig}\n").into_bytes()
}

/// Erases a block's trailer (48 zero bytes): the block no longer parses, so a recovery scan
/// ignores it and its chain.
fn erase_trailer(file: &File, block: u32) -> std::io::Result<()> {
    file.write_all_at(&[0u8; FIXED], block as u64 * BLOCK as u64 + FIXED_AT as u64)
}

impl State {
    /// Takes `n` blocks: free ones lowest first, then new ones at the end of the file.
    fn alloc(&mut self, n: usize) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            match self.free.pop_first() {
                Some(b) => out.push(b),
                None => {
                    let b = self.file_blocks;
                    self.file_blocks = b
                        .checked_add(1)
                        .ok_or_else(|| Error::Backend("block file full (16 TiB)".into()))?;
                    out.push(b);
                }
            }
        }
        Ok(out)
    }

    fn objects(&self) -> u64 {
        self.tables.values().map(|t| t.len() as u64).sum()
    }

    /// Takes the next transaction or index write number.
    fn take_number(&mut self) -> Result<u64> {
        let n = self.next_txn;
        self.next_txn = n
            .checked_add(1)
            .ok_or_else(|| Error::Corrupt("transaction numbers exhausted (u64::MAX)".into()))?;
        Ok(n)
    }

    /// Blocks freed by batches whose index is not durable yet.
    fn pending_blocks(&self) -> usize {
        self.deferred.iter().filter(|(t, _)| *t > self.durable_txn).map(|(_, c)| c.len()).sum()
    }

    /// Records a completed `fdatasync`: every index written and every block erased so far is
    /// durable, so the graveyard forgets the keys whose blocks are durably erased.
    fn synced(&mut self) {
        self.durable_txn = self.txn;
        let erased = self.erased_txn;
        self.graveyard.retain(|(_, _, g)| *g > erased);
    }
}

/// The index payload (after the signature line). `write_no` is below `u64::MAX` (it was
/// taken with [`State::take_number`], which leaves a next number).
fn encode_index(st: &State, write_no: u64) -> Vec<u8> {
    let mut w = Writer::default();
    w.u64(st.txn);
    w.u64(write_no.saturating_add(1));
    w.u64(st.index_durable);
    w.u32(st.file_blocks);
    w.runs(&to_runs(&st.commit_chain));
    w.u32(st.tables.len() as u32);
    for (name, t) in &st.tables {
        w.table(name);
        w.u64(t.len() as u64);
        for (k, e) in t.iter() {
            w.key(k);
            w.i64(e.version);
            w.u64(e.txn);
            w.u64(e.len);
            w.runs(&e.runs);
        }
    }
    let free: Vec<u32> = st.free.iter().copied().collect();
    w.runs(&to_runs(&free));
    w.0
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

    /// Testing only: simulates a crash at the `n`th write, erase, truncation or sync from
    /// now (0-based): that operation fails (a multi-block write first writes half of its
    /// blocks, a torn write) and so does everything after it. `None` turns it off.
    #[doc(hidden)]
    pub fn simulate_crash_after(&self, n: Option<u64>) {
        let v = n.map_or(-1, |n| n as i64);
        self.crash_budget.store(v, std::sync::atomic::Ordering::SeqCst);
    }

    /// Counts an I/O operation against the simulated crash budget: `Err` once exhausted,
    /// `Ok(true)` for the operation that exhausts it.
    fn io_budget(&self) -> Result<bool> {
        use std::sync::atomic::Ordering;
        let left = self.crash_budget.load(Ordering::SeqCst);
        match left {
            -1 => Ok(false),
            0 => {
                self.crash_budget.store(i64::MIN, Ordering::SeqCst);
                Ok(true)
            }
            i64::MIN => Err(Error::Io(std::io::Error::other("simulated crash"))),
            _ => {
                self.crash_budget.store(left - 1, Ordering::SeqCst);
                Ok(false)
            }
        }
    }

    fn io_tick(&self) -> Result<()> {
        if self.io_budget()? {
            return Err(Error::Io(std::io::Error::other("simulated crash")));
        }
        Ok(())
    }

    fn io_write_blocks(&self, blocks: &Blocks<'_>) -> Result<()> {
        if self.io_budget()? {
            blocks.write(&self.file, Some(blocks.len() / 2))?;
            return Err(Error::Io(std::io::Error::other("simulated crash")));
        }
        Ok(blocks.write(&self.file, None)?)
    }

    fn io_erase(&self, block: u32) -> Result<()> {
        self.io_tick()?;
        Ok(erase_trailer(&self.file, block)?)
    }

    fn io_sync(&self) -> Result<()> {
        self.io_tick()?;
        Ok(self.fdatasync()?)
    }

    /// `fdatasync`, counted.
    fn fdatasync(&self) -> std::io::Result<()> {
        self.syncs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.file.sync_data()
    }

    fn pinned(&self) -> bool {
        Arc::strong_count(&self.pin) > 1
    }

    /// Rewrites the index in place over its chain (growing it with free blocks, or freeing
    /// its tail), under a fresh write number.
    fn write_index(&self, st: &mut State) -> Result<()> {
        let write_no = st.take_number()?;
        st.index_durable = st.durable_txn.min(st.txn);
        let mut payload = signature_line(&self.signature);
        // Chain growth takes blocks before the free list is encoded.
        let body_guess = encode_index(st, write_no);
        let need = (payload.len() + body_guess.len()).div_ceil(capacity(0, 0)) + 1;
        while st.index_chain.len() < need {
            let b = st.alloc(1)?[0];
            st.index_chain.push(b);
        }
        let body = encode_index(st, write_no);
        payload.extend_from_slice(&body);
        let need = payload.len().div_ceil(capacity(0, 0)).max(1);
        let spare = st.index_chain.split_off(need);
        let mut blocks = Blocks::with_capacity(st.index_chain.len());
        blocks.chain(KIND_INDEX, &[], &[], &payload, 0, write_no, &st.index_chain);
        self.io_write_blocks(&blocks)?;
        // Spare index blocks carry an older write number (recovery ignores index blocks), but
        // the durable index may still be the one that used them: they wait like freed chains.
        if !spare.is_empty() {
            st.deferred.push((st.txn, spare));
        }
        Ok(())
    }

    /// Cuts free blocks off the end of the file.
    fn truncate_tail(&self, st: &mut State) -> Result<()> {
        let before = st.file_blocks;
        while st.file_blocks > 1 && st.free.contains(&(st.file_blocks - 1)) {
            st.file_blocks -= 1;
            st.free.remove(&st.file_blocks);
        }
        if st.file_blocks != before {
            self.io_tick()?;
            self.file.set_len(st.file_blocks as u64 * BLOCK as u64)?;
        }
        Ok(())
    }

    /// Erases and frees the deferred chains whose dropping index is durable. Only while no
    /// snapshot or scan is alive.
    fn release_deferred(&self, st: &mut State) -> Result<()> {
        let durable = st.durable_txn;
        let (ready, waiting): (Vec<_>, Vec<_>) =
            std::mem::take(&mut st.deferred).into_iter().partition(|(t, _)| *t <= durable);
        st.deferred = waiting;
        for (_, chain) in ready {
            if let Some(first) = chain.first() {
                self.io_erase(*first)?;
            }
            st.free.extend(chain);
        }
        st.erased_txn = st.erased_txn.max(durable);
        Ok(())
    }

    fn commit(&self, st: &mut State, batch: &Batch) -> Result<()> {
        // A batch takes two numbers (its own and its index write's): refuse before writing.
        if st.next_txn.checked_add(2).is_none() {
            return Err(Error::Corrupt("transaction numbers exhausted (u64::MAX)".into()));
        }
        let pinned = self.pinned();
        if !pinned {
            // Blocks freed by unsynced batches are reused only after a sync: when too many
            // wait, sync now rather than let the file grow.
            let pending = st.pending_blocks();
            if pending > PENDING_SYNC_MIN && pending > st.file_blocks as usize / 4 {
                self.io_sync()?;
                st.synced();
            }
            self.release_deferred(st)?;
        }
        let txn = st.take_number()?;
        // The last operation on each key wins.
        type Final<'b> = Option<(i64, &'b [u8])>;
        let mut finals: BTreeMap<(&str, &[u8]), Final<'_>> = BTreeMap::new();
        for op in batch.ops() {
            match op {
                Op::Put { table, key, version, data } => {
                    finals.insert((table, key), Some((*version, data)));
                }
                Op::Delete { table, key } => {
                    finals.insert((table, key), None);
                }
            }
        }
        // 1. New blocks: objects, then the commit record naming them.
        let nblocks: usize = finals
            .iter()
            .map(|((t, k), v)| v.map_or(0, |(_, d)| blocks_for(d.len(), t.len(), k.len())))
            .sum();
        let mut blocks = Blocks::with_capacity(nblocks + 2);
        let mut record = Writer::default();
        record.u64(txn);
        record.u32(st.tables.len() as u32);
        for name in st.tables.keys() {
            record.table(name);
        }
        record.u32(finals.len() as u32);
        let mut new_entries = Vec::with_capacity(finals.len());
        for ((table, key), v) in &finals {
            match v {
                Some((version, data)) => {
                    let n = blocks_for(data.len(), table.len(), key.len());
                    let chain = st.alloc(n)?;
                    blocks.chain(KIND_OBJECT, table.as_bytes(), key, data, *version, txn, &chain);
                    let runs = to_runs(&chain);
                    record.u8(0);
                    record.table(table);
                    record.key(key);
                    record.i64(*version);
                    record.u64(data.len() as u64);
                    record.runs(&runs);
                    let e =
                        Entry { version: *version, txn, len: data.len() as u64, runs: runs.into() };
                    new_entries.push((*table, *key, Some(e)));
                }
                None => {
                    record.u8(1);
                    record.table(table);
                    record.key(key);
                    new_entries.push((*table, *key, None));
                }
            }
        }
        for (table, key, e) in &new_entries {
            if e.is_none() {
                st.graveyard.push((table.to_string(), key.to_vec(), txn));
            }
        }
        record.u32(st.graveyard.len() as u32);
        for (t, k, gtxn) in &st.graveyard {
            record.table(t);
            record.key(k);
            record.u64(*gtxn);
        }
        // The number of objects after this batch: a recovery scan checks it.
        let mut objects = st.objects();
        for ((table, key), v) in &finals {
            let exists = st.tables.get(*table).is_some_and(|t| t.contains_key(*key));
            match (exists, v.is_some()) {
                (false, true) => objects += 1,
                (true, false) => objects -= 1,
                _ => {}
            }
        }
        record.u64(objects);
        // Format 2: the transaction this batch follows, so that a recovery scan keeps only a
        // whole prefix of the batches after the durable one.
        record.u64(st.txn);
        let record = record.0;
        let rec_chain = st.alloc(blocks_for(record.len(), 0, 0))?;
        blocks.chain(KIND_COMMIT, &[], &[], &record, 0, txn, &rec_chain);
        // Apply the batch in memory.
        let mut freed: Vec<Vec<u32>> = Vec::new();
        for (table, key, e) in new_entries {
            let t = Arc::make_mut(st.tables.get_mut(table).expect("validated"));
            let old = match e {
                Some(e) => t.insert(key.to_vec(), e),
                None => t.remove(key),
            };
            if let Some(old) = old {
                freed.push(old.blocks().collect());
            }
        }
        freed.push(std::mem::replace(&mut st.commit_chain, rec_chain));
        st.txn = txn;
        // 2. The index, in place, written after the new blocks (a process crash never
        // leaves a whole index over a partial batch); 3. one flush for both.
        self.io_write_blocks(&blocks)?;
        self.write_index(st)?;
        if batch.is_synced() {
            self.io_sync()?;
            st.synced();
        }
        // 4. Free the old blocks: erase each old chain's first trailer, then reuse. Only once
        // this batch's index is durable (else an older durable index may still name them,
        // and a power loss would show it pointing at erased or reused blocks) and no
        // snapshot reads them: until then they wait in `deferred`.
        st.deferred.extend(freed.into_iter().filter(|c| !c.is_empty()).map(|c| (txn, c)));
        if !pinned {
            self.release_deferred(st)?;
            self.truncate_tail(st)?;
        }
        Ok(())
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

/// The index entry of (`table`, `key`), `None` when absent; [`Error::UnknownTable`] for a
/// table the store does not have.
fn entry<'t>(
    tables: &'t BTreeMap<String, Table>,
    table: &str,
    key: &[u8],
) -> Result<Option<&'t Entry>> {
    check_key(key)?;
    let t = tables.get(table).ok_or_else(|| Error::UnknownTable(table.into()))?;
    Ok(t.get(key))
}

/// An object through the read cache: the cached bytes when the cache holds the version the
/// entry names, else read (and checked) from the file and kept.
fn read_cached(
    file: &File,
    cache: &cache::ReadCache,
    table: &str,
    key: &[u8],
    e: &Entry,
) -> Result<Object> {
    if let Some(data) = cache.get(table, key, e.txn) {
        return Ok(Object { version: e.version, data: data.to_vec() });
    }
    let data = read_entry(file, table, key, e)?;
    cache.insert(table, key, e.txn, &data);
    Ok(Object { version: e.version, data })
}

/// An ordered scan over a table captured at one point in time, holding a pin so that the
/// blocks it will read are not reused.
struct BlockScan<'a> {
    file: &'a File,
    name: String,
    table: Table,
    range: KeyRange,
    last: Option<Vec<u8>>,
    _pin: Arc<()>,
}

impl Iterator for BlockScan<'_> {
    type Item = Result<(Vec<u8>, Object)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.range.is_empty() {
            return None;
        }
        let (start, end) = self.range.as_bounds();
        let start = match &self.last {
            Some(k) => std::ops::Bound::Excluded(k.as_slice()),
            None => start,
        };
        let (k, e) = self.table.range::<[u8], _>((start, end)).next()?;
        let k = k.clone();
        self.last = Some(k.clone());
        Some(
            read_entry(self.file, &self.name, &k, e)
                .map(|data| (k, Object { version: e.version, data })),
        )
    }
}

/// A snapshot: the tables as they were, and a pin on their blocks.
struct Snapshot<'a> {
    file: &'a File,
    cache: &'a cache::ReadCache,
    tables: BTreeMap<String, Table>,
    pin: Arc<()>,
}

impl ReadView for Snapshot<'_> {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        entry(&self.tables, table, key)?
            .map(|e| read_cached(self.file, self.cache, table, key, e))
            .transpose()
    }

    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<Parts>> {
        entry(&self.tables, table, key)?
            .map(|e| read_parts(self.file, table, key, e, ranges))
            .transpose()
    }

    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        entry(&self.tables, table, key)?
            .map(|e| read_parts_then(self.file, table, key, e, first, then))
            .transpose()
    }

    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        let t = self.tables.get(table).ok_or_else(|| Error::UnknownTable(table.into()))?;
        Ok(Box::new(BlockScan {
            file: self.file,
            name: table.to_string(),
            table: t.clone(),
            range,
            last: None,
            _pin: self.pin.clone(),
        }))
    }
}

impl ReadView for BlockFile {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        let st = self.read_state()?;
        entry(&st.tables, table, key)?
            .map(|e| read_cached(&self.file, &self.cache, table, key, e))
            .transpose()
    }

    /// Reads only the blocks the ranges touch.
    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<Parts>> {
        let st = self.read_state()?;
        entry(&st.tables, table, key)?
            .map(|e| read_parts(&self.file, table, key, e, ranges))
            .transpose()
    }

    /// Both steps read the blocks of the same index entry, under the read lock.
    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        let st = self.read_state()?;
        entry(&st.tables, table, key)?
            .map(|e| read_parts_then(&self.file, table, key, e, first, then))
            .transpose()
    }

    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        let st = self.read_state()?;
        let t = st.tables.get(table).ok_or_else(|| Error::UnknownTable(table.into()))?;
        // Read in block order (fewer seeks), answer in key order.
        let mut order: Vec<(usize, &Entry)> = Vec::with_capacity(keys.len());
        for (i, k) in keys.iter().enumerate() {
            check_key(k)?;
            if let Some(e) = t.get(*k) {
                order.push((i, e));
            }
        }
        order.sort_by_key(|(_, e)| e.runs[0].0);
        let mut out = vec![None; keys.len()];
        for (i, e) in order {
            out[i] = Some(read_cached(&self.file, &self.cache, table, keys[i], e)?);
        }
        Ok(out)
    }

    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        let st = self.read_state()?;
        let t = st.tables.get(table).ok_or_else(|| Error::UnknownTable(table.into()))?;
        Ok(Box::new(BlockScan {
            file: &self.file,
            name: table.to_string(),
            table: t.clone(),
            range,
            last: None,
            _pin: self.pin.clone(),
        }))
    }
}

impl Store for BlockFile {
    fn signature(&self) -> &str {
        &self.signature
    }

    fn tables(&self) -> Vec<String> {
        self.read_state().map(|st| st.tables.keys().cloned().collect()).unwrap_or_default()
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly(self.path.clone()));
        }
        let mut st = self.write_state()?;
        if let Some(why) = &st.poisoned {
            return Err(Error::Poisoned(why.clone()));
        }
        batch.validate(|t| st.tables.contains_key(t), MAX_VALUE)?;
        // Under the state lock: no other write can come between the check and the commit.
        batch.check_preconditions(|t, k| Ok(st.tables[t].get(k).map(|e| e.version)))?;
        if batch.is_empty() {
            if batch.is_synced() {
                self.fdatasync()?;
                st.synced();
            }
            return Ok(());
        }
        match self.commit(&mut st, batch) {
            Ok(()) => Ok(()),
            Err(e) => {
                // The file may hold half a batch: refuse further writes until a reopen
                // (which recovers it) rather than risk building on it.
                st.poisoned = Some(e.to_string());
                Err(e)
            }
        }
    }

    fn snapshot(&self) -> Result<Box<dyn ReadView + '_>> {
        let st = self.read_state()?;
        Ok(Box::new(Snapshot {
            file: &self.file,
            cache: &self.cache,
            tables: st.tables.clone(),
            pin: self.pin.clone(),
        }))
    }

    /// Does nothing: every write goes straight to the operating system.
    fn flush(&self) -> Result<()> {
        Ok(())
    }

    /// `fdatasync`. On a read-only store, does nothing (there is nothing to make durable).
    fn sync(&self) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        let mut st = self.write_state()?;
        self.fdatasync()?;
        // The blocks freed so far become reusable (the next write erases and reuses them).
        if st.poisoned.is_none() {
            st.synced();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::build_block;
    use terrane_store::StoreConfig;

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
