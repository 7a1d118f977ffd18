//! Copying a payload from a [`Reader`] to a [`Writer`] without building a tree.
//!
//! A decoder that keeps part of its input verbatim but must write it in the writer's form
//! (sorted keys, repeated keys resolved) would otherwise parse that part into a [`Tag`] and
//! write the tree back: an allocation per value, only to copy bytes. The copy gives the same
//! bytes as that round trip, by construction:
//!
//! - numbers and arrays are the same bytes in both (one byte order), so they are copied;
//! - a string is copied when its bytes are what [`encode_mutf8`] would make of them (valid
//!   UTF-8 without NUL or 4-byte sequences), and decoded and encoded again otherwise;
//! - a compound's entries are gathered as byte ranges, a repeated key resolved by
//!   [`dedup_entries`] (first place, last value; the values replaced are parsed and dropped,
//!   so that damage in them fails the copy as it fails the tree), sorted when the writer
//!   sorts, and each value copied in turn;
//! - nesting is checked against [`MAX_DEPTH`] where the reader and the writer check it.
//!
//! It charges no tree budget (it builds no tree): it allocates one small vector per compound
//! and its output. It recurses once per nesting level, at most [`MAX_DEPTH`] deep.

use std::borrow::Cow;

use crate::read::fixed_size;
use crate::{Error, MAX_DEPTH, Reader, Writer, decode_mutf8, dedup_entries, id};

/// An entry's type and payload bytes.
type RawEntry<'a> = (u8, &'a [u8]);

impl Writer {
    /// Copies the payload of type `ty` at `r`'s cursor, the value sitting at nesting `depth`:
    /// the bytes `self.payload(&r.payload(ty, depth)?, depth)` writes, without the tree (see
    /// the module's rules), and an error where either of those fails (the kind may differ
    /// when a payload has several faults). Either side little-endian: through the tree.
    pub fn copy_payload(&mut self, r: &mut Reader<'_>, ty: u8, depth: usize) -> Result<(), Error> {
        if self.le || r.is_little_endian() {
            let v = r.payload(ty, depth)?;
            return self.payload(&v, depth);
        }
        match ty {
            id::COMPOUND => self.copy_compound(r, depth),
            id::LIST => {
                if depth > MAX_DEPTH {
                    return Err(Error::TooDeep);
                }
                let (et, n) = r.list_head()?;
                self.out.push(et);
                self.len(n)?;
                match (et, fixed_size(et)) {
                    // Numbers: the same bytes, as one run (`list_head` bounded `n`).
                    (_, Some(size)) => self.out.extend_from_slice(r.take(n * size)?),
                    (id::LIST | id::COMPOUND | id::STRING, _) => {
                        for _ in 0..n {
                            self.copy_payload(r, et, depth + 1)?;
                        }
                    }
                    // Arrays: the same bytes.
                    _ => {
                        for _ in 0..n {
                            let b = r.payload_bytes(et, depth + 1)?;
                            self.out.extend_from_slice(b);
                        }
                    }
                }
                Ok(())
            }
            id::STRING => {
                let b = r.raw_string()?;
                self.copy_string(b)
            }
            _ => {
                let b = r.payload_bytes(ty, depth)?;
                self.out.extend_from_slice(b);
                Ok(())
            }
        }
    }

    /// A string's bytes as the writer encodes the string they decode to.
    fn copy_string(&mut self, b: &[u8]) -> Result<(), Error> {
        let plain = std::str::from_utf8(b).is_ok() && !b.iter().any(|&x| x == 0 || x >= 0xF0);
        if plain {
            // `encode_mutf8` leaves such a string as it is; its length already fits.
            self.out.extend_from_slice(&(b.len() as u16).to_be_bytes());
            self.out.extend_from_slice(b);
            Ok(())
        } else {
            self.string(&decode_mutf8(b)?)
        }
    }

    /// A compound's entries up to its `TAG_End`, the compound sitting at nesting `depth`.
    fn copy_compound(&mut self, r: &mut Reader<'_>, depth: usize) -> Result<(), Error> {
        if depth > MAX_DEPTH {
            return Err(Error::TooDeep);
        }
        let mut entries: Vec<(Cow<'_, str>, RawEntry<'_>)> = Vec::new();
        loop {
            let t = r.u8()?;
            if t == id::END {
                break;
            }
            let k = r.raw_string()?;
            let key = match std::str::from_utf8(k) {
                Ok(s) => Cow::Borrowed(s),
                Err(_) => Cow::Owned(decode_mutf8(k)?),
            };
            entries.push((key, (t, r.payload_bytes(t, depth + 1)?)));
        }
        // A value a later one replaces is not written, but the tree reader would have
        // refused it if damaged: check it as that reader does.
        for (_, (t, bytes)) in dedup_entries(&mut entries) {
            r.sub(bytes).payload(t, depth + 1)?;
        }
        if self.sorted {
            entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        }
        for (key, (t, bytes)) in &entries {
            self.head(*t, key)?;
            self.copy_payload(&mut r.sub(bytes), *t, depth + 1)?;
        }
        self.out.push(id::END);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::{Compound, Reader, Tag, Writer, id};

    /// The copy and the tree round trip, from the same bytes.
    fn both(
        bytes: &[u8],
        sorted: bool,
    ) -> (Result<Vec<u8>, crate::Error>, Result<Vec<u8>, crate::Error>) {
        let new = || if sorted { Writer::sorted() } else { Writer::new() };
        let mut w = new();
        let copy = w.copy_payload(&mut Reader::new(bytes), id::COMPOUND, 1).map(|()| w.out);
        let mut w = new();
        let tree = Reader::new(bytes)
            .payload(id::COMPOUND, 1)
            .and_then(|t| w.payload(&t, 1))
            .map(|()| w.out);
        (copy, tree)
    }

    #[test]
    fn a_copy_is_the_tree_written_back() {
        let mut inner = Compound::new();
        inner.insert("z", Tag::String("x😈\0é".into()));
        inner.insert("a", Tag::LongArray(vec![1, -1]));
        let mut c = Compound::new();
        c.insert("m", Tag::compound_list([inner.clone(), Compound::new()]));
        c.insert("b", Tag::List(id::END, vec![]));
        c.insert("é", Tag::List(id::DOUBLE, vec![Tag::Double(1.5), Tag::Double(f64::NAN)]));
        c.insert("a", Tag::Compound(inner));
        c.insert("s", Tag::List(id::STRING, vec![Tag::String("\0".into())]));
        let mut w = Writer::new();
        w.compound(&c, 1).unwrap();
        for sorted in [false, true] {
            let (copy, tree) = both(&w.out, sorted);
            assert_eq!(copy.unwrap(), tree.unwrap(), "sorted: {sorted}");
        }
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_last_value() {
        // {k: 1b, j: 2b, k: 3b, k: 4b}
        let mut b = Vec::new();
        for (k, v) in [("k", 1u8), ("j", 2), ("k", 3), ("k", 4)] {
            b.extend([id::BYTE, 0, 1, k.as_bytes()[0], v]);
        }
        b.push(id::END);
        for sorted in [false, true] {
            let (copy, tree) = both(&b, sorted);
            let copy = copy.unwrap();
            assert_eq!(copy, tree.unwrap());
            let expect: &[u8] = if sorted {
                &[id::BYTE, 0, 1, b'j', 2, id::BYTE, 0, 1, b'k', 4, id::END]
            } else {
                &[id::BYTE, 0, 1, b'k', 4, id::BYTE, 0, 1, b'j', 2, id::END]
            };
            assert_eq!(copy, expect);
        }
    }

    #[test]
    fn damage_fails_the_copy_as_it_fails_the_tree() {
        let mut c = Compound::new();
        c.insert("a", Tag::String("abc".into()));
        c.insert("l", Tag::List(id::INT, vec![Tag::Int(1), Tag::Int(2)]));
        let mut w = Writer::new();
        w.compound(&c, 1).unwrap();
        for n in 0..w.out.len() {
            let (copy, tree) = both(&w.out[..n], true);
            assert!(copy.is_err() && tree.is_err(), "cut at {n}");
        }
        // A damaged value that a repeated key replaces: the tree reader refuses it.
        let dup = [id::STRING, 0, 1, b'a', 0, 1, 0xFF, id::BYTE, 0, 1, b'a', 5, id::END];
        let (copy, tree) = both(&dup, true);
        assert!(copy.is_err() && tree.is_err());
        // A string that is not modified UTF-8.
        let bad = [id::STRING, 0, 1, b'a', 0, 1, 0xFF, id::END];
        let (copy, tree) = both(&bad, true);
        assert!(copy.is_err() && tree.is_err());
    }
}
