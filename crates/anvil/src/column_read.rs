//! Reading a chunk's NBT in one pass: the sections' block fields (palettes, packed states,
//! legacy id arrays) are taken straight from the bytes as they stream by, never built as a
//! tree, since the import only turns them into canonical names and indices; everything else
//! of the chunk is kept verbatim, as a tree ([`Tag`], for [`Column::from_nbt`]) or as its
//! payload bytes ([`RawValue`], for the import, which copies them into the column record
//! without a tree: `column_rest.rs`).
//!
//! [`Column::from_nbt`]: crate::Column::from_nbt

use std::borrow::Cow;

use terrane_chunk::block_state::canonical_from_parts;

use crate::error::{ChunkError, malformed};
use crate::nbt::{Tag, id};
use terrane_nbt::Reader;

/// What the reader keeps of an entry that is not block data.
pub(crate) trait Kept<'a>: Sized {
    /// The payload of type `t` at the cursor, the value at nesting `depth`.
    fn read(r: &mut Reader<'a>, t: u8, depth: usize) -> Result<Self, ChunkError>;
    /// A byte array's payload (its length and bytes), kept as it is.
    fn byte_array(payload: &'a [u8]) -> Self;
    /// The value as a tree (for the parts every import builds: block entities, entities).
    fn into_tag(self) -> Result<Tag, ChunkError>;
    /// The value as an integer of any width.
    fn as_i64(&self) -> Option<i64>;
    /// A list's element type (`TAG_End` for what is not a list).
    fn list_type(&self) -> u8;
    /// Checks a value that is dropped (a repeated key's replaced value) as the tree reader
    /// checks what it reads, so that damage in it fails both paths alike.
    fn check(&self) -> Result<(), ChunkError>;
}

impl<'a> Kept<'a> for Tag {
    fn read(r: &mut Reader<'a>, t: u8, depth: usize) -> Result<Self, ChunkError> {
        Ok(r.payload(t, depth)?)
    }

    fn byte_array(payload: &'a [u8]) -> Self {
        Tag::ByteArray(payload[4..].iter().map(|&x| x as i8).collect())
    }

    fn into_tag(self) -> Result<Tag, ChunkError> {
        Ok(self)
    }

    fn as_i64(&self) -> Option<i64> {
        Tag::as_i64(self)
    }

    fn list_type(&self) -> u8 {
        list_type(self)
    }

    fn check(&self) -> Result<(), ChunkError> {
        Ok(()) // read as a tree: checked already
    }
}

/// A value's payload bytes as found (type `ty`, at nesting `depth` in the chunk), checked
/// only as far as [`Reader::skip`] checks: strings are validated when copied or parsed.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RawValue<'a> {
    pub ty: u8,
    pub bytes: &'a [u8],
    pub depth: usize,
}

impl<'a> Kept<'a> for RawValue<'a> {
    fn read(r: &mut Reader<'a>, t: u8, depth: usize) -> Result<Self, ChunkError> {
        Ok(RawValue { ty: t, bytes: r.payload_bytes(t, depth)?, depth })
    }

    fn byte_array(payload: &'a [u8]) -> Self {
        RawValue { ty: id::BYTE_ARRAY, bytes: payload, depth: 0 }
    }

    fn into_tag(self) -> Result<Tag, ChunkError> {
        Ok(Reader::new(self.bytes).payload(self.ty, self.depth)?)
    }

    fn as_i64(&self) -> Option<i64> {
        let b = self.bytes;
        Some(match self.ty {
            id::BYTE => i64::from(*b.first()? as i8),
            id::SHORT => i64::from(i16::from_be_bytes(b.get(..2)?.try_into().ok()?)),
            id::INT => i64::from(i32::from_be_bytes(b.get(..4)?.try_into().ok()?)),
            id::LONG => i64::from_be_bytes(b.get(..8)?.try_into().ok()?),
            _ => return None,
        })
    }

    fn list_type(&self) -> u8 {
        if self.ty == id::LIST { self.bytes.first().copied().unwrap_or(id::END) } else { id::END }
    }

    fn check(&self) -> Result<(), ChunkError> {
        self.into_tag().map(drop)
    }
}

/// A compound's kept entries, in file order (a key may repeat: resolved as
/// [`terrane_nbt::dedup_entries`] does when the entries become a compound or a record).
pub(crate) type KeptEntries<'a, V> = Vec<(Cow<'a, str>, V)>;

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
pub(crate) struct RawSection<'a, V> {
    pub rest: KeptEntries<'a, V>,
    pub blocks: BlockFields<'a>,
}

/// A chunk's NBT: the root compound without its sections (and, when wrapped, without
/// `Level`), the `Level` compound (1.17 and older) without its sections, and the sections.
pub(crate) struct ChunkParts<'a, V> {
    pub root: KeptEntries<'a, V>,
    pub level: Option<KeptEntries<'a, V>>,
    pub sections: Option<Vec<RawSection<'a, V>>>,
}

/// Reads a root compound (named root; trailing bytes ignored).
pub(crate) fn read_chunk<'a, V: Kept<'a>>(
    bytes: &'a [u8],
) -> Result<ChunkParts<'a, V>, ChunkError> {
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
struct Entries<'a, V> {
    rest: KeptEntries<'a, V>,
    sections: Option<Vec<RawSection<'a, V>>>,
    /// The `Level` compound (1.17 and older), read the same way one level down.
    level: Option<Box<Entries<'a, V>>>,
}

/// A compound's entries up to its `TAG_End`, the entries at nesting `depth`: the list under
/// `sec_key` streamed as sections (`flat`: the 1.18+ layout), a `Level` compound at the root
/// read the same way with `Sections`, everything else kept. Entries are collected in file
/// order: linear however many keys a file holds.
fn entries<'a, V: Kept<'a>>(
    r: &mut Reader<'a>,
    depth: usize,
    sec_key: &str,
    flat: bool,
) -> Result<Entries<'a, V>, ChunkError> {
    let mut rest = Vec::new();
    let (mut sections, mut level) = (None, None);
    loop {
        let t = r.u8()?;
        if t == id::END {
            break;
        }
        let key = r.str()?;
        if key == sec_key {
            sections = Some(self::sections(r, t, sec_key, flat, depth + 1)?);
        } else if flat && key == "Level" && t == id::COMPOUND {
            level = Some(Box::new(entries(r, depth + 1, "Sections", false)?));
        } else {
            rest.push((key, V::read(r, t, depth)?));
        }
    }
    Ok(Entries { rest, sections, level })
}

/// A list of section compounds of type `t` (at nesting `depth`).
fn sections<'a, V: Kept<'a>>(
    r: &mut Reader<'a>,
    t: u8,
    what: &str,
    flat: bool,
    depth: usize,
) -> Result<Vec<RawSection<'a, V>>, ChunkError> {
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
fn section<'a, V: Kept<'a>>(
    r: &mut Reader<'a>,
    flat: bool,
    depth: usize,
) -> Result<RawSection<'a, V>, ChunkError> {
    let mut rest = Vec::new();
    let mut b = BlockFields::default();
    // `Add` and `Data` as found (length and bytes), kept when there is no `Blocks`.
    let (mut add, mut data) = (None, None);
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
            (false, "Add") if t == id::BYTE_ARRAY => add = Some(r.payload_bytes(t, depth + 1)?),
            (false, "Data") if t == id::BYTE_ARRAY => data = Some(r.payload_bytes(t, depth + 1)?),
            _ => rest.push((key, V::read(r, t, depth + 1)?)),
        }
    }
    // A byte array's payload is its 4-byte length, then its bytes.
    (b.add, b.data) = (add.map(|p| &p[4..]), data.map(|p| &p[4..]));
    if b.blocks.is_some() && (b.palette.is_some() || b.states.is_some()) {
        return Err(malformed("a section with both legacy Blocks and a palette"));
    }
    if b.blocks.is_none() {
        // `Add` and `Data` only mean block ids beside `Blocks`: otherwise they stay verbatim.
        (b.add, b.data) = (None, None);
        for (k, p) in [("Add", add), ("Data", data)] {
            if let Some(p) = p {
                rest.push((Cow::Borrowed(k), V::byte_array(p)));
            }
        }
    }
    Ok(RawSection { rest, blocks: b })
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

/// A list's element type (`TAG_End` for what is not a list).
pub(crate) fn list_type(t: &Tag) -> u8 {
    match t {
        Tag::List(et, _) => *et,
        _ => id::END,
    }
}
