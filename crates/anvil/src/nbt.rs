//! NBT glue: parsing through fastnbt (which decodes Java's modified UTF-8) after a bounded
//! structural pre-check, and a deterministic writer (compound keys sorted, strings in modified
//! UTF-8) so that equal values always encode to equal bytes.

use std::collections::HashMap;

pub use fastnbt::Value;

use crate::error::ChunkError;

/// Nesting limit, Minecraft's own (`NbtAccounter` depth 512).
pub const MAX_DEPTH: usize = 512;

/// Parses a root compound (named root, as in region chunks).
///
/// A bounded walker checks the structure first (depth ≤ [`MAX_DEPTH`], list and array
/// lengths within the input, valid tag ids), so no input can exhaust the stack or memory
/// inside the parser.
pub fn parse(bytes: &[u8]) -> Result<HashMap<String, Value>, ChunkError> {
    check(bytes).map_err(|m| ChunkError::Nbt(m.into()))?;
    match fastnbt::from_bytes::<Value>(bytes) {
        Ok(Value::Compound(m)) => Ok(m),
        Ok(_) => Err(ChunkError::Nbt("root tag is not a compound".into())),
        Err(e) => Err(ChunkError::Nbt(e.to_string())),
    }
}

/// Validates the structure of a named root compound without allocating.
fn check(b: &[u8]) -> Result<(), &'static str> {
    let mut at = 0usize;
    let id = *b.first().ok_or("empty input")?;
    if id != 10 {
        return Err("root tag is not a compound");
    }
    at += 1;
    skip_string(b, &mut at)?;
    walk(b, &mut at, 10, 0)
}

fn take<'a>(b: &'a [u8], at: &mut usize, n: usize) -> Result<&'a [u8], &'static str> {
    let end = at.checked_add(n).ok_or("length overflow")?;
    let s = b.get(*at..end).ok_or("unexpected end of NBT")?;
    *at = end;
    Ok(s)
}

fn skip_string(b: &[u8], at: &mut usize) -> Result<(), &'static str> {
    let l = take(b, at, 2)?;
    let n = u16::from_be_bytes([l[0], l[1]]) as usize;
    take(b, at, n).map(|_| ())
}

fn len_i32(b: &[u8], at: &mut usize) -> Result<usize, &'static str> {
    let l = take(b, at, 4)?;
    let n = i32::from_be_bytes([l[0], l[1], l[2], l[3]]);
    usize::try_from(n).map_err(|_| "negative length")
}

fn walk(b: &[u8], at: &mut usize, id: u8, depth: usize) -> Result<(), &'static str> {
    if depth > MAX_DEPTH {
        return Err("NBT nested deeper than 512");
    }
    match id {
        1 => take(b, at, 1).map(|_| ()),
        2 => take(b, at, 2).map(|_| ()),
        3 | 5 => take(b, at, 4).map(|_| ()),
        4 | 6 => take(b, at, 8).map(|_| ()),
        7 => {
            let n = len_i32(b, at)?;
            take(b, at, n).map(|_| ())
        }
        11 => {
            let n = len_i32(b, at)?;
            take(b, at, n.checked_mul(4).ok_or("length overflow")?).map(|_| ())
        }
        12 => {
            let n = len_i32(b, at)?;
            take(b, at, n.checked_mul(8).ok_or("length overflow")?).map(|_| ())
        }
        8 => skip_string(b, at),
        9 => {
            let elem = take(b, at, 1)?[0];
            let n = len_i32(b, at)?;
            if elem == 0 && n != 0 {
                return Err("list of TAG_End with elements");
            }
            if n > b.len() - *at {
                return Err("list longer than the input");
            }
            for _ in 0..n {
                walk(b, at, elem, depth + 1)?;
            }
            Ok(())
        }
        10 => loop {
            let t = take(b, at, 1)?[0];
            if t == 0 {
                return Ok(());
            }
            skip_string(b, at)?;
            walk(b, at, t, depth + 1)?;
        },
        _ => Err("invalid tag id"),
    }
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
fn put_str(out: &mut Vec<u8>, s: &str) {
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

fn put_compound(out: &mut Vec<u8>, m: &HashMap<String, Value>) {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    for k in keys {
        let v = &m[k];
        out.push(tag_id(v));
        put_str(out, k);
        put_payload(out, v);
    }
    out.push(0);
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
