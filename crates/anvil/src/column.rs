//! One Minecraft chunk column decoded into an exact intermediate form: block-state sections
//! as canonical strings plus palette indices, block entities, entities, and the rest of the
//! chunk's NBT kept verbatim. [`Column::to_nbt`] rebuilds the chunk NBT from it.

use std::collections::HashMap;

use terrane_chunk::block_state;

use crate::column_read::{
    BlockFields, Kept, KeptEntries, RawSection, RawValue, list_type, read_chunk,
};
use crate::column_rest::{RestEntries, RestNode};
use crate::error::{ChunkError, Error, malformed};
use crate::nbt::{self, Compound, Tag};

/// First DataVersion (20w17a, 1.16 snapshot) whose block-state longs are padded (entries
/// never span two longs).
pub const PADDED_SINCE: i32 = 2527;
/// First DataVersion of the flattening (17w47a): palettes with block-state names.
pub const FLATTENING: i32 = 1451;
/// Cells in a 16³ section.
pub const CELLS: usize = 4096;
/// Name given to legacy block id 0 with data 0 (air); other legacy blocks are
/// `legacy:<id>:<data>`.
pub const AIR: &str = "minecraft:air";

/// How the column's NBT is laid out.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Layout {
    /// Pre-1.13: `Level` wrapper, sections with numeric `Blocks`/`Add`/`Data` arrays.
    Legacy,
    /// 1.13–1.17: `Level` wrapper, sections with `Palette` and `BlockStates`.
    Wrapped,
    /// 1.18+ (21w43a+): no wrapper, sections with `block_states {palette, data}`.
    Flat,
}

/// One 16³ section of a column: a palette of canonical block-state strings and one palette
/// index per cell in Minecraft's order (`y << 8 | z << 4 | x`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    /// Section y (block y >> 4).
    pub y: i32,
    /// Canonical block-state strings (`ns:name[k=v,...]`, properties sorted; or
    /// `legacy:<id>:<data>`).
    pub palette: Vec<String>,
    /// 4096 indices into `palette`, index `y << 8 | z << 4 | x`.
    pub blocks: Vec<u16>,
}

impl Section {
    /// The state at local `(x, y, z)` (each 0..16).
    pub fn get(&self, x: usize, y: usize, z: usize) -> &str {
        &self.palette[self.blocks[(y << 8) | (z << 4) | x] as usize]
    }
}

/// A decoded chunk column.
#[derive(Clone, Debug, PartialEq)]
pub struct Column {
    /// Column x.
    pub x: i32,
    /// Column z.
    pub z: i32,
    /// `DataVersion`, absent in chunks older than 1.9.
    pub data_version: Option<i32>,
    /// The NBT layout.
    pub layout: Layout,
    /// Sections that carried block states, ascending y.
    pub sections: Vec<Section>,
    /// Block entity compounds (`TileEntities` / `block_entities`), verbatim.
    pub block_entities: Vec<Compound>,
    /// Entity compounds, verbatim: the chunk's `Entities` (before 1.17), or the entity
    /// chunk's (1.17+, `entities/` folder, see [`external_entities`](Self::external_entities)).
    pub entities: Vec<Compound>,
    /// `Some(DataVersion of the entity chunk)` when the entities come from the 1.17+
    /// `entities/` folder (and go back there on export) rather than from the chunk.
    pub external_entities: Option<i32>,
    /// Everything else of the root compound, verbatim (heightmaps, lighting, biomes, ticks,
    /// structures, status...); sections keep their non-block fields (`Y`, light, biomes).
    pub rest: Compound,
}

/// The canonical block-state string ([`block_state::canonical_from_parts`]) of a palette
/// entry `{Name, Properties}`; integer property values become their decimal text.
pub fn canonical_state(entry: &Compound) -> Result<String, ChunkError> {
    let Some(Tag::String(name)) = entry.get("Name") else {
        return Err(malformed("palette entry without a Name string"));
    };
    let props: Vec<(&str, String)> = match entry.get("Properties") {
        Some(Tag::Compound(props)) => props
            .iter()
            .map(|(k, v)| {
                let v = match v {
                    Tag::String(s) => s.clone(),
                    other => Tag::as_i64(other).map(|i| i.to_string()).unwrap_or_default(),
                };
                (k, v)
            })
            .collect(),
        _ => Vec::new(),
    };
    Ok(block_state::canonical_from_parts(name, props.iter().map(|(k, v)| (*k, v.as_str()))))
}

/// The palette entry `{Name, Properties}` of a block state string (parsed by
/// [`block_state::parse`]: namespaced, properties sorted).
fn state_entry(s: &str) -> Result<Tag, Error> {
    let (name, kv) = block_state::parse(s).map_err(|_| Error::InvalidBlockState(s.to_string()))?;
    let mut m = Compound::with_capacity(2);
    m.insert("Name", Tag::String(name));
    if !kv.is_empty() {
        let props = kv.into_iter().map(|(k, v)| (k, Tag::String(v)));
        m.insert("Properties", Tag::Compound(props.collect()));
    }
    Ok(Tag::Compound(m))
}

/// Bits per entry Minecraft uses for a block-state palette of `n` entries (at least 4).
pub fn bits_for(n: usize) -> u32 {
    let need = usize::BITS - n.saturating_sub(1).leading_zeros();
    need.max(4)
}

/// Number of longs holding 4096 entries of `bits` bits.
pub fn longs_for(bits: u32, padded: bool) -> usize {
    if padded {
        let per = (64 / bits) as usize;
        CELLS.div_ceil(per)
    } else {
        CELLS * bits as usize / 64
    }
}

/// Unpacks 4096 entries of `bits` bits.
pub fn unpack(data: &[i64], bits: u32, padded: bool) -> Option<Vec<u16>> {
    if !(1..=16).contains(&bits) || data.len() < longs_for(bits, padded) {
        return None;
    }
    let mask = (1u64 << bits) - 1;
    let mut out = Vec::with_capacity(CELLS);
    if padded {
        // Whole entries per long, low bits first; the last long's spare entries are dropped.
        let per = (64 / bits) as usize;
        for &w in &data[..CELLS.div_ceil(per)] {
            let mut w = w as u64;
            for _ in 0..per {
                out.push((w & mask) as u16);
                w >>= bits;
            }
        }
        out.truncate(CELLS);
    } else {
        for i in 0..CELLS {
            let bit = i * bits as usize;
            let (w, off) = (bit / 64, (bit % 64) as u32);
            let mut v = (data[w] as u64) >> off;
            if off + bits > 64 {
                v |= (data[w + 1] as u64) << (64 - off);
            }
            out.push((v & mask) as u16);
        }
    }
    Some(out)
}

/// Packs 4096 entries into longs of `bits` bits.
pub fn pack(values: &[u16], bits: u32, padded: bool) -> Vec<i64> {
    let mut out = vec![0u64; longs_for(bits, padded)];
    if padded {
        let per = (64 / bits) as usize;
        for (i, &v) in values.iter().enumerate() {
            out[i / per] |= (v as u64) << ((i % per) as u32 * bits);
        }
    } else {
        for (i, &v) in values.iter().enumerate() {
            let bit = i * bits as usize;
            let (w, off) = (bit / 64, (bit % 64) as u32);
            out[w] |= (v as u64) << off;
            if off + bits > 64 {
                out[w + 1] |= (v as u64) >> (64 - off);
            }
        }
    }
    out.into_iter().map(|v| v as i64).collect()
}

/// [`unpack`] straight from the big-endian bytes of a long array (no `i64` copy), with the
/// largest entry: the import's path. Padded packings (1.16+, nearly every section) take a
/// loop specialised per width.
fn unpack_be(bytes: &[u8], bits: u32, padded: bool) -> Option<(Vec<u16>, u16)> {
    if !(1..=16).contains(&bits) || bytes.len() / 8 < longs_for(bits, padded) {
        return None;
    }
    let mut out = vec![0u16; CELLS];
    let max = if padded {
        match bits {
            1 => padded_be::<1>(bytes, &mut out),
            2 => padded_be::<2>(bytes, &mut out),
            3 => padded_be::<3>(bytes, &mut out),
            4 => padded_be::<4>(bytes, &mut out),
            5 => padded_be::<5>(bytes, &mut out),
            6 => padded_be::<6>(bytes, &mut out),
            7 => padded_be::<7>(bytes, &mut out),
            8 => padded_be::<8>(bytes, &mut out),
            9 => padded_be::<9>(bytes, &mut out),
            10 => padded_be::<10>(bytes, &mut out),
            11 => padded_be::<11>(bytes, &mut out),
            12 => padded_be::<12>(bytes, &mut out),
            13 => padded_be::<13>(bytes, &mut out),
            14 => padded_be::<14>(bytes, &mut out),
            15 => padded_be::<15>(bytes, &mut out),
            _ => padded_be::<16>(bytes, &mut out),
        }
    } else {
        let longs: Vec<i64> =
            bytes.as_chunks::<8>().0.iter().map(|&c| i64::from_be_bytes(c)).collect();
        out = unpack(&longs, bits, false)?;
        out.iter().copied().max().unwrap_or(0)
    };
    Some((out, max))
}

/// The padded packing at a width known at compile time: `64 / B` whole entries per long, low
/// bits first; the last long's spare entries are dropped. Returns the largest entry.
#[inline(always)]
fn padded_be<const B: u32>(bytes: &[u8], out: &mut [u16]) -> u16 {
    let per = (64 / B) as usize;
    let mask = (1u64 << B) - 1;
    let mut max = 0u16;
    let (longs, _) = bytes.as_chunks::<8>();
    for (cells, long) in out.chunks_mut(per).zip(longs) {
        let w = u64::from_be_bytes(*long);
        for (k, cell) in cells.iter_mut().enumerate() {
            let v = ((w >> (k as u32 * B)) & mask) as u16;
            max = max.max(v);
            *cell = v;
        }
    }
    max
}

/// Unpacks block states from the big-endian bytes of a long array, tolerating writers whose
/// packing or width disagrees with the DataVersion: the expected (bits, packing) first, then
/// any width/packing whose length matches exactly.
fn unpack_states(bytes: &[u8], palette_len: usize, padded: bool) -> Result<Vec<u16>, ChunkError> {
    let longs = bytes.len() / 8;
    let bits = bits_for(palette_len);
    let mut tries = vec![(bits, padded), (bits, !padded)];
    for b in bits + 1..=16 {
        tries.push((b, padded));
        tries.push((b, !padded));
    }
    for (b, p) in tries {
        if longs == longs_for(b, p) {
            let (v, max) =
                unpack_be(bytes, b, p).ok_or_else(|| malformed("bad block-state array"))?;
            if max as usize >= palette_len {
                return Err(malformed(format!(
                    "block-state index {max} outside a palette of {palette_len}"
                )));
            }
            return Ok(v);
        }
    }
    Err(malformed(format!(
        "block-state array of {longs} longs fits no packing for a palette of {palette_len}"
    )))
}

fn section_y(s: &Compound) -> Result<i32, ChunkError> {
    checked_section_y(s.get("Y").and_then(Tag::as_i64))
}

/// A section's `Y` value, checked.
fn checked_section_y(y: Option<i64>) -> Result<i32, ChunkError> {
    match y {
        // Minecraft stores Y as a byte; a wider tag is accepted within the byte's range.
        Some(y) if (-128..=127).contains(&y) => Ok(y as i32),
        Some(y) => Err(malformed(format!("section Y {y} outside -128..=127"))),
        None => Err(malformed("section without Y")),
    }
}

fn compounds(v: Option<Tag>, what: &str) -> Result<Vec<Compound>, ChunkError> {
    match v {
        None => Ok(Vec::new()),
        Some(Tag::List(_, l)) => l
            .into_iter()
            .map(|e| match e {
                Tag::Compound(m) => Ok(m),
                _ => Err(malformed(format!("{what} entry is not a compound"))),
            })
            .collect(),
        Some(_) => Err(malformed(format!("{what} is not a list"))),
    }
}

/// A decoded section's palette and indices.
type Decoded = (Vec<String>, Vec<u16>);

fn legacy_name(id: u16, data: u8) -> String {
    if id == 0 && data == 0 { AIR.to_string() } else { format!("legacy:{id}:{data}") }
}

fn nibble(a: &[u8], i: usize) -> u8 {
    let b = a[i / 2];
    if i.is_multiple_of(2) { b & 0x0F } else { b >> 4 }
}

/// Pre-1.13 numeric ids (`Blocks`, with `Add` and `Data` nibbles when present).
fn decode_legacy(b: &BlockFields<'_>) -> Result<Option<Decoded>, ChunkError> {
    let Some(blocks) = b.blocks else {
        return Ok(None);
    };
    for (what, a) in [("Add", b.add), ("Data", b.data)] {
        if a.is_some_and(|a| a.len() != CELLS / 2) {
            return Err(malformed(format!("{what} is not a 2048-byte array")));
        }
    }
    if blocks.len() != CELLS {
        return Err(malformed("Blocks is not 4096 bytes"));
    }
    let mut palette: Vec<String> = Vec::new();
    let mut lookup: HashMap<u16, u16> = HashMap::new();
    let mut out = Vec::with_capacity(CELLS);
    for (i, &id) in blocks.iter().enumerate() {
        let mut id = id as u16;
        if let Some(a) = b.add {
            id |= (nibble(a, i) as u16) << 8;
        }
        let d = b.data.map_or(0, |a| nibble(a, i));
        let key = (id << 4) | d as u16;
        let idx = *lookup.entry(key).or_insert_with(|| {
            palette.push(legacy_name(id, d));
            (palette.len() - 1) as u16
        });
        out.push(idx);
    }
    Ok(Some((palette, out)))
}

/// A palette of canonical names and its packed states (big-endian longs).
/// `uniform_indices`: whether a section of one state without data gets its 4096 zero indices
/// (the import, which never reads them, skips zeroing 8 KiB per such section: 6 % of its time).
fn decode_palette(
    names: Option<Vec<String>>,
    states: Option<&[u8]>,
    padded: bool,
    uniform_indices: bool,
) -> Result<Option<Decoded>, ChunkError> {
    let Some(names) = names.filter(|n| !n.is_empty()) else {
        return Ok(None);
    };
    let blocks = match states {
        None if names.len() == 1 && uniform_indices => vec![0u16; CELLS],
        None if names.len() == 1 => Vec::new(),
        None => return Err(malformed("palette of several states without data")),
        Some(bytes) => unpack_states(bytes, names.len(), padded)?,
    };
    Ok(Some((names, blocks)))
}

/// A chunk's NBT decoded, what is not blocks kept as `V` (see `column_read.rs`).
pub(crate) struct ColumnParts<'a, V> {
    pub data_version: Option<i32>,
    pub layout: Layout,
    pub sections: Vec<Section>,
    pub block_entities: Vec<Compound>,
    pub entities: Vec<Compound>,
    /// [`Column::rest`] before it is a tree.
    pub rest: RestEntries<'a, V>,
}

/// Removes every entry under `key` and returns the last one's value (the one a compound
/// keeps); the values it replaces are checked ([`Kept::check`]) and dropped. One pass, so a
/// hostile chunk repeating the key costs no more than its size.
fn take_last<'a, V: Kept<'a>>(
    entries: &mut KeptEntries<'a, V>,
    key: &str,
) -> Result<Option<V>, ChunkError> {
    if !entries.iter().any(|(k, _)| k == key) {
        return Ok(None);
    }
    let mut last: Option<V> = None;
    let mut others = Vec::with_capacity(entries.len());
    for (k, v) in entries.drain(..) {
        if k == key {
            if let Some(replaced) = last.replace(v) {
                replaced.check()?;
            }
        } else {
            others.push((k, v));
        }
    }
    *entries = others;
    Ok(last)
}

/// The last value under `key` (the one a compound keeps).
fn last<'e, 'a, V>(entries: &'e KeptEntries<'a, V>, key: &str) -> Option<&'e V> {
    entries.iter().rev().find(|(k, _)| k == key).map(|(_, v)| v)
}

/// Decodes a chunk's NBT (see [`Column::from_nbt`]), keeping what is not blocks as `V`;
/// `uniform_indices` as [`decode_palette`] takes it.
pub(crate) fn decode_parts<'a, V: Kept<'a>>(
    bytes: &'a [u8],
    uniform_indices: bool,
) -> Result<ColumnParts<'a, V>, ChunkError> {
    let parts = read_chunk::<V>(bytes)?;
    let mut root = parts.root;
    let data_version = last(&root, "DataVersion").and_then(V::as_i64).map(|v| v as i32);
    let wrapped = parts.level.is_some();
    let mut level = match parts.level {
        Some(l) => l,
        None => std::mem::take(&mut root),
    };
    let padded = !wrapped || data_version.is_some_and(|v| v >= PADDED_SINCE);
    let (sec_key, be_key) =
        if wrapped { ("Sections", "TileEntities") } else { ("sections", "block_entities") };
    // Empty placeholders (with the element type the file gave them) remember which lists
    // the chunk had.
    let be = take_last(&mut level, be_key)?;
    let be_placeholder = be.as_ref().map(V::list_type);
    let block_entities = compounds(be.map(V::into_tag).transpose()?, be_key)?;
    let ents = take_last(&mut level, "Entities")?;
    let entities_placeholder = ents.as_ref().map(V::list_type);
    let entities = compounds(ents.map(V::into_tag).transpose()?, "Entities")?;
    let mut level: RestEntries<'a, V> =
        level.into_iter().map(|(k, v)| (k, RestNode::Kept(v))).collect();
    if let Some(et) = be_placeholder {
        level.push((be_key.into(), RestNode::EmptyList(et)));
    }
    if let Some(et) = entities_placeholder {
        level.push(("Entities".into(), RestNode::EmptyList(et)));
    }
    let raw_sections = parts.sections.unwrap_or_default();
    let mut kept = Vec::with_capacity(raw_sections.len());
    let mut sections: Vec<Section> = Vec::new();
    let mut legacy = false;
    for RawSection { rest, blocks } in raw_sections {
        let y = checked_section_y(last(&rest, "Y").and_then(V::as_i64))?;
        let decoded = if blocks.blocks.is_some() {
            legacy = true;
            decode_legacy(&blocks)?
        } else {
            decode_palette(blocks.palette, blocks.states, padded, uniform_indices)?
        };
        if let Some((palette, blocks)) = decoded {
            if sections.iter().any(|s| s.y == y) {
                return Err(malformed(format!("two sections at Y {y}")));
            }
            sections.push(Section { y, palette, blocks });
        }
        kept.push(rest);
    }
    sections.sort_by_key(|s| s.y);
    level.push((sec_key.into(), RestNode::CompoundList(kept)));
    let rest = if wrapped {
        let mut root: RestEntries<'a, V> =
            root.into_iter().map(|(k, v)| (k, RestNode::Kept(v))).collect();
        root.push(("Level".into(), RestNode::Compound(level)));
        root
    } else {
        level
    };
    let layout = if legacy {
        Layout::Legacy
    } else if wrapped {
        Layout::Wrapped
    } else {
        Layout::Flat
    };
    Ok(ColumnParts { data_version, layout, sections, block_entities, entities, rest })
}

impl Column {
    /// Decodes a chunk's NBT. `pos` is the column position from the region header, used
    /// when the NBT lacks `xPos`/`zPos` and always as the column's position.
    pub fn from_nbt(bytes: &[u8], pos: (i32, i32)) -> Result<Column, ChunkError> {
        let mut p = decode_parts::<Tag>(bytes, true)?;
        let rest = crate::column_rest::to_compound(std::mem::take(&mut p.rest));
        Ok(Column::from_parts(p, pos, rest))
    }

    /// [`from_nbt`](Self::from_nbt) for the import: the column without its
    /// [`rest`](Self::rest), which comes as the payload of the column record's `Rest`
    /// compound instead (sorted NBT, the bytes [`ColumnRecord::encode`] would write for it),
    /// copied from the chunk's bytes without a tree. A section of one state stored without
    /// data has no indices here (`blocks` empty): the conversion never reads them.
    ///
    /// [`ColumnRecord::encode`]: crate::ColumnRecord::encode
    pub(crate) fn from_nbt_for_import(
        bytes: &[u8],
        pos: (i32, i32),
    ) -> Result<(Column, Vec<u8>), ChunkError> {
        let mut p = decode_parts::<RawValue<'_>>(bytes, false)?;
        let rest = crate::column_rest::write_sorted(std::mem::take(&mut p.rest))?;
        Ok((Column::from_parts(p, pos, Compound::new()), rest))
    }

    fn from_parts<V>(p: ColumnParts<'_, V>, pos: (i32, i32), rest: Compound) -> Column {
        Column {
            x: pos.0,
            z: pos.1,
            data_version: p.data_version,
            layout: p.layout,
            sections: p.sections,
            block_entities: p.block_entities,
            entities: p.entities,
            external_entities: None,
            rest,
        }
    }

    /// Merges the entity chunk of this column from the 1.17+ `entities/` folder
    /// (`{DataVersion, Position, Entities}`): its entities are appended and
    /// [`external_entities`](Self::external_entities) is set.
    pub fn add_entity_chunk(&mut self, bytes: &[u8]) -> Result<(), ChunkError> {
        let mut root = nbt::parse(bytes)?;
        let dv = root.get("DataVersion").and_then(Tag::as_i64).unwrap_or(0) as i32;
        let list = compounds(root.remove("Entities"), "Entities")?;
        self.entities.extend(list);
        self.external_entities = Some(dv);
        Ok(())
    }

    /// The entity chunk for the `entities/` folder (`{DataVersion, Position, Entities}`), when
    /// [`external_entities`](Self::external_entities) is set.
    pub fn entity_chunk_nbt(&self) -> Option<Result<Vec<u8>, ChunkError>> {
        let dv = self.external_entities?;
        let mut m = Compound::with_capacity(3);
        m.insert("DataVersion".to_string(), Tag::Int(dv));
        m.insert("Position".to_string(), Tag::IntArray(vec![self.x, self.z]));
        m.insert("Entities".to_string(), Tag::compound_list(self.entities.iter().cloned()));
        Some(nbt::write_root(&m))
    }

    /// True when any block is a pre-1.13 numeric state (`legacy:<id>:<data>`).
    pub fn first_legacy_state(&self) -> Option<&str> {
        self.sections
            .iter()
            .flat_map(|s| s.palette.iter())
            .find(|n| n.starts_with("legacy:"))
            .map(String::as_str)
    }

    /// Number of blocks per canonical state over all sections (unused palette entries do
    /// not appear).
    pub fn block_counts(&self) -> HashMap<String, u64> {
        let mut m: HashMap<String, u64> = HashMap::new();
        for s in &self.sections {
            let mut per = vec![0u64; s.palette.len()];
            for &i in &s.blocks {
                per[i as usize] += 1;
            }
            for (name, n) in s.palette.iter().zip(per) {
                if n > 0 {
                    *m.entry(name.clone()).or_default() += n;
                }
            }
        }
        m
    }

    /// Rebuilds the chunk NBT (uncompressed, deterministic bytes).
    ///
    /// Refuses pre-1.13 columns and columns holding legacy numeric blocks
    /// ([`Error::LegacyExport`]). The
    /// block-state packing follows the DataVersion (padded from 2527), the key names follow
    /// the layout; `xPos`/`zPos` are set to the column's position.
    pub fn to_nbt(&self) -> Result<Vec<u8>, Error> {
        if let Some(name) = self.first_legacy_state() {
            return Err(Error::LegacyExport { x: self.x, z: self.z, name: name.to_string() });
        }
        if self.layout == Layout::Legacy {
            // A pre-1.13 chunk whose remaining blocks happen to be air: its DataVersion still
            // tells Minecraft to read numeric `Blocks`, which cannot be written.
            return Err(Error::LegacyExport { x: self.x, z: self.z, name: AIR.to_string() });
        }
        let mut root = self.rest.clone();
        let wrapped = self.layout != Layout::Flat;
        let padded = !wrapped || self.data_version.is_some_and(|v| v >= PADDED_SINCE);
        let mut level = if wrapped {
            match root.remove("Level") {
                Some(Tag::Compound(m)) => m,
                _ => Compound::new(),
            }
        } else {
            std::mem::take(&mut root)
        };
        let (sec_key, be_key) =
            if wrapped { ("Sections", "TileEntities") } else { ("sections", "block_entities") };
        let mut raw: Vec<Compound> = match level.remove(sec_key) {
            Some(Tag::List(_, l)) => l
                .into_iter()
                .filter_map(|v| if let Tag::Compound(m) = v { Some(m) } else { None })
                .collect(),
            _ => Vec::new(),
        };
        for s in &self.sections {
            let i = match raw.iter().position(|r| section_y(r).ok() == Some(s.y)) {
                Some(i) => i,
                None => {
                    let mut m = Compound::new();
                    m.insert("Y", Tag::Byte(s.y as i8));
                    if !wrapped {
                        let mut b = Compound::new();
                        b.insert(
                            "palette".to_string(),
                            Tag::list(vec![Tag::String("minecraft:plains".into())]),
                        );
                        m.insert("biomes".to_string(), Tag::Compound(b));
                    }
                    raw.push(m);
                    raw.len() - 1
                }
            };
            if s.palette.len() == 1 {
                let palette = vec![state_entry(&s.palette[0])?];
                let sec = &mut raw[i];
                if wrapped {
                    let data = pack(&[0; CELLS], 4, padded);
                    sec.insert("BlockStates", Tag::LongArray(data));
                    sec.insert("Palette", Tag::list(palette));
                } else {
                    let mut bs = Compound::new();
                    bs.insert("palette".to_string(), Tag::list(palette));
                    sec.insert("block_states", Tag::Compound(bs));
                }
                continue;
            }
            // Compact palette in order of first use, as Minecraft's own writer does.
            let mut remap = vec![u16::MAX; s.palette.len()];
            let mut used: Vec<usize> = Vec::new();
            let blocks: Vec<u16> = s
                .blocks
                .iter()
                .map(|&b| {
                    let r = &mut remap[b as usize];
                    if *r == u16::MAX {
                        *r = used.len() as u16;
                        used.push(b as usize);
                    }
                    *r
                })
                .collect();
            let palette =
                used.iter().map(|&i| state_entry(&s.palette[i])).collect::<Result<Vec<_>, _>>()?;
            let bits = bits_for(palette.len());
            let sec = &mut raw[i];
            if wrapped {
                sec.insert("BlockStates", Tag::LongArray(pack(&blocks, bits, padded)));
                sec.insert("Palette", Tag::list(palette));
            } else {
                let mut bs = Compound::new();
                if palette.len() > 1 {
                    bs.insert("data".to_string(), Tag::LongArray(pack(&blocks, bits, true)));
                }
                bs.insert("palette".to_string(), Tag::list(palette));
                sec.insert("block_states", Tag::Compound(bs));
            }
        }
        raw.sort_by_key(|r| section_y(r).unwrap_or(i32::MIN));
        level.insert(sec_key, Tag::compound_list(raw));
        // An empty list keeps the element type of the placeholder the import left.
        let list = |old: Option<&Tag>, v: &[Compound]| {
            let et =
                if v.is_empty() { old.map_or(nbt::id::END, list_type) } else { nbt::id::COMPOUND };
            Tag::List(et, v.iter().cloned().map(Tag::Compound).collect())
        };
        if level.contains_key(be_key) || !self.block_entities.is_empty() {
            let l = list(level.get(be_key), &self.block_entities);
            level.insert(be_key, l);
        }
        if level.contains_key("Entities")
            || (!self.entities.is_empty() && self.external_entities.is_none())
        {
            let l = list(level.get("Entities"), &self.entities);
            level.insert("Entities", l);
        }
        level.insert("xPos", Tag::Int(self.x));
        level.insert("zPos", Tag::Int(self.z));
        if wrapped {
            root.insert("Level", Tag::Compound(level));
        } else {
            root = level;
        }
        if let Some(v) = self.data_version {
            root.insert("DataVersion", Tag::Int(v));
        }
        Ok(nbt::write_root(&root)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The import's unpacking from big-endian bytes gives what [`unpack`] gives from the
        /// longs, and the largest entry, at every width and both packings (a spare long or
        /// none after the ones needed).
        #[test]
        fn unpacking_from_bytes_is_unpack(
            bits in 1..=16u32,
            padded in proptest::bool::ANY,
            spare in 0..2usize,
            seed in proptest::collection::vec(proptest::num::i64::ANY, 1024 + 1),
        ) {
            let longs = &seed[..longs_for(bits, padded) + spare];
            let bytes: Vec<u8> = longs.iter().flat_map(|l| l.to_be_bytes()).collect();
            let want = unpack(longs, bits, padded).unwrap();
            let (got, max) = unpack_be(&bytes, bits, padded).unwrap();
            proptest::prop_assert_eq!(max, *want.iter().max().unwrap());
            proptest::prop_assert_eq!(got, want);
            proptest::prop_assert!(unpack_be(&bytes[8..], bits, padded).is_none() || spare > 0);
        }
    }

    #[test]
    fn packing_roundtrips_both_ways() {
        let vals: Vec<u16> = (0..CELLS).map(|i| ((i * 7919) % 37) as u16).collect();
        for padded in [false, true] {
            for bits in 6..=12 {
                let p = pack(&vals, bits, padded);
                assert_eq!(p.len(), longs_for(bits, padded));
                assert_eq!(unpack(&p, bits, padded).unwrap(), vals);
            }
        }
        // Unpadded 5-bit entries span longs: entry 12 occupies bits 60..65.
        let mut v = vec![0u16; CELLS];
        v[12] = 0b11111;
        let p = pack(&v, 5, false);
        assert_eq!(p[0] as u64 >> 60, 0b1111);
        assert_eq!(p[1] & 1, 1);
        assert_eq!(longs_for(5, true), 342);
        assert_eq!(longs_for(5, false), 320);
    }

    fn legacy_chunk(blocks: Vec<i8>, data: Option<Vec<i8>>) -> Vec<u8> {
        let mut sec = Compound::new();
        sec.insert("Y".to_string(), Tag::Byte(0));
        sec.insert("Blocks".to_string(), Tag::ByteArray(blocks));
        if let Some(d) = data {
            sec.insert("Data".to_string(), Tag::ByteArray(d));
        }
        let mut level = Compound::new();
        level.insert("Sections".to_string(), Tag::compound_list([sec]));
        let mut root = Compound::new();
        root.insert("Level", Tag::Compound(level));
        nbt::write_root(&root).unwrap()
    }

    #[test]
    fn legacy_ids_keep_id_and_data_and_refuse_export() {
        let mut blocks = vec![0i8; CELLS];
        blocks[1] = 1; // x = 1: stone with data 3 (granite in 1.12), high nibble of byte 0
        blocks[256] = -2; // id 254
        let mut data = vec![0i8; CELLS / 2];
        data[0] = 0x30;
        let c = Column::from_nbt(&legacy_chunk(blocks, Some(data)), (0, 0)).unwrap();
        assert_eq!(c.layout, Layout::Legacy);
        assert_eq!(c.sections[0].get(1, 0, 0), "legacy:1:3");
        assert_eq!(c.sections[0].get(0, 1, 0), "legacy:254:0");
        assert_eq!(c.sections[0].get(0, 0, 0), AIR);
        let e = c.to_nbt().unwrap_err();
        assert!(matches!(e, Error::LegacyExport { ref name, .. } if name == "legacy:1:3"));
        // Only air left: still refused (the chunk would claim numeric blocks).
        let air = Column::from_nbt(&legacy_chunk(vec![0; CELLS], None), (0, 0)).unwrap();
        assert_eq!(air.sections[0].palette, [AIR]);
        assert!(matches!(air.to_nbt(), Err(Error::LegacyExport { .. })));
    }

    #[test]
    fn streamed_sections_keep_what_is_not_blocks() {
        // A 1.13-style section with a palette, plus stray `Data` (no `Blocks`) and light.
        let mut sec = Compound::new();
        sec.insert("Y", Tag::Byte(2));
        sec.insert("Data", Tag::ByteArray(vec![7; 3]));
        sec.insert("BlockLight", Tag::ByteArray(vec![1; 2048]));
        let mut props = Compound::new();
        props.insert("level", Tag::Int(3)); // an integer property, as some writers store them
        let mut entry = Compound::new();
        entry.insert("Name", Tag::String("water".into()));
        entry.insert("Properties", Tag::Compound(props));
        sec.insert("Palette", Tag::compound_list([entry]));
        let mut level = Compound::new();
        level.insert("Sections", Tag::compound_list([sec]));
        level.insert("Status", Tag::String("full".into()));
        let mut root = Compound::new();
        root.insert("Level", Tag::Compound(level));
        root.insert("DataVersion", Tag::Int(1631));
        let c = Column::from_nbt(&nbt::write_root(&root).unwrap(), (0, 0)).unwrap();
        assert_eq!(c.layout, Layout::Wrapped);
        assert_eq!(c.sections[0].palette, ["minecraft:water[level=3]"]);
        let Some(Tag::Compound(l)) = c.rest.get("Level") else { panic!() };
        let Some(Tag::List(_, secs)) = l.get("Sections") else { panic!() };
        let Tag::Compound(kept) = &secs[0] else { panic!() };
        assert_eq!(kept.get("Data"), Some(&Tag::ByteArray(vec![7; 3])));
        assert!(kept.contains_key("BlockLight") && !kept.contains_key("Palette"));
        assert_eq!(l.get("Status"), Some(&Tag::String("full".into())));

        // A chunk cannot be both layouts at once.
        root.insert("sections", Tag::List(10, vec![]));
        let e = Column::from_nbt(&nbt::write_root(&root).unwrap(), (0, 0)).unwrap_err();
        assert!(matches!(e, ChunkError::Malformed(_)), "{e}");
    }

    #[test]
    fn empty_lists_keep_their_element_type_through_import_and_export() {
        // Modern Minecraft writes an empty list as TAG_End, older versions with its type.
        for et in [nbt::id::END, nbt::id::COMPOUND] {
            let mut root = Compound::new();
            root.insert("DataVersion", Tag::Int(3955));
            root.insert("sections", Tag::List(nbt::id::COMPOUND, vec![]));
            root.insert("block_entities", Tag::List(et, vec![]));
            let c = Column::from_nbt(&nbt::write_root(&root).unwrap(), (0, 0)).unwrap();
            let out = c.to_nbt().unwrap();
            let key = b"block_entities";
            let at = out.windows(key.len()).position(|w| w == key).unwrap() + key.len();
            assert_eq!(out[at], et, "element type of the exported empty list");
        }
    }

    #[test]
    fn streamed_sections_refuse_mixed_block_fields() {
        let chunk = |sec: Compound, flat: bool| {
            let mut root = Compound::new();
            if flat {
                root.insert("sections", Tag::compound_list([sec]));
            } else {
                let mut level = Compound::new();
                level.insert("Sections", Tag::compound_list([sec]));
                root.insert("Level", Tag::Compound(level));
            }
            Column::from_nbt(&nbt::write_root(&root).unwrap(), (0, 0))
        };
        let mut stone = Compound::new();
        stone.insert("Name", Tag::String("stone".into()));
        // Legacy Blocks beside a palette.
        let mut sec = Compound::new();
        sec.insert("Y", Tag::Byte(0));
        sec.insert("Blocks", Tag::ByteArray(vec![0; CELLS]));
        sec.insert("Palette", Tag::compound_list([stone.clone()]));
        assert!(matches!(chunk(sec, false), Err(ChunkError::Malformed(_))));
        // A field block_states does not have.
        let mut bs = Compound::new();
        bs.insert("palette", Tag::compound_list([stone]));
        bs.insert("extra", Tag::Byte(1));
        let mut sec = Compound::new();
        sec.insert("Y", Tag::Byte(0));
        sec.insert("block_states", Tag::Compound(bs));
        assert!(matches!(chunk(sec, true), Err(ChunkError::Malformed(_))));
    }

    #[test]
    fn bits() {
        assert_eq!(bits_for(1), 4);
        assert_eq!(bits_for(16), 4);
        assert_eq!(bits_for(17), 5);
        assert_eq!(bits_for(4096), 12);
    }

    #[test]
    fn canonical_strings() {
        let mut e = Compound::new();
        e.insert("Name".to_string(), Tag::String("oak_stairs".into()));
        let props: Compound = [("waterlogged", "false"), ("facing", "north"), ("half", "top")]
            .iter()
            .map(|(k, v)| (k.to_string(), Tag::String(v.to_string())))
            .collect();
        e.insert("Properties".to_string(), Tag::Compound(props));
        let s = canonical_state(&e).unwrap();
        assert_eq!(s, "minecraft:oak_stairs[facing=north,half=top,waterlogged=false]");
        let Tag::Compound(back) = state_entry(&s).unwrap() else { panic!("not a compound") };
        assert_eq!(canonical_state(&back).unwrap(), s);
        assert!(matches!(state_entry("a:b[x]"), Err(Error::InvalidBlockState(_))));
        assert!(matches!(state_entry("a:b[x=1"), Err(Error::InvalidBlockState(_))));
    }
}
