//! A small NBT tree (big-endian, Java edition) with a purpose-built reader and writer.
//!
//! Only what schematics need: [`Tag`] values that keep compound key order, a reader over a byte
//! slice that validates every length against the bytes left before allocating and caps nesting
//! at [`MAX_DEPTH`], and a writer. Strings are read as UTF-8 when valid (legacy writers) and
//! as Java modified UTF-8 otherwise (`C0 80` for NUL, CESU-8 surrogate pairs); they are written
//! as modified UTF-8.

use crate::Error;

/// Maximum nesting of compounds and lists (Minecraft's limit).
pub const MAX_DEPTH: usize = 512;

/// An NBT value.
#[derive(Clone, Debug, PartialEq)]
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
    /// `TAG_List`: the element type id (kept so that empty lists round-trip) and the items,
    /// which must all have that type.
    List(u8, Vec<Tag>),
    /// `TAG_Compound`.
    Compound(Compound),
    /// `TAG_Int_Array`.
    IntArray(Vec<i32>),
    /// `TAG_Long_Array`.
    LongArray(Vec<i64>),
}

impl Tag {
    /// The NBT type id of this value (1 to 12).
    pub fn type_id(&self) -> u8 {
        match self {
            Tag::Byte(_) => 1,
            Tag::Short(_) => 2,
            Tag::Int(_) => 3,
            Tag::Long(_) => 4,
            Tag::Float(_) => 5,
            Tag::Double(_) => 6,
            Tag::ByteArray(_) => 7,
            Tag::String(_) => 8,
            Tag::List(..) => 9,
            Tag::Compound(_) => 10,
            Tag::IntArray(_) => 11,
            Tag::LongArray(_) => 12,
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
}

/// A compound: named values in file order (lookups are linear; compounds in schematics are
/// small, and the big arrays are not stored here).
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Compound(pub Vec<(String, Tag)>);

impl Compound {
    /// An empty compound.
    pub fn new() -> Self {
        Self(Vec::new())
    }

    /// The value under `key` (the first one if a broken file repeats a key).
    pub fn get(&self, key: &str) -> Option<&Tag> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Mutable access to the value under `key`.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut Tag> {
        self.0.iter_mut().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    /// Sets `key` to `value`, replacing an existing value in place or appending.
    pub fn insert(&mut self, key: impl Into<String>, value: Tag) {
        let key = key.into();
        match self.get_mut(&key) {
            Some(v) => *v = value,
            None => self.0.push((key, value)),
        }
    }

    /// Removes and returns the value under `key`.
    pub fn remove(&mut self, key: &str) -> Option<Tag> {
        let i = self.0.iter().position(|(k, _)| k == key)?;
        Some(self.0.remove(i).1)
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// `true` when there are no entries.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entries in file order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Tag)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v))
    }
}

fn nbt_err(what: impl Into<String>) -> Error {
    Error::Nbt(what.into())
}

/// A cursor over NBT bytes.
pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    pub(crate) fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0 }
    }

    #[inline]
    pub(crate) fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    #[inline]
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if n > self.remaining() {
            return Err(Error::Truncated);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    #[inline]
    pub(crate) fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }

    #[inline]
    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    #[inline]
    pub(crate) fn u16(&mut self) -> Result<u16, Error> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    #[inline]
    pub(crate) fn i32(&mut self) -> Result<i32, Error> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    /// A length prefix (`i32`): negative lengths are an error, and `n * elem` bytes must remain.
    pub(crate) fn len(&mut self, elem: usize) -> Result<usize, Error> {
        let n = self.i32()?;
        let n = usize::try_from(n).map_err(|_| nbt_err(format!("negative length {n}")))?;
        if n.saturating_mul(elem) > self.remaining() {
            return Err(Error::Truncated);
        }
        Ok(n)
    }

    pub(crate) fn string(&mut self) -> Result<String, Error> {
        let n = self.u16()? as usize;
        let b = self.take(n)?;
        decode_mutf8(b)
    }

    /// Skips a string and returns its raw bytes (for key comparison without allocating).
    #[inline]
    pub(crate) fn raw_string(&mut self) -> Result<&'a [u8], Error> {
        let n = self.u16()? as usize;
        self.take(n)
    }

    /// Reads a scalar or array payload (types other than list and compound).
    fn scalar(&mut self, ty: u8) -> Result<Tag, Error> {
        Ok(match ty {
            1 => Tag::Byte(self.u8()? as i8),
            2 => Tag::Short(self.u16()? as i16),
            3 => Tag::Int(self.i32()?),
            4 => Tag::Long(i64::from_be_bytes(self.array()?)),
            5 => Tag::Float(f32::from_be_bytes(self.array()?)),
            6 => Tag::Double(f64::from_be_bytes(self.array()?)),
            7 => {
                let n = self.len(1)?;
                Tag::ByteArray(self.take(n)?.iter().map(|&b| b as i8).collect())
            }
            8 => Tag::String(self.string()?),
            11 => {
                let n = self.len(4)?;
                let s = self.take(n * 4)?;
                Tag::IntArray(
                    s.chunks_exact(4)
                        .map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                        .collect(),
                )
            }
            12 => {
                let n = self.len(8)?;
                let s = self.take(n * 8)?;
                Tag::LongArray(
                    s.chunks_exact(8)
                        .map(|c| i64::from_be_bytes(c.try_into().expect("8 bytes")))
                        .collect(),
                )
            }
            t => return Err(nbt_err(format!("unknown tag type {t}"))),
        })
    }

    /// Opens a list: reads its element type and length.
    fn list_head(&mut self) -> Result<(u8, usize), Error> {
        let et = self.u8()?;
        let n = self.len(min_payload(et)?)?;
        if et == 0 && n > 0 {
            return Err(nbt_err("list of TAG_End with a non-zero length"));
        }
        Ok((et, n))
    }

    /// Reads a value payload of type `ty` at `depth` (the depth of the value itself). Nested
    /// lists and compounds are parsed with an explicit stack, not recursion, so hostile input
    /// cannot exhaust the thread's stack.
    pub(crate) fn payload(&mut self, ty: u8, depth: usize) -> Result<Tag, Error> {
        enum Frame {
            Compound(Compound, String),
            List(u8, usize, Vec<Tag>),
        }
        let open = |r: &mut Self, ty: u8, d: usize| -> Result<Frame, Error> {
            if d > MAX_DEPTH {
                return Err(Error::TooDeep);
            }
            Ok(if ty == 10 {
                Frame::Compound(Compound::new(), String::new())
            } else {
                let (et, n) = r.list_head()?;
                Frame::List(et, n, Vec::with_capacity(n.min(1 << 16)))
            })
        };
        if ty != 9 && ty != 10 {
            return self.scalar(ty);
        }
        let mut stack = vec![open(self, ty, depth)?];
        loop {
            let top = stack.last_mut().expect("non-empty");
            let child = match top {
                Frame::Compound(_, key) => {
                    let t = self.u8()?;
                    if t == 0 {
                        None
                    } else {
                        *key = self.string()?;
                        Some(t)
                    }
                }
                Frame::List(et, rem, _) => {
                    if *rem == 0 {
                        None
                    } else {
                        *rem -= 1;
                        Some(*et)
                    }
                }
            };
            let value = match child {
                Some(t @ (9 | 10)) => {
                    let f = open(self, t, depth + stack.len())?;
                    stack.push(f);
                    continue;
                }
                Some(t) => self.scalar(t)?,
                None => match stack.pop().expect("non-empty") {
                    Frame::Compound(c, _) => Tag::Compound(c),
                    Frame::List(et, _, items) => Tag::List(et, items),
                },
            };
            match stack.last_mut() {
                None => return Ok(value),
                Some(Frame::Compound(c, key)) => c.0.push((std::mem::take(key), value)),
                Some(Frame::List(_, _, items)) => items.push(value),
            }
        }
    }

    /// Reads compound entries up to and including `TAG_End`.
    pub(crate) fn compound(&mut self, depth: usize) -> Result<Compound, Error> {
        match self.payload(10, depth)? {
            Tag::Compound(c) => Ok(c),
            _ => unreachable!("payload(10) is a compound"),
        }
    }

    /// Skips a value payload of type `ty` without building it (iteratively, like
    /// [`payload`](Self::payload)).
    pub(crate) fn skip(&mut self, ty: u8, depth: usize) -> Result<(), Error> {
        // Each frame: Some(remaining) for a list of `et`, None for a compound.
        let mut stack: Vec<(u8, Option<usize>)> = Vec::new();
        let mut next = Some(ty);
        loop {
            if let Some(t) = next.take() {
                match t {
                    1 => drop(self.take(1)?),
                    2 => drop(self.take(2)?),
                    3 | 5 => drop(self.take(4)?),
                    4 | 6 => drop(self.take(8)?),
                    7 => {
                        let n = self.len(1)?;
                        self.take(n)?;
                    }
                    8 => drop(self.raw_string()?),
                    9 | 10 => {
                        if depth + stack.len() > MAX_DEPTH {
                            return Err(Error::TooDeep);
                        }
                        if t == 9 {
                            let (et, n) = self.list_head()?;
                            stack.push((et, Some(n)));
                        } else {
                            stack.push((0, None));
                        }
                    }
                    11 => {
                        let n = self.len(4)?;
                        self.take(n * 4)?;
                    }
                    12 => {
                        let n = self.len(8)?;
                        self.take(n * 8)?;
                    }
                    t => return Err(nbt_err(format!("unknown tag type {t}"))),
                }
            }
            let Some(top) = stack.last_mut() else { return Ok(()) };
            match top {
                (et, Some(rem)) => {
                    if *rem == 0 {
                        stack.pop();
                    } else {
                        *rem -= 1;
                        next = Some(*et);
                    }
                }
                (_, None) => {
                    let t = self.u8()?;
                    if t == 0 {
                        stack.pop();
                    } else {
                        self.raw_string()?;
                        next = Some(t);
                    }
                }
            }
        }
    }
}

/// The smallest payload of a type, to bound list lengths by the bytes left.
fn min_payload(ty: u8) -> Result<usize, Error> {
    Ok(match ty {
        0 => 0,
        1 => 1,
        2 => 2,
        3 | 5 => 4,
        4 | 6 => 8,
        7 | 9 | 11 | 12 => 4,
        8 => 2,
        10 => 1,
        t => return Err(nbt_err(format!("unknown list element type {t}"))),
    })
}

/// Decodes an NBT string: plain UTF-8 when valid (legacy writers, and every ASCII string),
/// otherwise Java modified UTF-8 (`C0 80` for NUL, supplementary characters as CESU-8
/// surrogate pairs).
pub fn decode_mutf8(b: &[u8]) -> Result<String, Error> {
    if let Ok(s) = std::str::from_utf8(b) {
        return Ok(s.to_owned());
    }
    let bad = || nbt_err("string is neither UTF-8 nor Java modified UTF-8");
    let mut units: Vec<u16> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let cont = |j: usize| -> Result<u16, Error> {
            match b.get(j) {
                Some(&x) if x & 0xC0 == 0x80 => Ok((x & 0x3F) as u16),
                _ => Err(bad()),
            }
        };
        if c < 0x80 {
            units.push(c as u16);
            i += 1;
        } else if c & 0xE0 == 0xC0 {
            units.push((((c & 0x1F) as u16) << 6) | cont(i + 1)?);
            i += 2;
        } else if c & 0xF0 == 0xE0 {
            units.push((((c & 0x0F) as u16) << 12) | (cont(i + 1)? << 6) | cont(i + 2)?);
            i += 3;
        } else if c & 0xF8 == 0xF0 {
            // A 4-byte UTF-8 sequence inside an otherwise modified-UTF-8 string: legacy mix.
            let cp = (((c & 0x07) as u32) << 18)
                | ((cont(i + 1)? as u32) << 12)
                | ((cont(i + 2)? as u32) << 6)
                | cont(i + 3)? as u32;
            let ch = char::from_u32(cp).ok_or_else(bad)?;
            let mut tmp = [0u16; 2];
            units.extend_from_slice(ch.encode_utf16(&mut tmp));
            i += 4;
        } else {
            return Err(bad());
        }
    }
    String::from_utf16(&units).map_err(|_| bad())
}

/// Encodes `s` as Java modified UTF-8 into `out` (without the length prefix).
pub fn encode_mutf8(s: &str, out: &mut Vec<u8>) {
    if !s.bytes().any(|b| b == 0 || b >= 0xF0) {
        out.extend_from_slice(s.as_bytes());
        return;
    }
    for ch in s.chars() {
        let cp = ch as u32;
        if cp == 0 {
            out.extend_from_slice(&[0xC0, 0x80]);
        } else if cp >= 0x10000 {
            let mut tmp = [0u16; 2];
            for &u in ch.encode_utf16(&mut tmp).iter() {
                let u = u as u32;
                out.extend_from_slice(&[
                    0xE0 | (u >> 12) as u8,
                    0x80 | ((u >> 6) & 0x3F) as u8,
                    0x80 | (u & 0x3F) as u8,
                ]);
            }
        } else {
            let mut tmp = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut tmp).as_bytes());
        }
    }
}

/// Writes NBT into a byte vector.
pub(crate) struct Writer {
    pub(crate) out: Vec<u8>,
}

impl Writer {
    pub(crate) fn new() -> Self {
        Self { out: Vec::new() }
    }

    pub(crate) fn string(&mut self, s: &str) -> Result<(), Error> {
        let start = self.out.len();
        self.out.extend_from_slice(&[0, 0]);
        encode_mutf8(s, &mut self.out);
        let n = self.out.len() - start - 2;
        let n =
            u16::try_from(n).map_err(|_| nbt_err(format!("string of {n} bytes is too long")))?;
        self.out[start..start + 2].copy_from_slice(&n.to_be_bytes());
        Ok(())
    }

    /// Writes a named entry header.
    pub(crate) fn head(&mut self, ty: u8, name: &str) -> Result<(), Error> {
        self.out.push(ty);
        self.string(name)
    }

    pub(crate) fn len(&mut self, n: usize) -> Result<(), Error> {
        let n = i32::try_from(n).map_err(|_| nbt_err(format!("array of {n} is too long")))?;
        self.out.extend_from_slice(&n.to_be_bytes());
        Ok(())
    }

    pub(crate) fn named(&mut self, name: &str, v: &Tag) -> Result<(), Error> {
        self.head(v.type_id(), name)?;
        self.payload(v, 1)
    }

    pub(crate) fn payload(&mut self, v: &Tag, depth: usize) -> Result<(), Error> {
        match v {
            Tag::Byte(x) => self.out.push(*x as u8),
            Tag::Short(x) => self.out.extend_from_slice(&x.to_be_bytes()),
            Tag::Int(x) => self.out.extend_from_slice(&x.to_be_bytes()),
            Tag::Long(x) => self.out.extend_from_slice(&x.to_be_bytes()),
            Tag::Float(x) => self.out.extend_from_slice(&x.to_be_bytes()),
            Tag::Double(x) => self.out.extend_from_slice(&x.to_be_bytes()),
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
                    return Err(nbt_err("list items of different types"));
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
                for x in a {
                    self.out.extend_from_slice(&x.to_be_bytes());
                }
            }
            Tag::LongArray(a) => {
                self.len(a.len())?;
                for x in a {
                    self.out.extend_from_slice(&x.to_be_bytes());
                }
            }
        }
        Ok(())
    }

    pub(crate) fn compound(&mut self, c: &Compound, depth: usize) -> Result<(), Error> {
        if depth > MAX_DEPTH {
            return Err(Error::TooDeep);
        }
        for (k, v) in &c.0 {
            self.head(v.type_id(), k)?;
            self.payload(v, depth + 1)?;
        }
        self.out.push(0);
        Ok(())
    }
}

/// Parses one named root tag from uncompressed NBT bytes: `(name, value)`.
pub fn from_bytes(bytes: &[u8]) -> Result<(String, Tag), Error> {
    let mut r = Reader::new(bytes);
    let ty = r.u8()?;
    if ty == 0 {
        return Err(nbt_err("root tag is TAG_End"));
    }
    let name = r.string()?;
    let v = r.payload(ty, 0)?;
    Ok((name, v))
}

/// Serializes one named root tag to uncompressed NBT bytes.
pub fn to_bytes(name: &str, value: &Tag) -> Result<Vec<u8>, Error> {
    let mut w = Writer::new();
    w.head(value.type_id(), name)?;
    w.payload(value, 0)?;
    Ok(w.out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutf8_round_trips_nul_and_supplementary() {
        let s = "a\0b😈ц";
        let mut out = Vec::new();
        encode_mutf8(s, &mut out);
        assert!(std::str::from_utf8(&out).is_err(), "CESU-8 pair is not UTF-8");
        assert_eq!(&out[1..3], &[0xC0, 0x80]);
        assert_eq!(decode_mutf8(&out).unwrap(), s);
        // Legacy plain UTF-8 (4-byte sequence) is accepted too.
        assert_eq!(decode_mutf8(s.as_bytes()).unwrap(), s);
        assert!(decode_mutf8(&[0xFF]).is_err());
    }

    #[test]
    fn tree_round_trips() {
        let mut c = Compound::new();
        c.insert("b", Tag::Byte(-1));
        c.insert("l", Tag::List(10, vec![Tag::Compound(Compound::new())]));
        c.insert("e", Tag::List(0, vec![]));
        c.insert("ia", Tag::IntArray(vec![1, -2, 3]));
        c.insert("la", Tag::LongArray(vec![i64::MIN]));
        c.insert("s", Tag::String("x😈".into()));
        c.insert("d", Tag::Double(1.5));
        let v = Tag::Compound(c);
        let b = to_bytes("root", &v).unwrap();
        assert_eq!(from_bytes(&b).unwrap(), ("root".to_string(), v));
    }

    #[test]
    fn nesting_is_capped() {
        let mut b = vec![10u8, 0, 0];
        for _ in 0..600 {
            b.extend_from_slice(&[10, 0, 0]);
        }
        assert!(matches!(from_bytes(&b), Err(Error::TooDeep)));
        // Lists too.
        let mut b = vec![9u8, 0, 0];
        for _ in 0..600 {
            b.extend_from_slice(&[9, 0, 0, 0, 1]);
        }
        assert!(matches!(from_bytes(&b), Err(Error::TooDeep)));
    }

    #[test]
    fn huge_lengths_are_rejected_before_allocating() {
        let b = [9u8, 0, 0, 10, 0x7F, 0xFF, 0xFF, 0xFF];
        assert!(matches!(from_bytes(&b), Err(Error::Truncated)));
        let b = [7u8, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF];
        assert!(from_bytes(&b).is_err());
    }
}
