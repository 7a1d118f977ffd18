//! Seeded operation logs for the replay tool (`docs/format/regionizer-replay.md`): the same
//! seed gives the same log, byte for byte, on every machine, so a benchmark or a comparison
//! with another implementation needs no stored file.

use std::fmt::Write as _;

/// The mix of a generated log, in percent of operations. The rest of 100 after
/// `add + remove` is split evenly between `tick` and `release`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LogMix {
    /// Chunk loads at uniform positions within `±span` chunks on each axis.
    pub add: u32,
    /// Chunk unloads: of a loaded chunk, or (one in eight) of a position that may be absent.
    pub remove: u32,
}

impl Default for LogMix {
    /// 45 % loads, 30 % unloads, 25 % ticks and releases of the region around a loaded chunk.
    fn default() -> Self {
        Self { add: 45, remove: 30 }
    }
}

/// A 2D operation log of `ops` lines: loads within `±span` chunks, unloads, and `tick` /
/// `release` of the section around a loaded chunk for the section `shift` (0..=6).
///
/// Some operations are misuse on purpose (a chunk loaded twice, an unload of an absent chunk,
/// a release of a region that is not ticking), which the replay answers with `"error"`.
///
/// ```
/// use terrane_regionizer::oplog::{LogMix, mixed_log};
/// let log = mixed_log(7, 1_000, 200, 4, LogMix::default());
/// assert_eq!(log.lines().count(), 1_000);
/// assert_eq!(log, mixed_log(7, 1_000, 200, 4, LogMix::default()));
/// ```
pub fn mixed_log(seed: u64, ops: usize, span: i32, shift: u32, mix: LogMix) -> String {
    let span = i64::from(span.max(0));
    let shift = shift.min(6);
    let mut rng = SplitMix(seed);
    let mut loaded: Vec<(i64, i64)> = Vec::new();
    let mut out = String::with_capacity(ops * 13);
    let uniform = |rng: &mut SplitMix| rng.below(2 * span as u64 + 1) as i64 - span;
    for _ in 0..ops {
        let roll = rng.below(100) as u32;
        if roll < mix.add || loaded.is_empty() {
            // A position already loaded now and then: the replay's misuse answer.
            let (x, z) = (uniform(&mut rng), uniform(&mut rng));
            loaded.push((x, z));
            let _ = writeln!(out, "add {x} {z}");
        } else if roll < mix.add + mix.remove {
            let (x, z) = if rng.below(8) == 0 {
                (uniform(&mut rng), uniform(&mut rng))
            } else {
                loaded.swap_remove(rng.below(loaded.len() as u64) as usize)
            };
            let _ = writeln!(out, "remove {x} {z}");
        } else {
            let (x, z) = loaded[rng.below(loaded.len() as u64) as usize];
            let op = if rng.below(2) == 0 { "tick" } else { "release" };
            let _ = writeln!(out, "{op} {} {}", x >> shift, z >> shift);
        }
    }
    out
}

/// SplitMix64: small, fast and fixed forever (the logs it makes are part of benchmark
/// commands).
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), by multiply-shift.
    fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n.max(1))) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The first values of SplitMix64 from seed 0 (the published reference sequence): the
    /// generator, and so every generated log, never changes silently.
    #[test]
    fn splitmix_matches_the_reference_sequence() {
        let mut r = SplitMix(0);
        assert_eq!(r.next(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(r.next(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(r.next(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn the_mix_and_the_span_hold() {
        let log = mixed_log(1, 20_000, 200, 4, LogMix::default());
        let count = |op: &str| log.lines().filter(|l| l.starts_with(op)).count() as f64;
        let n = 20_000.0;
        assert!((count("add ") / n - 0.45).abs() < 0.02, "adds {}", count("add "));
        assert!((count("remove ") / n - 0.30).abs() < 0.02, "removes {}", count("remove "));
        assert!(((count("tick ") + count("release ")) / n - 0.25).abs() < 0.02);
        for l in log.lines().filter(|l| l.starts_with("add ")) {
            let v: Vec<i64> = l.split(' ').skip(1).map(|t| t.parse().unwrap()).collect();
            assert!(v.iter().all(|c| c.abs() <= 200), "{l}");
        }
        // Sections of loaded chunks: within ±200 >> 4.
        for l in log.lines().filter(|l| l.starts_with("tick ") || l.starts_with("release ")) {
            let v: Vec<i64> = l.split(' ').skip(1).map(|t| t.parse().unwrap()).collect();
            assert!(v.iter().all(|c| (-13..=12).contains(c)), "{l}");
        }
        assert_ne!(log, mixed_log(2, 20_000, 200, 4, LogMix::default()));
    }
}
