//! Minecraft Java Edition worlds in and out of a [`World`], through terrane-anvil's converter:
//! whole Java world folders as players have them, or single region folders.
//!
//! A Java world folder holds `level.dat`, the Overworld's `region/` (and, since 1.17,
//! `entities/`), the Nether's `DIM-1/region` and the End's `DIM1/region`; since Minecraft
//! 26.1 every dimension is under `dimensions/<namespace>/<name>/`, and the players' files
//! under `players/` ([`JavaLayout`]: imports read either, exports write the layout of the
//! world's `DataVersion` unless told). The Overworld, the Nether and the End become terrane
//! dimensions 0, 1 and 2 (the first part of every chunk key), a datapack's dimension the
//! next free id, recorded by name ([`DIMENSION_NAME_PREFIX`]). What terrane keeps besides
//! the chunks (`docs/format/world-dir.md`, "Keys the facade and the CLI add"):
//! - each column's record (everything a Java column holds besides its blocks, block entities
//!   and entities: light, heightmaps, biomes, ticks...) under [`record_key`];
//! - `level.dat`, byte for byte, under [`LEVEL_DAT_KEY`], written back on export;
//! - the players' files (`playerdata/`, `stats/`, `advancements/`, or 26.1's `players/...`),
//!   byte for byte, under [`PLAYER_FILE_PREFIX`], written back where the export's layout
//!   keeps them ([`imported_player`] reads one as a game server's record);
//! - the newest `DataVersion` imported, under [`DATA_VERSION_KEY`] ([`data_version`]), which
//!   `terrane schem export` records by default;
//! - imported Overworld columns count as generated in the world's distance graph.
//!
//! Each column is one atomic save (chunks, entities, record), and an import skips the columns
//! the world already has, so an interrupted import resumes where it stopped; until it does, the
//! world holds [`IMPORTING_KEY`](crate::IMPORTING_KEY) and opens only for an import
//! ([`WorldBuilder::for_import`](crate::WorldBuilder::for_import)). An export does not
//! write over region files or a world without being told ([`Overwrite`]).
//!
//! ```no_run
//! # fn main() -> terrane::Result<()> {
//! use terrane::{World, java};
//!
//! let mut world = World::builder().sync_saves(false).for_import(true).create("imported-world")?;
//! java::refuse_overwrite(&world)?;
//! let summary = java::import_java_world(&mut world, "saves/My World".as_ref(), &mut |dim, p| {
//!     eprintln!("{}: {}/{} columns", dim.name, p.columns_done, p.columns_total);
//! })?;
//! println!("{} columns", summary.total().columns);
//! world.close()?;
//!
//! let world = World::open_read_only("imported-world")?;
//! let to = "saves/Back Again".as_ref();
//! java::export_java_world(&world, to, terrane::export::Overwrite::Refuse, &mut |_, _| {})?;
//! # Ok(())
//! # }
//! ```

use crate::java_containers::ContainerRecords;
pub use crate::java_players::{JavaPlayer, imported_player, vanilla_dimension};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use terrane_anvil::mapping::ColumnRecord;
use terrane_anvil::region::Compression;
use terrane_anvil::{
    ExportOptions, ExportSource, ExportSummary, ImportOptions, ImportSink, ImportSummary,
    ImportedColumn, Progress,
};
use terrane_chunk::{Chunk, ChunkView, Schema};
use terrane_section::{ChunkPos, ColumnPos};
use terrane_store::tables;

use crate::error::io;
use crate::export::{Found, Overwrite, inspect, refused, write_whole};
use crate::refusal::{Refusal, Writes};
use crate::region_columns::{DimRegions, RegionChunks, world_regions};
use crate::sink_error::{SinkError, from_anvil};
use crate::{Error, Result, TickSave, World};

pub use crate::java_layout::{
    DIMENSION_NAME_PREFIX, DIMENSIONS_DATA_VERSION, Dimension, JavaLayout, find_dimensions,
    layout_of, recorded_dimensions, vanilla_dimensions,
};
pub use crate::java_players::PLAYER_FILE_PREFIX;
pub use terrane_anvil::folder::{has_region_files, is_java_world};

/// The `worldProperties` key prefix of imported column records.
pub const RECORD_PREFIX: &[u8] = crate::imported::JAVA_RECORD_PREFIX;

/// The `worldProperties` key of the Java world's `level.dat`, kept byte for byte.
pub const LEVEL_DAT_KEY: &[u8] = b"anvil:level.dat";

/// The `worldProperties` key of the newest Minecraft `DataVersion` the world's blocks were
/// imported at (Java columns, schematics): `i32` big-endian. Exports default to it.
pub const DATA_VERSION_KEY: &[u8] = crate::imported::DATA_VERSION_KEY;

/// The newest `DataVersion` the world's blocks were imported at ([`DATA_VERSION_KEY`]), if
/// any import recorded one.
pub fn data_version(world: &World) -> Result<Option<i32>> {
    crate::imported::data_version(world)
}

/// Records that blocks of `DataVersion` `v` were imported: [`data_version`] becomes the
/// newer of `v` and what it was, saved at once.
pub fn note_data_version(world: &mut World, v: i32) -> Result<()> {
    let mut save = TickSave::new();
    if put_data_version(world, v, &mut save)? {
        let tick = world.tick();
        world.save_tick(tick, save)?;
    }
    Ok(())
}

/// [`note_data_version`] into a save the caller makes: adds the new value to `save` when `v`
/// is newer than the recorded one, and says whether it did.
pub(crate) fn put_data_version(world: &World, v: i32, save: &mut TickSave) -> Result<bool> {
    if data_version(world)?.is_some_and(|old| old >= v) {
        return Ok(false);
    }
    save.put_object(tables::WORLD_PROPERTIES, DATA_VERSION_KEY.to_vec(), v.to_be_bytes().to_vec());
    Ok(true)
}

/// DataVersion written for columns that never came from Minecraft (1.21.1).
pub const NATIVE_DATA_VERSION: i32 = terrane_anvil::mapping::DATA_VERSION_1_21_1;

/// The key of a column's record: [`RECORD_PREFIX`], then for dimensions other than 0 the
/// dimension (`u64` big-endian), then the 2D Morton key of the column (16 bytes, keys.md).
/// Overworld keys have no dimension part, as before dimensions were imported.
pub fn record_key(dim: u64, pos: ColumnPos) -> Vec<u8> {
    crate::imported::column_record_key(RECORD_PREFIX, dim, pos)
}

/// Splits a record key into dimension and column; `None` for another key.
pub fn parse_record_key(key: &[u8]) -> Option<(u64, ColumnPos)> {
    crate::imported::parse_column_record_key(RECORD_PREFIX, key)
}

/// Refuses an import into a world that holds chunks of its own: the import would write its
/// columns over them without a word. A world whose chunks came from an import (it holds
/// column records) is a resumed import: allowed.
pub fn refuse_overwrite(world: &World) -> Result<()> {
    crate::imported::refuse_overwrite(world, RECORD_PREFIX, crate::refusal::ImportedFrom::Java)
}

/// Imports into a [`World`]: one atomic save per column (chunks, entities, column record).
struct WorldSink<'a> {
    world: &'a mut World,
    dim: u64,
    schema: Schema,
}

impl ImportSink for WorldSink<'_> {
    type Error = SinkError;
    fn schema(&mut self) -> &mut Schema {
        &mut self.schema
    }
    fn has_column(&mut self, pos: ColumnPos) -> Result<bool, SinkError> {
        match self.world.store().get(tables::WORLD_PROPERTIES, &record_key(self.dim, pos)) {
            Ok(o) => Ok(o.is_some()),
            Err(e) => Err(Error::from(e).into()),
        }
    }
    fn put_column(&mut self, c: ImportedColumn) -> Result<(), SinkError> {
        if self.schema.blocks().len() != self.world.schema().blocks().len()
            || self.schema.components().len() != self.world.schema().components().len()
        {
            // New block states: the registries are stored before the first chunk using them.
            self.world.extend_schema(self.schema.clone())?;
        }
        let mut save = TickSave::new();
        for (y, bytes) in c.chunks {
            let pos = ChunkPos::new(i64::from(c.pos.x), y, i64::from(c.pos.z));
            save.put_chunk(self.dim, pos, bytes);
        }
        for (uuid, bytes) in c.entities {
            save.put_entity(uuid, bytes);
        }
        save.put_object(tables::WORLD_PROPERTIES, record_key(self.dim, c.pos), c.record);
        if self.dim == 0 {
            // Imported columns are generated columns (saved in this column's batch).
            self.world.mark_generated(c.pos)?;
        }
        let tick = self.world.tick();
        Ok(self.world.save_tick(tick, save)?)
    }
    fn region_done(&mut self, _: i32, _: i32) -> Result<(), SinkError> {
        Ok(self.world.sync()?)
    }
}

/// Imports one region folder into dimension `dim` of `world` (see the module docs). Damaged
/// chunks are reported in the summary and skipped; the world's own errors end the import.
pub fn import_region_dir(
    world: &mut World,
    dim: u64,
    region_dir: &Path,
    options: &ImportOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<ImportSummary> {
    // A folder that cannot be read is refused before the world is marked.
    fs::read_dir(region_dir).map_err(io(region_dir))?;
    crate::import_mark::marked(world, "java", |world| {
        import_region_dir_unmarked(world, dim, region_dir, options, progress)
    })
}

/// [`import_region_dir`] without the import's mark (a whole world's import holds one).
fn import_region_dir_unmarked(
    world: &mut World,
    dim: u64,
    region_dir: &Path,
    options: &ImportOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<ImportSummary> {
    let schema = world.schema().clone();
    let mut sink = WorldSink { world, dim, schema };
    let summary = terrane_anvil::import_region_dir_with(region_dir, &mut sink, options, progress)
        .map_err(from_anvil)?;
    if let Some(v) = summary.data_version {
        note_data_version(world, v)?;
    }
    Ok(summary)
}

/// What [`import_java_world`] did, per dimension.
#[derive(Clone, Debug, Default)]
pub struct JavaImportSummary {
    /// Each dimension found in the folder, with its import's summary.
    pub dimensions: Vec<(Dimension, ImportSummary)>,
    /// Whether `level.dat` was there and kept.
    pub level_dat: bool,
    /// The layout the folder was read in.
    pub layout: Option<JavaLayout>,
    /// Player files kept (data, stats, advancements).
    pub players: u64,
}

impl JavaImportSummary {
    /// The totals over every dimension.
    pub fn total(&self) -> ImportSummary {
        let mut t = ImportSummary::default();
        for (_, s) in &self.dimensions {
            t.add(s);
        }
        t
    }
}

/// Imports a whole Java world folder into `world`, in either [`JavaLayout`]: every dimension
/// that has region files, with its `entities/` folder, `level.dat` and the players' files. A
/// folder without a single region file is refused ([`Error::Refused`]) before anything is
/// written.
pub fn import_java_world(
    world: &mut World,
    java_dir: &Path,
    progress: &mut dyn FnMut(&Dimension, &Progress),
) -> Result<JavaImportSummary> {
    let layout = layout_of(java_dir);
    let found = find_dimensions(java_dir, layout)?;
    if found.is_empty() {
        return Err(Refusal::NoRegionFiles { folder: java_dir.into() }.into());
    }
    crate::import_mark::marked(world, "java", |world| {
        import_java_dimensions(world, java_dir, layout, found, progress)
    })
}

/// [`import_java_world`] once its dimensions are found, within the import's mark.
fn import_java_dimensions(
    world: &mut World,
    java_dir: &Path,
    layout: JavaLayout,
    mut found: Vec<Dimension>,
    progress: &mut dyn FnMut(&Dimension, &Progress),
) -> Result<JavaImportSummary> {
    let mut summary = JavaImportSummary { layout: Some(layout), ..Default::default() };
    let mut save = TickSave::new();
    crate::java_layout::assign_ids(world, &mut found, &mut save)?;
    summary.players = crate::java_layout::import_players(java_dir, layout, &mut save)?;
    let level_dat = java_dir.join("level.dat");
    if level_dat.is_file() {
        let bytes = fs::read(&level_dat).map_err(io(&level_dat))?;
        save.put_object(tables::WORLD_PROPERTIES, LEVEL_DAT_KEY.to_vec(), bytes);
        summary.level_dat = true;
    }
    if !save.is_empty() {
        let tick = world.tick();
        world.save_tick(tick, save)?;
    }
    for d in found {
        let mut options = ImportOptions::new();
        let entities = java_dir.join(&d.entities);
        if entities.is_dir() {
            options = options.entities_dir(entities);
        }
        let region = java_dir.join(&d.region);
        let s =
            import_region_dir_unmarked(world, d.id, &region, &options, &mut |p| progress(&d, p))?;
        summary.dimensions.push((d, s));
    }
    if layout == JavaLayout::Dimensions {
        // A world saved by 26.1 or later: its exports keep its layout even when every chunk
        // is older (Minecraft upgrades chunks only as they load).
        note_data_version(world, DIMENSIONS_DATA_VERSION)?;
    }
    Ok(summary)
}

/// Refuses a world whose blocks are Bedrock states (it has a Bedrock block version): Java
/// cannot read them, and `terrane convert` translates a Bedrock world folder instead.
fn refuse_bedrock_states(world: &World) -> Result<()> {
    if crate::imported::block_version(world)?.is_none() {
        return Ok(());
    }
    Err(Refusal::BedrockBlocks.into())
}

/// Exports one dimension of a [`World`] a region at a time (`region_columns`): its columns
/// grouped from the stored chunks, with the imported column records where there are some and
/// a plain 1.21 record otherwise.
struct WorldSource<'a> {
    schema: &'a Schema,
    world: &'a World,
    regions: DimRegions<'a>,
    /// The region read last: its chunks and records (an export asks for a region's columns
    /// one after another).
    region: RefCell<Option<ReadRegion>>,
    /// What the game changed in the dimension's containers, written over their imports.
    containers: ContainerRecords,
}

/// A region's coordinates, its chunks and its column records.
type ReadRegion = ((i64, i64), RegionChunks, BTreeMap<ColumnPos, Vec<u8>>);

impl<'a> WorldSource<'a> {
    fn new(world: &'a World, regions: DimRegions<'a>) -> Result<Self> {
        let containers = ContainerRecords::of(world, regions.dim())?;
        Ok(Self { schema: world.schema(), world, regions, region: RefCell::new(None), containers })
    }
}

impl ExportSource for WorldSource<'_> {
    type Error = SinkError;
    fn schema(&self) -> &Schema {
        self.schema
    }
    fn columns(&self) -> Result<Vec<ColumnPos>, SinkError> {
        let mut all = Vec::new();
        for r in self.regions.regions() {
            let mut cols = self.regions.chunk_columns(r).map_err(SinkError::from)?;
            cols.extend(
                self.regions.records(RECORD_PREFIX, r).map_err(SinkError::from)?.into_keys(),
            );
            all.extend(cols);
        }
        all.sort();
        Ok(all)
    }
    fn column(&self, pos: ColumnPos) -> Result<Option<ImportedColumn>, SinkError> {
        let region = (i64::from(pos.x) >> 5, i64::from(pos.z) >> 5);
        let mut cached = self.region.borrow_mut();
        if cached.as_ref().is_none_or(|(r, _, _)| *r != region) {
            // The last region's chunks go before the next one's are read.
            *cached = None;
            let chunks = self.regions.chunks(region).map_err(SinkError::from)?;
            let records = self.regions.records(RECORD_PREFIX, region).map_err(SinkError::from)?;
            *cached = Some((region, chunks, records));
        }
        let Some((_, columns, records)) = cached.as_ref() else { return Ok(None) };
        let mut chunks = columns.get(&pos).cloned().unwrap_or_default();
        let record = match records.get(&pos) {
            Some(r) => r.clone(),
            None => {
                // A native column: its entities are the game's own records, not Minecraft
                // NBT, so they stay behind; the chunks go without their references.
                for (_, bytes) in &mut chunks {
                    let mut c = Chunk::decode(bytes, self.schema)
                        .map_err(|e| SinkError::from(Error::from(e)))?;
                    if !c.entities().is_empty() {
                        for u in c.entities().to_vec() {
                            c.remove_entity(&u);
                        }
                        *bytes = c.encode(self.schema);
                    }
                }
                // A fresh record (`Status: minecraft:full`): Minecraft regenerates a chunk
                // that has no status over whatever blocks it holds.
                ColumnRecord::fresh(NATIVE_DATA_VERSION)
                    .encode()
                    .map_err(|e| SinkError::from(Error::Anvil(e.into())))?
            }
        };
        let decoded = ColumnRecord::decode(&record).ok();
        let data_version = decoded.as_ref().and_then(|r| r.data_version);
        self.containers.apply(self.schema, pos, data_version, &mut chunks)?;
        let mut uuids: Vec<[u8; 16]> = Vec::new();
        for (_, bytes) in &chunks {
            if let Ok(v) = ChunkView::parse(bytes) {
                uuids.extend_from_slice(v.entities());
            }
        }
        if let Some(r) = decoded {
            uuids.extend(r.orphan_entities);
        }
        let mut entities = Vec::with_capacity(uuids.len());
        for u in uuids {
            let found = self
                .world
                .store()
                .get(tables::ENTITY, &u)
                .map_err(|e| SinkError::from(Error::from(e)))?;
            if let Some(o) = found {
                entities.push((u, o.data));
            }
        }
        Ok(Some(ImportedColumn { pos, chunks, entities, record }))
    }
}

/// Checks a region folder export's destination before anything is written: `region_dir`
/// (and the entities folder, when there is one) may be missing, empty or hold other files;
/// region files there are refused unless `overwrite` says to replace or merge
/// ([`Error::WouldOverwrite`]). A file, a Java world folder (export it with
/// [`export_java_world`], or give its `region/`), a Bedrock or a terrane world are refused
/// whatever `overwrite` says ([`Error::Refused`]).
pub fn check_region_dir(
    region_dir: &Path,
    entities_dir: Option<&Path>,
    overwrite: Overwrite,
) -> Result<()> {
    let found = inspect(region_dir)?;
    match found {
        Found::Nothing | Found::Other => {}
        Found::File | Found::TerraneWorld | Found::BedrockWorld | Found::JavaWorld => {
            return Err(refused(region_dir, found, Writes::RegionFiles));
        }
        Found::RegionFiles if overwrite == Overwrite::Refuse => {
            return Err(Error::WouldOverwrite {
                path: region_dir.to_path_buf(),
                holds: "region files".into(),
                merge: true,
            });
        }
        Found::RegionFiles => {}
    }
    if let Some(e) = entities_dir {
        match inspect(e)? {
            Found::File => return Err(refused(e, Found::File, Writes::RegionFiles)),
            Found::RegionFiles if overwrite == Overwrite::Refuse => {
                return Err(Error::WouldOverwrite {
                    path: e.to_path_buf(),
                    holds: "entity region files".into(),
                    merge: true,
                });
            }
            _ => {}
        }
    }
    Ok(())
}

/// Exports dimension `dim` of `world` into the region folder `region_dir` (created when
/// missing), 1.17+ entities into `options`' entities folder. The destination is checked
/// first ([`check_region_dir`]): region files there are written over only when `overwrite`
/// says to replace or merge them. Each region file is written whole, then renamed into place
/// (terrane-anvil's `export_region_dir_with`); then, with [`Overwrite::Replace`], the region
/// and side files the export did not write are removed from both folders, and in every case
/// the stale files of the regions it wrote (an entity region or a side file the new region
/// does not have). The world is read a region at a time, twice (once to list the columns):
/// memory does not grow with the world.
pub fn export_region_dir(
    world: &World,
    dim: u64,
    region_dir: &Path,
    options: &ExportOptions,
    overwrite: Overwrite,
    progress: &mut dyn FnMut(&Progress),
) -> Result<ExportSummary> {
    check_region_dir(region_dir, options.entities(), overwrite)?;
    refuse_bedrock_states(world)?;
    let source = WorldSource::new(world, DimRegions::of(world, dim, &[RECORD_PREFIX])?)?;
    let s = terrane_anvil::export_region_dir_with(&source, region_dir, options, progress)
        .map_err(from_anvil)?;
    let dirs: Vec<&Path> = [Some(region_dir), options.entities()].into_iter().flatten().collect();
    remove_stale(&dirs, &s.files, overwrite)?;
    Ok(s)
}

/// Removes from `dirs` the region and side files an export did not write (`written`): with
/// [`Overwrite::Replace`] all of them, otherwise those of the regions it wrote (a region
/// file replaced whole leaves its old side files and entity region behind).
fn remove_stale(dirs: &[&Path], written: &[PathBuf], overwrite: Overwrite) -> Result<()> {
    use terrane_anvil::region::{parse_external_name, parse_region_name};
    let regions: std::collections::HashSet<(i32, i32)> = written
        .iter()
        .filter_map(|p| p.file_name()?.to_str().and_then(parse_region_name))
        .collect();
    let written: std::collections::HashSet<&Path> = written.iter().map(PathBuf::as_path).collect();
    for dir in dirs {
        let entries = match fs::read_dir(dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(io(*dir)(e)),
        };
        for e in entries {
            let e = e.map_err(io(*dir))?;
            let name = e.file_name();
            let Some(name) = name.to_str() else { continue };
            let region = match (parse_region_name(name), parse_external_name(name)) {
                (Some(r), _) => r,
                (None, Some((x, z))) => (x >> 5, z >> 5),
                (None, None) => continue,
            };
            let path = e.path();
            let stale = overwrite == Overwrite::Replace || regions.contains(&region);
            if stale
                && !written.contains(path.as_path())
                && e.file_type().is_ok_and(|t| t.is_file())
            {
                fs::remove_file(&path).map_err(io(&path))?;
            }
        }
    }
    Ok(())
}

/// What [`export_java_world`] did, per dimension.
#[derive(Clone, Debug, Default)]
pub struct JavaExportSummary {
    /// Each dimension written, with its export's summary.
    pub dimensions: Vec<(Dimension, ExportSummary)>,
    /// Whether a kept `level.dat` was written back.
    pub level_dat: bool,
    /// Terrane dimensions that are neither Minecraft's three nor a datapack dimension the
    /// world recorded by name, left out.
    pub skipped_dimensions: Vec<u64>,
    /// The layout written.
    pub layout: Option<JavaLayout>,
    /// Player files written back (data, stats, advancements).
    pub players: u64,
}

impl JavaExportSummary {
    /// The totals over every dimension.
    pub fn total(&self) -> ExportSummary {
        let mut t = ExportSummary::default();
        for (_, s) in &self.dimensions {
            t.add(s);
        }
        t
    }
}

/// Checks a Java world folder export's destination before anything is written: `java_dir`
/// may be missing, empty or hold other files; a Java world there (`level.dat`, `region/`, or
/// region files in any dimension's folders) is refused unless `overwrite` says to replace or
/// merge ([`Error::WouldOverwrite`]). A file, a region folder (export into it without the
/// world folder, [`export_region_dir`]), a Bedrock or a terrane world are refused whatever
/// `overwrite` says ([`Error::Refused`]).
pub fn check_world_folder(java_dir: &Path, overwrite: Overwrite) -> Result<()> {
    let found = inspect(java_dir)?;
    match found {
        Found::File | Found::TerraneWorld | Found::BedrockWorld | Found::RegionFiles => {
            return Err(refused(java_dir, found, Writes::JavaWorld));
        }
        Found::Nothing | Found::Other | Found::JavaWorld => {}
    }
    let mut dims = Vec::new();
    for layout in [JavaLayout::Classic, JavaLayout::Dimensions] {
        dims.extend(vanilla_dimensions(layout));
        dims.extend(find_dimensions(java_dir, layout)?);
    }
    let holds_regions = dims.iter().any(|d| {
        has_region_files(&java_dir.join(&d.region)) || has_region_files(&java_dir.join(&d.entities))
    });
    if overwrite == Overwrite::Refuse && (found == Found::JavaWorld || holds_regions) {
        return Err(Error::WouldOverwrite {
            path: java_dir.to_path_buf(),
            holds: "a Java world".into(),
            merge: true,
        });
    }
    Ok(())
}

/// Exports `world` as a Java world folder at `java_dir` in the layout of the world's
/// `DataVersion` ([`JavaLayout::of_data_version`]): see [`export_java_world_in`].
pub fn export_java_world(
    world: &World,
    java_dir: &Path,
    overwrite: Overwrite,
    progress: &mut dyn FnMut(&Dimension, &Progress),
) -> Result<JavaExportSummary> {
    let layout = JavaLayout::of_data_version(data_version(world)?);
    export_java_world_in(world, java_dir, layout, Compression::Zlib, overwrite, progress)
}

/// Exports `world` as a Java world folder at `java_dir` laid out as `layout`, its regions
/// in `format`: Anvil files with their chunks compressed one way (a [`Compression`]: Minecraft
/// reads each region chunk's own; zlib is its default), or Linear files for Paper forks that
/// read them (`terrane_anvil::RegionFormat::Linear`): each dimension
/// that holds columns into its region (and entities) folder (the Overworld, the Nether, the
/// End, and the datapack dimensions the world recorded by name; other terrane dimensions are
/// listed in [`JavaExportSummary::skipped_dimensions`]), the `level.dat` and the players'
/// files kept at import. A world that never came from Minecraft has no `level.dat`: Minecraft
/// lists such a folder only once one is added.
///
/// The destination is checked first ([`check_world_folder`]). With [`Overwrite::Replace`]
/// the result is exactly `world`: the region and side files the export did not write are
/// removed from every dimension's folders, and an old `level.dat` when `world` kept none.
/// With [`Overwrite::Merge`] the regions written replace the same-named ones (their stale
/// side files and entity regions removed), and everything else is kept.
pub fn export_java_world_in(
    world: &World,
    java_dir: &Path,
    layout: JavaLayout,
    format: impl Into<terrane_anvil::RegionFormat>,
    overwrite: Overwrite,
    progress: &mut dyn FnMut(&Dimension, &Progress),
) -> Result<JavaExportSummary> {
    let format = format.into();
    check_world_folder(java_dir, overwrite)?;
    refuse_bedrock_states(world)?;
    let mut summary = JavaExportSummary { layout: Some(layout), ..Default::default() };
    let mut regions = world_regions(world, &[RECORD_PREFIX])?;
    let dims: Vec<u64> = regions.keys().copied().collect();
    let mut known: Vec<Dimension> = vanilla_dimensions(layout).into();
    for (name, id) in recorded_dimensions(world)? {
        known.push(Dimension::new(id, &name, layout));
    }
    summary.skipped_dimensions =
        dims.iter().copied().filter(|&d| !known.iter().any(|k| k.id == d)).collect();
    for d in &known {
        let Some(dim_regions) = regions.remove(&d.id) else { continue };
        let source = WorldSource::new(world, dim_regions)?;
        let options = ExportOptions::new().entities_dir(java_dir.join(&d.entities)).format(format);
        let s = terrane_anvil::export_region_dir_with(
            &source,
            &java_dir.join(&d.region),
            &options,
            &mut |p| progress(d, p),
        )
        .map_err(from_anvil)?;
        summary.dimensions.push((d.clone(), s));
    }
    for d in &known {
        let written =
            summary.dimensions.iter().find(|(w, _)| w.id == d.id).map(|(_, s)| &s.files[..]);
        let dirs = [java_dir.join(&d.region), java_dir.join(&d.entities)];
        remove_stale(&[&dirs[0], &dirs[1]], written.unwrap_or_default(), overwrite)?;
    }
    summary.players = crate::java_layout::export_players(world, java_dir, layout)?;
    let path = java_dir.join("level.dat");
    if let Some(o) = world.store().get(tables::WORLD_PROPERTIES, LEVEL_DAT_KEY)? {
        fs::create_dir_all(java_dir).map_err(io(java_dir))?;
        write_whole(&path, &o.data)?;
        summary.level_dat = true;
    } else if overwrite == Overwrite::Replace && path.is_file() {
        fs::remove_file(&path).map_err(io(&path))?;
    }
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recorded DataVersion is the newest noted: an older import does not lower it.
    #[test]
    fn the_recorded_data_version_only_grows() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = World::builder().backend(crate::Backend::Memory).create(dir.path()).unwrap();
        assert_eq!(data_version(&w).unwrap(), None);
        note_data_version(&mut w, 3700).unwrap();
        note_data_version(&mut w, 3465).unwrap();
        assert_eq!(data_version(&w).unwrap(), Some(3700));
        note_data_version(&mut w, 3955).unwrap();
        assert_eq!(data_version(&w).unwrap(), Some(3955));
    }

    #[test]
    fn record_keys_carry_the_dimension_except_the_overworld() {
        let p = ColumnPos::new(-3, 70);
        let k0 = record_key(0, p);
        assert_eq!(k0.len(), RECORD_PREFIX.len() + 16, "Overworld keys as before dimensions");
        assert_eq!(parse_record_key(&k0), Some((0, p)));
        let k2 = record_key(2, p);
        assert_eq!(k2.len(), RECORD_PREFIX.len() + 24);
        assert_eq!(parse_record_key(&k2), Some((2, p)));
        assert_eq!(parse_record_key(b"anvil:column:short"), None);
        assert_eq!(parse_record_key(LEVEL_DAT_KEY), None);
    }
}
