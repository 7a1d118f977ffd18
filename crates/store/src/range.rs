//! Key ranges for scans.

use std::ops::{Bound, RangeBounds};

/// A range of keys: a start and an end bound, compared as byte strings.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyRange {
    /// The lower bound.
    pub start: Bound<Vec<u8>>,
    /// The upper bound.
    pub end: Bound<Vec<u8>>,
}

impl KeyRange {
    /// Every key.
    pub fn all() -> Self {
        KeyRange { start: Bound::Unbounded, end: Bound::Unbounded }
    }

    /// Keys starting with `prefix`.
    pub fn prefix(prefix: &[u8]) -> Self {
        let end = match prefix_successor(prefix) {
            Some(e) => Bound::Excluded(e),
            None => Bound::Unbounded,
        };
        let start =
            if prefix.is_empty() { Bound::Unbounded } else { Bound::Included(prefix.to_vec()) };
        KeyRange { start, end }
    }

    /// Keys in `start..end` (end excluded).
    pub fn between(start: &[u8], end: &[u8]) -> Self {
        KeyRange { start: Bound::Included(start.to_vec()), end: Bound::Excluded(end.to_vec()) }
    }

    /// Keys from `start` on.
    pub fn from(start: &[u8]) -> Self {
        KeyRange { start: Bound::Included(start.to_vec()), end: Bound::Unbounded }
    }

    /// Any standard range of byte slices or vectors, e.g. `KeyRange::new(&b"a"[..]..=&b"c"[..])`.
    pub fn new<K: AsRef<[u8]>>(r: impl RangeBounds<K>) -> Self {
        let map = |b: Bound<&K>| match b {
            Bound::Included(k) => Bound::Included(k.as_ref().to_vec()),
            Bound::Excluded(k) => Bound::Excluded(k.as_ref().to_vec()),
            Bound::Unbounded => Bound::Unbounded,
        };
        KeyRange { start: map(r.start_bound()), end: map(r.end_bound()) }
    }

    /// Whether `key` lies in the range.
    pub fn contains(&self, key: &[u8]) -> bool {
        let after_start = match &self.start {
            Bound::Included(s) => key >= s.as_slice(),
            Bound::Excluded(s) => key > s.as_slice(),
            Bound::Unbounded => true,
        };
        after_start && !self.is_past_end(key)
    }

    /// Whether `key` lies beyond the end bound.
    pub fn is_past_end(&self, key: &[u8]) -> bool {
        match &self.end {
            Bound::Included(e) => key > e.as_slice(),
            Bound::Excluded(e) => key >= e.as_slice(),
            Bound::Unbounded => false,
        }
    }

    /// Whether the range cannot contain any key.
    pub fn is_empty(&self) -> bool {
        match (&self.start, &self.end) {
            (Bound::Included(s), Bound::Included(e)) => s > e,
            (Bound::Included(s), Bound::Excluded(e))
            | (Bound::Excluded(s), Bound::Included(e))
            | (Bound::Excluded(s), Bound::Excluded(e)) => s >= e,
            _ => false,
        }
    }

    /// The bounds as borrowed slices (for `BTreeMap::range`).
    pub fn as_bounds(&self) -> (Bound<&[u8]>, Bound<&[u8]>) {
        fn f(b: &Bound<Vec<u8>>) -> Bound<&[u8]> {
            match b {
                Bound::Included(k) => Bound::Included(k.as_slice()),
                Bound::Excluded(k) => Bound::Excluded(k.as_slice()),
                Bound::Unbounded => Bound::Unbounded,
            }
        }
        (f(&self.start), f(&self.end))
    }
}

impl Default for KeyRange {
    fn default() -> Self {
        KeyRange::all()
    }
}

/// The smallest key greater than every key starting with `prefix`, or `None` when there is
/// none (the prefix is empty or all `0xff`).
pub fn prefix_successor(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last != 0xff {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefix_bounds() {
        assert_eq!(prefix_successor(b"ab"), Some(b"ac".to_vec()));
        assert_eq!(prefix_successor(&[1, 0xff]), Some(vec![2]));
        assert_eq!(prefix_successor(&[0xff, 0xff]), None);
        assert_eq!(prefix_successor(b""), None);
        let r = KeyRange::prefix(&[1, 0xff]);
        assert!(r.contains(&[1, 0xff]));
        assert!(r.contains(&[1, 0xff, 0xff, 3]));
        assert!(!r.contains(&[2]));
        assert!(!r.contains(&[1, 0xfe]));
        assert!(KeyRange::prefix(&[0xff]).contains(&[0xff, 0xff]));
        assert!(KeyRange::between(b"b", b"b").is_empty());
        assert!(!KeyRange::new(&b"b"[..]..=&b"b"[..]).is_empty());
    }
}
