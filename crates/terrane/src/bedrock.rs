//! Minecraft Bedrock Edition worlds in and out of a [`World`], through terrane-bedrock
//! ([`format`](mod@format)): a world folder's `level.dat`, `levelname.txt` and `db/`.
//!
//! Bedrock's Overworld, Nether and End become terrane dimensions 0, 1 and 2 (as Java's do).
//! What terrane keeps besides the chunks and entities (`docs/format/world-dir.md`, "Keys the
//! facade and the CLI add"; the mapping: `docs/format/bedrock.md`):
//! - each column's [`format::BedrockRecord`] (biomes, block entities, versions, the sub-chunks
//!   that did not decode, the entity list's order) under [`record_key`];
//! - every database record that is not a column's (players, maps, villages, ...) under
//!   [`WORLD_RECORD_PREFIX`] and its key;
//! - `level.dat` and `levelname.txt`, byte for byte, and the world's block version
//!   ([`BLOCK_VERSION_KEY`]: block states of another version carry it in their name).
//!
//! Each column is one atomic save, and an import skips the columns the world already has, so
//! an interrupted import resumes where it stopped; until it does, the world holds
//! [`IMPORTING_KEY`](crate::IMPORTING_KEY) and opens only for an import
//! ([`WorldBuilder::for_import`](crate::WorldBuilder::for_import)). An export does not write
//! over a Bedrock
//! world without being told ([`Overwrite`]). Block names are Bedrock's: nothing is
//! translated between Java and Bedrock.
//!
//! ```no_run
//! # fn main() -> terrane::Result<()> {
//! use terrane::{World, bedrock};
//!
//! let mut world = World::builder().sync_saves(false).create("from-bedrock")?;
//! bedrock::refuse_overwrite(&world)?;
//! let s = bedrock::import_bedrock_world(&mut world, "minecraftWorlds/abc=".as_ref(), &mut |p| {
//!     eprintln!("{} columns", p.columns_done);
//! })?;
//! println!("{} columns, {} damaged records kept as they were", s.columns, s.damaged.len());
//! world.close()?;
//!
//! let world = World::open_read_only("from-bedrock")?;
//! let to = "minecraftWorlds/back".as_ref();
//! bedrock::export_bedrock_world(&world, to, terrane::export::Overwrite::Refuse, &mut |_| {})?;
//! # Ok(())
//! # }
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::path::{Path, PathBuf};

pub use terrane_bedrock as format;
use terrane_bedrock::db::{ReadDb, WriteDb};
use terrane_bedrock::key::{BedrockColumnPos, DbKey};
use terrane_bedrock::mapping::{column_to_terrane, first_block_version, terrane_to_column};
use terrane_bedrock::read::{db_dir, read_db};
use terrane_bedrock::{BedrockRecord, LevelDat};
use terrane_chunk::{ChunkView, Uuid};
use terrane_section::{ChunkPos, ColumnPos};
use terrane_store::tables;

use crate::error::io;
use crate::export::{Found, Overwrite, inspect, refused, write_whole};
use crate::refusal::{Refusal, Writes};
use crate::region_columns::{DimRegions, world_regions};
use crate::{Error, Result, TickSave, World};

/// The `worldProperties` key prefix of imported column records.
pub const RECORD_PREFIX: &[u8] = crate::imported::BEDROCK_RECORD_PREFIX;
/// The `worldProperties` key prefix of the database's other records (then the record's key).
pub const WORLD_RECORD_PREFIX: &[u8] = b"bedrock:record:";
/// The `worldProperties` key of `level.dat`, kept byte for byte.
pub const LEVEL_DAT_KEY: &[u8] = b"bedrock:level.dat";
/// The `worldProperties` key of `levelname.txt`, kept byte for byte.
pub const LEVEL_NAME_KEY: &[u8] = b"bedrock:levelname.txt";
/// The `worldProperties` key of the world's block version (`i32` big-endian): the version
/// block-state names leave out.
pub const BLOCK_VERSION_KEY: &[u8] = crate::imported::BLOCK_VERSION_KEY;

pub use terrane_bedrock::NATIVE_BLOCK_VERSION;

/// The key of a column's record: [`RECORD_PREFIX`], the dimension (`u64` big-endian) unless
/// 0, and the column's 2D Morton key, as `terrane::java`'s record keys.
pub fn record_key(dim: u64, pos: ColumnPos) -> Vec<u8> {
    crate::imported::column_record_key(RECORD_PREFIX, dim, pos)
}

/// Splits a record key into dimension and column; `None` for another key.
pub fn parse_record_key(key: &[u8]) -> Option<(u64, ColumnPos)> {
    crate::imported::parse_column_record_key(RECORD_PREFIX, key)
}

pub use terrane_bedrock::is_bedrock_world;

/// The world's block version, if an import recorded one.
pub fn block_version(world: &World) -> Result<Option<i32>> {
    crate::imported::block_version(world)
}

/// Refuses an import into a world that holds chunks that did not come from a Bedrock import
/// (a world with Bedrock column records is a resumed import: allowed).
pub fn refuse_overwrite(world: &World) -> Result<()> {
    crate::imported::refuse_overwrite(world, RECORD_PREFIX, crate::refusal::ImportedFrom::Bedrock)
}

/// Where an import or export is.
#[derive(Clone, Debug, Default)]
pub struct BedrockProgress {
    /// Columns done so far (imported, skipped as already there, or exported).
    pub columns_done: u64,
    /// Columns in all (exports only; an import learns it at the end).
    pub columns_total: Option<u64>,
}

/// What [`import_bedrock_world`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BedrockImportSummary {
    /// Columns imported (all dimensions).
    pub columns: u64,
    /// Columns skipped because the world already had them (a resumed import).
    pub skipped: u64,
    /// Columns per terrane dimension (imported ones).
    pub per_dimension: BTreeMap<u64, u64>,
    /// Chunks (decoded sub-chunks) imported.
    pub chunks: u64,
    /// Non-air blocks imported (cells whose block is not air; extra layers, such as the water
    /// of a waterlogged block, are not counted), as a Java import counts them.
    pub blocks: u64,
    /// Entities the world holds: those of the columns' `digp` lists (imported as entity
    /// records), of pre-1.18.30 entity lists (kept in the column records as stored), and
    /// those no column lists (kept as world records).
    pub entities: u64,
    /// Block entities imported (kept in the column records).
    pub block_entities: u64,
    /// Database records besides columns kept (players, maps, ...).
    pub world_records: u64,
    /// Bytes of the world's `db/` folder.
    pub bytes_in: u64,
    /// Damaged or unsupported records, kept as stored instead of converted: one line each.
    pub damaged: Vec<String>,
}

fn bedrock_dim(dim: i32) -> Option<u64> {
    u64::try_from(dim).ok().filter(|d| *d <= 2)
}

/// Imports a Bedrock world folder into `world` (see the module docs). A folder without
/// `db/CURRENT` is refused before anything is written; damaged records are reported in the
/// summary and kept as stored; the world's own errors end the import.
pub fn import_bedrock_world(
    world: &mut World,
    bedrock_dir: &Path,
    progress: &mut dyn FnMut(&BedrockProgress),
) -> Result<BedrockImportSummary> {
    let db_path = db_dir(bedrock_dir)?;
    crate::import_mark::marked(world, "bedrock", |world| {
        import_bedrock_db(world, bedrock_dir, &db_path, progress)
    })
}

/// [`import_bedrock_world`] once its `db/` is found, within the import's mark.
fn import_bedrock_db(
    world: &mut World,
    bedrock_dir: &Path,
    db_path: &Path,
    progress: &mut dyn FnMut(&BedrockProgress),
) -> Result<BedrockImportSummary> {
    let mut summary =
        BedrockImportSummary { bytes_in: crate::world::dir_bytes(db_path), ..Default::default() };
    // level.dat and levelname.txt first: small, and what tells a Bedrock world.
    let mut save = TickSave::new();
    let level_dat = bedrock_dir.join("level.dat");
    if level_dat.is_file() {
        let bytes = fs::read(&level_dat).map_err(io(&level_dat))?;
        if let Err(e) = LevelDat::parse(&bytes) {
            summary.damaged.push(format!("{}: {e} (kept as it is)", level_dat.display()));
        }
        save.put_object(tables::WORLD_PROPERTIES, LEVEL_DAT_KEY.to_vec(), bytes);
    }
    let name = bedrock_dir.join("levelname.txt");
    if name.is_file() {
        let bytes = fs::read(&name).map_err(io(&name))?;
        save.put_object(tables::WORLD_PROPERTIES, LEVEL_NAME_KEY.to_vec(), bytes);
    }
    let tick = world.tick();
    world.save_tick(tick, save)?;

    let mut db = ReadDb::open(db_path)?;
    summary.damaged.extend(db.notes().iter().cloned());
    let mut version = block_version(world)?;
    let mut schema = world.schema().clone();
    let mut others = TickSave::new();
    let mut p = BedrockProgress::default();
    let mut failure: Option<Error> = None;
    let (mut world_records, mut unlisted_entities) = (0, 0);
    let r = read_db(
        &mut db,
        |raw| {
            let mut step = || -> Result<()> {
                let Some(dim) = bedrock_dim(raw.pos.dim) else {
                    summary.damaged.push(format!(
                        "dimension {} column {},{}: not the Overworld, the Nether or the End (kept as world records)",
                        raw.pos.dim, raw.pos.x, raw.pos.z
                    ));
                    return Ok(());
                };
                let pos = ColumnPos::new(raw.pos.x, raw.pos.z);
                let key = record_key(dim, pos);
                p.columns_done += 1;
                if world.store().get(tables::WORLD_PROPERTIES, &key)?.is_some() {
                    summary.skipped += 1;
                    progress(&p);
                    return Ok(());
                }
                let mut save = TickSave::new();
                let v = match version {
                    Some(v) => v,
                    None => {
                        let v = first_block_version(&raw).unwrap_or(NATIVE_BLOCK_VERSION);
                        save.put_object(
                            tables::WORLD_PROPERTIES,
                            BLOCK_VERSION_KEY.to_vec(),
                            v.to_be_bytes().to_vec(),
                        );
                        version = Some(v);
                        v
                    }
                };
                let c = column_to_terrane(&raw, &mut schema, v)?;
                if schema.blocks().len() != world.schema().blocks().len() {
                    world.extend_schema(schema.clone())?;
                }
                summary.columns += 1;
                *summary.per_dimension.entry(dim).or_default() += 1;
                summary.chunks += c.chunks.len() as u64;
                summary.blocks += c.blocks;
                summary.entities += c.entities.len() as u64 + c.legacy_entities;
                summary.block_entities += c.block_entities;
                summary.damaged.extend(c.damaged);
                for (y, bytes) in c.chunks {
                    save.put_chunk(
                        dim,
                        ChunkPos::new(i64::from(pos.x), y, i64::from(pos.z)),
                        bytes,
                    );
                }
                for (uuid, bytes) in c.entities {
                    save.put_entity(uuid, bytes);
                }
                save.put_object(tables::WORLD_PROPERTIES, key, c.record);
                if dim == 0 {
                    world.mark_generated(pos)?;
                }
                let tick = world.tick();
                world.save_tick(tick, save)?;
                progress(&p);
                Ok(())
            };
            step().map_err(|e| {
                let msg = e.to_string();
                failure = Some(e);
                terrane_bedrock::Error::Db { path: PathBuf::from("world"), message: msg }
            })
        },
        |k, v| {
            world_records += 1;
            if matches!(DbKey::parse(k), DbKey::Actor(_)) {
                unlisted_entities += 1; // an entity no column lists, kept as a world record
            }
            others.put_object(
                tables::WORLD_PROPERTIES,
                [WORLD_RECORD_PREFIX, k].concat(),
                v.to_vec(),
            );
            Ok(())
        },
    );
    match (r, failure) {
        (Ok(()), _) => {}
        (Err(_), Some(e)) => return Err(e),
        (Err(e), None) => return Err(e.into()),
    }
    summary.world_records = world_records;
    summary.entities += unlisted_entities;
    let tick = world.tick();
    world.save_tick(tick, others)?;
    world.sync()?;
    Ok(summary)
}

/// What [`export_bedrock_world`] did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BedrockExportSummary {
    /// Columns written (all dimensions).
    pub columns: u64,
    /// Sub-chunks written.
    pub sub_chunks: u64,
    /// Entities written: entity records, and those of pre-1.18.30 entity lists (as an import
    /// counts them).
    pub entities: u64,
    /// Other database records written back.
    pub world_records: u64,
    /// Terrane dimensions other than 0, 1 and 2, not exported (Bedrock has three).
    pub skipped_dimensions: Vec<u64>,
    /// Bytes of the written `db/` folder.
    pub bytes_out: u64,
    /// A world whose blocks are Java states (imported from Java, or saved by a game or the
    /// demo: any world without a Bedrock block version): what translating them to Bedrock
    /// states approximated and dropped ([`format::translate`]). `None` for a Bedrock world.
    pub translated: Option<format::translate::TranslationReport>,
    /// Entities of a Java-state world: translated (mobs, dropped items), left out, and
    /// approximated ([`format::entity`]). Empty for a Bedrock world.
    pub entity_translation: format::entity::EntityReport,
    /// Block entities of a Java-state world: translated (containers, signs), left out, and
    /// approximated ([`format::block_entity`]). Empty for a Bedrock world.
    pub block_entities: format::block_entity::BlockEntityReport,
}

/// The block entities a Java column's record keeps aside, and its DataVersion (none for a
/// column that did not come from Java).
fn java_record(world: &World, dim: u64, pos: ColumnPos) -> Result<JavaRecord> {
    let key = crate::imported::column_record_key(crate::imported::JAVA_RECORD_PREFIX, dim, pos);
    let Some(o) = world.store().get(tables::WORLD_PROPERTIES, &key)? else {
        return Ok(JavaRecord::default());
    };
    Ok(match terrane_anvil::mapping::ColumnRecord::decode(&o.data) {
        Ok(r) => JavaRecord {
            aside: r.extra_block_entities,
            data_version: r.data_version,
            orphans: r.orphan_entities,
        },
        Err(_) => JavaRecord::default(),
    })
}

/// What a Java column's record gives a Bedrock export.
#[derive(Default)]
struct JavaRecord {
    /// Block entities kept aside (not components).
    aside: Vec<terrane_nbt::Compound>,
    data_version: Option<i32>,
    /// Entities no chunk references.
    orphans: Vec<Uuid>,
}

/// A minimal `level.dat` for a world that never came from Bedrock.
fn fresh_level_dat() -> Vec<u8> {
    use terrane_nbt::{Compound, Tag};
    let mut c = Compound::new();
    c.insert("LevelName", Tag::String("terrane world".into()));
    c.insert("StorageVersion", Tag::Int(10));
    c.insert("Generator", Tag::Int(2));
    c.insert("lastOpenedWithVersion", Tag::List(3, [1, 21, 0, 3, 0].map(Tag::Int).to_vec()));
    terrane_bedrock::level_dat::encode(c)
}

/// Checks a Bedrock export's destination before anything is written: `bedrock_dir` may be
/// missing or an empty folder; a Bedrock world there is refused unless `overwrite` says to
/// replace or merge ([`Error::WouldOverwrite`]). A file, or a folder that holds anything but
/// a Bedrock world, is refused whatever `overwrite` says ([`Error::Refused`]): replacing
/// replaces the whole folder.
pub fn check_destination(bedrock_dir: &Path, overwrite: Overwrite) -> Result<()> {
    match inspect(bedrock_dir)? {
        Found::Nothing => Ok(()),
        Found::File => Err(refused(bedrock_dir, Found::File, Writes::BedrockWorld)),
        Found::BedrockWorld if overwrite == Overwrite::Refuse => Err(Error::WouldOverwrite {
            path: bedrock_dir.to_path_buf(),
            holds: "a Bedrock world".into(),
            merge: true,
        }),
        Found::BedrockWorld => Ok(()),
        found @ (Found::TerraneWorld | Found::JavaWorld | Found::RegionFiles | Found::Other) => {
            Err(refused(bedrock_dir, found, Writes::BedrockWorld))
        }
    }
}

/// Exports `world` as a Bedrock world folder at `bedrock_dir`, checked first
/// ([`check_destination`]): the folder is written under a temporary name beside it and
/// renamed into place once whole. Dimensions 0, 1 and 2 become the Overworld, the Nether and
/// the End. The world is read a region (32 × 32 columns) at a time, twice (once to count the
/// columns for `progress`): memory does not grow with the world.
///
/// Over a Bedrock world, with [`Overwrite::Replace`] the old folder is replaced whole; with
/// [`Overwrite::Merge`] the new database holds `world`'s columns (each replacing the same
/// column of the old world, with its entities), and the old world's other columns, entities
/// and records; it takes the old one's place in the folder, whose other files (packs, icon)
/// stay, and so does its `level.dat` when `world` kept none.
pub fn export_bedrock_world(
    world: &World,
    bedrock_dir: &Path,
    overwrite: Overwrite,
    progress: &mut dyn FnMut(&BedrockProgress),
) -> Result<BedrockExportSummary> {
    check_destination(bedrock_dir, overwrite)?;
    let file_name =
        bedrock_dir.file_name().ok_or_else(|| Refusal::NoFolderName(bedrock_dir.into()))?;
    let beside = |what: &str| {
        bedrock_dir.with_file_name(format!(".{}.terrane-{what}", file_name.to_string_lossy()))
    };
    let tmp = beside("export");
    let _ = fs::remove_dir_all(&tmp);
    let merge = overwrite == Overwrite::Merge && inspect(bedrock_dir)? == Found::BedrockWorld;
    let r = export_into(world, &tmp, merge.then_some(bedrock_dir), progress);
    let r = r.and_then(|s| {
        if merge {
            swap_database(&tmp, bedrock_dir)?;
            let _ = fs::remove_dir_all(&tmp);
        } else if bedrock_dir.exists() {
            // Replace (or an empty folder): the old folder aside, the new one in, the old gone.
            let old = beside("old");
            let _ = fs::remove_dir_all(&old);
            fs::rename(bedrock_dir, &old).map_err(io(bedrock_dir))?;
            fs::rename(&tmp, bedrock_dir).map_err(io(bedrock_dir))?;
            fs::remove_dir_all(&old).map_err(io(&old))?;
        } else {
            fs::rename(&tmp, bedrock_dir).map_err(io(bedrock_dir))?;
        }
        Ok(s)
    });
    if r.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    r
}

/// Moves a merged export's database, `level.dat` and `levelname.txt` from `from` into the
/// world folder `to` in place of the old ones; the folder's other files stay.
fn swap_database(from: &Path, to: &Path) -> Result<()> {
    let (db, old) = (to.join("db"), to.join(".db.terrane-old"));
    let _ = fs::remove_dir_all(&old);
    fs::rename(&db, &old).map_err(io(&db))?;
    fs::rename(from.join("db"), &db).map_err(io(&db))?;
    for f in ["level.dat", "levelname.txt"] {
        fs::rename(from.join(f), to.join(f)).map_err(io(to.join(f)))?;
    }
    fs::remove_dir_all(&old).map_err(io(&old))
}

/// The old world's records a merge keeps: every record but those of the columns the export
/// wrote (`columns`: their records, `digp` list and the entities it names) and those of the
/// keys it wrote (`keys`: world records, entities).
fn merge_records(
    old_dir: &Path,
    columns: &HashSet<BedrockColumnPos>,
    keys: &HashSet<Vec<u8>>,
    db: &mut WriteDb,
) -> Result<()> {
    let mut old = ReadDb::open(&old_dir.join("db"))?;
    let mut replaced_actors = HashSet::new();
    old.for_each_prefix(terrane_bedrock::key::DIGP_PREFIX, |k, v| {
        if let DbKey::Digp(pos) = DbKey::parse(k)
            && columns.contains(&pos)
        {
            replaced_actors.extend(
                v.chunks_exact(8).map(|id| i64::from_le_bytes(id.try_into().expect("8 bytes"))),
            );
        }
        Ok(())
    })?;
    old.for_each(|k, v| {
        let keep = match DbKey::parse(k) {
            DbKey::Chunk { pos, .. } | DbKey::Digp(pos) => !columns.contains(&pos),
            DbKey::Actor(id) => !replaced_actors.contains(&id) && !keys.contains(k),
            DbKey::Other => !keys.contains(k),
        };
        if keep { db.put(k, v) } else { Ok(()) }
    })?;
    Ok(())
}

/// The columns of `region` an export writes besides those holding chunks: those with a
/// Bedrock record, and in a Java world (`java`) those whose Java record keeps entities.
fn record_columns(
    regions: &DimRegions<'_>,
    region: (i64, i64),
    java: bool,
) -> Result<Vec<ColumnPos>> {
    let mut out: Vec<ColumnPos> = regions.records(RECORD_PREFIX, region)?.into_keys().collect();
    if java {
        for (pos, bytes) in regions.records(crate::imported::JAVA_RECORD_PREFIX, region)? {
            if terrane_anvil::mapping::ColumnRecord::decode(&bytes)
                .is_ok_and(|r| !r.orphan_entities.is_empty())
            {
                out.push(pos);
            }
        }
    }
    Ok(out)
}

/// Every column of `region` an export writes: those holding chunks and the
/// [`record_columns`].
fn columns_of_region(
    regions: &DimRegions<'_>,
    region: (i64, i64),
    java: bool,
) -> Result<std::collections::BTreeSet<ColumnPos>> {
    let mut cols = regions.chunk_columns(region)?;
    cols.extend(record_columns(regions, region, java)?);
    Ok(cols)
}

/// Writes a world's columns into a new Bedrock database, translating Java ones.
struct ColumnWriter<'a> {
    world: &'a World,
    /// The Java → Bedrock translator, for a world of Java states.
    translator: Option<format::translate::ChunkTranslator>,
    /// The block version written.
    version: i32,
    db: WriteDb,
    summary: &'a mut BedrockExportSummary,
    /// Keys of the entities written (a merge keeps the old world's other ones).
    written_keys: HashSet<Vec<u8>>,
}

impl ColumnWriter<'_> {
    /// Writes column `pos` of dimension `dim` (its chunks, `(y, bytes)`; its Bedrock record
    /// if it came from Bedrock) as one group of the database.
    fn column(
        &mut self,
        dim: u64,
        pos: ColumnPos,
        mut chunks: Vec<(i64, Vec<u8>)>,
        record: Option<&BedrockRecord>,
    ) -> Result<BedrockColumnPos> {
        chunks.sort_by_key(|c| c.0);
        let bpos = BedrockColumnPos { dim: dim as i32, x: pos.x, z: pos.z };
        let translating = self.translator.is_some();
        let mut java_block_entities = None;
        let mut entity_records = Vec::new();
        let schema = match self.translator.as_mut() {
            Some(t) => {
                let java = java_record(self.world, dim, pos)?;
                java_block_entities = terrane_convert::block_entities::java_to_bedrock_record(
                    pos,
                    &chunks,
                    self.world.schema(),
                    &java.aside,
                    java.data_version,
                    &mut self.summary.block_entities,
                )?;
                // The entities the chunks reference, then those the record keeps for none.
                let mut uuids = java.orphans;
                for (_, bytes) in &mut chunks {
                    let from = ChunkView::parse(bytes).map_err(terrane_bedrock::Error::Chunk)?;
                    uuids.extend_from_slice(from.entities());
                    *bytes = t.chunk(bytes, self.world.schema())?;
                }
                let mut java_entities = Vec::with_capacity(uuids.len());
                for u in &uuids {
                    if let Some(o) = self.world.store().get(tables::ENTITY, u)? {
                        java_entities.push((*u, o.data));
                    }
                }
                entity_records = terrane_convert::entities::java_to_bedrock_records(
                    bpos,
                    java_entities.iter().map(|(u, b)| (u, b.as_slice())),
                    java.data_version,
                    &mut self.summary.entity_translation,
                )?;
                t.schema()
            }
            None => self.world.schema(),
        };
        // A Bedrock column's entities: those its record lists (a Java world's stay behind).
        let mut entities = HashMap::new();
        if let (Some(r), false) = (record, translating) {
            for &id in &r.actors {
                let u = terrane_bedrock::mapping::entity_uuid(id);
                if let Some(o) = self.world.store().get(tables::ENTITY, &u)? {
                    entities.insert(u, o.data);
                }
            }
        }
        for (k, v) in terrane_to_column(bpos, &chunks, record, &entities, schema, self.version)? {
            match DbKey::parse(&k) {
                DbKey::Actor(_) => {
                    self.summary.entities += 1;
                    self.written_keys.insert(k.clone());
                }
                DbKey::Chunk { tag: terrane_bedrock::key::tag::ENTITY, .. } => {
                    self.summary.entities += terrane_bedrock::mapping::count_compounds(&v).0;
                }
                DbKey::Chunk { y: Some(_), .. } => self.summary.sub_chunks += 1,
                _ => {}
            }
            self.db.put(&k, &v)?;
        }
        if let Some(v) = java_block_entities {
            self.db.put(&bpos.key(terrane_bedrock::key::tag::BLOCK_ENTITY), &v)?;
        }
        for (k, v) in entity_records {
            if matches!(DbKey::parse(&k), DbKey::Actor(_)) {
                self.summary.entities += 1;
                self.written_keys.insert(k.clone());
            }
            self.db.put(&k, &v)?;
        }
        self.db.end_group()?;
        self.summary.columns += 1;
        Ok(bpos)
    }
}

fn export_into(
    world: &World,
    dir: &Path,
    merge_with: Option<&Path>,
    progress: &mut dyn FnMut(&BedrockProgress),
) -> Result<BedrockExportSummary> {
    let mut summary = BedrockExportSummary::default();
    // A world without a Bedrock block version holds Java states: they are translated
    // (`docs/format/java-bedrock-table.md`) and its entities, Java NBT, stay behind.
    let bedrock_version = block_version(world)?;
    let translator = match bedrock_version {
        Some(_) => None,
        None => Some(format::translate::ChunkTranslator::new(
            format::translate::Direction::JavaToBedrock,
            terrane_chunk::Schema::new(),
        )),
    };
    let version = match (&translator, bedrock_version) {
        (Some(_), _) => format::translate::table().block_version(),
        (None, v) => v.unwrap_or(NATIVE_BLOCK_VERSION),
    };
    let mut world_records = Vec::new();
    for e in world.store().scan_prefix(tables::WORLD_PROPERTIES, WORLD_RECORD_PREFIX)? {
        let (k, o) = e?;
        if let Some(raw) = k.strip_prefix(WORLD_RECORD_PREFIX) {
            world_records.push((raw.to_vec(), o.data));
        }
    }
    let property =
        |key| world.store().get(tables::WORLD_PROPERTIES, key).map(|o| o.map(|o| o.data));
    let (mut level_dat, mut level_name) = (property(LEVEL_DAT_KEY)?, property(LEVEL_NAME_KEY)?);
    // The world is read a region at a time: its columns are those holding chunks, a Bedrock
    // record, or (a Java world's) a Java record, for a column holding entities and no chunk
    // (a mob over the void).
    let java_prefix = crate::imported::JAVA_RECORD_PREFIX;
    let prefixes: &[&[u8]] =
        if translator.is_some() { &[RECORD_PREFIX, java_prefix] } else { &[RECORD_PREFIX] };
    let mut dims = world_regions(world, prefixes)?;
    summary.skipped_dimensions = dims.keys().copied().filter(|&d| d > 2).collect();
    dims.retain(|&d, _| d <= 2);
    let mut total = 0;
    for regions in dims.values() {
        for r in regions.regions() {
            total += columns_of_region(regions, r, translator.is_some())?.len() as u64;
        }
    }
    fs::create_dir_all(dir).map_err(io(dir))?;
    let mut w = ColumnWriter {
        world,
        translator,
        version,
        db: WriteDb::create(&dir.join("db"))?,
        summary: &mut summary,
        written_keys: HashSet::new(),
    };
    let mut p = BedrockProgress { columns_done: 0, columns_total: Some(total) };
    // What a merge leaves of the old world: the columns written here are the new ones.
    let mut written_columns = HashSet::new();
    for (&dim, regions) in &dims {
        for region in regions.regions() {
            let mut columns = regions.chunks(region)?;
            let mut records = HashMap::new();
            for (pos, bytes) in regions.records(RECORD_PREFIX, region)? {
                records.insert(pos, BedrockRecord::decode(&bytes)?);
            }
            for pos in record_columns(regions, region, w.translator.is_some())? {
                columns.entry(pos).or_default();
            }
            for (pos, chunks) in columns {
                let bpos = w.column(dim, pos, chunks, records.get(&pos))?;
                if merge_with.is_some() {
                    written_columns.insert(bpos);
                }
                p.columns_done += 1;
                progress(&p);
            }
        }
    }
    let ColumnWriter { mut db, translator, mut written_keys, .. } = w;
    for (k, v) in &world_records {
        db.put(k, v)?;
        summary.world_records += 1;
        if matches!(DbKey::parse(k), DbKey::Actor(_)) {
            summary.entities += 1; // an entity no column lists, as the import kept it
        }
        written_keys.insert(k.clone());
    }
    if let Some(old) = merge_with {
        merge_records(old, &written_columns, &written_keys, &mut db)?;
    }
    db.finish()?;
    summary.bytes_out = crate::world::dir_bytes(&dir.join("db"));
    summary.translated = translator.map(|t| t.report().clone());
    if let Some(old) = merge_with {
        // The merged world keeps its own level.dat and name unless this world brought some.
        let read = |f: &str| fs::read(old.join(f)).ok();
        if level_dat.is_none() {
            (level_dat, level_name) =
                (read("level.dat"), level_name.or_else(|| read("levelname.txt")));
        }
    }
    let level_dat = level_dat.unwrap_or_else(fresh_level_dat);
    let level_name = match level_name {
        Some(n) => n,
        None => LevelDat::parse(&level_dat)
            .ok()
            .and_then(|l| l.level_name().map(|s| s.as_bytes().to_vec()))
            .unwrap_or_else(|| b"terrane world".to_vec()),
    };
    write_whole(&dir.join("level.dat"), &level_dat)?;
    write_whole(&dir.join("levelname.txt"), &level_name)?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_keys_round_trip_and_differ_from_java_ones() {
        let p = ColumnPos::new(-3, 70);
        for dim in [0, 1, 2] {
            assert_eq!(parse_record_key(&record_key(dim, p)), Some((dim, p)));
            assert_eq!(crate::java::parse_record_key(&record_key(dim, p)), None);
        }
        assert!(LevelDat::parse(&fresh_level_dat()).is_ok());
    }
}
