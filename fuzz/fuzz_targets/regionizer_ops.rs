//! Random regionizer operation sequences (2D and 3D, small radii and coordinates so regions
//! merge, go transient, purge and split): no panic, every misuse a typed error, and every
//! invariant of the spec holds after every operation.
#![no_main]

use libfuzzer_sys::fuzz_target;
use terrane_regionizer::{Error, NoCallbacks, RegionizerConfig, Regionizer};
use terrane_section::{ChunkPos, ColumnPos, GridPos};

fn config(b: u8) -> RegionizerConfig {
    RegionizerConfig::builder()
        .shift(u32::from(b & 3))
        .create_radius(1 + u32::from((b >> 2) & 1))
        .merge_radius(1 + u32::from((b >> 3) & 1))
        .recalc_count(usize::from((b >> 4) & 7))
        .max_dead_fraction(if b & 0x80 != 0 { 0.5 } else { 1.0 / 6.0 })
        .build()
        .expect("valid by construction")
}

fn run<P: GridPos>(cfg: RegionizerConfig, ops: &[u8]) {
    let rz: Regionizer<P, ()> = Regionizer::new(cfg, NoCallbacks);
    let mut ticking = Vec::new();
    let dims = P::DIMS;
    let count = (ops.len() / (1 + dims)).min(256);
    for (i, op) in ops.chunks_exact(1 + dims).take(count).enumerate() {
        let coords: Vec<i64> = op[1..].iter().map(|&v| i64::from(v % 24) - 12).collect();
        let p = P::from_coords(&coords).expect("small coordinates");
        match op[0] % 5 {
            0 | 1 => match rz.add_chunk(p) {
                Ok(()) | Err(Error::DuplicateChunk { .. }) => {}
                Err(e) => panic!("add: {e}"),
            },
            2 => match rz.remove_chunk(p) {
                Ok(()) | Err(Error::ChunkNotLoaded { .. }) => {}
                Err(e) => panic!("remove: {e}"),
            },
            3 => {
                if let Some(id) = rz.owner_of_chunk_exact(p).unwrap()
                    && rz.try_mark_ticking(id).unwrap()
                {
                    ticking.push(id);
                }
            }
            _ => {
                if ticking.is_empty() {
                    if let Some(id) = rz.owner_of_chunk_exact(p).unwrap() {
                        assert!(matches!(rz.mark_not_ticking(id), Err(Error::NotTicking { .. })));
                    }
                } else {
                    let id = ticking.remove(usize::from(op[1]) % ticking.len());
                    rz.mark_not_ticking(id).unwrap();
                }
            }
        }
        // The check is from scratch (every section's neighbourhood): after every one of the
        // first 16 operations, then after every 8th, and after the last. A break that lasts
        // is caught within 8 operations of its cause, and a 256-operation input costs 47
        // checks instead of 256 (the checks were most of an execution: 300 a second once
        // the inputs reached 60 operations).
        if i < 16 || i % 8 == 7 || i + 1 == count {
            if let Err(e) = rz.check_invariants() {
                panic!("after operation {i}: {e}");
            }
        }
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&head, ops)) = data.split_first() else { return };
    let cfg = config(head);
    if head & 0x40 != 0 {
        run::<ChunkPos>(cfg, ops);
    } else {
        run::<ColumnPos>(cfg, ops);
    }
});
