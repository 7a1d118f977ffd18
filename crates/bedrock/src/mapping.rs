//! Bedrock columns ↔ cubic terrane chunks (`docs/format/bedrock.md`, "Mapping to terrane").
//!
//! - each decoded sub-chunk becomes one 16³ [`Chunk`] at chunk y = its `y` index: storage 0
//!   is layer 0, storage `n` is extra layer `n` of the cells where it (or a higher storage)
//!   holds something other than air; block states are registered by their
//!   [`state_name`];
//! - each entity of the column's `digp` list becomes an entity record (its 8-byte unique id
//!   after the 8 bytes `bedrock\0`, its NBT as stored) referenced by the chunk its `Pos`
//!   falls in, when the column has that chunk;
//! - every other record of the column (biomes, block entities, the old entity list, version,
//!   generation state, ...), the sub-chunks that do not decode and the `digp` order are kept
//!   as they are in the column's [`BedrockRecord`]; on export, its `Checksums` record is
//!   rebuilt from the bytes written ([`crate::checksums`]).

use std::collections::HashMap;

use terrane_chunk::{BlockId, Chunk, ChunkView, Schema, Uuid};
use terrane_nbt::{Compound, Reader, Tag, Writer};
use terrane_section::cell_index;

use crate::checksums::{self, Checksums};
use crate::error::{Error, Result};
use crate::key::{BedrockColumnPos, tag};
use crate::names::{parse_state_name, state_name};
use crate::read::RawColumn;
use crate::subchunk::{CELLS, Storage, SubChunk, bedrock_index};

/// The first 8 bytes of the UUID of an entity imported from Bedrock (its unique id follows).
pub const ENTITY_UUID_PREFIX: [u8; 8] = *b"bedrock\0";

/// Chunk format version written for columns that did not come from Bedrock (1.21's 40).
pub const NATIVE_CHUNK_VERSION: u8 = 40;

/// The UUID terrane keeps a Bedrock entity under.
pub fn entity_uuid(id: i64) -> Uuid {
    let mut u = [0u8; 16];
    u[..8].copy_from_slice(&ENTITY_UUID_PREFIX);
    u[8..].copy_from_slice(&id.to_be_bytes());
    u
}

/// The unique id of an entity UUID made by [`entity_uuid`].
pub fn entity_id(u: &Uuid) -> Option<i64> {
    (u[..8] == ENTITY_UUID_PREFIX).then(|| i64::from_be_bytes(u[8..].try_into().expect("8 bytes")))
}

/// What a column keeps besides its chunks and entities (`docs/format/bedrock.md`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BedrockRecord {
    /// Chunk records other than sub-chunks, by tag, as stored.
    pub records: Vec<(u8, Vec<u8>)>,
    /// Sub-chunks that did not decode, by `y`, as stored.
    pub raw_sub_chunks: Vec<(i8, Vec<u8>)>,
    /// Whether the column had a `digp` entity list.
    pub digp: bool,
    /// The `digp` list's ids, in order (missing entities included).
    pub actors: Vec<i64>,
    /// The block version of the air that fills the column's extra storages where a cell has
    /// no block of that layer, when it is not the world's block version.
    pub layer_air_version: Option<i32>,
}

impl BedrockRecord {
    /// Encodes as an NBT compound (big-endian, keys sorted).
    pub fn encode(&self) -> Vec<u8> {
        let bytes = |v: &[u8]| Tag::ByteArray(v.iter().map(|&b| b as i8).collect());
        let mut c = Compound::new();
        let recs = self.records.iter().map(|(t, v)| {
            let mut e = Compound::new();
            e.insert("Tag", Tag::Byte(*t as i8));
            e.insert("Value", bytes(v));
            e
        });
        c.insert("Records", Tag::compound_list(recs));
        let raw = self.raw_sub_chunks.iter().map(|(y, v)| {
            let mut e = Compound::new();
            e.insert("Y", Tag::Byte(*y));
            e.insert("Value", bytes(v));
            e
        });
        c.insert("RawSubChunks", Tag::compound_list(raw));
        c.insert("Digp", Tag::Byte(i8::from(self.digp)));
        c.insert("Actors", Tag::LongArray(self.actors.clone()));
        if let Some(v) = self.layer_air_version {
            c.insert("LayerAirVersion", Tag::Int(v));
        }
        let mut w = Writer::sorted();
        w.named("", &Tag::Compound(c)).expect("a record's NBT always encodes");
        w.out
    }

    /// Decodes [`encode`](Self::encode)'s bytes.
    pub fn decode(b: &[u8]) -> Result<BedrockRecord> {
        let c = Compound::from_bytes(b)?;
        let bad = |what: &str| Error::SubChunk(format!("column record: {what}"));
        let list = |k: &str| match c.get(k) {
            Some(Tag::List(_, items)) => Ok(items.as_slice()),
            _ => Err(bad(k)),
        };
        let bytes = |e: &Compound| match e.get("Value") {
            Some(Tag::ByteArray(v)) => Ok(v.iter().map(|&b| b as u8).collect::<Vec<u8>>()),
            _ => Err(bad("Value")),
        };
        let byte = |e: &Compound, k: &str| match e.get(k) {
            Some(Tag::Byte(b)) => Ok(*b),
            _ => Err(bad(k)),
        };
        let mut r = BedrockRecord::default();
        for t in list("Records")? {
            let Tag::Compound(e) = t else { return Err(bad("Records")) };
            r.records.push((byte(e, "Tag")? as u8, bytes(e)?));
        }
        for t in list("RawSubChunks")? {
            let Tag::Compound(e) = t else { return Err(bad("RawSubChunks")) };
            r.raw_sub_chunks.push((byte(e, "Y")?, bytes(e)?));
        }
        r.digp = byte(&c, "Digp")? != 0;
        r.actors = match c.get("Actors") {
            Some(Tag::LongArray(a)) => a.clone(),
            _ => return Err(bad("Actors")),
        };
        r.layer_air_version = match c.get("LayerAirVersion") {
            Some(Tag::Int(v)) => Some(*v),
            None => None,
            _ => return Err(bad("LayerAirVersion")),
        };
        Ok(r)
    }
}

/// One column converted for a store ([`column_to_terrane`]), or for a caller that translates
/// its chunks further before encoding them once, in the format they end in
/// (`ConvertedColumn<Chunk>`, [`column_to_chunks`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConvertedColumn<C = Vec<u8>> {
    /// The terrane chunks by chunk y, ascending: encoded (format v1), or decoded.
    pub chunks: Vec<(i64, C)>,
    /// Entity records: UUID ([`entity_uuid`]) and the entity's NBT as stored.
    pub entities: Vec<(Uuid, Vec<u8>)>,
    /// The encoded [`BedrockRecord`].
    pub record: Vec<u8>,
    /// Non-air blocks converted: the cells whose block (layer 0) is not air, as terrane-anvil
    /// counts a Java column's. Extra layers (the water of a waterlogged block) are not counted:
    /// the cell is already.
    pub blocks: u64,
    /// Block entities the column holds (kept in the record).
    pub block_entities: u64,
    /// Entities of the column's pre-1.18.30 entity list (tag 0x32), kept in the record as
    /// stored (the `digp` list's entities are [`entities`](Self::entities)).
    pub legacy_entities: u64,
    /// What was damaged and kept as it is instead of converted, one line each.
    pub damaged: Vec<String>,
}

fn block_id(schema: &mut Schema, name: &str) -> Result<BlockId> {
    match schema.blocks().find(name) {
        Some(id) => Ok(BlockId(id)),
        None => Ok(schema.add_block(name, &[])?),
    }
}

fn is_air(c: &Compound) -> bool {
    matches!(c.get("name"), Some(Tag::String(n)) if n == "minecraft:air")
}

/// The cubic chunk of one decoded sub-chunk.
fn sub_chunk_to_chunk(sc: &SubChunk, schema: &mut Schema, world_version: i32) -> Result<Chunk> {
    let ids: Vec<Vec<BlockId>> = sc
        .storages
        .iter()
        .map(|s| {
            s.palette.iter().map(|c| block_id(schema, &state_name(c, world_version))).collect()
        })
        .collect::<Result<_>>()?;
    let Some(first) = sc.storages.first() else {
        return Err(Error::SubChunk("no storage".into()));
    };
    let mut chunk = Chunk::new(ids[0][0]);
    let mut local = Box::new([0u16; CELLS]);
    for x in 0..16 {
        for y in 0..16 {
            for z in 0..16 {
                local[cell_index(x, y, z) as usize] = first.indices[bedrock_index(x, y, z)];
            }
        }
    }
    chunk.set_blocks_paletted(&ids[0], &local);
    if sc.storages.len() > 1 {
        let air: Vec<Vec<bool>> =
            sc.storages.iter().map(|s| s.palette.iter().map(is_air).collect()).collect();
        for x in 0..16 {
            for y in 0..16 {
                for z in 0..16 {
                    let b = bedrock_index(x, y, z);
                    let top = (1..sc.storages.len())
                        .rev()
                        .find(|&l| !air[l][sc.storages[l].indices[b] as usize]);
                    let Some(top) = top else { continue };
                    let cell = cell_index(x, y, z);
                    for l in 1..=top {
                        chunk.push_layer(cell, ids[l][sc.storages[l].indices[b] as usize]);
                    }
                }
            }
        }
    }
    Ok(chunk)
}

/// The non-air cells of a sub-chunk's first storage (its blocks; the other storages are extra
/// layers).
fn non_air_blocks(sc: &SubChunk) -> u64 {
    let Some(first) = sc.storages.first() else { return 0 };
    let air: Vec<bool> = first.palette.iter().map(is_air).collect();
    first.indices.iter().filter(|&&i| !air.get(i as usize).copied().unwrap_or(false)).count() as u64
}

/// How many little-endian NBT compounds `value` holds one after the other (a column's block
/// entities, its pre-1.18.30 entity list), and the error that ended the count early, if any.
pub fn count_compounds(value: &[u8]) -> (u64, Option<terrane_nbt::Error>) {
    let mut r = Reader::little_endian(value);
    let mut n = 0;
    while r.remaining() > 0 {
        match r.root_compound() {
            Ok(_) => n += 1,
            Err(e) => return (n, Some(e)),
        }
    }
    (n, None)
}

/// The version of the first air entry of a storage above the first, when it is not the
/// world's.
fn layer_air_version(sc: &SubChunk, world_version: i32) -> Option<i32> {
    sc.storages.iter().skip(1).flat_map(|s| &s.palette).find(|c| is_air(c)).and_then(|c| {
        match c.get("version") {
            Some(Tag::Int(v)) if *v != world_version => Some(*v),
            _ => None,
        }
    })
}

/// An entity's chunk y from its `Pos` (a list of three floats), if it has one.
fn entity_chunk_y(nbt: &[u8]) -> Option<i64> {
    let c = Reader::little_endian(nbt).root_compound().ok()?;
    match c.get("Pos") {
        Some(Tag::List(_, p)) if p.len() == 3 => match p[1] {
            Tag::Float(y) if y.is_finite() => Some((y.floor() as i64).div_euclid(16)),
            _ => None,
        },
        _ => None,
    }
}

/// Converts one column: its chunks (registering new block states in `schema`), entities and
/// record. Damaged sub-chunks and records are listed in [`ConvertedColumn::damaged`] and kept
/// as they are; the conversion itself fails only on the schema's limits.
pub fn column_to_terrane(
    raw: &RawColumn,
    schema: &mut Schema,
    world_version: i32,
) -> Result<ConvertedColumn> {
    Ok(column_to_chunks(raw, schema, world_version)?.encode(schema))
}

impl ConvertedColumn<Chunk> {
    /// The column with its chunks encoded (format v1) with `schema`, the conversion's.
    pub fn encode(self, schema: &Schema) -> ConvertedColumn {
        ConvertedColumn {
            chunks: self.chunks.into_iter().map(|(y, c)| (y, c.encode(schema))).collect(),
            entities: self.entities,
            record: self.record,
            blocks: self.blocks,
            block_entities: self.block_entities,
            legacy_entities: self.legacy_entities,
            damaged: self.damaged,
        }
    }
}

/// [`column_to_terrane`] with the chunks left decoded.
pub fn column_to_chunks(
    raw: &RawColumn,
    schema: &mut Schema,
    world_version: i32,
) -> Result<ConvertedColumn<Chunk>> {
    let mut out = ConvertedColumn {
        chunks: Vec::new(),
        entities: Vec::new(),
        record: Vec::new(),
        blocks: 0,
        block_entities: 0,
        legacy_entities: 0,
        damaged: Vec::new(),
    };
    let mut record = BedrockRecord { digp: raw.digp, ..BedrockRecord::default() };
    let pos = raw.pos;
    let mut chunks: Vec<(i64, Chunk)> = Vec::new();
    for (y, bytes) in &raw.sub_chunks {
        match SubChunk::decode(bytes) {
            Ok(sc) => {
                if record.layer_air_version.is_none() {
                    record.layer_air_version = layer_air_version(&sc, world_version);
                }
                let chunk = sub_chunk_to_chunk(&sc, schema, world_version)?;
                out.blocks += non_air_blocks(&sc);
                chunks.push((i64::from(*y), chunk));
            }
            Err(e @ (Error::SubChunk(_) | Error::UnsupportedSubChunk(_) | Error::Nbt(_))) => {
                out.damaged.push(format!("{} sub-chunk {y}: {e}", describe(pos)));
                record.raw_sub_chunks.push((*y, bytes.clone()));
            }
            Err(e) => return Err(e),
        }
    }
    for (t, v) in &raw.records {
        let (count, what) = match *t {
            tag::BLOCK_ENTITY => (&mut out.block_entities, "block entities"),
            tag::ENTITY => (&mut out.legacy_entities, "entity list"),
            _ => {
                record.records.push((*t, v.clone()));
                continue;
            }
        };
        let (n, e) = count_compounds(v);
        *count += n;
        if let Some(e) = e {
            out.damaged.push(format!("{} {what}: {e}", describe(pos)));
        }
        record.records.push((*t, v.clone()));
    }
    for (id, nbt) in &raw.actors {
        let u = entity_uuid(*id);
        record.actors.push(*id);
        if let Some(cy) = entity_chunk_y(nbt) {
            if let Some((_, c)) = chunks.iter_mut().find(|(y, _)| *y == cy) {
                c.add_entity(u);
            }
        } else {
            out.damaged
                .push(format!("{} entity {id}: no readable Pos (kept, not placed)", describe(pos)));
        }
        out.entities.push((u, nbt.clone()));
    }
    for id in &raw.missing_actors {
        out.damaged
            .push(format!("{} entity {id}: listed in digp, no actorprefix record", describe(pos)));
        record.actors.push(*id);
    }
    out.chunks = chunks;
    out.record = record.encode();
    Ok(out)
}

fn describe(p: BedrockColumnPos) -> String {
    format!("dimension {} column {},{}", p.dim, p.x, p.z)
}

/// One column's records for a Bedrock database: key and value of each, from its terrane
/// chunks (`(y, bytes)`), its record (`None` for a column that did not come from Bedrock)
/// and the entity table. A `Checksums` record the column kept is rebuilt to hash the values
/// returned ([`checksums::rebuild`]). A column without a record writes no sub-chunk for an
/// all-air chunk (Bedrock reads a missing sub-chunk as air; `docs/format/bedrock.md`).
pub fn terrane_to_column(
    pos: BedrockColumnPos,
    chunks: &[(i64, Vec<u8>)],
    record: Option<&BedrockRecord>,
    entities: &HashMap<Uuid, Vec<u8>>,
    schema: &Schema,
    world_version: i32,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let chunks = chunks.iter().map(|(y, b)| (*y, Source::Encoded(b)));
    column_records(pos, chunks, record, entities, schema, world_version)
}

/// [`terrane_to_column`] from decoded chunks (`(y, chunk)`, blocks of `schema`): for a caller
/// that built them itself (an edition conversion), so that each is encoded once, as a
/// sub-chunk.
pub fn chunks_to_column(
    pos: BedrockColumnPos,
    chunks: &[(i64, Chunk)],
    record: Option<&BedrockRecord>,
    entities: &HashMap<Uuid, Vec<u8>>,
    schema: &Schema,
    world_version: i32,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let chunks = chunks.iter().map(|(y, c)| (*y, Source::Decoded(c)));
    column_records(pos, chunks, record, entities, schema, world_version)
}

/// A terrane chunk as [`column_records`] takes it.
enum Source<'a> {
    /// Encoded (format v1): read in place where it has no extra layers.
    Encoded(&'a [u8]),
    Decoded(&'a Chunk),
}

impl Source<'_> {
    /// The palette and every cell's index into it, when the chunk has no extra layers.
    fn paletted(&self) -> Result<Option<(Vec<BlockId>, [u16; CELLS])>> {
        let mut locals = [0u16; CELLS];
        Ok(match self {
            Source::Encoded(bytes) => {
                let view = ChunkView::parse(bytes)?;
                (view.layered_block_count() == 0).then(|| {
                    view.read_locals(&mut locals);
                    (view.palette_iter().collect(), locals)
                })
            }
            Source::Decoded(c) => (c.layered_block_count() == 0).then(|| {
                c.read_locals(&mut locals);
                (c.palette().to_vec(), locals)
            }),
        })
    }

    /// The chunk decoded.
    fn chunk(&self, schema: &Schema) -> Result<std::borrow::Cow<'_, Chunk>> {
        Ok(match self {
            Source::Encoded(bytes) => std::borrow::Cow::Owned(Chunk::decode(bytes, schema)?),
            Source::Decoded(c) => std::borrow::Cow::Borrowed(*c),
        })
    }
}

/// [`terrane_to_column`] and [`chunks_to_column`].
fn column_records<'a>(
    pos: BedrockColumnPos,
    chunks: impl Iterator<Item = (i64, Source<'a>)>,
    record: Option<&BedrockRecord>,
    entities: &HashMap<Uuid, Vec<u8>>,
    schema: &Schema,
    world_version: i32,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut out = Vec::new();
    let mut palettes: HashMap<BlockId, Compound> = HashMap::new();
    let mut entry = |b: BlockId| -> Result<Compound> {
        if let Some(c) = palettes.get(&b) {
            return Ok(c.clone());
        }
        let name = schema.blocks().get(b.0).ok_or_else(|| {
            Error::BlockName(format!("block id {} is not in the world's registry", b.0))
        })?;
        let c = parse_state_name(name, world_version)?;
        palettes.insert(b, c.clone());
        Ok(c)
    };
    let air_version = record.and_then(|r| r.layer_air_version).unwrap_or(world_version);
    let air = parse_state_name("minecraft:air", air_version)?;
    let air_id = schema.blocks().find("minecraft:air").map(BlockId);
    for (y, source) in chunks {
        let y8 = i8::try_from(y).map_err(|_| {
            Error::SubChunk(format!(
                "chunk y {y} of column {},{} is beyond Bedrock's -128..=127",
                pos.x, pos.z
            ))
        })?;
        if let Some((source, locals)) = source.paletted()? {
            // A column that did not come from Bedrock writes no all-air sub-chunk: Bedrock
            // reads a missing one as air, and most of a real column's are.
            if record.is_none() && source.iter().all(|&b| Some(b) == air_id) {
                continue;
            }
            let mut palette = Vec::with_capacity(source.len());
            for &b in &source {
                palette.push(entry(b)?);
            }
            let mut indices = Box::new([0u16; CELLS]);
            for (i, &l) in locals.iter().enumerate() {
                let (x, yy, z) = ((i >> 8) as u32, ((i >> 4) & 15) as u32, (i & 15) as u32);
                indices[bedrock_index(x, yy, z)] = l;
            }
            let storages = [Storage { palette, indices }];
            out.push((pos.sub_chunk_key(y8), SubChunk::encode(y8, &storages)?));
            continue;
        }
        let chunk = source.chunk(schema)?;
        // One storage per layer; past layer 0, cells without that layer hold air (entry 0).
        let layers = 1 + chunk.layered_cells().map(|(_, l)| l.len() as u32).max().unwrap_or(0);
        let mut storages = Vec::with_capacity(layers as usize);
        for layer in 0..layers {
            let mut index_of: HashMap<BlockId, u16> = HashMap::new();
            let mut palette = if layer > 0 { vec![air.clone()] } else { Vec::new() };
            let mut indices = Box::new([0u16; CELLS]);
            for x in 0..16 {
                for yy in 0..16 {
                    for z in 0..16 {
                        let Some(b) = chunk.get_layer(cell_index(x, yy, z), layer) else {
                            continue;
                        };
                        let i = match index_of.get(&b) {
                            Some(&i) => i,
                            None => {
                                let i = u16::try_from(palette.len()).map_err(|_| {
                                    Error::SubChunk(
                                        "more than 65,536 block states in one chunk".into(),
                                    )
                                })?;
                                palette.push(entry(b)?);
                                index_of.insert(b, i);
                                i
                            }
                        };
                        indices[bedrock_index(x, yy, z)] = i;
                    }
                }
            }
            storages.push(Storage { palette, indices });
        }
        out.push((pos.sub_chunk_key(y8), SubChunk::encode(y8, &storages)?));
    }
    let mut ids: Vec<i64> = Vec::new();
    match record {
        Some(r) => {
            for (y, v) in &r.raw_sub_chunks {
                out.push((pos.sub_chunk_key(*y), v.clone()));
            }
            for (t, v) in &r.records {
                out.push((pos.key(*t), v.clone()));
            }
            ids.extend(&r.actors);
            if r.digp || !ids.is_empty() {
                out.push((pos.digp_key(), ids.iter().flat_map(|i| i.to_le_bytes()).collect()));
            }
        }
        None => {
            out.push((pos.key(tag::VERSION), vec![NATIVE_CHUNK_VERSION]));
            out.push((pos.key(tag::FINALIZED_STATE), 2i32.to_le_bytes().to_vec()));
        }
    }
    for id in ids {
        if let Some(v) = entities.get(&entity_uuid(id)) {
            out.push((crate::key::actor_key(id), v.clone()));
        }
    }
    out.sort();
    // A stored Checksums record hashes the records as they were read; the sub-chunks above
    // are encoded anew, so it is rebuilt from what is written (`docs/format/bedrock.md`,
    // "Checksums"). A damaged one names nothing beyond the covered records.
    let checksums_key = pos.key(tag::CHECKSUMS);
    if let Some(i) = out.iter().position(|(k, _)| *k == checksums_key) {
        let named = Checksums::decode(&out[i].1).map(|c| c.entries).unwrap_or_default();
        out[i].1 = checksums::rebuild(pos, &out, &named).encode();
    }
    Ok(out)
}

/// The block version of the first palette entry of the column's first sub-chunk that
/// decodes: what an import takes as the world's block version when it has none yet.
pub fn first_block_version(raw: &RawColumn) -> Option<i32> {
    raw.sub_chunks.iter().find_map(|(_, b)| {
        let sc = SubChunk::decode(b).ok()?;
        match sc.storages.first()?.palette.first()?.get("version") {
            Some(Tag::Int(v)) => Some(*v),
            _ => None,
        }
    })
}
