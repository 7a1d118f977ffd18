//! The objects a directory world changed since its last backup, recorded as it writes them,
//! so that the next backup into the same repository reads only those
//! ([`terrane_backup::Repo::backup_changes`]) instead of the whole world.
//!
//! [`ChangeRecorder`] stands between the world and its store: while recording, each batch
//! the world writes also puts one record per object it touches into the
//! [`BACKUP_CHANGES_TABLE`], in the same atomic batch. A record's key is its *generation* (8
//! bytes, big-endian) and the first 16 bytes of the SHA-256 of the object's table, a zero
//! byte and its key; its value is that table, zero byte and key. The table is hidden from
//! everything above the recorder ([`Store::tables`] leaves it out), so backups, copies and
//! verifies never see it. `docs/format/world-dir.md`, "Backup changes", specifies it.
//!
//! A backup ([`crate::BackupSource::backup`]) holds the recorder's backup lock from step 1
//! to step 3, so that backups of one world (into one repository or several) run one at a
//! time: another backup's step 1 would close the generation this one reads from its
//! snapshot, and its step 3 remove records this one has yet to mark. It proceeds in named
//! steps:
//! 1. **Close a generation**: under the recorder's write gate, recording is turned on and
//!    a new generation begins. Every write that began before has landed; every write after
//!    is recorded in the new generation.
//! 2. **Back up**: when the world's *since* mark names the repository's newest backup, from
//!    the keys of every record in the snapshot the backup is taken from, whatever its
//!    generation (the records then hold every change since that backup, including the
//!    writes that landed between step 1 and the snapshot); else the whole world.
//! 3. **Mark**: one batch removes the records of the closed generations (every record
//!    but the open generation's, which stay for the next backup) and sets the *since* mark
//!    to the new backup. Records of closed generations are never written again, so every
//!    one removed was read. A crash before it leaves the old mark, so the next backup walks
//!    the whole world; nothing is ever backed up from too few keys.
//!
//! Recording starts with a world's first backup and goes on while the mark is there (a
//! world that was never backed up records nothing). A block-file world repaired at open
//! ([`crate::WorldBuilder::repair`]) may have lost objects and records without a write:
//! its mark is removed, so its next backup reads the whole world. A backup into another
//! repository than the mark names walks the whole world and moves the mark there.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};
use terrane_store::{Batch, KeyRange, Object, Parts, ReadView, Result, Scan, Store};

/// The table of the records (`docs/format/world-dir.md`, "Backup changes").
pub const BACKUP_CHANGES_TABLE: &str = "backupChanges";

/// The [`BACKUP_CHANGES_TABLE`] key of the *since* mark: `<created ms> <backup id>
/// <repository path>` (UTF-8) of the backup the records are changes since. It lies in the
/// hidden table so that no backup or copy of the world carries it.
pub const BACKUP_CHANGES_SINCE_KEY: &[u8] = b"since";

/// The length of a record's key: generation and hash.
const RECORD_KEY_LEN: usize = 8 + 16;

/// The records of one snapshot: the objects' keys, and the records to remove once the
/// backup is published.
#[derive(Debug, Default)]
pub(crate) struct RecordedChanges {
    /// Every `(table, key)` recorded, of any generation, sorted.
    pub(crate) keys: BTreeSet<(String, Vec<u8>)>,
    /// The keys of the records of closed generations (every generation but the open one).
    pub(crate) closed: Vec<Vec<u8>>,
}

/// A world's store that records which objects each write touches (see the module docs).
pub struct ChangeRecorder {
    inner: Arc<dyn Store>,
    recording: AtomicBool,
    generation: AtomicU64,
    /// Writes hold it shared; closing a generation holds it alone.
    gate: RwLock<()>,
    /// Held by a backup from closing its generation to its mark.
    backup: Mutex<()>,
}

impl std::fmt::Debug for ChangeRecorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChangeRecorder")
            .field("recording", &self.recording.load(Ordering::Relaxed))
            .field("generation", &self.generation.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

fn now_ns() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// The record's key: `generation` and the hash of `table`, a zero byte and `key`.
fn record_key(generation: u64, table: &str, key: &[u8]) -> Vec<u8> {
    let mut h = Sha256::new();
    h.update(table.as_bytes());
    h.update([0]);
    h.update(key);
    let mut out = generation.to_be_bytes().to_vec();
    out.extend_from_slice(&h.finalize()[..16]);
    out
}

impl ChangeRecorder {
    /// Wraps `inner`; records from the start when the world holds a *since* mark.
    pub(crate) fn open(inner: Arc<dyn Store>) -> Result<ChangeRecorder> {
        let marked = inner.tables().iter().any(|t| t == BACKUP_CHANGES_TABLE)
            && inner.get(BACKUP_CHANGES_TABLE, BACKUP_CHANGES_SINCE_KEY)?.is_some();
        Ok(ChangeRecorder {
            inner,
            recording: AtomicBool::new(marked),
            generation: AtomicU64::new(now_ns()),
            gate: RwLock::new(()),
            backup: Mutex::new(()),
        })
    }

    /// Whether writes are being recorded.
    pub fn is_recording(&self) -> bool {
        self.recording.load(Ordering::Acquire)
    }

    /// The backup lock: held from step 1 to step 3, one backup of the world at a time.
    pub(crate) fn lock_backup(&self) -> MutexGuard<'_, ()> {
        self.backup.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Removes the *since* mark (one synced batch) and stops recording: the next backup
    /// reads the whole world. For a world whose store lost objects without a write.
    #[cfg(feature = "blockfile")]
    pub(crate) fn forget_mark(&self) -> Result<()> {
        if self.since()?.is_some() {
            let mut b = Batch::with_capacity(1).synced();
            b.delete(BACKUP_CHANGES_TABLE, BACKUP_CHANGES_SINCE_KEY.to_vec());
            self.inner.write(&b)?;
        }
        self.recording.store(false, Ordering::Release);
        Ok(())
    }

    /// Step 1: turns recording on and begins a new generation; returns it.
    pub(crate) fn close_generation(&self) -> u64 {
        let _alone = self.gate.write().unwrap_or_else(|e| e.into_inner());
        let next = now_ns().max(self.generation.load(Ordering::Acquire) + 1);
        self.generation.store(next, Ordering::Release);
        self.recording.store(true, Ordering::Release);
        next
    }

    /// Step 2: the records in `view`, a snapshot taken after step 1 began generation `open`.
    pub(crate) fn recorded(&self, view: &dyn ReadView, open: u64) -> Result<RecordedChanges> {
        let mut out = RecordedChanges::default();
        if !self.inner.tables().iter().any(|t| t == BACKUP_CHANGES_TABLE) {
            return Ok(out);
        }
        for item in view.scan(BACKUP_CHANGES_TABLE, KeyRange::all())? {
            let (record, object) = item?;
            if record.len() != RECORD_KEY_LEN {
                continue; // the mark
            }
            let at = object.data.iter().position(|&b| b == 0);
            let Some((table, key)) = at.map(|at| (&object.data[..at], &object.data[at + 1..]))
            else {
                return Err(terrane_store::Error::Corrupt(format!(
                    "{BACKUP_CHANGES_TABLE}: a record without its table"
                )));
            };
            let table = String::from_utf8_lossy(table).into_owned();
            out.keys.insert((table, key.to_vec()));
            if !record.starts_with(&open.to_be_bytes()) {
                out.closed.push(record);
            }
        }
        Ok(out)
    }

    /// Step 3: removes `records` and sets the *since* mark to `mark`, in one synced batch.
    pub(crate) fn mark(&self, records: &[Vec<u8>], mark: &str) -> Result<()> {
        let mut b = Batch::with_capacity(records.len() + 1).synced();
        for r in records {
            b.delete(BACKUP_CHANGES_TABLE, r.clone());
        }
        b.put(BACKUP_CHANGES_TABLE, BACKUP_CHANGES_SINCE_KEY.to_vec(), 0, mark.as_bytes().to_vec());
        self.inner.write(&b)
    }

    /// The *since* mark, if any.
    pub(crate) fn since(&self) -> Result<Option<String>> {
        if !self.inner.tables().iter().any(|t| t == BACKUP_CHANGES_TABLE) {
            return Ok(None);
        }
        let mark = self.inner.get(BACKUP_CHANGES_TABLE, BACKUP_CHANGES_SINCE_KEY)?;
        Ok(mark.map(|o| String::from_utf8_lossy(&o.data).into_owned()))
    }
}

impl ReadView for ChangeRecorder {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        self.inner.get(table, key)
    }
    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        self.inner.multi_get(table, keys)
    }
    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<Parts>> {
        self.inner.get_parts(table, key, ranges)
    }
    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        self.inner.get_parts_then(table, key, first, then)
    }
    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        self.inner.scan(table, range)
    }
}

impl Store for ChangeRecorder {
    fn signature(&self) -> &str {
        self.inner.signature()
    }
    fn tables(&self) -> Vec<String> {
        let mut t = self.inner.tables();
        t.retain(|t| t != BACKUP_CHANGES_TABLE);
        t
    }
    fn write(&self, batch: &Batch) -> Result<()> {
        let _shared = self.gate.read().unwrap_or_else(|e| e.into_inner());
        if !self.recording.load(Ordering::Acquire) {
            return self.inner.write(batch);
        }
        let generation = self.generation.load(Ordering::Acquire);
        let mut recorded = batch.clone();
        let mut seen = BTreeSet::new();
        for op in batch.ops() {
            let (table, key) = (op.table(), op.key());
            if table == BACKUP_CHANGES_TABLE || !seen.insert((table, key)) {
                continue;
            }
            let mut value = Vec::with_capacity(table.len() + 1 + key.len());
            value.extend_from_slice(table.as_bytes());
            value.push(0);
            value.extend_from_slice(key);
            recorded.put(BACKUP_CHANGES_TABLE, record_key(generation, table, key), 0, value);
        }
        self.inner.write(&recorded)
    }
    fn snapshot(&self) -> Result<Box<dyn ReadView + '_>> {
        self.inner.snapshot()
    }
    fn flush(&self) -> Result<()> {
        self.inner.flush()
    }
    fn sync(&self) -> Result<()> {
        self.inner.sync()
    }
    fn cache_bytes(&self) -> Option<u64> {
        self.inner.cache_bytes()
    }
}
