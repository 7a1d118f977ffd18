//! Folia's rules that only show in particular layouts, each in a scenario that fails when the
//! rule is deleted or changed: dead sections are purged when a region absorbed another, and
//! a region splits by adjacency within `max(merge radius, create radius)`, not the merge
//! radius alone. Invariant 7 (a ticking region's sections do not change) is checked by
//! `check_invariants` on every step.

use terrane_regionizer::{NoCallbacks, Regionizer, RegionizerConfig};
use terrane_section::ColumnPos;

type Rz = Regionizer<ColumnPos, ()>;

fn only_region(rz: &Rz) -> terrane_regionizer::RegionId {
    let ids = rz.region_ids().unwrap();
    assert_eq!(ids.len(), 1, "one region expected: {ids:?}");
    ids[0]
}

/// A region that absorbs another at the end of its tick purges its dead sections, even below
/// the recalc count and the dead fraction that would otherwise trigger a purge.
#[test]
fn a_region_that_absorbed_another_purges_its_dead_sections() {
    // Shift 4 (16×16-chunk sections, C = M = 1), with a recalc count no region here reaches.
    let cfg = RegionizerConfig::builder().recalc_count(1_000).build().unwrap();
    let rz = Rz::new(cfg, NoCallbacks);
    // Sections x = 0 and x = 3 (z = 0), each with its 3×3 ring of empty sections: the rings
    // touch (x = 1 and x = 2 are within M), so one region of 18 sections.
    rz.add_chunk(ColumnPos::new(0, 0)).unwrap();
    rz.add_chunk(ColumnPos::new(48, 0)).unwrap();
    let a = only_region(&rz);
    assert_eq!(rz.section_count(), 18);
    assert!(rz.try_mark_ticking(a).unwrap());
    // During the tick: x = 3 empties (its ring, x = 2..=4, is now dead: no chunk within C),
    // and a chunk loads at x = -3, whose new region must wait to merge into the ticking one.
    rz.remove_chunk(ColumnPos::new(48, 0)).unwrap();
    rz.add_chunk(ColumnPos::new(-48, 0)).unwrap();
    rz.check_invariants().unwrap();
    assert_eq!(rz.region_count(), 2);
    assert_eq!(rz.section_count(), 27);
    // The end of the tick absorbs the waiting region, then purges: 9 dead of 27 sections is
    // above the dead fraction, but 27 is far below the recalc count, so only the absorption
    // can be the reason.
    assert!(rz.mark_not_ticking(a).unwrap());
    rz.check_invariants().unwrap();
    assert_eq!(only_region(&rz), a);
    assert_eq!(rz.section_count(), 18, "the dead ring of x = 3 is purged");
    assert_eq!(rz.owner_of_section(ColumnPos::new(3, 0)), None);
    assert_eq!(rz.owner_of_section(ColumnPos::new(-3, 0)), Some(a));

    // Without an absorption the same dead sections stay (control).
    let rz = Rz::new(cfg, NoCallbacks);
    rz.add_chunk(ColumnPos::new(0, 0)).unwrap();
    rz.add_chunk(ColumnPos::new(48, 0)).unwrap();
    let a = only_region(&rz);
    assert!(rz.try_mark_ticking(a).unwrap());
    rz.remove_chunk(ColumnPos::new(48, 0)).unwrap();
    assert!(rz.mark_not_ticking(a).unwrap());
    rz.check_invariants().unwrap();
    assert_eq!(rz.section_count(), 18, "nothing absorbed, below the recalc count: no purge");
    assert_eq!(rz.owner_of_section(ColumnPos::new(3, 0)), Some(a));
}

/// After a purge, sections stay one region while they are within `max(M, C)` of each other.
/// With shift 2 (C = 2, M = 1), two live sections 6 apart keep rings (radius C) with a gap of
/// 2 between them: one region by Folia's rule, two if the split used M alone.
#[test]
fn a_region_splits_by_the_larger_of_the_merge_and_create_radii() {
    let cfg = RegionizerConfig::folia_shift2()
        .to_builder()
        .recalc_count(2)
        .max_dead_fraction(0.05)
        .build()
        .unwrap();
    assert_eq!((cfg.create_radius(), cfg.merge_radius()), (2, 1));
    let rz = Rz::new(cfg, NoCallbacks);
    // Sections x = 0, 3, 6 (4×4-chunk sections: chunk x = 4 × section x), one region.
    for x in [0, 12, 24] {
        rz.add_chunk(ColumnPos::new(x, 0)).unwrap();
    }
    let a = only_region(&rz);
    assert!(rz.try_mark_ticking(a).unwrap());
    // x = 3 empties: its section is dead (no chunk within C = 2), its neighbours are not.
    rz.remove_chunk(ColumnPos::new(12, 0)).unwrap();
    assert!(rz.mark_not_ticking(a).unwrap(), "purged, and still one region");
    rz.check_invariants().unwrap();
    assert_eq!(rz.owner_of_section(ColumnPos::new(3, 0)), None, "the dead section is purged");
    let b = only_region(&rz);
    assert_eq!(rz.owner_of_section(ColumnPos::new(0, 0)), Some(b));
    assert_eq!(rz.owner_of_section(ColumnPos::new(6, 0)), Some(b));

    // Three apart more (x = 0 and x = 9 with x = 4.5 gone): rings 3 apart, beyond max(M, C):
    // the region splits in two (control).
    let rz = Rz::new(cfg, NoCallbacks);
    for x in [0, 16, 36] {
        rz.add_chunk(ColumnPos::new(x, 0)).unwrap();
    }
    let a = only_region(&rz);
    assert!(rz.try_mark_ticking(a).unwrap());
    rz.remove_chunk(ColumnPos::new(16, 0)).unwrap();
    assert!(!rz.mark_not_ticking(a).unwrap(), "split: the old region is gone");
    rz.check_invariants().unwrap();
    assert_eq!(rz.region_count(), 2);
}
