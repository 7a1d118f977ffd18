//! The demo's pre-generator: worker threads claim the nearest columns not generated yet from
//! the world's distance graph, generate them and hand them to the main loop, which saves them
//! with its ticks.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use terrane::worldgen::hills::{self as terrain, Palette};
use terrane::{ChunkPos, ColumnPos, SharedDistanceGraph};

/// A generated column and its encoded chunks.
pub(crate) type Generated = (ColumnPos, Vec<(ChunkPos, Vec<u8>)>);

/// The running pre-generator.
pub(crate) struct Pregen {
    /// Generated columns; `None` once shut down.
    rx: Option<mpsc::Receiver<Generated>>,
    stop: Arc<AtomicBool>,
    /// Nanoseconds spent generating, by every thread (the main loop adds its own).
    pub(crate) gen_nanos: Arc<AtomicU64>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Pregen {
    /// A generated column, if one is waiting.
    pub(crate) fn try_recv(&self) -> Option<Generated> {
        self.rx.as_ref()?.try_recv().ok()
    }

    /// Stops the threads and waits for them (dropping the receiver first frees those blocked
    /// on a full channel).
    pub(crate) fn shut_down(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.rx = None;
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Starts `threads` generator threads filling the disc of `radius` columns around spawn
/// with `seed`'s terrain, nearest first.
pub(crate) fn start_pregen(
    graph: Arc<SharedDistanceGraph>,
    world_schema: &terrane::Schema,
    (seed, radius, threads): (u64, u32, usize),
    palette: Palette,
) -> Pregen {
    let (tx, rx) = mpsc::sync_channel(256);
    let stop = Arc::new(AtomicBool::new(false));
    let gen_nanos = Arc::new(AtomicU64::new(0));
    let threads = (0..threads.max(1))
        .map(|i| {
            let (graph, tx, stop, gen_nanos) =
                (graph.clone(), tx.clone(), stop.clone(), gen_nanos.clone());
            let schema = world_schema.clone();
            let r = radius;
            std::thread::Builder::new()
                .name(format!("pregen-{i}"))
                .spawn(move || {
                    let centre = ColumnPos::new(0, 0);
                    while !stop.load(Ordering::Relaxed) {
                        let hit = match graph.claim_nearest(centre, r) {
                            Ok(Some(h)) => h,
                            Ok(None) => {
                                if graph.count_missing(centre, r).unwrap_or(0) == 0 {
                                    return;
                                }
                                std::thread::sleep(Duration::from_millis(2));
                                continue;
                            }
                            Err(e) => {
                                tracing::error!("pre-generator: {e}");
                                return;
                            }
                        };
                        for col in hit.chunks() {
                            let t = Instant::now();
                            let chunks: Vec<_> = terrain::column(seed, col, &palette)
                                .into_iter()
                                .map(|(p, c)| (p, c.encode(&schema)))
                                .collect();
                            gen_nanos.fetch_add(t.elapsed().as_nanos() as u64, Ordering::Relaxed);
                            if tx.send((col, chunks)).is_err() {
                                return;
                            }
                        }
                    }
                })
                .expect("spawn pre-generator")
        })
        .collect();
    Pregen { rx: Some(rx), stop, gen_nanos, threads }
}
