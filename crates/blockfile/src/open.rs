//! Opening a block file: creation, the lock, reading or rebuilding the index, and the choice
//! between opening, refusing ([`Error::Damaged`]) and repairing. Nothing is written before
//! that choice, and nothing at all by a read-only open.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, RwLock};

use terrane_store::lock::{LockMode, lock_file};
use terrane_store::{OpenMode, StoreConfig};

use crate::cache::ReadCache;
use crate::format::{BLOCK, KIND_INDEX, capacity, parse_block, to_runs};
use crate::index::{load_index, reconcile};
use crate::{
    BlockFile, Blocks, Error, Recovery, Result, State, Table, encode_index, erase_trailer,
    parse_signature_line, read_blocks, recover, signature_line,
};

/// Options of [`BlockFile::open_with`], with defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BlockFileOptions {
    /// Open a damaged file anyway (default `false`).
    ///
    /// By default, when the file cannot account for everything its own records say it holds
    /// (see [`Recovery::is_clean`]: objects, transactions, blocks past the end of a truncated
    /// file), opening fails with [`Error::Damaged`] naming what is missing, and nothing is
    /// written to the file. With `repair`, opening keeps every intact object and lists each
    /// lost one in [`BlockFile::recovery`] (and [`BlockFile::verify`] reports them); a writer
    /// then writes the repaired index, which makes the loss permanent. A read-only repair
    /// shows what a repair would keep, without writing.
    pub repair: bool,
    /// Memory for the read cache, in bytes of object values (default 32 MiB; 0 turns it off).
    ///
    /// Objects read are kept with the transaction that wrote them, and serve a later read of
    /// the same key only while the index still names that transaction, so the cache never
    /// returns an older version and writes do not invalidate it. An object is checked
    /// (checksums, trailers) when it is read from the file; a cached copy is not read again,
    /// so damage that happens to the file afterwards is found by the next read that misses
    /// the cache, or by [`BlockFile::verify`], which never uses it.
    pub cache_bytes: usize,
}

impl Default for BlockFileOptions {
    fn default() -> Self {
        BlockFileOptions { repair: false, cache_bytes: 32 << 20 }
    }
}

impl BlockFileOptions {
    /// The defaults.
    pub fn new() -> Self {
        BlockFileOptions::default()
    }

    /// Sets [`cache_bytes`](Self::cache_bytes).
    pub fn cache_bytes(mut self, bytes: usize) -> Self {
        self.cache_bytes = bytes;
        self
    }

    /// Sets [`repair`](Self::repair).
    pub fn repair(mut self, repair: bool) -> Self {
        self.repair = repair;
        self
    }
}

fn io_at(path: &Path, what: &str) -> impl Fn(std::io::Error) -> Error {
    let path = path.display().to_string();
    let what = what.to_string();
    move |e| match e.kind() {
        std::io::ErrorKind::NotFound if what == "opening" => Error::NotFound(path.clone().into()),
        _ => Error::Io(std::io::Error::new(e.kind(), format!("{what} {path}: {e}"))),
    }
}

/// Opens the store's file per `config` (creating it when asked) and locks it: exclusively for
/// a writer, shared for a reader, before anything is read.
fn open_locked(path: &Path, config: &StoreConfig) -> Result<File> {
    let exists = path.exists();
    match (config.mode, exists) {
        (OpenMode::Create, true) => return Err(Error::AlreadyExists(path.into())),
        (OpenMode::Open, false) => return Err(Error::NotFound(path.into())),
        (_, false) if config.read_only => return Err(Error::NotFound(path.into())),
        _ => {}
    }
    // Another creator may link its store first: for `Create`, that one exists already.
    if !exists && !create(path, config)? && config.mode == OpenMode::Create {
        return Err(Error::AlreadyExists(path.into()));
    }
    let file = OpenOptions::new()
        .read(true)
        .write(!config.read_only)
        .open(path)
        .map_err(io_at(path, "opening"))?;
    lock_file(&file, path, LockMode::for_read_only(config.read_only))?;
    Ok(file)
}

/// The file a new store is written to before it is linked into place: `<name>.creating`.
fn creating_path(path: &Path) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".creating");
    path.with_file_name(name)
}

/// Creates a new, empty block file atomically: written aside (under an exclusive lock, so that
/// two creators never write the same file), synced, then hard-linked into place, which fails
/// rather than replace a store another creator put there first. `Ok(false)`: another creator
/// did.
fn create(path: &Path, config: &StoreConfig) -> Result<bool> {
    let tmp = creating_path(path);
    let mut attempts = 0;
    let f = loop {
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&tmp)
            .map_err(io_at(&tmp, "creating"))?;
        lock_file(&f, path, LockMode::Exclusive)?;
        // A creator that finished between our open and our lock removed the name: ours is
        // then an orphan, start over.
        let same = std::fs::metadata(&tmp)
            .is_ok_and(|m| f.metadata().is_ok_and(|o| (o.dev(), o.ino()) == (m.dev(), m.ino())));
        if same {
            break f;
        }
        attempts += 1;
        if attempts > 100 {
            return Err(Error::Locked { path: path.into(), holder: None });
        }
    };
    if path.exists() {
        let _ = std::fs::remove_file(&tmp);
        return Ok(false);
    }
    let mut st = State { file_blocks: 1, index_chain: vec![0], next_txn: 1, ..State::default() };
    for t in &config.tables {
        st.tables.insert(t.clone(), Table::default());
    }
    let mut payload = signature_line(&config.signature);
    payload.extend(encode_index(&st, 0));
    let n = payload.len().div_ceil(capacity(0, 0)).max(1);
    st.index_chain = (0..n as u32).collect();
    st.file_blocks = n as u32;
    let mut payload = signature_line(&config.signature);
    payload.extend(encode_index(&st, 0));
    let mut blocks = Blocks::default();
    blocks.chain(KIND_INDEX, &[], &[], &payload, 0, 0, &st.index_chain);
    f.set_len(0)?;
    blocks.write(&f, None)?;
    f.sync_all()?;
    let created = match std::fs::hard_link(&tmp, path) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => false,
        // A file system without hard links: rename, unless a store appeared meanwhile.
        Err(_) if path.exists() => false,
        Err(_) => {
            std::fs::rename(&tmp, path).map_err(io_at(path, "creating"))?;
            true
        }
    };
    let _ = std::fs::remove_file(&tmp);
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        File::open(parent)?.sync_all()?;
    }
    drop(f);
    Ok(created)
}

/// Reads the index, or rebuilds the state by scanning when it cannot be used, and records in
/// `recovery` what was found. Reads only.
fn read_state(
    file: &File,
    file_blocks: u32,
    sig_len: usize,
    version: u8,
    recovery: &mut Recovery,
) -> Result<State> {
    let mut listing = None;
    let reason = match load_index(file, file_blocks, sig_len, version, &mut listing) {
        Ok(loaded) => {
            recovery.commit_verified = true;
            return Ok(loaded.state);
        }
        Err(reason) => reason,
    };
    // A version 1 index names no durable transaction of its own (it counts as its `txn`).
    let durable = listing.as_ref().filter(|_| version >= 2).map(|l| l.durable);
    let mut rec = recover::scan(file, file_blocks, durable)?;
    recovery.scanned = true;
    recovery.reason = Some(reason);
    recovery.commit_verified = rec.commit_verified;
    recovery.damaged = rec.damaged.clone();
    recovery.objects_expected = rec.objects_expected;
    let Some(listing) = listing else {
        recovery.objects_found = rec.state.objects();
        return Ok(rec.state);
    };
    if listing.unflushed {
        // The index is whole: every entry of a batch the scan kept must be there as listed
        // (the scan's own rules cannot see a damaged first block of an older batch).
        let mut kept = listing;
        let upto = rec.state.txn;
        kept.entries.retain(|_, etxn| *etxn <= upto);
        reconcile(&mut rec, &kept, &mut recovery.damaged);
        recovery.objects_found = rec.state.objects();
        note_missing_batches(recovery, kept.txn, Some(kept.durable), upto);
        return Ok(rec.state);
    }
    if listing.complete {
        // An intact index of a truncated file: it is the record of what the store holds.
        reconcile(&mut rec, &listing, &mut recovery.damaged);
        recovery.objects_expected = Some(listing.entries.len() as u64);
        recovery.blocks_expected = Some(listing.blocks_needed);
    }
    // A truncated file's missing batches are damage, whatever the index says was durable.
    let durable = (!listing.complete).then_some(listing.durable);
    note_missing_batches(recovery, listing.txn, durable, rec.state.txn);
    recovery.objects_found = rec.state.objects();
    // The readable part of a torn or damaged index names what it lists, when the scan came
    // short of what the file's records say and that index is not older than what the scan
    // recovered (a crash never needs this: its scan is clean).
    if !listing.complete && !recovery.is_clean() && listing.txn >= rec.state.txn {
        reconcile(&mut rec, &listing, &mut recovery.damaged);
        recovery.objects_found = rec.state.objects();
    }
    Ok(rec.state)
}

/// The index names transaction `named`; the scan recovered `found`. When only batches after
/// the index's `durable` transaction are missing, they were written in the flush a crash cut
/// short and never acknowledged as durable: they are rolled back whole (a clean open).
/// Anything more is missing committed work.
fn note_missing_batches(recovery: &mut Recovery, named: u64, durable: Option<u64>, found: u64) {
    if named <= found {
        return;
    }
    if durable.is_some_and(|d| found >= d) {
        recovery.rolled_back = Some(named);
    } else {
        recovery.txn_expected = Some(named);
    }
}

impl BlockFile {
    /// Opens (or creates, per `config.mode`) the block file at `path` with default options.
    pub fn open(path: impl AsRef<Path>, config: &StoreConfig) -> Result<Self> {
        BlockFile::open_with(path, config, &BlockFileOptions::default())
    }

    /// Opens (or creates) the block file at `path`.
    ///
    /// Locks the file ([`Error::Locked`] when another handle, in this process or another,
    /// holds it: a writer excludes everyone, readers only writers), checks the signature
    /// ([`Error::SignatureMismatch`], [`Error::NotAStore`]), reads the index, or rebuilds the
    /// state by scanning when it is torn or damaged (see [`recovery`](Self::recovery)).
    ///
    /// When the file cannot account for everything its records say it holds, fails with
    /// [`Error::Damaged`] and writes nothing, unless `options` asks to
    /// [`repair`](BlockFileOptions::repair). A crash (even during an index write) never
    /// needs repair.
    ///
    /// A writer then cuts a partial last block, erases blocks nothing references and writes a
    /// fresh index with the tables of `config` that the file lacks. A read-only open
    /// (`config.read_only`: the file must exist, it is opened for reading only, so it may be
    /// on read-only media) writes nothing, serves what it read or rebuilt in memory, and
    /// adds the missing tables only in memory.
    pub fn open_with(
        path: impl AsRef<Path>,
        config: &StoreConfig,
        options: &BlockFileOptions,
    ) -> Result<Self> {
        config.validate()?;
        let path = path.as_ref();
        let file = open_locked(path, config)?;
        let len = file.metadata()?.len();
        let mut head = vec![0u8; (len.min(BLOCK as u64)) as usize];
        crate::read::read_exact_at(&file, &mut head, 0)?;
        let (found, sig_len, version) = parse_signature_line(&head)?;
        if found != config.signature {
            return Err(Error::SignatureMismatch { expected: config.signature.clone(), found });
        }
        let file_blocks = u32::try_from(len / BLOCK as u64)
            .map_err(|_| Error::Corrupt("file larger than 16 TiB".into()))?;
        if file_blocks == 0 {
            return Err(Error::Corrupt(format!(
                "file is {len} bytes, shorter than one block: it was truncated"
            )));
        }
        let mut recovery = Recovery {
            truncated_tail: len % BLOCK as u64 != 0,
            file_blocks,
            ..Recovery::default()
        };
        let mut state = read_state(&file, file_blocks, sig_len, version, &mut recovery)?;
        recovery.txn = state.txn;
        if !recovery.is_clean() && !options.repair {
            return Err(Error::Damaged { path: path.into(), detail: recovery.describe() });
        }
        for t in &config.tables {
            state.tables.entry(t.clone()).or_default();
        }
        let mut db = BlockFile {
            path: path.into(),
            file,
            signature: config.signature.clone(),
            read_only: config.read_only,
            state: RwLock::new(state),
            pin: Arc::new(()),
            recovery,
            crash_budget: std::sync::atomic::AtomicI64::new(-1),
            transient_fault: std::sync::atomic::AtomicBool::new(false),
            syncs: std::sync::atomic::AtomicU64::new(0),
            cache: ReadCache::new(options.cache_bytes),
        };
        if !db.read_only {
            db.recovery.erased = db.settle()?;
        }
        Ok(db)
    }

    /// The writes of a writer's open: cuts a partial last block, erases unreferenced blocks
    /// that still parse, writes a fresh index. Returns the number of blocks erased.
    fn settle(&self) -> Result<usize> {
        let mut st = self.write_state()?;
        if self.recovery.truncated_tail {
            self.file.set_len(st.file_blocks as u64 * BLOCK as u64)?;
        }
        // What was read may be only in the OS cache (after a process crash): make it durable
        // before erasing or reusing the blocks an older durable index may still name.
        self.fdatasync()?;
        st.durable_txn = st.txn;
        // Erase every unreferenced block that still parses (an interrupted batch's blocks,
        // stale versions) so that a later recovery scan cannot mistake them for data; then a
        // fresh index (the tables of `config`, or the state a scan rebuilt).
        let free: Vec<u32> = st.free.iter().copied().collect();
        let mut erased = 0;
        for run in to_runs(&free) {
            let mut s = run.0;
            while s < run.0 + run.1 {
                let n = (run.0 + run.1 - s).min(64);
                let buf = read_blocks(&self.file, s, n)?;
                for i in 0..n {
                    let blk = &buf[i as usize * BLOCK..(i as usize + 1) * BLOCK];
                    if parse_block(blk).is_some() {
                        erase_trailer(&self.file, s + i)?;
                        erased += 1;
                    }
                }
                s += n;
            }
        }
        if erased > 0 {
            self.fdatasync()?;
        }
        self.write_index(&mut st)?;
        self.fdatasync()?;
        st.synced();
        self.release_deferred(&mut st)?;
        self.truncate_tail(&mut st)?;
        Ok(erased)
    }
}
