//! Taking a backup: one consistent snapshot of a store, compared object by object with the
//! repository's newest backup; only values the repository does not hold yet are written.

use std::cmp::Ordering;
use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use terrane_store::{KeyRange, ReadView, Store};

use crate::contents::{StateStream, chain_ids};
use crate::error::Result;
use crate::manifest::{Entry, Manifest, Put};
use crate::pack::{PackSeries, PieceRef, sha256};
use crate::repo::Repo;

/// What to record with a backup.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BackupOptions {
    /// The caller's label of the moment (a world's game tick). Default 0.
    pub tick: u64,
    /// What is backed up, for people (a world's path). Default empty.
    pub source: String,
}

/// What [`Repo::backup`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackupReport {
    /// The new backup's id.
    pub id: u64,
    /// The backup it was compared with (0: none, the first).
    pub parent: u64,
    /// The tick recorded with it (the caller's label, a world's game tick).
    pub tick: u64,
    /// Objects in the backup, and the bytes of their values.
    pub objects: u64,
    /// Bytes of the objects' values.
    pub bytes: u64,
    /// Objects new or changed since the parent (their value or their version).
    pub changed: u64,
    /// Bytes of the values of the objects whose value changed.
    pub changed_bytes: u64,
    /// Objects removed since the parent.
    pub removed: u64,
    /// Bytes written to pack files (values after compression, with their record headers).
    pub pack_bytes: u64,
    /// Bytes of the backup's manifest.
    pub manifest_bytes: u64,
}

impl BackupReport {
    /// Every byte the backup wrote into the repository.
    pub fn written_bytes(&self) -> u64 {
        self.pack_bytes + self.manifest_bytes
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

/// Hashes of values written lately (this backup's, and the newest backup's as they go by)
/// a backup remembers to write an equal value once: past this many it forgets them all.
const RECENT_VALUES: usize = 1 << 17;

impl Repo {
    /// Backs `store` up: takes one snapshot of it (the store goes on taking writes), writes
    /// the values the repository does not hold yet into a new pack and publishes a manifest
    /// of the changes since the newest backup. Returns what it did; the new backup is listed
    /// from the moment this returns, and never before.
    ///
    /// Every value is read and hashed (SHA-256); only new ones are written, compressed with
    /// LZ4 where that makes them smaller. Memory does not grow with the store: the snapshot
    /// is walked in key order beside the newest backup's objects, streamed from its
    /// manifests, and the new manifest is written as it goes.
    pub fn backup(&self, store: &dyn Store, options: &BackupOptions) -> Result<BackupReport> {
        self.backup_with(store, &options.source, |_| Ok(options.tick), &mut |_, _| {})
    }

    /// [`Repo::backup`], the backup's tick read from the snapshot it is taken from by
    /// `tick_of` (a world's game tick, which saves go on advancing meanwhile), calling
    /// `progress(objects, bytes)` with what it has read so far.
    pub fn backup_with(
        &self,
        store: &dyn Store,
        source: &str,
        tick_of: impl FnOnce(&dyn ReadView) -> terrane_store::Result<u64>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<BackupReport> {
        let parent = self.latest()?.unwrap_or(0);
        let mut previous = match parent {
            0 => None,
            p => Some(StateStream::open(self, &chain_ids(self, p, false)?.0)?),
        };
        let id = parent + 1;
        let mut report = BackupReport { id, parent, ..BackupReport::default() };
        // Every table of the store and of the newest backup, in name order (the manifest's
        // order, and the order the two are walked in).
        let store_tables = store.tables();
        let mut tables = store_tables.clone();
        tables.extend(previous.as_ref().map(StateStream::tables).unwrap_or_default());
        tables.sort();
        tables.dedup();
        let snap = store.snapshot()?;
        let tick = tick_of(&*snap)?;
        report.tick = tick;
        let head = Manifest {
            id,
            parent,
            created_ms: now_ms(),
            tick,
            signature: store.signature().to_string(),
            source: source.to_string(),
            tables: tables.clone(),
            ..Manifest::default()
        };
        let mut manifest = self.manifest_file(&head)?;
        let mut packs = PackSeries::new(self.tmp_dir(), self.packs_dir(), id);
        // Values written lately, by hash: a value that comes back (a cluster rebuilt alike,
        // a chunk copied) is not written again.
        let mut recent: HashMap<[u8; 32], (PieceRef, Option<u32>)> = HashMap::new();
        let remember = |recent: &mut HashMap<[u8; 32], (PieceRef, Option<u32>)>, p: &Put| {
            if recent.len() >= RECENT_VALUES {
                recent.clear();
            }
            recent.insert(p.piece.sha, (p.piece, p.stored_len));
        };
        let mut old_next = next_of(&mut previous)?;
        for (ti, table) in tables.iter().enumerate() {
            let ti = ti as u16;
            let scan = if store_tables.contains(table) {
                Some(snap.scan(table, KeyRange::all())?)
            } else {
                None
            };
            for item in scan.into_iter().flatten() {
                let (key, object) = item?;
                // The newest backup's objects before this key are gone from the store.
                let mut old = None;
                while let Some((t, k, p)) = &old_next {
                    match (&**t, &k[..]).cmp(&(table.as_str(), &key[..])) {
                        Ordering::Less => {
                            manifest.entry(&Entry {
                                table: ti_of(&tables, t),
                                key: k.clone(),
                                put: None,
                            })?;
                            report.removed += 1;
                        }
                        Ordering::Equal => old = Some(*p),
                        Ordering::Greater => break,
                    }
                    remember(&mut recent, p);
                    old_next = next_of(&mut previous)?;
                    if old.is_some() {
                        break;
                    }
                }
                report.objects += 1;
                report.bytes += object.data.len() as u64;
                progress(report.objects, report.bytes);
                let sha = sha256(&object.data);
                if let Some(o) = old
                    && o.piece.sha == sha
                    && o.version == object.version
                {
                    continue;
                }
                report.changed += 1;
                let (piece, stored_len) = match old.filter(|o| o.piece.sha == sha) {
                    Some(o) => (o.piece, o.stored_len),
                    None => {
                        report.changed_bytes += object.data.len() as u64;
                        match recent.get(&sha) {
                            Some(p) => *p,
                            None => {
                                let (p, stored) = packs.append(&object.data, sha)?;
                                (p, Some(stored))
                            }
                        }
                    }
                };
                let put = Put { version: object.version, piece, stored_len };
                remember(&mut recent, &put);
                manifest.entry(&Entry { table: ti, key, put: Some(put) })?;
            }
            // The newest backup's objects of this table after the store's last key.
            while let Some((t, k, p)) = &old_next
                && **t == **table
            {
                manifest.entry(&Entry { table: ti, key: k.clone(), put: None })?;
                report.removed += 1;
                remember(&mut recent, p);
                old_next = next_of(&mut previous)?;
            }
        }
        drop(snap);
        // Every table of the chain was walked: its manifests were read through, and so
        // checked, before this one is published on top of them.
        debug_assert!(old_next.is_none(), "every table of the chain is walked");
        report.pack_bytes = packs.finish()?;
        report.manifest_bytes =
            manifest.publish(report.objects, report.bytes, report.pack_bytes)?;
        Ok(report)
    }
}

/// The next object of the newest backup, if there is one.
fn next_of(previous: &mut Option<StateStream>) -> Result<Option<crate::contents::StateItem>> {
    previous.as_mut().and_then(Iterator::next).transpose()
}

/// The index of `table` in `tables` (which lists it).
fn ti_of(tables: &[String], table: &str) -> u16 {
    tables.binary_search_by(|t| t.as_str().cmp(table)).expect("every table is listed") as u16
}
