//! The object store backends against their peers, one criterion run:
//! memory, terrane-blockfile, terrane-rocksdb, terrane-postgres (a throwaway server over a Unix
//! socket, with the `postgres` feature), LevelDB (rusty-leveldb, Bedrock's engine) and
//! Minecraft Anvil region files (fastanvil), on the same 1024 chunk-sized values (~10 KB).
//!
//! Groups: random point reads (256 per iteration, one by one and through `multi_get`), batches of 256 values unsynced and synced
//! (fsync before returning), and an ordered scan of all 1024 values. Anvil stores chunks
//! uncompressed here (scheme 3), like the terrane backends store the bytes they are given;
//! RocksDB (lz4) and LevelDB (snappy) compress their blocks.

use std::fs::File;
use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use fastanvil::{CompressionScheme, Region};
use rusty_leveldb::LdbIterator;
use terrane_benches::{CHUNKS, Rng, chunk, chunk_value};
use terrane_blockfile::BlockFile;
#[cfg(feature = "postgres")]
use terrane_postgres::{PgStore, testing::PgServer};
#[cfg(feature = "rocksdb")]
use terrane_rocksdb::RocksStore;
use terrane_store::{Batch, KeyRange, MemStore, Store, StoreConfig, tables};

const BATCH: usize = 256;

struct Peers {
    _dir: tempfile::TempDir,
    mem: MemStore,
    blockfile: BlockFile,
    /// The same without its read cache: every read goes to the file.
    blockfile_uncached: BlockFile,
    #[cfg(feature = "rocksdb")]
    rocks: RocksStore,
    /// The same without its row cache: point reads go through the block cache.
    #[cfg(feature = "rocksdb")]
    rocks_no_rows: RocksStore,
    #[cfg(feature = "postgres")]
    pg: PgStore,
    /// The same without the sole writer's read cache: every read goes to the server.
    #[cfg(feature = "postgres")]
    pg_uncached: PgStore,
    // After the store: stopped once the store's connections are closed.
    #[cfg(feature = "postgres")]
    _server: PgServer,
    level: rusty_leveldb::DB,
    anvil: Region<File>,
    anvil_file: File,
}

fn setup() -> Peers {
    let dir = tempfile::tempdir().expect("temporary directory");
    let config = StoreConfig::new("terrane bench");
    let mem = MemStore::open(&config).unwrap();
    let blockfile = BlockFile::open(dir.path().join("world.tbf"), &config).unwrap();
    let blockfile_uncached = BlockFile::open_with(
        dir.path().join("uncached.tbf"),
        &config,
        &terrane_blockfile::BlockFileOptions::new().cache_bytes(0),
    )
    .unwrap();
    #[cfg(feature = "rocksdb")]
    let rocks = RocksStore::open(dir.path().join("rocks"), &config).unwrap();
    #[cfg(feature = "rocksdb")]
    let rocks_no_rows = RocksStore::open_with(
        dir.path().join("rocks-no-rows"),
        &config,
        &terrane_rocksdb::RocksOptions::new().row_cache_bytes(0),
    )
    .unwrap();
    #[cfg(feature = "postgres")]
    let server = PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    #[cfg(feature = "postgres")]
    let pg = PgStore::open(&server.conninfo(), &config).unwrap();
    #[cfg(feature = "postgres")]
    let pg_uncached = PgStore::open_with(
        &server.conninfo(),
        &config,
        &terrane_postgres::PgOptions::new().schema("uncached").cache_bytes(0),
    )
    .unwrap();
    let lopt = rusty_leveldb::Options { create_if_missing: true, ..Default::default() };
    let mut level = rusty_leveldb::DB::open(dir.path().join("leveldb"), lopt).unwrap();
    let anvil_file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(dir.path().join("r.0.0.mca"))
        .unwrap();
    let mut anvil = Region::create(anvil_file.try_clone().unwrap()).unwrap();
    let mut batch = Batch::new();
    let mut lbatch = rusty_leveldb::WriteBatch::default();
    for i in 0..CHUNKS {
        let (x, z, key) = chunk(i);
        let v = chunk_value(i, 0);
        batch.put(tables::CHUNK_L0, key.to_vec(), 0, v.clone());
        lbatch.put(&key, &v);
        anvil.write_compressed_chunk(x, z, CompressionScheme::Uncompressed, &v).unwrap();
    }
    mem.write(&batch).unwrap();
    blockfile.write(&batch).unwrap();
    blockfile_uncached.write(&batch).unwrap();
    #[cfg(feature = "rocksdb")]
    {
        rocks.write(&batch).unwrap();
        rocks.flush().unwrap();
        rocks_no_rows.write(&batch).unwrap();
        rocks_no_rows.flush().unwrap();
    }
    #[cfg(feature = "postgres")]
    {
        pg.write(&batch).unwrap();
        pg_uncached.write(&batch).unwrap();
    }
    level.write(lbatch, false).unwrap();
    level.flush().unwrap();
    Peers {
        _dir: dir,
        mem,
        blockfile,
        blockfile_uncached,
        #[cfg(feature = "rocksdb")]
        rocks,
        #[cfg(feature = "rocksdb")]
        rocks_no_rows,
        #[cfg(feature = "postgres")]
        pg,
        #[cfg(feature = "postgres")]
        pg_uncached,
        #[cfg(feature = "postgres")]
        _server: server,
        level,
        anvil,
        anvil_file,
    }
}

/// The terrane backends measured (RocksDB with the `rocksdb` feature).
fn terrane_stores(p: &Peers) -> Vec<(&'static str, &dyn Store)> {
    #[allow(unused_mut)]
    let mut v: Vec<(&'static str, &dyn Store)> =
        vec![("memory", &p.mem), ("blockfile", &p.blockfile)];
    v.push(("blockfile_uncached", &p.blockfile_uncached));
    #[cfg(feature = "rocksdb")]
    v.push(("rocksdb", &p.rocks));
    #[cfg(feature = "rocksdb")]
    v.push(("rocksdb_no_row_cache", &p.rocks_no_rows));
    #[cfg(feature = "postgres")]
    v.push(("postgres", &p.pg));
    #[cfg(feature = "postgres")]
    v.push(("postgres_uncached", &p.pg_uncached));
    v
}

fn point_reads(c: &mut Criterion, p: &mut Peers) {
    let mut rng = Rng::new(1);
    let picks: Vec<usize> = (0..BATCH).map(|_| rng.below(CHUNKS as u64) as usize).collect();
    let keys: Vec<_> = picks.iter().map(|i| chunk(*i)).collect();
    let mut g = c.benchmark_group("store/point_read_256");
    g.throughput(Throughput::Elements(BATCH as u64));
    for (name, s) in terrane_stores(p) {
        g.bench_function(name, |b| {
            b.iter(|| {
                for (_, _, k) in &keys {
                    black_box(s.get(tables::CHUNK_L0, k).unwrap().unwrap());
                }
            })
        });
    }
    g.bench_function("leveldb", |b| {
        b.iter(|| {
            for (_, _, k) in &keys {
                black_box(p.level.get(k).unwrap());
            }
        })
    });
    g.bench_function("anvil", |b| {
        b.iter(|| {
            for (x, z, _) in &keys {
                black_box(p.anvil.read_chunk(*x, *z).unwrap().unwrap());
            }
        })
    });
    g.finish();
}

/// The same 256 reads through one `multi_get` (one round trip on PostgreSQL, a batched
/// MultiGet on RocksDB, one by one on the others).
fn multi_reads(c: &mut Criterion, p: &mut Peers) {
    let mut rng = Rng::new(1);
    let picks: Vec<usize> = (0..BATCH).map(|_| rng.below(CHUNKS as u64) as usize).collect();
    let keys: Vec<[u8; 32]> = picks.iter().map(|i| chunk(*i).2).collect();
    let refs: Vec<&[u8]> = keys.iter().map(|k| &k[..]).collect();
    let mut g = c.benchmark_group("store/multi_get_256");
    g.throughput(Throughput::Elements(BATCH as u64));
    for (name, s) in terrane_stores(p) {
        g.bench_function(name, |b| {
            b.iter(|| black_box(s.multi_get(tables::CHUNK_L0, &refs).unwrap()))
        });
    }
    g.finish();
}

fn batch_writes(c: &mut Criterion, p: &mut Peers, synced: bool) {
    let values: Vec<(usize, usize, [u8; 32], Vec<u8>)> = (0..BATCH)
        .map(|j| {
            let i = j * (CHUNKS / BATCH);
            let (x, z, k) = chunk(i);
            (x, z, k, chunk_value(i, 1))
        })
        .collect();
    let bytes: usize = values.iter().map(|v| v.3.len()).sum();
    let name = if synced { "store/batch_256x10KB_synced" } else { "store/batch_256x10KB" };
    let mut g = c.benchmark_group(name);
    g.throughput(Throughput::Bytes(bytes as u64));
    let mut version = 1;
    // The memory store has nothing to sync.
    let stores = terrane_stores(p).into_iter().filter(|(n, _)| !synced || *n != "memory");
    for (name, s) in stores {
        // The batch is built outside the timing (a server hands over chunks it encoded; Anvil
        // and LevelDB below write from borrowed bytes).
        g.bench_function(name, |b| {
            b.iter_batched_ref(
                || {
                    version += 1;
                    let mut batch = Batch::with_capacity(BATCH);
                    for (_, _, k, v) in &values {
                        batch.put(tables::CHUNK_L0, k.to_vec(), version, v.clone());
                    }
                    batch.set_sync(synced);
                    batch
                },
                |batch| s.write(batch).unwrap(),
                BatchSize::LargeInput,
            )
        });
    }
    g.bench_function("leveldb", |b| {
        b.iter(|| {
            let mut batch = rusty_leveldb::WriteBatch::default();
            for (_, _, k, v) in &values {
                batch.put(k, v);
            }
            p.level.write(batch, synced).unwrap();
        })
    });
    // Anvil has no batches: 256 separate chunk writes (not atomic), then fsync when synced.
    g.bench_function("anvil", |b| {
        b.iter(|| {
            for (x, z, _, v) in &values {
                p.anvil.write_compressed_chunk(*x, *z, CompressionScheme::Uncompressed, v).unwrap();
            }
            if synced {
                p.anvil_file.sync_data().unwrap();
            }
        })
    });
    if synced {
        // The limit rows: the batch's bytes in one write, then one fdatasync, into a file
        // (on the same filesystem as the stores) that is either overwritten in place (what
        // Anvil's fixed sectors get) or grows (what any append-only log gets: RocksDB's
        // write-ahead log). On ext4 the second also journals the new size and blocks.
        let all: Vec<u8> = values.iter().flat_map(|v| v.3.iter().copied()).collect();
        let dir = tempfile::tempdir().expect("temporary directory");
        for (name, grow) in [("limit_overwrite_fdatasync", false), ("limit_append_fdatasync", true)]
        {
            let f = File::options()
                .create(true)
                .truncate(true)
                .read(true)
                .write(true)
                .open(dir.path().join(name))
                .unwrap();
            g.bench_function(name, |b| {
                let mut at = 0u64;
                b.iter_custom(|iters| {
                    use std::os::unix::fs::FileExt as _;
                    let mut spent = Duration::ZERO;
                    for _ in 0..iters {
                        if !grow || at > 256 << 20 {
                            at = 0;
                            if grow {
                                f.set_len(0).unwrap();
                                f.sync_all().unwrap();
                            }
                        }
                        let t = std::time::Instant::now();
                        f.write_all_at(&all, at).unwrap();
                        f.sync_data().unwrap();
                        spent += t.elapsed();
                        if grow {
                            at += all.len() as u64;
                        }
                    }
                    spent
                })
            });
        }
    }
    g.finish();
}

fn scans(c: &mut Criterion, p: &mut Peers) {
    let mut g = c.benchmark_group("store/ordered_scan_1024");
    g.throughput(Throughput::Elements(CHUNKS as u64));
    for (name, s) in terrane_stores(p) {
        g.bench_function(name, |b| {
            b.iter(|| {
                let mut n = 0;
                for e in s.scan(tables::CHUNK_L0, KeyRange::all()).unwrap() {
                    black_box(e.unwrap());
                    n += 1;
                }
                assert_eq!(n, CHUNKS);
            })
        });
    }
    g.bench_function("leveldb", |b| {
        b.iter(|| {
            let mut it = p.level.new_iter().unwrap();
            let mut n = 0;
            while it.advance() {
                black_box(it.current());
                n += 1;
            }
            assert_eq!(n, CHUNKS);
        })
    });
    // Anvil's order is its index order (x fastest, then z): all 1024 chunks.
    g.bench_function(BenchmarkId::new("anvil", "index order"), |b| {
        b.iter(|| {
            for i in 0..CHUNKS {
                black_box(p.anvil.read_chunk(i % 32, i / 32).unwrap().unwrap());
            }
        })
    });
    g.finish();
}

fn stores(c: &mut Criterion) {
    let mut p = setup();
    point_reads(c, &mut p);
    multi_reads(c, &mut p);
    scans(c, &mut p);
    batch_writes(c, &mut p, false);
    batch_writes(c, &mut p, true);
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_secs(1));
    targets = stores
}
criterion_main!(benches);
