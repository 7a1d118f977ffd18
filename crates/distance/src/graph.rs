//! [`DistanceGraph`]: the set of completed chunks, its point operations and invariants.

use std::collections::HashMap;

use terrane_section::ColumnPos;

use crate::Error;
use crate::geom::{self, Rect};
use crate::node::{Child, L1, L2, L3, Node};

/// log2 of a root's side in chunks (2048).
pub(crate) const ROOT_SHIFT: u32 = 11;
/// Root coordinates that hold at least one valid chunk: `-2^19 ..= 2^19 - 1`.
pub(crate) const ROOT_MIN: i64 = -(1 << 19);
/// See [`ROOT_MIN`].
pub(crate) const ROOT_MAX: i64 = (1 << 19) - 1;

pub(crate) type RootMap = HashMap<(i32, i32), L3, ahash::RandomState>;

/// The set of completed chunks of one dimension, as a 4-level hierarchical bitmap.
///
/// A chunk `(x, z)` (with `|x|, |z| < 2^30`) belongs to batch `(x >> 2, z >> 2)` of 4×4 chunks;
/// 8×8 batches form a level-1 node (32×32 chunks, one region file), 8×8 of those a level-2 node
/// (256×256) and 8×8 of those a root (2048×2048), kept in a hash map. A subtree that is full is
/// one bit in its parent, an empty one takes nothing: a node exists iff its subtree is partial,
/// so the representation of a set is unique (canonical), and a completed disc of 13 M chunks
/// takes tens of kilobytes.
///
/// Point operations ([`insert`](Self::insert), [`remove`](Self::remove),
/// [`contains`](Self::contains)) walk four levels after one hash lookup. The queries
/// ([`nearest_incomplete`](Self::nearest_incomplete), [`count_missing`](Self::count_missing),
/// [`completed_near_to_far`](Self::completed_near_to_far)) work on the Euclidean disc
/// `D(c, r) = { p : (p.x - c.x)² + (p.z - c.z)² <= r² }`, chunk by chunk precise, and cost
/// what their answer costs, not what the world holds.
///
/// The graph is a plain value mutated through `&mut self`; share it between threads with
/// [`SharedDistanceGraph`](crate::SharedDistanceGraph).
#[derive(Clone, Default)]
pub struct DistanceGraph {
    pub(crate) roots: RootMap,
    pub(crate) len: u64,
}

impl std::fmt::Debug for DistanceGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistanceGraph")
            .field("len", &self.len)
            .field("roots", &self.roots.len())
            .finish_non_exhaustive()
    }
}

impl PartialEq for DistanceGraph {
    fn eq(&self, other: &Self) -> bool {
        // Canonical representation: equal sets have equal trees.
        self.len == other.len && self.roots == other.roots
    }
}

impl Eq for DistanceGraph {}

#[inline]
fn split(p: ColumnPos) -> ((i32, i32), u32, u32) {
    let m = (1 << ROOT_SHIFT) - 1;
    ((p.x >> ROOT_SHIFT, p.z >> ROOT_SHIFT), (p.x & m) as u32, (p.z & m) as u32)
}

/// A read-only view of one cell of the hierarchy, at a level known by the caller.
#[derive(Clone, Copy, Debug)]
pub(crate) enum View<'a> {
    /// No completed chunk.
    Empty,
    /// Every chunk completed.
    Full,
    /// A partial root.
    N3(&'a L3),
    /// A partial level-2 node.
    N2(&'a L2),
    /// A partial level-1 node.
    N1(&'a L1),
    /// A partial batch.
    Mask(u16),
    /// A cell above the roots (level 4 and up): its roots are looked up when expanded.
    Super,
}

impl View<'_> {
    /// The completed-chunk bitmask of a level-0 view.
    #[inline]
    pub(crate) fn mask(self) -> u16 {
        match self {
            View::Full => 0xFFFF,
            View::Mask(m) => m,
            _ => 0,
        }
    }

    /// Completed chunks below this view at `level` (0..=3).
    #[inline]
    pub(crate) fn count(self, level: u8) -> u64 {
        match self {
            View::Empty | View::Super => 0,
            View::Full => 1u64 << (2 * geom::level_shift(level)),
            View::N3(n) => n.count as u64,
            View::N2(n) => n.count as u64,
            View::N1(n) => n.count as u64,
            View::Mask(m) => m.count_ones() as u64,
        }
    }
}

#[inline]
fn node_child<'a, C: Child>(
    n: &'a Node<C>,
    idx: u32,
    wrap: impl Fn(&'a C) -> View<'a>,
) -> View<'a> {
    if n.full >> idx & 1 == 1 {
        View::Full
    } else if let Some(k) = n.kid(idx) {
        wrap(k)
    } else {
        View::Empty
    }
}

impl DistanceGraph {
    /// An empty graph (nothing completed).
    pub fn new() -> Self {
        Self::default()
    }

    /// Marks chunk `p` completed. Returns whether it was newly added.
    ///
    /// `O(1)`: one hash lookup and four levels; allocates only when it creates a node.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] unless `|p.x|, |p.z| < 2^30`.
    pub fn insert(&mut self, p: ColumnPos) -> Result<bool, Error> {
        geom::check(p)?;
        let (key, x, z) = split(p);
        let root = self.roots.entry(key).or_insert_with(L3::empty);
        let added = root.insert(x, z);
        self.len += added as u64;
        Ok(added)
    }

    /// Marks chunk `p` not completed. Returns whether it was completed.
    ///
    /// `O(1)`; removing a chunk inside a full subtree re-materialises the nodes on its path,
    /// and nodes that become empty are freed.
    ///
    /// # Errors
    /// [`Error::OutOfRange`] unless `|p.x|, |p.z| < 2^30`.
    pub fn remove(&mut self, p: ColumnPos) -> Result<bool, Error> {
        geom::check(p)?;
        let (key, x, z) = split(p);
        let Some(root) = self.roots.get_mut(&key) else { return Ok(false) };
        let removed = root.remove(x, z);
        if root.count == 0 {
            self.roots.remove(&key);
        }
        self.len -= removed as u64;
        Ok(removed)
    }

    /// Is chunk `p` completed? Out-of-range positions are never completed.
    pub fn contains(&self, p: ColumnPos) -> bool {
        if !geom::in_range(p) {
            return false;
        }
        let (key, x, z) = split(p);
        self.roots.get(&key).is_some_and(|r| r.contains(x, z))
    }

    /// Number of completed chunks.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Is nothing completed?
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets every completed chunk.
    pub fn clear(&mut self) {
        self.roots.clear();
        self.len = 0;
    }

    /// Number of allocated nodes (roots, level-2 and level-1 nodes) and partial batches:
    /// `(nodes, batches)`. A measure of memory use, independent of the allocator.
    pub fn node_count(&self) -> (usize, usize) {
        let mut nodes = 0;
        let mut batches = 0;
        for r in self.roots.values() {
            nodes += 1;
            for l2 in &r.kids {
                nodes += 1;
                for l1 in &l2.kids {
                    nodes += 1;
                    batches += l1.kids.len();
                }
            }
        }
        (nodes, batches)
    }

    /// Approximate heap bytes held by the graph (node payloads and batch masks; the hash
    /// map's table is counted at its capacity).
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        let mut n = self.roots.capacity() * (size_of::<L3>() + size_of::<(i32, i32)>() + 1);
        for r in self.roots.values() {
            n += r.kids.capacity() * size_of::<L2>();
            for l2 in &r.kids {
                n += l2.kids.capacity() * size_of::<L1>();
                for l1 in &l2.kids {
                    n += l1.kids.capacity() * size_of::<u16>();
                }
            }
        }
        n
    }

    /// The view of root cell `(rx, rz)`.
    #[inline]
    pub(crate) fn root_view(&self, rx: i64, rz: i64) -> View<'_> {
        let (Ok(x), Ok(z)) = (i32::try_from(rx), i32::try_from(rz)) else { return View::Empty };
        match self.roots.get(&(x, z)) {
            None => View::Empty,
            Some(r) if r.is_full() => View::Full,
            Some(r) => View::N3(r),
        }
    }

    /// The view of child `idx` of `v`, a cell `(nx, nz)` at `level >= 1`.
    #[inline]
    pub(crate) fn child_view<'a>(
        &'a self,
        v: View<'a>,
        level: u8,
        nx: i64,
        nz: i64,
        idx: u32,
    ) -> View<'a> {
        match v {
            View::Empty => View::Empty,
            View::Full => View::Full,
            View::N3(n) => node_child(n, idx, View::N2),
            View::N2(n) => node_child(n, idx, View::N1),
            View::N1(n) => node_child(n, idx, |m| View::Mask(*m)),
            View::Mask(_) => unreachable!("batches have no children"),
            View::Super if level == 4 => {
                self.root_view(nx * 8 + (idx & 7) as i64, nz * 8 + (idx >> 3) as i64)
            }
            View::Super => View::Super,
        }
    }

    /// Checks every structural invariant: `full & partial == 0`, one entry per partial bit,
    /// stored nodes partial (never empty, never full; roots never empty), batch masks neither
    /// `0` nor `0xFFFF`, cached counts exact, the total length exact, roots in range and no
    /// chunk outside the valid range completed. `O(size)`; a debugging and testing aid.
    ///
    /// # Errors
    /// A description of the first violation found.
    pub fn check_invariants(&self) -> Result<(), String> {
        fn node<C: Child>(
            n: &Node<C>,
            root: bool,
            rect: Rect,
            level: u8,
            kid: &dyn Fn(&C, Rect) -> Result<u64, String>,
        ) -> Result<u64, String> {
            if n.full & n.partial != 0 {
                return Err(format!("level {level} {rect:?}: full & partial != 0"));
            }
            if n.kids.len() != n.partial.count_ones() as usize {
                return Err(format!(
                    "level {level} {rect:?}: {} kids for partial bits",
                    n.kids.len()
                ));
            }
            if n.full == 0 && n.partial == 0 {
                return Err(format!("level {level} {rect:?}: empty node stored"));
            }
            if !root && n.full == u64::MAX {
                return Err(format!("level {level} {rect:?}: full node stored"));
            }
            let s = geom::level_shift(level - 1);
            let mut total = 0u64;
            let mut k = 0;
            for idx in 0..64u32 {
                let cr = Rect::cell(
                    level - 1,
                    (rect.x0 >> s) + (idx & 7) as i64,
                    (rect.z0 >> s) + (idx >> 3) as i64,
                );
                if n.full >> idx & 1 == 1 {
                    if cr.x0 < geom::DMIN || cr.z0 < geom::DMIN {
                        return Err(format!(
                            "level {level} {cr:?}: full child holds out-of-range chunks"
                        ));
                    }
                    total += C::CAP as u64;
                } else if n.partial >> idx & 1 == 1 {
                    total += kid(&n.kids[k], cr)?;
                    k += 1;
                }
            }
            if total != n.count as u64 {
                return Err(format!("level {level} {rect:?}: cached count {} != {total}", n.count));
            }
            Ok(total)
        }
        let batch = |m: &u16, r: Rect| -> Result<u64, String> {
            if *m == 0 || *m == 0xFFFF {
                return Err(format!("batch {r:?}: stored mask {m:#06x}"));
            }
            if (r.x0 < geom::DMIN && m & 0x1111 != 0) || (r.z0 < geom::DMIN && m & 0x000F != 0) {
                return Err(format!("batch {r:?}: out-of-range chunk completed"));
            }
            Ok(m.count_ones() as u64)
        };
        let l1 = |n: &L1, r: Rect| node(n, false, r, 1, &batch);
        let l2 = |n: &L2, r: Rect| node(n, false, r, 2, &l1);
        let mut len = 0;
        for (&(rx, rz), root) in &self.roots {
            let (rx, rz) = (rx as i64, rz as i64);
            if !(ROOT_MIN..=ROOT_MAX).contains(&rx) || !(ROOT_MIN..=ROOT_MAX).contains(&rz) {
                return Err(format!("root ({rx}, {rz}) out of range"));
            }
            len += node(root, true, Rect::cell(3, rx, rz), 3, &l2)?;
        }
        if len != self.len {
            return Err(format!("len {} != counted {len}", self.len));
        }
        Ok(())
    }
}
