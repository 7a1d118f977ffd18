//! Backup repositories against a model: every listed backup restores exactly the store as it
//! was when it was taken, whatever was written, removed, backed up and pruned in between;
//! damage is named and never restored as data.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use terrane_backup::{BackupOptions, ChangedKeys, Error, Keep, Repo};
use terrane_store::conformance::dump;
use terrane_store::conformance::{config, crash::save_batch};
use terrane_store::{MemStore, Object, ReadView as _, Store};

type Model = BTreeMap<(String, Vec<u8>), Object>;

fn mem() -> MemStore {
    MemStore::open(&config("backup-test")).unwrap()
}

/// The store restored from backup `id`, into a store holding other objects first (which the
/// restore removes).
fn restored(repo: &Repo, id: u64) -> Model {
    let target = mem();
    target.write(&save_batch(1_000 + id)).unwrap();
    target.write(&save_batch(7)).unwrap();
    repo.contents(id).unwrap().restore_into(&target, false).unwrap();
    dump(&target)
}

fn opts(tick: u64) -> BackupOptions {
    BackupOptions { tick, source: "test".into() }
}

#[derive(Clone, Debug)]
enum Op {
    Save(u64),
    Backup,
    Prune { last: usize, keep_first: bool },
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u64..60).prop_map(Op::Save),
        2 => Just(Op::Backup),
        1 => (1usize..4, any::<bool>()).prop_map(|(last, keep_first)| Op::Prune { last, keep_first }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn every_listed_backup_restores_the_store_as_it_was(ops in prop::collection::vec(op(), 1..30)) {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repo::open_or_create(dir.path().join("repo")).unwrap();
        let store = mem();
        let mut taken: BTreeMap<u64, Model> = BTreeMap::new();
        for (tick, op) in ops.iter().enumerate() {
            match op {
                Op::Save(id) => store.write(&save_batch(*id)).unwrap(),
                Op::Backup => {
                    let r = repo.backup(&store, &opts(tick as u64)).unwrap();
                    let want = dump(&store);
                    prop_assert_eq!(r.objects, want.len() as u64);
                    taken.insert(r.id, want);
                }
                Op::Prune { last, keep_first } => {
                    let first = taken.keys().next().copied();
                    let ids = if *keep_first { first.into_iter().collect() } else { vec![] };
                    let r = repo.prune(&Keep { last: *last, ids }, false).unwrap();
                    for id in r.removed {
                        taken.remove(&id);
                    }
                }
            }
        }
        let listed: Vec<u64> = repo.list().unwrap().iter().map(|b| b.id).collect();
        prop_assert_eq!(&listed, &taken.keys().copied().collect::<Vec<_>>());
        for (id, want) in &taken {
            prop_assert_eq!(&restored(&repo, *id), want, "backup {}", id);
        }
        let v = repo.verify().unwrap();
        prop_assert!(v.is_clean(), "{:?}", v);
        prop_assert!(v.unused_packs.is_empty(), "prune leaves no pack nobody needs: {:?}", v);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Twin repositories of one store: one backed up by walking the store, the other from
    /// the keys each save touched. Both list the same backups, with the same counts, and
    /// restore the same store.
    #[test]
    fn a_backup_from_changes_is_the_backup_of_the_whole_store(
        saves in prop::collection::vec(prop::collection::vec(1u64..40, 0..4), 1..8),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let whole = Repo::open_or_create(dir.path().join("whole")).unwrap();
        let changes = Repo::open_or_create(dir.path().join("changes")).unwrap();
        let store = mem();
        let mut changed = ChangedKeys::new();
        for (tick, batches) in saves.iter().enumerate() {
            for id in batches {
                let b = save_batch(*id);
                changed.extend(b.ops().iter().map(|o| (o.table().to_string(), o.key().to_vec())));
                store.write(&b).unwrap();
            }
            // A key nobody changed may be among the changes: it is read and found the same.
            changed.insert(("chunkl0".into(), b"never written".to_vec()));
            let a = whole.backup(&store, &opts(tick as u64)).unwrap();
            let b = match changes.latest().unwrap() {
                None => changes.backup(&store, &opts(tick as u64)).unwrap(),
                Some(since) => changes
                    .backup_changes(&store, since, |_| Ok(changed.clone()), "test", |_| Ok(tick as u64), &mut |_, _| {})
                    .unwrap(),
            };
            changed.clear();
            prop_assert_eq!(
                (a.id, a.objects, a.bytes, a.changed, a.removed),
                (b.id, b.objects, b.bytes, b.changed, b.removed)
            );
            let want = dump(&store);
            prop_assert_eq!(&restored(&changes, b.id), &want);
            prop_assert_eq!(changes.info(b.id).unwrap().objects, want.len() as u64);
        }
        prop_assert!(changes.verify().unwrap().is_clean());
    }
}

#[test]
fn a_backup_from_changes_must_follow_the_newest_backup() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repo::open_or_create(dir.path().join("repo")).unwrap();
    let store = mem();
    store.write(&save_batch(1)).unwrap();
    let changed = ChangedKeys::new();
    let from = |since| {
        repo.backup_changes(
            &store,
            since,
            |_| Ok(changed.clone()),
            "test",
            |_| Ok(0),
            &mut |_, _| {},
        )
    };
    assert!(matches!(from(0), Err(Error::NotNewest { since: 0, newest: 0 })));
    repo.backup(&store, &opts(1)).unwrap();
    repo.backup(&store, &opts(2)).unwrap();
    assert!(matches!(from(1), Err(Error::NotNewest { since: 1, newest: 2 })));
    assert_eq!(repo.list().unwrap().len(), 2, "nothing published");
    let r = from(2).unwrap();
    assert_eq!((r.id, r.changed, r.removed), (3, 0, 0));
    assert_eq!(restored(&repo, 3), dump(&store));
}

#[test]
fn a_backup_writes_what_changed_and_only_that() {
    let dir = tempfile::tempdir().unwrap();
    let repo = Repo::open_or_create(dir.path().join("repo")).unwrap();
    let store = mem();
    for i in 0..2000u32 {
        // Chunk-like values: a few thousand bytes each, not all alike.
        let v: Vec<u8> =
            (0..3000u32).map(|j| (i.wrapping_mul(31) ^ j.wrapping_mul(7)) as u8).collect();
        store.put("chunkl0", &i.to_be_bytes(), 1, &v).unwrap();
    }
    let first = repo.backup(&store, &opts(1)).unwrap();
    assert_eq!((first.objects, first.changed, first.removed), (2000, 2000, 0));

    // 1 % changed, one removed, one version bumped with the same bytes.
    let mut changed_bytes = 0;
    for i in (0..2000u32).step_by(100) {
        let v: Vec<u8> = (0..3000u32).map(|j| (i ^ j ^ 0x5a) as u8).collect();
        changed_bytes += v.len() as u64;
        store.put("chunkl0", &i.to_be_bytes(), 2, &v).unwrap();
    }
    store.delete("chunkl0", &7u32.to_be_bytes()).unwrap();
    let same = store.get("chunkl0", &8u32.to_be_bytes()).unwrap().unwrap();
    store.put("chunkl0", &8u32.to_be_bytes(), 9, &same.data).unwrap();
    let second = repo.backup(&store, &opts(2)).unwrap();
    assert_eq!((second.changed, second.removed), (21, 1), "{second:?}");
    assert_eq!(second.changed_bytes, changed_bytes, "a version bump writes no value");
    assert!(
        second.written_bytes() as f64 <= 1.2 * changed_bytes as f64,
        "wrote {} for {} changed bytes",
        second.written_bytes(),
        changed_bytes
    );
    // Nothing changed: a manifest of nothing.
    let third = repo.backup(&store, &opts(3)).unwrap();
    assert_eq!((third.changed, third.removed, third.pack_bytes), (0, 0, 0));
    assert_eq!(restored(&repo, third.id), dump(&store));
    assert_eq!(repo.list().unwrap().iter().map(|b| b.tick).collect::<Vec<_>>(), [1, 2, 3]);
    let taken: Vec<u64> = repo.list().unwrap().iter().map(|b| b.created_ms).collect();
    assert_eq!(repo.taken_by(taken[0] - 1).unwrap(), None, "before the first backup");
    assert_eq!(repo.taken_by(taken[2]).unwrap(), Some(3));
    assert_eq!(repo.taken_by(u64::MAX).unwrap(), Some(3));
    // A value the repository holds already, under another key: listed, not written again.
    store.put("chunkl0", b"copy", 3, &same.data).unwrap();
    let fourth = repo.backup(&store, &opts(4)).unwrap();
    assert_eq!((fourth.changed, fourth.pack_bytes), (1, 0), "{fourth:?}");
    assert!(restored(&repo, fourth.id) == dump(&store));
}

/// A prune frees the space of values that changed since, not only of whole packs: a pack
/// a kept backup needs little of is rewritten with only that, and a pack it needs most of
/// stays as it is; every kept backup restores exactly, the repository verifies.
#[test]
fn a_prune_rewrites_the_packs_kept_backups_need_little_of() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repo");
    let repo = Repo::open_or_create(&path).unwrap();
    let store = mem();
    // Values that do not compress: the pack's size is what they are.
    let value = |i: u32, round: u32| -> Vec<u8> {
        let mut x = u64::from(i) * 0x9E37_79B9 + u64::from(round) * 0x85EB_CA6B + 1;
        (0..4000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    };
    for i in 0..200u32 {
        store.put("chunkl0", &i.to_be_bytes(), 1, &value(i, 0)).unwrap();
    }
    repo.backup(&store, &opts(1)).unwrap();
    // 90 % of the values change: backup 1's pack is 10 % needed once backup 1 is gone.
    for i in (0..200u32).filter(|i| i % 10 != 0) {
        store.put("chunkl0", &i.to_be_bytes(), 2, &value(i, 1)).unwrap();
    }
    repo.backup(&store, &opts(2)).unwrap();
    let sizes = |p: &Path| packs(p).iter().map(|f| f.metadata().unwrap().len()).sum::<u64>();
    let before = sizes(&path);
    let kept_both = repo.prune(&Keep { last: 2, ids: vec![] }, false).unwrap();
    assert_eq!((kept_both.packs_deleted, kept_both.packs_rewritten), (0, 0), "all needed");

    let r = repo.prune(&Keep { last: 1, ids: vec![] }, false).unwrap();
    assert_eq!(r.removed, [1]);
    assert_eq!((r.packs_rewritten, r.packs_deleted), (1, 1), "{r:?}");
    let after = sizes(&path);
    let live = 200 * 4000u64;
    assert!(after < live + live / 10, "{after} bytes of packs for {live} of values");
    assert_eq!(before - after, r.bytes_freed, "{r:?}");
    assert_eq!(restored(&repo, 2), dump(&store));
    let v = repo.verify().unwrap();
    assert!(v.is_clean() && v.unused_packs.is_empty(), "{v:?}");

    // Backups go on after a repack: a value the repository holds is not written again.
    store.put("chunkl0", b"again", 3, &value(0, 0)).unwrap();
    let third = repo.backup(&store, &opts(3)).unwrap();
    assert_eq!((third.changed, third.pack_bytes), (1, 0), "{third:?}");
    assert_eq!(restored(&repo, third.id), dump(&store));
}

/// Flips one byte of `path` at `at` bytes from its end.
fn flip(path: &Path, from_end: u64) {
    let mut b = std::fs::read(path).unwrap();
    let i = b.len() - from_end as usize;
    b[i] ^= 0x40;
    std::fs::write(path, b).unwrap();
}

fn packs(repo: &Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<_> =
        std::fs::read_dir(repo.join("packs")).unwrap().map(|e| e.unwrap().path()).collect();
    v.sort();
    v
}

#[test]
fn damage_is_named_and_never_restored_as_data() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("repo");
    let repo = Repo::open_or_create(&path).unwrap();
    let store = mem();
    for id in 1..=10 {
        store.write(&save_batch(id)).unwrap();
    }
    let first = repo.backup(&store, &opts(10)).unwrap();
    for id in 11..=20 {
        store.write(&save_batch(id)).unwrap();
    }
    let second = repo.backup(&store, &opts(20)).unwrap();
    let want_second = dump(&store);
    assert!(repo.verify().unwrap().is_clean());
    drop(repo);

    // A flipped byte in the second backup's pack: only the second is touched.
    let [p1, p2] = packs(&path).try_into().unwrap();
    flip(&p2, 100);
    let repo = Repo::open(&path).unwrap();
    let v = repo.verify().unwrap();
    assert!(!v.is_clean());
    let by_id: BTreeMap<u64, _> = v.backups.iter().map(|b| (b.id, b)).collect();
    assert!(by_id[&first.id].is_whole(), "{v:?}");
    assert_eq!(by_id[&second.id].damaged.len(), 1, "{v:?}");
    assert!(v.damaged.iter().any(|(p, _)| *p == p2), "{v:?}");
    // Restore refuses, or leaves the damaged object out and says so.
    let target = mem();
    match repo.contents(second.id).unwrap().restore_into(&target, false) {
        Err(Error::DamagedObjects { objects, .. }) => assert_eq!(objects.len(), 1),
        other => panic!("{other:?}"),
    }
    assert!(dump(&target).is_empty(), "nothing written");
    let r = repo.contents(second.id).unwrap().restore_into(&target, true).unwrap();
    let mut partial = want_second.clone();
    partial.remove(&r.damaged[0]);
    assert_eq!(dump(&target), partial, "everything else, exactly");
    assert_eq!(restored(&repo, first.id).len() as u64, repo.contents(first.id).unwrap().len());
    drop(repo);

    // A truncated first pack: both backups that need it are named.
    let len = std::fs::metadata(&p1).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&p1).unwrap().set_len(len / 2).unwrap();
    let v = Repo::open(&path).unwrap().verify().unwrap();
    assert!(v.backups.iter().all(|b| !b.is_whole()), "{v:?}");

    // A missing pack, and a damaged manifest.
    std::fs::remove_file(&p1).unwrap();
    let v = Repo::open(&path).unwrap().verify().unwrap();
    assert!(v.damaged.iter().any(|(p, d)| *p == p1 && d.contains("missing")), "{v:?}");
    // A prune keeping everything runs past the missing pack and changes nothing.
    let kept = Repo::open_to_write(&path).unwrap().prune(&Keep { last: 9, ids: vec![] }, false);
    assert_eq!(kept.unwrap().packs_deleted, 0);
    let manifest = path.join("backups").join(format!("{:020}.tbm", first.id));
    flip(&manifest, 3);
    let repo = Repo::open(&path).unwrap();
    let v = repo.verify().unwrap();
    assert!(v.damaged.iter().any(|(p, _)| *p == manifest), "{v:?}");
    assert!(v.backups.iter().find(|b| b.id == second.id).unwrap().unrestorable.is_some());
    assert_eq!(repo.list().unwrap().len(), 1, "a damaged manifest is not listed");
    assert!(matches!(repo.contents(first.id), Err(Error::Damaged { .. })));
}

#[test]
fn a_backup_of_a_store_being_written_is_one_committed_state() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = config("backup-test");
    let store = std::sync::Arc::new(
        terrane_blockfile::BlockFile::open(dir.path().join("world.tbf"), &cfg).unwrap(),
    );
    for id in 1..=20 {
        store.write(&save_batch(id)).unwrap();
    }
    let writer = {
        let store = store.clone();
        std::thread::spawn(move || {
            for id in 21..=400 {
                store.write(&save_batch(id)).unwrap();
            }
        })
    };
    let repo = Repo::open_or_create(dir.path().join("repo")).unwrap();
    let mut ids = Vec::new();
    while !writer.is_finished() {
        ids.push(repo.backup(&*store, &opts(0)).unwrap().id);
    }
    writer.join().unwrap();
    ids.push(repo.backup(&*store, &opts(0)).unwrap().id);
    // The states after each batch, to find each backup's.
    let model = mem();
    let mut states = vec![dump(&model)];
    for id in 1..=400 {
        model.write(&save_batch(id)).unwrap();
        states.push(dump(&model));
    }
    assert!(ids.len() >= 2);
    for id in ids {
        let got = restored(&repo, id);
        assert!(states.contains(&got), "backup {id} is no state the store went through");
    }
}

#[test]
fn a_repository_goes_only_where_it_is_asked_to() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("notes.txt"), b"mine").unwrap();
    assert!(matches!(Repo::open_or_create(dir.path()), Err(Error::NotEmpty(_))));
    assert!(matches!(Repo::open(dir.path().join("nothing")), Err(Error::NotARepository(_))));
    let path = dir.path().join("repo");
    let writer = Repo::open_or_create(&path).unwrap();
    assert!(matches!(Repo::open(&path), Err(Error::Store(terrane_store::Error::Locked { .. }))));
    drop(writer);
    let _a = Repo::open(&path).unwrap();
    let _b = Repo::open(&path).unwrap();
    assert!(matches!(Repo::open(&path).unwrap().contents(1), Err(Error::NoSuchBackup(1))));
}
