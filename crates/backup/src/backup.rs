//! Taking a backup: one consistent snapshot of a store, compared object by object with the
//! repository's newest backup; only values the repository does not hold yet are written.

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use terrane_store::{KeyRange, ReadView, Store};

use crate::contents::{State, apply, chain};
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

impl Repo {
    /// Backs `store` up: takes one snapshot of it (the store goes on taking writes), writes
    /// the values the repository does not hold yet into a new pack and publishes a manifest
    /// of the changes since the newest backup. Returns what it did; the new backup is listed
    /// from the moment this returns, and never before.
    ///
    /// Every value is read and hashed (SHA-256); only new ones are written, compressed with
    /// LZ4 where that makes them smaller.
    pub fn backup(&self, store: &dyn Store, options: &BackupOptions) -> Result<BackupReport> {
        self.backup_with(store, &options.source, |_| Ok(options.tick))
    }

    /// [`Repo::backup`], the backup's tick read from the snapshot it is taken from by
    /// `tick_of` (a world's game tick, which saves go on advancing meanwhile).
    pub fn backup_with(
        &self,
        store: &dyn Store,
        source: &str,
        tick_of: impl FnOnce(&dyn ReadView) -> terrane_store::Result<u64>,
    ) -> Result<BackupReport> {
        let parent = self.latest()?.unwrap_or(0);
        let mut previous = State::new();
        if parent != 0 {
            for m in chain(self, parent)? {
                apply(&mut previous, &m);
            }
        }
        // Values the repository holds already, by hash: a value that comes back (a chunk
        // restored, a cluster rebuilt alike) is not written again.
        let known: HashMap<[u8; 32], PieceRef> =
            previous.values().map(|p| (p.piece.sha, p.piece)).collect();
        let id = parent + 1;
        let mut report = BackupReport { id, parent, ..BackupReport::default() };
        let tables = store.tables();
        let mut entries = Vec::new();
        let mut fresh: HashMap<[u8; 32], PieceRef> = HashMap::new();
        let mut packs = PackSeries::new(self.tmp_dir(), self.packs_dir(), id);
        let snap = store.snapshot()?;
        let tick = tick_of(&*snap)?;
        report.tick = tick;
        for (ti, table) in tables.iter().enumerate() {
            for item in snap.scan(table, KeyRange::all())? {
                let (key, object) = item?;
                report.objects += 1;
                report.bytes += object.data.len() as u64;
                let sha = sha256(&object.data);
                let old = previous.remove(&(table.clone(), key.clone()));
                if let Some(o) = old
                    && o.piece.sha == sha
                    && o.version == object.version
                {
                    continue;
                }
                report.changed += 1;
                let piece = match old.filter(|o| o.piece.sha == sha) {
                    Some(o) => o.piece,
                    None => {
                        report.changed_bytes += object.data.len() as u64;
                        match known.get(&sha).or_else(|| fresh.get(&sha)) {
                            Some(p) => *p,
                            None => {
                                let p = packs.append(&object.data, sha)?;
                                fresh.insert(sha, p);
                                p
                            }
                        }
                    }
                };
                entries.push(Entry {
                    table: ti as u16,
                    key,
                    put: Some(Put { version: object.version, piece }),
                });
            }
        }
        drop(snap);
        // What the previous backup held and the store no longer does.
        let index: HashMap<&str, u16> =
            tables.iter().enumerate().map(|(i, t)| (t.as_str(), i as u16)).collect();
        let mut extra_tables = tables.clone();
        for (t, k) in previous.into_keys() {
            let ti = match index.get(t.as_str()) {
                Some(i) => *i,
                None => {
                    extra_tables.push(t.clone());
                    (extra_tables.len() - 1) as u16
                }
            };
            entries.push(Entry { table: ti, key: k, put: None });
            report.removed += 1;
        }
        entries.sort_by(|a, b| (a.table, &a.key).cmp(&(b.table, &b.key)));
        let finished_bytes = packs.finish()?;
        report.pack_bytes = finished_bytes;
        let manifest = Manifest {
            id,
            parent,
            created_ms: now_ms(),
            tick,
            signature: store.signature().to_string(),
            source: source.to_string(),
            tables: extra_tables,
            entries,
            objects: report.objects,
            bytes: report.bytes,
            new_bytes: finished_bytes,
        };
        report.manifest_bytes = self.write_manifest(&manifest)?;
        Ok(report)
    }
}
