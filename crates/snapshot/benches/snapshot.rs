//! Arena capture/restore beside a WorldEdit-style clipboard, queue overshoot, and schematic
//! read/write beside fastnbt and bare gzip inflate.
//!
//! `cargo bench -p terrane-snapshot` (figures in docs/BENCHMARKS.md).

use std::cell::Cell;
use std::hint::black_box;
use std::io::Read;
use std::rc::Rc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use terrane_section::BlockPos;
use terrane_snapshot::{
    BlockBox, ChunkAccess, ChunkRead, ChunkWrite, Clock, MemChunks, QueueConfig, RestoreQueue,
    Schematic, Snapshot, SubRegion,
};

const COLS: i64 = 24;
const MIN_Y: i64 = -64;
const HEIGHT: i64 = 384;

fn arena_box() -> BlockBox {
    BlockBox::from_size(
        BlockPos::new(0, MIN_Y, 0),
        [COLS as u64 * 16, HEIGHT as u64, COLS as u64 * 16],
    )
    .unwrap()
}

fn hash(x: i64, y: i64, z: i64) -> u64 {
    let h = (x as u64).wrapping_mul(0x9E3779B97F4A7C15)
        ^ (y as u64).wrapping_mul(0xC2B2AE3D27D4EB4F)
        ^ (z as u64).wrapping_mul(0x165667B19E3779F9);
    (h ^ (h >> 29)).wrapping_mul(0xBF58476D1CE4E5B9) >> 32
}

/// A minigame-like arena: deepslate and stone with ores and pockets, dirt, grass, water at
/// sea level, a few builds of varied states above, air up to the top.
fn arena() -> MemChunks {
    let mut w = MemChunks::new();
    let reg = |w: &mut MemChunks, s: &str| w.register(s);
    let air = 0u16;
    let deepslate = reg(&mut w, "minecraft:deepslate[axis=y]");
    let stone = reg(&mut w, "minecraft:stone");
    let ores: Vec<u16> = [
        "coal_ore",
        "iron_ore",
        "copper_ore",
        "gold_ore",
        "granite",
        "diorite",
        "andesite",
        "gravel",
    ]
    .iter()
    .map(|o| reg(&mut w, &format!("minecraft:{o}")))
    .collect();
    let dirt = reg(&mut w, "minecraft:dirt");
    let grass = reg(&mut w, "minecraft:grass_block[snowy=false]");
    let water = reg(&mut w, "minecraft:water[level=0]");
    let builds: Vec<u16> = (0..48)
        .map(|i| {
            let f = ["north", "south", "east", "west"][i % 4];
            let h = ["top", "bottom"][(i / 4) % 2];
            let wood = ["oak", "spruce", "birch", "dark_oak", "acacia", "cherry"][i / 8];
            reg(
                &mut w,
                &format!(
                    "minecraft:{wood}_stairs[facing={f},half={h},shape=straight,waterlogged=false]"
                ),
            )
        })
        .collect();
    let bbox = arena_box();
    for r in bbox.sub_regions() {
        let c = r.chunk;
        let mut ch = w.chunk_mut(c).unwrap();
        for lx in 0..16u32 {
            for lz in 0..16u32 {
                let (x, z) = (c.x * 16 + lx as i64, c.z * 16 + lz as i64);
                let surface = 62 + (hash(x / 8, 0, z / 8) % 9) as i64 - 4;
                for ly in 0..16u32 {
                    let y = c.y * 16 + ly as i64;
                    let h = hash(x, y, z);
                    let b = if y < 0 {
                        if h.is_multiple_of(40) { ores[(h / 40 % 8) as usize] } else { deepslate }
                    } else if y < surface - 3 {
                        if h.is_multiple_of(25) { ores[(h / 25 % 8) as usize] } else { stone }
                    } else if y < surface {
                        dirt
                    } else if y == surface {
                        if surface < 62 { dirt } else { grass }
                    } else if y <= 62 {
                        water
                    } else if y < 100 && (x / 16 + z / 16) % 3 == 0 && h.is_multiple_of(6) {
                        builds[(h / 6 % 48) as usize]
                    } else {
                        air
                    };
                    ch.set(lx, ly, lz, b);
                }
            }
        }
    }
    w
}

/// WorldEdit's clipboard shape: one object reference per block, in a 3-D array.
#[allow(dead_code)]
struct State {
    name: String,
    id: u16,
}

struct Clipboard {
    size: [usize; 3],
    blocks: Vec<Arc<State>>,
}

fn clip_index(size: [usize; 3], x: usize, y: usize, z: usize) -> usize {
    (y * size[2] + z) * size[0] + x
}

fn clipboard_capture(w: &MemChunks, bbox: BlockBox, states: &[Arc<State>]) -> Clipboard {
    let s = bbox.size();
    let size = [s[0] as usize, s[1] as usize, s[2] as usize];
    let mut blocks = vec![states[0].clone(); size[0] * size[1] * size[2]];
    let min = bbox.min();
    for r in bbox.sub_regions() {
        let ch = w.chunk(r.chunk).unwrap();
        for c in 0..r.volume() {
            let (lx, ly, lz) = r.local(c);
            let p = r.pos(c);
            let i = clip_index(
                size,
                (p.x - min.x) as usize,
                (p.y - min.y) as usize,
                (p.z - min.z) as usize,
            );
            blocks[i] = states[ch.get(lx, ly, lz) as usize].clone();
        }
    }
    Clipboard { size, blocks }
}

fn clipboard_restore(clip: &Clipboard, w: &mut MemChunks, bbox: BlockBox) {
    let min = bbox.min();
    let regions: Vec<SubRegion> = bbox.sub_regions().collect();
    for r in regions {
        let mut ch = w.chunk_mut(r.chunk).unwrap();
        for c in 0..r.volume() {
            let (lx, ly, lz) = r.local(c);
            let p = r.pos(c);
            let i = clip_index(
                clip.size,
                (p.x - min.x) as usize,
                (p.y - min.y) as usize,
                (p.z - min.z) as usize,
            );
            ch.set(lx, ly, lz, clip.blocks[i].id);
        }
    }
}

fn arena_benches(c: &mut Criterion) {
    let t = Instant::now();
    let src = arena();
    let bbox = arena_box();
    let volume = bbox.volume() as u64;
    eprintln!("arena: {volume} blocks, generated in {:?}", t.elapsed());
    let states: Vec<Arc<State>> = (0..)
        .map_while(|id| src.name(id).map(|n| Arc::new(State { name: n.to_owned(), id })))
        .collect();

    // Memory, measured once.
    let snap = Snapshot::capture(&src, bbox).unwrap();
    let clip = clipboard_capture(&src, bbox, &states);
    let snap_bytes = snap.heap_bytes();
    let clip_bytes = clip.blocks.len() * std::mem::size_of::<Arc<State>>()
        + states.iter().map(|s| s.name.len() + 48).sum::<usize>();
    eprintln!(
        "memory: snapshot {:.1} MB ({:.3} B/block), clipboard {:.1} MB ({:.3} B/block), ratio {:.1}x",
        snap_bytes as f64 / 1e6,
        snap_bytes as f64 / volume as f64,
        clip_bytes as f64 / 1e6,
        clip_bytes as f64 / volume as f64,
        clip_bytes as f64 / snap_bytes as f64
    );
    drop(clip);

    let mut g = c.benchmark_group("arena_capture");
    g.sample_size(10).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(volume));
    g.bench_function("terrane_snapshot", |b| {
        b.iter_with_large_drop(|| Snapshot::capture(&src, bbox).unwrap())
    });
    g.bench_function("terrane_copy_only", |b| {
        b.iter_with_large_drop(|| Snapshot::copy(&src, bbox).unwrap())
    });
    let names: Vec<String> = states.iter().map(|s| s.name.clone()).collect();
    g.bench_function("terrane_copy_then_encode", |b| {
        b.iter_with_large_drop(|| {
            Snapshot::copy(&src, bbox).unwrap().encode(|id| names[id as usize].clone())
        })
    });
    g.bench_function("worldedit_clipboard", |b| {
        b.iter_with_large_drop(|| clipboard_capture(&src, bbox, &states))
    });
    g.finish();

    let mut dst = MemChunks::new();
    for s in snap.states() {
        dst.register(s);
    }
    let mut g = c.benchmark_group("arena_restore");
    g.sample_size(10).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(volume));
    g.bench_function("terrane_snapshot", |b| b.iter(|| snap.restore(&mut dst, false).unwrap()));
    g.bench_function("terrane_snapshot_diff_unchanged", |b| {
        b.iter(|| snap.restore(&mut dst, true).unwrap())
    });
    let clip = clipboard_capture(&src, bbox, &states);
    g.bench_function("worldedit_clipboard", |b| {
        b.iter(|| clipboard_restore(&clip, &mut dst, bbox))
    });
    g.finish();
    drop(clip);

    // Queue overshoot with the real clock: every tick that ran out of budget, how far past it,
    // and the longest gap between two clock reads (the overshoot bound without preemption).
    let snap = Arc::new(snap);
    for budget_ms in [30u64, 5] {
        let clock = Rc::new(GapClock::default());
        let budget = Duration::from_millis(budget_ms);
        let cfg = QueueConfig { budget, ..QueueConfig::default() };
        let mut q = RestoreQueue::with_clock(cfg, clock.clone());
        let mut over = Vec::new();
        let mut ticks = 0;
        let t = Instant::now();
        for _ in 0..3 {
            q.push(snap.clone(), false);
        }
        let cpu0 = cpu_time();
        while !q.is_empty() {
            clock.last.set(None);
            let r = q.tick(&mut dst);
            ticks += 1;
            if r.budget_exhausted {
                over.push(r.elapsed.saturating_sub(budget));
            }
        }
        let total = t.elapsed();
        let cpu = cpu_time().saturating_sub(cpu0);
        over.sort();
        let mean = over.iter().sum::<Duration>() / over.len().max(1) as u32;
        let pct = |p: usize| {
            over.get((over.len() * p / 100).min(over.len().saturating_sub(1)))
                .copied()
                .unwrap_or_default()
        };
        eprintln!(
            "overshoot (budget {budget_ms} ms, check_every 1024): {} full ticks of {ticks}; \
             mean {mean:?}, p50 {:?}, p90 {:?}, max {:?}; longest gap between clock reads {:?}; \
             3 arena restores in {total:?} wall, {cpu:?} CPU ({:.2} ms per column wall)",
            over.len(),
            pct(50),
            pct(90),
            over.last().copied().unwrap_or_default(),
            clock.max_gap.get(),
            total.as_secs_f64() * 1e3 / (3.0 * (COLS * COLS) as f64)
        );
    }
}

/// The real clock, recording the longest interval between two reads within a tick.
#[derive(Default)]
struct GapClock {
    start: std::cell::OnceCell<Instant>,
    last: Cell<Option<Duration>>,
    max_gap: Cell<Duration>,
}

impl Clock for GapClock {
    fn now(&self) -> Duration {
        let now = self.start.get_or_init(Instant::now).elapsed();
        if let Some(l) = self.last.get() {
            self.max_gap.set(self.max_gap.get().max(now - l));
        }
        self.last.set(Some(now));
        now
    }
}

/// This process's CPU time (user + system), from /proc; zero where unavailable.
fn cpu_time() -> Duration {
    let Ok(s) = std::fs::read_to_string("/proc/self/stat") else { return Duration::ZERO };
    let Some(rest) = s.rsplit(')').next() else { return Duration::ZERO };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11).and_then(|v| v.parse().ok()).unwrap_or(0)
        + f.get(12).and_then(|v| v.parse().ok()).unwrap_or(0);
    Duration::from_millis(ticks * 10)
}

/// A fastnbt tree reader producing what `Schematic::read` does for blocks: palette by id and
/// one id per block.
fn fastnbt_read(gz: &[u8]) -> (usize, Vec<u32>, Vec<String>) {
    use fastnbt::Value;
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(gz).read_to_end(&mut raw).unwrap();
    let v: Value = fastnbt::from_bytes(&raw).unwrap();
    let Value::Compound(root) = v else { panic!() };
    let body = match root.get("Schematic") {
        Some(Value::Compound(s)) => s,
        _ => &root,
    };
    let num = |k: &str| match body.get(k) {
        Some(Value::Short(v)) => *v as u16 as usize,
        Some(Value::Int(v)) => *v as usize,
        _ => panic!("{k}"),
    };
    let n = num("Width") * num("Height") * num("Length");
    let (pal, data) = match body.get("Blocks") {
        Some(Value::Compound(b)) => (b.get("Palette"), b.get("Data")),
        _ => (body.get("Palette"), body.get("BlockData")),
    };
    let Some(Value::Compound(pal)) = pal else { panic!() };
    let mut names = vec![String::new(); pal.len()];
    for (k, v) in pal {
        let Value::Int(i) = v else { panic!() };
        names[*i as usize] = k.clone();
    }
    let Some(Value::ByteArray(data)) = data else { panic!() };
    let mut ids = Vec::with_capacity(n);
    let mut it = data.iter().map(|&b| b as u8);
    while let Some(b) = it.next() {
        let mut v = (b & 0x7F) as u32;
        let mut s = 7;
        let mut b = b;
        while b & 0x80 != 0 {
            b = it.next().unwrap();
            v |= ((b & 0x7F) as u32) << s;
            s += 7;
        }
        assert!((v as usize) < names.len());
        ids.push(v);
    }
    assert_eq!(ids.len(), n);
    (n, ids, names)
}

/// The limit row: a bare inflate, into a buffer sized from the gzip trailer (as the reader
/// sizes its own), so that no reallocation is counted against the peer.
fn inflate(gz: &[u8]) -> Vec<u8> {
    let isize = u32::from_le_bytes(gz[gz.len() - 4..].try_into().unwrap()) as usize;
    let mut raw = Vec::with_capacity(isize + 1);
    flate2::read::GzDecoder::new(gz).read_to_end(&mut raw).unwrap();
    raw
}

fn schematic_benches(c: &mut Criterion) {
    // A big schematic: 6×6 columns of the arena (3.5 M blocks), and a real small file.
    let src = arena();
    let bbox = BlockBox::from_size(BlockPos::new(0, MIN_Y, 0), [96, HEIGHT as u64, 96]).unwrap();
    let big = Snapshot::capture(&src, bbox).unwrap().to_schematic(3955).unwrap();
    drop(src);
    let big_gz = big.write().unwrap();
    let house_gz = terrane_section::testdata::read("schem/smallhouse1.schem");

    for (name, gz) in [("arena_6x6_columns", &big_gz), ("smallhouse1", &house_gz)] {
        let s = Schematic::read(gz).unwrap();
        assert_eq!(fastnbt_read(gz).1, s.ids().to_vec(), "readers agree");
        let mut g = c.benchmark_group(format!("schem_read/{name}"));
        g.sample_size(10)
            .measurement_time(Duration::from_secs(2))
            .warm_up_time(Duration::from_secs(1));
        g.throughput(Throughput::Elements(s.volume() as u64));
        g.bench_function("terrane_walker", |b| b.iter(|| Schematic::read(black_box(gz)).unwrap()));
        g.bench_function("fastnbt_tree", |b| b.iter(|| fastnbt_read(black_box(gz))));
        g.bench_function("gzip_inflate_only", |b| b.iter(|| inflate(black_box(gz))));
        // A floor for any reader with this API: building the owned values it returns (the
        // palette's strings, the block entities' trees) again, by cloning them.
        g.bench_function("owned_output_clone_floor", |b| {
            b.iter(|| (black_box(&s).palette().to_vec(), black_box(&s).block_entities.clone()))
        });
        let raw = inflate(gz);
        g.bench_function("terrane_walker_no_gzip", |b| {
            b.iter(|| Schematic::from_nbt(black_box(&raw)).unwrap())
        });
        g.bench_function("fastnbt_tree_no_gzip", |b| {
            b.iter(|| fastnbt::from_bytes::<fastnbt::Value>(black_box(&raw)).unwrap())
        });
        g.finish();
        eprintln!(
            "{name}: {} blocks, {} bytes gzip, {} bytes NBT",
            s.volume(),
            gz.len(),
            raw.len()
        );
    }

    let mut g = c.benchmark_group("schem_write/arena_6x6_columns");
    g.sample_size(10).measurement_time(Duration::from_secs(2)).warm_up_time(Duration::from_secs(1));
    g.throughput(Throughput::Elements(big.volume() as u64));
    g.bench_function("terrane_write_gzip", |b| b.iter(|| big.write().unwrap()));
    g.bench_function("terrane_write_nbt_only", |b| b.iter(|| big.to_nbt().unwrap()));
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default();
    targets = arena_benches, schematic_benches
}
criterion_main!(benches);
