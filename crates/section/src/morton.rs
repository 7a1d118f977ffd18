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

/// `GATHER3[v]`: for 12 interleaved bits `x3 y3 z3 x2 y2 z2 x1 y1 z1 x0 y0 z0`, the nibbles
/// `x << 8 | y << 4 | z`.
const GATHER3: [u16; 4096] = {
    let mut t = [0u16; 4096];
    let mut v = 0;
    while v < 4096 {
        let (mut x, mut y, mut z) = (0u16, 0u16, 0u16);
        let mut i = 0;
        while i < 4 {
            x |= ((v >> (3 * i + 2)) & 1) << i;
            y |= ((v >> (3 * i + 1)) & 1) << i;
            z |= ((v >> (3 * i)) & 1) << i;
            i += 1;
        }
        t[v as usize] = (x << 8) | (y << 4) | z;
        v += 1;
    }
    t
};

/// `GATHER2[v]`: for 8 interleaved bits `x3 z3 x2 z2 x1 z1 x0 z0`, the nibbles `x << 4 | z`.
const GATHER2: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut v: usize = 0;
    while v < 256 {
        let (mut x, mut z) = (0u8, 0u8);
        let mut i = 0;
        while i < 4 {
            x |= (((v >> (2 * i + 1)) & 1) as u8) << i;
            z |= (((v >> (2 * i)) & 1) as u8) << i;
            i += 1;
        }
        t[v] = (x << 4) | z;
        v += 1;
    }
    t
};

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
    // Each 3-byte group holds one byte of x, y and z: two 12-bit table lookups.
    for g in key.chunks_exact(3) {
        let v = ((g[0] as usize) << 16) | ((g[1] as usize) << 8) | g[2] as usize;
        let hi = GATHER3[v >> 12] as u64;
        let lo = GATHER3[v & 0xFFF] as u64;
        x = (x << 8) | ((hi >> 8) << 4) | (lo >> 8);
        y = (y << 8) | (((hi >> 4) & 15) << 4) | ((lo >> 4) & 15);
        z = (z << 8) | ((hi & 15) << 4) | (lo & 15);
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
    for b in key.to_be_bytes() {
        let n = GATHER2[b as usize] as u64;
        x = (x << 4) | (n >> 4);
        z = (z << 4) | (n & 15);
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
