//! Crash points simulated deterministically, recovery scans, and space reuse.

use std::collections::BTreeMap;
use std::path::Path;

use terrane_blockfile::{BLOCK_SIZE, BlockFile};
use terrane_store::conformance::{Rng, collect};
use terrane_store::{Batch, KeyRange, Object, Op, ReadView, Store, StoreConfig, tables};

type Model = BTreeMap<(String, Vec<u8>), Object>;

fn config() -> StoreConfig {
    StoreConfig::new("terrane recovery test")
}

fn apply(model: &mut Model, b: &Batch) {
    for op in b.ops() {
        match op {
            Op::Put { table, key, version, data } => {
                model.insert((table.clone(), key.clone()), Object::new(*version, data.clone()));
            }
            Op::Delete { table, key } => {
                model.remove(&(table.clone(), key.clone()));
            }
        }
    }
}

fn state(s: &BlockFile) -> Model {
    let mut m = Model::new();
    for t in [tables::CHUNK_L0, tables::ENTITY, tables::WORLD_META] {
        for (k, o) in collect(s, t, KeyRange::all()) {
            m.insert((t.to_string(), k), o);
        }
    }
    m
}

fn random_batch(rng: &mut Rng, version: i64, n: usize) -> Batch {
    let mut b = Batch::new();
    for _ in 0..n {
        let t = [tables::CHUNK_L0, tables::ENTITY][rng.below(2) as usize];
        let k = format!("key-{:03}", rng.below(150)).into_bytes();
        if rng.below(5) == 0 {
            b.delete(t, k);
        } else {
            let len = rng.below(9000) as usize;
            b.put(t, k, version, rng.bytes(len));
        }
    }
    b.put(tables::WORLD_META, b"batch".to_vec(), version, version.to_le_bytes().to_vec());
    b
}

/// Builds a store with history (overwrites and deletes leave stale blocks around).
fn base(path: &Path, rng: &mut Rng) -> Model {
    let s = BlockFile::open(path, &config()).unwrap();
    let mut model = Model::new();
    for v in 0..12 {
        let b = random_batch(rng, v, 60);
        s.write(&b).unwrap();
        apply(&mut model, &b);
    }
    assert_eq!(state(&s), model);
    model
}

/// Crashes at every I/O operation of a sequence of writes (the first with a snapshot alive,
/// so freed blocks are deferred), and checks that every reopen shows one of the states the
/// sequence went through, never an older one than the last acknowledged write.
#[test]
fn every_crash_point_recovers_a_whole_state() {
    let dir = tempfile::tempdir().unwrap();
    let pristine = dir.path().join("pristine.tbf");
    let mut rng = Rng::new(1);
    let m0 = base(&pristine, &mut rng);
    let batches: Vec<Batch> = (100..104).map(|v| random_batch(&mut rng, v, 50)).collect();
    let mut states = vec![m0.clone()];
    for b in &batches {
        let mut m = states.last().unwrap().clone();
        apply(&mut m, b);
        states.push(m);
    }
    let work = dir.path().join("work.tbf");
    let (mut scanned, mut seen) = (0, vec![0usize; states.len()]);
    let mut n = 1u64;
    loop {
        std::fs::copy(&pristine, &work).unwrap();
        let mut acked = 0;
        let finished;
        {
            let s = BlockFile::open(&work, &config()).unwrap();
            s.simulate_crash_at(Some(n));
            let mut snap = Some(s.snapshot().unwrap());
            let mut ok = true;
            for (i, b) in batches.iter().enumerate() {
                let mut b = b.clone();
                b.set_sync(i == 2);
                if s.write(&b).is_err() {
                    ok = false;
                    break;
                }
                acked = i + 1;
                if i == 1 {
                    // The snapshot still reads the old state after churn; then it goes.
                    let old = snap.take().unwrap();
                    assert_eq!(old.get(tables::WORLD_META, b"batch").unwrap().unwrap().version, 11);
                }
            }
            drop(snap);
            finished = ok;
        }
        let s = BlockFile::open(&work, &config()).unwrap();
        let got = state(&s);
        let which = states.iter().position(|m| *m == got).unwrap_or_else(|| {
            panic!("crash at I/O #{n}: the state is none of the states the writes went through")
        });
        assert!(
            which >= acked,
            "crash at I/O #{n}: acknowledged write {acked} lost (state {which})"
        );
        assert!(which <= acked + 1, "crash at I/O #{n}: state {which} after {acked} acks");
        assert!(s.verify().unwrap().is_empty(), "crash at I/O #{n}: damaged objects");
        assert!(s.recovery().is_clean(), "crash at I/O #{n}: {:?}", s.recovery());
        seen[which] += 1;
        if s.recovery().scanned {
            scanned += 1;
        }
        // The recovered file keeps working.
        let b = random_batch(&mut rng, 500, 20);
        s.write(&b).unwrap();
        let mut m = got.clone();
        apply(&mut m, &b);
        drop(s);
        assert_eq!(state(&BlockFile::open(&work, &config()).unwrap()), m);
        if finished {
            break;
        }
        // Every crash point early on (index, commit record, syncs), then every third.
        n += if n < 30 { 1 } else { 3 };
    }
    eprintln!("{n} crash points; states seen {seen:?}; {scanned} recoveries by scan");
    assert!(n > 20, "too few I/O operations to be meaningful");
    assert!(scanned > 0, "no crash point tore the index: the scan path was not exercised");
    assert!(seen.iter().all(|c| *c > 0), "some state was never observed: {seen:?}");
}

#[test]
fn damaged_index_is_rebuilt_by_scanning() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.tbf");
    let mut rng = Rng::new(2);
    let model = base(&path, &mut rng);
    // Flip a byte of the index payload in block 0, after the signature line.
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[200] ^= 0xff;
    std::fs::write(&path, &bytes).unwrap();
    let s = BlockFile::open(&path, &config()).unwrap();
    let r = s.recovery();
    assert!(r.scanned, "{r:?}");
    assert!(r.commit_verified && r.damaged.is_empty(), "{r:?}");
    assert_eq!(state(&s), model);
    drop(s);
    let s = BlockFile::open(&path, &config()).unwrap();
    assert!(!s.recovery().scanned, "the rebuilt index was not written back");
    assert_eq!(state(&s), model);
}

#[test]
fn repeated_overwrites_keep_the_file_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.tbf");
    let s = BlockFile::open(&path, &config()).unwrap();
    let mut rng = Rng::new(3);
    let write_round = |s: &BlockFile, rng: &mut Rng, v: i64| {
        for chunk in 0..4u8 {
            let mut b = Batch::new();
            for i in 0..16u8 {
                let len = 8000 + rng.below(4000) as usize;
                b.put(tables::CHUNK_L0, vec![chunk, i], v, rng.bytes(len));
            }
            s.write(&b).unwrap();
        }
    };
    write_round(&s, &mut rng, 0);
    let first = std::fs::metadata(&path).unwrap().len();
    let mut largest = first;
    for v in 1..150 {
        write_round(&s, &mut rng, v);
        largest = largest.max(std::fs::metadata(&path).unwrap().len());
    }
    let live = 64 * 3 * BLOCK_SIZE as u64;
    eprintln!("first round {first} B, largest {largest} B, live data ~{live} B");
    assert!(largest <= first * 2, "the file grew from {first} to {largest} bytes");
    // Deleting everything gives the space back to the file system.
    let mut b = Batch::new();
    for chunk in 0..4u8 {
        for i in 0..16u8 {
            b.delete(tables::CHUNK_L0, vec![chunk, i]);
        }
    }
    s.write(&b).unwrap();
    s.write(&Batch::new()).unwrap();
    s.put(tables::ENTITY, b"e", 1, b"x").unwrap();
    let after = std::fs::metadata(&path).unwrap().len();
    assert!(after <= 16 * BLOCK_SIZE as u64, "after deleting everything the file is {after} bytes");
    let stats = s.stats().unwrap();
    assert_eq!(stats.objects, 1);
}

#[test]
fn snapshots_defer_reuse_and_release_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.tbf");
    let s = BlockFile::open(&path, &config()).unwrap();
    for i in 0..20u8 {
        s.put(tables::CHUNK_L0, &[i], 1, &[i; 9000]).unwrap();
    }
    let snap = s.snapshot().unwrap();
    for v in 2..6 {
        for i in 0..20u8 {
            s.put(tables::CHUNK_L0, &[i], v, &[i ^ 0xff; 9000]).unwrap();
        }
    }
    // Freed by unsynced batches: pending until a sync, then held for the snapshot.
    assert!(s.stats().unwrap().pending_blocks > 0);
    s.sync().unwrap();
    let st = s.stats().unwrap();
    assert!(st.deferred_blocks > 0 && st.pending_blocks == 0, "{st:?}");
    for i in 0..20u8 {
        assert_eq!(snap.get(tables::CHUNK_L0, &[i]).unwrap(), Some(Object::new(1, vec![i; 9000])));
    }
    let grown = s.stats().unwrap().file_blocks;
    drop(snap);
    for v in 6..10 {
        for i in 0..20u8 {
            s.put(tables::CHUNK_L0, &[i], v, &[i; 9000]).unwrap();
        }
    }
    let st = s.stats().unwrap();
    assert_eq!(st.deferred_blocks, 0);
    assert!(st.file_blocks <= grown, "space held for the snapshot was not reused");
}

#[test]
fn open_modes_signature_and_strangers() {
    use terrane_store::{Error, OpenMode};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.tbf");
    BlockFile::open(&path, &config()).unwrap();
    assert_eq!(terrane_blockfile::read_signature(&path).unwrap(), "terrane recovery test");
    let head = std::fs::read(&path).unwrap();
    assert!(head.starts_with(b"terrane-blockfile/2 terrane recovery test\n"));
    assert_eq!(head.len() % BLOCK_SIZE, 0);
    let other = dir.path().join("other.txt");
    std::fs::write(&other, b"hello\nworld").unwrap();
    assert!(matches!(BlockFile::open(&other, &config()), Err(Error::NotAStore { .. })));
    assert!(matches!(terrane_blockfile::read_signature(&other), Err(Error::NotAStore { .. })));
    std::fs::write(&other, b"").unwrap();
    assert!(matches!(BlockFile::open(&other, &config()), Err(Error::NotAStore { .. })));
    assert!(matches!(
        BlockFile::open(dir.path().join("missing"), &config().mode(OpenMode::Open)),
        Err(Error::NotFound(_))
    ));
}

/// Whether a block's trailer says "index" (kind byte 2; checksum not checked).
fn is_index_block(block: &[u8]) -> bool {
    block.len() == BLOCK_SIZE && block[BLOCK_SIZE - 48] == 2
}

/// A disk after a power loss that kept everything up to the last sync (`synced`) and every
/// later write except the index writes: an adversarial but legal write-back order.
fn power_loss_image(synced: &[u8], now: &[u8]) -> Vec<u8> {
    let n = synced.len().max(now.len()) / BLOCK_SIZE;
    let mut out = Vec::with_capacity(n * BLOCK_SIZE);
    for b in 0..n {
        let range = b * BLOCK_SIZE..(b + 1) * BLOCK_SIZE;
        let old = synced.get(range.clone());
        let new = now.get(range);
        let take_old = old.is_some_and(is_index_block) || new.is_none_or(is_index_block);
        out.extend_from_slice(if take_old { old.unwrap_or(new.unwrap()) } else { new.unwrap() });
    }
    out
}

/// Blocks freed by an unsynced batch must not be erased or reused before a sync: the durable
/// index still names them, and a power loss can leave that index in place (this failed
/// before: the synced objects then read as `Corrupt`).
#[test]
fn unsynced_batches_do_not_touch_what_the_durable_index_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("w.tbf");
    let s = BlockFile::open(&path, &config()).unwrap();
    let old = |i: u8| vec![i; 9000];
    let mut b = Batch::new();
    for i in 0..10u8 {
        b.put(tables::CHUNK_L0, vec![i], 1, old(i));
    }
    s.write(&b.synced()).unwrap();
    s.sync().unwrap();
    let synced = std::fs::read(&path).unwrap();
    // Unsynced: replace every object, then write new ones (which would reuse their blocks).
    let mut b = Batch::new();
    for i in 0..10u8 {
        b.put(tables::CHUNK_L0, vec![i], 2, vec![0xee; 9000]);
    }
    s.write(&b).unwrap();
    let mut b = Batch::new();
    for i in 10..20u8 {
        b.put(tables::CHUNK_L0, vec![i], 2, vec![0xdd; 9000]);
    }
    s.write(&b).unwrap();
    assert!(s.stats().unwrap().pending_blocks > 0);
    let now = std::fs::read(&path).unwrap();
    drop(s);
    std::fs::write(&path, power_loss_image(&synced, &now)).unwrap();
    let s = BlockFile::open(&path, &config()).unwrap();
    assert!(!s.recovery().scanned, "{:?}", s.recovery());
    assert!(s.verify().unwrap().is_empty(), "synced objects damaged: {:?}", s.verify());
    for i in 0..10u8 {
        assert_eq!(s.get(tables::CHUNK_L0, &[i]).unwrap(), Some(Object::new(1, old(i))));
    }
    assert_eq!(s.get(tables::CHUNK_L0, &[15]).unwrap(), None);
}

/// Space freed by unsynced batches is reused after the next sync (a synced batch or
/// `Store::sync`), and by the store's own sync when nothing syncs: the file stays bounded.
#[test]
fn mixed_synced_and_unsynced_overwrites_keep_the_file_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let mut rng = Rng::new(4);
    for pattern in ["alternate", "explicit sync", "never synced"] {
        let path = dir.path().join(format!("{}.tbf", pattern.replace(' ', "-")));
        let s = BlockFile::open(&path, &config()).unwrap();
        let mut model = Model::new();
        let mut first = 0;
        let mut largest = 0;
        for v in 0..60i64 {
            let mut b = Batch::new();
            for i in 0..48u8 {
                let len = 8000 + rng.below(4000) as usize;
                b.put(tables::CHUNK_L0, vec![i], v, rng.bytes(len));
            }
            if v % 7 == 3 {
                b.delete(tables::CHUNK_L0, vec![(v % 48) as u8]);
            }
            b.set_sync(pattern == "alternate" && v % 2 == 1);
            s.write(&b).unwrap();
            apply(&mut model, &b);
            if pattern == "explicit sync" && v % 3 == 2 {
                s.sync().unwrap();
            }
            let len = std::fs::metadata(&path).unwrap().len();
            if v == 0 {
                first = len;
            }
            largest = largest.max(len);
        }
        eprintln!("{pattern}: first batch {first} B, largest {largest} B");
        assert!(largest <= first * 3, "{pattern}: the file grew from {first} to {largest} bytes");
        assert_eq!(state(&s), model);
        drop(s);
        let s = BlockFile::open(&path, &config()).unwrap();
        assert_eq!(state(&s), model);
        assert!(s.verify().unwrap().is_empty());
    }
}
