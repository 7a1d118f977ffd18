//! `check_invariants`: the eight invariants of the spec, verified from scratch.

use std::sync::atomic::Ordering;

use terrane_section::GridPos;

use crate::neighbourhood::{self, SectionFact};
use crate::{Error, RegionData, RegionId, RegionState, Regionizer, Result};

fn fail<T>(number: u8, detail: String) -> Result<T> {
    Err(Error::Invariant { number, detail })
}

impl<P: GridPos, D: RegionData<P>> Regionizer<P, D> {
    /// Verifies every invariant of the spec (numbered as there) from scratch, under the write
    /// lock. Chunk counts are compared with the chunk presence bits, so invariant 1 is exact
    /// only when no `add_chunk` / `remove_chunk` runs concurrently (their fast paths do not
    /// take the write lock): call it at quiescent points. Invariant 8's callback order is
    /// checked as far as the regionizer can see it (a region is active iff READY or TICKING,
    /// dead regions are unregistered); a recording [`Callbacks`](crate::Callbacks) checks the
    /// rest in the tests. Costs O(sections × (2R+1)^dims) at most, R the larger radius, and
    /// about O(bounding box × dims × (2R+1)) where the sections are close together (see
    /// `neighbourhood.rs`).
    ///
    /// # Errors
    /// [`Error::Invariant`] naming the first broken invariant; [`Error::Reentrant`];
    /// [`Error::Poisoned`].
    pub fn check_invariants(&self) -> Result<()> {
        let w = self.write()?;
        let cfg = *self.config();
        let c = cfg.create_radius();
        let m = cfg.merge_radius();
        // Copy the section table: (count, nen, owner, popcount).
        let mut secs: ahash::AHashMap<P, (u32, u32, u64)> = ahash::AHashMap::new();
        for e in self.sections.iter() {
            let st = e.value().st.lock();
            if st.removed {
                return fail(4, format!("section {:?} is in the map but marked purged", e.key()));
            }
            // 1. counts equal the chunks present.
            if st.count != st.popcount() {
                return fail(
                    1,
                    format!(
                        "section {:?}: count {} but {} chunks present",
                        e.key(),
                        st.count,
                        st.popcount()
                    ),
                );
            }
            secs.insert(*e.key(), (st.count, st.nen, e.value().owner.load(Ordering::Acquire)));
        }
        // 2. sections exist around non-empty ones, and each counts the non-empty sections
        // within C; 6. (below) owners that meet within M.
        let table: Vec<SectionFact<P>> = secs
            .iter()
            .map(|(&pos, &(count, _, owner))| SectionFact { pos, non_empty: count > 0, owner })
            .collect();
        let facts = neighbourhood::facts(&table, c, m);
        if let Some((p, q)) = facts.missing {
            return fail(2, format!("non-empty section {p:?} lacks neighbour {q:?} within C"));
        }
        for (s, &n) in table.iter().zip(&facts.non_empty_near) {
            let (p, (count, nen, owner)) = (s.pos, secs[&s.pos]);
            // 2. non_empty_neighbours.
            if n != nen {
                return fail(2, format!("section {p:?}: non_empty_neighbours {nen}, actual {n}"));
            }
            // 4. owned by a live region that lists it; 3. dead set membership.
            let Some(r) = w.regions.get(&RegionId(owner)) else {
                return fail(4, format!("section {p:?} owned by {owner}, not a live region"));
            };
            if !r.sections.contains(&p) {
                return fail(4, format!("section {p:?} owned by {owner} but not in its set"));
            }
            let dead = count == 0 && nen == 0;
            if dead != r.dead.contains(&p) {
                return fail(
                    3,
                    format!("section {p:?}: dead {dead} but dead-set membership {}", !dead),
                );
            }
        }
        let mut total = 0;
        for (&id, r) in &w.regions {
            total += r.sections.len();
            if r.sections.is_empty() {
                return fail(4, format!("live region {id} owns no section"));
            }
            for p in &r.sections {
                match secs.get(p) {
                    Some(&(_, _, o)) if o == id.0 => {}
                    _ => {
                        return fail(4, format!("region {id} lists section {p:?} it does not own"));
                    }
                }
            }
            if let Some(p) = r.dead.iter().find(|p| !r.sections.contains(p)) {
                return fail(3, format!("region {id} has dead section {p:?} outside its set"));
            }
            // 5. merge-later links.
            for z in &r.mil {
                let Some(zr) = w.regions.get(z) else {
                    return fail(5, format!("region {id} merges later into dead {z}"));
                };
                if !zr.emf.contains(&id) {
                    return fail(5, format!("link {id} -> {z} not mirrored"));
                }
                if zr.state != RegionState::Ticking {
                    return fail(5, format!("region {id} merges later into non-ticking {z}"));
                }
            }
            for x in &r.emf {
                if !w.regions.get(x).is_some_and(|xr| xr.mil.contains(&id)) {
                    return fail(5, format!("link {x} -> {id} not mirrored"));
                }
            }
            if r.mil.is_empty() == (r.state == RegionState::Transient) {
                return fail(
                    5,
                    format!(
                        "region {id} is {:?} with {} merge-later targets",
                        r.state,
                        r.mil.len()
                    ),
                );
            }
            if !r.emf.is_empty() && r.state != RegionState::Ticking {
                return fail(5, format!("region {id} expects merges but is {:?}", r.state));
            }
            // 7. a ticking region's sections are frozen: the set equals the one recorded when
            // its tick began (debug builds keep that copy; release builds skip the check).
            #[cfg(debug_assertions)]
            if r.state == RegionState::Ticking
                && r.ticking_sections.as_ref().is_some_and(|at_start| *at_start != r.sections)
            {
                return fail(7, format!("ticking region {id} changed its section set"));
            }
            // 8. lifecycle as far as visible here.
            let active = matches!(r.state, RegionState::Ready | RegionState::Ticking);
            if r.active != active {
                return fail(
                    8,
                    format!("region {id} is {:?} but active flag {}", r.state, r.active),
                );
            }
            if r.shared.state.load(Ordering::Acquire) != r.state as u8 {
                return fail(8, format!("region {id}: published state differs"));
            }
            let Some(l) = self.region(id) else {
                return fail(8, format!("live region {id} missing from the lookup table"));
            };
            if l.id() != id || r.shared.data.try_lock().is_some_and(|d| d.is_none()) {
                return fail(8, format!("live region {id} lost its data"));
            }
        }
        // 4. disjoint and covering.
        if total != secs.len() {
            return fail(4, format!("regions own {total} sections, the map has {}", secs.len()));
        }
        if self.region_count() != w.regions.len() {
            return fail(
                8,
                format!("{} regions registered, {} live", self.region_count(), w.regions.len()),
            );
        }
        // 6. sections within M with different owners: one is pending a merge into the other.
        for (a, b) in facts.owner_pairs {
            let (ra, rb) = (&w.regions[&RegionId(a)], &w.regions[&RegionId(b)]);
            if !ra.mil.contains(&RegionId(b)) && !rb.mil.contains(&RegionId(a)) {
                return fail(
                    6,
                    format!("regions #{a} and #{b} are within M with no pending merge"),
                );
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use terrane_section::ColumnPos;

    use crate::{Error, NoCallbacks, Regionizer, RegionizerConfig};

    fn world() -> Regionizer<ColumnPos, ()> {
        let cfg = RegionizerConfig::builder().shift(0).create_radius(1).merge_radius(1).build();
        let rz = Regionizer::new(cfg.expect("valid"), NoCallbacks);
        rz.add_chunk(ColumnPos::new(0, 0)).unwrap();
        rz.check_invariants().unwrap();
        rz
    }

    fn broken(rz: &Regionizer<ColumnPos, ()>) -> u8 {
        match rz.check_invariants() {
            Err(Error::Invariant { number, .. }) => number,
            other => panic!("a broken state passed: {other:?}"),
        }
    }

    /// The neighbourhood facts are wired to invariant 2: a wrong count and a missing
    /// neighbour are both caught.
    #[test]
    fn a_wrong_neighbour_count_or_a_missing_neighbour_breaks_invariant_2() {
        let rz = world();
        rz.sections.get(&ColumnPos::new(1, 1)).unwrap().st.lock().nen += 1;
        assert_eq!(broken(&rz), 2);
        let rz = world();
        rz.sections.remove(&ColumnPos::new(1, 1));
        assert_eq!(broken(&rz), 2);
    }
}
