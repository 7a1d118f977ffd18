//! Tiered store benchmarks on real terrain (an Anvil region converted to cubic chunks):
//! point reads and writes at each level, promotion and demotion, bytes per chunk at each
//! level vs the region's `.mca`; on MemStore, terrane-blockfile and RocksDB (terrane-rocksdb);
//! fastanvil reading the same region is the peer. `tick_save_latency` puts PostgreSQL
//! (terrane-postgres, a throwaway server over a Unix socket) beside the local stores: p50 and
//! p99 of synced tick saves that change 64 chunks.

mod common;

use std::cell::{Cell, RefCell};
use std::hint::black_box;
use std::path::Path;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use terrane_cluster::{TickSave, TieredStore, TieredStoreBuilder};
use terrane_section::GridPos;
use terrane_section::keys::Level;
use terrane_store::{MemStore, ReadView, Store, StoreConfig};

/// x = 1 tick, y = 1000 ticks: `settle` moves everything to exactly the level it wants.
fn builder(t: &common::Terrain) -> TieredStoreBuilder {
    TieredStore::builder(t.schema.clone())
        .l0_idle_ticks(1)
        .l1_idle_ticks(1000)
        .sync_saves(false)
        .check_entity_refs(false)
}

type Dyn = Box<dyn Store>;

fn backends(dir: &Path) -> Vec<(&'static str, Dyn)> {
    let cfg = StoreConfig::new("terrane cluster bench");
    let bf = terrane_blockfile::BlockFile::open(dir.join("bench.tbf"), &cfg).unwrap();
    let rocks = terrane_rocksdb::RocksStore::open(dir.join("bench-rocksdb"), &cfg).unwrap();
    vec![
        ("mem", Box::new(MemStore::new()) as Dyn),
        ("blockfile", Box::new(bf) as Dyn),
        ("rocksdb", Box::new(rocks) as Dyn),
    ]
}

/// Sum of the sizes of the files in `dir` (recursively), and of its SST and blob files.
fn dir_bytes(dir: &Path) -> (u64, u64) {
    let (mut all, mut data) = (0, 0);
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let m = e.metadata().unwrap();
        if m.is_dir() {
            let (a, d) = dir_bytes(&e.path());
            all += a;
            data += d;
        } else {
            all += m.len();
            let name = e.file_name();
            let name = name.to_string_lossy();
            if name.ends_with(".sst") || name.ends_with(".blob") {
                data += m.len();
            }
        }
    }
    (all, data)
}

/// RocksDB bytes on disk holding the terrain at `level`: filled, settled, flushed and fully
/// compacted (no overwritten values left), then every file of the directory summed.
fn rocksdb_size(t: &common::Terrain, level: Level) {
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("size-rocksdb");
    let cfg = StoreConfig::new("terrane cluster bench");
    let rocks = std::sync::Arc::new(terrane_rocksdb::RocksStore::open(&path, &cfg).unwrap());
    let mut ts = builder(t).open(Box::new(rocks.clone()) as Dyn).unwrap();
    let mut tick = 0;
    fill(&mut ts, t, &mut tick);
    settle(&mut ts, level, &mut tick);
    let li = usize::from(level.index());
    assert_eq!(ts.verify().unwrap().chunks[li], t.chunks.len());
    ts.flush().unwrap();
    rocks.compact().unwrap();
    drop(ts);
    drop(rocks);
    let (all, data) = dir_bytes(&path);
    eprintln!(
        "{level:?}: rocksdb directory {} B ({:.0} B/chunk, {:.2}x the .mca), of which SST/blob files {} B ({:.0} B/chunk, {:.2}x the .mca)",
        all,
        all as f64 / t.chunks.len() as f64,
        all as f64 / t.mca_bytes as f64,
        data,
        data as f64 / t.chunks.len() as f64,
        data as f64 / t.mca_bytes as f64,
    );
}

/// Saves every terrain chunk (to L0), 256 per tick save.
fn fill(ts: &mut TieredStore<Dyn>, t: &common::Terrain, tick: &mut u64) {
    for batch in t.chunks.chunks(256) {
        let mut save = TickSave::new();
        for (p, b) in batch {
            save.put_chunk(0, *p, b.clone());
        }
        *tick += 1;
        ts.save_tick(*tick, &save).unwrap();
    }
}

/// Moves every unloaded chunk down to `level` (L0: nothing to do).
fn settle(ts: &mut TieredStore<Dyn>, level: Level, tick: &mut u64) {
    if level >= Level::L1 {
        *tick += 10;
        ts.maintain(*tick).unwrap();
    }
    if level == Level::L2 {
        *tick += 2000;
        ts.maintain(*tick).unwrap();
    }
}

/// A stride coprime with `n`, so `i * stride % n` visits every index once per `n` steps.
fn stride(n: usize) -> usize {
    let gcd = |mut a: usize, mut b: usize| {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    };
    (7919..).find(|s| gcd(*s, n) == 1).unwrap()
}

fn sizes(t: &common::Terrain) {
    eprintln!(
        "terrain: {} columns, {} cubic chunks, {} block states; {} = {} bytes ({:.0} B/column, {:.0} B per cubic chunk)",
        t.columns,
        t.chunks.len(),
        t.schema.blocks().len(),
        common::REGION,
        t.mca_bytes,
        t.mca_bytes as f64 / t.columns as f64,
        t.mca_bytes as f64 / t.chunks.len() as f64,
    );
    let raw: usize = t.chunks.iter().map(|(_, b)| b.len()).sum();
    eprintln!("chunk v1 bytes: {raw} total, {:.0} B/chunk", raw as f64 / t.chunks.len() as f64);
    for level in Level::ALL {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("size.tbf");
        let cfg = StoreConfig::new("terrane cluster bench");
        let bf = terrane_blockfile::BlockFile::open(&path, &cfg).unwrap();
        let mut ts = builder(t).open(Box::new(bf) as Dyn).unwrap();
        let mut tick = 0;
        fill(&mut ts, t, &mut tick);
        settle(&mut ts, level, &mut tick);
        let stats = ts.verify().unwrap();
        let li = usize::from(level.index());
        assert_eq!(stats.chunks[li], t.chunks.len());
        ts.flush().unwrap();
        drop(ts);
        // A fresh file holding only the final state (no free blocks left by the moves).
        let fresh = tmp.path().join("fresh.tbf");
        {
            let src = terrane_blockfile::BlockFile::open(&path, &cfg).unwrap();
            let dst = terrane_blockfile::BlockFile::open(&fresh, &cfg).unwrap();
            for table in terrane_store::tables::ALL {
                let mut b = terrane_store::Batch::new();
                for e in src.scan(table, terrane_store::KeyRange::all()).unwrap() {
                    let (k, o) = e.unwrap();
                    b.put(table, k, o.version, o.data);
                }
                dst.write(&b).unwrap();
            }
            dst.flush().unwrap();
        }
        let file = std::fs::metadata(&fresh).unwrap().len();
        eprintln!(
            "{level:?}: {} keys, values {} B ({:.0} B/chunk), blockfile {} B ({:.0} B/chunk, {:.2}x the .mca)",
            stats.keys[li],
            stats.bytes[li],
            stats.bytes[li] as f64 / t.chunks.len() as f64,
            file,
            file as f64 / t.chunks.len() as f64,
            file as f64 / t.mca_bytes as f64,
        );
        rocksdb_size(t, level);
    }
}

fn point_reads(c: &mut Criterion) {
    let t = common::load();
    sizes(&t);
    let tmp = tempfile::tempdir().unwrap();
    let mut g = c.benchmark_group("tiered_read");
    g.sample_size(10).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(1));
    let n = t.chunks.len();
    let s = stride(n);
    for (name, store) in backends(tmp.path()) {
        let mut ts = builder(&t).open(store).unwrap();
        let mut tick = 0;
        fill(&mut ts, &t, &mut tick);
        for level in Level::ALL {
            settle(&mut ts, level, &mut tick);
            // Cold data is flushed data: RocksDB pins a value in a cached block, but copies
            // one out of its memtable (600 KB for an L2 cluster, whatever part is read).
            ts.flush().unwrap();
            assert_eq!(ts.level_of(0, t.chunks[n / 2].0).unwrap(), Some(level));
            let mut i = 0usize;
            g.bench_function(BenchmarkId::new(format!("{name}/{level:?}"), "get_chunk"), |b| {
                b.iter(|| {
                    i = (i + s) % n;
                    black_box(ts.get_chunk(0, t.chunks[i].0).unwrap())
                })
            });
        }
    }
    // Peer: fastanvil reading one column (all its sections) out of the in-memory .mca.
    let mut region = fastanvil::Region::from_stream(std::io::Cursor::new(t.mca.clone())).unwrap();
    let mut i = 0usize;
    g.bench_function(BenchmarkId::new("fastanvil/mca", "read_column_and_parse"), |b| {
        b.iter(|| {
            i = (i + 7) % t.present.len();
            let (x, z) = t.present[i];
            let data = region.read_chunk(x, z).unwrap().unwrap();
            black_box(fastanvil::JavaChunk::from_bytes(&data).unwrap())
        })
    });
    g.finish();
}

fn writes_and_moves(c: &mut Criterion) {
    let t = common::load();
    let tmp = tempfile::tempdir().unwrap();
    let n = t.chunks.len();
    let s = stride(n);
    let mut g = c.benchmark_group("tiered_write");
    g.sample_size(10).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_secs(1));
    for (name, store) in backends(tmp.path()) {
        let ts = RefCell::new(builder(&t).open(store).unwrap());
        let tick = Cell::new(0u64);
        let mut tk = 0;
        fill(&mut ts.borrow_mut(), &t, &mut tk);
        tick.set(tk);
        // Writes and loads of chunks at `level`: at L1 and L2 they include the promotion.
        // Every `n` operations everything is moved back down to `level`, untimed.
        g.throughput(Throughput::Elements(1));
        for level in Level::ALL {
            for op in ["put_chunk", "load_chunk"] {
                if level == Level::L0 && op == "load_chunk" {
                    continue;
                }
                // At L2, one chunk per L1 cell per round: a promotion from L2 moves the
                // chunk's 4³ neighbourhood to L1, so its neighbours are no longer at L2.
                let targets: Vec<usize> = if level == Level::L2 {
                    let mut seen = std::collections::HashSet::new();
                    (0..n).filter(|&k| seen.insert(t.chunks[k].0.section(2))).collect()
                } else {
                    (0..n).map(|k| (k * s) % n).collect()
                };
                let m = targets.len();
                let mut i = 0usize;
                g.bench_function(BenchmarkId::new(format!("{name}/{level:?}"), op), |b| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        let mut ts = ts.borrow_mut();
                        for _ in 0..iters {
                            if i.is_multiple_of(m) {
                                let mut tk = tick.get();
                                settle(&mut ts, level, &mut tk);
                                tick.set(tk);
                            }
                            let (p, bytes) = &t.chunks[targets[i % m]];
                            i += 1;
                            let start = Instant::now();
                            if op == "put_chunk" {
                                ts.put_chunk(0, *p, bytes.clone(), tick.get()).unwrap();
                            } else {
                                black_box(ts.load_chunk(0, *p, tick.get()).unwrap());
                            }
                            total += start.elapsed();
                            ts.unload_chunk(0, *p, tick.get());
                        }
                        total
                    })
                });
            }
        }
        // Demotion passes over every chunk: L0 → L1, and L1 → L2 (time per chunk moved).
        g.throughput(Throughput::Elements(n as u64));
        for level in [Level::L1, Level::L2] {
            let id = BenchmarkId::new(format!("{name}/maintain"), format!("to_{level:?}"));
            g.bench_function(id, |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut ts = ts.borrow_mut();
                    for _ in 0..iters {
                        let mut tk = tick.get() + 10;
                        let mut save = TickSave::new();
                        for (p, b) in &t.chunks {
                            save.put_chunk(0, *p, b.clone());
                        }
                        ts.save_tick(tk, &save).unwrap();
                        if level == Level::L2 {
                            settle(&mut ts, Level::L1, &mut tk);
                            tk += 2000;
                        } else {
                            tk += 10;
                        }
                        let start = Instant::now();
                        let r = ts.maintain(tk).unwrap();
                        total += start.elapsed();
                        assert!(r.l0_to_l1 + r.l1_to_l2 > 0);
                        tick.set(tk);
                    }
                    total
                })
            });
        }
    }
    g.finish();
}

/// The container alone: validating a cluster and reading one chunk, against parsing every
/// chunk of it (what a format without an offset table would cost).
fn container(c: &mut Criterion) {
    use terrane_cluster::{ClusterBuilder, ClusterView, Scale};
    let t = common::load();
    let mut g = c.benchmark_group("cluster_view");
    g.sample_size(10).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_secs(1));
    for scale in Scale::ALL {
        // The fullest cluster of this scale in the terrain.
        let mut best: Option<ClusterBuilder<'_>> = None;
        let mut clusters = std::collections::BTreeMap::new();
        for (p, b) in &t.chunks {
            clusters
                .entry(scale.cluster_of(*p))
                .or_insert_with(|| ClusterBuilder::new(scale))
                .insert(scale.local_index(*p), b.as_slice())
                .unwrap();
        }
        for (_, b) in clusters {
            if best.as_ref().is_none_or(|x| b.len() > x.len()) {
                best = Some(b);
            }
        }
        let bytes = best.unwrap().build().unwrap();
        let view = ClusterView::new(&bytes).unwrap();
        let present: Vec<u16> = view.iter().map(|(i, _)| i).collect();
        let label = format!("{scale:?}/{}_chunks/{}_bytes", present.len(), bytes.len());
        let mut i = 0;
        g.bench_function(BenchmarkId::new("validate_and_get_one", &label), |b| {
            b.iter(|| {
                i = (i + 7) % present.len();
                let v = ClusterView::new(black_box(&bytes)).unwrap();
                black_box(v.get(present[i]))
            })
        });
        g.bench_function(BenchmarkId::new("parse_every_chunk", &label), |b| {
            b.iter(|| {
                let v = ClusterView::new(black_box(&bytes)).unwrap();
                for (_, blob) in v.iter() {
                    black_box(terrane_chunk::ChunkView::parse(blob).unwrap());
                }
            })
        });
    }
    g.finish();
}

/// Prints the p50 and p99 of `times` (criterion reports means; a tick budget cares about the
/// tail).
fn print_tail(id: &str, mut times: Vec<Duration>, what: &str) {
    times.sort();
    println!(
        "{id}: p50 {:?} p99 {:?} ({} {what})",
        times[times.len() / 2],
        times[times.len() * 99 / 100],
        times.len()
    );
}

/// Synced tick saves that change 64 chunks (real terrain) on each persistent backend: p50 and
/// p99 of 300 saves, printed (criterion reports means; a tick budget cares about the tail).
fn tick_save_latency(_c: &mut Criterion) {
    let t = common::load();
    let tmp = tempfile::tempdir().unwrap();
    let server = terrane_postgres::testing::PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let cfg = StoreConfig::new("terrane cluster bench");
    let pg = terrane_postgres::PgStore::open(&server.conninfo(), &cfg).unwrap();
    // The same saves fenced on one lease (terrane-lease), as a server sharing a world saves:
    // one precondition checked inside each save.
    fn fenced<S: Store + 'static>(store: S) -> (Dyn, Vec<terrane_store::Precondition>) {
        let store = std::sync::Arc::new(store);
        let leases = terrane_lease::Leases::new(std::sync::Arc::clone(&store), "bench", 600_000);
        let lease = leases.unwrap().acquire(terrane_lease::AreaId::new(0, 0), 1).unwrap();
        (Box::new(store), terrane_lease::preconditions([&lease]))
    }
    let shared = terrane_postgres::PgStore::open_with(
        &server.conninfo(),
        &cfg,
        &terrane_postgres::PgOptions::new().schema("fenced").shared_writers(true),
    )
    .unwrap();
    let rocks =
        |name: &str| terrane_rocksdb::RocksStore::open(tmp.path().join(name), &cfg).unwrap();
    let stores: Vec<(&str, (Dyn, Vec<terrane_store::Precondition>))> = vec![
        (
            "blockfile",
            (
                Box::new(
                    terrane_blockfile::BlockFile::open(tmp.path().join("l.tbf"), &cfg).unwrap(),
                ),
                Vec::new(),
            ),
        ),
        ("rocksdb", (Box::new(rocks("l-rocks")), Vec::new())),
        ("rocksdb_fenced", fenced(rocks("l-rocks-fenced"))),
        ("postgres", (Box::new(pg), Vec::new())),
        ("postgres_fenced", fenced(shared)),
    ];
    for (name, (store, fence)) in stores {
        let mut ts = builder(&t).sync_saves(true).open(store).unwrap();
        ts.set_fence(fence);
        let mut tick = 0;
        fill(&mut ts, &t, &mut tick);
        let mut times = Vec::with_capacity(300);
        for round in 0..300usize {
            let mut save = TickSave::new();
            for k in 0..64 {
                let (p, b) = &t.chunks[(round * 64 + k) % t.chunks.len()];
                save.put_chunk(0, *p, b.clone());
            }
            tick += 1;
            let start = Instant::now();
            ts.save_tick(tick, &save).unwrap();
            times.push(start.elapsed());
        }
        print_tail(&format!("tick_save_latency/64_chunks_synced/{name}"), times, "saves");
    }
}

/// What keeping a lease costs: one renewal (a synced, fenced batch of one small object), p50
/// and p99 of 300, on each persistent backend. A server renews each lease about three times
/// per time to live.
fn lease_renewal(_c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    let server = terrane_postgres::testing::PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let cfg = StoreConfig::new("terrane lease bench");
    let shared = terrane_postgres::PgOptions::new().shared_writers(true);
    let stores: Vec<(&str, Dyn)> = vec![
        (
            "blockfile",
            Box::new(terrane_blockfile::BlockFile::open(tmp.path().join("r.tbf"), &cfg).unwrap()),
        ),
        (
            "rocksdb",
            Box::new(terrane_rocksdb::RocksStore::open(tmp.path().join("r-rocks"), &cfg).unwrap()),
        ),
        (
            "postgres",
            Box::new(
                terrane_postgres::PgStore::open_with(&server.conninfo(), &cfg, &shared).unwrap(),
            ),
        ),
    ];
    for (name, store) in stores {
        let leases = terrane_lease::Leases::new(store, "bench", 10_000).unwrap();
        let mut lease = leases.acquire(terrane_lease::AreaId::new(0, 0), 0).unwrap();
        let mut times = Vec::with_capacity(300);
        for i in 1..=300u64 {
            let start = Instant::now();
            lease = leases.renew(&lease, i).unwrap();
            times.push(start.elapsed());
        }
        print_tail(&format!("lease_renewal/{name}"), times, "renewals");
    }
}

/// One player handed off between two servers of one PostgreSQL world: server a's save that
/// deletes the player from its area and writes it into b's, fenced on both leases, beside the
/// same player saved in place (fenced on a's lease only). p50 and p99 of 300 each.
fn hand_off_latency(_c: &mut Criterion) {
    use std::collections::BTreeSet;
    use std::sync::Arc;
    use terrane_lease::{AreaId, Leases, area_precondition, preconditions};
    let t = common::load();
    let server = terrane_postgres::testing::PgServer::start().unwrap_or_else(|e| panic!("{e}"));
    let cfg = StoreConfig::new("terrane hand-off bench");
    let open = || -> Arc<dyn Store> {
        Arc::new(
            terrane_postgres::PgStore::open_with(
                &server.conninfo(),
                &cfg,
                &terrane_postgres::PgOptions::new().shared_writers(true),
            )
            .unwrap(),
        )
    };
    let (area_a, area_b) = (AreaId::new(0, 0), AreaId::new(1, 0));
    let mut sides = Vec::new();
    for (id, area) in [("a", area_a), ("b", area_b)] {
        let store = open();
        let lease = Leases::new(Arc::clone(&store), id, 600_000).unwrap().acquire(area, 1).unwrap();
        let mut ts = builder(&t).server(id).sync_saves(true).open(store).unwrap();
        ts.set_areas(Some(BTreeSet::from([area])));
        ts.set_fence(preconditions([&lease]));
        sides.push((ts, area, lease.epoch));
    }
    let player = vec![7u8; 300];
    let uuid = [42u8; 16];
    let mut first = TickSave::new();
    first.put_area_entity(area_a, uuid, player.clone());
    sides[0].0.save_tick(1, &first).unwrap();
    let (mut in_place, mut hand_off) = (Vec::new(), Vec::new());
    for round in 0..600u64 {
        // Even rounds: a saves the player in place; odd rounds: the holder hands it over and
        // the other side hands it back the next time.
        let holder = (round / 2 % 2) as usize;
        let other = 1 - holder;
        let (from, to, to_epoch) = (sides[holder].1, sides[other].1, sides[other].2);
        let mut save = TickSave::new();
        let start;
        if round % 2 == 0 {
            save.put_area_entity(from, uuid, player.clone());
            start = Instant::now();
            sides[holder].0.save_tick(round + 2, &save).unwrap();
            in_place.push(start.elapsed());
        } else {
            save.hand_off_entity(uuid, from, to, player.clone())
                .expect(area_precondition(to, Some(to_epoch)));
            start = Instant::now();
            sides[holder].0.save_tick(round + 2, &save).unwrap();
            hand_off.push(start.elapsed());
        }
    }
    for (name, times) in [("save_in_place", in_place), ("hand_off", hand_off)] {
        print_tail(&format!("hand_off_latency/postgres/{name}"), times, "synced saves");
    }
}

criterion_group!(
    benches,
    container,
    point_reads,
    writes_and_moves,
    tick_save_latency,
    lease_renewal,
    hand_off_latency
);
criterion_main!(benches);
