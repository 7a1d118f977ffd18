//! `terrane import anvil` / `terrane export anvil`: Minecraft Java Edition worlds and region
//! folders in and out of a world. The work is the facade's (`terrane::java`); this file parses
//! the arguments, shows progress and prints the summary.

use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;
use terrane::anvil::region::Compression;
use terrane::anvil::{self, ExportSummary, ImportSummary};
use terrane::java;
use terrane::{Backend, World};

use crate::out::{LISTED, listed, mib};
use crate::progress::bar;
use crate::{Fail, backend_arg};

/// `terrane import ...`
#[derive(clap::Subcommand, Debug)]
pub enum ImportCmd {
    /// Import a Minecraft Java world into a terrane world, created when missing: a whole
    /// Java world folder (`level.dat`, `region/`, `entities/`, the Nether's `DIM-1/` and the
    /// End's `DIM1/`, each its own dimension) or one region folder (`r.X.Z.mca`, `c.X.Z.mcc`)
    /// as the Overworld. Resumable: a re-run skips the columns already imported. Damaged
    /// chunks are reported and skipped: the summary's last line says the import was partial,
    /// and an import of nothing but damaged chunks fails (exit status 1).
    Anvil {
        /// The Java world folder, or a region folder.
        source: PathBuf,
        /// The world directory.
        world: PathBuf,
        /// Backend of a new world: rocksdb (default) or blockfile (one file that
        /// rewrites its whole index at every save: for worlds of a few thousand columns).
        #[arg(long, value_parser = backend_arg)]
        backend: Option<Backend>,
        /// For a region folder: the 1.17+ entity region folder; default: the `entities`
        /// folder beside the region folder when there is one.
        #[arg(long)]
        entities: Option<PathBuf>,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
        /// Import into a world that already holds chunks of its own (not from an earlier run
        /// of this import), writing the Java world's columns over them.
        #[arg(long)]
        merge: bool,
    },
    /// Import a Minecraft Bedrock world folder (`level.dat`, `levelname.txt`, `db/`) into a
    /// terrane world, created when missing: the Overworld, the Nether and the End as
    /// dimensions 0, 1 and 2, block states under their Bedrock names. The world folder is
    /// not changed (its database is read from a copy). Resumable: a re-run skips the columns
    /// already imported. Damaged records are reported and kept as stored, not converted: the
    /// summary's last line says the import was partial, and an import that converted no chunk
    /// fails (exit status 1).
    Bedrock {
        /// The Bedrock world folder.
        source: PathBuf,
        /// The world directory.
        world: PathBuf,
        /// Backend of a new world: rocksdb (default) or blockfile (one file that
        /// rewrites its whole index at every save: for worlds of a few thousand columns).
        #[arg(long, value_parser = backend_arg)]
        backend: Option<Backend>,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
        /// Import into a world that already holds chunks of its own (not from an earlier run
        /// of this import), writing the Bedrock world's columns over them.
        #[arg(long)]
        merge: bool,
    },
}

/// `terrane export ...`
/// `--layout`: how a Java world folder is laid out.
#[derive(Copy, Clone, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum LayoutArg {
    /// Up to Minecraft 1.21.11: `region/`, `DIM-1/`, `DIM1/`, `playerdata/`.
    #[value(alias = "old")]
    Classic,
    /// Minecraft 26.1 on: `dimensions/<namespace>/<name>/`, `players/`.
    #[value(name = "26.1", alias = "new")]
    Dimensions,
}

/// `export anvil --format`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormatArg {
    /// Anvil region files (`r.X.Z.mca`), Minecraft's own.
    Anvil,
    /// Linear v1 (`r.X.Z.linear`, one zstd stream), as Paper forks with Linear regions read.
    Linear,
    /// Linear v2 (`r.X.Z.linear`, 8 × 8 zstd buckets, each with its xxHash64).
    #[value(name = "linear-v2")]
    LinearV2,
}

#[derive(clap::Subcommand, Debug)]
pub enum ExportCmd {
    /// Export a world's Overworld to a Minecraft Java region folder (zlib chunks, `.mcc` over
    /// 1 MiB; each region file written whole, then renamed into place), or with --world-folder
    /// the whole world as a Java world folder. A destination that already holds region files
    /// or a Java world is refused (exit status 2, nothing written) unless --force or --merge
    /// says what to do with them.
    Anvil {
        /// The world directory.
        world: PathBuf,
        /// The region folder to write (created when missing); with --world-folder, the Java
        /// world folder.
        dest: PathBuf,
        /// Replace what the destination holds: the region files (and entity regions, side
        /// files) the export does not write are removed, in every dimension's folders with
        /// --world-folder (and an old level.dat when the world kept none), so the result is
        /// exactly this world.
        #[arg(long, conflicts_with = "merge")]
        force: bool,
        /// Merge into the destination: this world's region files are written over the
        /// same-named ones (each region whole, with its entity region), the other regions,
        /// level.dat and everything else there are kept.
        #[arg(long)]
        merge: bool,
        /// Write a whole Java world folder: every dimension, the `level.dat` and the players'
        /// files kept at import, laid out as the world's Minecraft version lays them out
        /// (26.1 on: `dimensions/minecraft/overworld/...`; before: `region/`, `DIM-1/`,
        /// `DIM1/`) unless --layout says.
        #[arg(long)]
        world_folder: bool,
        /// With --world-folder: `classic` (Minecraft up to 1.21.11) or `26.1` (every
        /// dimension under `dimensions/`, players under `players/`).
        #[arg(long, value_enum, requires = "world_folder")]
        layout: Option<LayoutArg>,
        /// For a region folder: where the entities of 1.17+ columns go; default: `entities`
        /// beside the region folder.
        #[arg(long)]
        entities: Option<PathBuf>,
        /// How the chunks are compressed: `zlib` (Minecraft's default, also `deflate`),
        /// `lz4` or `none` (as a server's `region-file-compression` setting), or `gzip`.
        /// Minecraft 1.20.5 and later read each; older versions read zlib and gzip.
        #[arg(long, default_value = "zlib", value_parser = compression_arg)]
        compression: Compression,
        /// The region files: `anvil` (`.mca`, with --compression), or `linear` / `linear-v2`
        /// (`.linear`, zstd) for Paper forks that store their regions as Linear files.
        #[arg(long, value_enum, default_value = "anvil")]
        format: FormatArg,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Export a world as a Minecraft Bedrock world folder (`level.dat`, `levelname.txt`,
    /// `db/`): dimensions 0, 1 and 2 as the Overworld, the Nether and the End. It is written
    /// under a temporary name beside the folder and renamed once whole. A folder that holds a
    /// Bedrock world is refused (exit status 2, nothing written) unless --force or --merge
    /// says what to do with it; any other non-empty folder is refused.
    Bedrock {
        /// The world directory.
        world: PathBuf,
        /// The Bedrock world folder to write (missing or empty, or a Bedrock world with
        /// --force or --merge).
        dest: PathBuf,
        /// Replace the Bedrock world there, whole: the result is exactly this world.
        #[arg(long, conflicts_with = "merge")]
        force: bool,
        /// Merge into the Bedrock world there: this world's columns replace the same columns
        /// (with their entities), its records the same-named ones; the other columns,
        /// entities, records and files (packs, icon) are kept, and level.dat unless this world
        /// kept one.
        #[arg(long)]
        merge: bool,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
}

/// The folder `name` beside `dir` (in the same parent).
fn beside(dir: &Path, name: &str) -> Option<PathBuf> {
    let abs = std::path::absolute(dir).ok()?;
    Some(abs.parent()?.join(name))
}

/// Opens the import's world, creating it when missing (a directory that does not exist or
/// is empty, or a PostgreSQL schema without a world); a world whose import was cut off opens,
/// for this import to go on.
pub(crate) fn open_for_import(world: &Path, backend: Option<Backend>) -> Result<World, Fail> {
    let mut b = World::builder().sync_saves(false).one_pass(true).for_import(true);
    if let Some(backend) = backend {
        b = b.backend(backend);
    }
    Ok(b.open_or_create(world)?)
}

fn import_json(s: &ImportSummary) -> serde_json::Value {
    json!({
        "regions": s.regions,
        "columns": s.columns,
        "columns_skipped": s.columns_skipped,
        "chunks": s.chunks,
        "blocks": s.blocks,
        "block_entities": s.block_entities,
        "entities": s.entities,
        "bytes_in": s.bytes_in,
        "bytes_out": s.bytes_out,
        "damaged": s.damaged.iter().map(|d| d.to_string()).collect::<Vec<_>>(),
    })
}

pub fn import(c: ImportCmd) -> Result<(), Fail> {
    let (source, world, backend, entities, json, merge) = match c {
        ImportCmd::Anvil { source, world, backend, entities, json, merge } => {
            (source, world, backend, entities, json, merge)
        }
        ImportCmd::Bedrock { source, world, backend, json, merge } => {
            return crate::bedrock::import(&source, &world, backend, json, merge);
        }
    };
    if !source.is_dir() {
        return Err(Fail::usage(format!(
            "{} is not a folder (give a Java world folder or its region folder)",
            source.display()
        )));
    }
    let whole = java::is_java_world(&source);
    let mut options = anvil::ImportOptions::new();
    if whole {
        if entities.is_some() {
            return Err(Fail::usage(
                "--entities applies to a region folder; a Java world folder brings its own",
            ));
        }
        if java::find_dimensions(&source, java::layout_of(&source))?.is_empty() {
            return Err(Fail::usage(format!(
                "{} holds no region files ({})",
                source.display(),
                terrane::anvil::folder::REGION_FOLDERS
            )));
        }
    } else {
        if !java::has_region_files(&source) {
            return Err(Fail::usage(format!(
                "{} holds no region files (r.X.Z.mca): give a Java world folder (with level.dat \
                 and region/) or its region folder",
                source.display()
            )));
        }
        match entities.or_else(|| beside(&source, "entities").filter(|d| d.is_dir())) {
            Some(dir) if dir.is_dir() => {
                tracing::info!("entities from {}", dir.display());
                options = options.entities_dir(dir);
            }
            Some(dir) => {
                return Err(Fail::usage(format!("{} is not a folder", dir.display())));
            }
            None => {}
        }
    }
    let mut w = open_for_import(&world, backend)?;
    if !merge {
        java::refuse_overwrite(&w)?;
    }
    let t = Instant::now();
    let pb = bar(json, " columns");
    let show = |name: &str, p: &anvil::Progress| {
        pb.set_message(name.to_string());
        pb.set_length(p.columns_total);
        pb.set_position(p.columns_done);
        pb.set_prefix(format!("{:.1} MiB in, {:.1} MiB out", mib(p.bytes_in), mib(p.bytes_out)));
    };
    let summary = if whole {
        java::import_java_world(&mut w, &source, &mut |d, p| show(&d.name, p))?
    } else {
        let s = java::import_region_dir(&mut w, 0, &source, &options, &mut |p| show("import", p))?;
        java::JavaImportSummary {
            dimensions: vec![(java::vanilla_dimensions(java::JavaLayout::Classic)[0].clone(), s)],
            ..Default::default()
        }
    };
    pb.finish();
    w.close()?;
    let (dims, level_dat, total) = (&summary.dimensions, summary.level_dat, summary.total());
    let secs = t.elapsed().as_secs_f64();
    let disk = World::open_read_only(&world)?.disk_bytes();
    if json {
        let mut v = import_json(&total);
        v["disk_bytes"] = json!(disk);
        v["seconds"] = json!(secs);
        v["level_dat"] = json!(level_dat);
        v["players"] = json!(summary.players);
        v["dimensions"] = dims.iter().map(|(d, s)| (d.name.to_string(), import_json(s))).collect();
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!(
            "imported {} columns ({} already there) from {} region files into {} in {:.2} s ({:.0} columns/s)",
            total.columns,
            total.columns_skipped,
            total.regions,
            world.display(),
            secs,
            total.columns as f64 / secs.max(1e-9)
        );
        if whole {
            for (d, s) in dims {
                outln!("  {}: {} columns, {} cubic chunks", d.name, s.columns, s.chunks);
            }
            if level_dat {
                outln!("  level.dat kept (written back by `terrane export anvil --world-folder`)");
            }
            if summary.players > 0 {
                outln!("  {} player files kept", summary.players);
            }
            if summary.layout == Some(java::JavaLayout::Dimensions) {
                outln!("  read in the 26.1 layout (dimensions/); exports keep it");
            }
        }
        outln!(
            "  {} cubic chunks, {} non-air blocks, {} block entities, {} entities",
            total.chunks,
            total.blocks,
            total.block_entities,
            total.entities
        );
        outln!(
            "  bytes in (.mca) {:.2} MiB -> encoded {:.2} MiB -> world on disk {:.2} MiB",
            mib(total.bytes_in),
            mib(total.bytes_out),
            mib(disk)
        );
        if !total.damaged.is_empty() {
            outln!("  {} damaged chunks skipped:", total.damaged.len());
            for d in total.damaged.iter().take(LISTED) {
                outln!("    {d}");
            }
        }
    }
    let damaged = total.damaged.len();
    if damaged > 0 && total.columns + total.columns_skipped == 0 {
        return Err(Fail::other(format!(
            "nothing was imported from {}: every chunk read was damaged ({damaged} skipped, {})",
            source.display(),
            listed(damaged, json)
        )));
    }
    if damaged > 0 && !json {
        outln!("partial import: {damaged} damaged chunks skipped ({})", listed(damaged, false));
    }
    Ok(())
}

/// What an export does with a destination that holds something, from `--force` / `--merge`.
pub(crate) fn overwrite(force: bool, merge: bool) -> terrane::export::Overwrite {
    use terrane::export::Overwrite;
    match (force, merge) {
        (true, _) => Overwrite::Replace,
        (false, true) => Overwrite::Merge,
        (false, false) => Overwrite::Refuse,
    }
}

fn export_json(s: &ExportSummary) -> serde_json::Value {
    json!({
        "regions": s.regions,
        "columns": s.columns,
        "chunks": s.chunks,
        "side_files": s.side_files,
        "bytes_in": s.bytes_in,
        "bytes_out": s.bytes_out,
    })
}

/// A region compression's name (`--compression`).
fn compression_arg(s: &str) -> Result<Compression, String> {
    Compression::from_name(s).ok_or_else(|| format!("{s:?}: one of zlib, deflate, lz4, none, gzip"))
}

pub fn export(c: ExportCmd) -> Result<(), Fail> {
    let (layout_arg, format);
    let (world, dest, world_folder, entities, json, overwrite) = match c {
        ExportCmd::Anvil {
            world,
            dest,
            force,
            merge,
            world_folder,
            layout,
            entities,
            compression: chosen,
            format: format_arg,
            json,
        } => {
            format = match format_arg {
                FormatArg::Anvil => anvil::RegionFormat::Anvil(chosen),
                FormatArg::Linear => anvil::RegionFormat::Linear(anvil::linear::LinearLayout::V1),
                FormatArg::LinearV2 => {
                    anvil::RegionFormat::Linear(anvil::linear::LinearLayout::V2 { grid: 8 })
                }
            };
            layout_arg = layout;
            (world, dest, world_folder, entities, json, overwrite(force, merge))
        }
        ExportCmd::Bedrock { world, dest, force, merge, json } => {
            return crate::bedrock::export(&world, &dest, overwrite(force, merge), json);
        }
    };
    if world_folder && entities.is_some() {
        return Err(Fail::usage("--entities applies to a region folder, not with --world-folder"));
    }
    let t = Instant::now();
    let w = crate::open_one_pass(&world)?;
    let pb = bar(json, " columns");
    let show = |name: &str, p: &anvil::Progress| {
        pb.set_message(name.to_string());
        pb.set_length(p.columns_total);
        pb.set_position(p.columns_done);
        pb.set_prefix(format!("{:.1} MiB out", mib(p.bytes_out)));
    };
    let summary = if world_folder {
        let layout = match layout_arg {
            Some(LayoutArg::Classic) => java::JavaLayout::Classic,
            Some(LayoutArg::Dimensions) => java::JavaLayout::Dimensions,
            None => java::JavaLayout::of_data_version(java::data_version(&w)?),
        };
        let s = java::export_java_world_in(&w, &dest, layout, format, overwrite, &mut |d, p| {
            show(&d.name, p)
        })?;
        for d in &s.skipped_dimensions {
            tracing::warn!(
                "dimension {d} is neither one of Minecraft's three nor a datapack dimension \
                 imported by name: left out"
            );
        }
        s
    } else {
        let mut options = anvil::ExportOptions::new().format(format);
        if let Some(dir) = entities.or_else(|| beside(&dest, "entities")) {
            options = options.entities_dir(dir);
        }
        let s =
            java::export_region_dir(&w, 0, &dest, &options, overwrite, &mut |p| show("export", p))?;
        java::JavaExportSummary {
            dimensions: vec![(java::vanilla_dimensions(java::JavaLayout::Classic)[0].clone(), s)],
            ..Default::default()
        }
    };
    pb.finish();
    if !world_folder
        && w.store().get(terrane::tables::WORLD_PROPERTIES, java::LEVEL_DAT_KEY)?.is_some()
    {
        tracing::warn!(
            "{} came from a whole Java world: only its Overworld was written; \
             --world-folder writes every dimension and level.dat",
            world.display()
        );
    }
    let secs = t.elapsed().as_secs_f64();
    let (dims, level_dat, total) = (&summary.dimensions, summary.level_dat, summary.total());
    if json {
        let mut v = export_json(&total);
        v["seconds"] = json!(secs);
        v["level_dat"] = json!(level_dat);
        v["dimensions"] = dims.iter().map(|(d, s)| (d.name.to_string(), export_json(s))).collect();
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!(
            "exported {} columns ({} cubic chunks) to {} region files in {} in {:.2} s",
            total.columns,
            total.chunks,
            total.regions,
            dest.display(),
            secs
        );
        if world_folder {
            for (d, s) in dims {
                outln!("  {}: {} columns, {} region files", d.name, s.columns, s.regions);
            }
            if level_dat {
                outln!("  level.dat written back");
            }
            if summary.players > 0 {
                outln!("  {} player files written back", summary.players);
            }
        }
        let files = match format {
            anvil::RegionFormat::Linear(_) => ".linear",
            _ => ".mca",
        };
        outln!(
            "  {:.2} MiB of terrane chunks -> {:.2} MiB of {files} ({} .mcc side files)",
            mib(total.bytes_in),
            mib(total.bytes_out),
            total.side_files
        );
    }
    Ok(())
}
