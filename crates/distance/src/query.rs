//! The disc queries: nearest incomplete batch, exact counts, completed chunks near to far.

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

use terrane_section::ColumnPos;

use crate::geom::{self, Disc, Rect, level_shift};
use crate::graph::{DistanceGraph, ROOT_MAX, ROOT_MIN, ROOT_SHIFT, View};
use crate::{Claims, Error};

/// The answer of [`DistanceGraph::nearest_incomplete`]: a batch of 4×4 chunks with work left.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Hit {
    /// The batch, in batch coordinates (chunk coordinates `>> 2`).
    pub batch: ColumnPos,
    /// Squared distance from the centre to the nearest chunk of `missing`.
    pub d2: u64,
    /// The batch's chunks inside the disc that are not completed (and not excluded or
    /// claimed): bit `(x & 3) + 4 * (z & 3)`. Never 0.
    pub missing: u16,
}

impl Hit {
    /// The chunks of [`missing`](Self::missing), in bit order (z-major).
    pub fn chunks(&self) -> impl Iterator<Item = ColumnPos> + use<> {
        let (bx, bz, m) = (self.batch.x, self.batch.z, self.missing);
        (0..16)
            .filter(move |i| m >> i & 1 == 1)
            .map(move |i| ColumnPos::new(bx * 4 + (i & 3), bz * 4 + (i >> 2)))
    }
}

/// A completed chunk and its squared distance from the centre, as yielded by
/// [`DistanceGraph::completed_near_to_far`]; also the resume cursor.
///
/// Ordered by `(d2, z, x)`, the iteration order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Near {
    /// Squared Euclidean distance from the centre, in chunks².
    pub d2: u64,
    /// The chunk.
    pub pos: ColumnPos,
}

impl Near {
    #[inline]
    fn key(&self) -> (u64, i32, i32) {
        (self.d2, self.pos.z, self.pos.x)
    }
}

impl Ord for Near {
    fn cmp(&self, other: &Self) -> Ordering {
        self.key().cmp(&other.key())
    }
}

impl PartialOrd for Near {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// A best-first queue entry. `kind` 0 is a final answer (a filtered batch with its key, or a
/// chunk), `kind` 1 a cell whose key is a lower bound of everything inside it (for a batch of
/// the search: its exact key before the caller's filter). `(key, z, x)` of a cell
/// is componentwise at most that of anything inside, so lexicographic order pops exact answers
/// in order and never expands a cell whose bound exceeds the answer.
#[derive(Clone, Copy)]
struct Item<'a> {
    key: u64,
    z: i64,
    x: i64,
    kind: u8,
    level: u8,
    missing: u16,
    view: View<'a>,
}

impl Item<'_> {
    #[inline]
    fn order(&self) -> (u64, i64, i64, u8) {
        (self.key, self.z, self.x, self.kind)
    }
}

impl PartialEq for Item<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.order() == other.order()
    }
}
impl Eq for Item<'_> {}
impl PartialOrd for Item<'_> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Item<'_> {
    fn cmp(&self, other: &Self) -> Ordering {
        // BinaryHeap is a max-heap: reverse for smallest first.
        other.order().cmp(&self.order())
    }
}

/// Smallest squared distance among the bits of `missing` (`d` from [`Disc::batch_mask`]).
#[inline]
fn batch_key(missing: u16, d: &[u64; 16]) -> u64 {
    let mut key = u64::MAX;
    let mut m = missing;
    while m != 0 {
        key = key.min(d[m.trailing_zeros() as usize]);
        m &= m - 1;
    }
    key
}

/// Highest virtual level: cells of side 2^32 (the valid range spans cells -1 and 0).
const TOP_LEVEL: u8 = 10;

impl DistanceGraph {
    /// The nearest batch with work left in the disc `D(c, r)`.
    ///
    /// `missing(b)` is the set of chunks of batch `b` inside the disc that are not completed;
    /// the candidates are the batches with `missing(b) != 0` for which `excluded(b)` is false
    /// (`b` in batch coordinates). A batch's key is the smallest squared distance of its
    /// missing chunks; the result is the candidate with the smallest `(key, bz, bx)`. Chunks
    /// outside the disc never make a batch a candidate. Pure: the caller claims what it takes
    /// (see [`Claims`] and [`nearest_unclaimed`](Self::nearest_unclaimed)).
    ///
    /// Best-first search over the hierarchy: cells that are full, or farther than the answer,
    /// are never expanded; `excluded` is called only for batches with missing chunks, in
    /// increasing key order, until one is accepted.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] when the centre is out of range.
    pub fn nearest_incomplete(
        &self,
        c: ColumnPos,
        r: u32,
        mut excluded: impl FnMut(ColumnPos) -> bool,
    ) -> Result<Option<Hit>, Error> {
        let disc = Disc::new(c, r)?;
        Ok(self.search(&disc, |b| if excluded(b) { 0xFFFF } else { 0 }))
    }

    /// [`nearest_incomplete`](Self::nearest_incomplete) where the chunks claimed in `claims`
    /// count as not missing: a batch whose missing chunks are all claimed is skipped, and a
    /// partly claimed batch offers only its unclaimed chunks (in [`Hit::missing`], and its key).
    ///
    /// # Errors
    /// [`Error::OutOfRange`] when the centre is out of range.
    pub fn nearest_unclaimed(
        &self,
        c: ColumnPos,
        r: u32,
        claims: &Claims,
    ) -> Result<Option<Hit>, Error> {
        let disc = Disc::new(c, r)?;
        Ok(self.search(&disc, |b| claims.claimed(b)))
    }

    /// Best-first search; `ignore(b)` gives the bits of batch `b` that do not count as missing.
    fn search(&self, disc: &Disc, mut ignore: impl FnMut(ColumnPos) -> u16) -> Option<Hit> {
        let mut heap = BinaryHeap::new();
        let b = disc.bounds();
        // Start at the lowest level (roots or above) where the disc's box spans few cells.
        let mut level = 3u8;
        loop {
            let s = level_shift(level);
            let n = ((b.x1 >> s) - (b.x0 >> s) + 1) * ((b.z1 >> s) - (b.z0 >> s) + 1);
            if n <= 16 || level == TOP_LEVEL {
                break;
            }
            level += 1;
        }
        let s = level_shift(level);
        for nz in b.z0 >> s..=b.z1 >> s {
            for nx in b.x0 >> s..=b.x1 >> s {
                let view = if level == 3 { self.root_view(nx, nz) } else { View::Super };
                self.push_cell(&mut heap, disc, view, level, nx, nz);
            }
        }
        while let Some(it) = heap.pop() {
            if it.kind == 0 {
                return Some(Hit {
                    batch: ColumnPos::new(it.x as i32, it.z as i32),
                    d2: it.key,
                    missing: it.missing,
                });
            }
            if it.level == 0 {
                // A batch with its exact key; the filter is applied now, lazily, in key order.
                let b = ColumnPos::new(it.x as i32, it.z as i32);
                let ign = ignore(b) & it.missing;
                if ign == 0 {
                    // Nothing in the heap sorts before it: the answer.
                    return Some(Hit { batch: b, d2: it.key, missing: it.missing });
                }
                let miss = it.missing & !ign;
                if miss != 0 {
                    let (_, d) = disc.batch_mask(it.x, it.z);
                    heap.push(Item { key: batch_key(miss, &d), kind: 0, missing: miss, ..it });
                }
                continue;
            }
            let shift = level_shift(it.level) - 2;
            let (nx, nz) = (it.x >> shift, it.z >> shift);
            for idx in 0..64u32 {
                let v = self.child_view(it.view, it.level, nx, nz, idx);
                let (cx, cz) = (nx * 8 + (idx & 7) as i64, nz * 8 + (idx >> 3) as i64);
                self.push_cell(&mut heap, disc, v, it.level - 1, cx, cz);
            }
        }
        None
    }

    #[inline]
    fn push_cell<'a>(
        &'a self,
        heap: &mut BinaryHeap<Item<'a>>,
        disc: &Disc,
        view: View<'a>,
        level: u8,
        nx: i64,
        nz: i64,
    ) {
        if matches!(view, View::Full) {
            return;
        }
        if level == 0 {
            // Batches are evaluated when pushed: only those with missing chunks enter the
            // queue, with their exact key.
            let (inside, d) = disc.batch_mask(nx, nz);
            let missing = inside & !view.mask();
            if missing != 0 {
                let key = batch_key(missing, &d);
                heap.push(Item { key, z: nz, x: nx, kind: 1, level, missing, view });
            }
            return;
        }
        let rect = Rect::cell(level, nx, nz).clip();
        if rect.is_empty() {
            return;
        }
        let key = disc.near(rect);
        if key > disc.r2 {
            return;
        }
        let shift = level_shift(level) - 2;
        heap.push(Item { key, z: nz << shift, x: nx << shift, kind: 1, level, missing: 0, view });
    }

    /// The views of the roots that may intersect the disc: the root cells of its box when there
    /// are fewer of them than roots, the stored roots otherwise.
    fn roots_near<'a>(&'a self, disc: &Disc) -> Vec<(i64, i64, View<'a>)> {
        let b = disc.bounds();
        let (rx0, rx1) = ((b.x0 >> ROOT_SHIFT).max(ROOT_MIN), (b.x1 >> ROOT_SHIFT).min(ROOT_MAX));
        let (rz0, rz1) = ((b.z0 >> ROOT_SHIFT).max(ROOT_MIN), (b.z1 >> ROOT_SHIFT).min(ROOT_MAX));
        let cells = (rx1 - rx0 + 1) as u128 * (rz1 - rz0 + 1) as u128;
        let mut out = Vec::new();
        if cells <= self.roots.len() as u128 {
            for rz in rz0..=rz1 {
                for rx in rx0..=rx1 {
                    let v = self.root_view(rx, rz);
                    if !matches!(v, View::Empty) {
                        out.push((rx, rz, v));
                    }
                }
            }
        } else {
            for &(rx, rz) in self.roots.keys() {
                let (rx, rz) = (rx as i64, rz as i64);
                if (rx0..=rx1).contains(&rx) && (rz0..=rz1).contains(&rz) {
                    out.push((rx, rz, self.root_view(rx, rz)));
                }
            }
        }
        out
    }

    /// Number of completed chunks in the disc `D(c, r)`. Exact.
    ///
    /// Cells entirely inside the disc contribute their cached count in `O(1)`, full cells cut
    /// by the circle are counted row by row, partial cells cut by the circle are recursed into:
    /// `O(r + cells cut by the circle)`, and never chunk by chunk over empty or full space.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] when the centre is out of range.
    pub fn count_completed(&self, c: ColumnPos, r: u32) -> Result<u64, Error> {
        let disc = Disc::new(c, r)?;
        Ok(self
            .roots_near(&disc)
            .into_iter()
            .map(|(rx, rz, v)| self.count_view(&disc, v, 3, rx, rz))
            .sum())
    }

    fn count_view(&self, disc: &Disc, v: View<'_>, level: u8, nx: i64, nz: i64) -> u64 {
        if matches!(v, View::Empty) {
            return 0;
        }
        let rect = Rect::cell(level, nx, nz);
        if disc.near(rect) > disc.r2 {
            return 0;
        }
        if disc.far(rect) <= disc.r2 {
            return v.count(level);
        }
        match v {
            View::Full => disc.points_in(rect),
            View::Mask(m) => (m & disc.batch_mask(nx, nz).0).count_ones() as u64,
            _ => (0..64u32)
                .map(|idx| {
                    let cv = self.child_view(v, level, nx, nz, idx);
                    self.count_view(
                        disc,
                        cv,
                        level - 1,
                        nx * 8 + (idx & 7) as i64,
                        nz * 8 + (idx >> 3) as i64,
                    )
                })
                .sum(),
        }
    }

    /// Number of chunks of the disc `D(c, r)` that are not completed. Exact:
    /// `count_missing + count_completed == disc_size`.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] when the centre is out of range.
    pub fn count_missing(&self, c: ColumnPos, r: u32) -> Result<u64, Error> {
        Ok(Self::disc_size(c, r)? - self.count_completed(c, r)?)
    }

    /// `|D(c, r)|`: the number of valid chunks (`|x|, |z| < 2^30`) in the disc, counted as
    /// lattice points row by row in `O(r)`.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] when the centre is out of range.
    pub fn disc_size(c: ColumnPos, r: u32) -> Result<u64, Error> {
        let disc = Disc::new(c, r)?;
        let all = Rect { x0: geom::DMIN, z0: geom::DMIN, x1: geom::DMAX, z1: geom::DMAX };
        if disc.far(all) <= disc.r2 {
            let side = (geom::DMAX - geom::DMIN + 1) as u64;
            return Ok(side * side);
        }
        Ok(disc.points_in(all))
    }

    /// Adds every chunk completed in `other` (the union of two graphs, e.g. the progress of
    /// several servers of one world). Returns how many were new.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] for chunks too far out to be visited (never in practice).
    pub fn union_with(&mut self, other: &DistanceGraph) -> Result<u64, Error> {
        let size = 1i32 << crate::graph::ROOT_SHIFT;
        let mut added = 0;
        let mut roots: Vec<(i32, i32)> = other.roots.keys().copied().collect();
        roots.sort_unstable();
        for (rx, rz) in roots {
            // A disc around the root's centre whose radius covers its square.
            let c = ColumnPos::new(rx * size + size / 2, rz * size + size / 2);
            for n in other.completed_near_to_far(c, size as u32, None)? {
                if n.pos.x >> crate::graph::ROOT_SHIFT == rx
                    && n.pos.z >> crate::graph::ROOT_SHIFT == rz
                    && self.insert(n.pos)?
                {
                    added += 1;
                }
            }
        }
        Ok(added)
    }

    /// Every completed chunk of the disc `D(c, r)`, in strictly increasing `(d2, z, x)` order,
    /// starting strictly after `after` when given (pass the last item seen to resume: a cursor
    /// instead of an "already sent" set).
    ///
    /// Best-first over the hierarchy: the first `k` items cost `O((k + frontier) log
    /// frontier)`; cells entirely before the cursor are skipped.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] when the centre is out of range.
    pub fn completed_near_to_far(
        &self,
        c: ColumnPos,
        r: u32,
        after: Option<Near>,
    ) -> Result<NearToFar<'_>, Error> {
        let disc = Disc::new(c, r)?;
        let mut it = NearToFar {
            graph: self,
            disc,
            after,
            cells: BinaryHeap::new(),
            chunks: BinaryHeap::new(),
        };
        for (rx, rz, v) in self.roots_near(&disc) {
            it.push_cell(v, 3, rx, rz);
        }
        Ok(it)
    }
}

/// Iterator of [`DistanceGraph::completed_near_to_far`].
pub struct NearToFar<'a> {
    graph: &'a DistanceGraph,
    disc: Disc,
    after: Option<Near>,
    /// Cells still to expand.
    cells: BinaryHeap<Item<'a>>,
    /// Chunks found, as packed `(d2, z, x)` keys (see [`pack`]): a small item for the bulk.
    chunks: BinaryHeap<Reverse<u128>>,
}

/// `(d2, z, x)` packed so that integer order is tuple order (signs flipped).
#[inline]
fn pack(d2: u64, z: i64, x: i64) -> u128 {
    let f = |v: i64| ((v as i32 as u32) ^ 0x8000_0000) as u128;
    (d2 as u128) << 64 | f(z) << 32 | f(x)
}

#[inline]
fn unpack(k: u128) -> Near {
    let f = |v: u128| ((v as u32) ^ 0x8000_0000) as i32;
    Near { d2: (k >> 64) as u64, pos: ColumnPos::new(f(k), f(k >> 32)) }
}

impl std::fmt::Debug for NearToFar<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NearToFar")
            .field("after", &self.after)
            .field("frontier", &self.frontier())
            .finish()
    }
}

impl<'a> NearToFar<'a> {
    #[inline]
    fn push_cell(&mut self, view: View<'a>, level: u8, nx: i64, nz: i64) {
        if matches!(view, View::Empty) {
            return;
        }
        let rect = Rect::cell(level, nx, nz);
        let key = self.disc.near(rect);
        if key > self.disc.r2 {
            return;
        }
        if let Some(a) = self.after
            && self.disc.far(rect) < a.d2
        {
            return;
        }
        self.cells.push(Item { key, z: rect.z0, x: rect.x0, kind: 1, level, missing: 0, view });
    }

    /// Number of cells and chunks waiting in the queues (the frontier).
    pub fn frontier(&self) -> usize {
        self.cells.len() + self.chunks.len()
    }

    /// Queues the completed chunks of a batch (cell `it`) that lie in the disc after the cursor.
    fn push_chunks(&mut self, it: &Item<'_>) {
        let m = it.view.mask();
        let after = self.after.map(|a| pack(a.d2, a.pos.z as i64, a.pos.x as i64));
        let mut bits = m;
        while bits != 0 {
            let i = bits.trailing_zeros() as i64;
            bits &= bits - 1;
            let (x, z) = (it.x + (i & 3), it.z + (i >> 2));
            let d2 = self.disc.d2(x, z);
            if d2 > self.disc.r2 {
                continue;
            }
            let k = pack(d2, z, x);
            if after.is_some_and(|a| k <= a) {
                continue;
            }
            self.chunks.push(Reverse(k));
        }
    }
}

impl Iterator for NearToFar<'_> {
    type Item = Near;

    fn next(&mut self) -> Option<Near> {
        loop {
            // A chunk goes first unless a cell sorts strictly before it (a cell's key is
            // componentwise at most that of every chunk inside it).
            let cell = self.cells.peek().map(|c| pack(c.key, c.z, c.x));
            match (self.chunks.peek(), cell) {
                (Some(&Reverse(k)), c) if c.is_none_or(|c| k <= c) => {
                    self.chunks.pop();
                    return Some(unpack(k));
                }
                (_, None) => return None,
                _ => {}
            }
            let it = self.cells.pop()?;
            if it.level == 0 {
                self.push_chunks(&it);
                continue;
            }
            let s = level_shift(it.level);
            let (nx, nz) = (it.x >> s, it.z >> s);
            for idx in 0..64u32 {
                let v = self.graph.child_view(it.view, it.level, nx, nz, idx);
                self.push_cell(
                    v,
                    it.level - 1,
                    nx * 8 + (idx & 7) as i64,
                    nz * 8 + (idx >> 3) as i64,
                );
            }
        }
    }
}
