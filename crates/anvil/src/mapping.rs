//! Columns ↔ cubic terrane chunks.
//!
//! Mapping (specified in `docs/format/anvil.md`, section "Mapping to terrane"):
//! - each section with block states becomes one 16³ [`Chunk`] at chunk y = section y; block
//!   states become global ids of the world's block registry, named by their canonical string;
//! - a block entity becomes the value of the variable-size component
//!   [`BLOCK_ENTITY_COMPONENT`] (its compound as NBT, without `x`/`y`/`z`) at its cell, when
//!   the cell's block carries that component (blocks of [`is_block_entity_block`] do); any
//!   other block entity is kept in the column record;
//! - an entity becomes an entity record (UUID, NBT blob) referenced by the chunk its `Pos`
//!   falls in (the nearest chunk of the column otherwise);
//! - everything else (biomes, heightmaps, light, ticks, structures, status, DataVersion,
//!   timestamp) is kept verbatim in the [`ColumnRecord`], the column's side-table entry.

use std::borrow::Cow;
use std::collections::HashMap;

use terrane_chunk::{
    BlockId, Chunk, ChunkView, ComponentId, ComponentKind, Schema, Uuid, block_state,
};
use terrane_section::{ColumnPos, cell_index};

use crate::column::{CELLS, Column, Layout, Section};
use crate::error::{ChunkError, Error};
use crate::nbt::{self, Compound, Tag};

/// Name of the variable-size component that carries a block entity's NBT.
pub const BLOCK_ENTITY_COMPONENT: &str = "minecraft:block_entity";

/// Block names (without namespace and properties) that get the block-entity component when
/// first registered: the vanilla blocks that own a block entity.
const BE_EXACT: &[&str] = &[
    "beacon",
    "bee_nest",
    "beehive",
    "bell",
    "brewing_stand",
    "calibrated_sculk_sensor",
    "campfire",
    "chiseled_bookshelf",
    "command_block",
    "chain_command_block",
    "repeating_command_block",
    "comparator",
    "conduit",
    "crafter",
    "creaking_heart",
    "daylight_detector",
    "decorated_pot",
    "enchanting_table",
    "end_gateway",
    "end_portal",
    "hopper",
    "jigsaw",
    "jukebox",
    "lectern",
    "moving_piston",
    "sculk_catalyst",
    "sculk_sensor",
    "sculk_shrieker",
    "soul_campfire",
    "spawner",
    "structure_block",
    "suspicious_gravel",
    "suspicious_sand",
    "trial_spawner",
    "vault",
    "barrel",
    "dispenser",
    "dropper",
    "furnace",
    "blast_furnace",
    "smoker",
    "trapped_chest",
    "ender_chest",
    "chest",
];
const BE_SUFFIX: &[&str] =
    &["_sign", "_hanging_sign", "shulker_box", "_banner", "_bed", "_head", "_skull"];

/// Whether blocks of this canonical state get the [`BLOCK_ENTITY_COMPONENT`] when first
/// registered (vanilla block-entity blocks, any namespace's blocks of the same names).
pub fn is_block_entity_block(state: &str) -> bool {
    let name = state.split('[').next().unwrap_or(state);
    let name = name.rsplit(':').next().unwrap_or(name);
    BE_EXACT.contains(&name) || BE_SUFFIX.iter().any(|s| name.ends_with(s))
}

/// One column ready for a store: encoded chunks, entity records and the column record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ImportedColumn {
    /// Column position.
    pub pos: ColumnPos,
    /// Encoded terrane chunks (format v1, see terrane-chunk) by chunk y, ascending.
    pub chunks: Vec<(i64, Vec<u8>)>,
    /// Entity records: UUID and the entity's NBT compound (uncompressed, named root).
    pub entities: Vec<(Uuid, Vec<u8>)>,
    /// The encoded [`ColumnRecord`].
    pub record: Vec<u8>,
}

/// One column as the importer builds it, its chunks not yet encoded: what
/// [`ImportSink::put_column_chunks`](crate::ImportSink::put_column_chunks) takes. A sink that
/// stores terrane chunks lets that method encode them ([`ColumnChunks::encode`]); one that
/// translates them further (an edition conversion) takes them as they are, so that each chunk
/// is encoded once, in the format it ends in.
#[derive(Clone, Debug)]
pub struct ColumnChunks {
    /// Column position.
    pub pos: ColumnPos,
    /// The chunks (block states of the import's schema) by chunk y, ascending.
    pub chunks: Vec<(i64, Chunk)>,
    /// Entity records: UUID and the entity's NBT compound (uncompressed, named root).
    pub entities: Vec<(Uuid, Vec<u8>)>,
    /// The encoded [`ColumnRecord`].
    pub record: Vec<u8>,
}

impl ColumnChunks {
    /// The column with its chunks encoded (format v1) with `schema`, the import's.
    pub fn encode(self, schema: &Schema) -> ImportedColumn {
        let chunks = self.chunks.into_iter().map(|(y, c)| (y, c.encode(schema))).collect();
        ImportedColumn { pos: self.pos, chunks, entities: self.entities, record: self.record }
    }
}

impl ImportedColumn {
    /// The chunks with their cubic positions (column x, chunk y, column z).
    pub fn chunk_positions(&self) -> impl Iterator<Item = (terrane_section::ChunkPos, &[u8])> + '_ {
        self.chunks.iter().map(move |(y, b)| {
            (terrane_section::ChunkPos::new(self.pos.x as i64, *y, self.pos.z as i64), b.as_slice())
        })
    }

    /// Total encoded bytes (chunks + entities + record).
    pub fn encoded_len(&self) -> usize {
        self.chunks.iter().map(|c| c.1.len()).sum::<usize>()
            + self.entities.iter().map(|e| 16 + e.1.len()).sum::<usize>()
            + self.record.len()
    }
}

/// What a column keeps besides its chunks and entities: the column's side-table entry.
///
/// Encoded as an LZ4-compressed, checksummed NBT compound (record v2; v1 records, zlib, still
/// decode; see `docs/format/anvil.md`): `Rest` (the chunk's remaining
/// NBT, biomes included), `Layout`, `DataVersion` (absent before 1.9), `Timestamp`,
/// `ExtraBlockEntities` and `OrphanEntities` (UUIDs of entities of a column without chunks).
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnRecord {
    /// The chunk NBT minus block states, block entities and entities.
    pub rest: Compound,
    /// NBT layout.
    pub layout: Layout,
    /// DataVersion.
    pub data_version: Option<i32>,
    /// Region timestamp (seconds since the epoch).
    pub timestamp: u32,
    /// Block entities not stored as components.
    pub extra_block_entities: Vec<Compound>,
    /// Entities referenced by no chunk (a column without sections).
    pub orphan_entities: Vec<Uuid>,
}

fn uuid_ints(u: &Uuid) -> Vec<i32> {
    u.chunks(4).map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]])).collect()
}

/// A UUID as Java stores it (`UUID`: four ints, most significant first) in terrane's 16
/// bytes; `None` unless there are exactly four.
pub fn ints_uuid(v: &[i32]) -> Option<Uuid> {
    if v.len() != 4 {
        return None;
    }
    let mut u = [0u8; 16];
    for (i, x) in v.iter().enumerate() {
        u[i * 4..i * 4 + 4].copy_from_slice(&x.to_be_bytes());
    }
    Some(u)
}

/// DataVersion of Minecraft 1.21.1, used by [`ColumnRecord::fresh`] callers that have no
/// better choice.
pub const DATA_VERSION_1_21_1: i32 = 3955;

impl ColumnRecord {
    /// The record of a column that never came from Minecraft (built in terrane): the 1.18+
    /// layout at `data_version`, status `minecraft:full`, light marked as not computed (so
    /// Minecraft relights the chunk), no heightmaps (recomputed on load); sections get the
    /// `minecraft:plains` biome on export.
    pub fn fresh(data_version: i32) -> Self {
        let mut rest = Compound::new();
        rest.insert("Status".to_string(), Tag::String("minecraft:full".into()));
        rest.insert("isLightOn".to_string(), Tag::Byte(0));
        rest.insert("sections".to_string(), Tag::List(nbt::id::COMPOUND, Vec::new()));
        rest.insert("block_entities".to_string(), Tag::List(nbt::id::COMPOUND, Vec::new()));
        ColumnRecord {
            rest,
            layout: Layout::Flat,
            data_version: Some(data_version),
            timestamp: 0,
            extra_block_entities: Vec::new(),
            orphan_entities: Vec::new(),
        }
    }

    /// The generation stage the chunk was saved at (its `Status`, at the top or in `Level`,
    /// without a `minecraft:` prefix), when it names one (chunks from before 1.13 do not).
    pub fn status(&self) -> Option<&str> {
        let tag = match self.rest.get("Level") {
            Some(Tag::Compound(level)) => level.get("Status"),
            _ => self.rest.get("Status"),
        };
        match tag {
            Some(Tag::String(s)) => Some(s.strip_prefix("minecraft:").unwrap_or(s)),
            _ => None,
        }
    }

    /// Whether Minecraft finished generating the chunk, so that the game shows it rather than
    /// generating it further: its status is `full` (1.14 and later) or `fullchunk` or
    /// `postprocessed` (1.13); a chunk from before 1.13 (no status) is finished unless its
    /// `TerrainPopulated` says 0.
    pub fn is_finished(&self) -> bool {
        match self.status() {
            Some(s) => matches!(s, "full" | "fullchunk" | "postprocessed"),
            None => match self.rest.get("Level") {
                Some(Tag::Compound(level)) => {
                    !matches!(level.get("TerrainPopulated"), Some(Tag::Byte(0)))
                }
                _ => true,
            },
        }
    }

    /// Encodes to a record v2: LZ4-compressed NBT with its CRC-32C (deterministic). Fails only on what NBT cannot
    /// hold (a string over 65,535 bytes, nesting over 512), which no parsed chunk contains.
    pub fn encode(&self) -> Result<Vec<u8>, ChunkError> {
        self.encode_with(None)
    }

    /// [`encode`](Self::encode), plus `EntitiesDataVersion` when the column's entities live
    /// in the 1.17+ `entities/` folder, in an entity chunk of that DataVersion (read back by
    /// [`terrane_to_column`], which then writes them there).
    pub fn encode_with(&self, entities_data_version: Option<i32>) -> Result<Vec<u8>, ChunkError> {
        encode_record(&RecordParts {
            rest: RecordRest::Tree(&self.rest),
            layout: self.layout,
            data_version: self.data_version,
            timestamp: self.timestamp,
            extra_block_entities: &self.extra_block_entities,
            orphan_entities: &self.orphan_entities,
            entities_data_version,
        })
    }

    /// Decodes [`encode`](Self::encode)'s output (`EntitiesDataVersion`, when present, is
    /// read by [`terrane_to_column`], not kept here).
    pub fn decode(bytes: &[u8]) -> Result<Self, ChunkError> {
        Self::decode_with(bytes).map(|(r, _)| r)
    }

    fn decode_with(bytes: &[u8]) -> Result<(Self, Option<i32>), ChunkError> {
        let raw = decompress_record(bytes)?;
        let mut m = nbt::parse(&raw)?;
        let bad = |w: &str| ChunkError::Malformed(format!("column record: {w}"));
        let rest = match m.remove("Rest") {
            Some(Tag::Compound(c)) => c,
            _ => return Err(bad("Rest")),
        };
        let layout = match m.get("Layout") {
            Some(Tag::Byte(0)) => Layout::Legacy,
            Some(Tag::Byte(1)) => Layout::Wrapped,
            Some(Tag::Byte(2)) => Layout::Flat,
            _ => return Err(bad("Layout")),
        };
        let data_version = m.get("DataVersion").and_then(Tag::as_i64).map(|v| v as i32);
        let timestamp = m.get("Timestamp").and_then(Tag::as_i64).unwrap_or(0) as u32;
        let extra_block_entities = match m.remove("ExtraBlockEntities") {
            Some(Tag::List(_, l)) => {
                l.into_iter()
                    .map(|v| {
                        if let Tag::Compound(c) = v {
                            Ok(c)
                        } else {
                            Err(bad("ExtraBlockEntities"))
                        }
                    })
                    .collect::<Result<_, _>>()?
            }
            None => Vec::new(),
            _ => return Err(bad("ExtraBlockEntities")),
        };
        let orphan_entities = match m.get("OrphanEntities") {
            Some(Tag::IntArray(a)) if a.len() % 4 == 0 => {
                a.chunks(4).filter_map(ints_uuid).collect()
            }
            None => Vec::new(),
            _ => return Err(bad("OrphanEntities")),
        };
        let entities_data_version =
            m.get("EntitiesDataVersion").and_then(Tag::as_i64).map(|v| v as i32);
        let record = ColumnRecord {
            rest,
            layout,
            data_version,
            timestamp,
            extra_block_entities,
            orphan_entities,
        };
        Ok((record, entities_data_version))
    }
}

/// A record's `Rest`: a tree, or its payload already written sorted
/// ([`Column::from_nbt_for_import`]).
#[derive(Clone, Copy)]
enum RecordRest<'a> {
    Tree(&'a Compound),
    Sorted(&'a [u8]),
}

/// The fields of a [`ColumnRecord`], borrowed: the import encodes a record from the column it
/// converts without copying the column's NBT.
struct RecordParts<'a> {
    rest: RecordRest<'a>,
    layout: Layout,
    data_version: Option<i32>,
    timestamp: u32,
    extra_block_entities: &'a [Compound],
    orphan_entities: &'a [Uuid],
    entities_data_version: Option<i32>,
}

/// Encodes a column record (`docs/format/anvil.md`): the root compound written key by key in
/// sorted order (as [`nbt::write_root`] orders keys), then compressed as a record v2 (LZ4).
fn encode_record(r: &RecordParts<'_>) -> Result<Vec<u8>, ChunkError> {
    use nbt::id;
    let mut w = nbt::Writer::sorted().with_buffer(Vec::with_capacity(16 * 1024));
    w.head(id::COMPOUND, "")?;
    // Keys in byte order: DataVersion, EntitiesDataVersion, ExtraBlockEntities, Layout,
    // OrphanEntities, Rest, Timestamp.
    if let Some(v) = r.data_version {
        w.named("DataVersion", &Tag::Int(v))?;
    }
    if let Some(v) = r.entities_data_version {
        w.named("EntitiesDataVersion", &Tag::Int(v))?;
    }
    w.head(id::LIST, "ExtraBlockEntities")?;
    w.out.push(if r.extra_block_entities.is_empty() { id::END } else { id::COMPOUND });
    w.len(r.extra_block_entities.len())?;
    for e in r.extra_block_entities {
        w.compound(e, 2)?;
    }
    let layout = match r.layout {
        Layout::Legacy => 0,
        Layout::Wrapped => 1,
        Layout::Flat => 2,
    };
    w.named("Layout", &Tag::Byte(layout))?;
    let orphans: Vec<i32> = r.orphan_entities.iter().flat_map(uuid_ints).collect();
    w.named("OrphanEntities", &Tag::IntArray(orphans))?;
    w.head(id::COMPOUND, "Rest")?;
    match r.rest {
        RecordRest::Tree(c) => w.compound(c, 1)?,
        RecordRest::Sorted(b) => w.out.extend_from_slice(b),
    }
    w.named("Timestamp", &Tag::Long(r.timestamp as i64))?;
    w.out.push(id::END);
    Ok(compress_record(&w.out))
}

/// First byte of a record v2 (`docs/format/anvil.md`, "Column record"). A record v1 is a zlib
/// stream, whose first byte always has 8 in its low nibble (the deflate method), so the two
/// never share a first byte.
const RECORD_V2: u8 = b'L';
/// Bytes before a record v2's LZ4 block: the tag, the NBT's length and its CRC-32C.
const RECORD_V2_HEAD: usize = 9;

/// A record's NBT as a record v2: `L`, the length (u32 LE), the CRC-32C of the NBT (u32 LE),
/// then one LZ4 block. LZ4 rather than the zlib of v1: records are mostly light and heightmap
/// arrays, which LZ4 packs within 8–17 % of zlib's level 1 at a fraction of its time (zlib
/// also clears a 128 KiB hash table per stream): 15 % of a whole import.
fn compress_record(raw: &[u8]) -> Vec<u8> {
    let max = lz4_flex::block::get_maximum_output_size(raw.len());
    let mut out = vec![0u8; RECORD_V2_HEAD + max];
    out[0] = RECORD_V2;
    // A record is far below 4 GiB: its NBT comes from one chunk of at most the decompression
    // limit.
    out[1..5].copy_from_slice(&(raw.len() as u32).to_le_bytes());
    out[5..9].copy_from_slice(&crc32c::crc32c(raw).to_le_bytes());
    let n = lz4_flex::block::compress_into(raw, &mut out[RECORD_V2_HEAD..])
        .expect("the output has LZ4's worst-case size");
    out.truncate(RECORD_V2_HEAD + n);
    out
}

/// A record's NBT from a record v2, or from a record v1 (zlib) as earlier imports wrote them.
/// Bounded: a v2 record declaring more than its block can hold (LZ4 expands at most 255
/// times) or more than the chunk decompression limit is refused before allocating, and its
/// checksum must match.
fn decompress_record(bytes: &[u8]) -> Result<Vec<u8>, ChunkError> {
    let limit = crate::region::DEFAULT_MAX_DECOMPRESSED;
    if bytes.first() != Some(&RECORD_V2) {
        return crate::region::decompress(
            crate::region::Compression::Zlib,
            bytes,
            bytes.len(),
            limit,
        );
    }
    let err = |message: String| ChunkError::Decompress { compression: "LZ4 record", message };
    let Some((head, block)) = bytes.split_first_chunk::<RECORD_V2_HEAD>() else {
        return Err(err(format!("{} bytes, shorter than the record's head", bytes.len())));
    };
    let n = u32::from_le_bytes([head[1], head[2], head[3], head[4]]) as usize;
    let crc = u32::from_le_bytes([head[5], head[6], head[7], head[8]]);
    if n > limit {
        return Err(ChunkError::TooLarge { limit });
    }
    if n > block.len().saturating_mul(255) + 16 {
        return Err(err(format!("declares {n} bytes, more than its {} can hold", block.len())));
    }
    let mut raw = vec![0u8; n];
    let got = lz4_flex::block::decompress_into(block, &mut raw).map_err(|e| err(e.to_string()))?;
    if got != n {
        return Err(err(format!("decodes to {got} bytes, declares {n}")));
    }
    if crc32c::crc32c(&raw) != crc {
        return Err(err("checksum mismatch: the record is damaged".to_string()));
    }
    Ok(raw)
}

/// The id of the block-entity component in `schema`, registering it when missing.
pub fn block_entity_component(schema: &mut Schema) -> Result<ComponentId, Error> {
    match schema.components().find(BLOCK_ENTITY_COMPONENT) {
        Some(i) => Ok(ComponentId::variable(i)),
        None => schema
            .add_component(BLOCK_ENTITY_COMPONENT, ComponentKind::Variable)
            .map_err(|e| Error::Convert(e.to_string())),
    }
}

/// The block id of a block state by its canonical form ([`block_state::canonical`]: any
/// spelling of one state gets one id), registering that form (with the block-entity
/// component for [`is_block_entity_block`] names) when missing.
pub fn block_id(schema: &mut Schema, be: ComponentId, state: &str) -> Result<BlockId, Error> {
    let state: Cow<'_, str> = if block_state::is_canonical(state) {
        Cow::Borrowed(state)
    } else {
        Cow::Owned(block_state::canonical(state))
    };
    if let Some(id) = schema.blocks().find(&state) {
        return Ok(BlockId(id));
    }
    let comps: &[ComponentId] = if is_block_entity_block(&state) { &[be] } else { &[] };
    schema.add_block(&state, comps).map_err(|e| Error::Convert(e.to_string()))
}

fn entity_uuid(e: &Compound) -> Option<Uuid> {
    if let Some(Tag::IntArray(a)) = e.get("UUID") {
        return ints_uuid(a);
    }
    let most = e.get("UUIDMost").and_then(Tag::as_i64)?;
    let least = e.get("UUIDLeast").and_then(Tag::as_i64)?;
    let mut u = [0u8; 16];
    u[..8].copy_from_slice(&most.to_be_bytes());
    u[8..].copy_from_slice(&least.to_be_bytes());
    Some(u)
}

fn synth_uuid(pos: ColumnPos, i: usize) -> Uuid {
    // Deterministic, and marked by a fixed prefix so it is recognisable.
    let mut s = pos.to_u64() ^ (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut next = || {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    let mut u = [0u8; 16];
    u[..8].copy_from_slice(&next().to_be_bytes());
    u[8..].copy_from_slice(&next().to_be_bytes());
    u[..4].copy_from_slice(b"anvl");
    u
}

fn entity_section_y(e: &Compound) -> Option<i64> {
    let Some(Tag::List(_, p)) = e.get("Pos") else { return None };
    match p.get(1)? {
        Tag::Double(y) if y.is_finite() => Some((y.floor() as i64) >> 4),
        Tag::Float(y) if y.is_finite() => Some((y.floor() as i64) >> 4),
        _ => None,
    }
}

fn be_pos(e: &Compound) -> Option<(i32, i32, i32)> {
    match (e.get("x"), e.get("y"), e.get("z")) {
        (Some(Tag::Int(x)), Some(Tag::Int(y)), Some(Tag::Int(z))) => Some((*x, *y, *z)),
        _ => None,
    }
}

/// Statistics of one column's conversion.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct ColumnStats {
    /// Cubic chunks produced.
    pub chunks: u64,
    /// Non-air blocks (anything but `air`, `cave_air`, `void_air`).
    pub blocks: u64,
    /// Block entities carried (components + column record).
    pub block_entities: u64,
    /// Entities carried.
    pub entities: u64,
}

fn is_air(state: &str) -> bool {
    matches!(state, "minecraft:air" | "minecraft:cave_air" | "minecraft:void_air")
}

/// Converts a decoded column to terrane chunks, growing `schema`'s block registry.
pub fn column_to_terrane(
    col: &Column,
    timestamp: u32,
    schema: &mut Schema,
) -> Result<(ImportedColumn, ColumnStats), Error> {
    let (c, stats) = convert(col, RecordRest::Tree(&col.rest), timestamp, schema)?;
    Ok((c.encode(schema), stats))
}

/// Decodes one chunk's NBT and converts it as the import does: the result of
/// [`Column::from_nbt`] then [`column_to_terrane`], without building the tree of what the
/// column record keeps (light, heightmaps, biomes...): those values are copied from the
/// chunk's bytes into the record's sorted NBT, which made the import about a third faster.
/// Entities are the chunk's own (a 1.17+ entity chunk needs [`Column::add_entity_chunk`]).
pub fn chunk_to_terrane(
    nbt: &[u8],
    pos: (i32, i32),
    timestamp: u32,
    schema: &mut Schema,
) -> Result<(ImportedColumn, ColumnStats), Error> {
    let (col, rest) = Column::from_nbt_for_import(nbt, pos)?;
    let (c, stats) = column_to_terrane_sorted(&col, &rest, timestamp, schema)?;
    Ok((c.encode(schema), stats))
}

/// [`column_to_terrane`] for a column from [`Column::from_nbt_for_import`], whose rest is the
/// record's `Rest` payload, written already; the chunks not yet encoded.
pub(crate) fn column_to_terrane_sorted(
    col: &Column,
    rest: &[u8],
    timestamp: u32,
    schema: &mut Schema,
) -> Result<(ColumnChunks, ColumnStats), Error> {
    convert(col, RecordRest::Sorted(rest), timestamp, schema)
}

fn convert(
    col: &Column,
    rest: RecordRest<'_>,
    timestamp: u32,
    schema: &mut Schema,
) -> Result<(ColumnChunks, ColumnStats), Error> {
    let pos = ColumnPos::new(col.x, col.z);
    let be = block_entity_component(schema)?;
    let mut stats = ColumnStats::default();
    let mut chunks: Vec<(i64, Chunk)> = Vec::with_capacity(col.sections.len());
    for s in &col.sections {
        let ids =
            s.palette.iter().map(|n| block_id(schema, be, n)).collect::<Result<Vec<_>, _>>()?;
        let mut chunk = Chunk::new(ids[0]);
        let counts = if ids.len() == 1 {
            vec![CELLS as u32]
        } else {
            if s.blocks.len() != CELLS {
                let n = s.blocks.len();
                return Err(Error::Convert(format!("section y {} has {n} cells", s.y)));
            }
            // One bulk write, in terrane's cell order (x << 8 | y << 4 | z) from Minecraft's
            // (y << 8 | z << 4 | x); it counts the cells of each entry for the statistics.
            let mut indices = [0u16; CELLS];
            for (i, cell) in indices.iter_mut().enumerate() {
                let (x, y, z) = (i >> 8, (i >> 4) & 15, i & 15);
                *cell = s.blocks[(y << 8) | (z << 4) | x];
            }
            chunk.set_blocks_paletted(&ids, &indices)
        };
        for (i, n) in counts.iter().enumerate() {
            if !is_air(&s.palette[i]) {
                stats.blocks += *n as u64;
            }
        }
        chunks.push((s.y as i64, chunk));
    }
    let mut extra = Vec::new();
    for e in &col.block_entities {
        stats.block_entities += 1;
        let placed = be_pos(e).and_then(|(x, y, z)| {
            if x >> 4 != col.x || z >> 4 != col.z {
                return None;
            }
            let cy = (y >> 4) as i64;
            let k = chunks.binary_search_by_key(&cy, |c| c.0).ok()?;
            let cell = cell_index((x & 15) as u32, (y & 15) as u32, (z & 15) as u32);
            let chunk = &mut chunks[k].1;
            if chunk.component(cell, 0, be).is_some() {
                return None; // two block entities at one cell: keep the second aside
            }
            let mut rest = e.clone();
            rest.remove("x");
            rest.remove("y");
            rest.remove("z");
            let bytes = nbt::write_root(&rest).ok()?;
            chunk.set_component(schema, cell, 0, be, &bytes).ok()
        });
        if placed.is_none() {
            extra.push(e.clone());
        }
    }
    let mut entities = Vec::with_capacity(col.entities.len());
    let mut orphans = Vec::new();
    for (i, e) in col.entities.iter().enumerate() {
        stats.entities += 1;
        let mut uuid = entity_uuid(e).unwrap_or_else(|| synth_uuid(pos, i));
        if entities.iter().any(|(u, _)| *u == uuid) {
            uuid = synth_uuid(pos, i);
        }
        entities.push((uuid, nbt::write_root(e)?));
        if chunks.is_empty() {
            orphans.push(uuid);
            continue;
        }
        let y = entity_section_y(e).unwrap_or(chunks[0].0);
        let k = match chunks.binary_search_by_key(&y, |c| c.0) {
            Ok(k) => k,
            Err(k) => k.min(chunks.len() - 1),
        };
        chunks[k].1.add_entity(uuid);
    }
    stats.chunks = chunks.len() as u64;
    let record = encode_record(&RecordParts {
        rest,
        layout: col.layout,
        data_version: col.data_version,
        timestamp,
        extra_block_entities: &extra,
        orphan_entities: &orphans,
        entities_data_version: col.external_entities,
    })?;
    Ok((ColumnChunks { pos, chunks, entities, record }, stats))
}

/// Rebuilds a decoded column (and its timestamp) from an imported column.
///
/// Errors on chunks that do not decode with `schema`, on extra block layers (Minecraft has
/// none), and on entity references without a record.
pub fn terrane_to_column(imp: &ImportedColumn, schema: &Schema) -> Result<(Column, u32), Error> {
    let conv = |m: String| Error::Convert(format!("column ({}, {}): {m}", imp.pos.x, imp.pos.z));
    let (record, entities_data_version) =
        ColumnRecord::decode_with(&imp.record).map_err(|e| conv(e.to_string()))?;
    let be = schema.components().find(BLOCK_ENTITY_COMPONENT).map(ComponentId::variable);
    let blobs: HashMap<Uuid, &Vec<u8>> = imp.entities.iter().map(|(u, b)| (*u, b)).collect();
    let mut sections = Vec::with_capacity(imp.chunks.len());
    let mut block_entities = Vec::new();
    let mut entity_ids: Vec<Uuid> = Vec::new();
    for (y, bytes) in &imp.chunks {
        let view = ChunkView::parse(bytes).map_err(|e| conv(format!("chunk y {y}: {e}")))?;
        if view.layered_block_count() > 0 {
            return Err(conv(format!(
                "chunk y {y} has extra block layers, which Minecraft cannot store"
            )));
        }
        let comps = view.components(schema).map_err(|e| conv(format!("chunk y {y}: {e}")))?;
        if !(-128..=127).contains(y) {
            return Err(conv(format!("chunk y {y} outside Minecraft's section range -128..=127")));
        }
        let y32 = *y as i32;
        let ids: Vec<BlockId> = view.palette_iter().collect();
        let palette = ids
            .iter()
            .map(|id| {
                schema
                    .blocks()
                    .get(id.0)
                    .map(str::to_string)
                    .ok_or_else(|| conv(format!("block id {} not in the registry", id.0)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let mut blocks = vec![0u16; CELLS];
        // A one-entry palette is a uniform chunk: every index is 0 already.
        if ids.len() > 1 {
            view.for_each_block(|i, id| {
                // terrane index x << 8 | y << 4 | z; Minecraft's y << 8 | z << 4 | x.
                let (x, by, z) = ((i >> 8) as usize, ((i >> 4) & 15) as usize, (i & 15) as usize);
                blocks[(by << 8) | (z << 4) | x] = ids.binary_search(&id).unwrap_or(0) as u16;
            });
        }
        if let Some(be) = be.filter(|&be| comps.count(be) > 0) {
            for (cell, _layer, value) in comps.values(be) {
                if value.is_empty() {
                    continue;
                }
                let mut m = nbt::parse(value).map_err(|e| conv(format!("block entity: {e}")))?;
                let (cx, cy, cz) = terrane_section::cell_coords(cell);
                let at = |c: i32, l: u32| c.wrapping_mul(16).wrapping_add(l as i32);
                m.insert("x", Tag::Int(at(imp.pos.x, cx)));
                m.insert("y", Tag::Int(at(y32, cy)));
                m.insert("z", Tag::Int(at(imp.pos.z, cz)));
                block_entities.push(m);
            }
        }
        entity_ids.extend_from_slice(view.entities());
        sections.push(Section { y: y32, palette, blocks });
    }
    block_entities.extend(record.extra_block_entities.iter().cloned());
    entity_ids.extend_from_slice(&record.orphan_entities);
    let mut entities = Vec::with_capacity(entity_ids.len());
    for u in entity_ids {
        let blob = blobs.get(&u).ok_or_else(|| conv("entity reference without a record".into()))?;
        entities.push(nbt::parse(blob).map_err(|e| conv(format!("entity: {e}")))?);
    }
    sections.sort_by_key(|s| s.y);
    let col = Column {
        x: imp.pos.x,
        z: imp.pos.z,
        data_version: record.data_version,
        layout: record.layout,
        sections,
        block_entities,
        entities,
        external_entities: entities_data_version,
        rest: record.rest,
    };
    Ok((col, record.timestamp))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_entity_names() {
        for s in [
            "minecraft:chest[facing=north,type=single,waterlogged=false]",
            "minecraft:oak_sign[rotation=0,waterlogged=false]",
            "minecraft:white_bed[facing=east,occupied=false,part=foot]",
            "minecraft:shulker_box",
            "minecraft:furnace[facing=north,lit=false]",
        ] {
            assert!(is_block_entity_block(s), "{s}");
        }
        for s in [
            "minecraft:air",
            "minecraft:stone",
            "minecraft:bedrock",
            "minecraft:chest_minecart",
            "legacy:54:2",
        ] {
            assert!(!is_block_entity_block(s), "{s}");
        }
    }

    #[test]
    fn record_roundtrip() {
        let r = ColumnRecord {
            rest: [("Status".to_string(), Tag::String("full".into()))].into_iter().collect(),
            layout: Layout::Flat,
            data_version: Some(3955),
            timestamp: 1_700_000_000,
            extra_block_entities: vec![
                [("id".to_string(), Tag::String("x:y".into()))].into_iter().collect(),
            ],
            orphan_entities: vec![[9; 16]],
        };
        assert_eq!(ColumnRecord::decode(&r.encode().unwrap()).unwrap(), r);
        let (back, dv) = ColumnRecord::decode_with(&r.encode_with(Some(3955)).unwrap()).unwrap();
        assert_eq!((back, dv), (r.clone(), Some(3955)));
        assert_eq!(ColumnRecord::decode_with(&r.encode().unwrap()).unwrap().1, None);
    }

    fn sample_record() -> ColumnRecord {
        let mut r = ColumnRecord::fresh(3955);
        r.rest.insert("SkyLight", Tag::ByteArray(vec![-1; 2048]));
        r.timestamp = 7;
        r
    }

    /// Record v2: the tag, length, CRC-32C and LZ4 block, byte for byte; and a record v1 (the
    /// zlib stream earlier imports wrote) still reads, to the same record.
    #[test]
    fn records_are_v2_and_v1_records_still_read() {
        use std::io::Write;
        let r = sample_record();
        let v2 = r.encode().unwrap();
        let raw = decompress_record(&v2).unwrap();
        assert_eq!(v2[0], b'L');
        assert_eq!(v2[1..5], (raw.len() as u32).to_le_bytes());
        assert_eq!(v2[5..9], crc32c::crc32c(&raw).to_le_bytes());
        assert_eq!(lz4_flex::block::decompress(&v2[9..], raw.len()).unwrap(), raw);
        assert!(v2.len() < raw.len() / 4, "the light array compresses");
        // Record v1: zlib at level 1, as `zlib_fast` wrote it before v2.
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::fast());
        z.write_all(&raw).unwrap();
        let v1 = z.finish().unwrap();
        assert_eq!(v1[0] & 0x0F, 8, "a zlib stream never starts with the v2 tag");
        assert_eq!(ColumnRecord::decode(&v1).unwrap(), r);
        assert_eq!(ColumnRecord::decode(&v2).unwrap(), r);
    }

    /// A damaged or lying record v2 is a typed error: never a panic, never wrong data, never
    /// an allocation its bytes cannot justify.
    #[test]
    fn damaged_v2_records_are_refused() {
        let v2 = sample_record().encode().unwrap();
        for cut in 0..v2.len() {
            assert!(ColumnRecord::decode(&v2[..cut]).is_err(), "cut at {cut}");
        }
        for i in 1..v2.len() {
            let mut b = v2.clone();
            b[i] ^= 0x20;
            // Whatever decodes is the record itself (a flip the LZ4 block does not read).
            if let Ok(back) = ColumnRecord::decode(&b) {
                assert_eq!(back, sample_record(), "byte {i} flipped");
            }
        }
        let mut b = v2.clone();
        b[5] ^= 1; // the checksum
        let e = ColumnRecord::decode(&b).unwrap_err();
        assert!(e.to_string().contains("checksum"), "{e}");
        let mut b = v2.clone();
        b[1..5].copy_from_slice(&(60u32 << 20).to_le_bytes()); // 60 MiB from a few bytes
        let e = ColumnRecord::decode(&b).unwrap_err();
        assert!(e.to_string().contains("more than its"), "{e}");
        b[1..5].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(ColumnRecord::decode(&b), Err(ChunkError::TooLarge { .. })));
    }

    #[test]
    fn a_chunk_is_finished_at_its_last_stage_in_every_layout() {
        let with = |layout: Layout, key: &str, tag: Option<Tag>| {
            let mut r = ColumnRecord::fresh(DATA_VERSION_1_21_1);
            r.rest.remove("Status");
            r.layout = layout;
            let mut at = Compound::new();
            if let Some(t) = tag {
                at.insert(key.to_string(), t);
            }
            if layout == Layout::Flat {
                r.rest.extend(at);
            } else {
                r.rest.insert("Level".to_string(), Tag::Compound(at));
            }
            r
        };
        let s = |v: &str| Some(Tag::String(v.into()));
        for (layout, status, finished) in [
            (Layout::Flat, "minecraft:full", true),
            (Layout::Flat, "minecraft:features", false),
            (Layout::Flat, "minecraft:structure_starts", false),
            (Layout::Wrapped, "full", true),
            (Layout::Wrapped, "postprocessed", true),
            (Layout::Wrapped, "fullchunk", true),
            (Layout::Wrapped, "liquid_carved", false),
            (Layout::Wrapped, "minecraft:light", false),
        ] {
            let r = with(layout, "Status", s(status));
            assert_eq!(r.is_finished(), finished, "{layout:?} {status}");
            assert_eq!(r.status(), Some(status.trim_start_matches("minecraft:")));
        }
        assert!(ColumnRecord::fresh(DATA_VERSION_1_21_1).is_finished());
        assert!(!with(Layout::Legacy, "TerrainPopulated", Some(Tag::Byte(0))).is_finished());
        assert!(with(Layout::Legacy, "TerrainPopulated", Some(Tag::Byte(1))).is_finished());
        assert!(with(Layout::Legacy, "LightPopulated", Some(Tag::Byte(0))).is_finished());
        assert_eq!(with(Layout::Legacy, "x", None).status(), None);
    }
}
