//! I/O errors: the Nth write, erase or `fdatasync` of a run of saves fails
//! once, for every N. Each failure is a typed error. The store then refuses every write and
//! every sync until it is reopened, so no save is acknowledged on the strength of an
//! `fdatasync` that came after a failed one (the "fsyncgate" rule: after a failed fsync the
//! kernel may have dropped the pages it could not write, and a later fsync succeeds without
//! them). Reopened, the store holds every acknowledged batch, and the failed one whole or not
//! at all.

mod common;

use common::{Model, TABLES, config, state};
use terrane_blockfile::BlockFile;
use terrane_store::conformance::Rng;
use terrane_store::{Batch, Error, Object, OpenMode, Store};

/// One planned write: `(table, key, Some((version, data)))` to put, `None` to delete.
type Op = (&'static str, Vec<u8>, Option<(i64, Vec<u8>)>);

/// Twelve batches over 40 keys: new keys, overwrites of every size (so later batches free and
/// reuse blocks, which erases their trailers), deletes; every third unsynced.
fn plan() -> Vec<Vec<Op>> {
    let mut rng = Rng::new(2026);
    (0..12i64)
        .map(|v| {
            (0..14)
                .map(|_| {
                    let t = TABLES[rng.below(3) as usize];
                    let k = format!("k{:02}", rng.below(40)).into_bytes();
                    if v > 2 && rng.below(6) == 0 {
                        return (t, k, None);
                    }
                    let len = [0, 40, 3000, 9000, 30_000][rng.below(5) as usize];
                    (t, k, Some((v, rng.bytes(len))))
                })
                .collect()
        })
        .collect()
}

fn apply(model: &mut Model, ops: &[Op]) {
    for (t, k, op) in ops {
        match op {
            Some((v, d)) => model.insert((t.to_string(), k.clone()), Object::new(*v, d.clone())),
            None => model.remove(&(t.to_string(), k.clone())),
        };
    }
}

fn batch(ops: &[Op], synced: bool) -> Batch {
    let mut b = Batch::new();
    for (t, k, op) in ops {
        match op {
            Some((v, d)) => b.put(t, k.clone(), *v, d.clone()),
            None => b.delete(t, k.clone()),
        };
    }
    if synced { b.synced() } else { b }
}

#[test]
fn a_failed_write_erase_or_fdatasync_is_typed_and_loses_nothing_acknowledged() {
    let plan = plan();
    let dir = tempfile::tempdir().unwrap();
    let mut faults = 0;
    for n in 1.. {
        let path = dir.path().join(format!("io-{n}.tbf"));
        let s = BlockFile::open(&path, &config().mode(OpenMode::Create)).unwrap();
        s.simulate_io_error_at(Some(n));
        let mut acked = Model::new();
        // The state with the failed save applied, once one failed.
        let mut failed: Option<Model> = None;
        let failure = |e: Error, failed: &mut Option<Model>, with: Model| match failed {
            None => {
                assert!(matches!(e, Error::Io(_)), "fault {n}: the failure is {e:?}");
                *failed = Some(with);
            }
            // Everything after the failure is refused until a reopen.
            Some(_) => assert!(matches!(e, Error::Poisoned(_)), "fault {n}: then {e:?}"),
        };
        for (i, ops) in plan.iter().enumerate() {
            match s.write(&batch(ops, i % 3 != 2)) {
                Ok(()) => {
                    assert!(failed.is_none(), "fault {n}: batch {i} acknowledged after a failure");
                    apply(&mut acked, ops);
                }
                Err(e) => {
                    let mut with = acked.clone();
                    apply(&mut with, ops);
                    failure(e, &mut failed, with);
                }
            }
            if i % 4 == 3 {
                match s.sync() {
                    Ok(()) => {
                        assert!(failed.is_none(), "fault {n}: a sync succeeded after one failed")
                    }
                    Err(e) => failure(e, &mut failed, acked.clone()),
                }
            }
        }
        // An empty synced batch is a sync too.
        match s.write(&Batch::new().synced()) {
            Ok(()) => assert!(failed.is_none(), "fault {n}: an empty synced batch after a failure"),
            Err(e) => failure(e, &mut failed, acked.clone()),
        }
        drop(s);
        let Some(with_failed) = failed else {
            // The run had fewer than n operations: every fault point was tried.
            assert_eq!(state(&BlockFile::open(&path, &config()).unwrap()), acked);
            break;
        };
        faults += 1;
        let s = BlockFile::open(&path, &config())
            .unwrap_or_else(|e| panic!("fault {n}: the store does not reopen: {e}"));
        assert!(s.verify().unwrap().is_empty(), "fault {n}: damaged objects after reopening");
        let got = state(&s);
        assert!(
            got == acked || got == with_failed,
            "fault {n}: an acknowledged batch is lost or the failed one is partial"
        );
        // And it takes writes again.
        s.write(&batch(&plan[0], true)).unwrap();
    }
    eprintln!("{faults} fault points");
    assert!(faults >= 30, "only {faults} fault points");
}
