//! Regionizer and scheduler costs. There is no Rust peer for Folia's regionizer, so the
//! figures are absolute, plus the 2-worker / 1-worker speed-up of the scheduler.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use terrane_regionizer::{NoCallbacks, Regionizer, RegionizerConfig, Scheduler, SchedulerConfig};
use terrane_section::ColumnPos;

type Rz = Regionizer<ColumnPos, ()>;

const PLAYERS: i32 = 100;
const VIEW: i32 = 10;

/// 100 players on a 10×10 grid 48 chunks apart (view squares of 21×21 chunks; neighbours'
/// sections are within merge distance, so regions merge and split as they move), walking
/// in +x then back. One step = every player moves one chunk: 21 loads at the leading edge,
/// 21 unloads at the trailing edge.
struct Walk {
    pos: Vec<(i32, i32)>,
    dir: i32,
    steps: u32,
}

impl Walk {
    fn new(rz: &Rz) -> Self {
        let pos: Vec<(i32, i32)> = (0..PLAYERS).map(|i| ((i % 10) * 48, (i / 10) * 48)).collect();
        for &(x, z) in &pos {
            for dx in -VIEW..=VIEW {
                for dz in -VIEW..=VIEW {
                    rz.add_chunk(ColumnPos::new(x + dx, z + dz)).unwrap();
                }
            }
        }
        Self { pos, dir: 1, steps: 0 }
    }

    fn step(&mut self, rz: &Rz) {
        let d = self.dir;
        for (x, z) in self.pos.iter_mut() {
            let lead = *x + d * (VIEW + 1);
            let trail = *x - d * VIEW;
            for dz in -VIEW..=VIEW {
                rz.add_chunk(ColumnPos::new(lead, *z + dz)).unwrap();
                rz.remove_chunk(ColumnPos::new(trail, *z + dz)).unwrap();
            }
            *x += d;
        }
        self.steps += 1;
        if self.steps.is_multiple_of(64) {
            self.dir = -self.dir;
        }
    }
}

fn tick_all(rz: &Rz) {
    for id in rz.region_ids().unwrap() {
        if rz.try_mark_ticking(id).unwrap() {
            rz.mark_not_ticking(id).unwrap();
        }
    }
}

fn bench_walk(c: &mut Criterion) {
    let mut g = c.benchmark_group("regionizer_players");
    g.throughput(Throughput::Elements((PLAYERS * (2 * VIEW + 1) * 2) as u64));
    for (name, conf) in
        [("shift4", RegionizerConfig::folia_shift4()), ("shift2", RegionizerConfig::folia_shift2())]
    {
        let rz = Rz::new(conf, NoCallbacks);
        let mut w = Walk::new(&rz);
        tick_all(&rz);
        g.bench_function(format!("walk_step_100_players_vd10_{name}"), |b| {
            b.iter_custom(|iters| {
                let mut t = Duration::ZERO;
                for _ in 0..iters {
                    let s = Instant::now();
                    w.step(&rz);
                    t += s.elapsed();
                    // Ticks between steps (not timed) purge dead sections, as on a server.
                    tick_all(&rz);
                }
                t
            })
        });
    }
    g.finish();
}

fn bench_lookup(c: &mut Criterion) {
    let rz = Rz::new(RegionizerConfig::folia_shift4(), NoCallbacks);
    let _w = Walk::new(&rz);
    let chunks = rz.loaded_chunks().unwrap();
    let probe: Vec<ColumnPos> =
        chunks.iter().step_by(chunks.len() / 4096).copied().take(4096).collect();
    let mut g = c.benchmark_group("regionizer_owner_lookup");
    g.throughput(Throughput::Elements(probe.len() as u64));
    g.bench_function("unsynchronised", |b| {
        b.iter(|| {
            for &p in &probe {
                black_box(rz.owner_of_chunk(p));
            }
        })
    });
    g.bench_function("exact", |b| {
        b.iter(|| {
            for &p in &probe {
                black_box(rz.owner_of_chunk_exact(p).unwrap());
            }
        })
    });
    g.finish();
}

fn bench_tick_pair(c: &mut Criterion) {
    let rz = Rz::new(RegionizerConfig::folia_shift4(), NoCallbacks);
    for i in 0..1000 {
        rz.add_chunk(ColumnPos::new((i % 40) * 64, (i / 40) * 64)).unwrap();
    }
    let ids = rz.region_ids().unwrap();
    assert_eq!(ids.len(), 1000);
    let mut g = c.benchmark_group("regionizer_tick");
    g.throughput(Throughput::Elements(ids.len() as u64));
    g.bench_function("try_mark_ticking_plus_mark_not_ticking_1000_regions", |b| {
        b.iter(|| {
            for &id in &ids {
                assert!(rz.try_mark_ticking(id).unwrap());
                assert!(rz.mark_not_ticking(id).unwrap());
            }
        })
    });
    g.finish();
}

/// Waits until the scheduler has completed `n` more ticks; returns the elapsed time. The
/// waiting thread sleeps between checks: spinning (even with `yield_now`) would take a core
/// from the workers on a 2-core machine and measure the harness, not the scheduler.
fn run_ticks(s: &Scheduler<ColumnPos, ()>, n: u64) -> Duration {
    let start = Instant::now();
    let target = s.ticks() + n;
    while s.ticks() < target {
        std::thread::sleep(Duration::from_millis(1));
    }
    start.elapsed()
}

fn bench_scheduler(c: &mut Criterion) {
    let mut g = c.benchmark_group("scheduler");
    // Overhead per tick: 1,000 regions, a no-op tick, no period.
    let s: Scheduler<ColumnPos, ()> = Scheduler::start(
        RegionizerConfig::folia_shift4(),
        SchedulerConfig::default().workers(1).tick_period(Duration::ZERO),
        NoCallbacks,
        |_| {},
    );
    for i in 0..1000 {
        s.regionizer().add_chunk(ColumnPos::new((i % 40) * 64, (i / 40) * 64)).unwrap();
    }
    g.throughput(Throughput::Elements(1));
    g.bench_function("overhead_per_tick_1000_regions_noop", |b| {
        b.iter_custom(|iters| run_ticks(&s, iters))
    });
    drop(s);
    // Speed-up: 8 independent busy regions (~50 µs of work per tick), 1 vs 2 workers.
    for workers in [1usize, 2] {
        let work = Arc::new(AtomicU64::new(0));
        let w = Arc::clone(&work);
        let s: Scheduler<ColumnPos, ()> = Scheduler::start(
            RegionizerConfig::folia_shift4(),
            SchedulerConfig::default().workers(workers).tick_period(Duration::ZERO),
            NoCallbacks,
            move |_| {
                w.fetch_add(busy() & 1, Ordering::Relaxed);
            },
        );
        for i in 0..8 {
            s.regionizer().add_chunk(ColumnPos::new(i * 1000, 0)).unwrap();
        }
        g.bench_function(format!("busy_tick_8_regions_{workers}_workers"), |b| {
            b.iter_custom(|iters| run_ticks(&s, iters))
        });
        drop(s);
    }
    // The ceiling on this machine, measured in the same run: the same busy units on plain
    // threads, no regionizer, no scheduler.
    for threads in [1u64, 2] {
        g.bench_function(format!("busy_unit_plain_{threads}_threads"), |b| {
            b.iter_custom(|iters| {
                let start = Instant::now();
                std::thread::scope(|sc| {
                    for t in 0..threads {
                        let n = iters / threads + u64::from(t < iters % threads);
                        sc.spawn(move || {
                            for _ in 0..n {
                                black_box(busy());
                            }
                        });
                    }
                });
                start.elapsed()
            })
        });
    }
    g.finish();
}

/// One unit of CPU-bound work (~50 µs on an idle core).
fn busy() -> u64 {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    for _ in 0..40_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    black_box(x)
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_secs(1))
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench_walk, bench_lookup, bench_tick_pair, bench_scheduler
}
criterion_main!(benches);
