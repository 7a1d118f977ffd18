//! Sponge schematics (`.schem`): a lenient reader for versions 1, 2 and 3 and a v3 writer.
//!
//! See the [crate documentation](crate#sponge-schematics) for the leniencies and writer choices.

use std::collections::HashMap;
use std::io::{Read, Write};

use flate2::Compression;
use flate2::read::MultiGzDecoder;
use flate2::write::GzEncoder;

use terrane_chunk::block_state;

use crate::Error;
use crate::block_ids::{BlockIds, IdStore, narrow_varints};
use crate::nbt::{Compound, Reader, Tag, Writer};

/// The `DataVersion` written for schematics that carried none (Sponge v1 files): 1631,
/// Minecraft 1.13.2, the version Sponge v1 was written for; WorldEdit upgrades from there.
pub const FALLBACK_DATA_VERSION: i32 = 1631;

/// Options for [`Schematic::read_with`]: resource bounds for files from outside. With the
/// defaults, reading any file allocates at most about `max_inflated` bytes plus four bytes
/// per block of `max_blocks` (512 MiB in all); a file over a bound is refused with
/// [`Error::OverLimit`], which names the bound to raise for a trusted file.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ReadOptions {
    /// Largest inflated NBT accepted, in bytes (default 256 MiB). Protects against gzip bombs.
    pub max_inflated: usize,
    /// Largest volume accepted, in blocks (default 2^26 = 67 108 864, e.g. 512 × 256 × 512).
    /// Checked before anything of that size is allocated.
    pub max_blocks: usize,
    /// Largest block or biome palette accepted, in entries (default 65 536; Minecraft has
    /// about 30 000 block states).
    pub max_palette: usize,
}

impl Default for ReadOptions {
    fn default() -> Self {
        Self { max_inflated: 1 << 28, max_blocks: 1 << 26, max_palette: 1 << 16 }
    }
}

impl ReadOptions {
    /// The defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`max_inflated`](Self::max_inflated).
    pub fn max_inflated(mut self, bytes: usize) -> Self {
        self.max_inflated = bytes;
        self
    }

    /// Sets [`max_blocks`](Self::max_blocks).
    pub fn max_blocks(mut self, blocks: usize) -> Self {
        self.max_blocks = blocks;
        self
    }

    /// Sets [`max_palette`](Self::max_palette).
    pub fn max_palette(mut self, entries: usize) -> Self {
        self.max_palette = entries;
        self
    }
}

/// A block entity: position relative to the schematic's minimum corner, id, and its data.
///
/// Sponge v1 and v2 store the data inline next to `Pos` and `Id`; v3 nests it in `Data`. The
/// reader normalises both to this shape and the writer emits the v3 shape.
#[derive(Clone, Debug, PartialEq)]
pub struct BlockEntity {
    /// Position inside the schematic (x, y, z).
    pub pos: [i32; 3],
    /// Block entity id, e.g. `minecraft:chest`.
    pub id: String,
    /// Everything else (v3 `Data`, or the v1/v2 inline fields).
    pub data: Compound,
}

/// An entity: position relative to the schematic's minimum corner, id and data.
#[derive(Clone, Debug, PartialEq)]
pub struct Entity {
    /// Position (x, y, z) relative to the schematic.
    pub pos: [f64; 3],
    /// Entity id, e.g. `minecraft:armor_stand`.
    pub id: String,
    /// Everything else (v3 `Data`, or the v2 inline fields).
    pub data: Compound,
}

/// Biomes: a palette and one id per column (v2, W·L, index `x + z*W`) or per block (v3,
/// W·H·L, index `x + z*W + y*W*L`).
#[derive(Clone, Debug, PartialEq)]
pub struct Biomes {
    /// Biome names by id.
    pub palette: Vec<String>,
    /// Ids into `palette`.
    pub ids: Vec<u32>,
    /// `true` for 2-D (per column) biomes as read from v2; the writer expands them to 3-D.
    pub flat: bool,
}

/// A Sponge schematic in memory: dimensions, a block palette with one id per block, and the
/// block entities, entities, biomes and metadata carried along.
#[derive(Clone, Debug, PartialEq)]
pub struct Schematic {
    /// The version read (1, 2 or 3); [`write`](Self::write) always writes 3.
    pub version: i32,
    /// Minecraft `DataVersion` (absent in v1).
    pub data_version: Option<i32>,
    /// `Offset` as stored: in v3 relative to `Metadata.WorldEdit.Origin`, in v1/v2 the
    /// absolute minimum corner (see [`world_min`](Self::world_min)).
    pub offset: [i32; 3],
    /// `Metadata`, kept as is (the writer adds `WorldEdit.Origin` when [`origin`](Self::origin)
    /// is set).
    pub metadata: Compound,
    /// Block entities.
    pub block_entities: Vec<BlockEntity>,
    /// Entities.
    pub entities: Vec<Entity>,
    /// Biomes, when present.
    pub biomes: Option<Biomes>,
    width: u16,
    height: u16,
    length: u16,
    palette: Vec<String>,
    blocks: IdStore,
}

fn check_dims(w: u64, h: u64, l: u64) -> Result<usize, Error> {
    let v = w * h * l;
    if w == 0 || h == 0 || l == 0 || w > 65535 || h > 65535 || l > 65535 || v > i32::MAX as u64 {
        return Err(Error::Dimensions { width: w, height: h, length: l });
    }
    Ok(v as usize)
}

impl Schematic {
    /// A schematic of `width × height × length` (x, y, z) blocks, all `minecraft:air`.
    pub fn new(width: u16, height: u16, length: u16, data_version: i32) -> Result<Self, Error> {
        let n = check_dims(width as u64, height as u64, length as u64)?;
        Ok(Self {
            version: 3,
            data_version: Some(data_version),
            offset: [0; 3],
            metadata: Compound::new(),
            block_entities: Vec::new(),
            entities: Vec::new(),
            biomes: None,
            width,
            height,
            length,
            palette: vec!["minecraft:air".to_owned()],
            blocks: IdStore::zeros(n),
        })
    }

    /// Builds a schematic from a palette and one id per block in Sponge order
    /// (`x + z*W + y*W*L`); every id must index `palette`.
    pub fn from_parts(
        width: u16,
        height: u16,
        length: u16,
        palette: Vec<String>,
        blocks: Vec<u32>,
    ) -> Result<Self, Error> {
        let n = check_dims(width as u64, height as u64, length as u64)?;
        if blocks.len() != n {
            return Err(Error::Invalid(format!("{} ids for {n} positions", blocks.len())));
        }
        if let Some((i, &id)) =
            blocks.iter().enumerate().find(|(_, id)| **id as usize >= palette.len())
        {
            return Err(Error::IdOutOfPalette {
                field: "blocks",
                index: i as u64,
                id,
                len: palette.len(),
            });
        }
        let mut s = Self::new(width, height, length, FALLBACK_DATA_VERSION)?;
        s.palette = palette;
        s.blocks = IdStore::Wide(blocks);
        Ok(s)
    }

    /// Width (x extent).
    pub fn width(&self) -> u16 {
        self.width
    }
    /// Height (y extent).
    pub fn height(&self) -> u16 {
        self.height
    }
    /// Length (z extent).
    pub fn length(&self) -> u16 {
        self.length
    }
    /// Number of blocks, W·H·L.
    pub fn volume(&self) -> usize {
        self.blocks.view().len()
    }
    /// The palette: block state strings by id.
    pub fn palette(&self) -> &[String] {
        &self.palette
    }
    /// One palette id per block, index `x + z*W + y*W*L`, in the width they are stored in
    /// (one byte each when every id is below 128; see [`BlockIds`]).
    pub fn ids(&self) -> BlockIds<'_> {
        self.blocks.view()
    }

    /// The index of `(x, y, z)` in [`ids`](Self::ids), or `None` outside the volume.
    pub fn index(&self, x: u32, y: u32, z: u32) -> Option<usize> {
        let (w, h, l) = (self.width as u32, self.height as u32, self.length as u32);
        (x < w && y < h && z < l)
            .then(|| x as usize + z as usize * w as usize + y as usize * (w * l) as usize)
    }

    /// The block state at `(x, y, z)`, or `None` outside the volume.
    pub fn block(&self, x: u32, y: u32, z: u32) -> Option<&str> {
        let i = self.index(x, y, z)?;
        Some(&self.palette[self.blocks.view().get(i)? as usize])
    }

    /// Sets the block state at `(x, y, z)`, adding it to the palette if new.
    pub fn set_block(&mut self, x: u32, y: u32, z: u32, state: &str) -> Result<(), Error> {
        let i = self
            .index(x, y, z)
            .ok_or_else(|| Error::Invalid(format!("({x}, {y}, {z}) is outside the schematic")))?;
        let id = match self.palette.iter().position(|p| p == state) {
            Some(id) => id,
            None => {
                self.palette.push(state.to_owned());
                self.palette.len() - 1
            }
        };
        self.blocks.set(i, id as u32);
        Ok(())
    }

    /// `Metadata.WorldEdit.Origin`, the absolute position the schematic was copied relative to.
    pub fn origin(&self) -> Option<[i32; 3]> {
        match self.metadata.get("WorldEdit")?.as_compound()?.get("Origin")? {
            Tag::IntArray(a) if a.len() == 3 => Some([a[0], a[1], a[2]]),
            _ => None,
        }
    }

    /// The absolute minimum corner: `origin + offset` for v3 (origin 0 when absent),
    /// `offset` for v1 and v2.
    pub fn world_min(&self) -> [i32; 3] {
        match (self.version, self.origin()) {
            (3, Some(o)) => [
                o[0].wrapping_add(self.offset[0]),
                o[1].wrapping_add(self.offset[1]),
                o[2].wrapping_add(self.offset[2]),
            ],
            _ => self.offset,
        }
    }

    /// Where WorldEdit's `//paste` puts the minimum corner, relative to the player: the
    /// schematic's `min - origin`, as WorldEdit reads each version. v3: `Offset`; v2 and v1:
    /// `Metadata.WEOffsetX`/`Y`/`Z` when all three are there (WorldEdit's v2 writer records
    /// them), else 0 (the copy origin is the minimum corner).
    pub fn paste_offset(&self) -> [i32; 3] {
        if self.version == 3 {
            return self.offset;
        }
        let int = |k: &str| match self.metadata.get(k) {
            Some(Tag::Int(v)) => Some(*v),
            _ => None,
        };
        match (int("WEOffsetX"), int("WEOffsetY"), int("WEOffsetZ")) {
            (Some(x), Some(y), Some(z)) => [x, y, z],
            _ => [0; 3],
        }
    }

    /// Places the schematic as WorldEdit's v3 writer does: `Offset = min - origin` and
    /// `Metadata.WorldEdit.Origin = origin`, so `//paste -o` puts it back at `min`.
    pub fn set_placement(&mut self, min: [i32; 3], origin: [i32; 3]) {
        self.offset = [
            min[0].wrapping_sub(origin[0]),
            min[1].wrapping_sub(origin[1]),
            min[2].wrapping_sub(origin[2]),
        ];
        let we = match self.metadata.get_mut("WorldEdit") {
            Some(Tag::Compound(c)) => c,
            _ => {
                self.metadata.insert("WorldEdit", Tag::Compound(Compound::new()));
                match self.metadata.get_mut("WorldEdit") {
                    Some(Tag::Compound(c)) => c,
                    _ => unreachable!("just inserted"),
                }
            }
        };
        we.insert("Origin", Tag::IntArray(origin.to_vec()));
        self.version = 3;
    }

    /// Reads a schematic from gzip-compressed (or, leniently, uncompressed) NBT bytes.
    pub fn read(bytes: &[u8]) -> Result<Self, Error> {
        Self::read_with(bytes, &ReadOptions::default())
    }

    /// [`read`](Self::read) with options.
    ///
    /// When every block id is a one-byte varint, the schematic keeps the inflated bytes and
    /// reads its ids from them in place (see [`BlockIds`]).
    pub fn read_with(bytes: &[u8], opts: &ReadOptions) -> Result<Self, Error> {
        if bytes.starts_with(&[0x1f, 0x8b]) {
            let raw = inflate(bytes, opts.max_inflated)?;
            let (mut s, narrow) = Self::parse(&raw, opts, true)?;
            if let Some((start, len)) = narrow {
                s.blocks = IdStore::Narrow { bytes: raw, start, len };
            }
            Ok(s)
        } else {
            Self::from_nbt_with(bytes, opts)
        }
    }

    /// Reads a schematic from a file.
    pub fn read_file(path: impl AsRef<std::path::Path>) -> Result<Self, Error> {
        Self::read(&std::fs::read(path)?)
    }

    /// Parses uncompressed schematic NBT (with the default [`ReadOptions`] bounds).
    pub fn from_nbt(nbt: &[u8]) -> Result<Self, Error> {
        Self::from_nbt_with(nbt, &ReadOptions::default())
    }

    /// [`from_nbt`](Self::from_nbt) with options.
    pub fn from_nbt_with(nbt: &[u8], opts: &ReadOptions) -> Result<Self, Error> {
        let (mut s, narrow) = Self::parse(nbt, opts, false)?;
        if let Some((start, len)) = narrow {
            s.blocks = IdStore::Narrow { bytes: nbt[start..start + len].to_vec(), start: 0, len };
        }
        Ok(s)
    }

    /// Parses schematic NBT. When the block ids are one-byte varints (`narrow_varints`),
    /// they are left in `nbt` and their range returned: the caller stores them, copied or
    /// with the buffer that holds them. `gzipped`: whether `nbt` was inflated from gzip (for
    /// the error of bytes that are not NBT).
    fn parse(
        nbt: &[u8],
        opts: &ReadOptions,
        gzipped: bool,
    ) -> Result<(Self, Option<(usize, usize)>), Error> {
        match (nbt.first(), gzipped) {
            (Some(10), _) => {}
            (None, false) => return Err(Error::NotASchematic("the file is empty".into())),
            (None, true) => return Err(Error::NotASchematic("its gzip stream is empty".into())),
            (Some(b), false) => {
                return Err(Error::NotASchematic(format!(
                    "the file is neither gzip-compressed nor NBT (a schematic is gzip-compressed \
                     NBT; this file starts with byte {b:#04x})"
                )));
            }
            (Some(b), true) => {
                return Err(Error::NotASchematic(format!(
                    "its gzip stream holds no NBT (a schematic's opens with a compound, tag 10; \
                     this one with byte {b:#04x})"
                )));
            }
        }
        let mut r = Reader::new(nbt);
        r.u8()?;
        r.raw_string()?;
        let mut raw = Raw::default();
        walk_body(&mut r, &mut raw, 1, true)?;
        raw.finish(opts, nbt)
    }

    /// Writes Sponge v3, gzip-compressed (see the crate docs for the choices made).
    pub fn write(&self) -> Result<Vec<u8>, Error> {
        let nbt = self.to_nbt()?;
        let mut enc =
            GzEncoder::new(Vec::with_capacity(nbt.len() / 4 + 64), Compression::default());
        enc.write_all(&nbt)?;
        Ok(enc.finish()?)
    }

    /// Writes Sponge v3 to a file.
    pub fn write_file(&self, path: impl AsRef<std::path::Path>) -> Result<(), Error> {
        Ok(std::fs::write(path, self.write()?)?)
    }

    /// Serializes Sponge v3 as uncompressed NBT.
    pub fn to_nbt(&self) -> Result<Vec<u8>, Error> {
        check_dims(self.width as u64, self.height as u64, self.length as u64)?;
        let mut w = Writer::new();
        w.out.reserve(self.volume() + 1024);
        w.head(10, "")?;
        w.head(10, "Schematic")?;
        w.named("Version", &Tag::Int(3))?;
        w.named("DataVersion", &Tag::Int(self.data_version.unwrap_or(FALLBACK_DATA_VERSION)))?;
        w.named("Metadata", &Tag::Compound(self.metadata.clone()))?;
        w.named("Width", &Tag::Short(self.width as i16))?;
        w.named("Height", &Tag::Short(self.height as i16))?;
        w.named("Length", &Tag::Short(self.length as i16))?;
        w.named("Offset", &Tag::IntArray(self.offset.to_vec()))?;

        // Blocks: ids from 0 in order of first use, canonical state strings.
        let (palette, data) =
            encode_ids(&self.palette, self.ids(), "blocks", block_state::canonical)?;
        w.head(10, "Blocks")?;
        write_palette(&mut w, &palette)?;
        w.head(7, "Data")?;
        w.len(data.len())?;
        w.out.extend_from_slice(&data);
        let mut bes = Vec::with_capacity(self.block_entities.len());
        for be in &self.block_entities {
            let mut c = Compound::new();
            c.insert("Pos", Tag::IntArray(be.pos.to_vec()));
            c.insert("Id", Tag::String(be.id.clone()));
            c.insert("Data", Tag::Compound(be.data.clone()));
            bes.push(Tag::Compound(c));
        }
        w.named("BlockEntities", &Tag::List(10, bes))?;
        w.out.push(0);

        if let Some(b) = &self.biomes {
            let plane = self.width as usize * self.length as usize;
            let expected = if b.flat { plane } else { self.volume() };
            if b.ids.len() != expected {
                return Err(Error::Invalid(format!(
                    "{} biome ids, expected {expected}",
                    b.ids.len()
                )));
            }
            let ids: Vec<u32> = if b.flat {
                (0..self.height as usize).flat_map(|_| b.ids.iter().copied()).collect()
            } else {
                b.ids.clone()
            };
            let (palette, data) =
                encode_ids(&b.palette, BlockIds::Wide(&ids), "biomes", namespaced)?;
            w.head(10, "Biomes")?;
            write_palette(&mut w, &palette)?;
            w.head(7, "Data")?;
            w.len(data.len())?;
            w.out.extend_from_slice(&data);
            w.out.push(0);
        }
        if !self.entities.is_empty() {
            let mut es = Vec::with_capacity(self.entities.len());
            for e in &self.entities {
                let mut c = Compound::new();
                c.insert("Pos", Tag::List(6, e.pos.iter().map(|&v| Tag::Double(v)).collect()));
                c.insert("Id", Tag::String(e.id.clone()));
                c.insert("Data", Tag::Compound(e.data.clone()));
                es.push(Tag::Compound(c));
            }
            w.named("Entities", &Tag::List(10, es))?;
        }
        w.out.push(0); // end of Schematic
        w.out.push(0); // end of root
        Ok(w.out)
    }
}

fn write_palette(w: &mut Writer, palette: &[String]) -> Result<(), Error> {
    w.head(10, "Palette")?;
    for (i, name) in palette.iter().enumerate() {
        w.head(3, name)?;
        w.out.extend_from_slice(&(i as i32).to_be_bytes());
    }
    w.out.push(0);
    Ok(())
}

/// Remaps ids to `0..` in order of first use (merging entries that canonicalise to the same
/// string) and encodes them as LEB128 varints.
fn encode_ids(
    palette: &[String],
    ids: BlockIds<'_>,
    field: &'static str,
    canon: fn(&str) -> String,
) -> Result<(Vec<String>, Vec<u8>), Error> {
    let mut remap = vec![u32::MAX; palette.len()];
    let mut by_name: HashMap<String, u32> = HashMap::new();
    let mut out_palette: Vec<String> = Vec::new();
    let mut data = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        let slot = remap.get_mut(id as usize).ok_or(Error::IdOutOfPalette {
            field,
            index: i as u64,
            id,
            len: palette.len(),
        })?;
        if *slot == u32::MAX {
            let name = canon(&palette[id as usize]);
            let next = out_palette.len() as u32;
            *slot = *by_name.entry(name.clone()).or_insert_with(|| {
                out_palette.push(name);
                next
            });
        }
        let mut v = *slot;
        while v >= 0x80 {
            data.push((v as u8) | 0x80);
            v >>= 7;
        }
        data.push(v as u8);
    }
    Ok((out_palette, data))
}

/// Adds the `minecraft:` namespace when a name has none.
fn namespaced(s: &str) -> String {
    if s.contains(':') { s.to_owned() } else { format!("minecraft:{s}") }
}

fn inflate(gz: &[u8], limit: usize) -> Result<Vec<u8>, Error> {
    // Pre-size from the gzip trailer (ISIZE, the length mod 2^32) when plausible.
    let hint = gz
        .len()
        .checked_sub(4)
        .map(|i| u32::from_le_bytes([gz[i], gz[i + 1], gz[i + 2], gz[i + 3]]) as usize)
        .filter(|&n| n <= limit && n <= gz.len().saturating_mul(1100))
        .unwrap_or(gz.len() * 4);
    let mut out = Vec::with_capacity(hint + 1);
    let n = MultiGzDecoder::new(gz).take(limit as u64 + 1).read_to_end(&mut out)?;
    if n > limit {
        return Err(Error::TooLarge { limit });
    }
    Ok(out)
}

/// Fields gathered while walking the NBT, in whatever order they come.
#[derive(Default)]
struct Raw<'a> {
    version: Option<i32>,
    data_version: Option<i32>,
    width: Option<i32>,
    height: Option<i32>,
    length: Option<i32>,
    offset: Option<[i32; 3]>,
    metadata: Option<Compound>,
    palette: Option<Compound>,
    data: Option<&'a [u8]>,
    block_entities: Option<Vec<Tag>>,
    entities: Option<Vec<Tag>>,
    biome_palette: Option<Compound>,
    biome_data: Option<&'a [u8]>,
    biomes_3d: bool,
}

fn int_field(r: &mut Reader<'_>, ty: u8, field: &'static str) -> Result<i32, Error> {
    match ty {
        1 => Ok(r.u8()? as i8 as i32),
        2 => Ok(r.u16()? as i32), // shorts are read as unsigned (dimensions up to 65535)
        3 => Ok(r.i32()?),
        _ => Err(Error::WrongType { field, expected: "an integer" }),
    }
}

fn compound_field(
    r: &mut Reader<'_>,
    ty: u8,
    field: &'static str,
    depth: usize,
) -> Result<Compound, Error> {
    if ty != 10 {
        return Err(Error::WrongType { field, expected: "a compound" });
    }
    Ok(r.compound(depth)?)
}

fn bytes_field<'a>(r: &mut Reader<'a>, ty: u8, field: &'static str) -> Result<&'a [u8], Error> {
    if ty != 7 {
        return Err(Error::WrongType { field, expected: "a byte array" });
    }
    let n = r.len(1)?;
    Ok(r.take(n)?)
}

fn list_field(
    r: &mut Reader<'_>,
    ty: u8,
    field: &'static str,
    depth: usize,
) -> Result<Vec<Tag>, Error> {
    if ty != 9 {
        return Err(Error::WrongType { field, expected: "a list" });
    }
    match r.payload(9, depth)? {
        Tag::List(_, items) => Ok(items),
        _ => unreachable!("payload(9) is a list"),
    }
}

/// Walks the entries of the schematic body (the flat root, or the nested `Schematic`).
fn walk_body<'a>(
    r: &mut Reader<'a>,
    raw: &mut Raw<'a>,
    depth: usize,
    is_root: bool,
) -> Result<(), Error> {
    loop {
        let ty = r.u8()?;
        if ty == 0 {
            return Ok(());
        }
        let key = r.raw_string()?;
        match key {
            b"Schematic" if is_root && ty == 10 => walk_body(r, raw, depth + 1, false)?,
            b"Version" => raw.version = Some(int_field(r, ty, "Version")?),
            b"DataVersion" => raw.data_version = Some(int_field(r, ty, "DataVersion")?),
            b"Width" => raw.width = Some(int_field(r, ty, "Width")?),
            b"Height" => raw.height = Some(int_field(r, ty, "Height")?),
            b"Length" => raw.length = Some(int_field(r, ty, "Length")?),
            b"Offset" => {
                let off = match r.payload(ty, depth)? {
                    Tag::IntArray(a) if a.len() == 3 => [a[0], a[1], a[2]],
                    _ => return Err(Error::WrongType { field: "Offset", expected: "an int[3]" }),
                };
                raw.offset = Some(off);
            }
            b"Metadata" => raw.metadata = Some(compound_field(r, ty, "Metadata", depth)?),
            b"Palette" => raw.palette = Some(compound_field(r, ty, "Palette", depth)?),
            b"BlockData" => raw.data = Some(bytes_field(r, ty, "BlockData")?),
            b"Blocks" if ty == 10 => walk_section(r, raw, depth + 1, false)?,
            b"Biomes" if ty == 10 => {
                raw.biomes_3d = true;
                walk_section(r, raw, depth + 1, true)?
            }
            b"BlockEntities" | b"TileEntities" => {
                raw.block_entities = Some(list_field(r, ty, "BlockEntities", depth)?)
            }
            b"Entities" => raw.entities = Some(list_field(r, ty, "Entities", depth)?),
            b"BiomePalette" => {
                raw.biome_palette = Some(compound_field(r, ty, "BiomePalette", depth)?)
            }
            b"BiomeData" => raw.biome_data = Some(bytes_field(r, ty, "BiomeData")?),
            _ => r.skip(ty, depth)?, // PaletteMax, BiomePaletteMax, unknown keys
        }
    }
}

/// Walks the v3 `Blocks` or `Biomes` container.
fn walk_section<'a>(
    r: &mut Reader<'a>,
    raw: &mut Raw<'a>,
    depth: usize,
    biomes: bool,
) -> Result<(), Error> {
    loop {
        let ty = r.u8()?;
        if ty == 0 {
            return Ok(());
        }
        let key = r.raw_string()?;
        match (key, biomes) {
            (b"Palette", false) => {
                raw.palette = Some(compound_field(r, ty, "Blocks.Palette", depth)?)
            }
            (b"Data", false) => raw.data = Some(bytes_field(r, ty, "Blocks.Data")?),
            (b"BlockEntities", false) => {
                raw.block_entities = Some(list_field(r, ty, "Blocks.BlockEntities", depth)?)
            }
            (b"Palette", true) => {
                raw.biome_palette = Some(compound_field(r, ty, "Biomes.Palette", depth)?)
            }
            (b"Data", true) => raw.biome_data = Some(bytes_field(r, ty, "Biomes.Data")?),
            _ => r.skip(ty, depth)?,
        }
    }
}

/// Palette compound (name → id) to names by id; ids must be distinct and in `0..len`.
fn check_palette(c: &Compound, opts: &ReadOptions) -> Result<(), Error> {
    if c.len() > opts.max_palette {
        return Err(Error::OverLimit {
            what: "palette entries",
            found: c.len() as u64,
            limit: opts.max_palette as u64,
            option: "max_palette",
            flag: "max-palette",
        });
    }
    Ok(())
}

fn palette_by_id(c: Compound) -> Result<Vec<String>, Error> {
    let len = c.len();
    let mut out: Vec<Option<String>> = vec![None; len];
    for (name, v) in c {
        let id =
            v.as_int().ok_or(Error::WrongType { field: "Palette", expected: "integer ids" })?;
        match usize::try_from(id).ok().and_then(|i| out.get_mut(i)) {
            Some(slot @ None) => *slot = Some(name),
            _ => return Err(Error::PaletteId { name, id, len }),
        }
    }
    // Distinct ids in 0..len fill every slot.
    Ok(out.into_iter().map(|s| s.expect("pigeonhole")).collect())
}

/// Decodes exactly `count` LEB128 varints, each < `len`. Positions are block counters (the
/// number of varints before), never byte offsets.
pub(crate) fn decode_varints(
    data: &[u8],
    count: usize,
    len: usize,
    field: &'static str,
) -> Result<Vec<u32>, Error> {
    // Every varint takes at least one byte: more positions than bytes cannot match.
    if count > data.len() {
        let found = data.iter().filter(|&&b| b < 0x80).count() as u64
            + u64::from(data.last().is_some_and(|&b| b >= 0x80));
        return Err(Error::VarintCount { field, expected: count as u64, found });
    }
    let mut out = vec![0u32; count];
    let n = data.len();
    let mut i = 0;
    let mut k = 0; // varints decoded: the block counter
    let mut bound = 0u8; // OR of the single-byte ids: an upper bound on them
    let mut max_wide = 0u32;
    while i < n {
        // Fast path: sixteen single-byte varints at once (array code that vectorises: OR the
        // bytes, widen them). `bound` only bounds the largest id (OR of the bytes): the exact
        // check runs at the end, when that bound reaches the palette size.
        if let (Some(w), Some(dst)) = (data.get(i..i + 16), out.get_mut(k..k + 16)) {
            let w: [u8; 16] = w.try_into().expect("16 bytes");
            let or = w.iter().fold(0u8, |a, &b| a | b);
            if or < 0x80 {
                let dst: &mut [u32; 16] = dst.try_into().expect("16 slots");
                for (d, &b) in dst.iter_mut().zip(&w) {
                    *d = b as u32;
                }
                bound |= or;
                i += 16;
                k += 16;
                continue;
            }
        }
        let b = data[i];
        i += 1;
        let v = if b < 0x80 {
            bound |= b;
            b as u32
        } else {
            let mut v = (b & 0x7F) as u32;
            let mut shift = 7;
            loop {
                let Some(&b) = data.get(i) else {
                    // A truncated trailing varint counts as one.
                    return Err(Error::VarintCount {
                        field,
                        expected: count as u64,
                        found: k as u64 + 1,
                    });
                };
                i += 1;
                if shift == 28 && b > 0x07 {
                    return Err(Error::VarintTooLong { field, index: k as u64 });
                }
                v |= ((b & 0x7F) as u32) << shift;
                if b < 0x80 {
                    break;
                }
                shift += 7;
            }
            max_wide = max_wide.max(v);
            v
        };
        let Some(slot) = out.get_mut(k) else {
            return Err(too_many(data, count, k, i - 1, field));
        };
        *slot = v;
        k += 1;
    }
    if k != count {
        return Err(Error::VarintCount { field, expected: count as u64, found: k as u64 });
    }
    if max_wide.max(bound as u32) as usize >= len
        && let Some(index) = out.iter().position(|&v| v as usize >= len)
    {
        return Err(Error::IdOutOfPalette { field, index: index as u64, id: out[index], len });
    }
    Ok(out)
}

/// The error for more varints than positions, counting them without decoding ids.
fn too_many(data: &[u8], count: usize, decoded: usize, at: usize, field: &'static str) -> Error {
    let rest = data[at..].iter().filter(|&&b| b < 0x80).count() as u64;
    let trunc = u64::from(data.last().is_some_and(|&b| b >= 0x80));
    Error::VarintCount { field, expected: count as u64, found: decoded as u64 + rest + trunc }
}

fn pos3_int(t: Option<&Tag>) -> Option<[i32; 3]> {
    match t? {
        Tag::IntArray(a) if a.len() == 3 => Some([a[0], a[1], a[2]]),
        Tag::List(_, l) if l.len() == 3 => Some([l[0].as_int()?, l[1].as_int()?, l[2].as_int()?]),
        _ => None,
    }
}

fn pos3_f64(t: Option<&Tag>) -> Option<[f64; 3]> {
    let f = |t: &Tag| match *t {
        Tag::Double(v) => Some(v),
        Tag::Float(v) => Some(v as f64),
        _ => t.as_int().map(|v| v as f64),
    };
    match t? {
        Tag::List(_, l) if l.len() == 3 => Some([f(&l[0])?, f(&l[1])?, f(&l[2])?]),
        Tag::IntArray(a) if a.len() == 3 => Some([a[0] as f64, a[1] as f64, a[2] as f64]),
        _ => None,
    }
}

/// Splits `Pos`, `Id` and `Data` (v3) or the inline fields (v1/v2) out of an entry.
fn split_entry(t: Tag, field: &'static str) -> Result<(Compound, Tag, String), Error> {
    let Tag::Compound(mut c) = t else {
        return Err(Error::WrongType { field, expected: "a list of compounds" });
    };
    let pos = c.remove("Pos").ok_or(Error::MissingField("Pos"))?;
    let id = match c.remove("Id").or_else(|| c.remove("id")) {
        Some(Tag::String(s)) => s,
        _ => return Err(Error::MissingField("Id")),
    };
    let data = match c.remove("Data") {
        Some(Tag::Compound(mut d)) => {
            // Stray fields next to `Data` are kept too (`Data`'s own win), in linear time
            // however many keys a hostile file gives.
            let have: std::collections::HashSet<String> = d.keys().map(str::to_owned).collect();
            d.extend(c.into_iter().filter(|(k, _)| !have.contains(k)));
            d
        }
        Some(other) => {
            c.insert("Data", other);
            c
        }
        None => c,
    };
    Ok((data, pos, id))
}

impl Raw<'_> {
    /// The schematic, and the range in `input` of block ids left there in their one-byte
    /// form (the schematic's ids are then a placeholder the caller replaces).
    fn finish(
        self,
        opts: &ReadOptions,
        input: &[u8],
    ) -> Result<(Schematic, Option<(usize, usize)>), Error> {
        if self.version.is_none()
            && self.width.is_none()
            && self.height.is_none()
            && self.length.is_none()
        {
            return Err(Error::NotASchematic(
                "NBT without a schematic's Width, Height and Length (another kind of NBT file, \
                 such as a level.dat or a structure block's .nbt)"
                    .into(),
            ));
        }
        let version = self.version.unwrap_or(1);
        if !(1..=3).contains(&version) {
            return Err(Error::UnsupportedVersion(version));
        }
        let w = self.width.ok_or(Error::MissingField("Width"))?;
        let h = self.height.ok_or(Error::MissingField("Height"))?;
        let l = self.length.ok_or(Error::MissingField("Length"))?;
        let (w64, h64, l64) = (w as u32 as u64, h as u32 as u64, l as u32 as u64);
        if w < 0 || h < 0 || l < 0 {
            return Err(Error::Dimensions { width: w64, height: h64, length: l64 });
        }
        let count = check_dims(w64, h64, l64)?;
        if count > opts.max_blocks {
            return Err(Error::OverLimit {
                what: "volume in blocks",
                found: count as u64,
                limit: opts.max_blocks as u64,
                option: "max_blocks",
                flag: "max-blocks",
            });
        }
        let mut narrow = None;
        let (palette, blocks) = match (self.palette, self.data) {
            (Some(p), Some(d)) => {
                check_palette(&p, opts)?;
                let palette = palette_by_id(p)?;
                if narrow_varints(d, count, palette.len()) {
                    // `d` is a sub-slice of `input`: its offset there.
                    let start = d.as_ptr() as usize - input.as_ptr() as usize;
                    narrow = Some((start, count));
                    (palette, IdStore::Wide(Vec::new()))
                } else {
                    let blocks = decode_varints(d, count, palette.len(), "BlockData")?;
                    (palette, IdStore::Wide(blocks))
                }
            }
            (None, None) if version == 3 => {
                (vec!["minecraft:air".to_owned()], IdStore::zeros(count))
            }
            (None, _) => return Err(Error::MissingField("Palette")),
            (_, None) => return Err(Error::MissingField("BlockData")),
        };
        let mut block_entities = Vec::new();
        for t in self.block_entities.unwrap_or_default() {
            let (data, pos, id) = split_entry(t, "BlockEntities")?;
            let pos = pos3_int(Some(&pos))
                .ok_or(Error::WrongType { field: "BlockEntities[].Pos", expected: "an int[3]" })?;
            block_entities.push(BlockEntity { pos, id, data });
        }
        let mut entities = Vec::new();
        for t in self.entities.unwrap_or_default() {
            let (data, pos, id) = split_entry(t, "Entities")?;
            let pos = pos3_f64(Some(&pos)).ok_or(Error::WrongType {
                field: "Entities[].Pos",
                expected: "a list of 3 doubles",
            })?;
            entities.push(Entity { pos, id, data });
        }
        let biomes = match (self.biome_palette, self.biome_data) {
            (Some(p), Some(d)) => {
                check_palette(&p, opts)?;
                let palette = palette_by_id(p)?;
                let flat = !self.biomes_3d;
                let n = if flat { w64 * l64 } else { count as u64 } as usize;
                let ids = decode_varints(d, n, palette.len(), "BiomeData")?;
                Some(Biomes { palette, ids, flat })
            }
            (None, None) => None,
            (None, _) => return Err(Error::MissingField("BiomePalette")),
            (_, None) => return Err(Error::MissingField("BiomeData")),
        };
        let s = Schematic {
            version,
            data_version: self.data_version,
            offset: self.offset.unwrap_or([0; 3]),
            metadata: self.metadata.unwrap_or_default(),
            block_entities,
            entities,
            biomes,
            width: w as u16,
            height: h as u16,
            length: l as u16,
            palette,
            blocks,
        };
        Ok((s, narrow))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints_count_blocks_not_bytes() {
        // 200 is two bytes; 3 values.
        let d = [0x05, 0xC8, 0x01, 0x07];
        assert_eq!(decode_varints(&d, 3, 300, "t").unwrap(), vec![5, 200, 7]);
        assert!(matches!(
            decode_varints(&d, 4, 300, "t"),
            Err(Error::VarintCount { found: 3, .. })
        ));
        assert!(matches!(
            decode_varints(&d, 2, 300, "t"),
            Err(Error::VarintCount { found: 3, .. })
        ));
        assert!(matches!(
            decode_varints(&d, 3, 100, "t"),
            Err(Error::IdOutOfPalette { index: 1, id: 200, .. })
        ));
        let long = [0x80, 0x80, 0x80, 0x80, 0x80, 0x01];
        assert!(matches!(decode_varints(&long, 1, 10, "t"), Err(Error::VarintTooLong { .. })));
        let trunc = [0x80];
        assert!(matches!(decode_varints(&trunc, 1, 10, "t"), Err(Error::VarintCount { .. })));
    }
}
