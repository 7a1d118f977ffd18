//! Read errors: the Nth read of an open and of the reads after it fails
//! once with `EIO`, for every N, on a store closed cleanly and on one whose last batches were
//! never followed by an index write (a crash: the open checks them block by block). A read
//! error is an I/O error, reported as one: never taken for damage (which would refuse the
//! open as `Damaged`, or with repair on, cut acknowledged batches), never wrong data, never a
//! panic. Opened again without the fault, the store holds every acknowledged batch.

mod common;

use common::{Model, build, config, state};
use terrane_blockfile::{BlockFile, read_error_pending, simulate_read_error_at};
use terrane_store::conformance::Rng;
use terrane_store::{Batch, Error, ReadView, Store, tables};

/// A store of `build`'s content, then (when `crashed`) four more synced batches whose
/// closing index write never happens.
fn make(path: &std::path::Path, crashed: bool) -> Model {
    let mut model = build(path);
    if crashed {
        let s = BlockFile::open(path, &config()).unwrap();
        let mut rng = Rng::new(5);
        for v in 10..14i64 {
            let mut b = Batch::new();
            for i in 0..12u8 {
                let key = vec![b'c', v as u8, i];
                let len = 100 + rng.below(12_000) as usize;
                let data = rng.bytes(len);
                b.put(tables::ENTITY, key.clone(), v, data.clone());
                model.insert((tables::ENTITY.into(), key), terrane_store::Object::new(v, data));
            }
            s.write(&b.synced()).unwrap();
        }
        std::mem::forget(s); // killed: no closing index
    }
    model
}

fn is_eio(e: &Error) -> bool {
    matches!(e, Error::Io(io) if io.raw_os_error() == Some(5))
}

#[test]
fn a_read_error_at_open_or_after_is_an_io_error_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    for crashed in [false, true] {
        let original = dir.path().join(format!("orig-{crashed}.tbf"));
        let model = make(&original, crashed);
        let bytes = std::fs::read(&original).unwrap();
        let (mut at_open, mut at_read) = (0, 0);
        for n in 1.. {
            let work = dir.path().join("work.tbf");
            std::fs::write(&work, &bytes).unwrap();
            simulate_read_error_at(Some(n));
            match BlockFile::open(&work, &config()) {
                Err(e) => {
                    assert!(is_eio(&e), "crashed {crashed}, read {n}: the open failed with {e:?}");
                    at_open += 1;
                }
                Ok(s) => {
                    for ((t, k), want) in &model {
                        match s.get(t, k) {
                            Ok(got) => {
                                assert_eq!(got.as_ref(), Some(want), "crashed {crashed}, read {n}")
                            }
                            Err(e) => {
                                assert!(is_eio(&e), "crashed {crashed}, read {n}: get: {e:?}");
                                at_read += 1;
                            }
                        }
                    }
                }
            }
            let fired = !read_error_pending();
            simulate_read_error_at(None);
            // Without the fault: opens clean, everything acknowledged there.
            let s = BlockFile::open(&work, &config())
                .unwrap_or_else(|e| panic!("crashed {crashed}, read {n}: reopen failed: {e}"));
            assert_eq!(state(&s), model, "crashed {crashed}, read {n}: after the read error");
            drop(s);
            if !fired {
                break;
            }
        }
        eprintln!("crashed {crashed}: {at_open} failed opens, {at_read} failed reads");
        assert!(at_open > 0 && at_read > 0, "crashed {crashed}: {at_open} / {at_read}");
    }
}
