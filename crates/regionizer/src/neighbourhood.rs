//! What [`check_invariants`](crate::Regionizer::check_invariants) needs to know about the
//! neighbourhoods of a section table (invariants 2 and 6), computed in one of two ways that
//! give the same [`Facts`]:
//!
//! - **dense**: the table is laid on a grid over its bounding box (grown by the larger radius),
//!   and box sums and box minima are taken one axis at a time: O(volume × dims × (2R+1));
//! - **by lookup**: a hash lookup at every position around every section:
//!   O(sections × (2R+1)^dims).
//!
//! A 3D table with radius 2 costs 125 lookups per section by lookup and about 30 array steps per
//! grid cell dense, so [`facts`] goes dense whenever the grid holds no more cells than the
//! lookups would visit. The tests below compare both ways on random tables.

use std::collections::BTreeSet;

use terrane_section::GridPos;

/// One section of the table.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SectionFact<P> {
    pub pos: P,
    pub non_empty: bool,
    pub owner: u64,
}

/// The neighbourhood facts of a table.
#[derive(Debug)]
pub(crate) struct Facts<P> {
    /// A non-empty section and a position within C of it that holds no section (the first one
    /// found). When set, `non_empty_near` is not computed.
    pub missing: Option<(P, P)>,
    /// Per table entry, in table order: the non-empty sections within C, itself excluded.
    pub non_empty_near: Vec<u32>,
    /// Every pair of different owners (smaller first) with sections within M of each other.
    pub owner_pairs: BTreeSet<(u64, u64)>,
}

/// The facts of `table` for create radius `c` and merge radius `m` (positions unique).
pub(crate) fn facts<P: GridPos>(table: &[SectionFact<P>], c: u32, m: u32) -> Facts<P> {
    let side = 2 * u128::from(c.max(m)) + 1;
    let lookups = (table.len() as u128).saturating_mul(side.saturating_pow(P::DIMS as u32));
    match Grid::over(table, c.max(m), lookups.min(1 << 24)) {
        Some(grid) => grid.facts(table, c, m),
        None => by_lookup(table, c, m),
    }
}

/// The facts by one hash lookup per neighbouring position.
fn by_lookup<P: GridPos>(table: &[SectionFact<P>], c: u32, m: u32) -> Facts<P> {
    let at: ahash::AHashMap<P, usize> = table.iter().enumerate().map(|(i, s)| (s.pos, i)).collect();
    let mut facts =
        Facts { missing: None, non_empty_near: vec![0; table.len()], owner_pairs: BTreeSet::new() };
    for s in table.iter().filter(|s| s.non_empty) {
        for q in s.pos.within(c) {
            if q == s.pos {
                continue;
            }
            match at.get(&q) {
                Some(&j) => facts.non_empty_near[j] += 1,
                None => {
                    facts.missing = Some((s.pos, q));
                    return facts;
                }
            }
        }
    }
    for s in table {
        for q in s.pos.within(m) {
            if let Some(&j) = at.get(&q)
                && table[j].owner != s.owner
            {
                let (a, b) = (s.owner, table[j].owner);
                facts.owner_pairs.insert((a.min(b), a.max(b)));
            }
        }
    }
    facts
}

/// A dense grid over a table's bounding box grown by a radius; axis 0 is contiguous.
struct Grid {
    dims: usize,
    lo: [i128; 3],
    len: [usize; 3],
    stride: [usize; 3],
    volume: usize,
}

impl Grid {
    /// The grid for `table` grown by `radius` on every side, or `None` when it would hold
    /// more than `max_cells` cells (or the table is empty).
    fn over<P: GridPos>(table: &[SectionFact<P>], radius: u32, max_cells: u128) -> Option<Self> {
        let dims = P::DIMS;
        let first = table.first()?.pos.coords();
        let mut lo = [0i128; 3];
        let mut hi = [0i128; 3];
        for d in 0..dims {
            lo[d] = i128::from(first.as_ref()[d]);
            hi[d] = lo[d];
        }
        for s in table {
            for (d, &v) in s.pos.coords().as_ref().iter().enumerate() {
                lo[d] = lo[d].min(i128::from(v));
                hi[d] = hi[d].max(i128::from(v));
            }
        }
        let (mut len, mut stride, mut volume) = ([1usize; 3], [0usize; 3], 1u128);
        for d in 0..dims {
            lo[d] -= i128::from(radius);
            let n = (hi[d] + i128::from(radius) - lo[d] + 1) as u128;
            stride[d] = volume as usize;
            volume = volume.saturating_mul(n);
            if volume > max_cells {
                return None;
            }
            len[d] = n as usize;
        }
        Some(Self { dims, lo, len, stride, volume: volume as usize })
    }

    fn index<P: GridPos>(&self, p: P) -> usize {
        let c = p.coords();
        (0..self.dims)
            .map(|d| (i128::from(c.as_ref()[d]) - self.lo[d]) as usize * self.stride[d])
            .sum()
    }

    /// The flat offsets of the cells within `radius` of a cell (itself included); valid for
    /// the cells at least `radius` from the grid's edge, which every section's cell is.
    fn offsets(&self, radius: u32) -> Vec<isize> {
        let r = radius as isize;
        let mut out = vec![0isize];
        for d in 0..self.dims {
            let stride = self.stride[d] as isize;
            out = out.iter().flat_map(|&o| (-r..=r).map(move |k| o + k * stride)).collect();
        }
        out
    }

    /// The position of cell `i`, or `None` when it does not fit `P`'s coordinates.
    fn pos<P: GridPos>(&self, i: usize) -> Option<P> {
        let mut c = [0i64; 3];
        for (d, v) in c.iter_mut().enumerate().take(self.dims) {
            *v = i64::try_from(self.lo[d] + ((i / self.stride[d]) % self.len[d]) as i128).ok()?;
        }
        P::from_coords(&c[..self.dims])
    }

    /// Replaces every cell with `fold` over the cells within `radius` of it along each axis in
    /// turn: a box fold for an associative `fold` that is a sum or idempotent (sum, min).
    /// Along an axis, cell `i` meets the cells `i ± k × stride` of its slab (the cells that
    /// share its coordinates on the slower axes), so each step is a fold of two whole
    /// subslices, which the compiler vectorises. Each axis writes a second buffer (the first
    /// step writes it whole), so no cell is copied on its own.
    fn box_fold<T: Copy + Default>(
        &self,
        cells: &mut Vec<T>,
        out: &mut Vec<T>,
        radius: u32,
        fold: impl Fn(T, T) -> T + Copy,
    ) {
        out.resize(cells.len(), T::default());
        for d in 0..self.dims {
            let (slab, stride) = (self.len[d] * self.stride[d], self.stride[d]);
            for (dst, src) in out.chunks_mut(slab).zip(cells.chunks(slab)) {
                let rest = slab - stride;
                if radius == 0 || rest == 0 {
                    dst.copy_from_slice(src);
                    continue;
                }
                // k = 1: the cell and the one after it, then the one before it.
                for ((a, &x), &y) in dst[..rest].iter_mut().zip(&src[..rest]).zip(&src[stride..]) {
                    *a = fold(x, y);
                }
                dst[rest..].copy_from_slice(&src[rest..]);
                for (a, &b) in dst[stride..].iter_mut().zip(&src[..rest]) {
                    *a = fold(*a, b);
                }
                for k in 2..=radius as usize {
                    let Some(rest) = slab.checked_sub(k * stride).filter(|&r| r > 0) else { break };
                    let off = k * stride;
                    for (a, &b) in dst[..rest].iter_mut().zip(&src[off..]) {
                        *a = fold(*a, b);
                    }
                    for (a, &b) in dst[off..].iter_mut().zip(&src[..rest]) {
                        *a = fold(*a, b);
                    }
                }
            }
            std::mem::swap(cells, out);
        }
    }

    fn facts<P: GridPos>(&self, table: &[SectionFact<P>], c: u32, m: u32) -> Facts<P> {
        let cell: Vec<usize> = table.iter().map(|s| self.index(s.pos)).collect();
        let mut present = vec![false; self.volume];
        let mut near = vec![0u32; self.volume];
        for (s, &i) in table.iter().zip(&cell) {
            present[i] = true;
            near[i] = u32::from(s.non_empty);
        }
        // (Wrapping: the sums stay below (2C + 1)^dims, and overflow checks would stop the
        // vectorising.)
        let mut scratch = Vec::new();
        self.box_fold(&mut near, &mut scratch, c, u32::wrapping_add);
        let mut facts =
            Facts { missing: None, non_empty_near: Vec::new(), owner_pairs: BTreeSet::new() };
        // A cell with non-empty sections around it must hold a section (when it is a position).
        // Blocks of cells are tested without branching first (vectorised), then searched.
        let is_hole = |(&n, &p): (&u32, &bool)| n > 0 && !p;
        let blocks = near.chunks(256).zip(present.chunks(256)).enumerate();
        let blocks =
            blocks.filter(|(_, (n, p))| n.iter().zip(*p).fold(false, |h, c| h | is_hole(c)));
        let holes = blocks.flat_map(|(b, (n, p))| {
            n.iter()
                .zip(p)
                .enumerate()
                .filter(move |&(_, c)| is_hole(c))
                .map(move |(j, _)| b * 256 + j)
        });
        for i in holes {
            let Some(q) = self.pos::<P>(i) else { continue };
            let p =
                q.within(c).find(|&p| p != q && table.iter().any(|s| s.pos == p && s.non_empty));
            if let Some(p) = p {
                facts.missing = Some((p, q));
                return facts;
            }
        }
        facts.non_empty_near =
            table.iter().zip(&cell).map(|(s, &i)| near[i] - u32::from(s.non_empty)).collect();
        // Owners within M, as ranks (u32, so that the box minimum vectorises). Of two
        // sections within M with different owners, the one with the larger owner sees a smaller
        // one than its own in its box minimum: only such sections are scanned.
        let mut owners: Vec<u64> = table.iter().map(|s| s.owner).collect();
        owners.sort_unstable();
        owners.dedup();
        let rank: Vec<u32> = table
            .iter()
            .map(|s| owners.binary_search(&s.owner).map_or(u32::MAX, |r| r as u32))
            .collect();
        let mut owner = vec![u32::MAX; self.volume];
        for (&r, &i) in rank.iter().zip(&cell) {
            owner[i] = r;
        }
        let mut low = near;
        low.copy_from_slice(&owner);
        self.box_fold(&mut low, &mut scratch, m, u32::min);
        // The cells within M of a section, as offsets (the grid's margin keeps them inside).
        let offsets: Vec<isize> = self.offsets(m);
        for (&i, &r) in cell.iter().zip(&rank) {
            if low[i] == r {
                continue;
            }
            for &d in &offsets {
                let o = owner[i.wrapping_add_signed(d)];
                if o < r {
                    facts.owner_pairs.insert((owners[o as usize], owners[r as usize]));
                }
            }
        }
        facts
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use terrane_section::{ChunkPos, ColumnPos};

    use super::*;

    fn table<P: GridPos>(cells: &[(i64, i64, i64, bool, u64)]) -> Vec<SectionFact<P>> {
        let mut seen = BTreeSet::new();
        cells
            .iter()
            .filter_map(|&(x, y, z, non_empty, owner)| {
                let pos = P::from_coords(&[x, y, z][..P::DIMS])?;
                seen.insert(pos).then_some(SectionFact { pos, non_empty, owner })
            })
            .collect()
    }

    /// Both ways agree; a reported hole is a real one.
    fn agree<P: GridPos>(t: &[SectionFact<P>], c: u32, m: u32) {
        let want = by_lookup(t, c, m);
        let grid = Grid::over(t, c.max(m), u128::MAX).expect("non-empty table");
        let got = grid.facts(t, c, m);
        assert_eq!(got.missing.is_some(), want.missing.is_some(), "{got:?} vs {want:?}");
        if let Some((p, q)) = got.missing {
            assert!(t.iter().any(|s| s.pos == p && s.non_empty));
            assert!(!t.iter().any(|s| s.pos == q));
            assert!(p.chebyshev(q) <= u64::from(c) && p != q);
        } else {
            assert_eq!(got.non_empty_near, want.non_empty_near);
        }
        assert_eq!(got.owner_pairs, want.owner_pairs);
    }

    /// A full block around a few non-empty sections (no hole), so the counts are compared.
    fn closed<P: GridPos>(t: Vec<SectionFact<P>>, c: u32) -> Vec<SectionFact<P>> {
        let mut out = t.clone();
        let mut seen: BTreeSet<P> = t.iter().map(|s| s.pos).collect();
        for s in t.iter().filter(|s| s.non_empty) {
            for q in s.pos.within(c) {
                if seen.insert(q) {
                    out.push(SectionFact { pos: q, non_empty: false, owner: s.owner });
                }
            }
        }
        out
    }

    fn cells() -> impl Strategy<Value = Vec<(i64, i64, i64, bool, u64)>> {
        prop::collection::vec((-6i64..6, -6i64..6, -6i64..6, any::<bool>(), 0u64..4), 1..40)
    }

    proptest! {
        #[test]
        fn dense_and_lookup_agree_2d(cells in cells(), c in 0u32..3, m in 0u32..3, close: bool) {
            let t = table::<ColumnPos>(&cells);
            agree(&if close { closed(t, c) } else { t }, c, m);
        }

        #[test]
        fn dense_and_lookup_agree_3d(cells in cells(), c in 0u32..3, m in 0u32..3, close: bool) {
            let t = table::<ChunkPos>(&cells);
            agree(&if close { closed(t, c) } else { t }, c, m);
        }
    }

    /// At the edge of `ColumnPos`'s range the positions past it are not holes.
    #[test]
    fn the_edge_of_the_coordinate_range_is_no_hole() {
        let edge = i64::from(i32::MAX);
        let t = closed(table::<ColumnPos>(&[(edge, edge, 0, true, 1)]), 2);
        agree(&t, 2, 2);
        assert!(Grid::over(&t, 2, u128::MAX).unwrap().facts(&t, 2, 2).missing.is_none());
    }

    /// Far-apart sections make the grid too big: `facts` looks up instead, with the same answer.
    #[test]
    fn a_sparse_table_is_looked_up() {
        let t = closed(table::<ChunkPos>(&[(0, 0, 0, true, 1), (1 << 40, 0, 0, true, 2)]), 1);
        assert!(Grid::over(&t, 1, 1 << 24).is_none());
        let f = facts(&t, 1, 1);
        assert!(f.missing.is_none() && f.owner_pairs.is_empty());
        assert_eq!(f.non_empty_near.iter().sum::<u32>(), 2 * 26);
    }
}
