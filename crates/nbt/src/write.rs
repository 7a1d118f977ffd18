//! The writer.

use crate::{Compound, Error, MAX_DEPTH, Tag, encode_mutf8, id};

/// Serializes one named root tag to uncompressed NBT bytes, compounds in their own order.
pub fn to_bytes(name: &str, value: &Tag) -> Result<Vec<u8>, Error> {
    let mut w = Writer::new();
    w.named(name, value)?;
    Ok(w.out)
}

/// Writes NBT into a byte vector.
///
/// [`Writer::new`] writes compounds in their own order; [`Writer::sorted`] writes every
/// compound's keys in byte order, so equal values (which compare equal whatever their order)
/// always encode to equal bytes. Streaming writers may append raw payload bytes to
/// [`out`](Self::out) between calls.
#[derive(Clone, Debug, Default)]
pub struct Writer {
    /// The bytes written so far.
    pub out: Vec<u8>,
    pub(crate) sorted: bool,
    /// Bedrock Edition's byte order: numbers little-endian, strings plain UTF-8.
    pub(crate) le: bool,
}

impl Writer {
    /// A writer that keeps each compound's order.
    pub fn new() -> Self {
        Self::default()
    }

    /// A writer that sorts each compound's keys.
    pub fn sorted() -> Self {
        Self { sorted: true, ..Self::default() }
    }

    /// The same writer in Bedrock Edition's byte order: every number little-endian (lengths
    /// included) and strings in plain UTF-8.
    pub fn little_endian(mut self) -> Self {
        self.le = true;
        self
    }

    /// The same writer appending to `out` (kept as it is).
    pub fn with_buffer(mut self, out: Vec<u8>) -> Self {
        self.out = out;
        self
    }

    /// A string with its length prefix, in modified UTF-8.
    pub fn string(&mut self, s: &str) -> Result<(), Error> {
        let start = self.out.len();
        self.out.extend_from_slice(&[0, 0]);
        if self.le {
            self.out.extend_from_slice(s.as_bytes());
        } else {
            encode_mutf8(s, &mut self.out);
        }
        let n = self.out.len() - start - 2;
        let n16 = u16::try_from(n).map_err(|_| Error::StringTooLong(n))?;
        let b = if self.le { n16.to_le_bytes() } else { n16.to_be_bytes() };
        self.out[start..start + 2].copy_from_slice(&b);
        Ok(())
    }

    /// A named entry's head: type id and name (its payload follows).
    pub fn head(&mut self, ty: u8, name: &str) -> Result<(), Error> {
        self.out.push(ty);
        self.string(name)
    }

    /// A list or array length.
    pub fn len(&mut self, n: usize) -> Result<(), Error> {
        let n = i32::try_from(n).map_err(|_| Error::ArrayTooLong(n))?;
        self.int(n);
        Ok(())
    }

    fn int(&mut self, x: i32) {
        let b = if self.le { x.to_le_bytes() } else { x.to_be_bytes() };
        self.out.extend_from_slice(&b);
    }

    fn long(&mut self, x: i64) {
        let b = if self.le { x.to_le_bytes() } else { x.to_be_bytes() };
        self.out.extend_from_slice(&b);
    }

    /// A named entry: head and payload (at nesting depth 0, as a root or a streamed entry).
    pub fn named(&mut self, name: &str, v: &Tag) -> Result<(), Error> {
        self.head(v.type_id(), name)?;
        self.payload(v, 0)
    }

    /// A value's payload, the value sitting at nesting `depth`.
    pub fn payload(&mut self, v: &Tag, depth: usize) -> Result<(), Error> {
        match v {
            Tag::Byte(x) => self.out.push(*x as u8),
            Tag::Short(x) => {
                let b = if self.le { x.to_le_bytes() } else { x.to_be_bytes() };
                self.out.extend_from_slice(&b)
            }
            Tag::Int(x) => self.int(*x),
            Tag::Long(x) => self.long(*x),
            Tag::Float(x) => self.int(x.to_bits() as i32),
            Tag::Double(x) => self.long(x.to_bits() as i64),
            Tag::ByteArray(a) => {
                self.len(a.len())?;
                self.out.extend(a.iter().map(|&b| b as u8));
            }
            Tag::String(s) => self.string(s)?,
            Tag::List(et, items) => {
                if depth > MAX_DEPTH {
                    return Err(Error::TooDeep);
                }
                let et = items.first().map_or(*et, Tag::type_id);
                if items.iter().any(|t| t.type_id() != et) {
                    return Err(Error::MixedList);
                }
                self.out.push(et);
                self.len(items.len())?;
                for t in items {
                    self.payload(t, depth + 1)?;
                }
            }
            Tag::Compound(c) => self.compound(c, depth)?,
            Tag::IntArray(a) => {
                self.len(a.len())?;
                put_numbers(&mut self.out, a, self.le, i32::to_le_bytes, i32::to_be_bytes);
            }
            Tag::LongArray(a) => {
                self.len(a.len())?;
                put_numbers(&mut self.out, a, self.le, i64::to_le_bytes, i64::to_be_bytes);
            }
        }
        Ok(())
    }

    /// A compound's entries and its `TAG_End`, the compound sitting at nesting `depth`.
    pub fn compound(&mut self, c: &Compound, depth: usize) -> Result<(), Error> {
        if depth > MAX_DEPTH {
            return Err(Error::TooDeep);
        }
        if self.sorted && c.keys().zip(c.keys().skip(1)).any(|(a, b)| a > b) {
            let mut entries: Vec<(&str, &Tag)> = c.iter().collect();
            entries.sort_unstable_by_key(|e| e.0);
            for (k, v) in entries {
                self.entry(k, v, depth)?;
            }
        } else {
            for (k, v) in c {
                self.entry(k, v, depth)?;
            }
        }
        self.out.push(id::END);
        Ok(())
    }

    fn entry(&mut self, k: &str, v: &Tag, depth: usize) -> Result<(), Error> {
        self.head(v.type_id(), k)?;
        self.payload(v, depth + 1)
    }
}

/// Appends the numbers of an int or long array as `N` bytes each, little-endian when `le`:
/// room made once, then every element written in place in the order chosen once
/// (vectorised), instead of a capacity check and an order test per element.
fn put_numbers<T: Copy, const N: usize>(
    out: &mut Vec<u8>,
    a: &[T],
    le: bool,
    to_le: impl Fn(T) -> [u8; N],
    to_be: impl Fn(T) -> [u8; N],
) {
    let start = out.len();
    out.resize(start + a.len() * N, 0);
    let (dst, _) = out[start..].as_chunks_mut::<N>();
    if le {
        dst.iter_mut().zip(a).for_each(|(d, &x)| *d = to_le(x));
    } else {
        dst.iter_mut().zip(a).for_each(|(d, &x)| *d = to_be(x));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::from_bytes;

    fn sample() -> Compound {
        let mut c = Compound::new();
        c.insert("b", Tag::Byte(-1));
        c.insert("l", Tag::compound_list([Compound::new()]));
        c.insert("e", Tag::List(id::COMPOUND, vec![]));
        c.insert("ia", Tag::IntArray(vec![1, -2, 3]));
        c.insert("la", Tag::LongArray(vec![i64::MIN]));
        c.insert("ba", Tag::ByteArray(vec![-128, 0, 127]));
        c.insert("s", Tag::String("x😈\0".into()));
        c.insert("d", Tag::Double(1.5));
        c.insert("f", Tag::Float(-0.25));
        c.insert("h", Tag::Short(-300));
        c.insert("i", Tag::Int(70_000));
        c.insert("g", Tag::Long(-5));
        c
    }

    /// Int and long arrays in both byte orders: the exact bytes, and read back.
    #[test]
    fn arrays_have_their_byte_order_and_read_back() {
        let ia = Tag::IntArray(vec![0x0102_0304, -2]);
        let la = Tag::LongArray(vec![0x0102_0304_0506_0708, -1]);
        let mut be = Writer::new();
        be.payload(&ia, 0).unwrap();
        be.payload(&la, 0).unwrap();
        let mut le = Writer::new().little_endian();
        le.payload(&ia, 0).unwrap();
        le.payload(&la, 0).unwrap();
        let body = |n: [u8; 4], a: [u8; 4], b: [u8; 4]| [n, a, b].concat();
        let want_be = [
            body([0, 0, 0, 2], [1, 2, 3, 4], [0xFF, 0xFF, 0xFF, 0xFE]),
            vec![0, 0, 0, 2, 1, 2, 3, 4, 5, 6, 7, 8],
            vec![0xFF; 8],
        ]
        .concat();
        let want_le = [
            body([2, 0, 0, 0], [4, 3, 2, 1], [0xFE, 0xFF, 0xFF, 0xFF]),
            vec![2, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1],
            vec![0xFF; 8],
        ]
        .concat();
        assert_eq!(be.out, want_be);
        assert_eq!(le.out, want_le);
        let mut r = crate::Reader::new(&want_be);
        assert_eq!(
            (r.payload(id::INT_ARRAY, 0).unwrap(), r.payload(id::LONG_ARRAY, 0).unwrap()),
            (ia.clone(), la.clone())
        );
        let mut r = crate::Reader::little_endian(&want_le);
        assert_eq!(
            (r.payload(id::INT_ARRAY, 0).unwrap(), r.payload(id::LONG_ARRAY, 0).unwrap()),
            (ia, la)
        );
    }

    #[test]
    fn tree_round_trips_in_both_orders() {
        let v = Tag::Compound(sample());
        let b = to_bytes("root", &v).unwrap();
        assert_eq!(from_bytes(&b).unwrap(), ("root".to_string(), v.clone()));
        let Tag::Compound(c) = from_bytes(&b).unwrap().1 else { panic!() };
        assert_eq!(c.keys().collect::<Vec<_>>(), sample().keys().collect::<Vec<_>>());
        // An empty list keeps its element type.
        let e = b.windows(4).position(|w| w == [9, 0, 1, b'e']).unwrap();
        assert_eq!(b[e + 4], id::COMPOUND);

        let mut w = Writer::sorted();
        w.named("root", &v).unwrap();
        let Tag::Compound(s) = from_bytes(&w.out).unwrap().1 else { panic!() };
        let c = sample();
        let mut keys: Vec<&str> = c.keys().collect();
        keys.sort();
        assert_eq!(s.keys().collect::<Vec<_>>(), keys);
        assert_eq!(s, sample());
    }

    #[test]
    fn little_endian_round_trips_and_lays_numbers_out_low_byte_first() {
        let v = Tag::Compound(sample());
        let mut w = Writer::new().little_endian();
        w.named("root", &v).unwrap();
        // Root: type, name length 4 as little-endian u16, the name in plain UTF-8.
        assert_eq!(&w.out[..7], &[10, 4, 0, b'r', b'o', b'o', b't']);
        let i = w.out.windows(4).position(|x| x == [3, 1, 0, b'i']).unwrap();
        assert_eq!(&w.out[i + 4..i + 8], &70_000i32.to_le_bytes());
        // A supplementary character is four UTF-8 bytes, not a CESU-8 pair; NUL is one byte.
        let s = w.out.windows(4).position(|x| x == [8, 1, 0, b's']).unwrap();
        assert_eq!(&w.out[s + 4..s + 6], &6u16.to_le_bytes());
        assert_eq!(&w.out[s + 6..s + 12], "x😈\0".as_bytes());

        let mut r = crate::Reader::little_endian(&w.out);
        assert_eq!(r.root().unwrap(), ("root".to_string(), v.clone()));
        assert_eq!(r.remaining(), 0);
        // The same bytes read as Java's order are not the same tree.
        assert_ne!(from_bytes(&w.out).ok(), Some(("root".to_string(), v)));
    }

    #[test]
    fn little_endian_roots_back_to_back_read_one_by_one() {
        let mut w = Writer::new().little_endian();
        for i in 0..3 {
            let mut c = Compound::new();
            c.insert("n", Tag::Int(i));
            w.named("", &Tag::Compound(c)).unwrap();
        }
        let mut r = crate::Reader::little_endian(&w.out);
        let mut got = vec![];
        while r.remaining() > 0 {
            got.push(r.root_compound().unwrap().get("n").cloned());
        }
        assert_eq!(got, [Some(Tag::Int(0)), Some(Tag::Int(1)), Some(Tag::Int(2))]);
        // Invalid UTF-8 is an error in Bedrock's order (no modified UTF-8 fallback).
        let bad = [8u8, 0, 0, 2, 0, 0xC0, 0x80];
        assert_eq!(crate::Reader::little_endian(&bad).root(), Err(Error::BadString));
        assert!(from_bytes(&[8u8, 0, 0, 0, 2, 0xC0, 0x80]).is_ok());
    }

    #[test]
    fn what_nbt_cannot_hold_is_an_error() {
        let long = "x".repeat(65_536);
        assert_eq!(to_bytes(&long, &Tag::Byte(0)), Err(Error::StringTooLong(65_536)));
        assert!(to_bytes("", &Tag::String("x".repeat(65_535))).is_ok());
        let mixed = Tag::List(id::BYTE, vec![Tag::Byte(0), Tag::Int(0)]);
        assert_eq!(to_bytes("", &mixed), Err(Error::MixedList));
        let mut deep = Tag::Compound(Compound::new());
        for _ in 0..=MAX_DEPTH {
            let mut c = Compound::new();
            c.insert("x", deep);
            deep = Tag::Compound(c);
        }
        assert_eq!(to_bytes("", &deep), Err(Error::TooDeep));
    }
}
