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
//!   exporter. At most one region's columns (1,024) are in memory.
//!
//! Memory therefore does not grow with the number of columns (`docs/BENCHMARKS.md`, "terrane
//! convert"). The destination must be missing or an empty folder; the world is written under
//! a temporary name beside it and renamed into place once whole, so a failed conversion
//! leaves nothing behind.
//!
//! What is translated, and what is reported instead ([`ConvertSummary`]):
//! - block states, with the waterlogged layer, by the table's rules: every approximated or
//!   dropped state is counted by name ([`TranslationReport`]);
//! - the Overworld, the Nether and the End (Java's other dimensions are counted as skipped);
//! - the world's name, into a new `level.dat` (Java → Bedrock);
//! - block entities, entities, biomes, light and the rest of each column are not translated:
//!   the summary counts the block entities and entities left behind. The game computes
//!   biomes-less columns' biomes and light anew.
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

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::io::{BufReader, Read, Write};
use std::path::{Path, PathBuf};

use terrane_anvil::convert::ColumnRecord;
use terrane_anvil::{
    ExportOptions, ImportOptions, ImportSink, ImportedColumn, MemColumns, StoredColumn,
};
use terrane_bedrock::convert::{column_to_terrane, first_block_version, terrane_to_column};
use terrane_bedrock::db::{ReadDb, WriteDb};
use terrane_bedrock::key::BedrockColumnPos;
use terrane_bedrock::read::{db_dir, read_db};
use terrane_bedrock::translate::{ChunkTranslator, Direction, TranslationReport, table};
use terrane_chunk::Schema;
use terrane_section::ColumnPos;

use crate::error::io;
use crate::export::{Found, inspect, write_whole};
use crate::java::{DIMENSIONS, has_region_files};
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
    /// Columns per dimension (0 Overworld, 1 Nether, 2 End).
    pub per_dimension: BTreeMap<u64, u64>,
    /// Block states approximated or dropped, by source state (cells).
    pub blocks: TranslationReport,
    /// Entities not converted (their data is in the source edition's form).
    pub entities_left: u64,
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
    let holds = match inspect(dst)? {
        Found::Nothing => return Ok(()),
        Found::JavaWorld => "a Java world",
        Found::BedrockWorld => "a Bedrock world",
        Found::TerraneWorld => "a terrane world",
        Found::File => "a file",
        Found::RegionFiles | Found::Other => "files",
    };
    Err(Error::Refused(format!(
        "{} already holds {holds}; nothing was written: a conversion writes a new world, so \
         give a folder that does not exist yet (or an empty one)",
        dst.display()
    )))
}

/// Writes through `write` into a temporary folder beside `dst`, then renames it into place;
/// on failure the temporary folder is removed.
fn into_place<T>(dst: &Path, write: impl FnOnce(&Path) -> Result<T>) -> Result<T> {
    check_new(dst)?;
    let name = dst
        .file_name()
        .ok_or_else(|| Error::Refused(format!("{} names no folder", dst.display())))?;
    let tmp = dst.with_file_name(format!(".{}.terrane-convert", name.to_string_lossy()));
    let _ = fs::remove_dir_all(&tmp);
    fs::create_dir_all(&tmp).map_err(io(&tmp))?;
    let r = write(&tmp).and_then(|v| {
        if dst.exists() {
            fs::remove_dir(dst).map_err(io(dst))?; // an empty folder (checked above)
        }
        fs::rename(&tmp, dst).map_err(io(dst))?;
        Ok(v)
    });
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
    let found: Vec<_> =
        DIMENSIONS.into_iter().filter(|d| has_region_files(&src.join(d.region))).collect();
    if found.is_empty() {
        return Err(Error::Refused(format!(
            "{} holds no region files: not a Java world folder (region/, DIM-1/region, \
             DIM1/region)",
            src.display()
        )));
    }
    into_place(dst, |tmp| {
        let mut db = WriteDb::create(&tmp.join("db"))?;
        let mut sink = BedrockSink {
            db: &mut db,
            dim: 0,
            from: crate::world::default_schema(),
            translator: ChunkTranslator::new(Direction::JavaToBedrock, Schema::new()),
            summary: ConvertSummary { table: table().source().to_string(), ..Default::default() },
            error: None,
        };
        let mut p = ConvertProgress::default();
        let mut done_before = 0;
        for d in &found {
            sink.dim = d.id;
            let mut options = ImportOptions::new();
            let entities = src.join(d.entities);
            if entities.is_dir() {
                options = options.entities_dir(entities);
            }
            let r = terrane_anvil::import_region_dir_with(
                &src.join(d.region),
                &mut sink,
                &options,
                &mut |ap| {
                    p.columns_done = done_before + ap.columns_done;
                    p.columns_total = Some(done_before + ap.columns_total);
                    progress(&p);
                },
            );
            let s = match (r, sink.error.take()) {
                (_, Some(e)) => return Err(e),
                (Err(e), None) => return Err(e.into()),
                (Ok(s), None) => s,
            };
            done_before = p.columns_done;
            sink.summary.damaged.extend(s.damaged.iter().map(|d| d.to_string()));
        }
        let mut summary = sink.summary;
        summary.blocks = sink.translator.report().clone();
        summary.skipped_dimensions = other_java_dimensions(src);
        db.finish()?;
        let name = level_name(src);
        write_whole(&tmp.join("level.dat"), &crate::bedrock::fresh_level_dat_named(&name))?;
        write_whole(&tmp.join("levelname.txt"), name.as_bytes())?;
        summary.bytes_out = crate::world::dir_bytes(tmp);
        Ok(summary)
    })
}

/// The name a converted world takes: the source folder's.
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
            let known = DIMENSIONS.iter().any(|d| d.region.split('/').next() == Some(&name));
            (name.starts_with("DIM") && !known && has_region_files(&e.path().join("region")))
                .then(|| format!("{name}/region"))
        })
        .collect();
    out.sort();
    out
}

/// terrane-anvil's importer into a Bedrock database: each column translated and written.
struct BedrockSink<'a> {
    db: &'a mut WriteDb,
    dim: u64,
    /// The Java states the importer registers.
    from: Schema,
    translator: ChunkTranslator,
    summary: ConvertSummary,
    error: Option<Error>,
}

impl BedrockSink<'_> {
    fn put(&mut self, c: ImportedColumn) -> Result<()> {
        let mut chunks = Vec::with_capacity(c.chunks.len());
        for (y, bytes) in &c.chunks {
            chunks.push((*y, self.translator.chunk(bytes, &self.from)?));
        }
        self.summary.entities_left += c.entities.len() as u64;
        if let Ok(r) = ColumnRecord::decode(&c.record) {
            self.summary.entities_left += r.orphan_entities.len() as u64;
            for b in &r.extra_block_entities {
                let id = match b.get("id") {
                    Some(terrane_nbt::Tag::String(s)) => s.clone(),
                    _ => "?".into(),
                };
                *self.summary.blocks.block_entities.entry(id).or_default() += 1;
            }
        }
        let pos = BedrockColumnPos { dim: self.dim as i32, x: c.pos.x, z: c.pos.z };
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
        self.summary.columns += 1;
        *self.summary.per_dimension.entry(self.dim).or_default() += 1;
        Ok(())
    }
}

/// A sink failure, as text for terrane-anvil's error (the error itself is kept).
#[derive(Debug)]
struct SinkError(String);

impl std::fmt::Display for SinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SinkError {}

impl ImportSink for BedrockSink<'_> {
    type Error = SinkError;
    fn schema(&mut self) -> &mut Schema {
        &mut self.from
    }
    fn has_column(&mut self, _: ColumnPos) -> Result<bool, SinkError> {
        Ok(false)
    }
    fn put_column(&mut self, c: ImportedColumn) -> Result<(), SinkError> {
        self.put(c).map_err(|e| {
            let s = SinkError(e.to_string());
            self.error = Some(e);
            s
        })
    }
}

/// Converts the Bedrock world folder `src` into a new Java world folder `dst` (see the
/// module docs).
pub fn bedrock_to_java(
    src: &Path,
    dst: &Path,
    progress: &mut dyn FnMut(&ConvertProgress),
) -> Result<ConvertSummary> {
    if !crate::bedrock::is_bedrock_world(src) {
        return Err(Error::Refused(format!(
            "{} is not a Bedrock world folder (no db/CURRENT)",
            src.display()
        )));
    }
    into_place(dst, |tmp| {
        let spill_dir = tmp.join(".spill");
        fs::create_dir_all(&spill_dir).map_err(io(&spill_dir))?;
        let mut summary =
            ConvertSummary { table: table().source().to_string(), ..Default::default() };
        let mut from = Schema::new();
        let mut translator =
            ChunkTranslator::new(Direction::BedrockToJava, crate::world::default_schema());
        let mut world_version = None;
        let mut p = ConvertProgress::default();
        let mut db = ReadDb::open(&db_dir(src)?)?;
        summary.damaged.extend(db.notes().iter().cloned());
        let mut failure: Option<Error> = None;
        let r = read_db(
            &mut db,
            |raw| {
                let mut step = || -> Result<()> {
                    if !(0..=2).contains(&raw.pos.dim) {
                        return Ok(());
                    }
                    let v = *world_version.get_or_insert_with(|| {
                        first_block_version(&raw).unwrap_or(crate::bedrock::NATIVE_BLOCK_VERSION)
                    });
                    let c = column_to_terrane(&raw, &mut from, v)?;
                    summary.damaged.extend(
                        c.damaged
                            .iter()
                            .map(|d| format!("column {},{}: {d}", raw.pos.x, raw.pos.z)),
                    );
                    summary.entities_left += c.entities.len() as u64 + c.legacy_entities;
                    if c.block_entities > 0 {
                        *summary
                            .blocks
                            .block_entities
                            .entry("(Bedrock block entities)".into())
                            .or_default() += c.block_entities;
                    }
                    let dim = raw.pos.dim as u64;
                    let key = (dim, raw.pos.x >> 5, raw.pos.z >> 5);
                    let path = spill_dir.join(format!("{}.{}.{}", key.0, key.1, key.2));
                    let mut buf = Vec::new();
                    buf.extend_from_slice(&raw.pos.x.to_le_bytes());
                    buf.extend_from_slice(&raw.pos.z.to_le_bytes());
                    buf.extend_from_slice(&(c.chunks.len() as u32).to_le_bytes());
                    for (y, bytes) in &c.chunks {
                        let t = translator.chunk(bytes, &from)?;
                        buf.extend_from_slice(&y.to_le_bytes());
                        buf.extend_from_slice(&(t.len() as u32).to_le_bytes());
                        buf.extend_from_slice(&t);
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
                step().map_err(|e| {
                    let s = terrane_bedrock::Error::SubChunk(e.to_string());
                    failure = Some(e);
                    s
                })
            },
            |_, _| Ok(()),
        );
        if let Some(e) = failure {
            return Err(e);
        }
        r?;
        summary.blocks = translator.report().clone();
        let schema = translator.schema().clone();
        let record = ColumnRecord::fresh(JAVA_DATA_VERSION)
            .encode()
            .map_err(|e| Error::Inconsistent(format!("a fresh Java column record: {e}")))?;
        let mut names: Vec<PathBuf> = fs::read_dir(&spill_dir)
            .map_err(io(&spill_dir))?
            .map(|e| e.map(|e| e.path()))
            .collect::<std::io::Result<_>>()
            .map_err(io(&spill_dir))?;
        names.sort();
        for path in names {
            let dim: u64 = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.split('.').next())
                .and_then(|d| d.parse().ok())
                .ok_or_else(|| {
                    Error::Inconsistent(format!("{}: not a spill file", path.display()))
                })?;
            let d = DIMENSIONS[dim as usize];
            let mut columns = MemColumns { schema: schema.clone(), ..MemColumns::new() };
            for (pos, chunks) in read_spill(&path)? {
                columns.columns.insert(pos, StoredColumn { chunks, record: record.clone() });
            }
            let options = ExportOptions::new();
            terrane_anvil::export_region_dir_with(
                &columns,
                &tmp.join(d.region),
                &options,
                &mut |_| {},
            )?;
            fs::remove_file(&path).map_err(io(&path))?;
        }
        fs::remove_dir_all(&spill_dir).map_err(io(&spill_dir))?;
        summary.bytes_out = crate::world::dir_bytes(tmp);
        Ok(summary)
    })
}

/// A column's chunks: `(y, bytes)`.
type Chunks = Vec<(i64, Vec<u8>)>;

/// One region's spilled columns: `x`, `z` (`i32` LE), the chunk count (`u32` LE), then each
/// chunk's `y` (`i64` LE), length (`u32` LE) and bytes.
fn read_spill(path: &Path) -> Result<Vec<(ColumnPos, Chunks)>> {
    let mut r = BufReader::new(fs::File::open(path).map_err(io(path))?);
    let mut out = Vec::new();
    let mut n4 = [0u8; 4];
    loop {
        match r.read_exact(&mut n4) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(io(path)(e)),
        }
        let x = i32::from_le_bytes(n4);
        let read4 = |r: &mut BufReader<fs::File>| -> Result<[u8; 4]> {
            let mut b = [0u8; 4];
            r.read_exact(&mut b).map_err(io(path))?;
            Ok(b)
        };
        let z = i32::from_le_bytes(read4(&mut r)?);
        let n = u32::from_le_bytes(read4(&mut r)?);
        let mut chunks = Vec::with_capacity(n as usize);
        for _ in 0..n {
            let mut y = [0u8; 8];
            r.read_exact(&mut y).map_err(io(path))?;
            let len = u32::from_le_bytes(read4(&mut r)?) as usize;
            let mut bytes = vec![0u8; len];
            r.read_exact(&mut bytes).map_err(io(path))?;
            chunks.push((i64::from_le_bytes(y), bytes));
        }
        out.push((ColumnPos::new(x, z), chunks));
    }
    Ok(out)
}
