//! Worlds from one edition to the other: a Java world folder to a Bedrock world folder and
//! back, block states translated through terrane-bedrock's table
//! ([`translate`](terrane_bedrock::translate)), column by column.
//!
//! - **Java → Bedrock** ([`java_to_bedrock`]): terrane-anvil's importer reads each dimension's
//!   regions, one column at a time; each column's chunks are translated and written as
//!   Bedrock records into the new database. Nothing else of the world is held.
//! - **Bedrock → Java** ([`bedrock_to_java`]): the Bedrock database is read column by column;
//!   each translated column is appended to a spill file of its region beside the
//!   destination; then each region's spill is written as a region file by terrane-anvil's
//!   exporter, which reads the spill back one column at a time and writes the region file
//!   as it goes. The spill files' format and crash argument: `docs/format/convert-spill.md`.
//!
//! Memory therefore does not grow with the number of columns (`docs/BENCHMARKS.md`, "Whole
//! worlds"). The destination must be missing or an empty folder; the world is written under
//! a temporary name beside it and renamed into place once whole, so a failed conversion
//! leaves nothing behind.
//!
//! What is translated, and what is reported instead ([`ConvertSummary`]):
//! - block states, with the waterlogged layer, by the table's rules: every approximated or
//!   dropped state is counted by name ([`TranslationReport`]);
//! - the Overworld, the Nether and the End (Java's other dimensions are counted as skipped);
//! - finished columns only: a column saved before its last generation stage (Java's
//!   `Status`, `ColumnRecord::is_finished`; Bedrock's `FinalizedState`,
//!   `RawColumn::unfinished_stage`) is left out and counted by its stage
//!   ([`ConvertSummary::unfinished`]), so that the other edition generates it rather than
//!   showing it unfinished;
//! - `level.dat`: the name, spawn, seed, game mode, difficulty and last-played time both
//!   editions keep (`level_dat.rs`); a converted Java world has no world-generation
//!   settings; a source `level.dat` that does not read is refused unless
//!   [`ConvertOptions::rebuild_level_dat`] (`terrane convert --force`) says to write one
//!   from defaults;
//! - biomes: Java's section biomes ⇄ Bedrock's `Data3D` record, with its height map (a
//!   Java column before 1.18 by its biome numbers, read by their 1.18+ names); legacy and
//!   missing biomes are counted as approximated ([`ConvertSummary`]);
//! - block entities: containers (their items through the table's item lines) and signs
//!   ([`block_entity`](terrane_bedrock::block_entity)); the others are counted as left out;
//! - entities: mobs and dropped items, in their position, identity, name and common flags
//!   ([`entity`](terrane_bedrock::entity)); the other kinds are counted as left out, and
//!   the fields of translated ones that are not kept as approximated;
//! - the single-player world's player (Java `level.dat`'s `Player` ⇄ Bedrock
//!   `~local_player`): place, game mode, experience and every item it carries
//!   ([`player`](terrane_bedrock::player)), and every other player the same way (Java's
//!   player files ⇄ Bedrock's `player_server_` records; a Java UUID is the Bedrock id);
//! - light and the rest of each column are not translated: the game computes light anew.
//!
//! ```no_run
//! # fn main() -> terrane::Result<()> {
//! let s = terrane::convert::java_to_bedrock(
//!     "saves/My World".as_ref(),
//!     "minecraftWorlds/my-world".as_ref(),
//!     &mut |p| eprintln!("{} columns", p.columns_done),
//! )?;
//! println!("{} columns, {} cells approximated", s.columns, s.blocks.approximated_cells());
//! # Ok(())
//! # }
//! ```

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

use terrane_anvil::mapping::ColumnRecord;
use terrane_anvil::{ExportOptions, ImportOptions, ImportSink, ImportedColumn};
use terrane_bedrock::block_entity::BlockEntityReport;
use terrane_bedrock::data3d::Data3D;
use terrane_bedrock::db::{ReadDb, WriteDb};
use terrane_bedrock::entity::EntityReport;
use terrane_bedrock::key::BedrockColumnPos;
use terrane_bedrock::mapping::{column_to_terrane, first_block_version, terrane_to_column};
use terrane_bedrock::player::LOCAL_PLAYER_KEY;

use crate::convert_players::PLAYER_SERVER_PREFIX;
pub use crate::convert_players::{BEDROCK_PLAYER_IDS, bedrock_player_uuid};
use terrane_bedrock::read::{db_dir, read_db};
use terrane_bedrock::translate::{ChunkTranslator, Direction, TranslationReport, table};
use terrane_chunk::{BlockId, Schema};
use terrane_nbt::{Reader, Tag, Writer};
use terrane_section::ColumnPos;

use crate::error::io;
use crate::export::{Found, inspect, write_whole};
use crate::java::{
    Dimension, JavaLayout, find_dimensions, has_region_files, layout_of, vanilla_dimensions,
};
use crate::refusal::{Refusal, Writes};
use crate::sink_error::{SinkError, from_anvil, from_bedrock, to_bedrock};
use crate::{Error, Result};

/// The Minecraft Java `DataVersion` written into converted Java columns: 1.21.11's, the Java
/// release whose block states the table holds.
pub const JAVA_DATA_VERSION: i32 = 4671;

/// Where a conversion is.
#[derive(Clone, Debug, Default)]
pub struct ConvertProgress {
    /// Columns converted so far.
    pub columns_done: u64,
    /// Columns in all, when known (Java sources: from the regions' location tables).
    pub columns_total: Option<u64>,
}

/// What a conversion did, and what it approximated or left behind.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ConvertSummary {
    /// Columns written.
    pub columns: u64,
    /// Columns an interrupted run of the same conversion had written already (counted in
    /// neither `columns` nor the report).
    pub columns_resumed: u64,
    /// Columns per dimension (0 Overworld, 1 Nether, 2 End).
    pub per_dimension: BTreeMap<u64, u64>,
    /// Block states approximated or dropped, by source state (cells).
    pub blocks: TranslationReport,
    /// Source biome → biome cells (Java's 4 × 4 × 4) given the nearest biome of the other
    /// edition (a legacy Bedrock variant, an End biome Bedrock has one of, a datapack's, a
    /// biome Java 1.18 merged into a neighbour).
    pub biomes_approximated: BTreeMap<String, u64>,
    /// Columns whose source held no biomes (a Java column saved without them, a Bedrock
    /// column without `Data3D`): the dimension's default biome was written.
    pub columns_without_biomes: u64,
    /// Block entities: those translated (containers with their items, signs), those left
    /// out, and what was approximated, by source id ([`BlockEntityReport`]).
    pub block_entities: BlockEntityReport,
    /// Entities: those translated (mobs and dropped items), those left out (kinds with no
    /// rule, or damaged), and what was approximated, by source id ([`EntityReport`]).
    pub entities: EntityReport,
    /// Players besides the single-player world's own (counted in `entities` as
    /// `minecraft:player` with it): Java's player files ⇄ Bedrock's `player_server_` records
    /// (`docs/format/java-bedrock-table.md`, "Players").
    pub players: u64,
    /// Columns Minecraft had not finished generating, by the stage they were saved at (Java's
    /// `Status`, `unpopulated` for a chunk from before 1.13; Bedrock's `FinalizedState`):
    /// left out, so that the game of the other edition generates them instead of showing
    /// them unfinished.
    pub unfinished: BTreeMap<String, u64>,
    /// Java dimensions other than the three, not converted (their region folders).
    pub skipped_dimensions: Vec<String>,
    /// Damaged source records, skipped or kept out, one line each.
    pub damaged: Vec<String>,
    /// Bytes of the written world.
    pub bytes_out: u64,
    /// The translation table's source (package and Bedrock release).
    pub table: String,
}

/// Refuses a destination that holds anything: a conversion writes a new world.
fn check_new(dst: &Path) -> Result<()> {
    match inspect(dst)? {
        Found::Nothing => Ok(()),
        found => Err(crate::export::refused(dst, found, Writes::Conversion)),
    }
}

/// The file in a conversion's temporary folder that says which conversion it holds: the
/// direction, the source folder (canonical path) and the terrane version, one per line.
const RESUME_MARKER: &str = ".terrane-convert";

/// Writes through `write` into a temporary folder beside `dst`, then renames it into place;
/// on failure the temporary folder is removed. A temporary folder an interrupted run of the
/// same conversion (same direction and source) left behind is handed to `write` as it is, so
/// it goes on where that run stopped (`write` gets `true`); another one is removed first.
fn into_place<T>(
    src: &Path,
    dst: &Path,
    direction: &str,
    write: impl FnOnce(&Path, bool) -> Result<T>,
) -> Result<T> {
    check_new(dst)?;
    let name = dst.file_name().ok_or_else(|| Refusal::NoFolderName(dst.into()))?;
    let tmp = dst.with_file_name(format!(".{}.terrane-convert", name.to_string_lossy()));
    let source = fs::canonicalize(src).map_err(io(src))?;
    let marker =
        format!("{direction}\n{}\nterrane {}\n", source.display(), env!("CARGO_PKG_VERSION"));
    let resumed = fs::read_to_string(tmp.join(RESUME_MARKER)).is_ok_and(|m| m == marker);
    if !resumed {
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir_all(&tmp).map_err(io(&tmp))?;
        write_whole(&tmp.join(RESUME_MARKER), marker.as_bytes())?;
    }
    let r = write(&tmp, resumed).and_then(|v| {
        let m = tmp.join(RESUME_MARKER);
        fs::remove_file(&m).map_err(io(&m))?;
        if dst.exists() {
            fs::remove_dir(dst).map_err(io(dst))?; // an empty folder (checked above)
        }
        fs::rename(&tmp, dst).map_err(io(dst))?;
        Ok(v)
    });
    // A failure (not a crash) leaves nothing behind; a crash leaves the folder to resume.
    if r.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    r
}

/// Converts the Java world folder `src` into a new Bedrock world folder `dst` (see the
/// module docs).
pub fn java_to_bedrock(
    src: &Path,
    dst: &Path,
    progress: &mut dyn FnMut(&ConvertProgress),
) -> Result<ConvertSummary> {
    java_to_bedrock_with(src, dst, &ConvertOptions::new(), progress)
}

/// What a conversion may do beyond its defaults.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ConvertOptions {
    /// Write a new `level.dat` from defaults (the name from the source folder, spawn at 0,0,
    /// no seed) when the source's does not read, saying so in the report. Default false: such
    /// a conversion is refused ([`Error::DamagedLevelDat`]) before anything is written.
    pub rebuild_level_dat: bool,
}

impl ConvertOptions {
    /// The defaults (see each field).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets [`rebuild_level_dat`](Self::rebuild_level_dat).
    pub fn rebuild_level_dat(mut self, rebuild: bool) -> Self {
        self.rebuild_level_dat = rebuild;
        self
    }
}

/// Refuses a source whose `level.dat` exists and does not read (by `reads`), unless the
/// options say to rebuild it.
fn check_level_dat(src: &Path, options: &ConvertOptions, reads: fn(&[u8]) -> bool) -> Result<()> {
    let path = src.join("level.dat");
    match fs::read(&path) {
        Ok(b) if !reads(&b) && !options.rebuild_level_dat => Err(Error::DamagedLevelDat(path)),
        _ => Ok(()),
    }
}

/// [`java_to_bedrock`] with [`ConvertOptions`].
pub fn java_to_bedrock_with(
    src: &Path,
    dst: &Path,
    options: &ConvertOptions,
    progress: &mut dyn FnMut(&ConvertProgress),
) -> Result<ConvertSummary> {
    check_level_dat(src, options, |b| crate::level_dat::read_java(b).is_some())?;
    let all = find_dimensions(src, layout_of(src))?;
    let (found, others): (Vec<Dimension>, Vec<Dimension>) =
        all.into_iter().partition(|d| !d.name.contains(':'));
    if found.is_empty() {
        return Err(Refusal::NoRegionFiles { folder: src.into(), vanilla_only: true }.into());
    }
    into_place(src, dst, "java-to-bedrock", |tmp, resumed| {
        let db_path = tmp.join("db");
        let reopened = if resumed { WriteDb::resume(&db_path).ok() } else { None };
        let resuming = reopened.is_some();
        let mut db = match reopened {
            Some(db) => db,
            None => {
                // A database the crash left unreadable is started over.
                let _ = fs::remove_dir_all(&db_path);
                WriteDb::create(&db_path)?
            }
        };
        let mut sink = BedrockSink {
            db: &mut db,
            resuming,
            dim: 0,
            from: crate::world::default_schema(),
            translator: ChunkTranslator::new(Direction::JavaToBedrock, Schema::new()),
            summary: ConvertSummary { table: table().source().to_string(), ..Default::default() },
        };
        let mut p = ConvertProgress::default();
        let mut done_before = 0;
        for d in &found {
            sink.dim = d.id;
            let mut options = ImportOptions::new();
            let entities = src.join(&d.entities);
            if entities.is_dir() {
                options = options.entities_dir(entities);
            }
            let r = terrane_anvil::import_region_dir_with(
                &src.join(&d.region),
                &mut sink,
                &options,
                &mut |ap| {
                    p.columns_done = done_before + ap.columns_done;
                    p.columns_total = Some(done_before + ap.columns_total);
                    progress(&p);
                },
            );
            let s = r.map_err(from_anvil)?;
            done_before = p.columns_done;
            sink.summary.damaged.extend(s.damaged.iter().map(|d| d.to_string()));
            sink.summary.columns_resumed += s.columns_skipped;
        }
        let mut summary = sink.summary;
        nothing_converted(src, &summary)?;
        summary.blocks = sink.translator.report().clone();
        summary.skipped_dimensions = others.iter().map(|d| d.name.clone()).collect();
        summary.skipped_dimensions.extend(other_java_dimensions(src));
        let level_dat = fs::read(src.join("level.dat")).ok();
        let player = level_dat.as_deref().and_then(crate::level_dat::read_java_player);
        let mut player_uuid = None;
        if let Some(java) = player {
            player_uuid = match java.get("UUID") {
                Some(Tag::IntArray(v)) => Some(uuid_string(v)),
                _ => None,
            };
            if let Some(b) = terrane_bedrock::player::java_to_bedrock(&java, &mut summary.entities)
            {
                let mut w = Writer::new().little_endian();
                w.named("", &Tag::Compound(b))?;
                db.put(LOCAL_PLAYER_KEY, &w.out)?;
            }
        }
        summary.players += crate::convert_players::java_to_bedrock(
            src,
            player_uuid.as_deref(),
            &mut db,
            &mut summary.entities,
        )?;
        db.finish()?;
        let shared = level_dat.as_deref().and_then(crate::level_dat::read_java);
        if level_dat.is_some() && shared.is_none() {
            summary.damaged.insert(0, LEVEL_DAT_DAMAGED.to_string());
        }
        let shared = shared.unwrap_or_default();
        let name = shared.name.clone().unwrap_or_else(|| level_name(src));
        let release = bedrock_release();
        let level = crate::level_dat::bedrock_level_dat(&shared, &name, release);
        write_whole(&tmp.join("level.dat"), &level)?;
        write_whole(&tmp.join("levelname.txt"), name.as_bytes())?;
        summary.bytes_out = crate::world::dir_bytes(tmp);
        Ok(summary)
    })
}

/// The report's line for a source `level.dat` that does not read (a conversion told to
/// rebuild it).
const LEVEL_DAT_DAMAGED: &str = "level.dat: damaged (it does not read); the new world's was \
    written from defaults (name from the folder, spawn at 0,0, no seed)";

/// Refuses to place a world of nothing converted out of damaged columns only
/// ([`Error::NothingConverted`]): the conversion's temporary folder is removed.
fn nothing_converted(src: &Path, s: &ConvertSummary) -> Result<()> {
    if s.columns + s.columns_resumed == 0 && !s.damaged.is_empty() {
        return Err(Error::NothingConverted { src: src.to_path_buf(), damaged: s.damaged.clone() });
    }
    Ok(())
}

/// A Java UUID (four ints, most significant first) in its text form, as player files are
/// named.
fn uuid_string(ints: &[i32]) -> String {
    let id = ints.iter().fold(0u128, |id, i| (id << 32) | u128::from(*i as u32));
    crate::game::uuid_text(id)
}

/// The Bedrock release of the table's states, as `level.dat`'s `lastOpenedWithVersion`.
fn bedrock_release() -> [i32; 5] {
    let mut v = [0i32; 5];
    for (i, p) in table().bedrock_release().split('.').take(4).enumerate() {
        v[i] = p.parse().unwrap_or(0);
    }
    v
}

/// The name a converted world takes when its `level.dat` names none: the source folder's.
fn level_name(src: &Path) -> String {
    src.file_name().map_or_else(|| "terrane world".into(), |n| n.to_string_lossy().into_owned())
}

/// Folders of a Java world that hold region files but are none of the three dimensions
/// (`DIM7/region`: dimensions of mods and old datapacks).
fn other_java_dimensions(src: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(src) else { return Vec::new() };
    let mut out: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            (name.starts_with("DIM")
                && name != "DIM-1"
                && name != "DIM1"
                && has_region_files(&e.path().join("region")))
            .then(|| format!("{name}/region"))
        })
        .collect();
    out.sort();
    out
}

/// terrane-anvil's importer into a Bedrock database: each column translated and written.
struct BedrockSink<'a> {
    db: &'a mut WriteDb,
    /// Whether `db` holds an interrupted run's columns (a fresh one has none to look up).
    resuming: bool,
    dim: u64,
    /// The Java states the importer registers.
    from: Schema,
    translator: ChunkTranslator,
    summary: ConvertSummary,
}

impl BedrockSink<'_> {
    fn put(&mut self, c: ImportedColumn) -> Result<()> {
        let record = ColumnRecord::decode(&c.record).ok();
        if let Some(r) = record.as_ref().filter(|r| !r.is_finished()) {
            let stage = r.status().unwrap_or("unpopulated").to_string();
            *self.summary.unfinished.entry(stage).or_default() += 1;
            return Ok(());
        }
        let mut chunks = Vec::with_capacity(c.chunks.len());
        for (y, bytes) in &c.chunks {
            chunks.push((*y, self.translator.chunk(bytes, &self.from)?));
        }
        let pos = BedrockColumnPos { dim: self.dim as i32, x: c.pos.x, z: c.pos.z };
        let entities = crate::convert_entities::java_to_bedrock_records(
            pos,
            c.entities.iter().map(|(u, b)| (u, b.as_slice())),
            record.as_ref().and_then(|r| r.data_version),
            &mut self.summary.entities,
        )?;
        for (k, v) in entities {
            self.db.put(&k, &v)?;
        }
        let block_entities = crate::convert_block_entities::java_to_bedrock_record(
            c.pos,
            &c.chunks,
            &self.from,
            record.as_ref().map_or(&[], |r| &r.extra_block_entities),
            record.as_ref().and_then(|r| r.data_version),
            &mut self.summary.block_entities,
        )?;
        if let Some(v) = block_entities {
            self.db.put(&pos.key(terrane_bedrock::key::tag::BLOCK_ENTITY), &v)?;
        }
        let sections = match &record {
            Some(r) => crate::convert_biomes::java_sections(
                &r.rest,
                &mut self.summary.damaged,
                &mut self.summary.biomes_approximated,
            ),
            None => BTreeMap::new(),
        };
        if sections.is_empty() {
            self.summary.columns_without_biomes += 1;
        }
        let air = self.translator.schema().blocks().find("minecraft:air").map(BlockId);
        let data3d = crate::convert_biomes::java_to_data3d(
            self.dim,
            &sections,
            &chunks,
            air,
            &mut self.summary.biomes_approximated,
        );
        self.db.put(&pos.key(terrane_bedrock::key::tag::DATA_3D), &data3d.encode())?;
        let records = terrane_to_column(
            pos,
            &chunks,
            None,
            &HashMap::new(),
            self.translator.schema(),
            table().block_version(),
        )?;
        for (k, v) in records {
            self.db.put(&k, &v)?;
        }
        self.db.end_group()?;
        self.summary.columns += 1;
        *self.summary.per_dimension.entry(self.dim).or_default() += 1;
        Ok(())
    }
}

impl ImportSink for BedrockSink<'_> {
    type Error = SinkError;
    fn schema(&mut self) -> &mut Schema {
        &mut self.from
    }
    fn has_column(&mut self, pos: ColumnPos) -> Result<bool, SinkError> {
        // Converted by an interrupted run: a column's records are one batch, and its
        // `Version` record is among them.
        let pos = BedrockColumnPos { dim: self.dim as i32, x: pos.x, z: pos.z };
        Ok(self.resuming && self.db.contains(&pos.key(terrane_bedrock::key::tag::VERSION)))
    }
    fn put_column(&mut self, c: ImportedColumn) -> Result<(), SinkError> {
        Ok(self.put(c)?)
    }
}

/// Converts the Bedrock world folder `src` into a new Java world folder `dst` (see the
/// module docs).
pub fn bedrock_to_java(
    src: &Path,
    dst: &Path,
    progress: &mut dyn FnMut(&ConvertProgress),
) -> Result<ConvertSummary> {
    bedrock_to_java_with(src, dst, &ConvertOptions::new(), progress)
}

/// [`bedrock_to_java`] with [`ConvertOptions`].
pub fn bedrock_to_java_with(
    src: &Path,
    dst: &Path,
    options: &ConvertOptions,
    progress: &mut dyn FnMut(&ConvertProgress),
) -> Result<ConvertSummary> {
    check_level_dat(src, options, |b| crate::level_dat::read_bedrock(b).is_some())?;
    if !crate::bedrock::is_bedrock_world(src) {
        return Err(Refusal::NotABedrockWorld(src.into()).into());
    }
    into_place(src, dst, "bedrock-to-java", |tmp, resumed| {
        let spill_dir = tmp.join(".spill");
        fs::create_dir_all(&spill_dir).map_err(io(&spill_dir))?;
        let mut summary =
            ConvertSummary { table: table().source().to_string(), ..Default::default() };
        let mut from = Schema::new();
        // The spilled chunks' block ids are the target schema's: its names are kept beside
        // them (`SPILL_SCHEMA`, written before the first chunk using a new name), so a resumed
        // run numbers them alike.
        let schema_file = spill_dir.join(SPILL_SCHEMA);
        let mut target = crate::world::default_schema();
        let mut done = Resumed::default();
        if resumed {
            if let Ok(names) = fs::read_to_string(&schema_file) {
                target = Schema::new();
                for n in names.lines() {
                    target.add_block(n, &[])?;
                }
            }
            done = Resumed::scan(tmp, &spill_dir)?;
        }
        let mut names_written = target.blocks().len();
        let mut translator = ChunkTranslator::new(Direction::BedrockToJava, target);
        let mut world_version = None;
        let mut p = ConvertProgress::default();
        let mut db = ReadDb::open(&db_dir(src)?)?;
        summary.damaged.extend(db.notes().iter().cloned());
        let (mut local_player, mut other_players) = (None, Vec::new());
        let r = read_db(
            &mut db,
            |raw| {
                let mut step = || -> Result<()> {
                    if !(0..=2).contains(&raw.pos.dim) {
                        return Ok(());
                    }
                    let dim = raw.pos.dim as u64;
                    let key = (dim, raw.pos.x >> 5, raw.pos.z >> 5);
                    if done.columns.contains(&(dim, raw.pos.x, raw.pos.z))
                        || done.regions.contains(&key)
                    {
                        summary.columns_resumed += 1;
                        return Ok(());
                    }
                    if let Some(stage) = raw.unfinished_stage() {
                        *summary.unfinished.entry(stage.to_string()).or_default() += 1;
                        return Ok(());
                    }
                    let v = *world_version.get_or_insert_with(|| {
                        first_block_version(&raw).unwrap_or(crate::bedrock::NATIVE_BLOCK_VERSION)
                    });
                    translator.set_bedrock_version(v);
                    let c = column_to_terrane(&raw, &mut from, v)?;
                    summary.damaged.extend(
                        c.damaged
                            .iter()
                            .map(|d| format!("column {},{}: {d}", raw.pos.x, raw.pos.z)),
                    );
                    let legacy = raw
                        .records
                        .iter()
                        .find(|(t, _)| *t == terrane_bedrock::key::tag::ENTITY)
                        .map(|(_, v)| v.as_slice());
                    let entities = crate::convert_entities::bedrock_to_java_entities(
                        c.entities.iter().map(|(_, b)| b.as_slice()),
                        legacy,
                        &mut summary.entities,
                    )?;
                    let block_entities = raw
                        .records
                        .iter()
                        .find(|(t, _)| *t == terrane_bedrock::key::tag::BLOCK_ENTITY)
                        .map(|(_, v)| {
                            crate::convert_block_entities::bedrock_record_to_java(
                                v,
                                &c.chunks,
                                &from,
                                &mut summary.block_entities,
                            )
                        })
                        .unwrap_or_default();
                    let path = spill_dir.join(format!("{}.{}.{}", key.0, key.1, key.2));
                    let mut buf = spill_frame_start(raw.pos.x, raw.pos.z);
                    buf.extend_from_slice(&(c.chunks.len() as u32).to_le_bytes());
                    for (y, bytes) in &c.chunks {
                        let mut t = translator.chunk(bytes, &from)?;
                        let states = block_entities.states_in(*y);
                        if !states.is_empty() {
                            t = translator.restate(&t, &states)?;
                        }
                        buf.extend_from_slice(&y.to_le_bytes());
                        buf.extend_from_slice(&(t.len() as u32).to_le_bytes());
                        buf.extend_from_slice(&t);
                    }
                    // The column's record: a fresh one holding the biomes of its Data3D.
                    let biomes = raw
                        .records
                        .iter()
                        .find(|(t, _)| *t == terrane_bedrock::key::tag::DATA_3D)
                        .and_then(|(_, v)| match Data3D::decode(v) {
                            Ok(d) => Some(d),
                            Err(e) => {
                                summary.damaged.push(format!(
                                    "column {},{}: {e} (plains written)",
                                    raw.pos.x, raw.pos.z
                                ));
                                None
                            }
                        });
                    let mut record = ColumnRecord::fresh(JAVA_DATA_VERSION);
                    record.extra_block_entities = block_entities.compounds;
                    record.orphan_entities = entities.iter().map(|(u, _)| *u).collect();
                    if let Some(d) = biomes {
                        // Every section Data3D covers keeps its biomes, the all-air ones too
                        // (a conversion writes no all-air sub-chunk; the sky above a biome is
                        // still that biome in Java).
                        let mut ys: Vec<i64> = c.chunks.iter().map(|(y, _)| *y).collect();
                        ys.extend(crate::convert_biomes::java_section_range(dim));
                        ys.sort_unstable();
                        ys.dedup();
                        let secs = crate::convert_biomes::data3d_to_java(
                            dim,
                            &d,
                            ys,
                            &mut summary.biomes_approximated,
                        );
                        record
                            .rest
                            .insert("sections", crate::convert_biomes::java_section_list(&secs));
                    } else {
                        summary.columns_without_biomes += 1;
                    }
                    let record = record
                        .encode_with((!entities.is_empty()).then_some(JAVA_DATA_VERSION))
                        .map_err(|e| Error::Inconsistent(format!("a Java column record: {e}")))?;
                    buf.extend_from_slice(&(record.len() as u32).to_le_bytes());
                    buf.extend_from_slice(&record);
                    buf.extend_from_slice(&(entities.len() as u32).to_le_bytes());
                    for (uuid, nbt) in &entities {
                        buf.extend_from_slice(uuid);
                        buf.extend_from_slice(&(nbt.len() as u32).to_le_bytes());
                        buf.extend_from_slice(nbt);
                    }
                    spill_frame_end(&mut buf)?;
                    if translator.schema().blocks().len() != names_written {
                        let names: Vec<&str> = translator.schema().blocks().names().collect();
                        write_whole(&schema_file, (names.join("\n") + "\n").as_bytes())?;
                        names_written = names.len();
                    }
                    // Appended whole, by a file opened for it: no open files pile up, whatever
                    // the number of regions.
                    fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(&path)
                        .and_then(|mut f| f.write_all(&buf))
                        .map_err(io(&path))?;
                    summary.columns += 1;
                    *summary.per_dimension.entry(dim).or_default() += 1;
                    p.columns_done += 1;
                    progress(&p);
                    Ok(())
                };
                step().map_err(to_bedrock)
            },
            |key, value| {
                if key == LOCAL_PLAYER_KEY {
                    local_player = Some(value.to_vec());
                } else if let Some(id) = key.strip_prefix(PLAYER_SERVER_PREFIX) {
                    other_players.push((String::from_utf8_lossy(id).into_owned(), value.to_vec()));
                }
                Ok(())
            },
        );
        r.map_err(from_bedrock)?;
        nothing_converted(src, &summary)?;
        summary.blocks = translator.report().clone();
        let schema = translator.schema().clone();
        let mut names = spill_files(&spill_dir)?;
        names.sort();
        for path in names {
            let dims = vanilla_dimensions(JavaLayout::Classic);
            let d = spill_key(&path).and_then(|(dim, _, _)| dims.get(dim as usize)).ok_or_else(
                || Error::Inconsistent(format!("{}: not a spill file", path.display())),
            )?;
            let columns = SpillSource::open(&path, schema.clone())?;
            let options = ExportOptions::new().entities_dir(tmp.join(&d.entities));
            terrane_anvil::export_region_dir_with(
                &columns,
                &tmp.join(&d.region),
                &options,
                &mut |_| {},
            )?;
            fs::remove_file(&path).map_err(io(&path))?;
        }
        fs::remove_dir_all(&spill_dir).map_err(io(&spill_dir))?;
        let level_dat = fs::read(src.join("level.dat")).ok();
        let shared = level_dat.as_deref().and_then(crate::level_dat::read_bedrock);
        if level_dat.is_some() && shared.is_none() {
            summary.damaged.insert(0, LEVEL_DAT_DAMAGED.to_string());
        }
        let shared = shared.unwrap_or_default();
        let player = local_player.and_then(|v| match Reader::little_endian(&v).root_compound() {
            Ok(c) => terrane_bedrock::player::bedrock_to_java(&c, &mut summary.entities),
            Err(_) => {
                *summary.entities.left.entry("(damaged ~local_player)".into()).or_default() += 1;
                None
            }
        });
        summary.players +=
            crate::convert_players::bedrock_to_java(&other_players, tmp, &mut summary.entities)?;
        let level = crate::level_dat::java_level_dat(
            &shared,
            &level_name(src),
            JAVA_DATA_VERSION,
            "1.21.11",
            player,
        );
        write_whole(&tmp.join("level.dat"), &level)?;
        summary.bytes_out = crate::world::dir_bytes(tmp);
        Ok(summary)
    })
}

/// The file beside the spill files that holds the target schema's block names, one per
/// line, in id order.
const SPILL_SCHEMA: &str = "schema.txt";

/// The spill files of `spill_dir` (named `DIM.RX.RZ`).
fn spill_files(spill_dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for e in fs::read_dir(spill_dir).map_err(io(spill_dir))? {
        let p = e.map_err(io(spill_dir))?.path();
        // `schema.txt`, and what a kill inside its rewrite left (`write_whole`'s temporary
        // file), are not spill files.
        if spill_key(&p).is_some() {
            out.push(p);
        }
    }
    Ok(out)
}

/// What an interrupted Bedrock → Java run had done: the columns in its spill files, and the
/// regions it had written (their spill file gone).
#[derive(Default)]
struct Resumed {
    columns: HashSet<(u64, i32, i32)>,
    regions: HashSet<(u64, i32, i32)>,
}

impl Resumed {
    fn scan(tmp: &Path, spill_dir: &Path) -> Result<Resumed> {
        let mut r = Resumed::default();
        let mut spilled = HashSet::new();
        for path in spill_files(spill_dir)? {
            let Some(key) = spill_key(&path) else { continue };
            spilled.insert(key);
            // A crash may have cut the last column short: the file keeps the whole ones.
            let (columns, whole) = spill_index(&path, Check::Frames)?;
            let f = fs::OpenOptions::new().write(true).open(&path).map_err(io(&path))?;
            f.set_len(whole).map_err(io(&path))?;
            r.columns.extend(columns.into_iter().map(|(p, _)| (key.0, p.x, p.z)));
        }
        for (dim, d) in vanilla_dimensions(JavaLayout::Classic).iter().enumerate() {
            let dir = tmp.join(&d.region);
            for (x, z, _) in terrane_anvil::region::list_regions(&dir).unwrap_or_default() {
                if !spilled.contains(&(dim as u64, x, z)) {
                    r.regions.insert((dim as u64, x, z));
                }
            }
        }
        Ok(r)
    }
}

/// The dimension and region of a spill file's name (`DIM.RX.RZ`).
fn spill_key(path: &Path) -> Option<(u64, i32, i32)> {
    let name = path.file_name()?.to_str()?;
    let mut it = name.split('.');
    let key = (it.next()?.parse().ok()?, it.next()?.parse().ok()?, it.next()?.parse().ok()?);
    it.next().is_none().then_some(key)
}

/// The bytes in front of a spilled column's body (`docs/format/convert-spill.md`): its
/// length and CRC-32C, filled in by [`spill_frame_end`], then the column's position.
const SPILL_FRAME_HEAD: usize = 16;

/// A spilled column's frame, its position written and its length and checksum to come.
fn spill_frame_start(x: i32, z: i32) -> Vec<u8> {
    let mut buf = vec![0u8; 8];
    buf.extend_from_slice(&x.to_le_bytes());
    buf.extend_from_slice(&z.to_le_bytes());
    buf
}

/// Fills in the length and CRC-32C (of everything after them) of the frame in `buf`.
fn spill_frame_end(buf: &mut [u8]) -> Result<()> {
    let len = u32::try_from(buf.len() - 8)
        .map_err(|_| Error::Inconsistent("a spilled column of 4 GiB or more".into()))?;
    let crc = crc32c::crc32c(&buf[8..]);
    buf[..4].copy_from_slice(&len.to_le_bytes());
    buf[4..8].copy_from_slice(&crc.to_le_bytes());
    Ok(())
}

/// How much of a spill file [`spill_index`] checks.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Each frame's length against the file's, reading its head only (the file this run
    /// wrote; each column's checksum is checked when it is read).
    Lengths,
    /// Each frame read whole: its checksum, and its position in the file's region (a file
    /// an earlier run left, where a crash may have left anything after the last whole frame).
    Frames,
}

/// The whole columns of a spill file, each with where it starts, and the length of that
/// whole part: it ends at the first frame that runs past the end of the file or, with
/// [`Check::Frames`], whose checksum or position is wrong.
fn spill_index(path: &Path, check: Check) -> Result<(Vec<(ColumnPos, u64)>, u64)> {
    let region = spill_key(path).map(|(_, rx, rz)| (rx, rz));
    let f = fs::File::open(path).map_err(io(path))?;
    let len = f.metadata().map_err(io(path))?.len();
    let mut r = BufReader::new(f);
    let (mut at, mut out, mut body) = (0u64, Vec::new(), Vec::new());
    while len - at >= SPILL_FRAME_HEAD as u64 {
        let mut head = [0u8; SPILL_FRAME_HEAD];
        r.read_exact(&mut head).map_err(io(path))?;
        let word = |i: usize| [head[i], head[i + 1], head[i + 2], head[i + 3]];
        let (size, crc) = (u32::from_le_bytes(word(0)), u32::from_le_bytes(word(4)));
        let pos = ColumnPos::new(i32::from_le_bytes(word(8)), i32::from_le_bytes(word(12)));
        // The position, and at least the three counts of a column without chunks.
        if size < 8 + 12 || at + 8 + u64::from(size) > len {
            break;
        }
        let rest = u64::from(size) - 8;
        if check == Check::Frames {
            body.resize(rest as usize, 0);
            r.read_exact(&mut body).map_err(io(path))?;
            let mut c = crc32c::crc32c(&head[8..]);
            c = crc32c::crc32c_append(c, &body);
            if c != crc || region != Some((pos.x >> 5, pos.z >> 5)) {
                break;
            }
        } else {
            r.seek_relative(rest as i64).map_err(io(path))?;
        }
        out.push((pos, at));
        at += 8 + u64::from(size);
    }
    Ok((out, at))
}

/// Reads the spilled column at the reader's position (`docs/format/convert-spill.md`),
/// checking its checksum: its position, the chunk count (`u32` LE), then each chunk's `y`
/// (`i64` LE), length (`u32` LE) and bytes, then the column record's length (`u32` LE) and
/// bytes, then the entity count (`u32` LE) and each entity's UUID (16 bytes), length
/// (`u32` LE) and NBT.
fn read_spilled_column(r: &mut impl Read, path: &Path) -> Result<ImportedColumn> {
    let damaged = |what: &str| {
        Error::Inconsistent(format!(
            "{}: a spilled column {what}; run the conversion again",
            path.display()
        ))
    };
    let mut head = [0u8; 8];
    r.read_exact(&mut head).map_err(io(path))?;
    let size = u32::from_le_bytes([head[0], head[1], head[2], head[3]]) as usize;
    let crc = u32::from_le_bytes([head[4], head[5], head[6], head[7]]);
    let mut frame = vec![0u8; size];
    r.read_exact(&mut frame).map_err(io(path))?;
    if crc32c::crc32c(&frame) != crc {
        return Err(damaged("does not match its checksum"));
    }
    let mut b: &[u8] = &frame;
    let mut take = |n: usize| -> Result<&[u8]> {
        if b.len() < n {
            return Err(damaged("ends early"));
        }
        let (h, t) = b.split_at(n);
        b = t;
        Ok(h)
    };
    fn word(b: &[u8]) -> u32 {
        u32::from_le_bytes([b[0], b[1], b[2], b[3]])
    }
    let x = word(take(4)?) as i32;
    let z = word(take(4)?) as i32;
    let n = word(take(4)?);
    let mut chunks = Vec::with_capacity(n.min(64) as usize);
    for _ in 0..n {
        let y = i64::from_le_bytes(take(8)?.try_into().unwrap_or_default());
        let len = word(take(4)?) as usize;
        chunks.push((y, take(len)?.to_vec()));
    }
    let len = word(take(4)?) as usize;
    let record = take(len)?.to_vec();
    let n = word(take(4)?);
    let mut entities = Vec::with_capacity(n.min(256) as usize);
    for _ in 0..n {
        let uuid: [u8; 16] = take(16)?.try_into().unwrap_or_default();
        let len = word(take(4)?) as usize;
        entities.push((uuid, take(len)?.to_vec()));
    }
    Ok(ImportedColumn { pos: ColumnPos::new(x, z), chunks, entities, record })
}

/// One region's spill file as terrane-anvil's export source: each column read from the file
/// when the exporter asks for it, so that a region's columns are never all in memory.
struct SpillSource {
    path: PathBuf,
    file: fs::File,
    schema: Schema,
    /// Where each column starts in the file.
    offsets: BTreeMap<ColumnPos, u64>,
}

impl SpillSource {
    fn open(path: &Path, schema: Schema) -> Result<SpillSource> {
        let file = fs::File::open(path).map_err(io(path))?;
        let offsets = spill_index(path, Check::Lengths)?.0.into_iter().collect();
        Ok(SpillSource { path: path.to_path_buf(), file, schema, offsets })
    }
}

impl terrane_anvil::ExportSource for SpillSource {
    type Error = Error;
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn columns(&self) -> Result<Vec<ColumnPos>> {
        Ok(self.offsets.keys().copied().collect())
    }
    fn column(&self, pos: ColumnPos) -> Result<Option<ImportedColumn>> {
        use std::io::{Seek, SeekFrom};
        let Some(&at) = self.offsets.get(&pos) else { return Ok(None) };
        let mut f = &self.file;
        f.seek(SeekFrom::Start(at)).map_err(io(&self.path))?;
        read_spilled_column(&mut BufReader::new(f), &self.path).map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A spilled column's frame at (`x`, `z`) without chunks or entities.
    fn frame(x: i32, z: i32, record: &[u8]) -> Vec<u8> {
        let mut buf = spill_frame_start(x, z);
        buf.extend_from_slice(&0u32.to_le_bytes());
        buf.extend_from_slice(&(record.len() as u32).to_le_bytes());
        buf.extend_from_slice(record);
        buf.extend_from_slice(&0u32.to_le_bytes());
        spill_frame_end(&mut buf).unwrap();
        buf
    }

    /// A spill file of region (1, -1) holding `frames`, indexed both ways.
    fn index(frames: &[&[u8]]) -> [(Vec<i32>, u64); 2] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("0.1.-1");
        fs::write(&path, frames.concat()).unwrap();
        [Check::Lengths, Check::Frames].map(|c| {
            let (cols, whole) = spill_index(&path, c).unwrap();
            (cols.iter().map(|(p, _)| p.x).collect(), whole)
        })
    }

    #[test]
    fn a_spill_file_is_whole_up_to_the_first_frame_that_is_cut_damaged_or_astray() {
        let a = frame(32, -1, b"one");
        let b = frame(33, -2, b"two");
        let ab = (a.len() + b.len()) as u64;
        // Whole frames.
        assert_eq!(index(&[&a, &b]), [(vec![32, 33], ab), (vec![32, 33], ab)]);
        // A frame cut short (a kill inside the append).
        let cut = &b[..b.len() - 1];
        assert_eq!(index(&[&a, cut]), [(vec![32], a.len() as u64), (vec![32], a.len() as u64)]);
        // A damaged byte: only the checked index sees it (and reading the column refuses it).
        let mut bad = b.clone();
        *bad.last_mut().unwrap() ^= 1;
        assert_eq!(index(&[&a, &bad])[1], (vec![32], a.len() as u64));
        let err = read_spilled_column(&mut &bad[..], Path::new("0.1.-1")).unwrap_err();
        assert!(err.to_string().contains("checksum"), "{err}");
        // A column of another region (x 64 is region 2).
        let stray = frame(64, -1, b"three");
        assert_eq!(index(&[&a, &stray, &b])[1], (vec![32], a.len() as u64));
        // Zeros where a power loss left a length and nothing written.
        let zeros = [0u8; 64];
        assert_eq!(index(&[&a, &zeros]), [(vec![32], a.len() as u64), (vec![32], a.len() as u64)]);
        // What is read is what was framed.
        let col = read_spilled_column(&mut &b[..], Path::new("0.1.-1")).unwrap();
        assert_eq!((col.pos, col.record), (ColumnPos::new(33, -2), b"two".to_vec()));
    }

    #[test]
    fn only_names_of_a_region_are_spill_files() {
        let dir = tempfile::tempdir().unwrap();
        for n in ["0.1.-1", "2.-3.4", SPILL_SCHEMA, "schema.txt.terrane-tmp", "0.1"] {
            fs::write(dir.path().join(n), b"").unwrap();
        }
        let mut names: Vec<String> = spill_files(dir.path())
            .unwrap()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["0.1.-1", "2.-3.4"]);
    }
}
