//! Misuse is a typed error that changes nothing: re-entrant callbacks, releasing a region
//! that is not ticking, unknown ids, data guards held across a release, panicking callbacks.

use std::sync::{Arc, Mutex, OnceLock, Weak};

use terrane_regionizer::{
    Callbacks, Error, NoCallbacks, RegionId, RegionState, Regionizer, RegionizerConfig,
};
use terrane_section::{ChunkPos, ColumnPos};

type Rz = Regionizer<ColumnPos, ()>;

/// Calls back into its own regionizer from `on_create` and records what happened.
#[derive(Default)]
struct Reenter {
    rz: OnceLock<Weak<Rz>>,
    results: Mutex<Vec<String>>,
    panic_on_create: bool,
}

#[derive(Clone)]
struct R(Arc<Reenter>);

impl Callbacks<ColumnPos, ()> for R {
    fn new_data(&self, _: RegionId) {}
    fn on_create(&self, id: RegionId) {
        if self.0.panic_on_create {
            panic!("callback panics");
        }
        let rz = self.0.rz.get().and_then(Weak::upgrade).expect("set");
        let mut r = self.0.results.lock().unwrap();
        r.push(format!("{:?}", rz.add_chunk(ColumnPos::new(1000, 1000)).err()));
        r.push(format!("{:?}", rz.try_mark_ticking(id).err()));
        r.push(format!("{:?}", rz.owner_of_section_exact(ColumnPos::new(0, 0)).err()));
        // The unsynchronised lookup is allowed (it takes no lock).
        r.push(format!("{:?}", rz.owner_of_section(ColumnPos::new(0, 0)).is_some()));
    }
}

#[test]
fn reentrant_callbacks_get_an_error_not_a_deadlock() {
    let cb = Arc::new(Reenter::default());
    let rz = Arc::new(Rz::new(RegionizerConfig::folia_shift4(), R(Arc::clone(&cb))));
    cb.rz.set(Arc::downgrade(&rz)).unwrap();
    rz.add_chunk(ColumnPos::new(0, 0)).unwrap();
    let r = cb.results.lock().unwrap().clone();
    assert_eq!(r[0], "Some(Reentrant)");
    assert_eq!(r[1], "Some(Reentrant)");
    assert_eq!(r[2], "Some(Reentrant)");
    assert_eq!(r[3], "true");
    assert!(!rz.is_loaded(ColumnPos::new(1000, 1000)));
    rz.check_invariants().unwrap();
    // From with_data too.
    let id = rz.owner_of_chunk(ColumnPos::new(0, 0)).unwrap();
    let inner = rz.with_data(id, |_| rz.remove_chunk(ColumnPos::new(0, 0))).unwrap();
    assert!(matches!(inner, Err(Error::Reentrant)));
    assert!(rz.is_loaded(ColumnPos::new(0, 0)));
}

#[test]
fn panicking_callback_poisons() {
    let cb = Arc::new(Reenter { panic_on_create: true, ..Reenter::default() });
    let rz = Arc::new(Rz::new(RegionizerConfig::folia_shift4(), R(Arc::clone(&cb))));
    let r2 = Arc::clone(&rz);
    let j = std::thread::spawn(move || r2.add_chunk(ColumnPos::new(0, 0)));
    assert!(j.join().is_err(), "the panic propagates to the caller");
    assert!(matches!(rz.add_chunk(ColumnPos::new(50, 50)), Err(Error::Poisoned)));
    assert!(matches!(rz.check_invariants(), Err(Error::Poisoned)));
}

#[test]
fn release_and_tick_misuse() {
    let rz = Rz::new(RegionizerConfig::folia_shift4(), NoCallbacks);
    assert!(matches!(rz.try_mark_ticking(first_region(&rz)), Ok(true)));
    let id = first_region(&rz);
    assert!(matches!(rz.try_mark_ticking(id), Ok(false)), "already ticking");
    // A data guard held across the release: typed error, region still ticking.
    {
        let region = rz.region(id).unwrap();
        let _g = region.lock_data().unwrap();
        assert!(matches!(rz.mark_not_ticking(id), Err(Error::DataLocked(_))));
        assert!(matches!(rz.with_data(id, |_| ()), Err(Error::RegionTicking(_))));
    }
    assert_eq!(rz.region(id).unwrap().state(), RegionState::Ticking);
    assert!(rz.mark_not_ticking(id).unwrap());
    let e = rz.mark_not_ticking(id).unwrap_err();
    assert!(matches!(e, Error::NotTicking { state: RegionState::Ready, .. }), "{e}");
    assert!(rz.region(id).unwrap().lock_data().is_err(), "data only for the ticker");
    assert_eq!(rz.snapshot().unwrap().regions.len(), 1);
    // Remove the only chunk and purge: the region dies; its id then reads "not ticking, DEAD".
    rz.remove_chunk(ColumnPos::new(3, 3)).unwrap();
    assert!(rz.try_mark_ticking(id).unwrap());
    assert!(!rz.mark_not_ticking(id).unwrap(), "all sections dead: purged, region DEAD");
    assert!(rz.region(id).is_none());
    assert_eq!(rz.section_count(), 0);
    assert!(matches!(rz.try_mark_ticking(id), Ok(false)));
    assert!(matches!(
        rz.mark_not_ticking(id),
        Err(Error::NotTicking { state: RegionState::Dead, .. })
    ));
    rz.check_invariants().unwrap();
    // Chunk misuse.
    rz.add_chunk(ColumnPos::new(-1, -1)).unwrap();
    assert!(matches!(rz.add_chunk(ColumnPos::new(-1, -1)), Err(Error::DuplicateChunk { .. })));
    assert!(matches!(rz.remove_chunk(ColumnPos::new(-2, -1)), Err(Error::ChunkNotLoaded { .. })));
    assert!(matches!(rz.remove_chunk(ColumnPos::new(500, 0)), Err(Error::ChunkNotLoaded { .. })));
    rz.check_invariants().unwrap();
}

fn first_region(rz: &Rz) -> RegionId {
    if rz.region_count() == 0 {
        rz.add_chunk(ColumnPos::new(3, 3)).unwrap();
    }
    rz.region_ids().unwrap()[0]
}

#[test]
fn unknown_region_ids() {
    let rz = Rz::new(RegionizerConfig::folia_shift4(), NoCallbacks);
    rz.add_chunk(ColumnPos::new(0, 0)).unwrap();
    let id = rz.region_ids().unwrap()[0];
    // Forge an id that was never handed out through a second regionizer's later ids.
    let other = Rz::new(RegionizerConfig::folia_shift4(), NoCallbacks);
    for i in 0..5 {
        other.add_chunk(ColumnPos::new(i * 100, 0)).unwrap();
    }
    let far = *other.region_ids().unwrap().last().unwrap();
    assert!(far > id);
    assert!(matches!(rz.try_mark_ticking(far), Err(Error::UnknownRegion(_))));
    assert!(matches!(rz.mark_not_ticking(far), Err(Error::UnknownRegion(_))));
    assert!(matches!(rz.with_data(far, |_| ()), Err(Error::UnknownRegion(_))));
}

#[test]
fn cubic_owner_lookups() {
    let rz: Regionizer<ChunkPos, ()> =
        Regionizer::new(RegionizerConfig::folia_shift2(), NoCallbacks);
    rz.add_chunk(ChunkPos::new(-1, 5, 9)).unwrap();
    let id = rz.owner_of_chunk(ChunkPos::new(-1, 5, 9)).unwrap();
    assert_eq!(rz.owner_of_chunk_exact(ChunkPos::new(-4, 4, 8)).unwrap(), Some(id));
    // C = 2 sections of empty neighbours around: 5^3 sections.
    assert_eq!(rz.section_count(), 125);
    assert_eq!(rz.owner_of_chunk(ChunkPos::new(100, 0, 0)), None);
    assert_eq!(rz.loaded_chunks().unwrap(), vec![ChunkPos::new(-1, 5, 9)]);
    rz.check_invariants().unwrap();
}
