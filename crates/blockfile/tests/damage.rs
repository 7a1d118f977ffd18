//! Damage never turns into silent loss. On a store with known content, a truncated file or
//! overwritten bytes that lose objects make a default open fail with `Error::Damaged` naming
//! what is missing, and leave the file's bytes as they were (read-only opens too); a repair
//! open keeps exactly the intact objects and reports each lost one, and `verify` on it
//! reports them. Damage that loses nothing (only free blocks cut, a damaged index that a scan
//! rebuilds exactly) opens normally.

mod common;

use std::collections::BTreeSet;
use std::path::Path;

use common::{
    Id, Model, blocks_of_kind, build, config, hex, live_blocks, lost_to_truncation, state, without,
};
use terrane_blockfile::{BLOCK_SIZE, BlockFile, BlockFileOptions};
use terrane_store::{Batch, Error, Object, ReadView, Store, tables};

fn repair() -> BlockFileOptions {
    BlockFileOptions::new().repair(true)
}

/// Writes `damaged` to `path` and checks refusal, then repair, against `model` minus `lost`.
/// Returns the refusal's message.
fn refused_then_repaired(
    path: &Path,
    damaged: &[u8],
    model: &Model,
    lost: &BTreeSet<Id>,
) -> String {
    std::fs::write(path, damaged).unwrap();
    // The default open refuses and changes nothing.
    let detail = match BlockFile::open(path, &config()) {
        Err(Error::Damaged { path: p, detail }) => {
            assert_eq!(p, path);
            detail
        }
        other => panic!("expected Damaged, got {:?}", other.map(|s| s.recovery().clone())),
    };
    assert!(std::fs::read(path).unwrap() == damaged, "the refused open changed the file");
    // So does a read-only one; a read-only repair shows what a repair keeps, writing nothing.
    let ro = config().read_only(true);
    assert!(matches!(BlockFile::open(path, &ro), Err(Error::Damaged { .. })));
    {
        let s = BlockFile::open_with(path, &ro, &repair()).unwrap();
        assert_eq!(state(&s), without(model, lost));
    }
    assert!(std::fs::read(path).unwrap() == damaged, "a read-only open changed the file");
    // Repair keeps exactly the intact objects and reports each lost one.
    let s = BlockFile::open_with(path, &config(), &repair()).unwrap();
    assert_eq!(state(&s), without(model, lost), "repair kept other than the intact objects");
    let r = s.recovery().clone();
    assert!(!r.is_clean(), "{r:?}");
    for id in &r.damaged {
        assert!(lost.contains(id), "{id:?} reported lost but it is intact");
    }
    if r.objects_expected.is_some() {
        assert_eq!(
            r.damaged.len() as u64 + r.unnamed_losses(),
            lost.len() as u64,
            "every lost object is named or counted: {r:?}"
        );
    } else {
        // Neither the index nor a commit record survived to count them: the report says so.
        assert!(detail.contains("no intact commit record"), "{detail}");
    }
    if let Some((t, k)) = r.damaged.first() {
        assert!(detail.contains(&format!("{t}/{}", hex(k))), "{detail}");
    }
    // `verify` on the repaired store reports the losses.
    let bad = s.verify().unwrap();
    assert!(!bad.is_empty());
    for (t, k) in &r.damaged {
        assert!(bad.iter().any(|b| (&b.0, &b.1) == (t, k)), "verify does not name {t}/{k:?}");
    }
    if r.unnamed_losses() > 0 {
        assert!(bad.iter().any(|b| b.0.is_empty() && b.2.contains("cannot be named")), "{bad:?}");
    }
    drop(s);
    // The repair was written: the next open is clean and holds the intact objects.
    let s = BlockFile::open(path, &config()).unwrap();
    assert!(s.recovery().is_clean() && !s.recovery().scanned, "{:?}", s.recovery());
    assert_eq!(state(&s), without(model, lost));
    assert!(s.verify().unwrap().is_empty());
    s.put(tables::ENTITY, b"after repair", 1, b"ok").unwrap();
    detail
}

#[test]
fn truncated_to_half_is_refused_and_repair_lists_each_lost_object() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = dir.path().join("pristine.tbf");
    let model = build(&pristine);
    let bytes = std::fs::read(&pristine).unwrap();
    let cut = bytes.len() / 2;
    let lost = lost_to_truncation(&bytes, &model, cut);
    assert!(lost.len() > 20, "{} lost", lost.len());
    let detail = refused_then_repaired(&dir.path().join("w.tbf"), &bytes[..cut], &model, &lost);
    eprintln!("{detail}");
    assert!(
        detail.contains("past the end of the file") && detail.contains("objects lost"),
        "{detail}"
    );
}

/// Cuts the last 1,000 bytes: refused when that loses something (named), else (the last
/// block held only index blocks, which a scan rebuilds exactly) opens normally.
fn cut_last_1000_bytes(dir: &Path, pristine: &Path, model: &Model) -> String {
    let bytes = std::fs::read(pristine).unwrap();
    let cut = bytes.len() - 1000;
    let lost = lost_to_truncation(&bytes, model, cut);
    let last = blocks_of_kind(&bytes, 2).contains(&(bytes.len() / BLOCK_SIZE - 1));
    let work = dir.join("w.tbf");
    if last && lost.is_empty() {
        std::fs::write(&work, &bytes[..cut]).unwrap();
        let s = BlockFile::open(&work, &config()).unwrap();
        assert!(s.recovery().is_clean() && s.recovery().scanned, "{:?}", s.recovery());
        assert_eq!(state(&s), *model);
        return "only index blocks cut".into();
    }
    refused_then_repaired(&work, &bytes[..cut], model, &lost)
}

#[test]
fn last_1000_bytes_cut_is_refused_and_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = dir.path().join("pristine.tbf");
    let model = build(&pristine);
    eprintln!("{}", cut_last_1000_bytes(dir.path(), &pristine, &model));
    // A store whose last block is an object's: a large object, then a batch whose commit
    // record fits in a freed block, so that the previous record at the end is cut off.
    let pristine = dir.path().join("object-last.tbf");
    let s = BlockFile::open(&pristine, &config().mode(terrane_store::OpenMode::Create)).unwrap();
    let mut model = Model::new();
    let mut b = Batch::new();
    for i in 0..40u8 {
        b.put(tables::CHUNK_L0, vec![i], 1, vec![i; 3000]);
        model.insert((tables::CHUNK_L0.into(), vec![i]), Object::new(1, vec![i; 3000]));
    }
    s.write(&b.synced()).unwrap();
    let mut b = Batch::new();
    b.put(tables::CHUNK_L2, b"big".to_vec(), 2, vec![9; 100_000]);
    model.insert((tables::CHUNK_L2.into(), b"big".to_vec()), Object::new(2, vec![9; 100_000]));
    s.write(&b.synced()).unwrap();
    let mut b = Batch::new();
    for i in 0..5u8 {
        b.delete(tables::CHUNK_L0, vec![i]);
        model.remove(&(tables::CHUNK_L0.to_string(), vec![i]));
    }
    s.write(&b.synced()).unwrap();
    drop(s);
    let bytes = std::fs::read(&pristine).unwrap();
    let big = &live_blocks(&bytes, &model)[&(tables::CHUNK_L2.to_string(), b"big".to_vec())];
    assert_eq!(*big.last().unwrap(), bytes.len() / BLOCK_SIZE - 1, "the object is last");
    let detail = cut_last_1000_bytes(dir.path(), &pristine, &model);
    eprintln!("{detail}");
    assert!(detail.contains("truncated") && detail.contains("1 object lost (chunkl2/626967)"));
}

#[test]
fn flipped_bytes_in_index_and_object_blocks_are_refused_and_repaired() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = dir.path().join("pristine.tbf");
    let model = build(&pristine);
    let bytes = std::fs::read(&pristine).unwrap();
    let live = live_blocks(&bytes, &model);
    let mut damaged = bytes.clone();
    let mut lost = BTreeSet::new();
    // The index (block 0): open must scan.
    damaged[300] ^= 0x5a;
    // The second block of three multi-block objects (their chains start, then break: named).
    for (id, blocks) in live.iter().filter(|(_, b)| b.len() >= 3).take(3) {
        damaged[blocks[1] * BLOCK_SIZE + 100] ^= 0x5a;
        lost.insert(id.clone());
    }
    // The only block of two small objects (no trace left: counted).
    for (id, blocks) in live.iter().filter(|(_, b)| b.len() == 1).take(2) {
        damaged[blocks[0] * BLOCK_SIZE + 1] ^= 0x5a;
        lost.insert(id.clone());
    }
    assert_eq!(lost.len(), 5);
    let detail = refused_then_repaired(&dir.path().join("w.tbf"), &damaged, &model, &lost);
    eprintln!("{detail}");
    assert!(detail.contains("5 objects lost (chunkl0/"), "{detail}");
}

#[test]
fn flipped_index_and_commit_record_are_refused_but_repair_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = dir.path().join("pristine.tbf");
    let model = build(&pristine);
    let bytes = std::fs::read(&pristine).unwrap();
    let mut damaged = bytes.clone();
    for b in blocks_of_kind(&bytes, 2).into_iter().chain(blocks_of_kind(&bytes, 3)) {
        damaged[b * BLOCK_SIZE + 700] ^= 0xff;
    }
    let detail =
        refused_then_repaired(&dir.path().join("w.tbf"), &damaged, &model, &BTreeSet::new());
    assert!(detail.contains("no intact commit record"), "{detail}");
}

/// A damaged index alone loses nothing: the scan finds the last batch's commit record and
/// every object it counts, so the store opens (and a writer writes the rebuilt index).
#[test]
fn flipped_index_blocks_alone_are_rebuilt_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.tbf");
    let model = build(&path);
    let mut bytes = std::fs::read(&path).unwrap();
    let index = blocks_of_kind(&bytes, 2);
    for b in &index {
        bytes[b * BLOCK_SIZE + 900] ^= 0xff;
    }
    std::fs::write(&path, &bytes).unwrap();
    let s = BlockFile::open(&path, &config().read_only(true)).unwrap();
    assert!(s.recovery().scanned && s.recovery().is_clean(), "{:?}", s.recovery());
    assert_eq!(state(&s), model);
    drop(s);
    assert!(std::fs::read(&path).unwrap() == bytes);
    let s = BlockFile::open(&path, &config()).unwrap();
    assert!(s.recovery().scanned && s.recovery().is_clean(), "{:?}", s.recovery());
    assert_eq!(state(&s), model);
}

/// Flipped bytes in objects under an intact index: the index still names them, so opening
/// loses nothing; each read fails with `Corrupt` and `verify` names exactly those objects.
/// Nothing writes over them (a read-only open writes nothing at all).
#[test]
fn flipped_object_blocks_fail_their_reads_and_verify() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.tbf");
    let model = build(&path);
    let mut bytes = std::fs::read(&path).unwrap();
    let live = live_blocks(&bytes, &model);
    let hit: Vec<(Id, usize)> =
        live.iter().step_by(25).map(|(id, b)| (id.clone(), *b.last().unwrap())).collect();
    for (_, b) in &hit {
        bytes[b * BLOCK_SIZE + 10] ^= 0x01;
    }
    std::fs::write(&path, &bytes).unwrap();
    for ro in [true, false] {
        let s = BlockFile::open(&path, &config().read_only(ro)).unwrap();
        assert!(s.recovery().is_clean() && !s.recovery().scanned);
        for ((t, k), _) in &hit {
            assert!(matches!(s.get(t, k), Err(Error::Corrupt(_))), "{t}/{k:?}");
        }
        let bad: Vec<Id> = s.verify().unwrap().into_iter().map(|b| (b.0, b.1)).collect();
        let want: Vec<Id> = hit.iter().map(|h| h.0.clone()).collect();
        assert_eq!(bad, want);
        drop(s);
        if ro {
            assert!(std::fs::read(&path).unwrap() == bytes, "a read-only open changed the file");
        }
        for (_, b) in &hit {
            let now = std::fs::read(&path).unwrap();
            let range = b * BLOCK_SIZE..(b + 1) * BLOCK_SIZE;
            assert!(now[range.clone()] == bytes[range], "damaged block {b} was overwritten");
        }
    }
}

/// Cutting blocks the index does not reference (freed blocks waiting at the end of the file,
/// and a partial last block) loses nothing: the store opens normally.
#[test]
fn truncation_of_unreferenced_tail_blocks_is_not_damage() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.tbf");
    let s = BlockFile::open(&path, &config().mode(terrane_store::OpenMode::Create)).unwrap();
    let mut model = Model::new();
    let mut b = Batch::new();
    for i in 0..20u8 {
        b.put(tables::CHUNK_L0, vec![i], 1, vec![i; 100]);
        model.insert((tables::CHUNK_L0.into(), vec![i]), Object::new(1, vec![i; 100]));
    }
    b.put(tables::ENTITY, b"filler".to_vec(), 1, vec![1; 20_000]);
    s.write(&b.synced()).unwrap();
    let mut b = Batch::new();
    b.put(tables::CHUNK_L2, b"big".to_vec(), 1, vec![7u8; 200_000]);
    s.write(&b.synced()).unwrap();
    let mut b = Batch::new();
    b.delete(tables::ENTITY, b"filler".to_vec());
    s.write(&b.synced()).unwrap();
    // Deleted while a snapshot holds its blocks: they stay, unreferenced, at the end.
    let snap = s.snapshot().unwrap();
    let mut b = Batch::new();
    b.delete(tables::CHUNK_L2, b"big".to_vec());
    s.write(&b.synced()).unwrap();
    drop(snap);
    drop(s);
    let bytes = std::fs::read(&path).unwrap();
    let live = live_blocks(&bytes, &model).into_values().flatten();
    let index = blocks_of_kind(&bytes, 2).into_iter();
    let record = blocks_of_kind(&bytes, 3).into_iter().min();
    let referenced_end = (live.chain(index).chain(record).max().unwrap() + 1) * BLOCK_SIZE;
    for cut in [bytes.len() - 3 * BLOCK_SIZE, bytes.len() - 20 * BLOCK_SIZE - 1000] {
        assert!(cut > referenced_end, "cut at {cut} < {referenced_end}: referenced blocks");
        std::fs::write(&path, &bytes[..cut]).unwrap();
        let s = BlockFile::open(&path, &config()).unwrap();
        assert!(s.recovery().is_clean(), "cut at {cut}: {:?}", s.recovery());
        assert_eq!(state(&s), model);
        assert!(s.verify().unwrap().is_empty());
    }
}
