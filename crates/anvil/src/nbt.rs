//! NBT glue: a bounded one-pass parser into fastnbt's [`Value`] tree (Java's modified UTF-8
//! decoded), and a deterministic writer (compound keys sorted, strings in modified UTF-8) so
//! that equal values always encode to equal bytes.

use std::collections::HashMap;

pub use fastnbt::Value;

use crate::error::ChunkError;

/// Nesting limit, Minecraft's own (`NbtAccounter` depth 512).
pub const MAX_DEPTH: usize = 512;

/// Parses a root compound (named root, as in region chunks).
///
/// One pass validates while it builds: depth ≤ [`MAX_DEPTH`], valid tag ids, every list and
/// array length within the bytes left (so no declared length allocates more than the input
/// can fill), strings in modified UTF-8. Trailing bytes after the root are ignored.
pub fn parse(bytes: &[u8]) -> Result<HashMap<String, Value>, ChunkError> {
    let err = |m: &str| ChunkError::Nbt(m.into());
    let mut r = Reader { b: bytes, at: 0 };
    match r.take(1).map_err(err)?[0] {
        10 => {}
        _ => return Err(err("root tag is not a compound")),
    }
    r.string().map_err(err)?;
    r.compound(0).map_err(err)
}

/// The parser's cursor.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], &'static str> {
        let end = self.at.checked_add(n).ok_or("length overflow")?;
        let s = self.b.get(self.at..end).ok_or("unexpected end of NBT")?;
        self.at = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], &'static str> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }

    fn string(&mut self) -> Result<String, &'static str> {
        let n = u16::from_be_bytes(self.array()?) as usize;
        decode_mutf8(self.take(n)?).ok_or("string is not valid modified UTF-8")
    }

    /// A list or array length: non-negative, and at most the bytes left divided by `unit`.
    fn len(&mut self, unit: usize) -> Result<usize, &'static str> {
        let n = i32::from_be_bytes(self.array()?);
        let n = usize::try_from(n).map_err(|_| "negative length")?;
        if n > (self.b.len() - self.at) / unit {
            return Err("length longer than the input");
        }
        Ok(n)
    }

    fn compound(&mut self, depth: usize) -> Result<HashMap<String, Value>, &'static str> {
        if depth > MAX_DEPTH {
            return Err("NBT nested deeper than 512");
        }
        let mut m = HashMap::new();
        loop {
            let t = self.take(1)?[0];
            if t == 0 {
                return Ok(m);
            }
            let k = self.string()?;
            let v = self.value(t, depth + 1)?;
            m.insert(k, v);
        }
    }

    fn value(&mut self, id: u8, depth: usize) -> Result<Value, &'static str> {
        if depth > MAX_DEPTH {
            return Err("NBT nested deeper than 512");
        }
        Ok(match id {
            1 => Value::Byte(self.take(1)?[0] as i8),
            2 => Value::Short(i16::from_be_bytes(self.array()?)),
            3 => Value::Int(i32::from_be_bytes(self.array()?)),
            4 => Value::Long(i64::from_be_bytes(self.array()?)),
            5 => Value::Float(f32::from_be_bytes(self.array()?)),
            6 => Value::Double(f64::from_be_bytes(self.array()?)),
            7 => {
                let n = self.len(1)?;
                let v = self.take(n)?.iter().map(|&x| x as i8).collect();
                Value::ByteArray(fastnbt::ByteArray::new(v))
            }
            11 => {
                let n = self.len(4)?;
                let v = self.take(n * 4)?.chunks_exact(4);
                let v = v.map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]])).collect();
                Value::IntArray(fastnbt::IntArray::new(v))
            }
            12 => {
                let n = self.len(8)?;
                let v = self.take(n * 8)?.chunks_exact(8);
                let v = v.map(|c| i64::from_be_bytes(c.try_into().unwrap_or([0; 8]))).collect();
                Value::LongArray(fastnbt::LongArray::new(v))
            }
            8 => Value::String(self.string()?),
            9 => {
                let elem = self.take(1)?[0];
                let n = self.len(1)?;
                if elem == 0 && n != 0 {
                    return Err("list of TAG_End with elements");
                }
                // Elements are at least one byte each, but a tree node is larger than a byte:
                // reserve no more than a page's worth up front.
                let mut l = Vec::with_capacity(n.min(256));
                for _ in 0..n {
                    l.push(self.value(elem, depth + 1)?);
                }
                Value::List(l)
            }
            10 => Value::Compound(self.compound(depth)?),
            _ => return Err("invalid tag id"),
        })
    }
}

/// Decodes Java's modified UTF-8 (NUL as `C0 80`, supplementary characters as surrogate
/// pairs). Plain UTF-8 without those forms is the common case and is taken as it is.
fn decode_mutf8(b: &[u8]) -> Option<String> {
    if let Ok(s) = std::str::from_utf8(b) {
        return Some(s.to_owned());
    }
    let mut units: Vec<u16> = Vec::with_capacity(b.len());
    let mut i = 0;
    let cont = |x: Option<&u8>| x.filter(|&&c| c & 0xC0 == 0x80).map(|&c| (c & 0x3F) as u16);
    while i < b.len() {
        let c = b[i];
        if c < 0x80 && c != 0 {
            units.push(c as u16);
            i += 1;
        } else if c & 0xE0 == 0xC0 {
            units.push(((c & 0x1F) as u16) << 6 | cont(b.get(i + 1))?);
            i += 2;
        } else if c & 0xF0 == 0xE0 {
            let u = ((c & 0x0F) as u16) << 12 | cont(b.get(i + 1))? << 6 | cont(b.get(i + 2))?;
            units.push(u);
            i += 3;
        } else {
            return None;
        }
    }
    String::from_utf16(&units).ok()
}

/// Encodes a root compound with an empty name. Compound keys are written in sorted order, so
/// the output is deterministic.
pub fn write_root(root: &HashMap<String, Value>) -> Vec<u8> {
    let mut out = Vec::with_capacity(4096);
    out.push(10);
    put_str(&mut out, "");
    put_compound(&mut out, root);
    out
}

fn tag_id(v: &Value) -> u8 {
    match v {
        Value::Byte(_) => 1,
        Value::Short(_) => 2,
        Value::Int(_) => 3,
        Value::Long(_) => 4,
        Value::Float(_) => 5,
        Value::Double(_) => 6,
        Value::ByteArray(_) => 7,
        Value::String(_) => 8,
        Value::List(_) => 9,
        Value::Compound(_) => 10,
        Value::IntArray(_) => 11,
        Value::LongArray(_) => 12,
    }
}

/// Java modified UTF-8: NUL as `C0 80`, supplementary characters as surrogate pairs.
pub(crate) fn put_str(out: &mut Vec<u8>, s: &str) {
    let mut buf = Vec::with_capacity(s.len());
    for c in s.chars() {
        let c = c as u32;
        let mut unit = |u: u32| {
            if u != 0 && u < 0x80 {
                buf.push(u as u8);
            } else if u < 0x800 {
                buf.push(0xC0 | (u >> 6) as u8);
                buf.push(0x80 | (u & 0x3F) as u8);
            } else {
                buf.push(0xE0 | (u >> 12) as u8);
                buf.push(0x80 | ((u >> 6) & 0x3F) as u8);
                buf.push(0x80 | (u & 0x3F) as u8);
            }
        };
        if c >= 0x10000 {
            let v = c - 0x10000;
            unit(0xD800 | (v >> 10));
            unit(0xDC00 | (v & 0x3FF));
        } else {
            unit(c);
        }
    }
    // Strings longer than 65535 encoded bytes cannot be represented; truncate at a char
    // boundary of the encoding (never produced by Minecraft, which has the same limit).
    let n = buf.len().min(u16::MAX as usize);
    out.extend_from_slice(&(n as u16).to_be_bytes());
    out.extend_from_slice(&buf[..n]);
}

pub(crate) fn put_compound(out: &mut Vec<u8>, m: &HashMap<String, Value>) {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    for k in keys {
        put_named(out, k, &m[k]);
    }
    out.push(0);
}

/// Writes one named tag of a compound: tag id, name, payload.
pub(crate) fn put_named(out: &mut Vec<u8>, name: &str, v: &Value) {
    out.push(tag_id(v));
    put_str(out, name);
    put_payload(out, v);
}

fn put_payload(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Byte(x) => out.push(*x as u8),
        Value::Short(x) => out.extend_from_slice(&x.to_be_bytes()),
        Value::Int(x) => out.extend_from_slice(&x.to_be_bytes()),
        Value::Long(x) => out.extend_from_slice(&x.to_be_bytes()),
        Value::Float(x) => out.extend_from_slice(&x.to_be_bytes()),
        Value::Double(x) => out.extend_from_slice(&x.to_be_bytes()),
        Value::ByteArray(a) => {
            out.extend_from_slice(&(a.len() as i32).to_be_bytes());
            out.extend(a.iter().map(|&x| x as u8));
        }
        Value::IntArray(a) => {
            out.extend_from_slice(&(a.len() as i32).to_be_bytes());
            for x in a.iter() {
                out.extend_from_slice(&x.to_be_bytes());
            }
        }
        Value::LongArray(a) => {
            out.extend_from_slice(&(a.len() as i32).to_be_bytes());
            for x in a.iter() {
                out.extend_from_slice(&x.to_be_bytes());
            }
        }
        Value::String(s) => put_str(out, s),
        Value::List(l) => {
            out.push(l.first().map_or(0, tag_id));
            out.extend_from_slice(&(l.len() as i32).to_be_bytes());
            for e in l {
                put_payload(out, e);
            }
        }
        Value::Compound(m) => put_compound(out, m),
    }
}

/// Reads an integer tag of any width as `i64`.
pub fn as_i64(v: &Value) -> Option<i64> {
    match v {
        Value::Byte(x) => Some(*x as i64),
        Value::Short(x) => Some(*x as i64),
        Value::Int(x) => Some(*x as i64),
        Value::Long(x) => Some(*x),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modified_utf8_roundtrip() {
        let mut m = HashMap::new();
        m.insert("name".to_string(), Value::String("a\0b😈é日".into()));
        m.insert("n".to_string(), Value::List(vec![]));
        let bytes = write_root(&m);
        // The emoji as a CESU-8 surrogate pair, NUL as C0 80.
        let needle = [0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x88];
        assert!(bytes.windows(6).any(|w| w == needle));
        assert!(bytes.windows(2).any(|w| w == [0xC0, 0x80]));
        assert_eq!(parse(&bytes).unwrap(), m);
        assert_eq!(write_root(&parse(&bytes).unwrap()), bytes);
    }

    #[test]
    fn hostile_structure_is_rejected() {
        // 100k nested lists.
        let mut b = vec![10, 0, 0, 9, 0, 1, b'x'];
        for _ in 0..100_000 {
            b.extend_from_slice(&[9, 0, 0, 0, 1]);
        }
        assert!(parse(&b).is_err());
        // A list that claims 2^31-1 elements.
        let b = [10, 0, 0, 9, 0, 1, b'x', 1, 0x7F, 0xFF, 0xFF, 0xFF, 0];
        assert!(parse(&b).is_err());
        assert!(parse(&[]).is_err());
        assert!(parse(&[10, 0]).is_err());
    }
}
