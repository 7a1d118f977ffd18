//! Java's modified UTF-8, the encoding of NBT strings.

use crate::Error;

/// Decodes an NBT string: plain UTF-8 when valid (every ASCII string, and legacy writers),
/// otherwise Java modified UTF-8 (`C0 80` for NUL, supplementary characters as CESU-8
/// surrogate pairs; a 4-byte UTF-8 sequence inside is accepted as legacy writers mix them).
pub fn decode_mutf8(b: &[u8]) -> Result<String, Error> {
    if let Ok(s) = std::str::from_utf8(b) {
        return Ok(s.to_owned());
    }
    let mut units: Vec<u16> = Vec::with_capacity(b.len());
    let mut i = 0;
    let cont = |j: usize| -> Result<u16, Error> {
        match b.get(j) {
            Some(&x) if x & 0xC0 == 0x80 => Ok((x & 0x3F) as u16),
            _ => Err(Error::BadString),
        }
    };
    while i < b.len() {
        let c = b[i];
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
            let cp = (((c & 0x07) as u32) << 18)
                | ((cont(i + 1)? as u32) << 12)
                | ((cont(i + 2)? as u32) << 6)
                | cont(i + 3)? as u32;
            let ch = char::from_u32(cp).ok_or(Error::BadString)?;
            let mut tmp = [0u16; 2];
            units.extend_from_slice(ch.encode_utf16(&mut tmp));
            i += 4;
        } else {
            return Err(Error::BadString);
        }
    }
    String::from_utf16(&units).map_err(|_| Error::BadString)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nul_and_supplementary_round_trip() {
        let s = "a\0b😈ц日";
        let mut out = Vec::new();
        encode_mutf8(s, &mut out);
        assert!(std::str::from_utf8(&out).is_err(), "a CESU-8 pair is not UTF-8");
        assert_eq!(&out[1..3], &[0xC0, 0x80]);
        let pair = [0xED, 0xA0, 0xBD, 0xED, 0xB8, 0x88];
        assert!(out.windows(6).any(|w| w == pair), "the emoji as a surrogate pair");
        assert_eq!(decode_mutf8(&out).unwrap(), s);
        // Legacy plain UTF-8 (a 4-byte sequence) is accepted too.
        assert_eq!(decode_mutf8(s.as_bytes()).unwrap(), s);
        // Plain ASCII is written as it is.
        let mut out = Vec::new();
        encode_mutf8("minecraft:stone", &mut out);
        assert_eq!(out, b"minecraft:stone");
    }

    #[test]
    fn invalid_sequences_are_errors() {
        for bad in [&[0xFF][..], &[0xC0], &[0xE0, 0x80], &[0xC0, 0x41], &[0xED, 0xA0, 0xBD]] {
            assert_eq!(decode_mutf8(bad), Err(Error::BadString), "{bad:x?}");
        }
    }
}
