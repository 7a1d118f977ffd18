//! The three node levels below a root and the batch bitmask, generic over the child type.
//!
//! A node covers 8×8 children. Full children are one bit in `full`, partial children one bit in
//! `partial` plus an entry in `kids`, kept in child-index order (entry `i` belongs to the `i`-th
//! set bit of `partial`). Empty children take nothing. A node stored in its parent is always
//! partial (never empty, never full): see [`Child::insert`] and [`Child::remove`].

/// A child slot type: a batch bitmask (`u16`) or a [`Node`] of the level below.
pub(crate) trait Child: Sized {
    /// log2 of the side of this child, in chunks.
    const SHIFT: u32;
    /// Number of chunks this child covers.
    const CAP: u32 = 1 << (2 * Self::SHIFT);
    /// Completed chunks below this child.
    fn count(&self) -> u32;
    /// The empty child (transient: never stored).
    fn empty() -> Self;
    /// The full child (transient: never stored).
    fn full() -> Self;
    /// Marks local chunk `(x, z)` (`0 <= x, z < 2^SHIFT`); newly added?
    fn insert(&mut self, x: u32, z: u32) -> bool;
    /// Clears local chunk `(x, z)`; was it present?
    fn remove(&mut self, x: u32, z: u32) -> bool;
    /// Is local chunk `(x, z)` marked?
    fn contains(&self, x: u32, z: u32) -> bool;
}

/// Chunk bit inside a batch: `(x & 3) + 4 * (z & 3)`.
#[inline]
pub(crate) const fn batch_bit(x: u32, z: u32) -> u16 {
    1 << ((x & 3) + 4 * (z & 3))
}

impl Child for u16 {
    const SHIFT: u32 = 2;
    #[inline]
    fn count(&self) -> u32 {
        self.count_ones()
    }
    #[inline]
    fn empty() -> Self {
        0
    }
    #[inline]
    fn full() -> Self {
        0xFFFF
    }
    #[inline]
    fn insert(&mut self, x: u32, z: u32) -> bool {
        let b = batch_bit(x, z);
        let new = *self & b == 0;
        *self |= b;
        new
    }
    #[inline]
    fn remove(&mut self, x: u32, z: u32) -> bool {
        let b = batch_bit(x, z);
        let was = *self & b != 0;
        *self &= !b;
        was
    }
    #[inline]
    fn contains(&self, x: u32, z: u32) -> bool {
        *self & batch_bit(x, z) != 0
    }
}

/// An 8×8 node over children of type `C`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Node<C> {
    /// Bit `i` set: child `i` is full.
    pub(crate) full: u64,
    /// Bit `i` set: child `i` is partial and has an entry in `kids`.
    pub(crate) partial: u64,
    /// Partial children in child-index order.
    pub(crate) kids: Vec<C>,
    /// Completed chunks below this node.
    pub(crate) count: u32,
}

/// Level 1: 8×8 batches (32×32 chunks).
pub(crate) type L1 = Node<u16>;
/// Level 2: 8×8 level-1 nodes (256×256 chunks).
pub(crate) type L2 = Node<L1>;
/// Level 3, the root: 8×8 level-2 nodes (2048×2048 chunks).
pub(crate) type L3 = Node<L2>;

/// Child index of local chunk `(x, z)` in a node whose children have side `2^shift`.
#[inline]
pub(crate) const fn child_index(x: u32, z: u32, shift: u32) -> u32 {
    ((x >> shift) & 7) + 8 * ((z >> shift) & 7)
}

impl<C: Child> Node<C> {
    /// Position in `kids` of child `idx` (which must be partial for a lookup).
    #[inline]
    pub(crate) fn rank(&self, idx: u32) -> usize {
        (self.partial & ((1u64 << idx) - 1)).count_ones() as usize
    }

    /// The partial child `idx`, if it is partial.
    #[inline]
    pub(crate) fn kid(&self, idx: u32) -> Option<&C> {
        if self.partial >> idx & 1 == 1 { Some(&self.kids[self.rank(idx)]) } else { None }
    }

    /// Is this node full?
    #[inline]
    pub(crate) fn is_full(&self) -> bool {
        self.full == u64::MAX
    }
}

impl<C: Child> Child for Node<C> {
    const SHIFT: u32 = C::SHIFT + 3;

    #[inline]
    fn count(&self) -> u32 {
        self.count
    }

    fn empty() -> Self {
        Node { full: 0, partial: 0, kids: Vec::new(), count: 0 }
    }

    fn full() -> Self {
        Node { full: u64::MAX, partial: 0, kids: Vec::new(), count: Self::CAP }
    }

    fn insert(&mut self, x: u32, z: u32) -> bool {
        let idx = child_index(x, z, C::SHIFT);
        let bit = 1u64 << idx;
        if self.full & bit != 0 {
            return false;
        }
        let m = (1u32 << C::SHIFT) - 1;
        let (lx, lz) = (x & m, z & m);
        let rank = self.rank(idx);
        if self.partial & bit != 0 {
            let kid = &mut self.kids[rank];
            if !kid.insert(lx, lz) {
                return false;
            }
            if kid.count() == C::CAP {
                self.kids.remove(rank);
                self.partial &= !bit;
                self.full |= bit;
            }
        } else {
            let mut kid = C::empty();
            kid.insert(lx, lz);
            if kid.count() == C::CAP {
                self.full |= bit;
            } else {
                self.kids.insert(rank, kid);
                self.partial |= bit;
            }
        }
        self.count += 1;
        true
    }

    fn remove(&mut self, x: u32, z: u32) -> bool {
        let idx = child_index(x, z, C::SHIFT);
        let bit = 1u64 << idx;
        let m = (1u32 << C::SHIFT) - 1;
        let (lx, lz) = (x & m, z & m);
        let rank = self.rank(idx);
        if self.full & bit != 0 {
            // Re-materialise the full child as a partial one.
            let mut kid = C::full();
            kid.remove(lx, lz);
            self.full &= !bit;
            if kid.count() != 0 {
                self.kids.insert(rank, kid);
                self.partial |= bit;
            }
        } else if self.partial & bit != 0 {
            let kid = &mut self.kids[rank];
            if !kid.remove(lx, lz) {
                return false;
            }
            if kid.count() == 0 {
                self.kids.remove(rank);
                self.partial &= !bit;
            }
        } else {
            return false;
        }
        self.count -= 1;
        true
    }

    fn contains(&self, x: u32, z: u32) -> bool {
        let idx = child_index(x, z, C::SHIFT);
        if self.full >> idx & 1 == 1 {
            return true;
        }
        let m = (1u32 << C::SHIFT) - 1;
        self.kid(idx).is_some_and(|k| k.contains(x & m, z & m))
    }
}
