//! The conformance suite on the in-memory backend, through `dyn Store` and the wrappers.

use std::sync::Arc;

use terrane_store::{FaultPlan, FaultyStore, MemStore, Store, StoreConfig, conformance};

#[test]
fn mem_store_conforms() {
    conformance::run_all(|| MemStore::open(&conformance::config("mem")).unwrap());
}

#[test]
fn boxed_dyn_store_conforms() {
    conformance::run_all(|| -> Box<dyn Store> {
        Box::new(MemStore::open(&conformance::config("mem")).unwrap())
    });
}

#[test]
fn arc_and_faulty_wrapper_without_faults_conform() {
    conformance::run_all(|| {
        Arc::new(FaultyStore::new(
            MemStore::open(&conformance::config("mem")).unwrap(),
            FaultPlan::default(),
        ))
    });
}

#[test]
fn mem_store_open_modes() {
    use terrane_store::{Error, OpenMode};
    assert!(matches!(
        MemStore::open(&StoreConfig::new("x").mode(OpenMode::Open)),
        Err(Error::NotFound(_))
    ));
    assert!(matches!(
        MemStore::open(&StoreConfig::new("bad\nsig")),
        Err(Error::InvalidSignature(_))
    ));
    assert!(matches!(
        MemStore::open(&StoreConfig::new("ok").table("bad table")),
        Err(Error::InvalidTableName(_))
    ));
}
