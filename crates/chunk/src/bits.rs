//! Tight LSB-first bit packing shared by the view, the owned chunk and the encoder.
//!
//! Stream bit `k` is bit `k % 8` of byte `k / 8`, which is also bit `k % 64` of the
//! little-endian `u64` word `k / 64`: the owned chunk keeps layer 0 as such words and writes
//! them out unchanged.
use crate::BlockId;

/// Bits per local id for a palette of `n` entries: `ceil(log2(n))`, 0 for `n <= 1`.
#[inline]
pub(crate) const fn bits_for(n: u64) -> u32 {
    if n <= 1 { 0 } else { 64 - (n - 1).leading_zeros() }
}

#[inline]
const fn mask(b: u32) -> u64 {
    if b >= 64 { u64::MAX } else { (1u64 << b) - 1 }
}

/// Reads `b <= 56` bits at stream bit `bit` of `bytes`; bits beyond the slice read as 0
/// (callers check bounds beforehand, this only guarantees no out-of-bounds access).
#[inline]
pub(crate) fn read_bits(bytes: &[u8], bit: u64, b: u32) -> u64 {
    if b == 0 {
        return 0;
    }
    let byte = (bit / 8) as usize;
    let shift = (bit % 8) as u32;
    let raw = match bytes.get(byte..byte + 8) {
        Some(s) => u64::from_le_bytes(s.try_into().unwrap_or([0; 8])),
        None => {
            let mut buf = [0u8; 8];
            if let Some(rest) = bytes.get(byte..) {
                buf[..rest.len()].copy_from_slice(rest);
            }
            u64::from_le_bytes(buf)
        }
    };
    (raw >> shift) & mask(b)
}

/// Reads entry `i` of `b`-bit entries packed into words (entries may straddle words).
#[inline]
pub(crate) fn get_packed(words: &[u64], i: usize, b: u32) -> u64 {
    if b == 0 {
        return 0;
    }
    let bit = i * b as usize;
    let w = bit >> 6;
    let o = (bit & 63) as u32;
    let mut v = words[w] >> o;
    if o + b > 64 {
        v |= words[w + 1] << (64 - o);
    }
    v & mask(b)
}

/// Writes entry `i` (`v < 2^b`) of `b`-bit entries packed into words.
#[inline]
pub(crate) fn set_packed(words: &mut [u64], i: usize, b: u32, v: u64) {
    if b == 0 {
        return;
    }
    let m = mask(b);
    let bit = i * b as usize;
    let w = bit >> 6;
    let o = (bit & 63) as u32;
    words[w] = (words[w] & !(m << o)) | (v << o);
    if o + b > 64 {
        let hi = 64 - o;
        words[w + 1] = (words[w + 1] & !(m >> hi)) | (v >> hi);
    }
}

/// Calls `f(i, value)` for the first `count` `b`-bit entries of a stream of words.
#[inline]
pub(crate) fn for_each_packed(
    mut words: impl Iterator<Item = u64>,
    b: u32,
    count: usize,
    mut f: impl FnMut(usize, u64),
) {
    if b == 0 {
        for i in 0..count {
            f(i, 0);
        }
        return;
    }
    let m = mask(b);
    let mut cur = 0u64;
    let mut avail = 0u32;
    for i in 0..count {
        let v;
        if avail >= b {
            v = cur & m;
            cur = if b == 64 { 0 } else { cur >> b };
            avail -= b;
        } else {
            let next = words.next().unwrap_or(0);
            v = (cur | (next << avail)) & m;
            let used = b - avail;
            cur = if used == 64 { 0 } else { next >> used };
            avail = 64 - used;
        }
        f(i, v);
    }
}

/// Calls `f(i, value)` for the 4096 `b`-bit entries packed LSB-first in `bytes` (at least
/// `512 * b` bytes), in order: the bulk path of layer 0. Widths up to 16 bits (every palette
/// a layer 0 can need) take a loop specialised per width, eight entries (`b` bytes) at a
/// time, which the compiler unrolls; wider ones the generic stream.
#[inline]
pub(crate) fn for_each_cell(bytes: &[u8], b: u32, f: impl FnMut(usize, u32)) {
    match b {
        0 => {
            let mut f = f;
            for i in 0..4096 {
                f(i, 0);
            }
        }
        1 => cells::<1>(bytes, f),
        2 => cells::<2>(bytes, f),
        3 => cells::<3>(bytes, f),
        4 => cells::<4>(bytes, f),
        5 => cells::<5>(bytes, f),
        6 => cells::<6>(bytes, f),
        7 => cells::<7>(bytes, f),
        8 => cells::<8>(bytes, f),
        9 => cells::<9>(bytes, f),
        10 => cells::<10>(bytes, f),
        11 => cells::<11>(bytes, f),
        12 => cells::<12>(bytes, f),
        13 => cells::<13>(bytes, f),
        14 => cells::<14>(bytes, f),
        15 => cells::<15>(bytes, f),
        16 => cells::<16>(bytes, f),
        _ => {
            let mut f = f;
            let mut padded = bytes.to_vec();
            padded.resize(bytes.len().div_ceil(8) * 8, 0);
            for_each_packed(le_words(&padded), b, 4096, |i, v| f(i, v as u32));
        }
    }
}

/// [`for_each_cell`] at a width known at compile time: 512 groups of eight entries, each
/// group `B` bytes read as one little-endian integer.
#[inline(always)]
fn cells<const B: usize>(bytes: &[u8], mut f: impl FnMut(usize, u32)) {
    let m = (1u128 << B) - 1;
    for (g, group) in bytes.chunks_exact(B).take(512).enumerate() {
        let mut raw = [0u8; 16];
        raw[..B].copy_from_slice(group);
        let v = u128::from_le_bytes(raw);
        for j in 0..8 {
            f(g * 8 + j, ((v >> (j * B)) & m) as u32);
        }
    }
}

/// The bulk read of a small palette (at most 64 entries, so at most 6 bits): unpacks the
/// 4096 `b`-bit local ids of `bytes`, writes `ids[local]` to `out`, and returns the set of
/// local ids seen (bit `l` for local `l`), from which the caller checks both rules: every id
/// below the palette's length, every entry used. One function with its accumulator in a
/// register: through a closure it lived in memory, a store-to-load chain per cell (measured
/// 2× slower). From 1 to 4 bits on a CPU with AVX2, `bits_avx2.rs` does it instead.
pub(crate) fn map_small_palette(
    bytes: &[u8],
    b: u32,
    ids: &[u32; 64],
    out: &mut [BlockId; 4096],
) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if let Some(seen) = crate::bits_avx2::map_small_palette(bytes, b, ids, out) {
        return seen;
    }
    map_small_portable(bytes, b, ids, out)
}

/// [`map_small_palette`] without vector instructions (every CPU; the AVX2 path is compared
/// with it).
pub(crate) fn map_small_portable(
    bytes: &[u8],
    b: u32,
    ids: &[u32; 64],
    out: &mut [BlockId; 4096],
) -> u64 {
    match b {
        0 => {
            out.fill(BlockId(ids[0]));
            1
        }
        1 => map_pairs::<1>(bytes, ids, out),
        2 => map_pairs::<2>(bytes, ids, out),
        3 => map_pairs::<3>(bytes, ids, out),
        4 => map_pairs::<4>(bytes, ids, out),
        5 => map_single::<5>(bytes, ids, out),
        _ => map_single::<6>(bytes, ids, out),
    }
}

/// Widths up to 4: two cells at a time through a table of the `2^(2B)` id pairs (at most
/// 256 entries, built per call), so each pair costs one load for both ids and one for the
/// ids it marks seen.
#[inline(always)]
fn map_pairs<const B: usize>(bytes: &[u8], ids: &[u32; 64], out: &mut [BlockId; 4096]) -> u64 {
    let pairs = 1usize << (2 * B);
    let m = (1usize << B) - 1;
    let mut pair = [(0u32, 0u32); 256];
    let mut marks = [0u64; 256];
    for p in 0..pairs {
        let (lo, hi) = (p & m, p >> B);
        pair[p] = (ids[lo], ids[hi]);
        marks[p] = 1 << lo | 1 << hi;
    }
    let mut seen = 0u64;
    for (group, o) in bytes.chunks_exact(B).zip(out.chunks_exact_mut(8)) {
        let mut raw = [0u8; 8];
        raw[..B].copy_from_slice(group);
        let v = u64::from_le_bytes(raw);
        for (k, two) in o.chunks_exact_mut(2).enumerate() {
            let p = (v >> (2 * B * k)) as usize & (pairs - 1);
            seen |= marks[p];
            two[0] = BlockId(pair[p].0);
            two[1] = BlockId(pair[p].1);
        }
    }
    seen
}

/// Widths 5 and 6: one cell at a time.
#[inline(always)]
fn map_single<const B: usize>(bytes: &[u8], ids: &[u32; 64], out: &mut [BlockId; 4096]) -> u64 {
    let m = (1u64 << B) - 1;
    let mut seen = 0u64;
    for (group, o) in bytes.chunks_exact(B).zip(out.chunks_exact_mut(8)) {
        let mut raw = [0u8; 8];
        raw[..B].copy_from_slice(group);
        let v = u64::from_le_bytes(raw);
        for (j, slot) in o.iter_mut().enumerate() {
            let l = ((v >> (j * B)) & m) as usize;
            seen |= 1 << l;
            *slot = BlockId(ids[l]);
        }
    }
    seen
}

/// The bulk read of a larger palette (loops specialised for 7 to 12 bits, the widths of 65
/// to 4096 entries): unpacks the 4096 local ids, writes `ids[local]` to `out` and marks
/// `seen[local]`. `ids` and `seen` hold `2^b` entries (ids past the palette are zero), so no
/// id needs a range check here: the caller finds one past the palette among the marks.
pub(crate) fn map_large_palette(
    bytes: &[u8],
    b: u32,
    ids: &[u32],
    seen: &mut [bool],
    out: &mut [BlockId; 4096],
) {
    match b {
        7 => map_marked::<7>(bytes, ids, seen, out),
        // One byte a cell: the bytes are the local ids.
        // Two cells are written as one 8-byte store: the loop is bound by stores (a mark and
        // an id per cell), so this is a quarter fewer.
        8 => {
            let (ids, seen) = (&ids[..256], &mut seen[..256]);
            let out = zerocopy::IntoBytes::as_mut_bytes(&mut out[..]);
            for (pair, slot) in bytes.chunks_exact(2).zip(out.chunks_exact_mut(8)) {
                put_two(slot, usize::from(pair[0]), usize::from(pair[1]), ids, seen);
            }
        }
        9 => map_marked::<9>(bytes, ids, seen, out),
        10 => map_marked::<10>(bytes, ids, seen, out),
        11 => map_marked::<11>(bytes, ids, seen, out),
        12 => map_marked::<12>(bytes, ids, seen, out),
        _ => for_each_cell(bytes, b, |i, l| {
            seen[l as usize] = true;
            out[i] = BlockId(ids[l as usize]);
        }),
    }
}

/// Marks local ids `a` and `b` used and writes their blocks, two cells, into `slot` (the 8
/// bytes of the pair in the output) with one store.
#[inline(always)]
fn put_two(slot: &mut [u8], a: usize, b: usize, ids: &[u32], seen: &mut [bool]) {
    seen[a] = true;
    seen[b] = true;
    let (a, b) = (u64::from(ids[a]), u64::from(ids[b]));
    let two = if cfg!(target_endian = "little") { a | b << 32 } else { b | a << 32 };
    slot.copy_from_slice(&two.to_ne_bytes());
}

#[inline(always)]
fn map_marked<const B: usize>(
    bytes: &[u8],
    ids: &[u32],
    seen: &mut [bool],
    out: &mut [BlockId; 4096],
) {
    let (ids, seen) = (&ids[..1 << B], &mut seen[..1 << B]);
    let m = (1u64 << B) - 1;
    // Cells are written two at a time, as one 8-byte store (see the 8-bit case).
    let mut put = |v: u64, o: &mut [u8]| {
        for (j, slot) in o.chunks_exact_mut(8).enumerate() {
            let a = ((v >> (2 * j * B)) & m) as usize;
            let b = ((v >> ((2 * j + 1) * B)) & m) as usize;
            put_two(slot, a, b, ids, seen);
        }
    };
    let out = zerocopy::IntoBytes::as_mut_bytes(&mut out[..]);
    for (group, o) in bytes.chunks_exact(B).zip(out.chunks_exact_mut(32)) {
        let mut raw = [0u8; 8];
        if B <= 8 {
            raw[..B].copy_from_slice(&group[..B]);
            put(u64::from_le_bytes(raw), o);
        } else {
            // Four entries from the first 8 bytes, four from the last 8 (bits 4B..8B of
            // the group start 64 - 4B bits into them).
            raw.copy_from_slice(&group[..8]);
            let (first, last) = o.split_at_mut(16);
            put(u64::from_le_bytes(raw), first);
            raw.copy_from_slice(&group[B - 8..]);
            put(u64::from_le_bytes(raw) >> (64 - 4 * B), last);
        }
    }
}

/// The little-endian words of a byte slice whose length is a multiple of 8.
#[inline]
pub(crate) fn le_words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes.chunks_exact(8).map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
}

/// Appends values of up to 56 bits to a byte stream, LSB first.
pub(crate) struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    n: u32,
}

impl<'a> BitWriter<'a> {
    pub(crate) fn new(out: &'a mut Vec<u8>) -> Self {
        BitWriter { out, acc: 0, n: 0 }
    }

    #[inline]
    pub(crate) fn push(&mut self, v: u64, b: u32) {
        if b == 0 {
            return;
        }
        self.acc |= v << self.n;
        if self.n + b >= 64 {
            self.out.extend_from_slice(&self.acc.to_le_bytes());
            let used = 64 - self.n;
            self.acc = if used >= 64 { 0 } else { v >> used };
            self.n = self.n + b - 64;
        } else {
            self.n += b;
        }
    }

    /// Flushes the partial last byte (zero-filled).
    pub(crate) fn finish(self) {
        let bytes = self.n.div_ceil(8) as usize;
        self.out.extend_from_slice(&self.acc.to_le_bytes()[..bytes]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_for_matches_ceil_log2() {
        assert_eq!(bits_for(1), 0);
        assert_eq!(bits_for(2), 1);
        assert_eq!(bits_for(3), 2);
        assert_eq!(bits_for(16), 4);
        assert_eq!(bits_for(17), 5);
        assert_eq!(bits_for(4096), 12);
        assert_eq!(bits_for(4097), 13);
    }

    #[test]
    fn writer_reader_and_words_agree() {
        for b in [1u32, 3, 5, 7, 12, 13, 17, 31, 32, 44] {
            let vals: Vec<u64> = (0..300u64).map(|i| (i * 2_654_435_761) & mask(b)).collect();
            let mut out = Vec::new();
            let mut w = BitWriter::new(&mut out);
            for &v in &vals {
                w.push(v, b);
            }
            w.finish();
            assert_eq!(out.len(), (300 * b as usize).div_ceil(8));
            for (i, &v) in vals.iter().enumerate() {
                assert_eq!(read_bits(&out, i as u64 * u64::from(b), b), v, "b={b} i={i}");
            }
            let mut padded = out.clone();
            padded.resize(out.len().div_ceil(8) * 8 + 8, 0);
            let words: Vec<u64> = le_words(&padded).collect();
            let mut got = Vec::new();
            for_each_packed(words.iter().copied(), b, 300, |_, v| got.push(v));
            assert_eq!(got, vals);
            let mut words2 = vec![0u64; words.len()];
            for (i, &v) in vals.iter().enumerate() {
                set_packed(&mut words2, i, b, v);
            }
            for (i, &v) in vals.iter().enumerate() {
                assert_eq!(get_packed(&words2, i, b), v);
            }
            assert_eq!(words2, words);
        }
    }

    #[test]
    fn cells_match_the_generic_stream_at_every_width() {
        for b in 0..=20u32 {
            let vals: Vec<u64> = (0..4096u64).map(|i| (i * 2_654_435_761 + 7) & mask(b)).collect();
            let mut out = Vec::new();
            let mut w = BitWriter::new(&mut out);
            for &v in &vals {
                w.push(v, b);
            }
            w.finish();
            let mut got = vec![u64::MAX; 4096];
            let mut order = Vec::new();
            for_each_cell(&out, b, |i, v| {
                order.push(i);
                got[i] = u64::from(v);
            });
            assert_eq!(got, vals, "b={b}");
            assert!(order.iter().enumerate().all(|(k, &i)| k == i), "b={b}: out of order");
        }
    }
}
