//! The bulk read of palettes of up to 16 entries (1 to 4 bits per cell) with AVX2, chosen at
//! run time: eight cells per step, their ids looked up in one permutation of the palette held
//! in a register, instead of one table load per pair of cells. The one piece of unsafe code
//! in terrane: calling the AVX2 function after detecting AVX2 (its memory accesses are safe
//! slice operations; `zerocopy` moves bytes in and out of the vector registers).
//! Measured gain and the limit row: docs/BENCHMARKS.md (terrane-chunk).

use std::arch::x86_64::{
    __m128i, __m256i, _mm256_and_si256, _mm256_blendv_ps, _mm256_broadcastsi128_si256,
    _mm256_castps_si256, _mm256_castsi256_ps, _mm256_or_si256, _mm256_permutevar8x32_epi32,
    _mm256_set1_epi32, _mm256_setr_epi32, _mm256_setzero_si256, _mm256_shuffle_epi8,
    _mm256_slli_epi32, _mm256_sllv_epi32, _mm256_srlv_epi32,
};

use crate::BlockId;

/// [`map_small_palette`](crate::bits::map_small_palette) for `b` in 1..=4 on a CPU with AVX2,
/// else `None` (the caller then takes the portable path, which gives the same result).
#[allow(unsafe_code)]
pub(crate) fn map_small_palette(
    bytes: &[u8],
    b: u32,
    ids: &[u32; 64],
    out: &mut [BlockId; 4096],
) -> Option<u64> {
    if !std::arch::is_x86_feature_detected!("avx2") {
        return None;
    }
    // SAFETY: `map::<B>` requires nothing but the AVX2 instructions it is compiled for, and
    // the CPU has them (detected above).
    unsafe {
        match b {
            1 => Some(map::<1>(bytes, ids, out)),
            2 => Some(map::<2>(bytes, ids, out)),
            3 => Some(map::<3>(bytes, ids, out)),
            4 => Some(map::<4>(bytes, ids, out)),
            _ => None,
        }
    }
}

/// Unpacks the 4096 `B`-bit local ids of `bytes` (at least `512 × B` long), writes
/// `ids[local]` to `out`, and returns the set of local ids seen (bit `l` for local `l`).
/// Cells go in blocks of 32 (four groups of eight, `4 × B` bytes): one 16-byte load per
/// block; per group, a byte shuffle gives each of the eight 32-bit lanes the byte or two
/// holding its bits, a variable shift and a mask give the local id, and a permutation of the
/// palette's first eight (and, at 4 bits, next eight) ids gives the block id.
#[target_feature(enable = "avx2")]
fn map<const B: usize>(bytes: &[u8], ids: &[u32; 64], out: &mut [BlockId; 4096]) -> u64 {
    let first8: [u32; 8] = std::array::from_fn(|i| ids[i]);
    let next8: [u32; 8] = std::array::from_fn(|i| ids[8 + i]);
    let (pal_lo, pal_hi): (__m256i, __m256i) =
        (zerocopy::transmute!(first8), zerocopy::transmute!(next8));
    let ctrl: [__m256i; 4] = const { shuffle_control(B) }.map(|c| zerocopy::transmute!(c));
    let s = |j: i32| (j * B as i32) % 8;
    let shifts = _mm256_setr_epi32(s(0), s(1), s(2), s(3), s(4), s(5), s(6), s(7));
    let mask = _mm256_set1_epi32((1 << B) - 1);
    let one = _mm256_set1_epi32(1);
    let mut seen = _mm256_setzero_si256();
    for (t, block) in out.chunks_exact_mut(32).enumerate() {
        // Sixteen bytes from the block's first (its 4 × B are used); the last blocks of a
        // width below 4 have fewer left, padded with zeros.
        let src = &bytes[4 * B * t..];
        let raw: [u8; 16] = match src.get(..16) {
            Some(s) => s.try_into().unwrap_or_default(),
            None => {
                let mut raw = [0u8; 16];
                raw[..src.len()].copy_from_slice(src);
                raw
            }
        };
        let raw: __m128i = zerocopy::transmute!(raw);
        let v = _mm256_broadcastsi128_si256(raw);
        for (k, group) in block.chunks_exact_mut(8).enumerate() {
            let picked = _mm256_shuffle_epi8(v, ctrl[k]);
            let local = _mm256_and_si256(_mm256_srlv_epi32(picked, shifts), mask);
            // The permutation reads the low three bits of each lane; at 4 bits the fourth
            // (moved to the sign bit) chooses between the first and the next eight ids.
            let mut id = _mm256_permutevar8x32_epi32(pal_lo, local);
            if B == 4 {
                let hi = _mm256_permutevar8x32_epi32(pal_hi, local);
                let choose_hi = _mm256_castsi256_ps(_mm256_slli_epi32::<28>(local));
                id = _mm256_castps_si256(_mm256_blendv_ps(
                    _mm256_castsi256_ps(id),
                    _mm256_castsi256_ps(hi),
                    choose_hi,
                ));
            }
            seen = _mm256_or_si256(seen, _mm256_sllv_epi32(one, local));
            let id: [u32; 8] = zerocopy::transmute!(id);
            for (cell, id) in group.iter_mut().zip(id) {
                cell.0 = id;
            }
        }
    }
    let seen: [u32; 8] = zerocopy::transmute!(seen);
    u64::from(seen.iter().fold(0, |a, &s| a | s))
}

/// The byte shuffle of each group `k` of a block at width `b` (computed at compile time): lane
/// `j` gets the bytes from the one holding bit `j × b` of the group to the one holding its last
/// bit (at most two; the shuffle zeroes the lane's other bytes).
const fn shuffle_control(b: usize) -> [[u8; 32]; 4] {
    let mut ctrl = [[0x80u8; 32]; 4];
    let mut k = 0;
    while k < 4 {
        let mut j = 0;
        while j < 8 {
            let (first, last) = (k * b + j * b / 8, k * b + (j * b + b - 1) / 8);
            let mut m = 0;
            while m <= last - first {
                ctrl[k][4 * j + m] = (first + m) as u8;
                m += 1;
            }
            j += 1;
        }
        k += 1;
    }
    ctrl
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use crate::BlockId;

    proptest! {
        /// Cell for cell and bit for bit what the portable path gives, at every width, on any
        /// bytes (local ids past the palette included) and any ids.
        #[test]
        fn the_avx2_path_is_the_portable_path(
            b in 1u32..=4,
            bytes in prop::collection::vec(any::<u8>(), 2048),
            ids in prop::array::uniform32(any::<u32>()),
        ) {
            prop_assume!(std::arch::is_x86_feature_detected!("avx2"));
            let mut all = [0u32; 64];
            all[..32].copy_from_slice(&ids);
            let bytes = &bytes[..512 * b as usize];
            let (mut want, mut got) = ([BlockId(0); 4096], [BlockId(1); 4096]);
            let seen_want = crate::bits::map_small_portable(bytes, b, &all, &mut want);
            let seen_got = super::map_small_palette(bytes, b, &all, &mut got);
            prop_assert_eq!(seen_got, Some(seen_want));
            prop_assert!(got == want);
        }
    }
}
