//! Flipped bytes and truncation at every region of a block file: opening recovers cleanly or
//! gives a typed error without changing the file, repair mode reports every loss, reads give
//! typed errors, and nothing ever returns wrong data or loses data silently.

use std::collections::BTreeMap;
use std::path::Path;

use terrane_blockfile::{BLOCK_SIZE, BlockFile, BlockFileOptions};
use terrane_store::conformance::Rng;
use terrane_store::{Batch, Error, KeyRange, Object, ReadView, Store, StoreConfig, tables};

type Model = BTreeMap<(String, Vec<u8>), Object>;
/// The model after each batch, from the empty store to the last batch.
type History = Vec<Model>;

fn config() -> StoreConfig {
    StoreConfig::new("terrane corruption test").mode(terrane_store::OpenMode::Open)
}

/// A store with history: overwritten and deleted objects leave stale blocks that a wrong
/// recovery could serve. The fourth batch of six is synced: damage below it is found when
/// read, damage above it (batches not yet durable) at open.
fn build(path: &Path) -> History {
    let s = BlockFile::open(path, &config().mode(terrane_store::OpenMode::Create)).unwrap();
    let mut rng = Rng::new(11);
    let mut model = Model::new();
    let mut history = vec![model.clone()];
    for v in 0..6 {
        let mut b = Batch::new();
        for _ in 0..10 {
            let t = [tables::CHUNK_L0, tables::ENTITY][rng.below(2) as usize];
            let k = format!("k{}", rng.below(14)).into_bytes();
            if rng.below(4) == 0 {
                b.delete(t, k.clone());
                model.remove(&(t.to_string(), k));
            } else {
                let len = rng.below(7000) as usize;
                let data = rng.bytes(len);
                b.put(t, k.clone(), v, data.clone());
                model.insert((t.to_string(), k), Object::new(v, data));
            }
        }
        b.set_sync(v == 3);
        s.write(&b).unwrap();
        history.push(model.clone());
    }
    history
}

/// Everything the store serves.
fn contents(s: &BlockFile) -> Model {
    let mut m = Model::new();
    for t in [tables::CHUNK_L0, tables::ENTITY] {
        for (k, o) in s.scan(t, KeyRange::all()).unwrap().flatten() {
            m.insert((t.to_string(), k), o);
        }
    }
    m
}

/// Damage in the blocks of batches that were not yet durable cannot be told from a flush a
/// crash interrupted: such batches are rolled back whole (and reported), never in part.
fn check_rolled_back(s: &BlockFile, history: &History, what: &str) -> Option<&'static str> {
    let r = s.recovery();
    let from = r.rolled_back?;
    let got = contents(s);
    if r.is_clean() {
        assert!(
            history[..history.len() - 1].contains(&got),
            "{what}: rolled back from {from}, but the store is not the state after an earlier batch"
        );
    } else {
        // A repair over more damage: every object served is a version the store once held.
        for (id, o) in &got {
            assert!(
                history.iter().any(|m| m.get(id) == Some(o)),
                "{what}: repair served data the store never held for {id:?}"
            );
        }
    }
    Some("rolled back unsynced batches")
}

/// Reads everything from a store opened over a damaged copy: nothing wrong comes out, and
/// every object of the model that is missing is reported by the open (named in
/// `Recovery::damaged`, or counted). Returns what happened.
fn check_reads(s: &BlockFile, model: &Model, what: &str) -> &'static str {
    let r = s.recovery().clone();
    let mut outcome = if r.scanned { "recovered by scan" } else { "opened" };
    let mut unnamed = 0u64;
    for ((t, k), want) in model {
        match s.get(t, k) {
            Ok(Some(got)) => assert_eq!(&got, want, "{what}: wrong data for {t}/{k:?}"),
            Ok(None) => {
                assert!(!r.is_clean(), "{what}: {t}/{k:?} silently lost ({r:?})");
                if !r.damaged.contains(&(t.clone(), k.clone())) {
                    unnamed += 1;
                }
            }
            Err(_) => outcome = "read error",
        }
    }
    if r.objects_expected.is_some() && r.commit_verified {
        assert!(
            unnamed <= r.unnamed_losses(),
            "{what}: {unnamed} lost objects neither named nor counted ({r:?})"
        );
    }
    for t in [tables::CHUNK_L0, tables::ENTITY] {
        for (k, o) in s.scan(t, KeyRange::all()).unwrap().flatten() {
            let want = model.get(&(t.to_string(), k.clone()));
            assert_eq!(want, Some(&o), "{what}: scan returned wrong or resurrected {t}/{k:?}");
        }
    }
    outcome
}

/// Opens a damaged copy by default (it opens clean, or fails and leaves the file as it was),
/// then in repair mode (it opens whatever the default refused as damaged, and reports each
/// loss), and checks that nothing wrong comes out. Returns what the default open did.
fn check(path: &Path, damaged: &[u8], history: &History, what: &str) -> &'static str {
    let model = history.last().expect("at least the empty store");
    std::fs::write(path, damaged).unwrap();
    let outcome = match BlockFile::open(path, &config()) {
        Err(e) => {
            let after = std::fs::read(path).unwrap();
            assert!(after == damaged, "{what}: the refused open ({e}) changed the file");
            if matches!(e, Error::Damaged { .. }) { "refused as damaged" } else { "error at open" }
        }
        Ok(s) => {
            assert!(s.recovery().is_clean(), "{what}: a default open lost data {:?}", s.recovery());
            match check_rolled_back(&s, history, what) {
                Some(outcome) => outcome,
                None => check_reads(&s, model, what),
            }
        }
    };
    std::fs::write(path, damaged).unwrap();
    match BlockFile::open_with(path, &config(), &BlockFileOptions::new().repair(true)) {
        Ok(s) => {
            if check_rolled_back(&s, history, what).is_none() {
                check_reads(&s, model, what);
            }
        }
        Err(e) => assert!(
            outcome == "error at open" && !matches!(e, Error::Damaged { .. }),
            "{what}: the repair open failed ({e}) where the default gave {outcome}"
        ),
    }
    outcome
}

#[test]
fn flipped_bytes_in_every_region() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = dir.path().join("pristine.tbf");
    let history = build(&pristine);
    let bytes = std::fs::read(&pristine).unwrap();
    let blocks = bytes.len() / BLOCK_SIZE;
    assert!(blocks > 10);
    let work = dir.path().join("work.tbf");
    let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
    let mut offsets: Vec<usize> = vec![0, 7, 19, 20, 30];
    for b in 0..blocks {
        // payload start, middle, key region, trailer fields, checksum.
        for at in [40, 2100, BLOCK_SIZE - 52, BLOCK_SIZE - 40, BLOCK_SIZE - 30, BLOCK_SIZE - 2] {
            offsets.push(b * BLOCK_SIZE + at);
        }
    }
    for at in offsets {
        let mut damaged = bytes.clone();
        damaged[at] ^= 0x5a;
        let o = check(
            &work,
            &damaged,
            &history,
            &format!("byte {at} (block {}) flipped", at / BLOCK_SIZE),
        );
        *outcomes.entry(o).or_default() += 1;
    }
    eprintln!("flips: {outcomes:?}");
    assert!(outcomes.contains_key("recovered by scan") && outcomes.contains_key("read error"));
}

#[test]
fn truncation_at_every_region() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = dir.path().join("pristine.tbf");
    let history = build(&pristine);
    let bytes = std::fs::read(&pristine).unwrap();
    let work = dir.path().join("work.tbf");
    let mut outcomes: BTreeMap<&str, usize> = BTreeMap::new();
    let mut cuts = vec![0, 1, 10, 25, 100];
    for b in 1..bytes.len() / BLOCK_SIZE {
        cuts.push(b * BLOCK_SIZE);
        cuts.push(b * BLOCK_SIZE + 1500);
    }
    for cut in cuts {
        let o = check(&work, &bytes[..cut], &history, &format!("truncated to {cut} bytes"));
        *outcomes.entry(o).or_default() += 1;
    }
    eprintln!("truncations: {outcomes:?}");
    assert!(outcomes.contains_key("error at open") && outcomes.contains_key("refused as damaged"));
}

#[test]
fn garbage_blocks_appended_are_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.tbf");
    let history = build(&path);
    let mut bytes = std::fs::read(&path).unwrap();
    let mut rng = Rng::new(5);
    bytes.extend(rng.bytes(3 * BLOCK_SIZE + 17));
    assert_eq!(check(&path, &bytes, &history, "garbage appended"), "opened");
}
