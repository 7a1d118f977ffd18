//! A world pre-generator: several players, a pool of workers claiming batches nearest-first,
//! completions arriving out of order, a progress bar, and a restart half-way through (the graph
//! is saved, dropped and loaded again; work that was in flight is simply found again).
//!
//! Run with `cargo run --release -p terrane-distance --example pregen`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use terrane_distance::{ColumnPos, DistanceGraph, Error, SharedDistanceGraph};

/// Players: centre and generation radius (in chunks). Far apart, so their discs are disjoint.
const PLAYERS: [(ColumnPos, u32); 3] = [
    (ColumnPos::new(0, 0), 96),
    (ColumnPos::new(5000, -300), 64),
    (ColumnPos::new(-20_000, 9000), 80),
];
const WORKERS: usize = 4;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn missing(shared: &SharedDistanceGraph) -> u64 {
    PLAYERS.iter().map(|&(c, r)| shared.count_missing(c, r).unwrap()).sum()
}

/// Runs the worker pool until everything is generated or `stop_at` chunks are done; workers
/// that stop keep their claims unfinished (as if the server crashed).
fn run(shared: &Arc<SharedDistanceGraph>, bar: &ProgressBar, stop_at: Option<u64>) {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        for w in 0..WORKERS {
            let (shared, stop) = (Arc::clone(shared), &stop);
            s.spawn(move || {
                let mut rng =
                    Rng(0x9E37_79B9_7F4A_7C15 ^ (w as u64 + 1).wrapping_mul(0x2545_F491_4F6C_DD1D));
                // Chunks being "generated": completed in random order, a few batches in flight.
                let mut in_flight: Vec<ColumnPos> = Vec::new();
                loop {
                    if stop.load(Ordering::Relaxed) {
                        return; // crash: in-flight chunks are neither completed nor released
                    }
                    let hit = if in_flight.len() < 48 {
                        shared.claim_nearest_any(&PLAYERS).unwrap()
                    } else {
                        None
                    };
                    match hit {
                        Some((_, hit)) => in_flight.extend(hit.chunks()),
                        None if in_flight.is_empty() => return,
                        None => {}
                    }
                    // Simulated generation time, then a few chunks finish in random order.
                    std::thread::sleep(Duration::from_micros(30));
                    for _ in 0..6.min(in_flight.len()) {
                        let i = (rng.next() % in_flight.len() as u64) as usize;
                        shared.complete(in_flight.swap_remove(i)).unwrap();
                    }
                }
            });
        }
        loop {
            let done = shared.len();
            bar.set_position(done);
            bar.set_message(format!(
                "{} left, {} claimed",
                bar.length().unwrap_or(0) - done,
                shared.claimed_chunks()
            ));
            if stop_at.is_some_and(|n| done >= n) {
                stop.store(true, Ordering::Relaxed);
                break;
            }
            if missing(shared) == 0 {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
}

fn main() -> Result<(), Error> {
    let start = Instant::now();
    let shared = Arc::new(SharedDistanceGraph::new(DistanceGraph::new()));
    let total = missing(&shared);
    let bar = ProgressBar::new(total);
    bar.set_style(
        ProgressStyle::with_template(
            "{elapsed_precise} [{bar:40}] {pos}/{len} chunks, {per_sec}, {msg}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    println!("{} players, {WORKERS} workers, {total} chunks to generate", PLAYERS.len());

    // First half, then a "crash".
    run(&shared, &bar, Some(total / 2));
    let in_flight = shared.claimed_chunks();
    let dir = std::env::temp_dir().join(format!("terrane-pregen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|source| Error::Io { path: dir.clone(), source })?;
    let path = dir.join("distance-graph.bin");
    shared.save(&path)?;
    let before = Arc::try_unwrap(shared).expect("workers have stopped").into_inner();
    let size =
        std::fs::metadata(&path).map_err(|source| Error::Io { path: path.clone(), source })?.len();

    // Restart: load the graph; claims are gone, so in-flight chunks are found again.
    let loaded = DistanceGraph::load(&path)?;
    assert_eq!(loaded, before);
    bar.suspend(|| {
        println!(
            "restart at {} done: saved {size} bytes, {in_flight} chunks were in flight and will be redone",
            loaded.len()
        )
    });
    let shared = Arc::new(SharedDistanceGraph::new(loaded));
    run(&shared, &bar, None);
    bar.finish_with_message("done");

    let g = Arc::try_unwrap(shared).expect("workers have stopped").into_inner();
    for &(c, r) in &PLAYERS {
        assert_eq!(g.count_missing(c, r)?, 0);
    }
    assert_eq!(g.len(), total);
    g.save(&path)?;
    let size =
        std::fs::metadata(&path).map_err(|source| Error::Io { path: path.clone(), source })?.len();
    println!(
        "generated {total} chunks in {:.2?}; final graph: {size} bytes on disk ({} bytes as a set of 8-byte positions)",
        start.elapsed(),
        total * 8
    );
    std::fs::remove_dir_all(&dir).map_err(|source| Error::Io { path: dir.clone(), source })?;
    Ok(())
}
