//! Biomes between the editions, for `terrane convert`: a Java column's section biomes (4 × 4
//! × 4 cells per section, by name; before 1.18 per column, by number, read by their 1.18+
//! names) to Bedrock's `Data3D` record (a biome id per block, with a
//! height map), and back, through the biome lines of terrane-bedrock's table.

use std::collections::BTreeMap;

use terrane_anvil::biomes::{BIOME_CELLS, SectionBiomes};
use terrane_anvil::legacy_biomes::legacy_sections;
use terrane_bedrock::data3d::{BiomeStorage, Data3D};
use terrane_bedrock::translate::{Fidelity, table};
use terrane_chunk::{BlockId, Chunk};
use terrane_nbt::{Compound, Tag};
use terrane_section::cell_index;

/// The sub-chunk `y` range a Bedrock dimension's `Data3D` covers (its lowest storage first).
pub(crate) fn bedrock_storage_range(dim: u64) -> std::ops::RangeInclusive<i64> {
    match dim {
        0 => -4..=20,
        1 => 0..=7,
        _ => 0..=15,
    }
}

/// The section `y` range of a vanilla Java dimension (1.18+): the Overworld's 24 sections
/// from -4, the Nether's and the End's 16 from 0.
pub(crate) fn java_section_range(dim: u64) -> std::ops::RangeInclusive<i64> {
    match dim {
        0 => -4..=19,
        _ => 0..=15,
    }
}

/// The biome a Bedrock dimension's cells hold when its source had none (plains, the Nether's,
/// the End's).
fn default_bedrock_biome(dim: u64) -> u32 {
    match dim {
        1 => 8,
        2 => 9,
        _ => 1,
    }
}

/// The section biomes a Java column record holds, by section `y` (damaged ones are listed in
/// `damaged` and left out). A column saved before 1.18 keeps its biomes per column, by
/// number (`Level.Biomes`): they are read by their 1.18+ names, the biome cells 1.18 merged
/// into a neighbour counted in `approximated` by their old name.
pub(crate) fn java_sections(
    rest: &Compound,
    damaged: &mut Vec<String>,
    approximated: &mut BTreeMap<String, u64>,
) -> BTreeMap<i64, SectionBiomes> {
    let mut out = BTreeMap::new();
    if let Some(level) = rest.get("Level").and_then(Tag::as_compound) {
        match legacy_sections(level) {
            Ok(Some(b)) => {
                for (name, n) in b.approximated {
                    *approximated.entry(name).or_default() += n;
                }
                return b.sections;
            }
            Ok(None) => {}
            Err(e) => damaged.push(format!("the column's biomes: {e} (plains written)")),
        }
        return out;
    }
    let Some(Tag::List(_, sections)) = rest.get("sections") else { return out };
    for s in sections {
        let Some(s) = s.as_compound() else { continue };
        let Some(y) = s.get("Y").and_then(Tag::as_i64) else { continue };
        match SectionBiomes::from_section(s) {
            Ok(Some(b)) => drop(out.insert(y, b)),
            Ok(None) => {}
            Err(e) => damaged.push(format!("section {y}'s biomes: {e} (plains written)")),
        }
    }
    out
}

/// A Bedrock `Data3D` record for a column of dimension `dim`: its biomes from the Java
/// sections (the nearest section below, else above, for sub-chunks Java has none for; the
/// dimension's default when it has none at all), its heights from the translated chunks
/// (`(y, chunk)`, air being `air`). Approximated biomes are counted in `approximated` (Java
/// biome cells, by name).
pub(crate) fn java_to_data3d(
    dim: u64,
    sections: &BTreeMap<i64, SectionBiomes>,
    chunks: &[(i64, Chunk)],
    air: Option<BlockId>,
    approximated: &mut BTreeMap<String, u64>,
) -> Data3D {
    let t = table();
    let range = bedrock_storage_range(dim);
    let mut ids: BTreeMap<i64, Vec<u32>> = BTreeMap::new();
    for (y, s) in sections {
        let palette: Vec<u32> = s
            .palette
            .iter()
            .map(|name| {
                let (id, f) = t.java_biome_to_bedrock(name);
                if f != Fidelity::Exact {
                    let n =
                        s.indices.iter().filter(|&&i| s.palette[usize::from(i)] == *name).count();
                    *approximated.entry(name.clone()).or_default() += n as u64;
                }
                id
            })
            .collect();
        ids.insert(*y, s.indices.iter().map(|&i| palette[usize::from(i)]).collect());
    }
    let mut storages = Vec::new();
    for cy in range.clone() {
        let source =
            ids.range(..=cy).next_back().or_else(|| ids.range(cy..).next()).map(|(_, v)| v);
        let storage = match source {
            None => BiomeStorage::filled(default_bedrock_biome(dim)),
            Some(v) => {
                let mut s = BiomeStorage::filled(0);
                for x in 0..16 {
                    for z in 0..16 {
                        for y in 0..16 {
                            s.ids[x * 256 + z * 16 + y] = v[((y / 4) * 4 + z / 4) * 4 + x / 4];
                        }
                    }
                }
                s
            }
        };
        storages.push(storage);
    }
    // Heights: one above the highest block that is not air, from the dimension's bottom.
    let bottom = *range.start() * 16;
    let mut heights = [0i16; 256];
    let mut sorted: Vec<&(i64, Chunk)> = chunks.iter().collect();
    sorted.sort_by_key(|c| std::cmp::Reverse(c.0));
    for (cy, v) in sorted {
        if v.palette().iter().all(|&b| Some(b) == air) {
            continue; // all air (most of a real column's chunks)
        }
        for x in 0..16u32 {
            for z in 0..16u32 {
                let h = &mut heights[(z * 16 + x) as usize];
                if *h != 0 {
                    continue;
                }
                for y in (0..16u32).rev() {
                    if Some(v.get_index(cell_index(x, y, z))) != air {
                        let top = cy * 16 + i64::from(y) + 1 - bottom;
                        *h = top.clamp(0, i64::from(i16::MAX)) as i16;
                        break;
                    }
                }
            }
        }
    }
    Data3D { heights, storages }
}

/// The Java section biomes of a Bedrock `Data3D` record, for the sections `ys` of a column
/// of dimension `dim`: each 4 × 4 × 4 cell takes the biome of its lowest corner block.
/// Approximated biomes are counted in `approximated` (Java biome cells, by Bedrock name).
pub(crate) fn data3d_to_java(
    dim: u64,
    d: &Data3D,
    ys: impl IntoIterator<Item = i64>,
    approximated: &mut BTreeMap<String, u64>,
) -> Vec<(i64, SectionBiomes)> {
    let t = table();
    let first = *bedrock_storage_range(dim).start();
    let mut out = Vec::new();
    for y in ys {
        let Some(s) = usize::try_from(y - first).ok().and_then(|i| d.storages.get(i)) else {
            continue;
        };
        let mut palette: Vec<String> = Vec::new();
        let mut indices = [0u8; BIOME_CELLS];
        for (i, e) in indices.iter_mut().enumerate() {
            let (qx, qz, qy) = (i % 4, (i / 4) % 4, i / 16);
            let id = s.get(qx * 4, qy * 4, qz * 4);
            let (name, f) = t.bedrock_biome_to_java(id);
            if f != Fidelity::Exact {
                let label = t
                    .bedrock_biome_name(id)
                    .map_or_else(|| format!("bedrock biome {id}"), str::to_string);
                *approximated.entry(label).or_default() += 1;
            }
            *e = match palette.iter().position(|p| p == name) {
                Some(p) => p as u8,
                None => {
                    palette.push(name.to_string());
                    (palette.len() - 1) as u8
                }
            };
        }
        out.push((y, SectionBiomes { palette, indices }));
    }
    out
}

/// `sections` as the `sections` list of a Java column record's rest (`Y` and `biomes` each).
pub(crate) fn java_section_list(sections: &[(i64, SectionBiomes)]) -> Tag {
    Tag::compound_list(sections.iter().map(|(y, b)| {
        let mut c = Compound::new();
        c.insert("Y".to_string(), Tag::Byte(*y as i8));
        c.insert("biomes".to_string(), Tag::Compound(b.to_compound()));
        c
    }))
}
