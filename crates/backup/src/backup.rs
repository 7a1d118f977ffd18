//! Taking a backup: one consistent snapshot of a store, compared object by object with the
//! repository's newest backup; only values the repository does not hold yet are written.

use std::cmp::Ordering;
use std::collections::{BTreeSet, HashMap};
use std::time::{SystemTime, UNIX_EPOCH};

use terrane_store::{KeyRange, Object, ReadView, Store};

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
    /// Objects read from the store: every one, or for a backup from changes
    /// ([`Repo::backup_changes`]) those the caller named.
    pub read: u64,
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

/// The keys a backup from changes reads: every `(table, key)` put or removed since the
/// repository's newest backup, sorted ([`Repo::backup_changes`]).
pub type ChangedKeys = BTreeSet<(String, Vec<u8>)>;

/// Values written lately, by hash, with where they are: a value that comes back (a cluster
/// rebuilt alike, a chunk copied) is not written again.
type Recent = HashMap<[u8; 32], (PieceRef, Option<u32>)>;

/// A backup being written: its manifest, packs and counts, fed in key order.
struct Writing<'r> {
    tables: Vec<String>,
    manifest: crate::repo::ManifestFile,
    packs: PackSeries,
    recent: Recent,
    report: BackupReport,
    progress: &'r mut dyn FnMut(u64, u64),
}

impl<'r> Writing<'r> {
    /// Opens the backup after `parent`, of `tables`, taken from `snap` (whose tick `tick_of`
    /// reads).
    fn start(
        repo: &Repo,
        store: &dyn Store,
        parent: u64,
        tables: Vec<String>,
        tick: u64,
        source: &str,
        progress: &'r mut dyn FnMut(u64, u64),
    ) -> Result<Writing<'r>> {
        let id = parent + 1;
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
        Ok(Writing {
            tables,
            manifest: repo.manifest_file(&head)?,
            packs: PackSeries::new(repo.tmp_dir(), repo.packs_dir(), id),
            recent: HashMap::new(),
            report: BackupReport { id, parent, tick, ..BackupReport::default() },
            progress,
        })
    }

    fn remember(&mut self, p: &Put) {
        if self.recent.len() >= RECENT_VALUES {
            self.recent.clear();
        }
        self.recent.insert(p.piece.sha, (p.piece, p.stored_len));
    }

    /// The object `key` of table `ti` is `object` in the store; `old` in the newest backup.
    fn object(&mut self, ti: u16, key: Vec<u8>, object: &Object, old: Option<Put>) -> Result<()> {
        self.report.read += 1;
        self.report.objects += 1;
        self.report.bytes += object.data.len() as u64;
        (self.progress)(self.report.objects, self.report.bytes);
        let sha = sha256(&object.data);
        if let Some(o) = old
            && o.piece.sha == sha
            && o.version == object.version
        {
            return Ok(());
        }
        self.report.changed += 1;
        let (piece, stored_len) = match old.filter(|o| o.piece.sha == sha) {
            Some(o) => (o.piece, o.stored_len),
            None => {
                self.report.changed_bytes += object.data.len() as u64;
                match self.recent.get(&sha) {
                    Some(p) => *p,
                    None => {
                        let (p, stored) = self.packs.append(&object.data, sha)?;
                        (p, Some(stored))
                    }
                }
            }
        };
        let put = Put { version: object.version, piece, stored_len };
        self.remember(&put);
        self.manifest.entry(&Entry { table: ti, key, put: Some(put) })
    }

    /// The newest backup's object `key` of table `table` is gone from the store.
    fn removed(&mut self, table: &str, key: Vec<u8>, old: &Put) -> Result<()> {
        self.manifest.entry(&Entry { table: ti_of(&self.tables, table), key, put: None })?;
        self.report.removed += 1;
        self.remember(old);
        Ok(())
    }

    /// The newest backup's object `old` is the store's too, unread (a backup from changes).
    fn kept(&mut self, old: &Put) {
        self.report.objects += 1;
        self.report.bytes += u64::from(old.piece.raw_len);
        (self.progress)(self.report.objects, self.report.bytes);
    }

    /// Writes the packs and publishes the manifest: the backup is listed from here on.
    fn publish(mut self) -> Result<BackupReport> {
        self.report.pack_bytes = self.packs.finish()?;
        let r = &self.report;
        self.report.manifest_bytes = self.manifest.publish(r.objects, r.bytes, r.pack_bytes)?;
        Ok(self.report)
    }
}

/// Every table of the store and of the newest backup, in name order (the manifest's order,
/// and the order the two are walked in).
fn all_tables(store_tables: &[String], previous: Option<&StateStream>) -> Vec<String> {
    let mut tables = store_tables.to_vec();
    tables.extend(previous.map(StateStream::tables).unwrap_or_default());
    tables.sort();
    tables.dedup();
    tables
}

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
        let store_tables = store.tables();
        let tables = all_tables(&store_tables, previous.as_ref());
        let snap = store.snapshot()?;
        let tick = tick_of(&*snap)?;
        let mut w = Writing::start(self, store, parent, tables.clone(), tick, source, progress)?;
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
                        Ordering::Less => w.removed(t, k.clone(), p)?,
                        Ordering::Equal => {
                            old = Some(*p);
                            w.remember(p);
                        }
                        Ordering::Greater => break,
                    }
                    old_next = next_of(&mut previous)?;
                    if old.is_some() {
                        break;
                    }
                }
                w.object(ti, key, &object, old)?;
            }
            // The newest backup's objects of this table after the store's last key.
            while let Some((t, k, p)) = &old_next
                && **t == **table
            {
                w.removed(t, k.clone(), p)?;
                old_next = next_of(&mut previous)?;
            }
        }
        drop(snap);
        // Every table of the chain was walked: its manifests were read through, and so
        // checked, before this one is published on top of them.
        debug_assert!(old_next.is_none(), "every table of the chain is walked");
        w.publish()
    }

    /// [`Repo::backup_with`], reading from the store only the objects `changed` names.
    /// `changed` is given the snapshot the backup is taken from and returns the keys; the
    /// caller vouches that every object put or removed in that snapshot since backup
    /// `since` was taken is among them (a world that records its changes in the same
    /// batches as its objects, `terrane::World`, reads them from the snapshot). Keys gathered
    /// before the snapshot would miss the writes that land in between, and the backup would
    /// then pair the newest backup's old objects with the snapshot's newer ones. The newest
    /// backup's other objects are taken as they are, unread, from its manifests, which are
    /// read through. Its cost in reads of the store is what changed.
    ///
    /// # Errors
    /// [`Error::NotNewest`](crate::Error::NotNewest) when `since` is not the repository's
    /// newest backup (another backup was taken since, or there is none): back up with
    /// [`Repo::backup_with`] instead.
    pub fn backup_changes(
        &self,
        store: &dyn Store,
        since: u64,
        changed: impl FnOnce(&dyn ReadView) -> terrane_store::Result<ChangedKeys>,
        source: &str,
        tick_of: impl FnOnce(&dyn ReadView) -> terrane_store::Result<u64>,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<BackupReport> {
        let parent = self.latest()?.unwrap_or(0);
        if since == 0 || since != parent {
            return Err(crate::Error::NotNewest { since, newest: parent });
        }
        let mut previous = Some(StateStream::open(self, &chain_ids(self, parent, false)?.0)?);
        let store_tables = store.tables();
        let tables = all_tables(&store_tables, previous.as_ref());
        let snap = store.snapshot()?;
        let tick = tick_of(&*snap)?;
        let changed = changed(&*snap)?;
        let mut w = Writing::start(self, store, parent, tables.clone(), tick, source, progress)?;
        let mut old_next = next_of(&mut previous)?;
        let mut changes = changed.iter().peekable();
        loop {
            // The next key of either, in (table, key) order; with the newest backup's object.
            let order = match (&old_next, changes.peek()) {
                (None, None) => break,
                (Some(_), None) => Ordering::Less,
                (None, Some(_)) => Ordering::Greater,
                (Some((t, k, _)), Some((ct, ck))) => (&**t, &k[..]).cmp(&(ct.as_str(), &ck[..])),
            };
            if order == Ordering::Less {
                let (_, _, p) = old_next.take().expect("compared");
                w.kept(&p);
                w.remember(&p);
                old_next = next_of(&mut previous)?;
                continue;
            }
            let (table, key) = changes.next().expect("compared");
            let old = match order {
                Ordering::Equal => {
                    let (_, _, p) = old_next.take().expect("compared");
                    old_next = next_of(&mut previous)?;
                    Some(p)
                }
                _ => None,
            };
            let object = match store_tables.contains(table) {
                true => snap.get(table, key)?,
                false => None,
            };
            match (object, old) {
                (Some(o), old) => w.object(ti_of(&tables, table), key.clone(), &o, old)?,
                (None, Some(p)) => {
                    w.report.read += 1;
                    w.removed(table, key.clone(), &p)?
                }
                (None, None) => w.report.read += 1,
            }
        }
        drop(snap);
        w.publish()
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
