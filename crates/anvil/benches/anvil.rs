//! Import throughput, imported size against the `.mca` files, and point reads of one chunk,
//! beside fastanvil reading the same data.

use std::hint::black_box;
use std::io::Write;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use fastanvil::{Chunk as _, JavaChunk, Region};
use terrane_anvil::{ExportSource, MemColumns};
use terrane_chunk::ChunkView;

use terrane_section::testdata::dir as testdata;

const DIRS: [&str; 2] = ["anvil/1.18.2", "anvil/1.21.1"];

fn import(dir: &Path) -> (MemColumns, terrane_anvil::ImportSummary) {
    let mut w = MemColumns::new();
    let s = terrane_anvil::import_region_dir(dir, &mut w, &mut |_| {}).unwrap();
    (w, s)
}

fn zlib_len(b: &[u8]) -> usize {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(b).unwrap();
    e.finish().unwrap().len()
}

/// Prints the size comparison once (not timed).
fn sizes() {
    println!("\nimported size vs .mca (chunk blobs = terrane chunk v1 bytes, uncompressed):");
    println!(
        "| folder | columns | chunks | .mca bytes | chunk blobs | + column records (LZ4) | blobs zlib'd one by one |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for d in DIRS {
        let dir = testdata().join(d);
        let (w, s) = import(&dir);
        let blobs: usize =
            w.columns.values().flat_map(|c| c.chunks.iter().map(|x| x.1.len())).sum();
        let records: usize = w.columns.values().map(|c| c.record.len()).sum();
        let zipped: usize =
            w.columns.values().flat_map(|c| c.chunks.iter().map(|x| zlib_len(&x.1))).sum();
        println!(
            "| {d} | {} | {} | {} | {} ({:.1} %) | {} ({:.1} %) | {} ({:.1} %) |",
            s.columns,
            s.chunks,
            s.bytes_in,
            blobs,
            100.0 * blobs as f64 / s.bytes_in as f64,
            blobs + records,
            100.0 * (blobs + records) as f64 / s.bytes_in as f64,
            zipped,
            100.0 * zipped as f64 / s.bytes_in as f64,
        );
    }
}

fn bench(c: &mut Criterion) {
    sizes();
    let dir = testdata().join("anvil/1.18.2");
    let file = dir.join("r.0.0.mca");
    let region_bytes = std::fs::read(&file).unwrap();
    let columns = 280u64;

    let mut g = c.benchmark_group("anvil_import_region");
    g.sample_size(10).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(columns));
    g.bench_function("terrane_import_to_cubic_chunks", |b| {
        b.iter(|| black_box(import(&dir).1.chunks));
    });
    // The same on the calling thread alone: the per-core figure beside fastanvil's (which
    // parses on one thread).
    g.bench_function("terrane_import_one_thread", |b| {
        let options = terrane_anvil::ImportOptions::new().threads(1);
        b.iter(|| {
            let mut w = MemColumns::new();
            black_box(
                terrane_anvil::import_region_dir_with(&dir, &mut w, &options, &mut |_| {})
                    .unwrap()
                    .chunks,
            )
        });
    });
    g.bench_function("fastanvil_parse_only", |b| {
        b.iter(|| {
            let mut r = Region::from_stream(std::io::Cursor::new(&region_bytes)).unwrap();
            let mut n = 0;
            for ch in r.iter() {
                let ch = ch.unwrap();
                let parsed = JavaChunk::from_bytes(&ch.data).unwrap();
                n += parsed.y_range().len();
            }
            black_box(n)
        });
    });
    g.finish();

    // Point read: the chunk with the largest palette (a terrain chunk) and its column.
    let (w, _) = import(&dir);
    let (pos, cy) = w
        .columns
        .iter()
        .flat_map(|(p, c)| c.chunks.iter().map(move |(y, b)| (*p, *y, b)))
        .max_by_key(|(_, _, b)| ChunkView::parse(b).unwrap().palette_len())
        .map(|(p, y, _)| (p, y))
        .unwrap();
    let col = w.column(pos).unwrap().unwrap();
    let (_, blob) = col.chunks.iter().find(|(y, _)| *y == cy).unwrap().clone();
    let (lx, lz) = ((pos.x & 31) as usize, (pos.z & 31) as usize);
    println!(
        "point read: column ({}, {}), chunk y {cy}, {} bytes, palette {}",
        pos.x,
        pos.z,
        blob.len(),
        ChunkView::parse(&blob).unwrap().palette_len()
    );
    let mut g = c.benchmark_group("anvil_point_read");
    g.sample_size(10).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_secs(1));
    g.bench_function("terrane_chunk_view_one_block", |b| {
        b.iter(|| {
            let v = ChunkView::parse(black_box(&blob)).unwrap();
            black_box(v.block_at(3, 7, 9))
        });
    });
    g.bench_function("terrane_chunk_decode_owned", |b| {
        b.iter(|| black_box(terrane_chunk::Chunk::decode(black_box(&blob), &w.schema).unwrap()));
    });
    g.bench_function("terrane_column_all_chunks_view", |b| {
        b.iter(|| {
            let mut n = 0u32;
            for (_, c) in &col.chunks {
                n += ChunkView::parse(c).unwrap().block_at(3, 7, 9).0;
            }
            black_box(n)
        });
    });
    g.bench_function("fastanvil_read_chunk_one_block", |b| {
        b.iter(|| {
            let mut r = Region::from_stream(std::io::Cursor::new(&region_bytes)).unwrap();
            let data = r.read_chunk(lx, lz).unwrap().unwrap();
            let parsed = JavaChunk::from_bytes(&data).unwrap();
            black_box(parsed.block(3, cy as isize * 16 + 7, 9).map(|b| b.name().len()))
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
