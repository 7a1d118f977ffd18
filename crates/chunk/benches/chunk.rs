//! terrane chunk v1 beside Minecraft's representations of the same blocks: decode and read
//! all 4096 blocks, encode, random get and random set, for palettes of 1, 2, 16, 256 and 4096
//! entries and for real chunk sections (1.17, 1.18.2 and 1.21.1 worlds from the testdata).
//!
//! Peers, in the same groups:
//! - `mc_container`: a PalettedContainer as in Minecraft: `u64` words, entries never straddle
//!   a word, at least 4 bits (0 for a single-entry palette), palette in first-seen order
//!   (searched linearly up to 4 bits, through a hash map beyond), re-sized (copied) at one
//!   more bit when full;
//! - `mc_nbt`: the section's `block_states` compound (palette of names + properties, long
//!   array) through fastnbt: decoding resolves the palette names to global ids and fills a
//!   container, encoding maps the ids back to names.
//!
//! Before the benches run, a table of bytes per 16³ (terrane vs Minecraft) goes to stdout.

use std::collections::{BTreeMap, HashMap};
use std::hint::black_box;
use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use fastnbt::LongArray;
use serde::{Deserialize, Serialize};
use terrane_chunk::{BlockId, Chunk, ChunkView, Schema};

// ---------------------------------------------------------------- Minecraft's container

/// A PalettedContainer: local palette in first-seen order, `u64` words, no straddling, the
/// index checked on every access (as Minecraft's bit storages do).
#[derive(Clone)]
struct McContainer {
    palette: Vec<u32>,
    index: HashMap<u32, u32>,
    bits: u32,
    words: Vec<u64>,
}

fn mc_bits(n: usize) -> u32 {
    if n <= 1 { 0 } else { (usize::BITS - (n - 1).leading_zeros()).max(4) }
}

impl McContainer {
    fn with_bits(bits: u32) -> Self {
        let words = 64u32.checked_div(bits).map_or(0, |per| 4096usize.div_ceil(per as usize));
        McContainer { palette: Vec::new(), index: HashMap::new(), bits, words: vec![0; words] }
    }

    fn from_blocks(blocks: &[u32]) -> Self {
        let mut seen: Vec<u32> = Vec::new();
        let mut set = HashMap::new();
        for &b in blocks {
            if set.insert(b, ()).is_none() {
                seen.push(b);
            }
        }
        let mut c = Self::with_bits(mc_bits(seen.len()));
        for b in seen {
            c.index.insert(b, c.palette.len() as u32);
            c.palette.push(b);
        }
        for (i, &b) in blocks.iter().enumerate() {
            let l = c.index[&b];
            c.put(i, l);
        }
        c
    }

    #[inline]
    fn raw(&self, i: usize) -> u32 {
        // Minecraft's storages check the index on every get and set (`Validate
        // .inclusiveBetween` in `SimpleBitStorage` and `ZeroBitStorage`), as terrane does.
        assert!(i < 4096, "index {i}");
        if self.bits == 0 {
            return 0;
        }
        let per = (64 / self.bits) as usize;
        let w = self.words[i / per];
        ((w >> ((i % per) as u32 * self.bits)) & ((1 << self.bits) - 1)) as u32
    }

    #[inline]
    fn put(&mut self, i: usize, v: u32) {
        assert!(i < 4096, "index {i}");
        if self.bits == 0 {
            return;
        }
        let per = (64 / self.bits) as usize;
        let shift = (i % per) as u32 * self.bits;
        let m = ((1u64 << self.bits) - 1) << shift;
        let w = &mut self.words[i / per];
        *w = (*w & !m) | (u64::from(v) << shift);
    }

    #[inline]
    fn get(&self, i: usize) -> u32 {
        self.palette[self.raw(i) as usize]
    }

    fn set(&mut self, i: usize, block: u32) {
        // Minecraft: a linear palette up to 4 bits, a hash map beyond.
        let found = if self.bits <= 4 {
            self.palette.iter().position(|&b| b == block).map(|l| l as u32)
        } else {
            self.index.get(&block).copied()
        };
        let l = match found {
            Some(l) => l,
            None => {
                if self.palette.len() >= 1 << self.bits {
                    // Full: copy into a container one bit wider (at least 4).
                    let mut wider = Self::with_bits((self.bits + 1).max(4));
                    for j in 0..4096 {
                        let v = self.raw(j);
                        wider.put(j, v);
                    }
                    self.bits = wider.bits;
                    self.words = wider.words;
                }
                let l = self.palette.len() as u32;
                self.palette.push(block);
                self.index.insert(block, l);
                l
            }
        };
        self.put(i, l);
    }

    /// Bytes of the network encoding: bits byte, palette (varints), long count, longs.
    fn network_len(&self) -> usize {
        let varint = |v: u64| (64 - v.max(1).leading_zeros()).div_ceil(7) as usize;
        let pal: usize = if self.bits == 0 {
            varint(u64::from(self.palette[0]))
        } else {
            varint(self.palette.len() as u64)
                + self.palette.iter().map(|&b| varint(u64::from(b))).sum::<usize>()
        };
        1 + pal + varint(self.words.len() as u64) + 8 * self.words.len()
    }
}

// ---------------------------------------------------------------- NBT sections

#[derive(Serialize, Deserialize, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
struct NbtState {
    #[serde(rename = "Name")]
    name: String,
    #[serde(rename = "Properties", default, skip_serializing_if = "Option::is_none")]
    properties: Option<BTreeMap<String, String>>,
}

#[derive(Serialize, Deserialize, Clone)]
struct NbtStates {
    palette: Vec<NbtState>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<LongArray>,
}

#[derive(Deserialize)]
struct ModernSection {
    block_states: Option<NbtStates>,
}

#[derive(Deserialize)]
struct ModernChunk {
    sections: Option<Vec<ModernSection>>,
}

#[derive(Deserialize)]
struct OldSection {
    #[serde(rename = "Palette")]
    palette: Option<Vec<NbtState>>,
    #[serde(rename = "BlockStates")]
    block_states: Option<LongArray>,
}

#[derive(Deserialize)]
struct OldLevel {
    #[serde(rename = "Sections")]
    sections: Option<Vec<OldSection>>,
}

#[derive(Deserialize)]
struct OldChunk {
    #[serde(rename = "Level")]
    level: Option<OldLevel>,
    #[serde(rename = "DataVersion")]
    data_version: Option<i32>,
}

/// Global block-state ids: every distinct (name, properties) gets the next id.
#[derive(Default)]
struct States {
    states: Vec<NbtState>,
    ids: HashMap<NbtState, u32>,
}

impl States {
    fn id(&mut self, s: &NbtState) -> u32 {
        if let Some(&i) = self.ids.get(s) {
            return i;
        }
        let i = self.states.len() as u32;
        self.states.push(s.clone());
        self.ids.insert(s.clone(), i);
        i
    }

    fn synthetic(n: usize) -> Self {
        let mut s = States::default();
        for i in 0..n {
            s.id(&NbtState {
                name: format!("minecraft:block_{i}"),
                properties: (i % 3 == 0).then(|| {
                    BTreeMap::from([("facing".to_owned(), ["north", "east"][i % 2].to_owned())])
                }),
            });
        }
        s
    }
}

/// Unpacks a no-straddle long array (Minecraft 1.16+) of `bits` per entry.
fn unpack_mc(data: &[i64], n: usize) -> Option<Vec<u32>> {
    if n <= 1 {
        return Some(vec![0; 4096]);
    }
    let bits = mc_bits(n);
    let per = (64 / bits) as usize;
    if data.len() != 4096usize.div_ceil(per) {
        return None;
    }
    Some(
        (0..4096)
            .map(|i| {
                ((data[i / per] as u64 >> ((i % per) as u32 * bits)) & ((1 << bits) - 1)) as u32
            })
            .collect(),
    )
}

use terrane_section::testdata::dir as testdata;

/// Real sections (1.16+ no-straddle layouts): global block-state ids per cell, in terrane's
/// cell order (x << 8 | y << 4 | z) converted from Minecraft's (y << 8 | z << 4 | x).
fn real_sections(states: &mut States) -> Vec<Vec<u32>> {
    let root = testdata();
    let mut out = Vec::new();
    let mut add = |palette: &[NbtState], data: Option<&[i64]>, states: &mut States| {
        if palette.is_empty() {
            return;
        }
        let Some(locals) = unpack_mc(data.unwrap_or(&[]), palette.len()) else {
            return;
        };
        let ids: Vec<u32> = palette.iter().map(|s| states.id(s)).collect();
        let mut cells = vec![0u32; 4096];
        for (mc, &l) in locals.iter().enumerate() {
            let (y, z, x) = (mc >> 8, (mc >> 4) & 15, mc & 15);
            let Some(&id) = ids.get(l as usize) else { return };
            cells[terrane_section::cell_index(x as u32, y as u32, z as u32) as usize] = id;
        }
        out.push(cells);
    };
    for region in ["anvil/1.18.2/r.0.0.mca", "anvil/1.21.1/r.0.0.mca"] {
        let path = root.join(region);
        let file = std::fs::File::open(&path)
            .unwrap_or_else(|e| panic!("missing fixture {}: {e}", path.display()));
        let mut r = fastanvil::Region::from_stream(file).expect("region header");
        for chunk in r.iter().flatten() {
            let Ok(c) = fastnbt::from_bytes::<ModernChunk>(&chunk.data) else { continue };
            for s in c.sections.into_iter().flatten() {
                if let Some(bs) = s.block_states {
                    add(&bs.palette, bs.data.as_deref(), states);
                }
            }
        }
    }
    for name in ["1.17.0.chunk", "1.17.1.chunk", "etho.chunk", "etho-max-heights.chunk"] {
        let path = root.join("chunk-nbt").join(name);
        let bytes = std::fs::read(&path)
            .unwrap_or_else(|e| panic!("missing fixture {}: {e}", path.display()));
        let c: OldChunk = fastnbt::from_bytes(&bytes).expect("chunk NBT");
        if c.data_version.unwrap_or(0) < 2566 {
            continue; // before 1.16 entries straddle words
        }
        for s in c.level.and_then(|l| l.sections).into_iter().flatten() {
            if let (Some(p), Some(d)) = (s.palette, s.block_states) {
                add(&p, Some(&d), states);
            }
        }
    }
    assert!(!out.is_empty(), "no 1.16+ sections found under {}", root.display());
    out
}

/// Synthetic blocks: `n` distinct ids, every one used, in random cells.
fn synthetic(n: usize, seed: u64) -> Vec<u32> {
    let mut s = seed | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut cells: Vec<u32> = (0..4096).map(|i| (i % n) as u32).collect();
    for i in (1..4096).rev() {
        cells.swap(i, (next() % (i as u64 + 1)) as usize);
    }
    cells
}

fn random_indices(seed: u64) -> Vec<u16> {
    let mut s = seed | 1;
    (0..4096)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s % 4096) as u16
        })
        .collect()
}

/// One section in every representation.
struct Case {
    name: String,
    blocks: Vec<u32>,
    chunk: Chunk,
    bytes: Vec<u8>,
    mc: McContainer,
    nbt: Vec<u8>,
}

fn schema_for(max_id: u32) -> Schema {
    let mut s = Schema::new();
    for i in 0..=max_id {
        s.add_block(&format!("b{i}"), &[]).unwrap();
    }
    s
}

fn nbt_of(mc: &McContainer, states: &States) -> Vec<u8> {
    let data = (mc.bits > 0).then(|| LongArray::new(mc.words.iter().map(|&w| w as i64).collect()));
    let s = NbtStates {
        palette: mc.palette.iter().map(|&b| states.states[b as usize].clone()).collect(),
        data,
    };
    fastnbt::to_bytes(&s).expect("NBT encodes")
}

fn make_case(name: String, blocks: Vec<u32>, schema: &Schema, states: &States) -> Case {
    let mut chunk = Chunk::new(BlockId(blocks[0]));
    for (i, &b) in blocks.iter().enumerate() {
        chunk.set_index(i as u16, BlockId(b));
    }
    chunk.compact();
    let bytes = chunk.encode(schema);
    let mc = McContainer::from_blocks(&blocks);
    let nbt = nbt_of(&mc, states);
    Case { name, blocks, chunk, bytes, mc, nbt }
}

fn mc_from_nbt(nbt: &[u8], states: &States) -> McContainer {
    let s: NbtStates = fastnbt::from_bytes(nbt).expect("NBT decodes");
    let palette: Vec<u32> = s.palette.iter().map(|p| states.ids[p]).collect();
    let bits = mc_bits(palette.len());
    let index = palette.iter().enumerate().map(|(l, &b)| (b, l as u32)).collect();
    McContainer {
        palette,
        index,
        bits,
        words: s
            .data
            .map(|d| d.into_inner().into_iter().map(|w| w as u64).collect())
            .unwrap_or_default(),
    }
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(10)
        .measurement_time(Duration::from_secs(2))
        .warm_up_time(Duration::from_secs(1))
}

fn bench(c: &mut Criterion) {
    // Cases: synthetic palettes, then a sample of real sections.
    let mut states = States::synthetic(4096);
    let real = real_sections(&mut states);
    let max_id = states.states.len() as u32;
    let schema = schema_for(max_id);
    let mut cases: Vec<Case> = [1usize, 2, 16, 256, 4096]
        .iter()
        .map(|&n| make_case(format!("p{n}"), synthetic(n, n as u64 * 7919), &schema, &states))
        .collect();

    // Bytes per 16³ over every real section, and per synthetic palette.
    println!(
        "\nbytes per 16^3 section: terrane v1 vs Minecraft (network container, NBT block_states)"
    );
    println!(
        "| case | sections | terrane | MC network | MC NBT | terrane / network | terrane / NBT |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let row = |name: &str, n: usize, t: usize, net: usize, nbt: usize| {
        println!(
            "| {name} | {n} | {:.0} | {:.0} | {:.0} | {:.2} | {:.2} |",
            t as f64 / n as f64,
            net as f64 / n as f64,
            nbt as f64 / n as f64,
            t as f64 / net as f64,
            t as f64 / nbt as f64
        );
    };
    for case in &cases {
        row(&case.name, 1, case.bytes.len(), case.mc.network_len(), case.nbt.len());
    }
    let (mut t, mut net, mut nbt) = (0, 0, 0);
    let mut real_cases = Vec::new();
    for (k, blocks) in real.iter().enumerate() {
        let case = make_case(format!("real{k}"), blocks.clone(), &schema, &states);
        t += case.bytes.len();
        net += case.mc.network_len();
        nbt += case.nbt.len();
        real_cases.push(case);
    }
    row("real (all)", real.len(), t, net, nbt);
    // Real sections with a non-trivial palette.
    let mixed: Vec<&Case> = real_cases.iter().filter(|c| c.chunk.palette().len() > 1).collect();
    let (t, net, nbt) = mixed
        .iter()
        .fold((0, 0, 0), |a, c| (a.0 + c.bytes.len(), a.1 + c.mc.network_len(), a.2 + c.nbt.len()));
    row("real (palette > 1)", mixed.len(), t, net, nbt);
    println!();

    // The real benchmark case: the section with the median palette among mixed ones.
    let mut by_palette: Vec<&Case> = mixed.clone();
    by_palette.sort_by_key(|c| c.chunk.palette().len());
    let median = by_palette[by_palette.len() / 2];
    let median = make_case(
        format!("real_p{}", median.chunk.palette().len()),
        median.blocks.clone(),
        &schema,
        &states,
    );
    cases.push(median);

    let idx = random_indices(42);
    for case in &cases {
        let mut g = c.benchmark_group(format!("chunk/{}", case.name));
        g.throughput(Throughput::Elements(4096));

        // Decode and read all 4096 blocks.
        g.bench_function("decode_read_all/terrane_view", |b| {
            b.iter(|| {
                let v = ChunkView::parse(black_box(&case.bytes)).unwrap();
                let mut sum = 0u64;
                v.for_each_block(|_, blk| sum += u64::from(blk.0));
                sum
            })
        });
        let mut out = [BlockId(0); 4096];
        g.bench_function("decode_read_all/terrane_bulk", |b| {
            b.iter(|| {
                ChunkView::parse_blocks(black_box(&case.bytes), &mut out).unwrap();
                black_box(&out);
            })
        });
        // The limit: the same 16 KB output copied from memory (a `memcpy`).
        let all: Vec<BlockId> = (0..4096u16).map(|i| case.chunk.get_index(i)).collect();
        g.bench_function("decode_read_all/limit_memcpy", |b| {
            b.iter(|| {
                out.copy_from_slice(black_box(&all));
                black_box(&out);
            })
        });
        g.bench_function("decode_read_all/terrane_view_block", |b| {
            b.iter(|| {
                let v = ChunkView::parse(black_box(&case.bytes)).unwrap();
                (0..4096u16).map(|i| u64::from(v.block(i).0)).sum::<u64>()
            })
        });
        g.bench_function("decode_read_all/terrane_owned", |b| {
            b.iter(|| {
                let c = Chunk::decode(black_box(&case.bytes), &schema).unwrap();
                (0..4096u16).map(|i| u64::from(c.get_index(i).0)).sum::<u64>()
            })
        });
        g.bench_function("decode_read_all/mc_container_from_longs", |b| {
            b.iter(|| {
                let mc = McContainer {
                    palette: case.mc.palette.clone(),
                    index: HashMap::new(),
                    bits: case.mc.bits,
                    words: black_box(&case.mc.words).clone(),
                };
                (0..4096).map(|i| u64::from(mc.get(i))).sum::<u64>()
            })
        });
        g.bench_function("decode_read_all/mc_nbt", |b| {
            b.iter(|| {
                let mc = mc_from_nbt(black_box(&case.nbt), &states);
                (0..4096).map(|i| u64::from(mc.get(i))).sum::<u64>()
            })
        });

        // Encode.
        g.bench_function("encode/terrane", |b| b.iter(|| black_box(&case.chunk).encode(&schema)));
        let mut dirty = case.chunk.clone();
        let b0 = dirty.get_index(0);
        dirty.set_index(0, BlockId(max_id));
        dirty.set_index(0, b0);
        g.bench_function("encode/terrane_after_edit", |b| {
            b.iter(|| black_box(&dirty).encode(&schema))
        });
        g.bench_function("encode/mc_nbt", |b| b.iter(|| nbt_of(black_box(&case.mc), &states)));

        // Random get (4096 per iteration).
        g.bench_function("get_random/terrane_owned", |b| {
            b.iter(|| {
                idx.iter().map(|&i| u64::from(case.chunk.get_index(black_box(i)).0)).sum::<u64>()
            })
        });
        let view = ChunkView::parse(&case.bytes).unwrap();
        g.bench_function("get_random/terrane_view", |b| {
            b.iter(|| idx.iter().map(|&i| u64::from(view.block(black_box(i)).0)).sum::<u64>())
        });
        g.bench_function("get_random/mc_container", |b| {
            b.iter(|| {
                idx.iter().map(|&i| u64::from(case.mc.get(black_box(i) as usize))).sum::<u64>()
            })
        });

        // Random set (4096 per iteration) of blocks from the section's own palette.
        let values: Vec<u32> = idx.iter().rev().map(|&i| case.blocks[i as usize]).collect();
        // Like for like: the Minecraft container is cloned with its palette's hash map built,
        // so terrane's chunk is cloned after one set that built its palette index (a chunk
        // builds it on its first lookup past 16 entries).
        let mut warm = case.chunk.clone();
        let first = warm.get_index(0);
        warm.set_index(0, BlockId(values[0]));
        warm.set_index(0, first);
        g.bench_function("set_random/terrane_owned", |b| {
            b.iter_batched_ref(
                || warm.clone(),
                |c| {
                    for (&i, &v) in idx.iter().zip(&values) {
                        c.set_index(i, BlockId(v));
                    }
                },
                BatchSize::SmallInput,
            )
        });
        g.bench_function("set_random/mc_container", |b| {
            b.iter_batched_ref(
                || case.mc.clone(),
                |c| {
                    for (&i, &v) in idx.iter().zip(&values) {
                        c.set(i as usize, v);
                    }
                },
                BatchSize::SmallInput,
            )
        });
        // Write all 4096 blocks (a generator filling a section): the bulk write against
        // 4096 single sets, and Minecraft's container built from the same blocks.
        let all: Box<[BlockId; 4096]> = Box::new(std::array::from_fn(|i| BlockId(case.blocks[i])));
        g.bench_function("set_all/terrane_bulk", |b| {
            b.iter(|| {
                let mut c = Chunk::new(BlockId(0));
                c.set_blocks(black_box(&all));
                c
            })
        });
        g.bench_function("set_all/terrane_owned", |b| {
            b.iter(|| {
                let mut c = Chunk::new(BlockId(0));
                for (i, &v) in black_box(&all).iter().enumerate() {
                    c.set_index(i as u16, v);
                }
                c
            })
        });
        g.bench_function("set_all/mc_container", |b| {
            b.iter(|| McContainer::from_blocks(black_box(&case.blocks)))
        });
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = config();
    targets = bench
}
criterion_main!(benches);
