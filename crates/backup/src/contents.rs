//! What one backup holds: the manifests of its chain merged into one stream of objects in
//! order of table and key (one entry per manifest in memory, never the backup), its objects
//! read back (checked) from the packs, and restoring it into a store.

use std::cell::{OnceCell, RefCell};
use std::cmp::{Ordering, Reverse};
use std::collections::{BTreeMap, BinaryHeap, HashMap, HashSet};
use std::fs::File;
use std::io::BufReader;
use std::rc::Rc;

use terrane_store::{Batch, KeyRange, Object, ReadView as _, Store};

use crate::error::{Error, Result, io};
use crate::manifest::{Manifest, ManifestReader, Put};
use crate::pack::{PieceRef, pack_name, read_piece};
use crate::repo::Repo;

/// Bytes of values per batch a restore writes: enough to cross a network in few round trips
/// (100 MiB/s at 20 ms), small enough that the batch and the store's copy of it stay a few
/// MiB.
const BATCH_BYTES: usize = 2 << 20;

/// The objects of a backup, by table and key, in memory.
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

/// The ids of the backups from the first (no parent) to `id`. With `check`, each manifest is
/// read through and checked, and the last one's head (with its totals) is returned; without,
/// only heads are read (a stream over them checks the rest).
pub(crate) fn chain_ids(repo: &Repo, id: u64, check: bool) -> Result<(Vec<u64>, Manifest)> {
    let head =
        |id| if check { repo.manifest_head(id) } else { Ok(repo.manifest_reader(id)?.into_head()) };
    let last = head(id)?;
    let mut ids = vec![id];
    let mut parent = last.parent;
    while parent != 0 {
        if ids.len() > 1_000_000 || parent >= *ids.last().expect("one") {
            let path = repo.manifest_path(*ids.last().expect("one"));
            return Err(crate::error::damaged(&path, "its parent chain loops"));
        }
        ids.push(parent);
        parent = head(parent)?.parent;
    }
    ids.reverse();
    Ok((ids, last))
}

/// A manifest read from its file.
type ManifestFileReader = ManifestReader<BufReader<File>>;

/// One object of a backup, as [`StateStream`] yields it.
pub(crate) type StateItem = (Rc<str>, Vec<u8>, Put);

/// A backup's objects in order of table name and key, merged from the manifests of its
/// chain as they are read (the newest entry of a key wins; a removal hides it). Each
/// manifest is checked whole by the time the stream ends; an error ends the stream.
pub(crate) struct StateStream {
    /// Each manifest of the chain, with its tables' names.
    readers: Vec<(ManifestFileReader, Vec<Rc<str>>)>,
    heap: BinaryHeap<Reverse<Head>>,
    failed: bool,
}

/// The next entry of one manifest of the chain.
struct Head {
    table: Rc<str>,
    key: Vec<u8>,
    /// Newer manifests first among equal keys.
    newer: Reverse<usize>,
    put: Option<Put>,
}

impl Head {
    fn order(&self) -> (&str, &[u8], Reverse<usize>) {
        (&self.table, &self.key, self.newer)
    }
}

impl PartialEq for Head {
    fn eq(&self, other: &Self) -> bool {
        self.order() == other.order()
    }
}
impl Eq for Head {}
impl PartialOrd for Head {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Head {
    fn cmp(&self, other: &Self) -> Ordering {
        self.order().cmp(&other.order())
    }
}

impl StateStream {
    /// The objects of the backup whose chain is `chain` (oldest first).
    pub(crate) fn open(repo: &Repo, chain: &[u64]) -> Result<StateStream> {
        let mut s = StateStream { readers: Vec::new(), heap: BinaryHeap::new(), failed: false };
        for &id in chain {
            let r = repo.manifest_reader(id)?;
            let tables = r.head().tables.iter().map(|t| Rc::from(t.as_str())).collect();
            s.readers.push((r, tables));
        }
        for i in 0..s.readers.len() {
            s.refill(i)?;
        }
        Ok(s)
    }

    /// Every table a manifest of the chain lists, in name order.
    pub(crate) fn tables(&self) -> Vec<String> {
        let mut t: Vec<String> =
            self.readers.iter().flat_map(|(r, _)| r.head().tables.iter().cloned()).collect();
        t.sort();
        t.dedup();
        t
    }

    /// Reads manifest `i`'s next entry into the heap.
    fn refill(&mut self, i: usize) -> Result<()> {
        let (r, tables) = &mut self.readers[i];
        if let Some(e) = r.next_entry()? {
            let table = Rc::clone(&tables[usize::from(e.table)]);
            self.heap.push(Reverse(Head { table, key: e.key, newer: Reverse(i), put: e.put }));
        }
        Ok(())
    }

    fn step(&mut self) -> Result<Option<StateItem>> {
        loop {
            let Some(Reverse(top)) = self.heap.pop() else { return Ok(None) };
            self.refill(top.newer.0)?;
            // The same key in older manifests: overridden.
            while self
                .heap
                .peek()
                .is_some_and(|Reverse(h)| (&*h.table, &h.key[..]) == (&*top.table, &top.key[..]))
            {
                let Reverse(older) = self.heap.pop().expect("peeked");
                self.refill(older.newer.0)?;
            }
            if let Some(put) = top.put {
                return Ok(Some((top.table, top.key, put)));
            }
        }
    }
}

impl Iterator for StateStream {
    type Item = Result<StateItem>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let r = self.step().transpose();
        self.failed = matches!(r, Some(Err(_)));
        r
    }
}

/// One backup's objects. Reading it costs nothing up front beyond checking its manifests;
/// [`get`](Self::get), [`keys`](Self::keys) and [`tables`](Self::tables) index its objects
/// in memory at their first use (about 200 bytes per object), and
/// [`restore_into`](Self::restore_into) streams them.
pub struct BackupContents<'r> {
    repo: &'r Repo,
    last: Manifest,
    chain: Vec<u64>,
    state: OnceCell<State>,
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
    /// Backup `id`'s objects. Every manifest of its chain is read through and checked here
    /// (a damaged one is an error now, not halfway through a restore); none is held.
    pub fn contents(&self, id: u64) -> Result<BackupContents<'_>> {
        let (chain, last) = chain_ids(self, id, true)?;
        Ok(BackupContents {
            repo: self,
            last,
            chain,
            state: OnceCell::new(),
            packs: RefCell::new(HashMap::new()),
        })
    }
}

impl<'r> BackupContents<'r> {
    /// A reader of `repo`'s pieces, holding no backup.
    pub(crate) fn empty(repo: &'r Repo) -> Self {
        BackupContents {
            repo,
            last: Manifest::default(),
            chain: Vec::new(),
            state: OnceCell::new(),
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

    /// How many objects it holds (as its manifest records).
    pub fn len(&self) -> u64 {
        self.last.objects
    }

    /// Whether it holds no object.
    pub fn is_empty(&self) -> bool {
        self.last.objects == 0
    }

    /// Bytes of its objects' values (as its manifest records).
    pub fn bytes(&self) -> u64 {
        self.last.bytes
    }

    /// Its objects in order of table name and key, read from its manifests as they go.
    fn stream(&self) -> Result<StateStream> {
        StateStream::open(self.repo, &self.chain)
    }

    /// Its objects indexed in memory (built at the first call).
    fn state(&self) -> Result<&State> {
        if let Some(s) = self.state.get() {
            return Ok(s);
        }
        let mut state = State::new();
        for item in self.stream()? {
            let (t, k, p) = item?;
            state.insert((t.to_string(), k), p);
        }
        Ok(self.state.get_or_init(|| state))
    }

    /// The tables it holds objects of.
    pub fn tables(&self) -> Result<Vec<String>> {
        let mut t: Vec<String> = Vec::new();
        for (table, _) in self.state()?.keys() {
            if t.last() != Some(table) {
                t.push(table.clone());
            }
        }
        Ok(t)
    }

    /// The keys of `table`'s objects, in order, with their versions.
    pub fn keys<'a>(
        &'a self,
        table: &'a str,
    ) -> Result<impl Iterator<Item = (&'a [u8], i64)> + 'a> {
        Ok(self
            .state()?
            .range((table.to_string(), Vec::new())..)
            .take_while(move |((t, _), _)| t == table)
            .map(|((_, k), p)| (k.as_slice(), p.version)))
    }

    /// The object `key` of `table`, read from its pack and checked against its checksum and
    /// SHA-256 (a damaged or missing piece is an error, never other bytes).
    pub fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        let Some(p) = self.state()?.get(&(table.to_string(), key.to_vec())) else {
            return Ok(None);
        };
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
    /// again. Memory does not grow with the backup: its objects are streamed from its
    /// manifests, three times (check, write, remove the rest).
    pub fn restore_into(&self, store: &dyn Store, allow_damaged: bool) -> Result<RestoreReport> {
        self.restore_into_with(store, allow_damaged, &mut |_, _| {})
    }

    /// [`restore_into`](Self::restore_into), calling `progress(done, total)` as it goes:
    /// bytes of values checked and then written, out of twice the backup's bytes.
    pub fn restore_into_with(
        &self,
        store: &dyn Store,
        allow_damaged: bool,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<RestoreReport> {
        let target_tables = store.tables();
        let total = self.last.bytes.saturating_mul(2);
        let mut done = 0u64;
        let mut report = RestoreReport::default();
        // 1. Check every piece (and every manifest, whole, as the stream ends).
        let mut bad: HashSet<PieceRef> = HashSet::new();
        for item in self.stream()? {
            let (t, k, p) = item?;
            if !target_tables.iter().any(|x| **x == *t) {
                return Err(Error::TableMissing(t.to_string()));
            }
            if self.read(&p.piece).is_err() {
                report.damaged.push((t.to_string(), k));
                bad.insert(p.piece);
            }
            done += u64::from(p.piece.raw_len);
            progress(done, total);
        }
        if !report.damaged.is_empty() && !allow_damaged {
            return Err(Error::DamagedObjects { id: self.id(), objects: report.damaged });
        }
        // 2. Write them.
        let mut batch = Batch::new();
        let mut pending = 0;
        for item in self.stream()? {
            let (t, k, p) = item?;
            done += u64::from(p.piece.raw_len);
            if bad.contains(&p.piece) {
                continue;
            }
            let data = self.read(&p.piece)?;
            pending += data.len();
            report.objects += 1;
            report.bytes += data.len() as u64;
            batch.put(&t, k, p.version, data);
            if pending >= BATCH_BYTES {
                store.write(&std::mem::take(&mut batch))?;
                pending = 0;
                progress(done, total);
            }
        }
        // 3. Remove what the backup does not hold: the store's keys, table by table in name
        // order, walked beside the backup's.
        let mut tables = target_tables;
        tables.sort();
        let mut objects = self.stream()?.peekable();
        let snap = store.snapshot()?;
        for t in &tables {
            for entry in snap.scan(t, KeyRange::all())? {
                let (k, _) = entry?;
                let mut keep = false;
                loop {
                    let next = match objects.peek() {
                        Some(Ok((bt, bk, p))) => (&**bt, &bk[..], p.piece),
                        Some(Err(_)) => {
                            return Err(objects.next().expect("peeked").expect_err("an error"));
                        }
                        None => break,
                    };
                    match (next.0, next.1).cmp(&(t.as_str(), &k[..])) {
                        Ordering::Less => {
                            objects.next();
                        }
                        Ordering::Equal => {
                            keep = !bad.contains(&next.2);
                            break;
                        }
                        Ordering::Greater => break,
                    }
                }
                if !keep {
                    batch.delete(t, k);
                    report.removed += 1;
                }
            }
        }
        drop(snap);
        store.write(&batch.synced())?;
        progress(total, total);
        Ok(report)
    }
}

#[cfg(test)]
mod tests {
    use terrane_store::{MemStore, ReadView as _, Store as _, StoreConfig};

    use super::*;
    use crate::BackupOptions;

    fn two_backups(dir: &std::path::Path) -> Repo {
        let store = MemStore::open(&StoreConfig::new("s").table("t").table("u")).unwrap();
        let repo = Repo::open_or_create(dir.join("repo")).unwrap();
        store.put("t", b"a", 1, b"one").unwrap();
        store.put("u", b"b", 1, b"two").unwrap();
        repo.backup(&store, &BackupOptions::default()).unwrap();
        store.put("t", b"c", 2, b"three").unwrap();
        repo.backup(&store, &BackupOptions::default()).unwrap();
        repo
    }

    /// A manifest naming itself (or a newer backup) as its parent is damage, not a loop
    /// followed for ever.
    #[test]
    fn a_parent_chain_that_loops_is_damage() {
        let dir = tempfile::tempdir().unwrap();
        let repo = two_backups(dir.path());
        let mut m = repo.manifest(2).unwrap();
        m.parent = 2;
        repo.write_manifest(&m).unwrap();
        match repo.contents(2) {
            Err(e @ Error::Damaged { .. }) => assert!(e.to_string().contains("loops"), "{e}"),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("a looping chain was read"),
        }
    }

    /// A store without one of the backup's tables is refused before anything is written.
    #[test]
    fn a_restore_into_a_store_without_a_table_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let repo = two_backups(dir.path());
        let target = MemStore::open(&StoreConfig::new("s").table("t")).unwrap();
        target.put("t", b"kept", 9, b"as it was").unwrap();
        match repo.contents(2).unwrap().restore_into(&target, false) {
            Err(Error::TableMissing(t)) => assert_eq!(t, "u"),
            other => panic!("{other:?}"),
        }
        let left: Vec<_> =
            target.scan("t", KeyRange::all()).unwrap().map(|r| r.unwrap().0).collect();
        assert_eq!(left, [b"kept".to_vec()]);
    }
}
