//! The fault-injecting wrapper.

use terrane_store::{Batch, Error, FaultPlan, FaultyStore, MemStore, ReadView, Store, tables};

#[test]
fn nth_write_fails_and_changes_nothing() {
    let s = FaultyStore::new(MemStore::new(), FaultPlan::nth_write(3));
    s.put(tables::ENTITY, b"a", 1, b"1").unwrap();
    s.put(tables::ENTITY, b"b", 1, b"2").unwrap();
    let mut b = Batch::new();
    b.put(tables::ENTITY, b"c".to_vec(), 1, b"3".to_vec()).delete(tables::ENTITY, b"a".to_vec());
    assert!(matches!(s.write(&b), Err(Error::Injected(_))));
    assert_eq!(s.get(tables::ENTITY, b"c").unwrap(), None);
    assert!(s.get(tables::ENTITY, b"a").unwrap().is_some());
    s.write(&b).unwrap();
    assert!(s.get(tables::ENTITY, b"c").unwrap().is_some());
    assert_eq!((s.writes(), s.faults()), (4, 1));
}

#[test]
fn nth_sync_fails_including_synced_batches() {
    let s = FaultyStore::new(MemStore::new(), FaultPlan::nth_sync(2));
    s.sync().unwrap();
    let mut b = Batch::new();
    b.put(tables::CHUNK_L0, b"k".to_vec(), 1, b"v".to_vec());
    let err = s.write(&b.clone().synced()).unwrap_err();
    assert!(err.to_string().contains("sync #2"), "{err}");
    assert_eq!(s.get(tables::CHUNK_L0, b"k").unwrap(), None);
    s.write(&b.synced()).unwrap();
    s.sync().unwrap();
    assert_eq!(s.syncs(), 4);
}

#[test]
fn sticky_faults_fail_everything_after() {
    let s = FaultyStore::new(MemStore::new(), FaultPlan::nth_write(2).sticky());
    s.put(tables::ENTITY, b"a", 1, b"1").unwrap();
    for _ in 0..3 {
        assert!(s.put(tables::ENTITY, b"b", 1, b"2").is_err());
    }
    assert!(matches!(s.sync(), Err(Error::Injected(_))));
    assert_eq!(s.get(tables::ENTITY, b"a").unwrap().unwrap().data, b"1");
    assert_eq!(s.into_inner().get(tables::ENTITY, b"b").unwrap(), None);
}
