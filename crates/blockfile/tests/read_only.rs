//! Read-only opens write nothing: not on a clean store, not on one whose index a crash tore
//! (the recovery scan runs in memory), not on a file with a partial last block; they work on
//! a file without write permission, and every write fails with `Error::ReadOnly`.

mod common;

use common::{build, config, state};
use terrane_blockfile::BlockFile;
use terrane_store::{Batch, Error, OpenMode, ReadView, Store, tables};

#[test]
fn a_read_only_open_of_a_clean_store_writes_nothing_and_refuses_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.tbf");
    let model = build(&path);
    let bytes = std::fs::read(&path).unwrap();
    let s = BlockFile::open(&path, &config().read_only(true)).unwrap();
    assert_eq!(state(&s), model);
    assert!(s.verify().unwrap().is_empty());
    assert!(matches!(s.put(tables::ENTITY, b"x", 1, b"y"), Err(Error::ReadOnly(p)) if p == path));
    assert!(matches!(s.write(&Batch::new().synced()), Err(Error::ReadOnly(_))));
    s.flush().unwrap();
    s.sync().unwrap();
    drop(s);
    assert!(std::fs::read(&path).unwrap() == bytes, "a read-only open changed the file");
    // A missing store is not created.
    for mode in [OpenMode::Open, OpenMode::OpenOrCreate, OpenMode::Create] {
        let missing = dir.path().join("missing.tbf");
        let r = BlockFile::open(&missing, &config().mode(mode).read_only(true));
        assert!(matches!(r, Err(Error::NotFound(_))), "{mode:?}");
        assert!(!missing.exists());
    }
}

#[test]
fn a_read_only_open_of_a_torn_index_recovers_in_memory_only() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = dir.path().join("pristine.tbf");
    let model = build(&pristine);
    let mut after = model.clone();
    let mut b = Batch::new();
    for i in 0..150u32 {
        let k = format!("new-{i:04}").into_bytes();
        b.put(tables::ENTITY, k.clone(), 9, vec![i as u8; 50]);
        after.insert(
            (tables::ENTITY.to_string(), k),
            terrane_store::Object::new(9, vec![i as u8; 50]),
        );
    }
    let work = dir.path().join("w.tbf");
    let mut torn = 0;
    for n in 1..=8 {
        std::fs::copy(&pristine, &work).unwrap();
        {
            let s = BlockFile::open(&work, &config()).unwrap();
            s.simulate_crash_at(Some(n));
            let _ = s.write(&b);
        }
        let bytes = std::fs::read(&work).unwrap();
        let s = BlockFile::open(&work, &config().read_only(true)).unwrap();
        let got = state(&s);
        assert!(got == model || got == after, "crash at I/O #{n}: not a whole state");
        if s.recovery().scanned {
            torn += 1;
            assert!(s.recovery().is_clean(), "{:?}", s.recovery());
            assert_eq!(got, after, "a torn index means the batch was complete");
        }
        drop(s);
        assert!(std::fs::read(&work).unwrap() == bytes, "crash at I/O #{n}: read-only wrote");
        // A writer then makes the recovery permanent.
        let s = BlockFile::open(&work, &config()).unwrap();
        assert_eq!(state(&s), got);
    }
    assert!(torn > 0, "no crash point tore the index");
}

#[test]
fn a_partial_last_block_is_ignored_read_only_and_cut_by_a_writer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.tbf");
    let model = build(&path);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.extend_from_slice(&[0xab; 1000]);
    std::fs::write(&path, &bytes).unwrap();
    let s = BlockFile::open(&path, &config().read_only(true)).unwrap();
    assert!(s.recovery().truncated_tail && s.recovery().is_clean());
    assert_eq!(state(&s), model);
    drop(s);
    assert!(std::fs::read(&path).unwrap() == bytes);
    let s = BlockFile::open(&path, &config()).unwrap();
    assert!(s.recovery().truncated_tail);
    assert_eq!(std::fs::metadata(&path).unwrap().len() % 4096, 0);
    assert_eq!(state(&s), model);
}

#[test]
fn a_file_without_write_permission_opens_read_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.tbf");
    let model = build(&path);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
    let s = BlockFile::open(&path, &config().read_only(true)).unwrap();
    assert_eq!(state(&s), model);
    assert_eq!(s.get(tables::ENTITY, b"nothing").unwrap(), None);
    drop(s);
    assert!(std::fs::read(&path).unwrap() == bytes);
    // Permissions are enforced unless we run as root.
    if std::fs::OpenOptions::new().write(true).open(&path).is_err() {
        assert!(matches!(BlockFile::open(&path, &config()), Err(Error::Io(_))));
    }
}
