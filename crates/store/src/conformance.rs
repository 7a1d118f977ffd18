//! The conformance suite: the behaviour every [`Store`] backend must have, run unmodified by
//! each backend's tests (feature `conformance`).
//!
//! ```
//! # use terrane_store::{MemStore, conformance};
//! conformance::run_all(|| MemStore::open(&conformance::config("mem")).unwrap());
//! ```
//!
//! Persistent backends also run [`run_persistent`], which reopens stores from a directory:
//!
//! ```ignore
//! conformance::run_persistent(|dir, config| MyStore::open(dir.join("db"), config));
//! ```
//!
//! Every check panics with a message naming the check when the backend misbehaves.

use std::collections::BTreeMap;
use std::path::Path;

pub mod child;
pub mod crash;
pub mod creation;
pub mod full_disk;
pub mod process_lock;
pub mod syscall_faults;

use crate::{
    Batch, Error, KeyRange, MAX_KEY_LEN, Object, OpenMode, Parts, ReadView, Store, StoreConfig,
    cut_parts, tables,
};

/// A small deterministic generator (xorshift64*), so the suite needs no dependencies.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed (any value).
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}

/// Copies a folder tree (files and folders) into `to`, creating it: a store's directory as a
/// process left it, to open a copy (the crash and fault harnesses' checks, damaged copies).
pub fn copy_dir(from: &Path, to: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(to)?;
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// Whether process `pid` is running (Linux `/proc`): a zombie, finished but not yet reaped,
/// is not.
pub fn process_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        // The state follows the parenthesised name.
        s.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}

/// Reads a whole scan, panicking on errors.
pub fn collect(view: &dyn ReadView, table: &str, range: KeyRange) -> Vec<(Vec<u8>, Object)> {
    view.scan(table, range)
        .unwrap_or_else(|e| panic!("scan of {table} failed: {e}"))
        .map(|r| r.unwrap_or_else(|e| panic!("scan item of {table} failed: {e}")))
        .collect()
}

/// Every object of `store`, by table and key: a whole store to compare with another.
pub fn dump(store: &dyn Store) -> std::collections::BTreeMap<(String, Vec<u8>), Object> {
    let mut out = std::collections::BTreeMap::new();
    for t in store.tables() {
        for (k, o) in collect(store, &t, KeyRange::all()) {
            out.insert((t.clone(), k), o);
        }
    }
    out
}

/// Runs every in-memory check, each on a fresh store from `make`. The store must have the
/// design's tables ([`tables::ALL`]) plus a table named `extra`.
pub fn run_all<S: Store>(mut make: impl FnMut() -> S) {
    type Check = fn(&dyn Store);
    let checks: &[(&str, Check)] = &[
        ("tables", check_tables),
        ("put_get_delete", check_put_get_delete),
        ("keys_and_values", check_keys_and_values),
        ("multi_get", check_multi_get),
        ("get_parts", check_get_parts),
        ("table_isolation", check_table_isolation),
        ("errors", check_errors),
        ("ordered_scans", check_ordered_scans),
        ("prefix_scans", check_prefix_scans),
        ("batches", check_batches),
        ("invalid_batch_changes_nothing", check_invalid_batch),
        ("preconditions", check_preconditions),
        ("concurrent_preconditions", check_concurrent_preconditions),
        ("snapshots", check_snapshots),
        ("scan_is_consistent", check_scan_consistency),
        ("large_values", check_large_values),
        ("many_objects", check_many_objects),
        ("model", check_model),
    ];
    for (name, check) in checks {
        let store = make();
        eprintln!("conformance: {name}");
        check(&store);
    }
}

/// The tables [`run_all`] expects: the design's plus `extra`.
pub fn config(signature: &str) -> StoreConfig {
    StoreConfig::new(signature).table("extra")
}

/// Runs the checks that reopen stores. `open(dir, config)` opens (or creates, per
/// `config.mode`) the backend's store inside the empty directory `dir`, always at the same
/// place for the same `dir`.
pub fn run_persistent<S: Store>(mut open: impl FnMut(&Path, &StoreConfig) -> crate::Result<S>) {
    let tmp = tempfile::tempdir().expect("temporary directory");
    let dir = tmp.path();
    eprintln!("conformance: persistent/create_open_modes");
    let sig = "terrane conformance v1";
    match open(dir, &config(sig).mode(OpenMode::Open)) {
        Err(Error::NotFound(_)) => {}
        Err(e) => panic!("opening a missing store must be NotFound, got {e}"),
        Ok(_) => panic!("opening a missing store with OpenMode::Open must fail"),
    }
    {
        let s = open(dir, &config(sig).mode(OpenMode::Create)).expect("create");
        assert_eq!(s.signature(), sig);
        let mut b = Batch::new();
        b.put(tables::CHUNK_L0, b"k1".to_vec(), 7, b"v1".to_vec())
            .put(tables::ENTITY, b"e".to_vec(), -3, vec![9u8; 10_000])
            .put("extra", b"x".to_vec(), 1, b"".to_vec());
        s.write(&b.synced()).expect("write");
        s.put(tables::CHUNK_L0, b"k2", 1, b"unsynced but flushed").unwrap();
        s.delete(tables::ENTITY, b"missing").unwrap();
        s.flush().unwrap();
        s.sync().unwrap();
    }
    match open(dir, &config(sig).mode(OpenMode::Create)) {
        Err(Error::AlreadyExists(_)) => {}
        Err(e) => panic!("creating over a store must be AlreadyExists, got {e}"),
        Ok(_) => panic!("creating over an existing store must fail"),
    }
    eprintln!("conformance: persistent/signature_checked");
    match open(dir, &config("another game v2").mode(OpenMode::Open)) {
        Err(Error::SignatureMismatch { expected, found }) => {
            assert_eq!(expected, "another game v2");
            assert_eq!(found, sig);
        }
        Err(e) => panic!("wrong signature must be SignatureMismatch, got {e}"),
        Ok(_) => panic!("opening with a wrong signature must fail"),
    }
    eprintln!("conformance: persistent/reopen_keeps_data");
    {
        let s = open(dir, &config(sig).mode(OpenMode::Open)).expect("reopen");
        assert_eq!(s.get(tables::CHUNK_L0, b"k1").unwrap(), Some(Object::new(7, b"v1".to_vec())));
        assert_eq!(s.get(tables::CHUNK_L0, b"k2").unwrap().unwrap().data, b"unsynced but flushed");
        assert_eq!(s.get(tables::ENTITY, b"e").unwrap(), Some(Object::new(-3, vec![9u8; 10_000])));
        assert_eq!(s.get("extra", b"x").unwrap(), Some(Object::new(1, Vec::new())));
        s.delete(tables::CHUNK_L0, b"k1").unwrap();
        s.put(tables::CHUNK_L0, b"k2", 2, b"second").unwrap();
        s.sync().unwrap();
    }
    eprintln!("conformance: persistent/new_table_at_reopen");
    {
        let s =
            open(dir, &config(sig).table("added").mode(OpenMode::OpenOrCreate)).expect("reopen");
        assert!(s.tables().contains(&"added".to_string()), "declared table missing");
        assert_eq!(s.get(tables::CHUNK_L0, b"k1").unwrap(), None, "delete lost at reopen");
        assert_eq!(
            s.get(tables::CHUNK_L0, b"k2").unwrap(),
            Some(Object::new(2, b"second".to_vec()))
        );
        s.put("added", b"a", 1, b"in the new table").unwrap();
        s.sync().unwrap();
    }
    {
        let s = open(dir, &config(sig).table("added").mode(OpenMode::Open)).expect("reopen");
        assert_eq!(s.get("added", b"a").unwrap().unwrap().data, b"in the new table");
        let mut tables_now = s.tables();
        tables_now.sort();
        assert_eq!(tables_now, s.tables(), "tables() must be sorted");
    }
    eprintln!("conformance: persistent/model_across_reopens");
    let dir2 = tmp.path().join("model");
    std::fs::create_dir_all(&dir2).unwrap();
    let mut model: BTreeMap<(String, Vec<u8>), Object> = BTreeMap::new();
    let mut rng = Rng::new(42);
    for round in 0..4 {
        let s = open(&dir2, &config(sig)).expect("open for model");
        for (k, v) in &model {
            assert_eq!(s.get(&k.0, &k.1).unwrap().as_ref(), Some(v), "round {round}: {k:?}");
        }
        for t in [tables::CHUNK_L0, tables::ENTITY] {
            let n = collect(&s, t, KeyRange::all()).len();
            assert_eq!(n, model.keys().filter(|k| k.0 == t).count(), "round {round}: count of {t}");
        }
        random_batches(&s, &mut model, &mut rng, 20);
        s.sync().unwrap();
    }
    eprintln!("conformance: persistent/one_writer_or_many_readers");
    {
        let w = open(&dir2, &config(sig)).expect("writer");
        for read_only in [false, true] {
            match open(&dir2, &config(sig).read_only(read_only)) {
                Err(Error::Locked { .. }) => {}
                Err(e) => panic!("a second open beside a writer must be Locked, got {e}"),
                Ok(_) => panic!("a second open (read_only: {read_only}) beside a writer succeeded"),
            }
        }
        drop(w);
    }
    eprintln!("conformance: persistent/read_only_writes_nothing");
    {
        let before = files(&dir2);
        let r1 = open(&dir2, &config(sig).read_only(true)).expect("reader");
        let r2 = open(&dir2, &config(sig).read_only(true)).expect("a second reader");
        for (k, v) in &model {
            assert_eq!(r1.get(&k.0, &k.1).unwrap().as_ref(), Some(v), "read-only: {k:?}");
            assert_eq!(r2.get(&k.0, &k.1).unwrap().as_ref(), Some(v), "read-only: {k:?}");
        }
        match r1.put(tables::CHUNK_L0, b"k", 1, b"v") {
            Err(Error::ReadOnly(_)) => {}
            other => panic!("a write to a read-only store must be ReadOnly, got {other:?}"),
        }
        match open(&dir2, &config(sig)) {
            Err(Error::Locked { .. }) => {}
            Err(e) => panic!("a writer beside readers must be Locked, got {e}"),
            Ok(_) => panic!("a writer opened beside readers"),
        }
        r1.flush().unwrap();
        r1.sync().unwrap();
        drop((r1, r2));
        assert!(before == files(&dir2), "a read-only open changed the store's files");
        let missing = tmp.path().join("missing");
        std::fs::create_dir_all(&missing).unwrap();
        match open(&missing, &config(sig).read_only(true)) {
            Err(Error::NotFound(_)) => {}
            Err(e) => panic!("a read-only open of a missing store must be NotFound, got {e}"),
            Ok(_) => panic!("a read-only open created a store"),
        }
        assert!(files(&missing).is_empty(), "a read-only open of a missing store wrote files");
    }
}

/// The bytes a file may hold after a power loss during the flush that turned `before` into
/// `after` (everything before that flush durable): each 4 KiB page that differs is new, or,
/// with odds `lost_in_64` in 64, old or torn at 512-byte sectors (pages past `before`'s end
/// are zeros until written). A simulation of the power loss at the page level, for backends
/// with one file.
pub fn lose_power(before: &[u8], after: &[u8], lost_in_64: u64, rng: &mut Rng) -> Vec<u8> {
    const PAGE: usize = 4096;
    const SECTOR: usize = 512;
    let mut out = after.to_vec();
    let mut old = before.to_vec();
    old.resize(after.len(), 0);
    for p in 0..after.len() / PAGE {
        let range = p * PAGE..(p + 1) * PAGE;
        if out[range.clone()] == old[range.clone()] || rng.below(64) >= lost_in_64 {
            continue;
        }
        if rng.below(4) < 3 {
            out[range.clone()].copy_from_slice(&old[range]);
        } else {
            for s in range.step_by(SECTOR) {
                if rng.below(2) == 0 {
                    out[s..s + SECTOR].copy_from_slice(&old[s..s + SECTOR]);
                }
            }
        }
    }
    out
}

/// Every file under `dir` with its bytes: compare two of these to prove that something (a
/// read-only open, a read command) wrote nothing.
pub fn files(dir: &Path) -> BTreeMap<std::path::PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("list the store's files") {
            let p = e.expect("directory entry").path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).expect("read a store file"));
            }
        }
    }
    out
}

fn random_batches(
    s: &dyn Store,
    model: &mut BTreeMap<(String, Vec<u8>), Object>,
    rng: &mut Rng,
    n: usize,
) {
    for _ in 0..n {
        let mut b = Batch::new();
        for _ in 0..rng.below(8) + 1 {
            let table = if rng.below(2) == 0 { tables::CHUNK_L0 } else { tables::ENTITY };
            let key = vec![b'k', rng.below(40) as u8];
            if rng.below(4) == 0 {
                b.delete(table, key.clone());
                model.remove(&(table.to_string(), key));
            } else {
                let len = match rng.below(10) {
                    0 => 0,
                    1 => 5000 + rng.below(20_000) as usize,
                    _ => rng.below(300) as usize,
                };
                let obj = Object::new(rng.next_u64() as i64, rng.bytes(len));
                b.put(table, key.clone(), obj.version, obj.data.clone());
                model.insert((table.to_string(), key), obj);
            }
        }
        s.write(&b).expect("model batch");
    }
}

fn check_tables(s: &dyn Store) {
    let t = s.tables();
    for name in tables::ALL.iter().chain(&["extra"]) {
        assert!(t.iter().any(|x| x == name), "table {name} missing from {t:?}");
    }
    let mut sorted = t.clone();
    sorted.sort();
    assert_eq!(sorted, t, "tables() must be sorted");
    assert!(!s.signature().is_empty());
}

fn check_put_get_delete(s: &dyn Store) {
    let t = tables::CHUNK_L0;
    assert_eq!(s.get(t, b"a").unwrap(), None);
    assert!(!s.contains(t, b"a").unwrap());
    s.put(t, b"a", 1, b"one").unwrap();
    assert_eq!(s.get(t, b"a").unwrap(), Some(Object::new(1, b"one".to_vec())));
    assert!(s.contains(t, b"a").unwrap());
    // A new write replaces the old one whatever the version numbers.
    s.put(t, b"a", 0, b"older number, newer write").unwrap();
    assert_eq!(
        s.get(t, b"a").unwrap(),
        Some(Object::new(0, b"older number, newer write".to_vec()))
    );
    s.put(t, b"a", i64::MIN, b"").unwrap();
    assert_eq!(s.get(t, b"a").unwrap(), Some(Object::new(i64::MIN, Vec::new())));
    s.put(t, b"a", i64::MAX, b"max").unwrap();
    assert_eq!(s.get(t, b"a").unwrap().unwrap().version, i64::MAX);
    s.delete(t, b"a").unwrap();
    assert_eq!(s.get(t, b"a").unwrap(), None);
    s.delete(t, b"a").unwrap(); // deleting an absent key is fine
    s.delete(t, b"never").unwrap();
    assert_eq!(collect(s, t, KeyRange::all()), vec![]);
}

fn check_keys_and_values(s: &dyn Store) {
    let t = tables::WORLD_META;
    let long = vec![0xabu8; MAX_KEY_LEN];
    s.put(t, &long, 3, b"long key").unwrap();
    s.put(t, b"", 4, b"empty key").unwrap();
    s.put(t, &[0u8, 0, 0], 5, &[0u8; 3]).unwrap();
    s.put(t, &[0xff; 3], 6, &[0xff; 4097]).unwrap();
    assert_eq!(s.get(t, &long).unwrap().unwrap().data, b"long key");
    assert_eq!(s.get(t, b"").unwrap().unwrap().data, b"empty key");
    assert_eq!(s.get(t, &[0u8, 0, 0]).unwrap().unwrap(), Object::new(5, vec![0u8; 3]));
    assert_eq!(s.get(t, &[0xff; 3]).unwrap().unwrap(), Object::new(6, vec![0xffu8; 4097]));
    assert_eq!(s.get(t, &[0u8, 0]).unwrap(), None, "a key's prefix is another key");
    assert_eq!(s.get(t, &[0u8, 0, 0, 0]).unwrap(), None);
    let keys: Vec<Vec<u8>> = collect(s, t, KeyRange::all()).into_iter().map(|e| e.0).collect();
    assert_eq!(keys, vec![vec![], vec![0, 0, 0], long.clone(), vec![0xff; 3]]);
    // Every block-size boundary of a 4 KiB-block backend, and then some.
    for (i, len) in [4095usize, 4096, 4097, 8191, 8192, 12_000, 40_000].into_iter().enumerate() {
        let data: Vec<u8> = (0..len).map(|j| (j * 31 + i) as u8).collect();
        s.put(tables::CHUNK_L1, &[i as u8], len as i64, &data).unwrap();
    }
    for (i, len) in [4095usize, 4096, 4097, 8191, 8192, 12_000, 40_000].into_iter().enumerate() {
        let o = s.get(tables::CHUNK_L1, &[i as u8]).unwrap().expect("value present");
        assert_eq!(o.version, len as i64);
        assert_eq!(o.data.len(), len);
        assert!(
            o.data.iter().enumerate().all(|(j, b)| *b == (j * 31 + i) as u8),
            "len {len} corrupted"
        );
    }
}

fn check_multi_get(s: &dyn Store) {
    let t = tables::ENTITY;
    for i in 0u8..10 {
        s.put(t, &[i], i as i64, &[i; 3]).unwrap();
    }
    let keys: Vec<&[u8]> = vec![&[3], &[42], &[0], &[3], &[9], b"zz"];
    let got = s.multi_get(t, &keys).unwrap();
    let want: Vec<Option<Object>> = vec![
        Some(Object::new(3, vec![3; 3])),
        None,
        Some(Object::new(0, vec![0; 3])),
        Some(Object::new(3, vec![3; 3])),
        Some(Object::new(9, vec![9; 3])),
        None,
    ];
    assert_eq!(got, want);
    assert_eq!(s.multi_get(t, &[]).unwrap(), vec![]);
}

/// `get_parts` returns exactly the model's slices (cut to the value's length), from one
/// version, on the store and on a snapshot, for values of one block and of many.
// A reversed range must read nothing, and one-range lists are what a caller passes.
#[allow(clippy::reversed_empty_ranges, clippy::single_range_in_vec_init)]
fn check_get_parts(s: &dyn Store) {
    let t = tables::CHUNK_L2;
    let big: Vec<u8> = (0..300_000u32).map(|i| (i * 7 + i / 4093) as u8).collect();
    let small = b"0123456789".to_vec();
    s.put(t, b"big", 3, &big).unwrap();
    s.put(t, b"small", 4, &small).unwrap();
    s.put(t, b"empty", 5, b"").unwrap();
    let ranges: Vec<std::ops::Range<u64>> = vec![
        0..9,
        9..9 + 8 * 64,
        4000..4100,
        4047..4049,
        8096..8097,
        123_456..130_000,
        299_990..300_010,
        300_000..300_001,
        400_000..500_000,
        50..40,
        0..u64::MAX,
    ];
    let check = |view: &dyn ReadView, what: &str| {
        for (key, version, value) in
            [(&b"big"[..], 3, &big), (b"small", 4, &small), (b"empty", 5, &Vec::new())]
        {
            let got = view.get_parts(t, key, &ranges).unwrap().expect("present");
            assert_eq!(got, cut_parts(version, value, &ranges), "{what}: {key:?}");
            assert_eq!(view.get_parts(t, key, &[]).unwrap().unwrap().len, value.len() as u64);
        }
        assert_eq!(view.get_parts(t, b"absent", &ranges).unwrap(), None, "{what}");
    };
    check(s, "store");
    // Two steps: read an "offset" at the start of the value, then the bytes it points at.
    let steps = |view: &dyn ReadView, key: &[u8], want: &[u8], version: i64| {
        let mut then = |p: &Parts| {
            let at = u64::from(p.data[0][0]) * 1000;
            vec![at..at + 5000, p.len - 3..p.len + 10]
        };
        let (a, b) = view.get_parts_then(t, key, &[0..1], &mut then).unwrap().expect("present");
        assert_eq!(a, cut_parts(version, want, &[0..1]));
        let at = u64::from(want[0]) * 1000;
        let len = want.len() as u64;
        assert_eq!(b, cut_parts(version, want, &[at..at + 5000, len - 3..len + 10]));
        let mut never = |_: &Parts| -> Vec<std::ops::Range<u64>> { panic!("absent") };
        assert_eq!(view.get_parts_then(t, b"absent", &[0..1], &mut never).unwrap(), None);
    };
    steps(s, b"big", &big, 3);
    let snap = s.snapshot().unwrap();
    s.put(t, b"big", 6, b"replaced").unwrap();
    check(&*snap, "snapshot");
    steps(&*snap, b"big", &big, 3);
    let now = s.get_parts(t, b"big", &[0..100]).unwrap().unwrap();
    assert_eq!((now.version, now.len, &now.data[0][..]), (6, 8, &b"replaced"[..]));
}

fn check_table_isolation(s: &dyn Store) {
    for (i, t) in tables::ALL.iter().enumerate() {
        s.put(t, b"same key", i as i64, t.as_bytes()).unwrap();
    }
    for (i, t) in tables::ALL.iter().enumerate() {
        assert_eq!(
            s.get(t, b"same key").unwrap(),
            Some(Object::new(i as i64, t.as_bytes().to_vec()))
        );
        assert_eq!(collect(s, t, KeyRange::all()).len(), 1, "{t} sees other tables' keys");
    }
    s.delete(tables::CHUNK_L2, b"same key").unwrap();
    assert_eq!(s.get(tables::CHUNK_L2, b"same key").unwrap(), None);
    assert!(s.get(tables::CHUNK_L1, b"same key").unwrap().is_some());
    assert_eq!(s.get("extra", b"same key").unwrap(), None);
}

fn check_errors(s: &dyn Store) {
    let long = vec![1u8; MAX_KEY_LEN + 1];
    assert!(
        matches!(s.put(tables::ENTITY, &long, 1, b"x"), Err(Error::KeyTooLong { len }) if len == 513)
    );
    assert!(matches!(s.get(tables::ENTITY, &long), Err(Error::KeyTooLong { .. }) | Ok(None)));
    assert!(matches!(s.put("no such table", b"k", 1, b"x"), Err(Error::UnknownTable(_))));
    assert!(matches!(s.get("no such table", b"k"), Err(Error::UnknownTable(_))));
    assert!(matches!(s.scan("no such table", KeyRange::all()), Err(Error::UnknownTable(_))));
    assert!(matches!(s.delete("nope", b"k"), Err(Error::UnknownTable(_))));
    assert_eq!(collect(s, tables::ENTITY, KeyRange::all()), vec![], "a failed put wrote something");
}

fn check_ordered_scans(s: &dyn Store) {
    let t = tables::CHUNK_L0;
    let mut rng = Rng::new(7);
    let mut model = BTreeMap::new();
    for _ in 0..200 {
        let len = rng.below(5) as usize;
        let k = rng.bytes(len);
        let vlen = rng.below(50) as usize;
        let v = rng.bytes(vlen);
        s.put(t, &k, 1, &v).unwrap();
        model.insert(k, v);
    }
    let all = collect(s, t, KeyRange::all());
    let want: Vec<(Vec<u8>, Object)> =
        model.iter().map(|(k, v)| (k.clone(), Object::new(1, v.clone()))).collect();
    assert_eq!(all, want, "full scan must list every key in byte order");
    for _ in 0..50 {
        let (alen, blen) = (rng.below(3) as usize, rng.below(3) as usize);
        let a = rng.bytes(alen);
        let b = rng.bytes(blen);
        let ranges = [
            KeyRange::between(&a, &b),
            KeyRange::new(a.as_slice()..=b.as_slice()),
            KeyRange::from(&a),
            KeyRange::new(..b.as_slice()),
            KeyRange {
                start: std::ops::Bound::Excluded(a.clone()),
                end: std::ops::Bound::Included(b.clone()),
            },
        ];
        for r in ranges {
            let got = collect(s, t, r.clone());
            let want: Vec<_> = want.iter().filter(|(k, _)| r.contains(k)).cloned().collect();
            assert_eq!(got, want, "scan of {r:?}");
        }
    }
    // Scans are lazy iterators: taking a few is fine.
    let first3: Vec<_> =
        s.scan(t, KeyRange::all()).unwrap().take(3).map(|e| e.unwrap().0).collect();
    assert_eq!(first3, want.iter().take(3).map(|e| e.0.clone()).collect::<Vec<_>>());
}

fn check_prefix_scans(s: &dyn Store) {
    let t = tables::CHUNK_L2;
    let keys: Vec<Vec<u8>> = vec![
        vec![0, 0],
        vec![0, 1],
        vec![1],
        vec![1, 0],
        vec![1, 0xff],
        vec![1, 0xff, 0xff],
        vec![2],
        vec![0xff],
        vec![0xff, 0xff, 1],
    ];
    for k in &keys {
        s.put(t, k, 0, k).unwrap();
    }
    let scan =
        |p: &[u8]| -> Vec<Vec<u8>> { s.scan_prefix(t, p).unwrap().map(|e| e.unwrap().0).collect() };
    for p in [&[][..], &[0], &[1], &[1, 0xff], &[0xff], &[0xff, 0xff], &[3], &[1, 0xff, 0xff, 0xff]]
    {
        let want: Vec<Vec<u8>> = keys.iter().filter(|k| k.starts_with(p)).cloned().collect();
        assert_eq!(scan(p), want, "prefix {p:?}");
    }
}

fn check_batches(s: &dyn Store) {
    let mut b = Batch::new();
    b.put(tables::CHUNK_L0, b"c1".to_vec(), 1, vec![1; 10_000])
        .put(tables::CHUNK_L1, b"c2".to_vec(), 1, vec![2; 100])
        .put(tables::ENTITY, b"e1".to_vec(), 1, b"zombie".to_vec())
        .put(tables::WORLD_META, b"player".to_vec(), 1, b"refs c1 e1".to_vec())
        .put(tables::ENTITY, b"e2".to_vec(), 1, b"first".to_vec())
        .delete(tables::ENTITY, b"e2".to_vec())
        .put(tables::ENTITY, b"e3".to_vec(), 1, b"first".to_vec())
        .put(tables::ENTITY, b"e3".to_vec(), 2, b"second".to_vec());
    assert_eq!(b.len(), 8);
    s.write(&b).unwrap();
    assert_eq!(s.get(tables::CHUNK_L0, b"c1").unwrap().unwrap().data, vec![1; 10_000]);
    assert_eq!(s.get(tables::CHUNK_L1, b"c2").unwrap().unwrap().data, vec![2; 100]);
    assert_eq!(s.get(tables::WORLD_META, b"player").unwrap().unwrap().data, b"refs c1 e1");
    assert_eq!(s.get(tables::ENTITY, b"e2").unwrap(), None, "later delete in a batch wins");
    assert_eq!(s.get(tables::ENTITY, b"e3").unwrap(), Some(Object::new(2, b"second".to_vec())));
    let mut b = Batch::new();
    b.delete(tables::CHUNK_L0, b"c1".to_vec())
        .put(tables::CHUNK_L0, b"c1".to_vec(), 5, b"re-put".to_vec())
        .delete(tables::CHUNK_L1, b"c2".to_vec());
    s.write(&b.synced()).unwrap();
    assert_eq!(s.get(tables::CHUNK_L0, b"c1").unwrap(), Some(Object::new(5, b"re-put".to_vec())));
    assert_eq!(s.get(tables::CHUNK_L1, b"c2").unwrap(), None);
    s.write(&Batch::new()).unwrap(); // an empty batch is fine
    s.write(&Batch::new().synced()).unwrap();
}

fn check_invalid_batch(s: &dyn Store) {
    s.put(tables::ENTITY, b"keep", 1, b"old").unwrap();
    let mut b = Batch::new();
    b.put(tables::ENTITY, b"keep".to_vec(), 2, b"new".to_vec())
        .put(tables::CHUNK_L0, b"new".to_vec(), 1, b"x".to_vec())
        .put(tables::CHUNK_L0, vec![0; MAX_KEY_LEN + 1], 1, b"bad".to_vec());
    assert!(matches!(s.write(&b), Err(Error::KeyTooLong { .. })));
    let mut b2 = Batch::new();
    b2.put(tables::ENTITY, b"keep".to_vec(), 3, b"new".to_vec()).delete("no table", b"k".to_vec());
    assert!(matches!(s.write(&b2), Err(Error::UnknownTable(_))));
    assert_eq!(s.get(tables::ENTITY, b"keep").unwrap(), Some(Object::new(1, b"old".to_vec())));
    assert_eq!(s.get(tables::CHUNK_L0, b"new").unwrap(), None, "invalid batch partly applied");
}

fn check_preconditions(s: &dyn Store) {
    let lease = b"lease:area-0".to_vec();
    // Absent: holds for a new key, and the batch applies across tables.
    let mut b = Batch::new();
    b.expect(tables::WORLD_META, lease.clone(), None)
        .put(tables::WORLD_META, lease.clone(), 1, b"server-a".to_vec())
        .put(tables::CHUNK_L0, b"c1".to_vec(), 1, b"a's chunk".to_vec());
    s.write(&b.synced()).expect("a batch whose preconditions hold applies");
    // At a version: holds, and preconditions on several tables.
    let mut b = Batch::new();
    b.expect(tables::WORLD_META, lease.clone(), Some(1))
        .expect(tables::CHUNK_L0, b"c1".to_vec(), Some(1))
        .expect(tables::ENTITY, b"absent".to_vec(), None)
        .put(tables::CHUNK_L0, b"c1".to_vec(), 2, b"a's chunk, later".to_vec())
        .delete(tables::ENTITY, b"nothing".to_vec());
    s.write(&b).expect("preconditions on several tables hold");
    // A takeover raises the lease's version; a's stale save fails whole, on every table.
    s.put(tables::WORLD_META, &lease, 2, b"server-b").unwrap();
    let mut stale = Batch::new();
    stale
        .expect(tables::WORLD_META, lease.clone(), Some(1))
        .put(tables::CHUNK_L0, b"c1".to_vec(), 3, b"stale".to_vec())
        .put(tables::ENTITY, b"e".to_vec(), 3, b"stale".to_vec())
        .delete(tables::CHUNK_L0, b"c1".to_vec());
    match s.write(&stale.synced()) {
        Err(Error::PreconditionFailed { table, key, expected, found }) => {
            assert_eq!(
                (table.as_str(), key, expected, found),
                (tables::WORLD_META, lease.clone(), Some(1), Some(2))
            );
        }
        other => panic!("a stale precondition must be PreconditionFailed, got {other:?}"),
    }
    assert_eq!(
        s.get(tables::CHUNK_L0, b"c1").unwrap(),
        Some(Object::new(2, b"a's chunk, later".to_vec()))
    );
    assert_eq!(s.get(tables::ENTITY, b"e").unwrap(), None, "a failed batch wrote");
    // Expecting absence of a present key fails; so does expecting a deleted key's version.
    let mut b = Batch::new();
    b.expect(tables::CHUNK_L0, b"c1".to_vec(), None).put(
        tables::ENTITY,
        b"e".to_vec(),
        1,
        b"x".to_vec(),
    );
    assert!(matches!(s.write(&b), Err(Error::PreconditionFailed { found: Some(2), .. })));
    s.delete(tables::CHUNK_L0, b"c1").unwrap();
    let mut b = Batch::new();
    b.expect(tables::CHUNK_L0, b"c1".to_vec(), Some(2)).put(
        tables::ENTITY,
        b"e".to_vec(),
        1,
        b"x".to_vec(),
    );
    assert!(matches!(s.write(&b), Err(Error::PreconditionFailed { found: None, .. })));
    assert_eq!(s.get(tables::ENTITY, b"e").unwrap(), None);
    // Preconditions alone (no operation) are checked too; unknown tables are refused.
    let mut only = Batch::new();
    only.expect(tables::WORLD_META, lease.clone(), Some(2));
    s.write(&only).expect("a precondition-only batch that holds");
    only.expect(tables::WORLD_META, lease, Some(1));
    assert!(matches!(s.write(&only), Err(Error::PreconditionFailed { .. })));
    let mut bad = Batch::new();
    bad.expect("no such table", b"k".to_vec(), None);
    assert!(matches!(s.write(&bad), Err(Error::UnknownTable(_))));
}

/// Threads race to take one lease with "absent, then put": exactly one wins.
fn check_concurrent_preconditions(s: &dyn Store) {
    let wins = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|scope| {
        for t in 0..4u8 {
            let wins = &wins;
            scope.spawn(move || {
                for round in 0..20u8 {
                    let key = vec![b'r', round];
                    let mut b = Batch::new();
                    b.expect(tables::WORLD_META, key.clone(), None).put(
                        tables::WORLD_META,
                        key,
                        1,
                        vec![t],
                    );
                    match s.write(&b) {
                        Ok(()) => {
                            wins.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                        Err(Error::PreconditionFailed { .. }) => {}
                        Err(e) => panic!("racing preconditions: {e}"),
                    }
                }
            });
        }
    });
    assert_eq!(wins.into_inner(), 20, "exactly one writer takes each key");
}

fn check_snapshots(s: &dyn Store) {
    let t = tables::CHUNK_L0;
    for i in 0u8..20 {
        s.put(t, &[i], 1, &vec![i; 5000]).unwrap();
    }
    s.put(tables::ENTITY, b"e", 1, b"entity v1").unwrap();
    let snap = s.snapshot().unwrap();
    let mut b = Batch::new();
    for i in 0u8..20 {
        if i % 3 == 0 {
            b.delete(t, vec![i]);
        } else {
            b.put(t, vec![i], 2, vec![i.wrapping_add(100); 7000]);
        }
    }
    b.put(t, vec![200], 2, b"new key".to_vec()).put(
        tables::ENTITY,
        b"e".to_vec(),
        2,
        b"entity v2".to_vec(),
    );
    s.write(&b).unwrap();
    // Churn, so that a backend reusing freed space would overwrite what the snapshot needs.
    for round in 0..3i64 {
        for i in 0u8..20 {
            s.put(t, &[i], 3 + round, &vec![i ^ 0x55; 6000]).unwrap();
        }
    }
    for i in 0u8..20 {
        assert_eq!(
            snap.get(t, &[i]).unwrap(),
            Some(Object::new(1, vec![i; 5000])),
            "snapshot key {i}"
        );
    }
    assert_eq!(snap.get(t, &[200]).unwrap(), None);
    assert_eq!(snap.get(tables::ENTITY, b"e").unwrap().unwrap().data, b"entity v1");
    let keys: Vec<Vec<u8>> = collect(&*snap, t, KeyRange::all()).into_iter().map(|e| e.0).collect();
    assert_eq!(keys, (0u8..20).map(|i| vec![i]).collect::<Vec<_>>());
    let mg = snap.multi_get(t, &[&[0], &[200]]).unwrap();
    assert_eq!(mg, vec![Some(Object::new(1, vec![0; 5000])), None]);
    drop(snap);
    assert_eq!(s.get(t, &[0]).unwrap().unwrap().version, 5);
    assert_eq!(s.get(t, &[200]).unwrap().unwrap().data, b"new key");
    // After the snapshot is gone, writes go on and reads see the latest state.
    for i in 0u8..20 {
        s.put(t, &[i], 9, &[i]).unwrap();
    }
    for i in 0u8..20 {
        assert_eq!(s.get(t, &[i]).unwrap(), Some(Object::new(9, vec![i])));
    }
}

fn check_scan_consistency(s: &dyn Store) {
    let t = tables::ENTITY;
    for i in 0u8..50 {
        s.put(t, &[i], 1, &vec![i; 3000]).unwrap();
    }
    let mut scan = s.scan(t, KeyRange::all()).unwrap();
    let first = scan.next().unwrap().unwrap();
    assert_eq!(first.0, vec![0]);
    for i in 0u8..50 {
        if i % 2 == 0 {
            s.delete(t, &[i]).unwrap();
        } else {
            s.put(t, &[i], 2, &vec![0xee; 4000]).unwrap();
        }
    }
    s.put(t, &[25, 1], 2, b"inserted").unwrap();
    let rest: Vec<_> = scan.map(|e| e.unwrap()).collect();
    assert_eq!(rest.len(), 49, "a scan must not see writes made after it started");
    for (j, (k, o)) in rest.iter().enumerate() {
        let i = j as u8 + 1;
        assert_eq!(k, &vec![i]);
        assert_eq!(o, &Object::new(1, vec![i; 3000]));
    }
}

fn check_large_values(s: &dyn Store) {
    let mut rng = Rng::new(3);
    let big = rng.bytes(3 << 20);
    s.put(tables::CHUNK_L2, b"big", 1, &big).unwrap();
    let mid = rng.bytes(600_000);
    s.put(tables::CHUNK_L1, b"mid", 1, &mid).unwrap();
    assert_eq!(s.get(tables::CHUNK_L2, b"big").unwrap().unwrap().data, big);
    assert_eq!(s.get(tables::CHUNK_L1, b"mid").unwrap().unwrap().data, mid);
    s.put(tables::CHUNK_L2, b"big", 2, b"small now").unwrap();
    assert_eq!(
        s.get(tables::CHUNK_L2, b"big").unwrap(),
        Some(Object::new(2, b"small now".to_vec()))
    );
}

fn check_many_objects(s: &dyn Store) {
    let t = tables::CHUNK_L0;
    let mut b = Batch::with_capacity(2000);
    for i in 0u32..2000 {
        b.put(t, i.to_be_bytes().to_vec(), i as i64, i.to_le_bytes().repeat(8));
    }
    s.write(&b).unwrap();
    let keys: Vec<Vec<u8>> = (0u32..2000).step_by(7).map(|i| i.to_be_bytes().to_vec()).collect();
    let refs: Vec<&[u8]> = keys.iter().map(|k| k.as_slice()).collect();
    let got = s.multi_get(t, &refs).unwrap();
    for (k, o) in keys.iter().zip(got) {
        let i = u32::from_be_bytes(k.as_slice().try_into().unwrap());
        assert_eq!(o, Some(Object::new(i as i64, i.to_le_bytes().repeat(8))));
    }
    let all = collect(s, t, KeyRange::all());
    assert_eq!(all.len(), 2000);
    assert!(all.windows(2).all(|w| w[0].0 < w[1].0));
    let range = collect(s, t, KeyRange::between(&100u32.to_be_bytes(), &200u32.to_be_bytes()));
    assert_eq!(range.len(), 100);
}

fn check_model(s: &dyn Store) {
    let mut model = BTreeMap::new();
    let mut rng = Rng::new(99);
    for step in 0..6 {
        random_batches(s, &mut model, &mut rng, 30);
        for t in [tables::CHUNK_L0, tables::ENTITY] {
            let got = collect(s, t, KeyRange::all());
            let want: Vec<(Vec<u8>, Object)> = model
                .iter()
                .filter(|(k, _)| k.0 == t)
                .map(|(k, v)| (k.1.clone(), v.clone()))
                .collect();
            assert_eq!(got, want, "step {step}: table {t} differs from the model");
        }
    }
}
