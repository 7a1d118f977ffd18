//! Sponge schematic block entities in and out of terrane chunks.
//!
//! terrane keeps a Minecraft block entity the way terrane-anvil's importer does (see
//! [`anvil::mapping`](terrane_anvil::mapping)): as the value of the variable-size component
//! [`BLOCK_ENTITY_COMPONENT`] at the block entity's cell (layer 0), holding the block entity's
//! NBT compound (`id` and its data) without `x`/`y`/`z`. A cell can hold that value only when
//! its block carries the component, which block states get when they are first registered
//! ([`is_block_entity_block`](terrane_anvil::mapping::is_block_entity_block) names). The
//! registries only grow: a state registered earlier without the component never gets it, and
//! a block entity at such a cell cannot be stored (it is reported, see [`Skipped`]).
//!
//! - [`paste`]: a schematic into a [`World`], blocks and block entities, one
//!   atomic save; [`export_box`]: a box of a world as a schematic; [`write_schematic`]: a
//!   schematic to a file, never over one without being told. These are what `terrane schem
//!   import` / `schem export` run.
//! - [`register_states`]: schematic states into a [`Schema`], as the Anvil importer does.
//! - [`place_block_entities`]: a schematic's block entities into an arena's chunks (after the
//!   blocks were restored there).
//! - [`block_entities`]: the block entities of an arena's box, as schematic block entities.
//!
//! ```
//! use terrane::snapshot::nbt::{Compound, Tag};
//! use terrane::snapshot::BlockEntity;
//! use terrane::{BlockBox, BlockPos, Chunk, ChunkWorld, Schema, schem};
//!
//! // A world with air, then a box with a chest in it.
//! let mut schema = Schema::new();
//! schem::register_states(&mut schema, ["minecraft:air", "minecraft:chest[facing=north]"])?;
//! let chest = schema.blocks().find("minecraft:chest[facing=north]").unwrap();
//! let mut arena = ChunkWorld::new(schema);
//! let bbox = BlockBox::new(BlockPos::new(0, 0, 0), BlockPos::new(3, 3, 3));
//! let mut chunk = Chunk::new(terrane::BlockId(0));
//! chunk.set(1, 2, 3, terrane::BlockId(chest));
//! arena.chunks.insert(BlockPos::new(0, 0, 0).chunk(), chunk);
//!
//! let mut data = Compound::new();
//! data.insert("CustomName", Tag::String("\"loot\"".into()));
//! let be = BlockEntity { pos: [1, 2, 3], id: "minecraft:chest".into(), data };
//! let placed = schem::place_block_entities(&mut arena, bbox, &[be.clone()])?;
//! assert_eq!((placed.placed, placed.skipped.len()), (1, 0));
//! assert_eq!(schem::block_entities(&arena, bbox)?, [be]);
//! # Ok::<(), terrane::Error>(())
//! ```

use std::collections::HashSet;
use std::path::Path;

use terrane_anvil::mapping::{BLOCK_ENTITY_COMPONENT, block_entity_component, block_id};
use terrane_chunk::{ComponentId, Schema};
use terrane_section::{BlockPos, cell_coords};
use terrane_snapshot::nbt::{self, Compound, Tag};
use terrane_snapshot::{BlockBox, BlockEntity, ChunkWorld};

use terrane_store::tables;

use crate::export::{Overwrite, write_whole};
use crate::refusal::{Holds, Refusal, Writes};
use crate::{Error, Result, TickSave, World};

/// What [`paste`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pasted {
    /// The box the schematic now fills.
    pub bbox: BlockBox,
    /// Blocks written.
    pub blocks: u64,
    /// Chunks of the one atomic save.
    pub chunks: usize,
    /// The block entities placed, cleared and skipped.
    pub block_entities: PlacedBlockEntities,
}

/// Pastes `schematic` into `world` with its minimum corner at `min` (default: where the
/// schematic says, [`Schematic::world_min`](terrane_snapshot::Schematic::world_min)): its
/// block states are registered ([`register_states`]), its blocks restored over the box, its
/// block entities placed ([`place_block_entities`]), all in one atomic save; its
/// `DataVersion` is recorded ([`java::note_data_version`](crate::java::note_data_version)).
///
/// ```
/// use terrane::{Backend, BlockPos, Schematic, World, schem};
///
/// let dir = tempfile::tempdir()?;
/// let mut world = World::builder().backend(Backend::Memory).create(dir.path())?;
/// let mut s = Schematic::new(3, 2, 1, 3955)?;
/// s.set_block(1, 0, 0, "minecraft:stone")?;
/// let pasted = schem::paste(&mut world, &s, Some(BlockPos::new(10, 64, 10)))?;
/// assert_eq!((pasted.blocks, pasted.chunks), (6, 1));
/// let back = schem::export_box(&world, pasted.bbox, None)?;
/// assert_eq!(back.block(1, 0, 0), Some("minecraft:stone"));
/// assert_eq!(back.data_version, Some(3955));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn paste(
    world: &mut World,
    schematic: &terrane_snapshot::Schematic,
    min: Option<BlockPos>,
) -> Result<Pasted> {
    let [x, y, z] = schematic.world_min();
    let min = min.unwrap_or(BlockPos::new(x.into(), y.into(), z.into()));
    let snap = terrane_snapshot::Snapshot::from_schematic(schematic, min)?;
    let mut schema = world.schema().clone();
    register_states(&mut schema, snap.states().iter().map(String::as_str))?;
    world.extend_schema(schema)?;
    let mut arena = world.arena(snap.bbox())?;
    let stats = snap.restore(&mut arena, false)?;
    let block_entities = place_block_entities(&mut arena, snap.bbox(), &schematic.block_entities)?;
    let tick = world.tick();
    world.save_arena(tick, &arena)?;
    // The schematic's Metadata (Name, Author, Date, ...) is kept for the box it filled, and
    // its DataVersion noted, in one small save right after the blocks: an export of that box
    // carries them again. So does its paste anchor: `WorldEdit.Origin` is kept moved with the
    // box (the box's minimum corner minus the schematic's paste offset), so that the export
    // writes the schematic's own `Offset` again.
    let mut meta = schematic.metadata.clone();
    let offset = schematic.paste_offset();
    let origin = (offset != [0; 3])
        .then(|| {
            let m = snap.bbox().min();
            let o = |v: i64, d: i32| i32::try_from(v - i64::from(d)).ok();
            Some([o(m.x, offset[0])?, o(m.y, offset[1])?, o(m.z, offset[2])?])
        })
        .flatten();
    match (meta.get_mut("WorldEdit"), origin) {
        (Some(Tag::Compound(we)), Some(o)) => {
            we.insert("Origin", Tag::IntArray(o.to_vec()));
        }
        (Some(Tag::Compound(we)), None) => {
            we.remove("Origin"); // the default placement, which every export writes
            if we.is_empty() {
                meta.remove("WorldEdit");
            }
        }
        (_, Some(o)) => {
            let mut we = Compound::new();
            we.insert("Origin", Tag::IntArray(o.to_vec()));
            meta.insert("WorldEdit", Tag::Compound(we));
        }
        (_, None) => {}
    }
    let mut save = TickSave::new();
    let key = metadata_key(snap.bbox());
    if meta.is_empty() {
        save.delete_object(tables::WORLD_PROPERTIES, key);
    } else {
        let bytes = nbt::to_bytes("Metadata", &Tag::Compound(meta))?;
        save.put_object(tables::WORLD_PROPERTIES, key, bytes);
    }
    if let Some(v) = schematic.data_version {
        crate::java::put_data_version(world, v, &mut save)?;
    }
    world.save_tick(tick, save)?;
    Ok(Pasted {
        bbox: snap.bbox(),
        blocks: stats.written,
        chunks: arena.chunks.len(),
        block_entities,
    })
}

/// The `worldProperties` key of the Metadata kept for a pasted box: `schem:metadata:`, then
/// the box's minimum and maximum corners (six `i64` big-endian).
pub fn metadata_key(bbox: BlockBox) -> Vec<u8> {
    let (a, b) = (bbox.min(), bbox.max());
    let mut k = b"schem:metadata:".to_vec();
    for v in [a.x, a.y, a.z, b.x, b.y, b.z] {
        k.extend_from_slice(&v.to_be_bytes());
    }
    k
}

/// A box of `world` as a Sponge v3 schematic, block entities included ([`block_entities`]),
/// recording `data_version`, by default the newest one the world's blocks were imported at
/// ([`java::data_version`](crate::java::data_version)), else 1.21.1's. Placement: the box's
/// minimum corner is the schematic's world position (`Metadata.WorldEdit.Origin` + `Offset`),
/// so a paste without a position puts it back in place. For the box a schematic was pasted
/// into ([`paste`]), `Offset` is that schematic's own (its paste anchor: where WorldEdit's
/// `//paste` puts it relative to the player), and `Origin` the original one when the paste
/// was where the schematic said; for any other box `Offset` is 0 and `Origin` the minimum
/// corner.
pub fn export_box(
    world: &World,
    bbox: BlockBox,
    data_version: Option<i32>,
) -> Result<terrane_snapshot::Schematic> {
    let size = bbox.size();
    if size.iter().any(|&d| d > 65535) || bbox.volume() > i32::MAX as u128 {
        return Err(Refusal::SchematicTooBig(size).into());
    }
    let data_version = match data_version {
        Some(v) => v,
        None => crate::java::data_version(world)?.unwrap_or(crate::java::NATIVE_DATA_VERSION),
    };
    let arena = world.arena(bbox)?;
    let snap = terrane_snapshot::Snapshot::capture(&arena, bbox)?;
    let mut schem = snap.to_schematic(data_version)?;
    schem.block_entities = block_entities(&arena, bbox)?;
    // The Metadata a paste of exactly this box brought, around the placement just written,
    // and the paste anchor it kept (`WorldEdit.Origin`, moved with the box).
    if let Some(o) = world.store().get(tables::WORLD_PROPERTIES, &metadata_key(bbox))? {
        let (_, tag) = nbt::from_bytes(&o.data)?;
        if let Tag::Compound(kept) = tag {
            for (k, v) in kept {
                if let (Tag::Compound(we), Some(Tag::Compound(ours))) =
                    (&v, schem.metadata.get_mut(&k).filter(|_| k == "WorldEdit"))
                {
                    for (wk, wv) in we.iter().filter(|(wk, _)| *wk != "Origin") {
                        ours.insert(wk, wv.clone());
                    }
                    if let (Some(Tag::IntArray(o)), Some(min)) = (we.get("Origin"), schem_min(bbox))
                        && let [x, y, z] = o[..]
                    {
                        schem.set_placement(min, [x, y, z]);
                    }
                    continue;
                }
                schem.metadata.insert(k, v);
            }
        }
    }
    Ok(schem)
}

/// The box's minimum corner as a schematic holds it (`i32`), if it fits.
fn schem_min(bbox: BlockBox) -> Option<[i32; 3]> {
    let m = bbox.min();
    Some([i32::try_from(m.x).ok()?, i32::try_from(m.y).ok()?, i32::try_from(m.z).ok()?])
}

/// Checks a schematic file's destination before anything is written: `path` may be missing;
/// an existing file is refused unless `overwrite` is [`Overwrite::Replace`]
/// ([`Error::WouldOverwrite`]); a folder, or [`Overwrite::Merge`] over a file (a schematic is
/// one file), is refused ([`Error::Refused`]).
pub fn check_destination(path: &Path, overwrite: Overwrite) -> Result<()> {
    if path.is_dir() {
        let (holds, writes) = (Holds::Folder, Writes::Schematic);
        return Err(Refusal::Destination { path: path.into(), holds, writes }.into());
    }
    if !path.exists() {
        return Ok(());
    }
    match overwrite {
        Overwrite::Replace => Ok(()),
        Overwrite::Refuse => Err(Error::WouldOverwrite {
            path: path.to_path_buf(),
            holds: "a file".into(),
            merge: false,
        }),
        Overwrite::Merge => Err(Refusal::SchematicMerge(path.into()).into()),
    }
}

/// Writes `schematic` (Sponge v3, gzip) to `path`, checked first ([`check_destination`]):
/// under a temporary name beside it, synced, then renamed into place, so the file is never
/// half-written. Returns the bytes written.
pub fn write_schematic(
    schematic: &terrane_snapshot::Schematic,
    path: &Path,
    overwrite: Overwrite,
) -> Result<u64> {
    check_destination(path, overwrite)?;
    let bytes = schematic.write()?;
    write_whole(path, &bytes)?;
    Ok(bytes.len() as u64)
}

/// Registers the block states `schema` does not know the way terrane-anvil's importer does
/// ([`block_id`]): by their canonical form
/// ([`block_state::canonical`](terrane_chunk::block_state::canonical)), so that two spellings
/// of one state are one entry; the [`BLOCK_ENTITY_COMPONENT`] is registered when missing, and
/// new states of [`is_block_entity_block`](terrane_anvil::mapping::is_block_entity_block)
/// names carry it. Known states are left as they are (registries only grow). Returns the
/// component's id.
pub fn register_states<'a>(
    schema: &mut Schema,
    states: impl IntoIterator<Item = &'a str>,
) -> Result<ComponentId> {
    let be = block_entity_component(schema)?;
    for st in states {
        block_id(schema, be, st)?;
    }
    Ok(be)
}

/// Why a schematic block entity was not stored.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum SkipReason {
    /// Its position lies outside the schematic.
    OutsideBox,
    /// The block at its cell does not carry [`BLOCK_ENTITY_COMPONENT`]: a state registered
    /// before without it (registries only grow), or not a block-entity block.
    NoComponent {
        /// The cell's block state.
        state: String,
    },
    /// Another block entity of the schematic sits at the same cell (the first one is kept).
    Duplicate,
    /// Its data does not encode as NBT.
    BadData(String),
}

impl std::fmt::Display for SkipReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SkipReason::OutsideBox => f.write_str("position outside the schematic"),
            SkipReason::NoComponent { state } => write!(
                f,
                "block {state} does not carry {BLOCK_ENTITY_COMPONENT} (registered before without it; registries only grow)"
            ),
            SkipReason::Duplicate => f.write_str("a second block entity at the same cell"),
            SkipReason::BadData(e) => write!(f, "data does not encode: {e}"),
        }
    }
}

/// A schematic block entity that was not stored, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skipped {
    /// Its world position (the box's minimum corner plus its schematic position).
    pub pos: BlockPos,
    /// Its id.
    pub id: String,
    /// Why.
    pub reason: SkipReason,
}

/// What [`place_block_entities`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PlacedBlockEntities {
    /// Block entities stored as components.
    pub placed: u64,
    /// Block entity values the box held before and that were removed.
    pub cleared: u64,
    /// Block entities not stored, in schematic order.
    pub skipped: Vec<Skipped>,
}

/// The component value of a schematic block entity: `id` first, then its data without
/// `x`/`y`/`z` (and without a stray `id`), as an NBT compound with an empty root name.
pub fn block_entity_value(be: &BlockEntity) -> Result<Vec<u8>, terrane_snapshot::Error> {
    // Collected, not inserted one by one: linear however many keys a hostile file gives.
    let data = be.data.iter().filter(|(k, _)| !matches!(*k, "x" | "y" | "z" | "id"));
    let c: Compound = std::iter::once(("id".to_string(), Tag::String(be.id.clone())))
        .chain(data.map(|(k, v)| (k.to_string(), v.clone())))
        .collect();
    Ok(nbt::to_bytes("", &Tag::Compound(c))?)
}

/// Writes a schematic's block entities into `arena`, whose chunks cover `bbox` (the pasted
/// schematic's box: a block entity's position is relative to `bbox.min()`), after the
/// schematic's blocks were restored there.
///
/// First every block entity value (layer 0) the box held is removed (the paste replaces
/// the box, and a block that did not change keeps its component values); then each block
/// entity becomes the [`BLOCK_ENTITY_COMPONENT`] value of its cell ([`block_entity_value`]).
/// Those that cannot be stored are returned in [`PlacedBlockEntities::skipped`]. Chunks of
/// the box absent from `arena` are an error.
pub fn place_block_entities(
    arena: &mut ChunkWorld,
    bbox: BlockBox,
    entities: &[BlockEntity],
) -> Result<PlacedBlockEntities> {
    let mut out = PlacedBlockEntities::default();
    let be = arena.schema.components().find(BLOCK_ENTITY_COMPONENT).map(ComponentId::variable);
    let missing = |c| Error::Inconsistent(format!("arena lacks chunk {c:?} of the box"));
    if let Some(be) = be {
        for r in bbox.sub_regions() {
            let chunk = arena.chunks.get_mut(&r.chunk).ok_or_else(|| missing(r.chunk))?;
            let cells: Vec<u16> = chunk
                .component_values()
                .filter(|&(cell, layer, id, _)| {
                    layer == 0
                        && id == be
                        && cell_pos(r.chunk, cell).is_some_and(|p| bbox.contains(p))
                })
                .map(|(cell, ..)| cell)
                .collect();
            for cell in cells {
                chunk.remove_component(cell, 0, be);
                out.cleared += 1;
            }
        }
    }
    let min = bbox.min();
    let [sx, sy, sz] = bbox.size();
    let mut seen = HashSet::new();
    for e in entities {
        let [x, y, z] = e.pos.map(i64::from);
        let pos = BlockPos::new(min.x + x, min.y + y, min.z + z);
        let skip = |reason| Skipped { pos, id: e.id.clone(), reason };
        let inside = (0..sx as i64).contains(&x)
            && (0..sy as i64).contains(&y)
            && (0..sz as i64).contains(&z);
        if !inside {
            out.skipped.push(skip(SkipReason::OutsideBox));
            continue;
        }
        if !seen.insert(pos) {
            out.skipped.push(skip(SkipReason::Duplicate));
            continue;
        }
        let chunk = arena.chunks.get_mut(&pos.chunk()).ok_or_else(|| missing(pos.chunk()))?;
        let cell = pos.cell_index();
        let block = chunk.get_index(cell);
        let carries =
            be.filter(|&be| arena.schema.block_components(block).binary_search(&be).is_ok());
        let Some(be) = carries else {
            let state = arena.schema.blocks().get(block.0).unwrap_or("?").to_string();
            out.skipped.push(skip(SkipReason::NoComponent { state }));
            continue;
        };
        let value = match block_entity_value(e) {
            Ok(v) => v,
            Err(err) => {
                out.skipped.push(skip(SkipReason::BadData(err.to_string())));
                continue;
            }
        };
        chunk.set_component(&arena.schema, cell, 0, be, &value)?;
        out.placed += 1;
    }
    Ok(out)
}

/// The block of `cell` in `chunk` (`None` beyond the `i64` range).
fn cell_pos(chunk: terrane_section::ChunkPos, cell: u16) -> Option<BlockPos> {
    let (x, y, z) = cell_coords(cell);
    chunk.block(x, y, z)
}

/// The block entities stored in `arena` inside `bbox`: every layer-0
/// [`BLOCK_ENTITY_COMPONENT`] value of a cell in the box, as a schematic block entity
/// (position relative to `bbox.min()`, `id` from the compound, data the rest without
/// `x`/`y`/`z`), ordered by y, z, x. A value without `id` gets its block's name (the state
/// without properties). Chunks absent from `arena` hold none; a value that is not an NBT
/// compound is an error.
pub fn block_entities(arena: &ChunkWorld, bbox: BlockBox) -> Result<Vec<BlockEntity>> {
    let Some(be) = arena.schema.components().find(BLOCK_ENTITY_COMPONENT) else {
        return Ok(Vec::new());
    };
    let be = ComponentId::variable(be);
    let min = bbox.min();
    let mut out = Vec::new();
    for r in bbox.sub_regions() {
        let Some(chunk) = arena.chunks.get(&r.chunk) else { continue };
        for (cell, layer, id, value) in chunk.component_values() {
            let Some(pos) = cell_pos(r.chunk, cell) else { continue };
            if layer != 0 || id != be || !bbox.contains(pos) {
                continue;
            }
            let bad = |m: String| Error::Inconsistent(format!("block entity at {pos:?}: {m}"));
            let mut data = match nbt::from_bytes(value).map_err(|e| bad(e.to_string()))? {
                (_, Tag::Compound(c)) => c,
                _ => return Err(bad("not an NBT compound".into())),
            };
            for k in ["x", "y", "z"] {
                data.remove(k);
            }
            let id = match data.remove("id") {
                Some(Tag::String(s)) => s,
                other => {
                    if let Some(t) = other {
                        data.insert("id", t);
                    }
                    let state = arena.schema.blocks().get(chunk.get_index(cell).0).unwrap_or("");
                    state.split('[').next().unwrap_or(state).to_string()
                }
            };
            let rel =
                |v: i64, m: i64| i32::try_from(v - m).map_err(|_| bad("box wider than i32".into()));
            let pos = [rel(pos.x, min.x)?, rel(pos.y, min.y)?, rel(pos.z, min.z)?];
            out.push(BlockEntity { pos, id, data });
        }
    }
    out.sort_by_key(|e| [e.pos[1], e.pos[2], e.pos[0]]);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use terrane_chunk::{BlockId, Chunk};

    /// A schematic's Metadata survives a paste and an export of the same box (Name, Author,
    /// Date, WorldEdit's own fields), around the Origin the export writes; another box
    /// exports without it.
    #[test]
    fn metadata_survives_paste_then_export_of_the_box() {
        use crate::{Backend, Schematic};
        let dir = tempfile::tempdir().unwrap();
        let mut world = World::builder().backend(Backend::Memory).create(dir.path()).unwrap();
        let mut s = Schematic::new(2, 2, 2, 3700).unwrap();
        s.set_block(0, 0, 0, "minecraft:stone").unwrap();
        s.metadata.insert("Name", Tag::String("House".into()));
        s.metadata.insert("Author", Tag::String("Ann".into()));
        s.metadata.insert("Date", Tag::Long(1_700_000_000_000));
        let mut we = Compound::new();
        we.insert("Version", Tag::String("7.3".into()));
        we.insert("Origin", Tag::IntArray(vec![1, 2, 3]));
        s.metadata.insert("WorldEdit", Tag::Compound(we));
        let p = paste(&mut world, &s, Some(BlockPos::new(40, 70, -8))).unwrap();
        let back = export_box(&world, p.bbox, None).unwrap();
        assert_eq!(back.metadata.get("Name").and_then(Tag::as_str), Some("House"));
        assert_eq!(back.metadata.get("Author").and_then(Tag::as_str), Some("Ann"));
        assert!(matches!(back.metadata.get("Date"), Some(Tag::Long(1_700_000_000_000))));
        let we = back.metadata.get("WorldEdit").and_then(Tag::as_compound).unwrap();
        assert_eq!(we.get("Version").and_then(Tag::as_str), Some("7.3"));
        assert_eq!(back.origin(), Some([40, 70, -8]), "the export's own placement");
        assert_eq!(back.data_version, Some(3700), "the DataVersion the blocks came with");
        let other = BlockBox::new(BlockPos::new(40, 70, -8), BlockPos::new(40, 70, -8));
        assert!(export_box(&world, other, None).unwrap().metadata.get("Name").is_none());
    }

    /// A box no schematic can hold is refused before any chunk is read.
    #[test]
    fn export_box_refuses_a_box_over_65535_per_axis() {
        use crate::Backend;
        let dir = tempfile::tempdir().unwrap();
        let world = World::builder().backend(Backend::Memory).create(dir.path()).unwrap();
        let wide = BlockBox::new(BlockPos::new(0, 0, 0), BlockPos::new(65_535, 0, 0));
        assert!(matches!(
            export_box(&world, wide, None),
            Err(Error::Refused(Refusal::SchematicTooBig(_)))
        ));
    }

    fn chest(pos: [i32; 3]) -> BlockEntity {
        let mut data = Compound::new();
        data.insert("x", Tag::Int(99));
        data.insert("Lock", Tag::String("key".into()));
        BlockEntity { pos, id: "minecraft:chest".into(), data }
    }

    #[test]
    fn a_block_registered_without_the_component_is_skipped_not_lost() {
        let mut schema = Schema::new();
        schema.add_block("minecraft:air", &[]).unwrap();
        // Registered before, without the component: it never gets it.
        let old = schema.add_block("minecraft:chest[facing=east]", &[]).unwrap();
        register_states(
            &mut schema,
            ["minecraft:chest[facing=east]", "minecraft:chest[facing=west]"],
        )
        .unwrap();
        let new = BlockId(schema.blocks().find("minecraft:chest[facing=west]").unwrap());
        let stone = schema.add_block("minecraft:stone", &[]).unwrap();
        let mut arena = ChunkWorld::new(schema);
        let mut c = Chunk::new(BlockId(0));
        c.set(0, 0, 0, old);
        c.set(1, 0, 0, new);
        c.set(2, 0, 0, stone);
        c.set(3, 0, 0, new);
        arena.chunks.insert(terrane_section::ChunkPos::new(0, 0, 0), c);
        let bbox = BlockBox::new(BlockPos::new(0, 0, 0), BlockPos::new(3, 0, 0));
        let bes = [
            chest([0, 0, 0]),
            chest([1, 0, 0]),
            chest([2, 0, 0]),
            chest([1, 0, 0]),
            chest([4, 0, 0]),
        ];
        let r = place_block_entities(&mut arena, bbox, &bes).unwrap();
        assert_eq!((r.placed, r.cleared), (1, 0));
        let reasons: Vec<_> = r.skipped.iter().map(|k| (k.pos.x, k.reason.clone())).collect();
        assert_eq!(
            reasons,
            [
                (0, SkipReason::NoComponent { state: "minecraft:chest[facing=east]".into() }),
                (2, SkipReason::NoComponent { state: "minecraft:stone".into() }),
                (1, SkipReason::Duplicate),
                (4, SkipReason::OutsideBox),
            ]
        );
        let out = block_entities(&arena, bbox).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].pos, [1, 0, 0]);
        assert_eq!(out[0].id, "minecraft:chest");
        assert_eq!(out[0].data.get("Lock"), Some(&Tag::String("key".into())));
        assert_eq!(out[0].data.get("x"), None);

        // A second paste of the box without block entities clears the stored one.
        let r = place_block_entities(&mut arena, bbox, &[]).unwrap();
        assert_eq!((r.placed, r.cleared), (0, 1));
        assert!(block_entities(&arena, bbox).unwrap().is_empty());
    }
}
