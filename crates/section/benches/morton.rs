//! Morton encode/decode throughput, beside a naive bit-by-bit interleave.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use terrane_section::morton;

fn naive3(x: i64, y: i64, z: i64) -> [u8; 24] {
    let c = [x as u64 ^ (1 << 63), y as u64 ^ (1 << 63), z as u64 ^ (1 << 63)];
    let mut out = [0u8; 24];
    for i in 0..64 {
        for (j, v) in c.iter().enumerate() {
            let pos = 3 * i + j;
            out[pos / 8] |= (((v >> (63 - i)) & 1) as u8) << (7 - pos % 8);
        }
    }
    out
}

fn points(n: usize) -> Vec<(i64, i64, i64)> {
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    (0..n)
        .map(|_| {
            let mut next = || {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                (s as i64) >> 20
            };
            (next(), next(), next())
        })
        .collect()
}

fn bench(c: &mut Criterion) {
    let pts = points(4096);
    let keys: Vec<[u8; 24]> = pts.iter().map(|&(x, y, z)| morton::encode3(x, y, z)).collect();
    let mut g = c.benchmark_group("morton");
    g.throughput(Throughput::Elements(pts.len() as u64));
    g.bench_function("encode3", |b| {
        b.iter(|| {
            for &(x, y, z) in &pts {
                black_box(morton::encode3(black_box(x), y, z));
            }
        })
    });
    g.bench_function("encode3_naive_bitwise", |b| {
        b.iter(|| {
            for &(x, y, z) in &pts {
                black_box(naive3(black_box(x), y, z));
            }
        })
    });
    g.bench_function("decode3", |b| {
        b.iter(|| {
            for k in &keys {
                black_box(morton::decode3(black_box(k)));
            }
        })
    });
    g.bench_function("encode2", |b| {
        b.iter(|| {
            for &(x, _, z) in &pts {
                black_box(morton::encode2(black_box(x), z));
            }
        })
    });
    let keys2: Vec<[u8; 16]> = pts.iter().map(|&(x, _, z)| morton::encode2(x, z)).collect();
    g.bench_function("decode2", |b| {
        b.iter(|| {
            for k in &keys2 {
                black_box(morton::decode2(black_box(k)));
            }
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
