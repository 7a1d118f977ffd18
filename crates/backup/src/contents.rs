//! What one backup holds: its manifests folded from the first to it, and its objects read
//! back (checked) from the packs; restoring it into a store.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::fs::File;

use terrane_store::{Batch, KeyRange, Object, ReadView as _, Store};

use crate::error::{Error, Result, io};
use crate::manifest::{Manifest, Put};
use crate::pack::{PieceRef, pack_name, read_piece};
use crate::repo::Repo;

/// Bytes of values per batch a restore writes.
const BATCH_BYTES: usize = 8 << 20;

/// The objects of a backup, by table and key.
pub(crate) type State = BTreeMap<(String, Vec<u8>), Put>;

/// Applies manifest `m`'s changes to `state`.
pub(crate) fn apply(state: &mut State, m: &Manifest) {
    for e in &m.entries {
        let k = (m.tables[usize::from(e.table)].clone(), e.key.clone());
        match e.put {
            Some(p) => state.insert(k, p),
            None => state.remove(&k),
        };
    }
}

/// The manifests from the first (no parent) to `id`.
pub(crate) fn chain(repo: &Repo, id: u64) -> Result<Vec<Manifest>> {
    let mut out = vec![repo.manifest(id)?];
    while let Some(parent) = Some(out.last().expect("one").parent).filter(|p| *p != 0) {
        if out.len() > 1_000_000 || parent >= out.last().expect("one").id {
            let path = repo.manifest_path(out.last().expect("one").id);
            return Err(crate::error::damaged(&path, "its parent chain loops"));
        }
        out.push(repo.manifest(parent)?);
    }
    out.reverse();
    Ok(out)
}

/// One backup's objects.
pub struct BackupContents<'r> {
    repo: &'r Repo,
    last: Manifest,
    state: State,
    packs: RefCell<HashMap<u64, File>>,
}

/// What [`BackupContents::restore_into`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RestoreReport {
    /// Objects written.
    pub objects: u64,
    /// Bytes of their values.
    pub bytes: u64,
    /// Objects the store held that the backup does not, removed.
    pub removed: u64,
    /// Objects left out because their pieces are damaged or missing (only with
    /// `allow_damaged`): table and key.
    pub damaged: Vec<(String, Vec<u8>)>,
}

impl Repo {
    /// Backup `id`'s objects.
    pub fn contents(&self, id: u64) -> Result<BackupContents<'_>> {
        let chain = chain(self, id)?;
        let mut state = State::new();
        for m in &chain {
            apply(&mut state, m);
        }
        let last = chain.into_iter().next_back().expect("at least backup id");
        Ok(BackupContents { repo: self, last, state, packs: RefCell::new(HashMap::new()) })
    }
}

impl<'r> BackupContents<'r> {
    /// A reader of `repo`'s pieces, holding no backup.
    pub(crate) fn empty(repo: &'r Repo) -> Self {
        BackupContents {
            repo,
            last: Manifest::default(),
            state: State::new(),
            packs: RefCell::new(HashMap::new()),
        }
    }

    /// The backup's id.
    pub fn id(&self) -> u64 {
        self.last.id
    }

    /// The caller's label of the moment it was taken (a world's game tick).
    pub fn tick(&self) -> u64 {
        self.last.tick
    }

    /// The format signature of the store it was taken from.
    pub fn signature(&self) -> &str {
        &self.last.signature
    }

    /// How many objects it holds.
    pub fn len(&self) -> usize {
        self.state.len()
    }

    /// Whether it holds no object.
    pub fn is_empty(&self) -> bool {
        self.state.is_empty()
    }

    /// The tables it holds objects of.
    pub fn tables(&self) -> Vec<String> {
        let mut t: Vec<String> = Vec::new();
        for (table, _) in self.state.keys() {
            if t.last() != Some(table) {
                t.push(table.clone());
            }
        }
        t
    }

    /// The keys of `table`'s objects, in order, with their versions.
    pub fn keys<'a>(&'a self, table: &'a str) -> impl Iterator<Item = (&'a [u8], i64)> + 'a {
        self.state
            .range((table.to_string(), Vec::new())..)
            .take_while(move |((t, _), _)| t == table)
            .map(|((_, k), p)| (k.as_slice(), p.version))
    }

    /// The object `key` of `table`, read from its pack and checked against its checksum and
    /// SHA-256 (a damaged or missing piece is an error, never other bytes).
    pub fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        let Some(p) = self.state.get(&(table.to_string(), key.to_vec())) else { return Ok(None) };
        Ok(Some(Object::new(p.version, self.read(&p.piece)?)))
    }

    /// Reads a piece (its pack opened once).
    pub(crate) fn read(&self, r: &PieceRef) -> Result<Vec<u8>> {
        let path = self.repo.packs_dir().join(pack_name(r.pack));
        let mut packs = self.packs.borrow_mut();
        let file = match packs.entry(r.pack) {
            std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
            std::collections::hash_map::Entry::Vacant(v) => {
                let f = File::open(&path).map_err(|e| {
                    if e.kind() == std::io::ErrorKind::NotFound {
                        crate::error::damaged(&path, "missing")
                    } else {
                        io(&path)(e)
                    }
                })?;
                crate::pack::check_header(&f, &path)?;
                v.insert(f)
            }
        };
        read_piece(file, &path, r)
    }

    /// Makes `store` hold exactly this backup's objects: every object written (its version
    /// and bytes), every other object of the backup's tables removed, then synced.
    ///
    /// Every piece is read and checked first. Damaged or missing pieces fail the restore
    /// before anything is written ([`Error::DamagedObjects`]) unless `allow_damaged`: then
    /// those objects are left out (and removed from `store`) and listed in the report.
    /// Batches of about 8 MiB: a restore cut short leaves `store` partly restored; restore
    /// again.
    pub fn restore_into(&self, store: &dyn Store, allow_damaged: bool) -> Result<RestoreReport> {
        let target_tables = store.tables();
        for t in self.tables() {
            if !target_tables.contains(&t) {
                return Err(Error::TableMissing(t));
            }
        }
        let mut report = RestoreReport::default();
        let mut bad = std::collections::HashSet::new();
        for ((t, k), p) in &self.state {
            if self.read(&p.piece).is_err() {
                report.damaged.push((t.clone(), k.clone()));
                bad.insert(p.piece);
            }
        }
        if !report.damaged.is_empty() && !allow_damaged {
            return Err(Error::DamagedObjects { id: self.id(), objects: report.damaged });
        }
        let mut batch = Batch::new();
        let mut pending = 0;
        for ((t, k), p) in &self.state {
            if bad.contains(&p.piece) {
                continue;
            }
            let data = self.read(&p.piece)?;
            pending += data.len();
            report.objects += 1;
            report.bytes += data.len() as u64;
            batch.put(t, k.clone(), p.version, data);
            if pending >= BATCH_BYTES {
                store.write(&std::mem::take(&mut batch))?;
                pending = 0;
            }
        }
        for t in &target_tables {
            let snap = store.snapshot()?;
            for entry in snap.scan(t, KeyRange::all())? {
                let (k, _) = entry?;
                let key = (t.clone(), k);
                let keep = self.state.get(&key).is_some_and(|p| !bad.contains(&p.piece));
                if !keep {
                    batch.delete(t, key.1);
                    report.removed += 1;
                }
            }
        }
        store.write(&batch.synced())?;
        Ok(report)
    }
}
