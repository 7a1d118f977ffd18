//! Reading a chunk's NBT for [`Column::from_nbt`](crate::Column::from_nbt) in one pass: the
//! sections' block fields (palettes, packed states, legacy id arrays) are taken straight from
//! the bytes as they stream by, never built as a tree, since the import only turns them into
//! canonical names and indices; everything else of the chunk becomes a tree, kept verbatim.

use std::borrow::Cow;

use crate::column::{canonical_from_parts, malformed};
use crate::error::ChunkError;
use crate::nbt::{Compound, Tag, id};
use terrane_nbt::Reader;

/// A section's block fields, as found.
#[derive(Default)]
pub(crate) struct BlockFields<'a> {
    /// Canonical state names of `Palette` / `block_states.palette` (`Some(empty)` for an empty
    /// palette).
    pub palette: Option<Vec<String>>,
    /// The big-endian longs of `BlockStates` / `block_states.data`.
    pub states: Option<&'a [u8]>,
    /// Pre-1.13 `Blocks`, `Add`, `Data` byte arrays.
    pub blocks: Option<&'a [u8]>,
    /// `Add`.
    pub add: Option<&'a [u8]>,
    /// `Data`.
    pub data: Option<&'a [u8]>,
}

/// One section: the fields kept verbatim (`Y`, light, biomes...) and its block fields.
pub(crate) struct RawSection<'a> {
    pub rest: Compound,
    pub blocks: BlockFields<'a>,
}

/// A chunk's NBT: the root compound without its sections (and, when wrapped, without
/// `Level`), the `Level` compound (1.17 and older) without its sections, and the sections.
pub(crate) struct ChunkParts<'a> {
    pub root: Compound,
    pub level: Option<Compound>,
    pub sections: Option<Vec<RawSection<'a>>>,
}

/// Reads a root compound (named root; trailing bytes ignored).
pub(crate) fn read_chunk(bytes: &[u8]) -> Result<ChunkParts<'_>, ChunkError> {
    let mut r = Reader::new(bytes);
    let t = r.u8()?;
    if t != id::COMPOUND {
        return Err(terrane_nbt::Error::RootNotCompound { found: t }.into());
    }
    r.raw_string()?;
    let root = entries(&mut r, 1, "sections", true)?;
    match root.level {
        Some(_) if root.sections.is_some() => {
            Err(malformed("both a Level compound and root sections"))
        }
        Some(level) => {
            Ok(ChunkParts { root: root.rest, level: Some(level.rest), sections: level.sections })
        }
        None => Ok(ChunkParts { root: root.rest, level: None, sections: root.sections }),
    }
}

/// A compound's entries as [`entries`] reads them.
struct Entries<'a> {
    rest: Compound,
    sections: Option<Vec<RawSection<'a>>>,
    /// The `Level` compound (1.17 and older), read the same way one level down.
    level: Option<Box<Entries<'a>>>,
}

/// A compound's entries up to its `TAG_End`, the entries at nesting `depth`: the list under
/// `sec_key` streamed as sections (`flat`: the 1.18+ layout), a `Level` compound at the root
/// read the same way with `Sections`, everything else a tree. Entries are collected, then made
/// a compound: linear however many keys a file holds.
fn entries<'a>(
    r: &mut Reader<'a>,
    depth: usize,
    sec_key: &str,
    flat: bool,
) -> Result<Entries<'a>, ChunkError> {
    let mut rest: Vec<(String, Tag)> = Vec::new();
    let (mut sections, mut level) = (None, None);
    loop {
        let t = r.u8()?;
        if t == id::END {
            break;
        }
        let key = r.string()?;
        if key == sec_key {
            sections = Some(self::sections(r, t, sec_key, flat, depth + 1)?);
        } else if flat && key == "Level" && t == id::COMPOUND {
            level = Some(Box::new(entries(r, depth + 1, "Sections", false)?));
        } else {
            rest.push((key, r.payload(t, depth)?));
        }
    }
    Ok(Entries { rest: rest.into_iter().collect(), sections, level })
}

/// A list of section compounds of type `t` (at nesting `depth`).
fn sections<'a>(
    r: &mut Reader<'a>,
    t: u8,
    what: &str,
    flat: bool,
    depth: usize,
) -> Result<Vec<RawSection<'a>>, ChunkError> {
    if t != id::LIST {
        return Err(malformed(format!("{what} is not a list")));
    }
    let (et, n) = r.list_head()?;
    if n > 0 && et != id::COMPOUND {
        return Err(malformed(format!("{what} entry is not a compound")));
    }
    let mut out = Vec::with_capacity(n.min(64));
    for _ in 0..n {
        out.push(section(r, flat, depth + 1)?);
    }
    Ok(out)
}

/// One section compound's entries (the compound at nesting `depth`).
fn section<'a>(r: &mut Reader<'a>, flat: bool, depth: usize) -> Result<RawSection<'a>, ChunkError> {
    let mut rest: Vec<(String, Tag)> = Vec::new();
    let mut b = BlockFields::default();
    loop {
        let t = r.u8()?;
        if t == id::END {
            break;
        }
        let key = r.str()?;
        match (flat, key.as_ref()) {
            (true, "block_states") => {
                if t != id::COMPOUND {
                    return Err(malformed("block_states is not a compound"));
                }
                loop {
                    let t = r.u8()?;
                    if t == id::END {
                        break;
                    }
                    match r.raw_string()? {
                        b"palette" => b.palette = Some(palette(r, t, depth + 2)?),
                        b"data" => b.states = Some(long_array(r, t)?),
                        _ => return Err(malformed("unexpected fields in block_states")),
                    }
                }
            }
            (false, "Palette") => b.palette = Some(palette(r, t, depth + 1)?),
            (false, "BlockStates") => b.states = Some(long_array(r, t)?),
            (false, "Blocks") if t == id::BYTE_ARRAY => b.blocks = Some(byte_array(r)?),
            (false, "Blocks") => return Err(malformed("Blocks is not a byte array")),
            (false, "Add") if t == id::BYTE_ARRAY => b.add = Some(byte_array(r)?),
            (false, "Data") if t == id::BYTE_ARRAY => b.data = Some(byte_array(r)?),
            _ => rest.push((key.into_owned(), r.payload(t, depth + 1)?)),
        }
    }
    if b.blocks.is_some() && (b.palette.is_some() || b.states.is_some()) {
        return Err(malformed("a section with both legacy Blocks and a palette"));
    }
    if b.blocks.is_none() {
        // `Add` and `Data` only mean block ids beside `Blocks`: otherwise they stay verbatim.
        for (k, v) in [("Add", b.add.take()), ("Data", b.data.take())] {
            if let Some(v) = v {
                rest.push((k.to_string(), Tag::ByteArray(v.iter().map(|&x| x as i8).collect())));
            }
        }
    }
    Ok(RawSection { rest: rest.into_iter().collect(), blocks: b })
}

fn byte_array<'a>(r: &mut Reader<'a>) -> Result<&'a [u8], ChunkError> {
    let n = r.len(1)?;
    Ok(r.take(n)?)
}

fn long_array<'a>(r: &mut Reader<'a>, t: u8) -> Result<&'a [u8], ChunkError> {
    if t != id::LONG_ARRAY {
        return Err(malformed("block-state data is not a long array"));
    }
    let n = r.len(8)?;
    Ok(r.take(n * 8)?)
}

/// A palette list (at nesting `depth`): each `{Name, Properties}` entry straight to its
/// canonical name.
fn palette(r: &mut Reader<'_>, t: u8, depth: usize) -> Result<Vec<String>, ChunkError> {
    if t != id::LIST {
        return Err(malformed("palette is not a list"));
    }
    let (et, n) = r.list_head()?;
    if n > 0 && et != id::COMPOUND {
        return Err(malformed("palette entry is not a compound"));
    }
    if n > 4096 {
        return Err(malformed("palette larger than 4096 entries"));
    }
    let mut names = Vec::with_capacity(n);
    let mut props: Vec<(Cow<'_, str>, Cow<'_, str>)> = Vec::new();
    for _ in 0..n {
        let mut name: Option<Cow<'_, str>> = None;
        props.clear();
        loop {
            let t = r.u8()?;
            if t == id::END {
                break;
            }
            match (r.raw_string()?, t) {
                (b"Name", id::STRING) => name = Some(r.str()?),
                (b"Name", _) => return Err(malformed("palette entry without a Name string")),
                (b"Properties", id::COMPOUND) => {
                    props.clear();
                    loop {
                        let t = r.u8()?;
                        if t == id::END {
                            break;
                        }
                        let k = r.str()?;
                        let v: Cow<'_, str> = match t {
                            id::STRING => r.str()?,
                            id::BYTE | id::SHORT | id::INT | id::LONG => {
                                let v = r.payload(t, depth + 3)?.as_i64().unwrap_or_default();
                                Cow::Owned(v.to_string())
                            }
                            _ => {
                                r.skip(t, depth + 3)?;
                                Cow::Borrowed("")
                            }
                        };
                        // A repeated key keeps its last value, as the tree would.
                        match props.iter_mut().find(|(pk, _)| *pk == k) {
                            Some(p) => p.1 = v,
                            None => props.push((k, v)),
                        }
                    }
                }
                (_, t) => r.skip(t, depth + 2)?,
            }
        }
        let Some(name) = name else {
            return Err(malformed("palette entry without a Name string"));
        };
        names
            .push(canonical_from_parts(&name, props.iter().map(|(k, v)| (k.as_ref(), v.as_ref()))));
    }
    Ok(names)
}
