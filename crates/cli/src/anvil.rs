//! `terrane import anvil` / `terrane export anvil`: Minecraft Java Edition region folders in
//! and out of a world, through terrane-anvil's library API.

use std::collections::{BTreeMap, HashMap};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::Instant;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use terrane::anvil::convert::ColumnRecord;
use terrane::anvil::{self, ExportSource, ImportSink, ImportedColumn};
use terrane::section::morton;
use terrane::{Backend, Chunk, ChunkPos, ColumnPos, Schema, TickSave, World, tables};

use crate::{Fail, backend_arg};

/// The `worldProperties` key prefix of imported column records (then the 2D Morton key of
/// the column's chunk x, z: 16 bytes).
const RECORD_PREFIX: &[u8] = b"anvil:column:";

/// DataVersion written for columns that never came from Minecraft (1.21.1).
const NATIVE_DATA_VERSION: i32 = 3955;

/// `terrane import ...`
#[derive(clap::Subcommand, Debug)]
pub enum ImportCmd {
    /// Import a Minecraft Java region folder (`r.X.Z.mca`, `c.X.Z.mcc`) into a world, created
    /// when missing. Resumable: a re-run skips the columns already imported. Damaged chunks
    /// are reported and skipped.
    Anvil {
        /// The region folder.
        region_dir: PathBuf,
        /// The world directory.
        world: PathBuf,
        /// Backend of a new world: rocksdb (default) or blockfile.
        #[arg(long, value_parser = backend_arg)]
        backend: Option<Backend>,
        /// The 1.17+ entity region folder; default: the `entities` folder beside the region
        /// folder when there is one (a Java world keeps `region/` and `entities/` side by side).
        #[arg(long)]
        entities: Option<PathBuf>,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
        /// Import into a world that already holds chunks of its own (not from an earlier run
        /// of this import), writing the region's columns over them.
        #[arg(long)]
        merge: bool,
    },
}

/// `terrane export ...`
#[derive(clap::Subcommand, Debug)]
pub enum ExportCmd {
    /// Export a world to a Minecraft Java region folder (zlib chunks, `.mcc` over 1 MiB;
    /// each region file written whole, then renamed into place).
    Anvil {
        /// The world directory.
        world: PathBuf,
        /// The region folder to write (created when missing).
        region_dir: PathBuf,
        /// Where the entities of 1.17+ columns go; default: `entities` beside the region
        /// folder.
        #[arg(long)]
        entities: Option<PathBuf>,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
}

fn record_key(pos: ColumnPos) -> Vec<u8> {
    [RECORD_PREFIX, &morton::encode2(i64::from(pos.x), i64::from(pos.z))].concat()
}

/// Imports into a [`World`]: one atomic save per column (chunks, entities, column record).
struct Sink {
    world: World,
    schema: Schema,
    error: Option<terrane::Error>,
}

/// A sink or source failure, as text for terrane-anvil's error.
#[derive(Debug)]
struct SinkError(String);

impl std::fmt::Display for SinkError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SinkError {}

impl From<terrane::Error> for SinkError {
    fn from(e: terrane::Error) -> Self {
        SinkError(e.to_string())
    }
}

impl ImportSink for Sink {
    type Error = SinkError;
    fn schema(&mut self) -> &mut Schema {
        &mut self.schema
    }
    fn has_column(&mut self, pos: ColumnPos) -> Result<bool, SinkError> {
        Ok(self
            .world
            .store()
            .get(tables::WORLD_PROPERTIES, &record_key(pos))
            .map_err(|e| SinkError(e.to_string()))?
            .is_some())
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
            save.put_chunk(0, ChunkPos::new(i64::from(c.pos.x), y, i64::from(c.pos.z)), bytes);
        }
        for (uuid, bytes) in c.entities {
            save.put_entity(uuid, bytes);
        }
        save.put_object(tables::WORLD_PROPERTIES, record_key(c.pos), c.record);
        let tick = self.world.tick();
        self.world.save_tick(tick, save).map_err(|e| {
            let msg = e.to_string();
            self.error = Some(e);
            SinkError(msg)
        })
    }
    fn region_done(&mut self, _: i32, _: i32) -> Result<(), SinkError> {
        Ok(self.world.sync()?)
    }
}

/// Refuses an import into a world that holds chunks of its own: the import would write its
/// columns over them without a word. A world whose chunks came from an import (it holds
/// column records) is a resumed import: allowed.
fn refuse_overwrite(w: &World, location: &Path) -> Result<(), Fail> {
    let store = w.store();
    let mut has_chunks = false;
    for t in [tables::CHUNK_L0, tables::CHUNK_L1, tables::CHUNK_L2] {
        if store.scan(t, terrane::store::KeyRange::all())?.next().is_some() {
            has_chunks = true;
            break;
        }
    }
    if !has_chunks || store.scan_prefix(tables::WORLD_PROPERTIES, RECORD_PREFIX)?.next().is_some() {
        return Ok(());
    }
    Err(Fail::usage(format!(
        "{} already holds chunks that did not come from an import: importing would write the \
         region's columns over them; import into a new world, or pass --merge to overwrite",
        location.display()
    )))
}

fn bar(quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(0);
    pb.set_style(
        ProgressStyle::with_template(
            "{msg:>10} [{bar:30}] {pos}/{len} columns {per_sec} eta {eta} {prefix}",
        )
        .expect("valid template")
        .progress_chars("=> "),
    );
    pb
}

/// The folder `name` beside `dir` (in the same parent).
fn beside(dir: &Path, name: &str) -> Option<PathBuf> {
    let abs = std::path::absolute(dir).ok()?;
    Some(abs.parent()?.join(name))
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

pub fn import(c: ImportCmd) -> Result<(), Fail> {
    let ImportCmd::Anvil { region_dir, world, backend, entities, json, merge } = c;
    if !region_dir.is_dir() {
        return Err(Fail::usage(format!(
            "{} is not a folder of region files",
            region_dir.display()
        )));
    }
    let mut options = anvil::ImportOptions::new();
    match entities.or_else(|| beside(&region_dir, "entities").filter(|d| d.is_dir())) {
        Some(dir) if dir.is_dir() => {
            tracing::info!("entities from {}", dir.display());
            options = options.entities_dir(dir);
        }
        Some(dir) => {
            return Err(Fail::usage(format!("{} is not a folder", dir.display())));
        }
        None => {}
    }
    let w = if terrane::connection_string(&world).is_some() {
        // A PostgreSQL world: open it, or create it when its schema holds none.
        match World::builder().sync_saves(false).open(&world) {
            Err(terrane::Error::Store(terrane::store::Error::NotFound(_))) => World::builder()
                .backend(terrane::Backend::Postgres)
                .sync_saves(false)
                .create(&world)?,
            w => w?,
        }
    } else if !world.exists()
        || fs::read_dir(&world).map_err(|e| Fail::io(&world, e))?.next().is_none()
    {
        World::builder().backend(backend.unwrap_or_default()).sync_saves(false).create(&world)?
    } else {
        World::builder().sync_saves(false).open(&world)?
    };
    if !merge {
        refuse_overwrite(&w, &world)?;
    }
    let schema = w.schema().clone();
    let mut sink = Sink { world: w, schema, error: None };
    let t = Instant::now();
    let pb = bar(json);
    pb.set_message("import");
    let summary = anvil::import_region_dir_with(&region_dir, &mut sink, &options, &mut |p| {
        pb.set_length(p.columns_total);
        pb.set_position(p.columns_done);
        pb.set_prefix(format!("{:.1} MiB in, {:.1} MiB out", mib(p.bytes_in), mib(p.bytes_out)));
    });
    pb.finish();
    let Sink { world: w, error, .. } = sink;
    let summary = match (summary, error) {
        (Ok(s), _) => s,
        (Err(_), Some(e)) => return Err(e.into()),
        (Err(e), None) => return Err(Fail::other(format!("import: {e}"))),
    };
    w.close()?;
    let secs = t.elapsed().as_secs_f64();
    let disk = World::open_read_only(&world)?.info()?.disk_bytes;
    if json {
        let v = json!({
            "regions": summary.regions,
            "columns": summary.columns,
            "columns_skipped": summary.columns_skipped,
            "chunks": summary.chunks,
            "blocks": summary.blocks,
            "block_entities": summary.block_entities,
            "entities": summary.entities,
            "bytes_in": summary.bytes_in,
            "bytes_out": summary.bytes_out,
            "disk_bytes": disk,
            "damaged": summary.damaged.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
            "seconds": secs,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "imported {} columns ({} already there) from {} region files into {} in {:.2} s ({:.0} columns/s)",
            summary.columns,
            summary.columns_skipped,
            summary.regions,
            world.display(),
            secs,
            summary.columns as f64 / secs.max(1e-9)
        );
        println!(
            "  {} cubic chunks, {} blocks, {} block entities, {} entities",
            summary.chunks, summary.blocks, summary.block_entities, summary.entities
        );
        println!(
            "  bytes in (.mca) {:.2} MiB -> encoded {:.2} MiB -> world on disk {:.2} MiB",
            mib(summary.bytes_in),
            mib(summary.bytes_out),
            mib(disk)
        );
        if !summary.damaged.is_empty() {
            println!("  {} damaged chunks skipped:", summary.damaged.len());
            for d in summary.damaged.iter().take(10) {
                println!("    {d}");
            }
        }
    }
    Ok(())
}

/// Exports a [`World`]: its columns grouped from every stored chunk, with the imported
/// column records where there are some and a plain 1.21 record otherwise.
struct Source {
    schema: Schema,
    columns: BTreeMap<ColumnPos, Vec<(i64, Vec<u8>)>>,
    records: HashMap<ColumnPos, Vec<u8>>,
    entities: HashMap<[u8; 16], Vec<u8>>,
}

impl ExportSource for Source {
    type Error = SinkError;
    fn schema(&self) -> &Schema {
        &self.schema
    }
    fn columns(&self) -> Result<Vec<ColumnPos>, SinkError> {
        let mut all: Vec<ColumnPos> =
            self.columns.keys().chain(self.records.keys()).copied().collect();
        all.sort();
        all.dedup();
        Ok(all)
    }
    fn column(&self, pos: ColumnPos) -> Result<Option<ImportedColumn>, SinkError> {
        let mut chunks = self.columns.get(&pos).cloned().unwrap_or_default();
        let record = match self.records.get(&pos) {
            Some(r) => r.clone(),
            None => {
                // A native column: its entities are the game's own records, not Minecraft
                // NBT, so they stay behind; the chunks go without their references.
                for (_, bytes) in &mut chunks {
                    let mut c =
                        Chunk::decode(bytes, &self.schema).map_err(|e| SinkError(e.to_string()))?;
                    if !c.entities().is_empty() {
                        for u in c.entities().to_vec() {
                            c.remove_entity(&u);
                        }
                        *bytes = c.encode(&self.schema);
                    }
                }
                // A fresh record (`Status: minecraft:full`): Minecraft regenerates a chunk
                // that has no status over whatever blocks it holds.
                ColumnRecord::fresh(NATIVE_DATA_VERSION).encode()
            }
        };
        let mut uuids: Vec<[u8; 16]> = Vec::new();
        for (_, bytes) in &chunks {
            if let Ok(v) = terrane::ChunkView::parse(bytes) {
                uuids.extend_from_slice(v.entities());
            }
        }
        if let Ok(r) = ColumnRecord::decode(&record) {
            uuids.extend(r.orphan_entities);
        }
        let entities = uuids
            .into_iter()
            .filter_map(|u| self.entities.get(&u).map(|b| (u, b.clone())))
            .collect();
        Ok(Some(ImportedColumn { pos, chunks, entities, record }))
    }
}

fn load_source(world: &Path) -> Result<Source, Fail> {
    let w = World::open_read_only(world)?;
    let mut columns: BTreeMap<ColumnPos, Vec<(i64, Vec<u8>)>> = BTreeMap::new();
    for ((_, pos), (_, bytes)) in w.tiered().all_chunks()? {
        let (Ok(x), Ok(z)) = (i32::try_from(pos.x), i32::try_from(pos.z)) else {
            return Err(Fail::other(format!("chunk {pos:?} is beyond Minecraft's coordinates")));
        };
        columns.entry(ColumnPos::new(x, z)).or_default().push((pos.y, bytes));
    }
    let mut records = HashMap::new();
    for e in w.store().scan_prefix(tables::WORLD_PROPERTIES, RECORD_PREFIX)? {
        let (k, o) = e?;
        if let Ok(m) = <[u8; 16]>::try_from(&k[RECORD_PREFIX.len()..])
            && let (x, z) = morton::decode2(&m)
            && let (Ok(x), Ok(z)) = (i32::try_from(x), i32::try_from(z))
        {
            records.insert(ColumnPos::new(x, z), o.data);
        }
    }
    let mut entities = HashMap::new();
    for e in w.store().scan(tables::ENTITY, terrane::store::KeyRange::all())? {
        let (k, o) = e?;
        if let Ok(u) = <[u8; 16]>::try_from(k.as_slice()) {
            entities.insert(u, o.data);
        }
    }
    Ok(Source { schema: w.schema().clone(), columns, records, entities })
}

pub fn export(c: ExportCmd) -> Result<(), Fail> {
    let ExportCmd::Anvil { world, region_dir, entities, json } = c;
    let t = Instant::now();
    let source = load_source(&world)?;
    let pb = bar(json);
    pb.set_message("export");
    let mut options = anvil::ExportOptions::new();
    if let Some(dir) = entities.or_else(|| beside(&region_dir, "entities")) {
        options = options.entities_dir(dir);
    }
    let summary = anvil::export_region_dir_with(&source, &region_dir, &options, &mut |p| {
        pb.set_length(p.columns_total);
        pb.set_position(p.columns_done);
        pb.set_prefix(format!("{:.1} MiB out", mib(p.bytes_out)));
    })
    .map_err(|e| Fail::other(format!("export: {e}")))?;
    pb.finish();
    let secs = t.elapsed().as_secs_f64();
    if json {
        let v = json!({
            "regions": summary.regions,
            "columns": summary.columns,
            "chunks": summary.chunks,
            "side_files": summary.side_files,
            "bytes_in": summary.bytes_in,
            "bytes_out": summary.bytes_out,
            "seconds": secs,
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!(
            "exported {} columns ({} cubic chunks) to {} region files in {} in {:.2} s",
            summary.columns,
            summary.chunks,
            summary.regions,
            region_dir.display(),
            secs
        );
        println!(
            "  {:.2} MiB of terrane chunks -> {:.2} MiB of .mca ({} .mcc side files)",
            mib(summary.bytes_in),
            mib(summary.bytes_out),
            summary.side_files
        );
    }
    Ok(())
}
