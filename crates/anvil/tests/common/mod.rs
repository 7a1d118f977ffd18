//! Shared test helpers: fixture paths and an independent block-count oracle.
#![allow(dead_code)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

pub use terrane_section::testdata::dir as testdata;

/// Every region folder under `anvil/` (one per Minecraft version), sorted.
pub fn region_dirs() -> Vec<PathBuf> {
    let root = testdata().join("anvil");
    let mut v: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap_or_else(|e| panic!("fixture folder missing: {}: {e}", root.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    assert_eq!(v.len(), 8, "expected 8 region folders under {}", root.display());
    v
}

/// Every `.mca` fixture file.
pub fn region_files() -> Vec<PathBuf> {
    let mut v = Vec::new();
    for d in region_dirs() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "mca") {
                v.push(p);
            }
        }
    }
    v.sort();
    assert_eq!(v.len(), 9, "expected 9 .mca fixtures");
    v
}

/// A fixture file that must exist.
pub fn fixture(rel: &str) -> PathBuf {
    let p = testdata().join(rel);
    assert!(p.is_file(), "fixture missing: {}", p.display());
    p
}

// ---- The oracle: an independent reader (its own header walk, flate2's streaming zlib
// decoder, serde structs through fastnbt, 128-bit window unpacking). It shares no code with the
// crate.

#[derive(Deserialize)]
struct Root {
    #[serde(rename = "DataVersion")]
    data_version: Option<i32>,
    #[serde(rename = "Level")]
    level: Option<Level>,
    sections: Option<Vec<FlatSection>>,
}

#[derive(Deserialize)]
struct Level {
    #[serde(rename = "Sections")]
    sections: Option<Vec<WrappedSection>>,
}

#[derive(Deserialize)]
struct PaletteEntry {
    #[serde(rename = "Name")]
    name: String,
    #[serde(rename = "Properties", default)]
    properties: HashMap<String, String>,
}

#[derive(Deserialize)]
struct WrappedSection {
    #[serde(rename = "Palette")]
    palette: Option<Vec<PaletteEntry>>,
    #[serde(rename = "BlockStates")]
    states: Option<fastnbt::LongArray>,
    #[serde(rename = "Blocks")]
    blocks: Option<fastnbt::ByteArray>,
    #[serde(rename = "Add")]
    add: Option<fastnbt::ByteArray>,
    #[serde(rename = "Data")]
    data: Option<fastnbt::ByteArray>,
}

#[derive(Deserialize)]
struct BlockStates {
    palette: Vec<PaletteEntry>,
    data: Option<fastnbt::LongArray>,
}

#[derive(Deserialize)]
struct FlatSection {
    block_states: Option<BlockStates>,
}

fn name_of(e: &PaletteEntry) -> String {
    let mut props: Vec<String> = e.properties.iter().map(|(k, v)| format!("{k}={v}")).collect();
    props.sort();
    let ns = if e.name.contains(':') { String::new() } else { "minecraft:".into() };
    if props.is_empty() {
        format!("{ns}{}", e.name)
    } else {
        format!("{ns}{}[{}]", e.name, props.join(","))
    }
}

fn count_palette(
    palette: &[PaletteEntry],
    data: Option<&[i64]>,
    padded: bool,
    out: &mut HashMap<String, u64>,
) {
    if palette.len() == 1 && data.is_none() {
        *out.entry(name_of(&palette[0])).or_default() += 4096;
        return;
    }
    let data = data.expect("palette without data");
    let mut bits = 4;
    while (1usize << bits) < palette.len() {
        bits += 1;
    }
    for i in 0..4096 {
        let start = if padded {
            let per = 64 / bits;
            (i / per) * 64 + (i % per) * bits
        } else {
            i * bits
        };
        // A 128-bit window over the two longs the entry may touch.
        let lo = data[start / 64] as u64 as u128;
        let hi = data.get(start / 64 + 1).map_or(0, |&w| w as u64 as u128);
        let v = (((hi << 64) | lo) >> (start % 64)) as u64 & ((1u64 << bits) - 1);
        *out.entry(name_of(&palette[v as usize])).or_default() += 1;
    }
}

fn nib(a: &[i8], i: usize) -> u32 {
    ((a[i / 2] as u8 >> ((i % 2) * 4)) & 15) as u32
}

/// Counts per canonical block state of one chunk's NBT.
pub fn oracle_counts(nbt: &[u8]) -> HashMap<String, u64> {
    let root: Root = fastnbt::from_bytes(nbt).expect("oracle: chunk NBT");
    let padded = root.data_version.unwrap_or(0) >= 2527;
    let mut out = HashMap::new();
    if let Some(level) = root.level {
        for s in level.sections.unwrap_or_default() {
            if let Some(blocks) = &s.blocks {
                for i in 0..4096 {
                    let mut id = blocks[i] as u8 as u32;
                    if let Some(a) = &s.add {
                        id += nib(a, i) << 8;
                    }
                    let d = s.data.as_ref().map_or(0, |a| nib(a, i));
                    let name = if id == 0 && d == 0 {
                        "minecraft:air".to_string()
                    } else {
                        format!("legacy:{id}:{d}")
                    };
                    *out.entry(name).or_default() += 1;
                }
            } else if let Some(p) = &s.palette
                && !p.is_empty()
            {
                count_palette(p, s.states.as_deref(), padded, &mut out);
            }
        }
    } else {
        for s in root.sections.unwrap_or_default() {
            if let Some(bs) = s.block_states
                && !bs.palette.is_empty()
            {
                count_palette(&bs.palette, bs.data.as_deref(), true, &mut out);
            }
        }
    }
    out
}

/// The oracle's view of a region file: `(index, uncompressed NBT)` for every chunk, read
/// with a streaming zlib decoder over the whole sector run (so one-byte-short lengths work).
pub fn oracle_chunks(path: &Path) -> Vec<(usize, Vec<u8>)> {
    use std::io::Read;
    let b = std::fs::read(path).unwrap();
    let mut v = Vec::new();
    for i in 0..1024 {
        let loc = u32::from_be_bytes(b[i * 4..i * 4 + 4].try_into().unwrap());
        if loc == 0 {
            continue;
        }
        let start = (loc >> 8) as usize * 4096;
        let end = start + (loc & 0xFF) as usize * 4096;
        assert_eq!(b[start + 4], 2, "fixtures are zlib only");
        let mut out = Vec::new();
        flate2::read::ZlibDecoder::new(&b[start + 5..end.min(b.len())])
            .read_to_end(&mut out)
            .unwrap();
        v.push((i, out));
    }
    v
}

/// Sums count maps.
pub fn add_counts(into: &mut HashMap<String, u64>, from: &HashMap<String, u64>) {
    for (k, v) in from {
        *into.entry(k.clone()).or_default() += v;
    }
}
