//! The distance graph beside the naive approach (a hash set of done chunks, scanned for the
//! nearest missing one and counted chunk by chunk), in the same run.

use std::collections::HashSet;
use std::hint::black_box;
use std::time::Duration;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use terrane_distance::{Claims, ColumnPos, DistanceGraph, Hit};

type Naive = HashSet<(i32, i32), ahash::RandomState>;

const C: ColumnPos = ColumnPos::new(100, -37);

fn d2(x: i32, z: i32) -> u64 {
    let dx = (x - C.x).unsigned_abs() as u64;
    let dz = (z - C.z).unsigned_abs() as u64;
    dx * dx + dz * dz
}

/// The chunks of the disc of radius `r` around [`C`], row by row.
fn disc(r: i32) -> Vec<ColumnPos> {
    let r2 = r as u64 * r as u64;
    let mut v = Vec::new();
    for z in C.z - r..=C.z + r {
        for x in C.x - r..=C.x + r {
            if d2(x, z) <= r2 {
                v.push(ColumnPos::new(x, z));
            }
        }
    }
    v
}

fn graph_of(ps: &[ColumnPos]) -> DistanceGraph {
    let mut g = DistanceGraph::new();
    for &p in ps {
        g.insert(p).unwrap();
    }
    g
}

fn naive_of(ps: &[ColumnPos]) -> Naive {
    ps.iter().map(|p| (p.x, p.z)).collect()
}

/// Naive nearest: Chebyshev rings outwards from the centre, stopping once a ring cannot beat
/// the best missing chunk found; returns `(d2, bz, bx)` of the best candidate.
fn naive_nearest(
    set: &Naive,
    r: i32,
    excluded: &HashSet<(i32, i32), ahash::RandomState>,
) -> Option<(u64, i32, i32)> {
    let r2 = r as u64 * r as u64;
    let mut best: Option<(u64, i32, i32)> = None;
    let visit = |x: i32, z: i32, best: &mut Option<(u64, i32, i32)>| {
        let d = d2(x, z);
        if d <= r2 && !set.contains(&(x, z)) && !excluded.contains(&(x >> 2, z >> 2)) {
            let k = (d, z >> 2, x >> 2);
            if best.is_none_or(|b| k < b) {
                *best = Some(k);
            }
        }
    };
    for k in 0..=r {
        if best.is_some_and(|b| b.0 < (k as u64) * (k as u64)) {
            break;
        }
        if k == 0 {
            visit(C.x, C.z, &mut best);
            continue;
        }
        for i in -k..=k {
            visit(C.x + i, C.z - k, &mut best);
            visit(C.x + i, C.z + k, &mut best);
        }
        for i in -k + 1..k {
            visit(C.x - k, C.z + i, &mut best);
            visit(C.x + k, C.z + i, &mut best);
        }
    }
    best
}

fn naive_count_missing(set: &Naive, r: i32) -> u64 {
    let r2 = r as u64 * r as u64;
    let mut n = 0;
    for z in C.z - r..=C.z + r {
        for x in C.x - r..=C.x + r {
            if d2(x, z) <= r2 && !set.contains(&(x, z)) {
                n += 1;
            }
        }
    }
    n
}

fn naive_near_to_far(set: &Naive, r: i32) -> Vec<(u64, i32, i32)> {
    let r2 = r as u64 * r as u64;
    let mut v: Vec<(u64, i32, i32)> =
        set.iter().map(|&(x, z)| (d2(x, z), z, x)).filter(|k| k.0 <= r2).collect();
    v.sort_unstable();
    v
}

fn configure<M: criterion::measurement::Measurement>(g: &mut criterion::BenchmarkGroup<'_, M>) {
    g.sample_size(10);
    g.measurement_time(Duration::from_secs(2));
    g.warm_up_time(Duration::from_secs(1));
    g.sampling_mode(SamplingMode::Flat);
}

fn bench_insert(c: &mut Criterion) {
    let ps = disc(643);
    eprintln!("completed disc r=643: {} chunks", ps.len());
    let mut g = c.benchmark_group("distance/insert_disc_r643");
    configure(&mut g);
    g.throughput(Throughput::Elements(ps.len() as u64));
    g.bench_function("terrane", |b| b.iter(|| black_box(graph_of(&ps)).len()));
    g.bench_function("naive_hashset", |b| b.iter(|| black_box(naive_of(&ps)).len()));
    g.finish();
}

/// The first `n` batches a nearest-first generator would hand out (to be excluded).
fn first_batches(g: &DistanceGraph, r: u32, n: usize) -> Vec<Hit> {
    let mut claims = Claims::new();
    let mut out = Vec::new();
    while out.len() < n {
        let Some(h) = g.nearest_unclaimed(C, r, &claims).unwrap() else { break };
        claims.claim(&h);
        out.push(h);
    }
    out
}

fn bench_nearest(c: &mut Criterion) {
    let mut grp = c.benchmark_group("distance/nearest");
    configure(&mut grp);
    for r in [128u32, 2048] {
        // Done: the disc of radius r / 2. Excluded: the next 0 / 1k / 10k batches.
        let done = disc(r as i32 / 2);
        let g = graph_of(&done);
        let naive = naive_of(&done);
        for n in [0usize, 1000, 10_000] {
            let hits = first_batches(&g, r, n);
            let ex: HashSet<(i32, i32), ahash::RandomState> =
                hits.iter().map(|h| (h.batch.x, h.batch.z)).collect();
            let want = g.nearest_incomplete(C, r, |b| ex.contains(&(b.x, b.z))).unwrap();
            let naive_want = naive_nearest(&naive, r as i32, &ex);
            assert_eq!(want.map(|h| (h.d2, h.batch.z, h.batch.x)), naive_want, "r={r} n={n}");
            let id = format!("r{r}_excl{}", ex.len());
            grp.bench_function(BenchmarkId::new("terrane", &id), |b| {
                b.iter(|| {
                    g.nearest_incomplete(black_box(C), r, |b| ex.contains(&(b.x, b.z))).unwrap()
                })
            });
            grp.bench_function(BenchmarkId::new("naive_hashset", &id), |b| {
                b.iter(|| naive_nearest(&naive, black_box(r as i32), &ex))
            });
        }
    }
    grp.finish();
}

fn bench_count(c: &mut Criterion) {
    let mut grp = c.benchmark_group("distance/count_missing");
    configure(&mut grp);
    // Done: the disc of radius 1024 (3.3 M chunks); counted at r = 128, 2048 and 100 000.
    let done = disc(1024);
    let g = graph_of(&done);
    let naive = naive_of(&done);
    for r in [128u32, 2048, 100_000] {
        let id = format!("r{r}");
        if r <= 2048 {
            assert_eq!(g.count_missing(C, r).unwrap(), naive_count_missing(&naive, r as i32));
        }
        grp.bench_function(BenchmarkId::new("terrane", &id), |b| {
            b.iter(|| g.count_missing(black_box(C), r).unwrap())
        });
        if r <= 2048 {
            grp.bench_function(BenchmarkId::new("naive_hashset", &id), |b| {
                b.iter(|| naive_count_missing(&naive, black_box(r as i32)))
            });
        }
    }
    grp.finish();
}

fn bench_iter(c: &mut Criterion) {
    let mut grp = c.benchmark_group("distance/near_to_far_r643");
    configure(&mut grp);
    let done = disc(643);
    let g = graph_of(&done);
    let naive = naive_of(&done);
    grp.bench_function("terrane_first64", |b| {
        b.iter(|| g.completed_near_to_far(black_box(C), 643, None).unwrap().take(64).count())
    });
    grp.bench_function("naive_first64", |b| {
        b.iter(|| naive_near_to_far(&naive, black_box(643)).len().min(64))
    });
    grp.throughput(Throughput::Elements(done.len() as u64));
    grp.bench_function("terrane_drain", |b| {
        b.iter(|| g.completed_near_to_far(black_box(C), 643, None).unwrap().count())
    });
    grp.bench_function("naive_drain", |b| {
        b.iter(|| naive_near_to_far(&naive, black_box(643)).len())
    });
    grp.finish();
}

fn bench_encode(c: &mut Criterion) {
    let mut grp = c.benchmark_group("distance/encode");
    configure(&mut grp);
    for r in [643i32, 2048] {
        let done = disc(r);
        let g = graph_of(&done);
        let bytes = g.to_bytes();
        let (nodes, batches) = g.node_count();
        eprintln!(
            "completed disc r={r}: {} chunks, encoded {} bytes (naive set: {} bytes at 8 per chunk, {:.0}x), \
             memory ~{} bytes, {nodes} nodes, {batches} partial batches",
            done.len(),
            bytes.len(),
            done.len() * 8,
            (done.len() * 8) as f64 / bytes.len() as f64,
            g.memory_bytes(),
        );
        grp.bench_function(BenchmarkId::new("to_bytes", r), |b| b.iter(|| g.to_bytes().len()));
        grp.bench_function(BenchmarkId::new("from_bytes", r), |b| {
            b.iter(|| DistanceGraph::from_bytes(black_box(&bytes)).unwrap().len())
        });
    }
    grp.finish();
}

criterion_group!(benches, bench_insert, bench_nearest, bench_count, bench_iter, bench_encode);
criterion_main!(benches);
