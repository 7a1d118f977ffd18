//! The tree: [`Tag`] values and [`Compound`] maps.

use crate::{Error, id};

/// An NBT value.
///
/// Equality is Minecraft's: lists compare by their items only (an empty list of compounds
/// equals an empty list of `TAG_End`), compounds as maps (see [`Compound`]).
#[derive(Clone, Debug)]
pub enum Tag {
    /// `TAG_Byte`.
    Byte(i8),
    /// `TAG_Short`.
    Short(i16),
    /// `TAG_Int`.
    Int(i32),
    /// `TAG_Long`.
    Long(i64),
    /// `TAG_Float`.
    Float(f32),
    /// `TAG_Double`.
    Double(f64),
    /// `TAG_Byte_Array`.
    ByteArray(Vec<i8>),
    /// `TAG_String`.
    String(String),
    /// `TAG_List`: the element type id (kept so that empty lists round-trip; the writer takes
    /// the first item's type when there is one) and the items, which must all be of one type.
    List(u8, Vec<Tag>),
    /// `TAG_Compound`.
    Compound(Compound),
    /// `TAG_Int_Array`.
    IntArray(Vec<i32>),
    /// `TAG_Long_Array`.
    LongArray(Vec<i64>),
}

impl PartialEq for Tag {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Tag::Byte(a), Tag::Byte(b)) => a == b,
            (Tag::Short(a), Tag::Short(b)) => a == b,
            (Tag::Int(a), Tag::Int(b)) => a == b,
            (Tag::Long(a), Tag::Long(b)) => a == b,
            (Tag::Float(a), Tag::Float(b)) => a == b,
            (Tag::Double(a), Tag::Double(b)) => a == b,
            (Tag::ByteArray(a), Tag::ByteArray(b)) => a == b,
            (Tag::String(a), Tag::String(b)) => a == b,
            (Tag::List(_, a), Tag::List(_, b)) => a == b,
            (Tag::Compound(a), Tag::Compound(b)) => a == b,
            (Tag::IntArray(a), Tag::IntArray(b)) => a == b,
            (Tag::LongArray(a), Tag::LongArray(b)) => a == b,
            _ => false,
        }
    }
}

impl Tag {
    /// A list of `items`, its element type taken from the first item (`TAG_End` when empty).
    pub fn list(items: Vec<Tag>) -> Tag {
        Tag::List(items.first().map_or(id::END, Tag::type_id), items)
    }

    /// A list of compounds (element type `TAG_Compound` even when empty).
    pub fn compound_list(items: impl IntoIterator<Item = Compound>) -> Tag {
        Tag::List(id::COMPOUND, items.into_iter().map(Tag::Compound).collect())
    }

    /// The NBT type id of this value (1 to 12, see [`id`]).
    pub fn type_id(&self) -> u8 {
        match self {
            Tag::Byte(_) => id::BYTE,
            Tag::Short(_) => id::SHORT,
            Tag::Int(_) => id::INT,
            Tag::Long(_) => id::LONG,
            Tag::Float(_) => id::FLOAT,
            Tag::Double(_) => id::DOUBLE,
            Tag::ByteArray(_) => id::BYTE_ARRAY,
            Tag::String(_) => id::STRING,
            Tag::List(..) => id::LIST,
            Tag::Compound(_) => id::COMPOUND,
            Tag::IntArray(_) => id::INT_ARRAY,
            Tag::LongArray(_) => id::LONG_ARRAY,
        }
    }

    /// The value as an `i32` if it is a byte, short or int.
    pub fn as_int(&self) -> Option<i32> {
        match *self {
            Tag::Byte(v) => Some(v as i32),
            Tag::Short(v) => Some(v as i32),
            Tag::Int(v) => Some(v),
            _ => None,
        }
    }

    /// The value as an `i64` if it is an integer of any width.
    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            Tag::Long(v) => Some(v),
            _ => self.as_int().map(i64::from),
        }
    }

    /// The string, if this is a string.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Tag::String(s) => Some(s),
            _ => None,
        }
    }

    /// The compound, if this is a compound.
    pub fn as_compound(&self) -> Option<&Compound> {
        match self {
            Tag::Compound(c) => Some(c),
            _ => None,
        }
    }

    /// The list's items, if this is a list.
    pub fn as_list(&self) -> Option<&[Tag]> {
        match self {
            Tag::List(_, items) => Some(items),
            _ => None,
        }
    }
}

/// A compound: named values in file (or insertion) order.
///
/// Keys are unique: [`insert`](Self::insert) replaces a value in place, and the reader does
/// the same for a key a damaged file repeats (first place, last value, as Minecraft's own
/// reader keeps the last). Lookups are linear, which is faster than hashing for the handful
/// of keys a compound holds in practice. Equality ignores order: two compounds are equal when
/// they hold the same keys with equal values, as NBT compounds are maps.
#[derive(Clone, Debug, Default)]
pub struct Compound(Vec<(String, Tag)>);

impl Compound {
    /// An empty compound.
    pub fn new() -> Self {
        Self(Vec::new())
    }

    /// An empty compound with room for `n` entries.
    pub fn with_capacity(n: usize) -> Self {
        Self(Vec::with_capacity(n))
    }

    /// Parses uncompressed NBT whose root is a compound (the root's name is read and
    /// dropped; bytes after the root are ignored, as region files pad chunks).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        match crate::from_bytes(bytes)?.1 {
            Tag::Compound(c) => Ok(c),
            other => Err(Error::RootNotCompound { found: other.type_id() }),
        }
    }

    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&Tag> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Mutable access to the value under `key`.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Tag> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// `true` when `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// Sets `key` to `value`, replacing an existing value in place (and returning it) or
    /// appending. Linear in the number of keys; to build a large compound, collect it from an
    /// iterator.
    pub fn insert(&mut self, key: impl Into<String>, value: Tag) -> Option<Tag> {
        let key = key.into();
        match self.get_mut(&key) {
            Some(v) => Some(std::mem::replace(v, value)),
            None => {
                self.0.push((key, value));
                None
            }
        }
    }

    /// Makes keys unique after entries were pushed without a check ([`dedup_entries`]).
    pub(crate) fn dedup_keys(&mut self) {
        dedup_entries(&mut self.0);
    }

    /// Appends an entry without looking for its key (the reader, which calls
    /// [`dedup_keys`](Self::dedup_keys) when the compound ends).
    pub(crate) fn push_unchecked(&mut self, key: String, value: Tag) {
        self.0.push((key, value));
    }

    /// Removes and returns the value under `key`; the other entries keep their order.
    pub fn remove(&mut self, key: &str) -> Option<Tag> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(i).1)
    }

    /// Keeps the entries for which `f` answers `true`.
    pub fn retain(&mut self, mut f: impl FnMut(&str, &mut Tag) -> bool) {
        self.0.retain_mut(|(k, v)| f(k, v));
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// `true` when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Tag)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The entries in order, values mutable.
    pub fn iter_mut(&mut self) -> impl ExactSizeIterator<Item = (&str, &mut Tag)> {
        self.0.iter_mut().map(|(k, v)| (k.as_str(), v))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_str())
    }
}

impl PartialEq for Compound {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().all(|(k, v)| other.get(k) == Some(v))
    }
}

impl FromIterator<(String, Tag)> for Compound {
    /// Collects entries with [`insert`](Compound::insert)'s rule: a repeated key keeps its
    /// first place and its last value.
    fn from_iter<I: IntoIterator<Item = (String, Tag)>>(iter: I) -> Self {
        let mut c = Compound::new();
        c.extend(iter);
        c
    }
}

impl Extend<(String, Tag)> for Compound {
    fn extend<I: IntoIterator<Item = (String, Tag)>>(&mut self, iter: I) {
        self.0.extend(iter);
        self.dedup_keys();
    }
}

impl IntoIterator for Compound {
    type Item = (String, Tag);
    type IntoIter = std::vec::IntoIter<(String, Tag)>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a> IntoIterator for &'a Compound {
    type Item = (&'a str, &'a Tag);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (String, Tag)>,
        fn(&'a (String, Tag)) -> (&'a str, &'a Tag),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
}

/// Makes the keys of a compound's entries unique as the reader does: a repeated key keeps its
/// first place and its last value. Linear for the handful of keys compounds usually hold,
/// hashed beyond that, so a hostile compound of a million keys costs no more than its size.
/// For entries collected without a tree (raw payloads, edited parts) that must resolve
/// repeats exactly as [`Compound`] does. Returns the entries dropped (their values are the
/// ones replaced), in no particular order; empty, without allocating, when no key repeats.
pub fn dedup_entries<K: AsRef<str>, V>(entries: &mut Vec<(K, V)>) -> Vec<(K, V)> {
    let n = entries.len();
    let mut dups: Vec<(usize, usize)> = Vec::new(); // (repeat, first), repeats ascending
    if n <= 32 {
        for i in 1..n {
            let k = entries[i].0.as_ref();
            if let Some(j) = entries[..i].iter().position(|(x, _)| x.as_ref() == k) {
                dups.push((i, j));
            }
        }
    } else {
        let mut first: std::collections::HashMap<&str, usize> =
            std::collections::HashMap::with_capacity(n);
        for (i, (k, _)) in entries.iter().enumerate() {
            match first.entry(k.as_ref()) {
                std::collections::hash_map::Entry::Occupied(e) => dups.push((i, *e.get())),
                std::collections::hash_map::Entry::Vacant(e) => {
                    e.insert(i);
                }
            }
        }
    }
    if dups.is_empty() {
        return Vec::new();
    }
    let mut drop = vec![false; n];
    for (i, j) in dups {
        // Repeats come in ascending order, so the first place ends with the last value.
        let (head, tail) = entries.split_at_mut(i);
        std::mem::swap(&mut head[j].1, &mut tail[0].1);
        drop[i] = true;
    }
    let mut dropped = Vec::new();
    let mut kept = Vec::with_capacity(n);
    for (e, d) in entries.drain(..).zip(drop) {
        if d { dropped.push(e) } else { kept.push(e) }
    }
    *entries = kept;
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_replaces_in_place_and_equality_ignores_order() {
        let mut a = Compound::new();
        a.insert("x", Tag::Int(1));
        a.insert("y", Tag::Int(2));
        assert_eq!(a.insert("x", Tag::Int(3)), Some(Tag::Int(1)));
        assert_eq!(a.keys().collect::<Vec<_>>(), ["x", "y"]);
        let b: Compound =
            [("y".to_string(), Tag::Int(2)), ("x".to_string(), Tag::Int(3))].into_iter().collect();
        assert_eq!(a, b);
        let mut c = b.clone();
        c.insert("z", Tag::Int(0));
        assert_ne!(a, c);
        assert_ne!(c, a);
        c.remove("z");
        c.insert("x", Tag::Long(3));
        assert_ne!(a, c, "values compare with their type");
    }

    #[test]
    fn large_compounds_dedup_in_linear_time_with_the_same_rule() {
        for n in [5usize, 40, 200_000] {
            // Keys 0..n, then every even key again with a new value.
            let entries = (0..n).map(|i| (i.to_string(), Tag::Int(i as i32)));
            let repeats = (0..n).step_by(2).map(|i| (i.to_string(), Tag::Int(-(i as i32))));
            let c: Compound = entries.chain(repeats).collect();
            assert_eq!(c.len(), n);
            for (i, (k, v)) in c.iter().enumerate() {
                assert_eq!(k, i.to_string());
                let want = if i % 2 == 0 { -(i as i32) } else { i as i32 };
                assert_eq!(v, &Tag::Int(want));
            }
        }
    }

    #[test]
    fn integer_views() {
        assert_eq!(Tag::Byte(-1).as_i64(), Some(-1));
        assert_eq!(Tag::Long(1 << 40).as_i64(), Some(1 << 40));
        assert_eq!(Tag::Long(1).as_int(), None);
        assert_eq!(Tag::Double(1.0).as_i64(), None);
        assert_eq!(Tag::list(vec![]), Tag::List(0, vec![]));
        assert!(matches!(Tag::compound_list([]), Tag::List(10, _)));
        // Lists compare by items, as Minecraft's ListTag does.
        assert_eq!(Tag::List(0, vec![]), Tag::List(10, vec![]));
        assert_ne!(Tag::list(vec![Tag::Int(1)]), Tag::list(vec![Tag::Long(1)]));
        assert_ne!(Tag::Int(1), Tag::Long(1));
    }
}
