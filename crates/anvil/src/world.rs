//! Whole region folders in and out: the library side of `terrane import anvil` and
//! `terrane export anvil`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use terrane_chunk::{Schema, Uuid};
use terrane_section::ColumnPos;

use crate::column::{Column, Layout};
use crate::error::{ChunkError, Error, Result};
use crate::linear::{self, LinearChunk, LinearLayout};
use crate::mapping::{ColumnChunks, ImportedColumn, column_to_terrane_sorted, terrane_to_column};
use crate::region::{self, Compression, RegionFile, RegionWriter};

/// Where an import writes: any store (an in-memory one is [`MemColumns`]).
///
/// The importer calls [`has_column`](Self::has_column) before decompressing a chunk (so a
/// re-run skips finished columns: imports are resumable), grows [`schema`](Self::schema)'s
/// block registry, then hands each converted column to [`put_column`](Self::put_column).
/// A persistent sink must store the schema no later than the first column that uses its new
/// entries (e.g. in the same batch).
pub trait ImportSink {
    /// The sink's error.
    type Error: std::error::Error + Send + Sync + 'static;
    /// The world schema the import grows.
    fn schema(&mut self) -> &mut Schema;
    /// Whether the column is already imported.
    fn has_column(&mut self, pos: ColumnPos) -> Result<bool, Self::Error>;
    /// Stores one converted column (chunks, entity records, column record).
    fn put_column(&mut self, column: ImportedColumn) -> Result<(), Self::Error>;
    /// Stores one converted column whose chunks are not encoded yet, and returns the bytes
    /// it stored (the import's `bytes_out`). The importer calls this one; the default encodes
    /// the chunks with [`schema`](Self::schema) and calls [`put_column`](Self::put_column).
    fn put_column_chunks(&mut self, column: ColumnChunks) -> Result<u64, Self::Error> {
        let column = column.encode(self.schema());
        let stored = column.encoded_len() as u64;
        self.put_column(column)?;
        Ok(stored)
    }
    /// Called after each region file; a persistent sink may flush here.
    fn region_done(&mut self, _region_x: i32, _region_z: i32) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// Where an export reads from.
pub trait ExportSource {
    /// The source's error.
    type Error: std::error::Error + Send + Sync + 'static;
    /// The world schema (block names of the chunks' global ids).
    fn schema(&self) -> &Schema;
    /// Every column to export.
    fn columns(&self) -> Result<Vec<ColumnPos>, Self::Error>;
    /// One column with its chunks, the records of the entities they reference, and its
    /// column record.
    fn column(&self, pos: ColumnPos) -> Result<Option<ImportedColumn>, Self::Error>;
}

/// An in-memory world: schema, columns, entity table. Implements both [`ImportSink`] and
/// [`ExportSource`].
#[derive(Clone, Debug, Default)]
pub struct MemColumns {
    /// The schema.
    pub schema: Schema,
    /// Columns.
    pub columns: BTreeMap<ColumnPos, StoredColumn>,
    /// Entity table: UUID → entity NBT.
    pub entities: HashMap<Uuid, Vec<u8>>,
}

/// One column of a [`MemColumns`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoredColumn {
    /// Encoded chunks by y, ascending.
    pub chunks: Vec<(i64, Vec<u8>)>,
    /// The encoded column record.
    pub record: Vec<u8>,
}

impl MemColumns {
    /// An empty world.
    pub fn new() -> Self {
        Self::default()
    }
}

impl ImportSink for MemColumns {
    type Error = std::convert::Infallible;
    fn schema(&mut self) -> &mut Schema {
        &mut self.schema
    }
    fn has_column(&mut self, pos: ColumnPos) -> Result<bool, Self::Error> {
        Ok(self.columns.contains_key(&pos))
    }
    fn put_column(&mut self, c: ImportedColumn) -> Result<(), Self::Error> {
        for (u, b) in c.entities {
            self.entities.insert(u, b);
        }
        self.columns.insert(c.pos, StoredColumn { chunks: c.chunks, record: c.record });
        Ok(())
    }
}

/// Returned by [`MemColumns`]'s [`ExportSource::column`] when a chunk references an entity
/// missing from the entity table.
#[derive(Debug, thiserror::Error)]
#[error("entity {0:02x?} referenced by a chunk is missing from the entity table")]
pub struct MissingEntity(pub Uuid);

impl ExportSource for MemColumns {
    type Error = MissingEntity;
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn columns(&self) -> Result<Vec<ColumnPos>, Self::Error> {
        Ok(self.columns.keys().copied().collect())
    }
    fn column(&self, pos: ColumnPos) -> Result<Option<ImportedColumn>, Self::Error> {
        let Some(StoredColumn { chunks, record }) = self.columns.get(&pos) else { return Ok(None) };
        let mut uuids: Vec<Uuid> = Vec::new();
        for (_, bytes) in chunks {
            if let Ok(v) = terrane_chunk::ChunkView::parse(bytes) {
                uuids.extend_from_slice(v.entities());
            }
        }
        if let Ok(r) = crate::mapping::ColumnRecord::decode(record) {
            uuids.extend(r.orphan_entities);
        }
        let mut entities = Vec::with_capacity(uuids.len());
        for u in uuids {
            let b = self.entities.get(&u).ok_or(MissingEntity(u))?;
            entities.push((u, b.clone()));
        }
        Ok(Some(ImportedColumn { pos, chunks: chunks.clone(), entities, record: record.clone() }))
    }
}

/// Progress of an import or export, reported after every column.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Progress {
    /// Region files finished.
    pub regions_done: usize,
    /// Region files in total.
    pub regions_total: usize,
    /// Columns handled so far (converted, skipped or damaged).
    pub columns_done: u64,
    /// Columns in total (present location entries of every region).
    pub columns_total: u64,
    /// Bytes read so far (region files, `.mcc` files / encoded terrane data).
    pub bytes_in: u64,
    /// Bytes written so far (encoded terrane data / region files).
    pub bytes_out: u64,
    /// The region being processed.
    pub region: (i32, i32),
}

/// A chunk that could not be imported, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DamagedChunk {
    /// The region file.
    pub file: PathBuf,
    /// Location-table index (`local_x + 32 * local_z`), `None` for the whole file.
    pub index: Option<usize>,
    /// Column position (when the index is known).
    pub pos: Option<ColumnPos>,
    /// The reason.
    pub error: ChunkError,
}

impl std::fmt::Display for DamagedChunk {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.index, self.pos) {
            (Some(i), Some(p)) => {
                write!(f, "{} chunk #{i} ({}, {}): {}", self.file.display(), p.x, p.z, self.error)
            }
            _ => write!(f, "{}: {}", self.file.display(), self.error),
        }
    }
}

/// What an import did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ImportSummary {
    /// Region files read.
    pub regions: usize,
    /// Columns converted and stored.
    pub columns: u64,
    /// Columns skipped because the sink already had them (resumed import).
    pub columns_skipped: u64,
    /// Cubic chunks stored.
    pub chunks: u64,
    /// Non-air blocks stored.
    pub blocks: u64,
    /// Block entities carried.
    pub block_entities: u64,
    /// Entities carried.
    pub entities: u64,
    /// Bytes of the region (and `.mcc`) files read.
    pub bytes_in: u64,
    /// Bytes of encoded terrane data produced (chunks, entity records, column records).
    pub bytes_out: u64,
    /// Damaged chunks and files, skipped.
    pub damaged: Vec<DamagedChunk>,
    /// The newest `DataVersion` among the columns imported (`None` when none had one).
    pub data_version: Option<i32>,
}

impl ImportSummary {
    /// Adds `other`'s counts and damaged chunks to these (the totals of several folders);
    /// `data_version` becomes the newer of the two.
    pub fn add(&mut self, other: &ImportSummary) {
        self.regions += other.regions;
        self.columns += other.columns;
        self.columns_skipped += other.columns_skipped;
        self.chunks += other.chunks;
        self.blocks += other.blocks;
        self.block_entities += other.block_entities;
        self.entities += other.entities;
        self.bytes_in += other.bytes_in;
        self.bytes_out += other.bytes_out;
        self.damaged.extend(other.damaged.iter().cloned());
        self.data_version = self.data_version.max(other.data_version);
    }
}

/// Import options (builder; defaults in [`ImportOptions::new`]).
#[derive(Clone, Debug)]
pub struct ImportOptions {
    max_decompressed: usize,
    entities_dir: Option<PathBuf>,
    threads: usize,
}

impl Default for ImportOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl ImportOptions {
    /// Defaults: decompressed chunks up to [`region::DEFAULT_MAX_DECOMPRESSED`] (64 MiB), no
    /// `entities/` folder, as many threads as the machine runs at once
    /// ([`std::thread::available_parallelism`]).
    pub fn new() -> Self {
        ImportOptions {
            max_decompressed: region::DEFAULT_MAX_DECOMPRESSED,
            entities_dir: None,
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }
    /// Threads in all: `n - 1` read and decode columns (inflate, NBT, palettes) while the
    /// calling thread converts them and hands them to the sink, in the region's order (the
    /// output does not depend on `n`); `1` (or `0`) does everything on the calling thread.
    pub fn threads(mut self, n: usize) -> Self {
        self.threads = n.max(1);
        self
    }
    /// Also reads a 1.17+ world's entity regions (`<world>/entities`): each column's entities
    /// are taken from the entity chunk at the same position (default: none).
    pub fn entities_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.entities_dir = Some(dir.into());
        self
    }
    /// Sets the limit on one decompressed chunk; larger chunks are reported as damaged.
    pub fn max_decompressed(mut self, bytes: usize) -> Self {
        self.max_decompressed = bytes;
        self
    }
}

fn sink_err<E: std::error::Error + Send + Sync + 'static>(e: E) -> Error {
    Error::Sink(Box::new(e))
}

/// Imports every `r.X.Z.mca` of `dir` into `sink` with default options. See
/// [`import_region_dir_with`].
pub fn import_region_dir<S: ImportSink>(
    dir: &Path,
    sink: &mut S,
    progress: &mut dyn FnMut(&Progress),
) -> Result<ImportSummary> {
    import_region_dir_with(dir, sink, &ImportOptions::new(), progress)
}

/// Imports every `r.X.Z.mca` of `dir` (with `c.X.Z.mcc` side files) into `sink`.
///
/// Damaged chunks (and region files shorter than their header) are listed in
/// [`ImportSummary::damaged`] and skipped; columns the sink already holds are skipped without
/// being decompressed. Errors only on I/O errors listing or reading the folder's files and
/// on sink errors.
pub fn import_region_dir_with<S: ImportSink>(
    dir: &Path,
    sink: &mut S,
    options: &ImportOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<ImportSummary> {
    let regions = region::list_regions(dir).map_err(|e| Error::io(dir, e))?;
    let mut summary = ImportSummary::default();
    let mut p = Progress { regions_total: regions.len(), ..Progress::default() };
    // First pass: only the location tables, for the totals.
    let mut tables = Vec::with_capacity(regions.len());
    for (_, _, path) in &regions {
        let t = present_entries(path)?;
        p.columns_total += t.len() as u64;
        tables.push(t);
    }
    for ((rx, rz, path), table) in regions.into_iter().zip(tables) {
        // A region whose columns are all in the sink is skipped without reading it.
        let mut all_present = !table.is_empty();
        for &i in &table {
            if !sink.has_column(column_of(rx, rz, i)).map_err(sink_err)? {
                all_present = false;
                break;
            }
        }
        if all_present {
            summary.columns_skipped += table.len() as u64;
            summary.regions += 1;
            p.columns_done += table.len() as u64;
            p.regions_done += 1;
            progress(&p);
            continue;
        }
        // Read a chunk at a time: memory does not grow with the region's size. A Linear file
        // is read whole, as an Anvil region in memory.
        let opened = match open_region(&path) {
            Ok(opened) => opened,
            Err(e) => {
                summary.damaged.push(DamagedChunk { file: path, index: None, pos: None, error: e });
                p.regions_done += 1;
                progress(&p);
                continue;
            }
        };
        let (r, file_len) = opened?;
        let r = r.with_external(rx, rz, dir).with_max_decompressed(options.max_decompressed);
        p.region = (rx, rz);
        p.bytes_in += file_len;
        summary.bytes_in += file_len;
        // The matching entity region (1.17+), when asked for and present.
        let mut ents: Option<(PathBuf, RegionFile)> = None;
        if let Some(edir) = &options.entities_dir {
            let mut epath = edir.join(format!("r.{rx}.{rz}.mca"));
            if !epath.is_file() {
                epath = edir.join(format!("r.{rx}.{rz}.linear"));
            }
            if epath.is_file() {
                let b = std::fs::read(&epath).map_err(|e| Error::io(&epath, e))?;
                summary.bytes_in += b.len() as u64;
                p.bytes_in += b.len() as u64;
                let b = match region::is_linear(&epath) {
                    true => {
                        linear::to_anvil(&b, linear::MAX_DECOMPRESSED).map_err(ChunkError::from)
                    }
                    false => Ok(b),
                };
                match b.and_then(|b| {
                    RegionFile::new(b).map_err(|e| ChunkError::TruncatedRegion(e.0 as u64))
                }) {
                    Ok(er) => {
                        let er = er
                            .with_external(rx, rz, edir)
                            .with_max_decompressed(options.max_decompressed);
                        ents = Some((epath, er));
                    }
                    Err(error) => summary.damaged.push(DamagedChunk {
                        file: epath,
                        index: None,
                        pos: None,
                        error,
                    }),
                }
            }
        }
        // The columns to import; those the sink holds are skipped without being read.
        let mut todo = Vec::new();
        for e in r.entries() {
            if sink.has_column(column_of(rx, rz, e.index)).map_err(sink_err)? {
                summary.columns_skipped += 1;
                p.columns_done += 1;
                progress(&p);
            } else {
                todo.push(e);
            }
        }
        let ents = ents.as_ref().map(|(path, er)| (path.as_path(), er));
        let decode =
            |e: &region::ChunkEntry| decode_column(&r, ents, e, column_of(rx, rz, e.index));
        let mut convert = |d: DecodedColumn| -> Result<()> {
            let e = d.entry;
            let pos = column_of(rx, rz, e.index);
            p.columns_done += 1;
            summary.bytes_in += d.external_bytes;
            p.bytes_in += d.external_bytes;
            let damaged = |error| DamagedChunk {
                file: path.clone(),
                index: Some(e.index),
                pos: Some(pos),
                error,
            };
            if let Some(d) = d.entity_damage {
                summary.damaged.push(d);
            }
            let (col, rest) = match d.column {
                Ok(c) => c,
                Err(err) => {
                    summary.damaged.push(damaged(err));
                    progress(&p);
                    return Ok(());
                }
            };
            let (imp, stats) =
                match column_to_terrane_sorted(&col, &rest, e.timestamp, sink.schema()) {
                    Ok(x) => x,
                    Err(err) => {
                        summary.damaged.push(damaged(ChunkError::Malformed(err.to_string())));
                        progress(&p);
                        return Ok(());
                    }
                };
            let out = sink.put_column_chunks(imp).map_err(sink_err)?;
            summary.columns += 1;
            summary.data_version = summary.data_version.max(col.data_version);
            summary.chunks += stats.chunks;
            summary.blocks += stats.blocks;
            summary.block_entities += stats.block_entities;
            summary.entities += stats.entities;
            summary.bytes_out += out;
            p.bytes_out += out;
            progress(&p);
            Ok(())
        };
        let decoders = options.threads - 1;
        if decoders == 0 || todo.len() < 2 {
            for e in &todo {
                convert(decode(e))?;
            }
        } else {
            // Decoder k takes columns k, k + D, k + 2D...; the calling thread takes their
            // results round-robin, so it converts in the region's order.
            std::thread::scope(|scope| -> Result<()> {
                let mut inbox = Vec::with_capacity(decoders);
                for k in 0..decoders {
                    let (tx, rx) = std::sync::mpsc::sync_channel(4);
                    let (todo, decode) = (&todo, &decode);
                    scope.spawn(move || {
                        for e in todo.iter().skip(k).step_by(decoders) {
                            if tx.send(decode(e)).is_err() {
                                break; // the converting side stopped on an error
                            }
                        }
                    });
                    inbox.push(rx);
                }
                for i in 0..todo.len() {
                    let d = inbox[i % decoders].recv().expect("a decoder thread panicked");
                    convert(d)?;
                }
                Ok(())
            })?;
        }
        sink.region_done(rx, rz).map_err(sink_err)?;
        summary.regions += 1;
        p.regions_done += 1;
        progress(&p);
    }
    Ok(summary)
}

/// What an export did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ExportSummary {
    /// Region files written.
    pub regions: usize,
    /// Columns written.
    pub columns: u64,
    /// Cubic chunks read.
    pub chunks: u64,
    /// `.mcc` side files written.
    pub side_files: usize,
    /// Bytes of terrane data read.
    pub bytes_in: u64,
    /// Bytes of region and side files written.
    pub bytes_out: u64,
    /// Every region file (entity regions included) and side file written, by its final path,
    /// in the order written.
    pub files: Vec<PathBuf>,
}

impl ExportSummary {
    /// Adds `other`'s counts to these (the totals of several folders).
    pub fn add(&mut self, other: &ExportSummary) {
        self.regions += other.regions;
        self.columns += other.columns;
        self.chunks += other.chunks;
        self.side_files += other.side_files;
        self.bytes_in += other.bytes_in;
        self.bytes_out += other.bytes_out;
        self.files.extend(other.files.iter().cloned());
    }
}

/// How an export writes each region: an Anvil file (`r.X.Z.mca`) with its chunks compressed
/// one way, or a Linear file (`r.X.Z.linear`, [`crate::linear`]).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RegionFormat {
    /// Anvil, chunks compressed with this compression.
    Anvil(Compression),
    /// Linear, in this layout, zstd at level 6.
    Linear(LinearLayout),
}

impl Default for RegionFormat {
    /// Anvil with zlib: Minecraft's own.
    fn default() -> Self {
        RegionFormat::Anvil(Compression::Zlib)
    }
}

impl From<Compression> for RegionFormat {
    fn from(c: Compression) -> Self {
        RegionFormat::Anvil(c)
    }
}

/// The zstd level Linear regions are written at.
const LINEAR_LEVEL: i32 = 6;

/// Export options (builder; defaults in [`ExportOptions::new`]).
#[derive(Clone, Debug, Default)]
pub struct ExportOptions {
    entities_dir: Option<PathBuf>,
    format: RegionFormat,
}

impl ExportOptions {
    /// Defaults: no `entities/` folder, Anvil regions with zlib compression.
    pub fn new() -> Self {
        Self::default()
    }
    /// Compresses the chunks of the regions written (and of the entity regions) with
    /// `compression`: zlib (the default, Minecraft's), gzip, LZ4 or none, as a server's
    /// `region-file-compression` setting chooses.
    pub fn compression(mut self, compression: Compression) -> Self {
        self.format = RegionFormat::Anvil(compression);
        self
    }
    /// Writes the regions (and the entity regions) in `format`: Anvil with a compression, or
    /// Linear (default: Anvil, zlib).
    pub fn format(mut self, format: impl Into<RegionFormat>) -> Self {
        self.format = format.into();
        self
    }
    /// Writes the entities of 1.17+ columns (imported from an `entities/` folder) to entity
    /// regions in `dir`. Without it, exporting such a column with entities is refused.
    pub fn entities_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.entities_dir = Some(dir.into());
        self
    }
    /// The entities folder set with [`entities_dir`](Self::entities_dir), if any.
    pub fn entities(&self) -> Option<&Path> {
        self.entities_dir.as_deref()
    }
}

/// Exports every column of `source` into region files in `dir` with default options. See
/// [`export_region_dir_with`].
pub fn export_region_dir<S: ExportSource>(
    source: &S,
    dir: &Path,
    progress: &mut dyn FnMut(&Progress),
) -> Result<ExportSummary> {
    export_region_dir_with(source, dir, &ExportOptions::new(), progress)
}

/// Exports every column of `source` into region files in `dir` (created if missing), and
/// 1.17+ entities into the options' `entities/` folder.
///
/// Every region file (and side file) is first written, synced, under a temporary name; only
/// when all of them are written are they renamed into place. A failure (a block state
/// Minecraft cannot store, a full disk) therefore leaves no new file behind, only the
/// folder's previous contents; a crash during the final renames leaves each file either old
/// or new. Columns holding pre-1.13 numeric blocks are refused with
/// [`Error::LegacyExport`] before anything is written.
pub fn export_region_dir_with<S: ExportSource>(
    source: &S,
    dir: &Path,
    options: &ExportOptions,
    progress: &mut dyn FnMut(&Progress),
) -> Result<ExportSummary> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    let cols = source.columns().map_err(sink_err)?;
    let mut by_region: BTreeMap<(i32, i32), Vec<ColumnPos>> = BTreeMap::new();
    for c in cols {
        by_region.entry((c.x >> 5, c.z >> 5)).or_default().push(c);
    }
    let mut p = Progress {
        regions_total: by_region.len(),
        columns_total: by_region.values().map(|v| v.len() as u64).sum(),
        ..Progress::default()
    };
    // Pre-1.13 columns cannot be exported: refuse before writing anything, so a refused
    // export leaves no region files behind. Only worlds that imported legacy blocks pay for
    // this pass.
    if source.schema().blocks().names().any(|n| n.starts_with("legacy:")) {
        for pos in by_region.values().flatten() {
            let Some(imp) = source.column(*pos).map_err(sink_err)? else { continue };
            let (col, _) = terrane_to_column(&imp, source.schema())?;
            if col.first_legacy_state().is_some() || col.layout == Layout::Legacy {
                col.to_nbt()?;
            }
        }
    }
    let mut staged = Staged::default();
    let result = export_staged(source, dir, options, progress, by_region, &mut p, &mut staged);
    match result {
        Ok(mut summary) => {
            summary.files = staged.0.iter().map(|(_, path)| path.clone()).collect();
            staged.commit()?;
            Ok(summary)
        }
        Err(e) => {
            staged.abort();
            Err(e)
        }
    }
}

/// Files written under temporary names, renamed into place together ([`Staged::commit`]) or
/// removed ([`Staged::abort`]).
#[derive(Default)]
struct Staged(Vec<(PathBuf, PathBuf)>);

impl Staged {
    /// Writes `bytes` (synced) next to `path` under a temporary name.
    fn write(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        use std::io::Write;
        self.write_with(path, |f| f.write_all(bytes))
    }

    /// Writes what `fill` writes (buffered, then synced) next to `path` under a temporary
    /// name.
    fn write_with<T>(
        &mut self,
        path: &Path,
        fill: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<T>,
    ) -> Result<T> {
        let tmp = path.with_extension("tmp-terrane");
        self.0.push((tmp.clone(), path.to_path_buf()));
        let res = (|| {
            let mut f = std::io::BufWriter::new(std::fs::File::create(&tmp)?);
            let t = fill(&mut f)?;
            f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
            Ok(t)
        })();
        res.map_err(|e| Error::io(path, e))
    }

    fn commit(self) -> Result<()> {
        let mut dirs = std::collections::BTreeSet::new();
        for (tmp, path) in &self.0 {
            std::fs::rename(tmp, path).map_err(|e| Error::io(path, e))?;
            if let Some(d) = path.parent() {
                dirs.insert(d.to_path_buf());
            }
        }
        for d in dirs {
            // The renames durable too (best effort where directories cannot be opened).
            if let Ok(f) = std::fs::File::open(&d) {
                let _ = f.sync_all();
            }
        }
        Ok(())
    }

    fn abort(self) {
        for (tmp, _) in self.0 {
            let _ = std::fs::remove_file(tmp);
        }
    }
}

/// [`export_region_dir_with`]'s loop over regions, writing each to `staged`.
fn export_staged<S: ExportSource>(
    source: &S,
    dir: &Path,
    options: &ExportOptions,
    progress: &mut dyn FnMut(&Progress),
    by_region: BTreeMap<(i32, i32), Vec<ColumnPos>>,
    p: &mut Progress,
    staged: &mut Staged,
) -> Result<ExportSummary> {
    let mut summary = ExportSummary::default();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32);
    for ((rx, rz), cols) in by_region {
        p.region = (rx, rz);
        let compression = match options.format {
            RegionFormat::Anvil(c) => c,
            RegionFormat::Linear(_) => Compression::None,
        };
        let mut w = RegionWriter::new(rx, rz).with_compression(compression);
        let mut ew = RegionWriter::new(rx, rz).with_compression(compression);
        let (mut lin, mut elin) = (Vec::new(), Vec::new());
        let linear = match options.format {
            RegionFormat::Linear(layout) => Some(layout),
            RegionFormat::Anvil(_) => None,
        };
        for pos in cols {
            let Some(imp) = source.column(pos).map_err(sink_err)? else { continue };
            let inb = imp.encoded_len() as u64;
            let (col, ts) = terrane_to_column(&imp, source.schema())?;
            let nbt = col.to_nbt()?;
            let index = (pos.x & 31) as usize + 32 * (pos.z & 31) as usize;
            let ts = if ts == 0 { now } else { ts };
            if let Some(ent) = col.entity_chunk_nbt() {
                if options.entities_dir.is_none() {
                    if col.entities.is_empty() {
                        // Nothing would be lost.
                    } else {
                        return Err(Error::Convert(format!(
                            "column ({}, {}) has 1.17+ entities: set ExportOptions::entities_dir",
                            pos.x, pos.z
                        )));
                    }
                } else if linear.is_some() {
                    elin.push(LinearChunk { index, timestamp: u64::from(ts), nbt: ent? });
                } else {
                    ew.insert(index, ent?, ts);
                }
            }
            if linear.is_some() {
                lin.push(LinearChunk { index, timestamp: u64::from(ts), nbt });
            } else {
                w.insert(index, nbt, ts);
            }
            summary.columns += 1;
            summary.chunks += imp.chunks.len() as u64;
            summary.bytes_in += inb;
            p.bytes_in += inb;
            p.columns_done += 1;
            progress(p);
        }
        if let Some(layout) = linear {
            let mut write = |d: &Path, chunks: &[LinearChunk]| -> Result<u64> {
                let bytes = linear::encode(chunks, (rx, rz), layout, LINEAR_LEVEL);
                staged.write(&d.join(format!("r.{rx}.{rz}.linear")), &bytes)?;
                Ok(bytes.len() as u64)
            };
            if let Some(edir) = &options.entities_dir
                && !elin.is_empty()
            {
                std::fs::create_dir_all(edir).map_err(|e| Error::io(edir, e))?;
                summary.bytes_out += write(edir, &elin)?;
            }
            summary.bytes_out += write(dir, &lin)?;
        } else {
            if let Some(edir) = &options.entities_dir
                && !ew.is_empty()
            {
                std::fs::create_dir_all(edir).map_err(|e| Error::io(edir, e))?;
                summary.bytes_out +=
                    write_region(staged, edir, rx, rz, ew, &mut summary.side_files)?;
            }
            summary.bytes_out += write_region(staged, dir, rx, rz, w, &mut summary.side_files)?;
        }
        p.bytes_out = summary.bytes_out;
        summary.regions += 1;
        p.regions_done += 1;
        progress(p);
    }
    Ok(summary)
}

/// Stages one region (and its side files); returns the bytes written.
fn write_region(
    staged: &mut Staged,
    dir: &Path,
    rx: i32,
    rz: i32,
    w: RegionWriter,
    side_files: &mut usize,
) -> Result<u64> {
    let path = dir.join(format!("r.{rx}.{rz}.mca"));
    // Past the sector offset space (64 GiB), the writer's error comes as this file's.
    let (len, side) = staged.write_with(&path, |f| w.write_to(f))?;
    let mut n = 0;
    for s in &side {
        staged.write(&dir.join(&s.name), &s.bytes)?;
        n += s.bytes.len() as u64;
    }
    *side_files += side.len();
    Ok(n + len)
}

/// Opens a region file: an Anvil one on disk, read a chunk at a time, or a Linear one read
/// whole into an Anvil region in memory; with the file's length. The outer error is the
/// region's damage (reported, the region skipped), the inner one the disk's.
fn open_region(path: &Path) -> std::result::Result<Result<(RegionFile, u64)>, ChunkError> {
    if region::is_linear(path) {
        let b = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => return Ok(Err(Error::io(path, e))),
        };
        let anvil = linear::to_anvil(&b, linear::MAX_DECOMPRESSED)?;
        let r = RegionFile::new(anvil).map_err(|e| ChunkError::TruncatedRegion(e.0 as u64))?;
        return Ok(Ok((r, b.len() as u64)));
    }
    match RegionFile::open(path) {
        Err(e) => Ok(Err(Error::io(path, e))),
        Ok(Err(e)) => Err(ChunkError::TruncatedRegion(e.0 as u64)),
        Ok(Ok(r)) => {
            let len = r.len();
            Ok(Ok((r, len)))
        }
    }
}

fn present_entries(path: &Path) -> Result<Vec<usize>> {
    use std::io::Read;
    if region::is_linear(path) {
        // The whole file: a damaged one counts nothing here and is reported when read.
        let b = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        return Ok(linear::decode(&b, linear::MAX_DECOMPRESSED)
            .map(|r| r.chunks.iter().map(|c| c.index).collect())
            .unwrap_or_default());
    }
    let f = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let len = f.metadata().map_err(|e| Error::io(path, e))?.len();
    if len < region::HEADER as u64 {
        return Ok(Vec::new());
    }
    let mut table = vec![0u8; region::SECTOR];
    f.take(region::SECTOR as u64).read_exact(&mut table).map_err(|e| Error::io(path, e))?;
    Ok(table.chunks(4).enumerate().filter(|(_, c)| c != &[0, 0, 0, 0]).map(|(i, _)| i).collect())
}

/// One column read and decoded, on its way to conversion.
struct DecodedColumn {
    entry: region::ChunkEntry,
    /// Compressed bytes read from a `.mcc` side file (0 for a column inside the region).
    external_bytes: u64,
    /// The column, and its record's `Rest` payload ([`Column::from_nbt_for_import`]).
    column: std::result::Result<(Column, Vec<u8>), ChunkError>,
    /// A damaged entity chunk (the column imports without its entities).
    entity_damage: Option<DamagedChunk>,
}

/// Reads and decodes one column (inflate, NBT, palettes) and adds its entity chunk: the part of
/// an import that needs nothing but the region, so it runs on the decoding threads.
fn decode_column(
    r: &RegionFile,
    ents: Option<(&Path, &RegionFile)>,
    e: &region::ChunkEntry,
    pos: ColumnPos,
) -> DecodedColumn {
    let mut external_bytes = 0;
    let column = r.read(e).and_then(|raw| {
        if raw.external {
            external_bytes = raw.stored_len as u64;
        }
        Column::from_nbt_for_import(&raw.nbt, (pos.x, pos.z))
    });
    let mut entity_damage = None;
    let mut column = column;
    if let (Ok((col, _)), Some((epath, er))) = (&mut column, ents)
        && let Some(ee) = er.entry(e.index)
        && let Err(error) = er.read(&ee).and_then(|raw| col.add_entity_chunk(&raw.nbt))
    {
        entity_damage = Some(DamagedChunk {
            file: epath.to_path_buf(),
            index: Some(e.index),
            pos: Some(pos),
            error,
        });
    }
    DecodedColumn { entry: *e, external_bytes, column, entity_damage }
}

fn column_of(rx: i32, rz: i32, index: usize) -> ColumnPos {
    ColumnPos::new(
        rx.wrapping_mul(32).wrapping_add((index % 32) as i32),
        rz.wrapping_mul(32).wrapping_add((index / 32) as i32),
    )
}
