//! The demo's region tick: what each region does on the scheduler's workers (random block
//! ticks around the players it holds, a builder's edits, and busy work standing in for
//! entities and redstone), and the state region ticks share with the main loop.

use std::sync::RwLock;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use terrane::worldgen::hills::{self as terrain, Palette};
use terrane::{BlockPos, ChunkPos, LoadedColumns, TickContext};

/// The state the region ticks share with the main loop.
pub(crate) struct Shared {
    /// The loaded columns: region ticks read and change their chunks (each chunk locked on
    /// its own), the main loop loads, unloads and saves them.
    pub(crate) loaded: RwLock<LoadedColumns>,
    /// Player block positions.
    pub(crate) players: RwLock<Vec<BlockPos>>,
    /// Blocks changed by region ticks.
    pub(crate) edits: AtomicU64,
    /// Block random-ticks sampled by region ticks.
    pub(crate) sampled: AtomicU64,
    /// Region ticks running now, and the most seen at once.
    pub(crate) running: AtomicUsize,
    pub(crate) max_running: AtomicUsize,
    pub(crate) palette: Palette,
    pub(crate) seed: u64,
    /// CPU time each region tick spends on simulated work.
    pub(crate) work: Duration,
}

/// A region tick: for every player in the region, a few random block updates around them
/// (a builder placing cobblestone on the surface and taking it away again).
pub(crate) fn region_tick(shared: &Shared, ctx: &TickContext<'_, ChunkPos, ()>) {
    let now = shared.running.fetch_add(1, Ordering::SeqCst) + 1;
    shared.max_running.fetch_max(now, Ordering::SeqCst);
    let t = Instant::now();
    region_work(shared, ctx);
    // The rest of a game's region tick (entities, redstone, ...): busy work.
    let mut h = ctx.id().get();
    while t.elapsed() < shared.work {
        for _ in 0..256 {
            h = mix(h, 1, 2);
        }
    }
    std::hint::black_box(h);
    shared.running.fetch_sub(1, Ordering::SeqCst);
}

fn region_work(shared: &Shared, ctx: &TickContext<'_, ChunkPos, ()>) {
    let players = shared.players.read().expect("players lock").clone();
    let rz = ctx.regionizer();
    let loaded = shared.loaded.read().expect("loaded lock");
    for (i, p) in players.iter().enumerate() {
        if rz.owner_of_chunk(p.chunk()) != Some(ctx.id()) {
            continue;
        }
        let h = mix(shared.seed ^ ctx.region().stats().ticks, i as i64, p.x ^ p.z);
        // Random ticks: 64 cells of each chunk around the player (crops grow, grass spreads).
        let c = p.chunk();
        let mut sampled = 0;
        for (dx, dz) in
            [(-1, -1), (0, -1), (1, -1), (-1, 0), (0, 0), (1, 0), (-1, 1), (0, 1), (1, 1)]
        {
            let Some(chunk) = loaded.chunk(ChunkPos::new(c.x + dx, c.y, c.z + dz)) else {
                continue;
            };
            let mut r = h;
            for _ in 0..64 {
                r = mix(r, dx, dz);
                let i = (r % 4096) as u16;
                if chunk.get_index(i) == shared.palette.grass {
                    sampled += 1;
                }
            }
        }
        shared.sampled.fetch_add(sampled + 1, Ordering::Relaxed);
        let dx = (h % 9) as i64 - 4;
        let dz = ((h >> 8) % 9) as i64 - 4;
        let (x, z) = (p.x + dx, p.z + dz);
        let y = terrain::height(shared.seed, x, z) + 1;
        let pos = BlockPos::new(x, y, z);
        let Some(mut c) = loaded.chunk(pos.chunk()) else { continue };
        let (lx, ly, lz) = pos.local();
        let next = if c.get(lx, ly, lz) == shared.palette.cobble {
            shared.palette.air
        } else if c.get(lx, ly, lz) == shared.palette.air {
            shared.palette.cobble
        } else {
            continue;
        };
        c.set(lx, ly, lz, next);
        drop(c);
        shared.edits.fetch_add(1, Ordering::Relaxed);
        loaded.mark_changed(pos.chunk());
    }
}

pub(crate) fn mix(a: u64, b: i64, c: i64) -> u64 {
    let mut h = a ^ 0x2545_F491_4F6C_DD1D;
    for v in [b as u64, c as u64] {
        h = (h ^ v).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 32;
    }
    h
}
