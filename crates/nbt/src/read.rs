//! The reader: a bounded cursor over NBT bytes, and the tree parser on top of it.

use crate::{Compound, DEFAULT_TREE_LIMIT, Error, MAX_DEPTH, Tag, decode_mutf8, id};

/// Memory a tree node takes besides its heap bytes (a `Tag`; a compound entry adds its key).
const NODE: usize = std::mem::size_of::<Tag>();
const ENTRY: usize = std::mem::size_of::<(String, Tag)>();

/// Parses one named root tag from uncompressed NBT bytes: `(name, value)`. Bytes after the
/// root are ignored.
pub fn from_bytes(bytes: &[u8]) -> Result<(String, Tag), Error> {
    Reader::new(bytes).root()
}

/// A cursor over NBT bytes.
///
/// Every read checks the bytes left first and fails with [`Error::Truncated`] instead of
/// reading past the end; [`len`](Self::len) refuses a length the bytes left cannot fill, so a
/// caller that allocates by it allocates no more than the input could hold.
///
/// The trees it builds ([`payload`](Self::payload), [`compound`](Self::compound)) count
/// against a budget of memory, [`DEFAULT_TREE_LIMIT`] unless set with
/// [`with_tree_limit`](Self::with_tree_limit): an empty compound is one byte on the wire and a
/// node in memory, so without it a few MB of input could ask for gigabytes.
#[derive(Clone, Debug)]
pub struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
    limit: usize,
    left: usize,
    /// Bedrock Edition's byte order: numbers little-endian, strings plain UTF-8.
    le: bool,
}

impl<'a> Reader<'a> {
    /// A cursor at the start of `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Self { buf, pos: 0, limit: DEFAULT_TREE_LIMIT, left: DEFAULT_TREE_LIMIT, le: false }
    }

    /// A cursor at the start of `buf` for Bedrock Edition's NBT: every number little-endian
    /// (lengths included) and strings in plain UTF-8 (no modified UTF-8).
    pub fn little_endian(buf: &'a [u8]) -> Self {
        Self { le: true, ..Self::new(buf) }
    }

    /// One named root tag at the cursor: `(name, value)`. Bedrock values often hold several
    /// roots back to back (a sub-chunk's palette, a chunk's block entities): call it until
    /// [`remaining`](Self::remaining) is 0.
    pub fn root(&mut self) -> Result<(String, Tag), Error> {
        let ty = self.u8()?;
        if ty == id::END {
            return Err(Error::UnknownTag(ty));
        }
        let name = self.string()?;
        let v = self.payload(ty, 0)?;
        Ok((name, v))
    }

    /// One named root at the cursor that must be a compound (its name dropped).
    pub fn root_compound(&mut self) -> Result<Compound, Error> {
        match self.root()?.1 {
            Tag::Compound(c) => Ok(c),
            other => Err(Error::RootNotCompound { found: other.type_id() }),
        }
    }

    /// Whether this cursor reads Bedrock's little-endian NBT.
    #[inline]
    pub fn is_little_endian(&self) -> bool {
        self.le
    }

    /// The same cursor with a budget of `bytes` for the trees it builds (counted as the nodes'
    /// size plus their strings and arrays; vectors may hold up to twice that while they grow).
    pub fn with_tree_limit(mut self, bytes: usize) -> Self {
        self.limit = bytes;
        self.left = bytes;
        self
    }

    /// Counts `n` bytes of tree against the budget.
    #[inline]
    fn charge(&mut self, n: usize) -> Result<(), Error> {
        match self.left.checked_sub(n) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(Error::TreeTooLarge { limit: self.limit }),
        }
    }

    /// Bytes read so far.
    #[inline]
    pub fn position(&self) -> usize {
        self.pos
    }

    /// Bytes left.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }

    /// The next `n` bytes.
    #[inline]
    pub fn take(&mut self, n: usize) -> Result<&'a [u8], Error> {
        if n > self.remaining() {
            return Err(Error::Truncated);
        }
        let s = &self.buf[self.pos..self.pos + n];
        self.pos += n;
        Ok(s)
    }

    #[inline]
    fn array<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    /// One byte (a tag type id, or a `TAG_Byte` payload).
    #[inline]
    pub fn u8(&mut self) -> Result<u8, Error> {
        Ok(self.take(1)?[0])
    }

    /// A `u16` in the cursor's byte order (a string's length prefix).
    #[inline]
    pub fn u16(&mut self) -> Result<u16, Error> {
        let a = self.array()?;
        Ok(if self.le { u16::from_le_bytes(a) } else { u16::from_be_bytes(a) })
    }

    /// An `i32` in the cursor's byte order.
    #[inline]
    pub fn i32(&mut self) -> Result<i32, Error> {
        let a = self.array()?;
        Ok(if self.le { i32::from_le_bytes(a) } else { i32::from_be_bytes(a) })
    }

    /// An `i64` in the cursor's byte order.
    #[inline]
    pub fn i64(&mut self) -> Result<i64, Error> {
        let a = self.array()?;
        Ok(if self.le { i64::from_le_bytes(a) } else { i64::from_be_bytes(a) })
    }

    /// A string's bytes decoded: UTF-8, or modified UTF-8 in Java's byte order.
    fn decode(&self, b: &[u8]) -> Result<String, Error> {
        if self.le {
            std::str::from_utf8(b).map(str::to_owned).map_err(|_| Error::BadString)
        } else {
            decode_mutf8(b)
        }
    }

    /// A list or array length (`i32`): negative lengths are an error, and at least
    /// `n * elem` bytes must remain.
    #[inline]
    pub fn len(&mut self, elem: usize) -> Result<usize, Error> {
        let n = self.i32()?;
        let n = usize::try_from(n).map_err(|_| Error::NegativeLength(n))?;
        if n.saturating_mul(elem) > self.remaining() {
            return Err(Error::Truncated);
        }
        Ok(n)
    }

    /// A string, decoded.
    pub fn string(&mut self) -> Result<String, Error> {
        let n = self.u16()? as usize;
        let b = self.take(n)?;
        self.decode(b)
    }

    /// A string, borrowed from the input when it is plain UTF-8 (the common case), decoded
    /// from modified UTF-8 otherwise.
    pub fn str(&mut self) -> Result<std::borrow::Cow<'a, str>, Error> {
        let b = self.raw_string()?;
        match std::str::from_utf8(b) {
            Ok(s) => Ok(std::borrow::Cow::Borrowed(s)),
            Err(_) => self.decode(b).map(std::borrow::Cow::Owned),
        }
    }

    /// A string's raw bytes, not decoded (to compare keys without allocating).
    #[inline]
    pub fn raw_string(&mut self) -> Result<&'a [u8], Error> {
        let n = self.u16()? as usize;
        self.take(n)
    }

    /// A list's head: its element type and length (bounded by the bytes left).
    pub fn list_head(&mut self) -> Result<(u8, usize), Error> {
        let et = self.u8()?;
        let n = self.len(min_payload(et)?)?;
        if et == id::END && n > 0 {
            return Err(Error::EndList(n));
        }
        Ok((et, n))
    }

    /// A scalar or array payload (every type but list and compound).
    fn scalar(&mut self, ty: u8) -> Result<Tag, Error> {
        self.charge(NODE)?;
        Ok(match ty {
            id::BYTE => Tag::Byte(self.u8()? as i8),
            id::SHORT => Tag::Short(self.u16()? as i16),
            id::INT => Tag::Int(self.i32()?),
            id::LONG => Tag::Long(self.i64()?),
            id::FLOAT => Tag::Float(f32::from_bits(self.i32()? as u32)),
            id::DOUBLE => Tag::Double(f64::from_bits(self.i64()? as u64)),
            id::BYTE_ARRAY => {
                let n = self.len(1)?;
                self.charge(n)?;
                Tag::ByteArray(self.take(n)?.iter().map(|&b| b as i8).collect())
            }
            id::STRING => {
                let s = self.string()?;
                self.charge(s.len())?;
                Tag::String(s)
            }
            // Whole elements as fixed-size arrays, the byte order chosen once per array: one
            // load and a byte swap per element, vectorised (built byte by byte with the order
            // tested per element, a 1 KiB long array cost a quarter of its tree node's time).
            id::INT_ARRAY => {
                let n = self.len(4)?;
                self.charge(n * 4)?;
                let (words, _) = self.take(n * 4)?.as_chunks::<4>();
                Tag::IntArray(if self.le {
                    words.iter().map(|&w| i32::from_le_bytes(w)).collect()
                } else {
                    words.iter().map(|&w| i32::from_be_bytes(w)).collect()
                })
            }
            id::LONG_ARRAY => {
                let n = self.len(8)?;
                self.charge(n * 8)?;
                let (words, _) = self.take(n * 8)?.as_chunks::<8>();
                Tag::LongArray(if self.le {
                    words.iter().map(|&w| i64::from_le_bytes(w)).collect()
                } else {
                    words.iter().map(|&w| i64::from_be_bytes(w)).collect()
                })
            }
            t => return Err(Error::UnknownTag(t)),
        })
    }

    /// A value's payload of type `ty`, where the value itself sits at nesting `depth` (0 for
    /// a root). Nested lists and compounds are parsed with an explicit stack, not recursion.
    pub fn payload(&mut self, ty: u8, depth: usize) -> Result<Tag, Error> {
        enum Frame {
            Compound(Compound, String),
            List(u8, usize, Vec<Tag>),
        }
        let open = |r: &mut Self, ty: u8, d: usize| -> Result<Frame, Error> {
            if d > MAX_DEPTH {
                return Err(Error::TooDeep);
            }
            r.charge(NODE)?;
            Ok(if ty == id::COMPOUND {
                Frame::Compound(Compound::new(), String::new())
            } else {
                let (et, n) = r.list_head()?;
                // The length is bounded by the bytes left, but a tree node is larger than its
                // smallest encoding: reserve a little, let the vector grow past that.
                Frame::List(et, n, Vec::with_capacity(n.min(256)))
            })
        };
        if ty != id::LIST && ty != id::COMPOUND {
            return self.scalar(ty);
        }
        let mut stack = vec![open(self, ty, depth)?];
        loop {
            let top = stack.last_mut().expect("non-empty");
            let child = match top {
                Frame::Compound(_, key) => {
                    let t = self.u8()?;
                    if t == id::END {
                        None
                    } else {
                        *key = self.string()?;
                        self.charge(ENTRY - NODE + key.len())?;
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
                Some(t @ (id::LIST | id::COMPOUND)) => {
                    let f = open(self, t, depth + stack.len())?;
                    stack.push(f);
                    continue;
                }
                Some(t) => self.scalar(t)?,
                None => match stack.pop().expect("non-empty") {
                    Frame::Compound(mut c, _) => {
                        c.dedup_keys();
                        Tag::Compound(c)
                    }
                    Frame::List(et, _, items) => Tag::List(et, items),
                },
            };
            match stack.last_mut() {
                None => return Ok(value),
                Some(Frame::Compound(c, key)) => c.push_unchecked(std::mem::take(key), value),
                Some(Frame::List(_, _, items)) => items.push(value),
            }
        }
    }

    /// A compound's entries up to and including its `TAG_End`.
    pub fn compound(&mut self, depth: usize) -> Result<Compound, Error> {
        match self.payload(id::COMPOUND, depth)? {
            Tag::Compound(c) => Ok(c),
            _ => unreachable!("payload(COMPOUND) is a compound"),
        }
    }

    /// Passes over a value's payload of type `ty` as [`skip`](Self::skip) does and returns its
    /// bytes, to keep or copy without building a tree.
    pub fn payload_bytes(&mut self, ty: u8, depth: usize) -> Result<&'a [u8], Error> {
        let start = self.pos;
        self.skip(ty, depth)?;
        Ok(&self.buf[start..self.pos])
    }

    /// A cursor over `bytes` with this one's byte order and tree budget (for a payload taken
    /// with [`payload_bytes`](Self::payload_bytes)).
    pub fn sub(&self, bytes: &'a [u8]) -> Self {
        Self { buf: bytes, pos: 0, ..self.clone() }
    }

    /// Passes over a value's payload of type `ty` without building it (iteratively, with the
    /// same checks as [`payload`](Self::payload)).
    pub fn skip(&mut self, ty: u8, depth: usize) -> Result<(), Error> {
        // Each frame: Some(remaining) for a list of `et`, None for a compound.
        let mut stack: Vec<(u8, Option<usize>)> = Vec::new();
        let mut next = Some(ty);
        loop {
            if let Some(t) = next.take() {
                match t {
                    id::BYTE => drop(self.take(1)?),
                    id::SHORT => drop(self.take(2)?),
                    id::INT | id::FLOAT => drop(self.take(4)?),
                    id::LONG | id::DOUBLE => drop(self.take(8)?),
                    id::BYTE_ARRAY => {
                        let n = self.len(1)?;
                        self.take(n)?;
                    }
                    id::STRING => drop(self.raw_string()?),
                    id::LIST | id::COMPOUND => {
                        if depth + stack.len() > MAX_DEPTH {
                            return Err(Error::TooDeep);
                        }
                        if t == id::LIST {
                            let (et, n) = self.list_head()?;
                            match fixed_size(et) {
                                // Numbers: the whole run at once (`list_head` bounded `n`).
                                Some(size) => drop(self.take(n * size)?),
                                None => stack.push((et, Some(n))),
                            }
                        } else {
                            stack.push((0, None));
                        }
                    }
                    id::INT_ARRAY => {
                        let n = self.len(4)?;
                        self.take(n * 4)?;
                    }
                    id::LONG_ARRAY => {
                        let n = self.len(8)?;
                        self.take(n * 8)?;
                    }
                    t => return Err(Error::UnknownTag(t)),
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
                    if t == id::END {
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

/// The payload size of a number type (`None` for the others), so that a list of numbers is
/// passed over or copied as one run of bytes.
pub(crate) fn fixed_size(ty: u8) -> Option<usize> {
    match ty {
        id::BYTE => Some(1),
        id::SHORT => Some(2),
        id::INT | id::FLOAT => Some(4),
        id::LONG | id::DOUBLE => Some(8),
        _ => None,
    }
}

/// The smallest payload of a type, to bound list lengths by the bytes left.
fn min_payload(ty: u8) -> Result<usize, Error> {
    Ok(match ty {
        id::END => 0,
        id::BYTE => 1,
        id::SHORT => 2,
        id::INT | id::FLOAT => 4,
        id::LONG | id::DOUBLE => 8,
        id::BYTE_ARRAY | id::INT_ARRAY | id::LONG_ARRAY => 4,
        id::LIST => 5,
        id::STRING => 2,
        id::COMPOUND => 1,
        t => return Err(Error::UnknownTag(t)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nesting_is_capped() {
        let mut b = vec![10u8, 0, 0];
        for _ in 0..600 {
            b.extend_from_slice(&[10, 0, 0]);
        }
        assert_eq!(from_bytes(&b), Err(Error::TooDeep));
        assert_eq!(Reader::new(&b[3..]).skip(10, 0), Err(Error::TooDeep));
        let mut b = vec![9u8, 0, 0];
        for _ in 0..100_000 {
            b.extend_from_slice(&[9, 0, 0, 0, 1]);
        }
        assert_eq!(from_bytes(&b), Err(Error::TooDeep));
        // 512 levels are fine.
        let mut b = vec![10u8, 0, 0];
        for _ in 0..MAX_DEPTH {
            b.extend_from_slice(&[10, 0, 0]);
        }
        b.extend(std::iter::repeat_n(0, MAX_DEPTH + 1));
        assert!(from_bytes(&b).is_ok());
    }

    #[test]
    fn lengths_are_checked_before_allocating() {
        assert_eq!(from_bytes(&[9, 0, 0, 10, 0x7F, 0xFF, 0xFF, 0xFF]), Err(Error::Truncated));
        assert_eq!(from_bytes(&[7, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]), Err(Error::NegativeLength(-1)));
        assert_eq!(
            from_bytes(&[12, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0]),
            Err(Error::Truncated)
        );
        assert_eq!(from_bytes(&[9, 0, 0, 0, 0, 0, 0, 1]), Err(Error::EndList(1)));
        assert_eq!(from_bytes(&[9, 0, 0, 13, 0, 0, 0, 0]), Err(Error::UnknownTag(13)));
        assert_eq!(from_bytes(&[]), Err(Error::Truncated));
        assert_eq!(from_bytes(&[0]), Err(Error::UnknownTag(0)));
    }

    #[test]
    fn a_repeated_key_keeps_its_first_place_and_last_value() {
        // { a: 1b, b: 2b, a: 3b }
        let b = [10, 0, 0, 1, 0, 1, b'a', 1, 1, 0, 1, b'b', 2, 1, 0, 1, b'a', 3, 0];
        let c = Compound::from_bytes(&b).unwrap();
        assert_eq!(c.iter().collect::<Vec<_>>(), [("a", &Tag::Byte(3)), ("b", &Tag::Byte(2))]);
        assert_eq!(Compound::from_bytes(&[1, 0, 0, 5]), Err(Error::RootNotCompound { found: 1 }));
    }

    #[test]
    fn trees_are_built_within_their_memory_budget() {
        // A list of 100 000 empty compounds: 100 KB on the wire, 3.2 MB of nodes.
        let n = 100_000usize;
        let mut b = vec![10, 0, 0, 9, 0, 1, b'l', 10];
        b.extend_from_slice(&(n as i32).to_be_bytes());
        b.extend(std::iter::repeat_n(0u8, n + 1));
        let limited = |limit| {
            let mut r = Reader::new(&b).with_tree_limit(limit);
            r.u8().unwrap();
            r.raw_string().unwrap();
            r.payload(10, 0)
        };
        assert_eq!(limited(1 << 20), Err(Error::TreeTooLarge { limit: 1 << 20 }));
        assert!(limited(8 << 20).is_ok());
        // Strings and arrays count their bytes.
        let mut b = vec![7, 0, 0];
        b.extend_from_slice(&(5000i32).to_be_bytes());
        b.extend(std::iter::repeat_n(1u8, 5000));
        let mut r = Reader::new(&b).with_tree_limit(4096);
        r.u8().unwrap();
        r.raw_string().unwrap();
        assert_eq!(r.payload(7, 0), Err(Error::TreeTooLarge { limit: 4096 }));
    }
}
