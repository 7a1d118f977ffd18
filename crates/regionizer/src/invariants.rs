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
        // Copy the section table: position, non-empty, owner; beside it, non_empty_neighbours.
        let mut table: Vec<SectionFact<P>> = Vec::with_capacity(self.sections.len());
        let mut nens: Vec<u32> = Vec::with_capacity(self.sections.len());
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
            let owner = e.value().owner.load(Ordering::Acquire);
            table.push(SectionFact { pos: *e.key(), non_empty: st.count > 0, owner });
            nens.push(st.nen);
        }
        let at: ahash::AHashMap<P, usize> =
            table.iter().enumerate().map(|(i, s)| (s.pos, i)).collect();
        let is_dead = |i: usize| !table[i].non_empty && nens[i] == 0;
        // 2. sections exist around non-empty ones, and each counts the non-empty sections
        // within C; 6. (below) owners that meet within M.
        let facts = neighbourhood::facts(&table, c, m);
        if let Some((p, q)) = facts.missing {
            return fail(2, format!("non-empty section {p:?} lacks neighbour {q:?} within C"));
        }
        let mut dead_sections = 0;
        for (i, (s, &n)) in table.iter().zip(&facts.non_empty_near).enumerate() {
            let (p, nen, owner) = (s.pos, nens[i], s.owner);
            // 2. non_empty_neighbours.
            if n != nen {
                return fail(2, format!("section {p:?}: non_empty_neighbours {nen}, actual {n}"));
            }
            // 4. owned by a live region (that it lists it: below, by counting).
            if !w.regions.contains_key(&RegionId(owner)) {
                return fail(4, format!("section {p:?} owned by {owner}, not a live region"));
            }
            dead_sections += usize::from(is_dead(i));
        }
        // 4. and 3. Every section a region lists is one it owns, and every dead section in
        // its dead set is dead; with as many listed as there are (dead) sections, every
        // (dead) section is listed by its owner.
        let (mut total, mut dead_total) = (0, 0);
        for (&id, r) in &w.regions {
            total += r.sections.len();
            dead_total += r.dead.len();
            if r.sections.is_empty() {
                return fail(4, format!("live region {id} owns no section"));
            }
            for p in &r.sections {
                if at.get(p).is_none_or(|&i| table[i].owner != id.0) {
                    return fail(4, format!("region {id} lists section {p:?} it does not own"));
                }
            }
            for p in &r.dead {
                let Some(&i) = at.get(p).filter(|&&i| table[i].owner == id.0) else {
                    return fail(3, format!("region {id} has dead section {p:?} outside its set"));
                };
                if !is_dead(i) {
                    return fail(
                        3,
                        format!("section {p:?}: dead false but dead-set membership true"),
                    );
                }
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
        // 4. disjoint and covering; 3. every dead section in its region's dead set.
        if total != table.len() {
            let p = table.iter().find(|s| {
                !w.regions.get(&RegionId(s.owner)).is_some_and(|r| r.sections.contains(&s.pos))
            });
            let p =
                p.map_or(String::new(), |s| format!(" ({:?} is not in its owner's set)", s.pos));
            return fail(
                4,
                format!("regions own {total} sections, the map has {}{p}", table.len()),
            );
        }
        if dead_total != dead_sections {
            let p = table.iter().enumerate().find(|&(i, s)| {
                is_dead(i)
                    && !w.regions.get(&RegionId(s.owner)).is_some_and(|r| r.dead.contains(&s.pos))
            });
            let p = p.map_or(String::new(), |(_, s)| format!(": {:?} is not", s.pos));
            return fail(3, format!("{dead_sections} dead sections, {dead_total} in dead sets{p}"));
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

    /// Membership is checked by counting: a section missing from its owner's set, or a dead
    /// section missing from its owner's dead set, is still caught.
    #[test]
    fn a_section_left_out_of_its_regions_sets_breaks_invariants_4_and_3() {
        let rz = world();
        let edge = ColumnPos::new(1, 1);
        rz.write().unwrap().regions.values_mut().next().unwrap().sections.remove(&edge);
        assert_eq!(broken(&rz), 4);
        let rz = world();
        rz.remove_chunk(ColumnPos::new(0, 0)).unwrap();
        rz.add_chunk(ColumnPos::new(5, 5)).unwrap();
        rz.check_invariants().unwrap();
        let mut w = rz.write().unwrap();
        let r = w
            .regions
            .values_mut()
            .find(|r| !r.dead.is_empty())
            .expect("a region with dead sections");
        let p = *r.dead.iter().next().unwrap();
        r.dead.remove(&p);
        drop(w);
        assert_eq!(broken(&rz), 3);
    }

    /// Owners that meet within M are wired to invariant 6: a region next to a ticking one,
    /// with its pending merge taken away (and made READY, so that invariant 5 still holds),
    /// is caught.
    #[test]
    fn regions_within_m_without_a_pending_merge_break_invariant_6() {
        use std::sync::atomic::Ordering;

        use crate::RegionState;

        let rz = world();
        let ticking = rz.owner_of_chunk_exact(ColumnPos::new(0, 0)).unwrap().unwrap();
        assert!(rz.try_mark_ticking(ticking).unwrap());
        rz.add_chunk(ColumnPos::new(3, 0)).unwrap();
        rz.check_invariants().unwrap();
        let mut w = rz.write().unwrap();
        w.regions.get_mut(&ticking).unwrap().emf.clear();
        let later = w.regions.values_mut().find(|r| !r.mil.is_empty()).expect("a pending merge");
        later.mil.clear();
        (later.state, later.active) = (RegionState::Ready, true);
        later.shared.state.store(RegionState::Ready as u8, Ordering::Release);
        drop(w);
        assert_eq!(broken(&rz), 6);
    }
}
