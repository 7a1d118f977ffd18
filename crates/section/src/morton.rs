//! Morton (Z-order) keys whose big-endian bytes sort in Morton order.
//!
//! The layout is specified once in `docs/format/keys.md`: each coordinate is an `i64` with its
//! sign bit flipped (so unsigned order equals signed order), and the bits are interleaved from
//! the most significant down, x before y before z (3D) or x before z (2D). The result is
//! written big-endian, so comparing keys as byte strings compares them in Morton order, and
//! all positions sharing their high bits (one cluster at any level) form one contiguous range.
//!
//! ```
//! use terrane_section::morton;
//!
//! let k = morton::encode3(-1, 0, 1);
//! assert_eq!(morton::decode3(&k), (-1, 0, 1));
//! // Byte order is Morton order, negatives first.
//! assert!(morton::encode3(-1, 0, 0) < morton::encode3(0, 0, 0));
//! ```

const SIGN: u64 = 1 << 63;

/// `SPREAD3[b]`: the 8 bits of `b` moved to bits 0, 3, 6, ..., 21.
const SPREAD3: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut b = 0;
    while b < 256 {
        let mut v = 0u32;
        let mut i = 0;
        while i < 8 {
            v |= ((b as u32 >> i) & 1) << (3 * i);
            i += 1;
        }
        t[b] = v;
        b += 1;
    }
    t
};

/// `SPREAD2[b]`: the 8 bits of `b` moved to bits 0, 2, 4, ..., 14.
const SPREAD2: [u16; 256] = {
    let mut t = [0u16; 256];
    let mut b = 0;
    while b < 256 {
        let mut v = 0u16;
        let mut i = 0;
        while i < 8 {
            v |= ((b as u16 >> i) & 1) << (2 * i);
            i += 1;
        }
        t[b] = v;
        b += 1;
    }
    t
};

/// Gathers bits 0, 3, ..., 21 of `v` into a byte.
#[inline]
fn compact3(v: u32) -> u8 {
    let mut v = v & 0x0924_9249;
    v = (v ^ (v >> 2)) & 0x030C_30C3;
    v = (v ^ (v >> 4)) & 0x0300_F00F;
    v = (v ^ (v >> 8)) & 0xFF00_00FF;
    v = (v ^ (v >> 16)) & 0x0000_03FF;
    v as u8
}

/// Gathers bits 0, 2, ..., 14 of `v` into a byte.
#[inline]
fn compact2(v: u16) -> u8 {
    let mut v = v & 0x5555;
    v = (v | (v >> 1)) & 0x3333;
    v = (v | (v >> 2)) & 0x0F0F;
    v = (v | (v >> 4)) & 0x00FF;
    v as u8
}

/// Encodes a 3D position as a 24-byte big-endian Morton key.
#[inline]
pub fn encode3(x: i64, y: i64, z: i64) -> [u8; 24] {
    let (x, y, z) = (x as u64 ^ SIGN, y as u64 ^ SIGN, z as u64 ^ SIGN);
    let mut out = [0u8; 24];
    // Byte k (from the most significant) of each coordinate fills output bytes 3k..3k+3.
    for k in 0..8 {
        let s = 56 - 8 * k;
        let v = (SPREAD3[(x >> s) as usize & 0xFF] << 2)
            | (SPREAD3[(y >> s) as usize & 0xFF] << 1)
            | SPREAD3[(z >> s) as usize & 0xFF];
        out[3 * k] = (v >> 16) as u8;
        out[3 * k + 1] = (v >> 8) as u8;
        out[3 * k + 2] = v as u8;
    }
    out
}

/// Decodes a key made by [`encode3`]. Every 24-byte string is a valid key.
#[inline]
pub fn decode3(key: &[u8; 24]) -> (i64, i64, i64) {
    let (mut x, mut y, mut z) = (0u64, 0u64, 0u64);
    for k in 0..8 {
        let v =
            ((key[3 * k] as u32) << 16) | ((key[3 * k + 1] as u32) << 8) | key[3 * k + 2] as u32;
        let s = 56 - 8 * k;
        x |= (compact3(v >> 2) as u64) << s;
        y |= (compact3(v >> 1) as u64) << s;
        z |= (compact3(v) as u64) << s;
    }
    ((x ^ SIGN) as i64, (y ^ SIGN) as i64, (z ^ SIGN) as i64)
}

/// Encodes a 2D position (x, z) as a 16-byte big-endian Morton key.
#[inline]
pub fn encode2(x: i64, z: i64) -> [u8; 16] {
    encode2_u128(x, z).to_be_bytes()
}

/// The 2D Morton key as a number (its big-endian bytes are [`encode2`]).
#[inline]
pub fn encode2_u128(x: i64, z: i64) -> u128 {
    let (x, z) = (x as u64 ^ SIGN, z as u64 ^ SIGN);
    let mut out = 0u128;
    for k in 0..8 {
        let s = 56 - 8 * k;
        let v = (SPREAD2[(x >> s) as usize & 0xFF] << 1) | SPREAD2[(z >> s) as usize & 0xFF];
        out = (out << 16) | v as u128;
    }
    out
}

/// Decodes a key made by [`encode2`]. Every 16-byte string is a valid key.
#[inline]
pub fn decode2(key: &[u8; 16]) -> (i64, i64) {
    decode2_u128(u128::from_be_bytes(*key))
}

/// Decodes a key made by [`encode2_u128`].
#[inline]
pub fn decode2_u128(key: u128) -> (i64, i64) {
    let (mut x, mut z) = (0u64, 0u64);
    for k in 0..8 {
        let s = 56 - 8 * k;
        let v = (key >> (112 - 16 * k)) as u16;
        x |= (compact2(v >> 1) as u64) << s;
        z |= (compact2(v) as u64) << s;
    }
    ((x ^ SIGN) as i64, (z ^ SIGN) as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-by-bit reference: output bit (from the top) 3i, 3i+1, 3i+2 = x, y, z bit 63-i.
    fn naive3(x: i64, y: i64, z: i64) -> [u8; 24] {
        let c = [x as u64 ^ SIGN, y as u64 ^ SIGN, z as u64 ^ SIGN];
        let mut out = [0u8; 24];
        for i in 0..64 {
            for (j, v) in c.iter().enumerate() {
                let bit = (v >> (63 - i)) & 1;
                let pos = 3 * i + j; // from the most significant output bit
                out[pos / 8] |= (bit as u8) << (7 - pos % 8);
            }
        }
        out
    }

    #[test]
    fn matches_bitwise_reference() {
        for &(x, y, z) in &[
            (0, 0, 0),
            (-1, -1, -1),
            (1, 2, 3),
            (i64::MIN, i64::MAX, 0),
            (0x1234_5678_9ABC_DEF0, -0x0FED_CBA9_8765_4321, 77),
        ] {
            assert_eq!(encode3(x, y, z), naive3(x, y, z), "{x} {y} {z}");
        }
    }

    #[test]
    fn zero_is_the_middle() {
        // Sign flip: 0 encodes with only the top bit of x, y and z set.
        let k = encode3(0, 0, 0);
        assert_eq!(k[0], 0b1110_0000);
        assert!(k[1..].iter().all(|&b| b == 0));
        assert_eq!(encode2(0, 0)[0], 0b1100_0000);
    }
}
