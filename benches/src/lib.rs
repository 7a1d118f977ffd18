//! Cross-crate benchmarks of terrane against the libraries users would pick instead.
//!
//! Unpublished. Run with `cargo bench -p terrane-benches`; the figures go to
//! `docs/BENCHMARKS.md`. This library holds the workloads the benches share.
#![deny(missing_docs)]
#![forbid(unsafe_code)]

pub mod bigworld;

use terrane_section::ChunkPos;
use terrane_section::keys::{self, Level};

/// A deterministic generator (xorshift64*).
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A value in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }
}

/// One region's worth of chunks: 32 × 32 columns, like one Anvil `.mca` file.
pub const CHUNKS: usize = 1024;

/// The chunk at index `i` (0..1024): its region-local column and its `chunkl0` key.
pub fn chunk(i: usize) -> (usize, usize, [u8; keys::CHUNK_KEY_LEN]) {
    let (x, z) = (i % 32, i / 32);
    (x, z, keys::chunk_key(0, ChunkPos::new(x as i64, 4, z as i64), Level::L0))
}

/// A chunk-sized value (about 10 KB) that compresses like an encoded chunk: a random
/// palette section, then bit-packed cells drawn from a few values.
pub fn chunk_value(i: usize, round: u64) -> Vec<u8> {
    let mut rng = Rng::new(i as u64 * 7919 + round);
    let len = 9000 + rng.below(2400) as usize;
    let mut v = Vec::with_capacity(len);
    while v.len() < 600 {
        v.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    let palette = [0u8, 0x11, 0x12, 0x21, 0x44, 0x88];
    while v.len() < len {
        let r = rng.next_u64();
        let run = 1 + (r & 15) as usize;
        let b = palette[(r >> 8) as usize % palette.len()];
        v.extend(std::iter::repeat_n(b, run));
    }
    v.truncate(len);
    v
}
