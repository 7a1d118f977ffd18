//! `union_with` against a set model.

use std::collections::BTreeSet;

use proptest::prelude::*;
use terrane_distance::DistanceGraph;
use terrane_section::ColumnPos;

fn pos() -> impl Strategy<Value = ColumnPos> {
    prop_oneof![
        (-40i32..40, -40i32..40).prop_map(|(x, z)| ColumnPos::new(x, z)),
        (-5000i32..5000, -5000i32..5000).prop_map(|(x, z)| ColumnPos::new(x, z)),
    ]
}

proptest! {
    #[test]
    fn union_is_the_set_union(a in prop::collection::vec(pos(), 0..200), b in prop::collection::vec(pos(), 0..200)) {
        let (mut ga, mut gb) = (DistanceGraph::new(), DistanceGraph::new());
        for p in &a { ga.insert(*p).unwrap(); }
        for p in &b { gb.insert(*p).unwrap(); }
        let sa: BTreeSet<_> = a.iter().map(|p| (p.x, p.z)).collect();
        let all: BTreeSet<_> = sa.iter().copied().chain(b.iter().map(|p| (p.x, p.z))).collect();
        let added = ga.union_with(&gb).unwrap();
        prop_assert_eq!(added, (all.len() - sa.len()) as u64);
        prop_assert_eq!(ga.len(), all.len() as u64);
        for (x, z) in all {
            prop_assert!(ga.contains(ColumnPos::new(x, z)));
        }
    }
}
