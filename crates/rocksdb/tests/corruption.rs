//! Damaged RocksDB files (truncated or flipped SST, MANIFEST, CURRENT, blob and log files):
//! a typed error at open or at read, never a panic, never wrong data.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use terrane_rocksdb::{RocksOptions, RocksStore};
use terrane_store::conformance::Rng;
use terrane_store::{Batch, KeyRange, Object, OpenMode, ReadView, Store, StoreConfig, tables};

type Model = BTreeMap<(String, Vec<u8>), Object>;

fn options() -> RocksOptions {
    // Small blobs so that blob files exist too.
    RocksOptions::new().block_cache_bytes(4 << 20).min_blob_size(4096)
}

fn config() -> StoreConfig {
    StoreConfig::new("terrane corruption test").mode(OpenMode::Open)
}

fn build(dir: &Path) -> Model {
    let s = RocksStore::open_with(dir, &config().mode(OpenMode::Create), &options()).unwrap();
    let mut rng = Rng::new(21);
    let mut model = Model::new();
    for v in 0..2 {
        let mut b = Batch::new();
        for i in 0..60u32 {
            let t = [tables::CHUNK_L0, tables::ENTITY, tables::CHUNK_L2][(i % 3) as usize];
            let k = format!("k{:03}", rng.below(60)).into_bytes();
            let len = rng.below(9000) as usize;
            let data = rng.bytes(len);
            b.put(t, k.clone(), v, data.clone());
            model.insert((t.to_string(), k), Object::new(v, data));
        }
        s.write(&b.synced()).unwrap();
        s.flush().unwrap();
    }
    model
}

fn copy_dir(from: &Path, to: &Path) {
    let _ = std::fs::remove_dir_all(to);
    terrane_store::conformance::copy_dir(from, to).unwrap();
}

/// Opens a damaged copy: a typed error, or reads that are right or fail.
fn check(dir: &Path, model: &Model, what: &str) -> &'static str {
    let s = match RocksStore::open_with(dir, &config(), &options()) {
        Err(_) => return "error at open",
        Ok(s) => s,
    };
    let mut outcome = "opened";
    for ((t, k), want) in model {
        match s.get(t, k) {
            Ok(Some(got)) => assert_eq!(&got, want, "{what}: wrong data for {t}/{k:?}"),
            Ok(None) => panic!("{what}: {t}/{k:?} silently missing"),
            Err(_) => outcome = "read error",
        }
    }
    for t in [tables::CHUNK_L0, tables::ENTITY, tables::CHUNK_L2] {
        let mut n = 0;
        let mut failed = false;
        for item in s.scan(t, KeyRange::all()).unwrap() {
            match item {
                Ok((k, o)) => {
                    assert_eq!(
                        model.get(&(t.to_string(), k.clone())),
                        Some(&o),
                        "{what}: scan of {t}"
                    );
                    n += 1;
                }
                Err(_) => failed = true,
            }
        }
        let want = model.keys().filter(|k| k.0 == t).count();
        assert!(failed || n == want, "{what}: scan of {t} silently returned {n} of {want}");
        if failed {
            outcome = "read error";
        }
    }
    outcome
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let n = p.file_name().unwrap().to_string_lossy().into_owned();
            n.ends_with(".sst")
                || n.ends_with(".blob")
                || n.starts_with("MANIFEST")
                || n == "CURRENT"
        })
        .collect();
    v.sort();
    v
}

#[test]
fn damaged_files_give_errors_not_wrong_data() {
    let tmp = tempfile::tempdir().unwrap();
    let pristine = tmp.path().join("pristine");
    let model = build(&pristine);
    let work = tmp.path().join("work");
    let names: Vec<_> =
        files(&pristine).iter().map(|p| p.file_name().unwrap().to_owned()).collect();
    assert!(names.iter().any(|n| n.to_string_lossy().ends_with(".sst")));
    assert!(names.iter().any(|n| n.to_string_lossy().ends_with(".blob")), "{names:?}");
    let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
    for name in &names {
        let len = std::fs::metadata(pristine.join(name)).unwrap().len() as usize;
        // Truncations: empty, half.
        for cut in [0, len / 2] {
            copy_dir(&pristine, &work);
            let f = std::fs::OpenOptions::new().write(true).open(work.join(name)).unwrap();
            f.set_len(cut as u64).unwrap();
            let o = check(&work, &model, &format!("{name:?} truncated to {cut}"));
            *outcomes.entry(o).or_default() += 1;
        }
        // Flipped bytes: data (middle) and the footer or record tail.
        for at in [len / 2, len.saturating_sub(60)] {
            if at >= len {
                continue;
            }
            copy_dir(&pristine, &work);
            let mut bytes = std::fs::read(work.join(name)).unwrap();
            bytes[at] ^= 0x41;
            std::fs::write(work.join(name), &bytes).unwrap();
            let o = check(&work, &model, &format!("{name:?} byte {at} flipped"));
            *outcomes.entry(o).or_default() += 1;
        }
    }
    // A missing CURRENT file: the directory is no longer a store.
    copy_dir(&pristine, &work);
    std::fs::remove_file(work.join("CURRENT")).unwrap();
    assert!(RocksStore::open_with(&work, &config(), &options()).is_err());
    eprintln!("outcomes: {outcomes:?}");
    assert!(outcomes.contains_key("error at open"));
}

/// Acknowledged batches that live only in the write-ahead log (never flushed: the writer died
/// without closing the store): a damaged record before the log's tail is an error at open,
/// never a store that silently lost the batches after it; a torn tail (a crash mid-append)
/// opens with every earlier batch intact.
#[test]
fn damaged_write_ahead_log_is_an_error_not_silent_loss() {
    let tmp = tempfile::tempdir().unwrap();
    let pristine = tmp.path().join("pristine");
    let mut model = Model::new();
    {
        let s =
            RocksStore::open_with(&pristine, &config().mode(OpenMode::Create), &options()).unwrap();
        let mut rng = Rng::new(5);
        for v in 0..40 {
            let mut b = Batch::new();
            let k = format!("k{v:03}").into_bytes();
            let data = rng.bytes(300);
            b.put(tables::CHUNK_L0, k.clone(), v, data.clone());
            model.insert((tables::CHUNK_L0.to_string(), k), Object::new(v, data));
            s.write(&b.synced()).unwrap();
        }
        // Not closed: a clean close flushes the memtables and deletes the log. What a killed
        // writer leaves (its files stay as they are; the leak ends with the test process).
        std::mem::forget(s);
    }
    let logs: Vec<_> = std::fs::read_dir(&pristine)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".log"))
        .collect();
    let log = logs.iter().max_by_key(|n| std::fs::metadata(pristine.join(n)).unwrap().len());
    let log = log.expect("the batches are in a write-ahead log");
    let len = std::fs::metadata(pristine.join(log)).unwrap().len() as usize;
    assert!(len > 40 * 300, "every batch is still in the log ({len} bytes)");
    // Undamaged: everything is there.
    let work = tmp.path().join("work");
    copy_dir(&pristine, &work);
    assert_eq!(check(&work, &model, "intact log"), "opened");
    // A flipped byte a third of the way in: batches after it were acknowledged as synced.
    copy_dir(&pristine, &work);
    let mut bytes = std::fs::read(work.join(log)).unwrap();
    bytes[len / 3] ^= 0x41;
    std::fs::write(work.join(log), &bytes).unwrap();
    let o = check(&work, &model, "log byte flipped");
    assert_ne!(o, "opened", "a damaged log record must not open as a complete store");
    // A torn tail: the last record loses its end. Every earlier batch is intact.
    copy_dir(&pristine, &work);
    let f = std::fs::OpenOptions::new().write(true).open(work.join(log)).unwrap();
    f.set_len((len - 100) as u64).unwrap();
    let s = RocksStore::open_with(&work, &config(), &options()).expect("a torn tail opens");
    let mut present = 0;
    for ((t, k), want) in &model {
        match s.get(t, k).unwrap() {
            Some(got) => {
                assert_eq!(&got, want, "torn tail: wrong data for {k:?}");
                present += 1;
            }
            None => assert_eq!(present, want.version as usize, "only the newest batch may go"),
        }
    }
    assert!(present >= model.len() - 1, "torn tail lost {} batches", model.len() - present);
}

#[test]
fn signature_and_strangers() {
    use terrane_store::Error;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path().join("db");
    RocksStore::open(&d, &StoreConfig::new("game A")).unwrap();
    assert!(matches!(
        RocksStore::open(&d, &StoreConfig::new("game B")),
        Err(Error::SignatureMismatch { .. })
    ));
    let other = tmp.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("notes.txt"), b"hello").unwrap();
    assert!(matches!(
        RocksStore::open(&other, &StoreConfig::new("game A")),
        Err(Error::NotAStore { .. })
    ));
}

#[test]
fn unsigned_databases_adopted_only_when_empty() {
    use terrane_store::Error;
    let tmp = tempfile::tempdir().unwrap();
    let mut opts = rocksdb::Options::default();
    opts.create_if_missing(true);
    // A creation cut off before the signature write: RocksDB's files, no key. Opening
    // finishes it.
    let empty = tmp.path().join("empty");
    drop(rocksdb::DB::open(&opts, &empty).unwrap());
    let s = RocksStore::open(&empty, &StoreConfig::new("game A").mode(OpenMode::Open)).unwrap();
    s.put(tables::CHUNK_L0, b"k", 1, b"v").unwrap();
    drop(s);
    assert!(matches!(
        RocksStore::open(&empty, &StoreConfig::new("game B")),
        Err(Error::SignatureMismatch { .. })
    ));
    // A stranger's database with data is refused and left untouched.
    let stranger = tmp.path().join("stranger");
    let db = rocksdb::DB::open(&opts, &stranger).unwrap();
    db.put(b"their key", b"their value").unwrap();
    drop(db);
    assert!(matches!(
        RocksStore::open(&stranger, &StoreConfig::new("game A")),
        Err(Error::NotAStore { .. })
    ));
    assert_eq!(rocksdb::DB::list_cf(&opts, &stranger).unwrap(), ["default"], "no table added");
    let db = rocksdb::DB::open(&opts, &stranger).unwrap();
    assert_eq!(db.get(terrane_rocksdb::SIGNATURE_KEY).unwrap(), None);
    assert_eq!(db.get(b"their key").unwrap().as_deref(), Some(&b"their value"[..]));
}

#[test]
fn backup_is_a_consistent_openable_copy() {
    let tmp = tempfile::tempdir().unwrap();
    let s =
        RocksStore::open_with(tmp.path().join("db"), &StoreConfig::new("b"), &options()).unwrap();
    s.put(tables::CHUNK_L0, b"a", 1, &[1; 5000]).unwrap();
    s.put(tables::CHUNK_L2, b"big", 1, &vec![7; 2 << 20]).unwrap();
    s.checkpoint(tmp.path().join("backup")).unwrap();
    s.put(tables::CHUNK_L0, b"a", 2, b"after the backup").unwrap();
    let b =
        RocksStore::open(tmp.path().join("backup"), &StoreConfig::new("b").mode(OpenMode::Open))
            .unwrap();
    assert_eq!(b.get(tables::CHUNK_L0, b"a").unwrap(), Some(Object::new(1, vec![1; 5000])));
    assert_eq!(b.get(tables::CHUNK_L2, b"big").unwrap().unwrap().data.len(), 2 << 20);
    assert!(s.checkpoint(tmp.path().join("backup")).is_err(), "backup over an existing directory");
    s.compact().unwrap();
    assert_eq!(s.get(tables::CHUNK_L0, b"a").unwrap().unwrap().version, 2);
}
