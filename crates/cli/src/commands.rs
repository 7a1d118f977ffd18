//! The inspection commands: info, verify, repair, copy, create, chunk, schem, regionizer.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::time::Instant;

use serde_json::json;
use terrane::regionizer::replay::{self, ReplayOptions};
use terrane::{BlockBox, BlockPos, Chunk, ChunkPos, ChunkView, Schematic, TickSave, World};

use crate::Fail;

/// A world directory and the output mode.
#[derive(clap::Args, Debug)]
pub struct WorldArgs {
    /// The world directory.
    pub world: PathBuf,
    /// Print JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

/// `terrane chunk ...`
#[derive(clap::Subcommand, Debug)]
pub enum ChunkCmd {
    /// Read chunk (X, Y, Z): a summary, or its raw chunk-v1 bytes with --raw / --out.
    Get {
        /// The world directory.
        world: PathBuf,
        /// Chunk x.
        #[arg(allow_hyphen_values = true)]
        x: i64,
        /// Chunk y.
        #[arg(allow_hyphen_values = true)]
        y: i64,
        /// Chunk z.
        #[arg(allow_hyphen_values = true)]
        z: i64,
        /// Write the raw bytes to stdout.
        #[arg(long, conflicts_with = "out")]
        raw: bool,
        /// Write the raw bytes to this file.
        #[arg(short, long)]
        out: Option<PathBuf>,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Write chunk (X, Y, Z) from a file of raw chunk-v1 bytes (checked against the world's
    /// registries first), as one atomic save.
    Put {
        /// The world directory.
        world: PathBuf,
        /// Chunk x.
        #[arg(allow_hyphen_values = true)]
        x: i64,
        /// Chunk y.
        #[arg(allow_hyphen_values = true)]
        y: i64,
        /// Chunk z.
        #[arg(allow_hyphen_values = true)]
        z: i64,
        /// The file of chunk-v1 bytes.
        file: PathBuf,
    },
}

/// `terrane schem ...`
#[derive(clap::Subcommand, Debug)]
pub enum SchemCmd {
    /// Version, size, offset, palette and block count per state of a Sponge schematic.
    Info {
        /// The .schem file.
        file: PathBuf,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        limits: SchemLimits,
    },
    /// Paste a schematic into a world (registering its block states), block entities
    /// included, one atomic save; block entities that cannot be stored are listed.
    Import {
        /// The world directory.
        world: PathBuf,
        /// The .schem file.
        file: PathBuf,
        /// Minimum corner in the world, `x,y,z` (default: where the schematic says).
        #[arg(long, value_parser = parse_xyz, allow_hyphen_values = true)]
        at: Option<BlockPos>,
        #[command(flatten)]
        limits: SchemLimits,
    },
    /// Write a box of a world as a Sponge v3 schematic, block entities included. For the box a
    /// schematic was pasted into, its Metadata and paste anchor (`Offset`) come back. An
    /// existing file is refused (exit status 2, nothing written) unless --force.
    Export {
        /// The world directory.
        world: PathBuf,
        /// One corner, `x,y,z` (blocks).
        #[arg(long, value_parser = parse_xyz, allow_hyphen_values = true)]
        from: BlockPos,
        /// The opposite corner, `x,y,z` (inclusive).
        #[arg(long, value_parser = parse_xyz, allow_hyphen_values = true)]
        to: BlockPos,
        /// The .schem file to write.
        out: PathBuf,
        /// Replace the file if it exists.
        #[arg(long)]
        force: bool,
        /// Minecraft DataVersion to record (default: the newest the world's blocks were
        /// imported at, else 3955, Minecraft 1.21.1).
        #[arg(long)]
        data_version: Option<i32>,
    },
}

/// Resource bounds for reading a schematic from outside (`ReadOptions`).
#[derive(clap::Args, Debug, Clone)]
pub struct SchemLimits {
    /// Refuse schematics of more blocks than this (raise it for a trusted file).
    #[arg(long, default_value_t = 1 << 26)]
    max_blocks: usize,
    /// Refuse palettes of more entries than this.
    #[arg(long, default_value_t = 1 << 16)]
    max_palette: usize,
    /// Refuse schematics whose NBT inflates to more bytes than this.
    #[arg(long, default_value_t = 1 << 28)]
    max_inflated: usize,
}

/// `terrane regionizer ...`
#[derive(clap::Subcommand, Debug)]
pub enum RegionizerCmd {
    /// Replay an operation log from stdin (or --input), one JSON state per operation on
    /// stdout. Flags as terrane-regionizer-replay: --shift N, --create-radius N,
    /// --merge-radius N, --recalc-count N, --max-dead F, --dim 2|3, --final-only.
    Replay {
        /// Read the log from this file instead of stdin.
        #[arg(long)]
        input: Option<PathBuf>,
        /// The replay flags.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        flags: Vec<String>,
    },
    /// Write a seeded 2D operation log to stdout, for `replay`: loads within ±SPAN chunks,
    /// unloads, and ticks and releases of the sections around loaded chunks, some of them
    /// misuse. The same seed gives the same bytes on every machine.
    Generate {
        /// Number of operations.
        #[arg(long, default_value_t = 200_000)]
        ops: usize,
        /// Chunk loads within ±SPAN chunks of the origin on each axis.
        #[arg(long, default_value_t = 200)]
        span: i32,
        /// The section shift the ticks and releases address (0..=6).
        #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(0..=6))]
        shift: u32,
        /// The generator's seed.
        #[arg(long, default_value_t = 200)]
        seed: u64,
    },
}

/// Parses `x,y,z`.
/// An area (`X,Z`, areas of 256 × 256 blocks).
pub fn parse_area(s: &str) -> Result<terrane::section::AreaId, String> {
    let (x, z) = s.split_once(',').ok_or_else(|| format!("{s:?}: expected X,Z"))?;
    let n = |v: &str| v.trim().parse::<i32>().map_err(|e| format!("{s:?}: {e}"));
    Ok(terrane::section::AreaId::new(n(x)?, n(z)?))
}

pub fn parse_xyz(s: &str) -> Result<BlockPos, String> {
    let v: Vec<i64> = s
        .split(',')
        .map(|t| t.trim().parse::<i64>().map_err(|_| format!("{s:?} is not x,y,z (integers)")))
        .collect::<Result<_, _>>()?;
    match v[..] {
        [x, y, z] => Ok(BlockPos::new(x, y, z)),
        _ => Err(format!("{s:?} is not x,y,z (three integers)")),
    }
}

pub fn info(a: &WorldArgs) -> Result<(), Fail> {
    let world = World::open_read_only(&a.world)?;
    let i = world.info()?;
    if a.json {
        let v = json!({
            "world": a.world.display().to_string(),
            "backend": i.backend.name(),
            "tick": i.tick,
            "block_states": i.block_states,
            "unused_spellings": i.unused_spellings,
            "components": i.components,
            "chunks": i.levels.chunks,
            "keys": i.levels.keys,
            "bytes": i.levels.bytes,
            "entities": i.entities,
            "generated_columns": i.generated_columns,
            "disk_bytes": i.disk_bytes,
            "regions_log": a.world.join("regions.log").exists(),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    outln!("world      {}", a.world.display());
    outln!("backend    {}", i.backend);
    outln!("game tick  {}", i.tick);
    if i.unused_spellings > 0 {
        outln!(
            "registries {} block states ({} more ids: unused spellings of them), {} components",
            i.block_states,
            i.unused_spellings,
            i.components
        );
    } else {
        outln!("registries {} block states, {} components", i.block_states, i.components);
    }
    outln!("entities   {}", i.entities);
    outln!("generated  {} columns (distance graph)", i.generated_columns);
    outln!("level   chunks       keys        bytes");
    for (l, name) in ["L0", "L1", "L2"].iter().enumerate() {
        outln!(
            "{name:5} {:8} {:10} {:12}",
            i.levels.chunks[l],
            i.levels.keys[l],
            i.levels.bytes[l]
        );
    }
    outln!("on disk    {} bytes", i.disk_bytes);
    Ok(())
}

pub fn verify(a: &WorldArgs) -> Result<(), Fail> {
    let t = Instant::now();
    let pb = crate::progress::bar(a.json, " tiles");
    pb.set_message("verifying");
    pb.set_prefix("(64 x 64 columns each)");
    let r = crate::open_one_pass(&a.world).and_then(|w| {
        w.verify_with(&mut |done, tiles| {
            pb.set_length(tiles as u64);
            pb.set_position(done as u64);
        })
    });
    pb.finish_and_clear();
    let r = match r {
        Ok(r) => r,
        Err(e) => {
            if a.json {
                outln!("{}", json!({"ok": false, "error": e.to_string()}));
            }
            if let terrane::Error::DuplicateStates(states) = &e {
                return Err(Fail::other(format!(
                    "{world}: verification failed: {}\n(`terrane repair {world}` merges them into \
                     one id each)",
                    terrane::block_states::describe(states),
                    world = a.world.display()
                )));
            }
            return Err(
                Fail::from(e).context(format_args!("{}: verification failed", a.world.display()))
            );
        }
    };
    let chunks: usize = r.levels.chunks.iter().sum();
    if a.json {
        let v = json!({
            "ok": true,
            "chunks": r.levels.chunks,
            "entities": r.entities,
            "entity_refs": r.entity_refs,
            "generated_columns": r.generated_columns,
            "objects_checked": r.objects_checked,
            "seconds": t.elapsed().as_secs_f64(),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!(
            "ok: {chunks} chunks decode against the registries, each at one level (L0 {}, L1 {}, L2 {}); \
             {} entity references resolve to {} entities; distance graph of {} columns decodes{} ({:.2} s)",
            r.levels.chunks[0],
            r.levels.chunks[1],
            r.levels.chunks[2],
            r.entity_refs,
            r.entities,
            r.generated_columns,
            if r.objects_checked > 0 {
                format!("; {} objects' checksums hold", r.objects_checked)
            } else {
                String::new()
            },
            t.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// `terrane repair`: opens a damaged world keeping every intact object, reports each lost
/// one, merges the block states stored under several ids (`World::merge_duplicate_states`),
/// and verifies the result.
pub fn repair(a: &WorldArgs) -> Result<(), Fail> {
    let mut world = World::builder().repair(true).open(&a.world)?;
    let report = world.repair_report();
    let merged = world.merge_duplicate_states();
    world.close()?;
    let merged = merged.map_err(|e| {
        let lost =
            report.as_deref().map(|r| format!(" (opening it lost: {r})")).unwrap_or_default();
        Fail::from(e).context(format_args!(
            "{}{lost}: merging the block states stored under several ids stopped; the world \
             still opens, and `terrane repair` again finishes the job",
            a.world.display()
        ))
    })?;
    let verified = crate::open_one_pass(&a.world).and_then(|w| w.verify());
    if a.json {
        let states: Vec<_> = merged
            .states
            .iter()
            .map(|d| {
                let spellings: Vec<_> =
                    d.spellings.iter().map(|(b, n)| json!({"id": b.0, "name": n})).collect();
                json!({"canonical": d.canonical, "id": d.id.map(|b| b.0), "spellings": spellings})
            })
            .collect();
        let v = json!({
            "lost": report,
            "merged_states": states,
            "registered": merged.registered,
            "chunks_rewritten": merged.chunks,
            "ok": verified.is_ok(),
            "error": verified.as_ref().err().map(ToString::to_string),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        match &report {
            Some(r) => outln!("repaired {}: {r}", a.world.display()),
            None => outln!("{}: nothing was damaged, nothing lost", a.world.display()),
        }
        if merged.states.is_empty() {
            outln!("{}: every block state has one id", a.world.display());
        } else {
            let [l0, l1, l2] = merged.chunks;
            outln!(
                "{}: merged {} block states stored under several ids into one id each: {} \
                 chunks rewritten (L0 {l0}, L1 {l1}, L2 {l2}), {} canonical spellings registered",
                a.world.display(),
                merged.states.len(),
                l0 + l1 + l2,
                merged.registered
            );
            for d in &merged.states {
                outln!("  {d}");
            }
        }
    }
    match verified {
        Ok(_) => Ok(()),
        Err(e) => Err(Fail::other(format!(
            "{}: repaired, but the world does not verify: {e}",
            a.world.display()
        ))),
    }
}

/// `terrane copy`: a whole world into a new one of any backend, with a progress bar, then
/// verified.
pub fn copy(src: &Path, dst: &Path, backend: Option<terrane::Backend>) -> Result<(), Fail> {
    let t = Instant::now();
    let from = crate::open_one_pass(src)?;
    let pb = crate::progress::bytes_bar(false, 0);
    pb.set_message("copy");
    let report = terrane::copy::copy_world(&from, dst, backend, |objects, bytes| {
        pb.set_position(bytes);
        pb.set_prefix(format!("{objects} objects"));
    });
    pb.finish_and_clear();
    let report = report?;
    // The source's caches are full by now, and nothing reads it again.
    drop(from);
    let copy = crate::open_one_pass(dst)?;
    let (chunks, note) = match copy.verify() {
        Ok(v) => (v.levels.chunks.iter().sum::<usize>(), String::new()),
        // The last check `verify` makes: the copy is whole, and holds what the source held.
        Err(terrane::Error::DuplicateStates(d)) => (
            copy.info()?.levels.chunks.iter().sum(),
            format!(
                "; as in the source, {} (`terrane repair {}` merges them)",
                terrane::block_states::describe(&d),
                dst.display()
            ),
        ),
        Err(e) => {
            return Err(
                Fail::from(e).context(format_args!("{}: the copy does not verify", dst.display()))
            );
        }
    };
    drop(copy);
    outln!(
        "copied {} objects ({:.1} MiB) from {} to {} in {:.2} s; the copy verifies \
         ({} chunks){note}",
        report.objects,
        report.bytes as f64 / (1 << 20) as f64,
        src.display(),
        dst.display(),
        t.elapsed().as_secs_f64(),
        chunks
    );
    Ok(())
}

pub fn create(
    world: &Path,
    backend: Option<terrane::Backend>,
    blocks: Option<&Path>,
    json: bool,
) -> Result<(), Fail> {
    // Everything that can be refused is checked before anything is created.
    let mut schema = terrane::default_schema();
    if let Some(f) = blocks {
        let text =
            fs::read_to_string(f).map_err(|e| Fail::usage(format!("{}: {e}", f.display())))?;
        let mut states = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            // Registered by their canonical form (register_states): one entry per state.
            terrane::chunk::block_state::parse(line)
                .map_err(|e| Fail::usage(format!("{}:{}: {e}", f.display(), n + 1)))?;
            states.push(line);
        }
        terrane::schem::register_states(&mut schema, states)?;
    }
    let mut b = World::builder().schema(schema);
    if let Some(backend) = backend {
        b = b.backend(backend);
    }
    let w = b.create(world)?;
    let (backend, states) = (w.backend(), w.schema().blocks().len());
    w.close()?;
    if json {
        let v = json!({ "world": world.display().to_string(), "backend": backend.name(), "block_states": states });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!("created {} ({backend} backend, {states} block states)", world.display());
    }
    Ok(())
}

pub fn chunk(c: ChunkCmd) -> Result<(), Fail> {
    match c {
        ChunkCmd::Get { world, x, y, z, raw, out, json } => {
            let w = World::open_read_only(&world)?;
            let pos = ChunkPos::new(x, y, z);
            let Some((level, bytes)) = w.tiered().get_chunk_at(0, pos)? else {
                return Err(Fail::usage(format!(
                    "chunk ({x}, {y}, {z}) is not in {}",
                    world.display()
                )));
            };
            if raw {
                match std::io::stdout().write_all(&bytes) {
                    // A closed pipe ends the command quietly (see `write_stdout`).
                    Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                        return Err(Fail::other(format!("stdout: {e}")));
                    }
                    _ => return Ok(()),
                }
            }
            if let Some(out) = out {
                terrane::export::write_whole(&out, &bytes)?;
                outln!("wrote {} bytes of chunk ({x}, {y}, {z}) to {}", bytes.len(), out.display());
                return Ok(());
            }
            let view = ChunkView::parse(&bytes)?;
            let mut counts: BTreeMap<String, u32> = BTreeMap::new();
            view.for_each_block(|_, b| {
                *counts
                    .entry(w.schema().blocks().get(b.0).unwrap_or("?").to_string())
                    .or_default() += 1;
            });
            if json {
                let v = json!({
                    "pos": [x, y, z],
                    "level": format!("{level:?}"),
                    "bytes": bytes.len(),
                    "bits_per_block": view.bits_per_block(),
                    "blocks": counts,
                    "layered_blocks": view.layered_block_count(),
                    "entities": view.entities().len(),
                });
                outln!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                outln!(
                    "chunk ({x}, {y}, {z}) at {level:?}: {} bytes, {} bits per block",
                    bytes.len(),
                    view.bits_per_block()
                );
                for (name, n) in counts {
                    outln!("  {n:5}  {name}");
                }
                outln!(
                    "  {} extra-layer blocks, {} entities",
                    view.layered_block_count(),
                    view.entities().len()
                );
            }
            Ok(())
        }
        ChunkCmd::Put { world, x, y, z, file } => {
            let bytes =
                fs::read(&file).map_err(|e| Fail::usage(format!("{}: {e}", file.display())))?;
            let mut w = World::open(&world)?;
            Chunk::decode(&bytes, w.schema()).map_err(|e| {
                Fail::usage(format!("{} is not a chunk of this world: {e}", file.display()))
            })?;
            let mut save = TickSave::new();
            save.put_chunk(0, ChunkPos::new(x, y, z), bytes.clone());
            let tick = w.tick();
            w.save_tick(tick, save)?;
            w.close()?;
            outln!("wrote chunk ({x}, {y}, {z}): {} bytes, one atomic save", bytes.len());
            Ok(())
        }
    }
}

fn read_schem(file: &Path, limits: &SchemLimits) -> Result<Schematic, Fail> {
    let bytes = fs::read(file).map_err(|e| Fail::usage(format!("{}: {e}", file.display())))?;
    let opts = terrane::snapshot::ReadOptions::new()
        .max_blocks(limits.max_blocks)
        .max_palette(limits.max_palette)
        .max_inflated(limits.max_inflated);
    Schematic::read_with(&bytes, &opts).map_err(|e| {
        use terrane::snapshot::Error as E;
        let file = file.display();
        Fail::usage(match e {
            // Says itself that the file is no schematic, and why.
            E::NotASchematic(_) => format!("{file}: {e}"),
            // A bound of this command: its flag first.
            E::OverLimit { what, found, limit, flag, .. } => format!(
                "{file}: --{flag} {limit} refuses it (the schematic's {what}: {found}); raise \
                 --{flag} if the file is trusted"
            ),
            E::TooLarge { limit } => format!(
                "{file}: --max-inflated {limit} refuses it (the schematic inflates to more \
                 bytes); raise --max-inflated if the file is trusted"
            ),
            e => format!("{file}: not a readable Sponge schematic: {e}"),
        })
    })
}

pub fn schem(c: SchemCmd) -> Result<(), Fail> {
    match c {
        SchemCmd::Info { file, json, limits } => {
            let s = read_schem(&file, &limits)?;
            let mut counts = vec![0u64; s.palette().len()];
            for id in s.ids().iter() {
                counts[id as usize] += 1;
            }
            let mut per_state: Vec<(&str, u64)> =
                s.palette().iter().map(String::as_str).zip(counts.iter().copied()).collect();
            per_state.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
            if json {
                let v = json!({
                    "file": file.display().to_string(),
                    "version": s.version,
                    "data_version": s.data_version,
                    "size": [s.width(), s.height(), s.length()],
                    "volume": s.volume(),
                    "offset": s.offset,
                    "origin": s.origin(),
                    "world_min": s.world_min(),
                    "palette_size": s.palette().len(),
                    "blocks": per_state.iter().map(|(n, c)| json!({"state": n, "count": c})).collect::<Vec<_>>(),
                    "block_entities": s.block_entities.len(),
                    "entities": s.entities.len(),
                    "biomes": s.biomes.is_some(),
                });
                outln!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                outln!("{}", file.display());
                outln!(
                    "  Sponge v{}, DataVersion {}",
                    s.version,
                    s.data_version.map_or("none".to_string(), |d| d.to_string())
                );
                outln!(
                    "  size     {} x {} x {} (w x h x l) = {} blocks",
                    s.width(),
                    s.height(),
                    s.length(),
                    s.volume()
                );
                outln!(
                    "  offset   {}   origin {}   world min {}",
                    crate::xyz(s.offset),
                    s.origin().map_or_else(|| "none".to_string(), crate::xyz),
                    crate::xyz(s.world_min())
                );
                outln!(
                    "  palette  {} states; {} block entities, {} entities, biomes {}",
                    s.palette().len(),
                    s.block_entities.len(),
                    s.entities.len(),
                    if s.biomes.is_some() { "yes" } else { "no" }
                );
                for (name, n) in per_state {
                    outln!("  {n:9}  {name}");
                }
            }
            Ok(())
        }
        SchemCmd::Import { world, file, at, limits } => {
            let s = read_schem(&file, &limits)?;
            let mut w = World::open(&world)?;
            let p = terrane::schem::paste(&mut w, &s, at)?;
            w.close()?;
            outln!(
                "pasted {} blocks and {} block entities of {} at {}..{} ({} chunks, one atomic save)",
                p.blocks,
                p.block_entities.placed,
                file.display(),
                p.bbox.min(),
                p.bbox.max(),
                p.chunks
            );
            if !p.block_entities.skipped.is_empty() {
                outln!("skipped {} block entities:", p.block_entities.skipped.len());
                for k in &p.block_entities.skipped {
                    outln!("  {} at {}: {}", k.id, k.pos, k.reason);
                }
            }
            Ok(())
        }
        SchemCmd::Export { world, from, to, out, force, data_version } => {
            let bbox = BlockBox::new(from, to);
            let w = World::open_read_only(&world)?;
            let (dv, why) = match (data_version, terrane::java::data_version(&w)?) {
                (Some(v), _) => (v, "as asked"),
                (None, Some(v)) => (v, "the newest the world's blocks were imported at"),
                (None, None) => {
                    (terrane::java::NATIVE_DATA_VERSION, "terrane's default, Minecraft 1.21.1")
                }
            };
            let overwrite = crate::anvil::overwrite(force, false);
            terrane::schem::check_destination(&out, overwrite)?;
            let schem = terrane::schem::export_box(&w, bbox, Some(dv))?;
            let bytes = terrane::schem::write_schematic(&schem, &out, overwrite)?;
            let [sx, sy, sz] = bbox.size();
            outln!(
                "wrote {} ({sx} x {sy} x {sz} blocks, {} states, {} block entities, {} bytes, DataVersion {dv}: {why})",
                out.display(),
                schem.palette().len(),
                schem.block_entities.len(),
                bytes
            );
            Ok(())
        }
    }
}

pub fn regionizer(c: RegionizerCmd) -> Result<(), Fail> {
    match c {
        RegionizerCmd::Replay { input, flags } => {
            let opts = ReplayOptions::from_args(flags)
                .map_err(|e| Fail::usage(format!("{e}\n{}", replay::USAGE)))?;
            let stdout = std::io::stdout().lock();
            let out = std::io::BufWriter::new(stdout);
            let stats = match input {
                Some(p) => {
                    let f = fs::File::open(&p)
                        .map_err(|e| Fail::usage(format!("{}: {e}", p.display())))?;
                    replay::replay(BufReader::new(f), out, &opts)
                }
                None => replay::replay(std::io::stdin().lock(), out, &opts),
            }
            .or_else(|e| match e {
                terrane::regionizer::Error::ReplayParse { .. } => Err(Fail::usage(e.to_string())),
                // A closed pipe ends the command quietly (see `write_stdout`).
                terrane::regionizer::Error::Io(io)
                    if io.kind() == std::io::ErrorKind::BrokenPipe =>
                {
                    std::process::exit(0)
                }
                e => Err(Fail::other(e.to_string())),
            })?;
            tracing::info!(ops = stats.ops, errors = stats.errors, "replayed");
            if let Some(line) = replay::time_line(&stats) {
                eprintln!("{line}");
            }
            Ok(())
        }
        RegionizerCmd::Generate { ops, span, shift, seed } => {
            use terrane::regionizer::oplog::{LogMix, mixed_log};
            let log = mixed_log(seed, ops, span, shift, LogMix::default());
            crate::out::write_stdout(format_args!("{log}"));
            Ok(())
        }
    }
}
