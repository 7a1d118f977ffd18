//! A schematic's block ids, stored as narrow as they were read: one byte per block when every
//! id is a one-byte varint (palettes of up to 128 states, most schematics), `u32` otherwise.
//!
//! The one-byte form is the file's own `BlockData` bytes, taken as they are: reading such a
//! schematic costs its inflate plus one pass that checks the bytes (measured in
//! `docs/BENCHMARKS.md`, "Schematic reads"), instead of widening every id to four bytes.

/// The owned ids of a [`Schematic`](crate::Schematic).
#[derive(Clone, Debug)]
pub(crate) enum IdStore {
    /// Ids below 128, one byte each: `bytes[start..start + len]` (the bytes may be the whole
    /// inflated file, kept to avoid a copy).
    Narrow { bytes: Vec<u8>, start: usize, len: usize },
    /// Any ids.
    Wide(Vec<u32>),
}

impl IdStore {
    /// `len` zero ids.
    pub(crate) fn zeros(len: usize) -> Self {
        IdStore::Narrow { bytes: vec![0; len], start: 0, len }
    }

    pub(crate) fn view(&self) -> BlockIds<'_> {
        match self {
            IdStore::Narrow { bytes, start, len } => BlockIds::Narrow(&bytes[*start..*start + len]),
            IdStore::Wide(v) => BlockIds::Wide(v),
        }
    }

    /// Sets id `i` to `id`, widening the store when `id` does not fit a byte varint.
    pub(crate) fn set(&mut self, i: usize, id: u32) {
        match self {
            IdStore::Narrow { bytes, start, .. } if id < 0x80 => bytes[*start + i] = id as u8,
            IdStore::Narrow { .. } => {
                let mut wide = self.view().to_vec();
                wide[i] = id;
                *self = IdStore::Wide(wide);
            }
            IdStore::Wide(v) => v[i] = id,
        }
    }
}

impl PartialEq for IdStore {
    /// Equal ids, whichever width holds them.
    fn eq(&self, other: &Self) -> bool {
        self.view() == other.view()
    }
}

/// A schematic's palette ids, one per block in Sponge order (`x + z*W + y*W*L`), in the width
/// they are stored in. [`get`](Self::get), [`iter`](Self::iter) and [`to_vec`](Self::to_vec)
/// read either width as `u32`.
#[derive(Copy, Clone, Debug)]
pub enum BlockIds<'a> {
    /// One byte per block (every id below 128).
    Narrow(&'a [u8]),
    /// Four bytes per block.
    Wide(&'a [u32]),
}

impl<'a> BlockIds<'a> {
    /// Number of blocks.
    pub fn len(&self) -> usize {
        match self {
            BlockIds::Narrow(b) => b.len(),
            BlockIds::Wide(v) => v.len(),
        }
    }

    /// Whether there are no blocks (never, for a schematic).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The id of block `i`, or `None` past the end.
    #[inline]
    pub fn get(&self, i: usize) -> Option<u32> {
        match self {
            BlockIds::Narrow(b) => b.get(i).map(|&x| u32::from(x)),
            BlockIds::Wide(v) => v.get(i).copied(),
        }
    }

    /// Every id in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = u32> + 'a {
        let (narrow, wide): (&'a [u8], &'a [u32]) = match *self {
            BlockIds::Narrow(b) => (b, &[]),
            BlockIds::Wide(v) => (&[], v),
        };
        // One of the two is empty: chaining keeps a single concrete iterator type.
        IdIter { narrow: narrow.iter(), wide: wide.iter() }
    }

    /// The ids widened to `u32`.
    pub fn to_vec(&self) -> Vec<u32> {
        match self {
            BlockIds::Narrow(b) => b.iter().map(|&x| u32::from(x)).collect(),
            BlockIds::Wide(v) => v.to_vec(),
        }
    }
}

impl PartialEq for BlockIds<'_> {
    /// Equal ids, whichever width holds them.
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (BlockIds::Narrow(a), BlockIds::Narrow(b)) => a == b,
            (BlockIds::Wide(a), BlockIds::Wide(b)) => a == b,
            _ => self.len() == other.len() && self.iter().eq(other.iter()),
        }
    }
}

impl PartialEq<[u32]> for BlockIds<'_> {
    fn eq(&self, other: &[u32]) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter().copied())
    }
}

impl PartialEq<Vec<u32>> for BlockIds<'_> {
    fn eq(&self, other: &Vec<u32>) -> bool {
        *self == **other
    }
}

/// The iterator of [`BlockIds::iter`].
struct IdIter<'a> {
    narrow: std::slice::Iter<'a, u8>,
    wide: std::slice::Iter<'a, u32>,
}

impl Iterator for IdIter<'_> {
    type Item = u32;

    #[inline]
    fn next(&mut self) -> Option<u32> {
        match self.narrow.next() {
            Some(&b) => Some(u32::from(b)),
            None => self.wide.next().copied(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = self.narrow.len() + self.wide.len();
        (n, Some(n))
    }
}

impl ExactSizeIterator for IdIter<'_> {}

/// The one-byte form of `count` LEB128 varints, when `data` is exactly that: one byte per
/// block, every byte below `0x80` (so each is a whole varint) and below the palette's `len`.
/// `false` sends the caller to the general decoder, which also reports what is wrong.
pub(crate) fn narrow_varints(data: &[u8], count: usize, len: usize) -> bool {
    if data.len() != count {
        return false;
    }
    // The largest byte, in a loop without early exit, which the compiler vectorises.
    let max = data.iter().fold(0u8, |m, &b| m.max(b));
    max < 0x80 && (max as usize) < len
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrow_only_when_every_byte_is_a_whole_in_palette_varint() {
        assert!(narrow_varints(&[0, 1, 2], 3, 3));
        assert!(!narrow_varints(&[0, 1, 3], 3, 3), "id outside the palette");
        assert!(!narrow_varints(&[0, 0x81, 1], 3, 300), "a two-byte varint");
        assert!(!narrow_varints(&[0, 1], 3, 3), "too few bytes");
    }

    #[test]
    fn widths_compare_by_value_and_widen_on_demand() {
        let mut n = IdStore::Narrow { bytes: vec![9, 1, 2, 3, 9], start: 1, len: 3 };
        assert_eq!(n.view().to_vec(), [1, 2, 3]);
        assert_eq!(n, IdStore::Wide(vec![1, 2, 3]));
        n.set(0, 0x7F);
        assert!(matches!(n, IdStore::Narrow { .. }));
        n.set(2, 300);
        assert_eq!(n, IdStore::Wide(vec![0x7F, 2, 300]));
        assert_eq!(n.view().get(2), Some(300));
        assert_eq!(n.view().iter().len(), 3);
        assert_ne!(n, IdStore::Wide(vec![0x7F, 2]));
    }
}
