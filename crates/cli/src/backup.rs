//! `terrane backup` (incremental backups into a repository folder, and `list`, `verify`,
//! `prune` of one) and `terrane restore` (a backup into a new world).

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use terrane::backup::{Keep, Repo};
use terrane::section::AreaId;
use terrane::{Backend, World};

use crate::{Fail, backend_arg};

/// Flags of `terrane backup`.
#[derive(clap::Args, Debug)]
#[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
pub struct BackupArgs {
    #[command(subcommand)]
    cmd: Option<BackupCmd>,
    /// The world (a directory or a connection string).
    #[arg(required = true)]
    world: Option<PathBuf>,
    /// The backup repository: a folder, created when it does not exist.
    #[arg(required = true)]
    repo: Option<PathBuf>,
    /// Print JSON on stdout.
    #[arg(long)]
    json: bool,
}

/// What `terrane backup` does besides taking a backup.
#[derive(clap::Subcommand, Debug)]
enum BackupCmd {
    /// The backups of a repository: id, tick, when, objects, what each added.
    List {
        /// The backup repository.
        repo: PathBuf,
        /// Print JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Read every manifest and piece of a repository and say which backups restore whole.
    /// Exit status 1 when anything is damaged.
    Verify {
        /// The backup repository.
        repo: PathBuf,
        /// Print JSON on stdout.
        #[arg(long)]
        json: bool,
    },
    /// Remove backups; every kept backup stays restorable, and the pack files no kept backup
    /// needs are deleted. The newest backup is always kept.
    Prune {
        /// The backup repository.
        repo: PathBuf,
        /// Keep the newest N backups.
        #[arg(long, value_name = "N", default_value_t = 1)]
        keep_last: usize,
        /// Keep this backup too (repeatable).
        #[arg(long, value_name = "ID")]
        keep: Vec<u64>,
        /// Say what would be removed, remove nothing.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON on stdout.
        #[arg(long)]
        json: bool,
    },
}

/// Flags of `terrane restore`.
#[derive(clap::Args, Debug)]
pub struct RestoreArgs {
    /// The backup repository.
    repo: PathBuf,
    /// The new world: a directory that must not exist or be empty, or a connection string
    /// whose schema holds no world. With --area, the existing world to restore areas of.
    world: PathBuf,
    /// Restore only this area of WORLD, which must exist (`X,Z` in areas of 256 × 256 blocks:
    /// area 0,0 is blocks 0..255 on x and z, area -1,0 blocks -256..-1 on x; repeatable). Each
    /// area is one atomic batch; an area with chunks loaded, or leased by a running server,
    /// is refused.
    #[arg(long, value_name = "X,Z", value_parser = crate::commands::parse_area)]
    area: Vec<AreaId>,
    /// The dimension of --area: 0 the Overworld, 1 the Nether, 2 the End.
    #[arg(long, default_value_t = 0)]
    dim: u64,
    /// Restore only the blocks of the box from this corner (`x,y,z`) to --to, in the
    /// existing world WORLD (the Overworld), in one atomic save. Entities and block entities
    /// in the box are left; restore the area for those.
    #[arg(long, value_name = "X,Y,Z", value_parser = crate::commands::parse_xyz, requires = "to", conflicts_with = "area")]
    from: Option<terrane::BlockPos>,
    /// The other corner of --from's box.
    #[arg(long, value_name = "X,Y,Z", value_parser = crate::commands::parse_xyz, requires = "from")]
    to: Option<terrane::BlockPos>,
    /// The backup to restore (`terrane backup list REPO`); default the newest.
    #[arg(long, value_name = "ID")]
    at: Option<u64>,
    /// Backend of a new directory world: rocksdb (default) or blockfile.
    #[arg(long, value_parser = backend_arg)]
    backend: Option<Backend>,
    /// Print JSON on stdout.
    #[arg(long)]
    json: bool,
}

fn mib(b: u64) -> f64 {
    b as f64 / (1024.0 * 1024.0)
}

/// `terrane backup`.
pub fn run(a: &BackupArgs) -> Result<(), Fail> {
    match &a.cmd {
        Some(BackupCmd::List { repo, json }) => list(repo, *json),
        Some(BackupCmd::Verify { repo, json }) => verify(repo, *json),
        Some(BackupCmd::Prune { repo, keep_last, keep, dry_run, json }) => {
            let r = Repo::open_to_write(repo)?;
            let keep = Keep { last: *keep_last, ids: keep.clone() };
            let p = r.prune(&keep, *dry_run)?;
            if *json {
                let v = json!({ "removed": p.removed, "kept": p.kept, "dry_run": dry_run,
                    "packs_deleted": p.packs_deleted, "bytes_freed": p.bytes_freed });
                outln!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                let verb = if *dry_run { "would remove" } else { "removed" };
                outln!(
                    "{verb} {} backup(s) {:?}, kept {:?}; {} pack file(s) deleted, {:.2} MiB freed",
                    p.removed.len(),
                    p.removed,
                    p.kept,
                    p.packs_deleted,
                    mib(p.bytes_freed)
                );
            }
            Ok(())
        }
        None => {
            let (world, repo) =
                (a.world.as_ref().expect("required"), a.repo.as_ref().expect("required"));
            let t = Instant::now();
            let w = World::open_read_only(world)?;
            let r = Repo::open_or_create(repo)?;
            let b = w.backup_incremental(&r)?;
            let secs = t.elapsed().as_secs_f64();
            if a.json {
                let v = json!({ "id": b.id, "parent": b.parent, "objects": b.objects,
                    "bytes": b.bytes, "changed": b.changed, "changed_bytes": b.changed_bytes,
                    "removed": b.removed, "pack_bytes": b.pack_bytes,
                    "manifest_bytes": b.manifest_bytes, "seconds": secs });
                outln!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                outln!(
                    "backup {} of {}: {} objects ({:.2} MiB); {} changed ({:.2} MiB), {} removed since backup {}; wrote {:.2} MiB in {:.2} s",
                    b.id,
                    world.display(),
                    b.objects,
                    mib(b.bytes),
                    b.changed,
                    mib(b.changed_bytes),
                    b.removed,
                    b.parent,
                    mib(b.written_bytes()),
                    secs
                );
            }
            Ok(())
        }
    }
}

fn list(repo: &std::path::Path, as_json: bool) -> Result<(), Fail> {
    let backups = Repo::open(repo)?.list()?;
    if as_json {
        let v: Vec<_> = backups
            .iter()
            .map(|b| {
                json!({ "id": b.id, "tick": b.tick, "created_ms": b.created_ms,
                    "source": b.source, "objects": b.objects, "bytes": b.bytes,
                    "changes": b.changes, "new_bytes": b.new_bytes,
                    "manifest_bytes": b.manifest_bytes })
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    outln!(
        "{:>6} {:>10} {:>14} {:>10} {:>11} {:>10}  source",
        "id",
        "tick",
        "created (ms)",
        "objects",
        "MiB",
        "added MiB"
    );
    for b in &backups {
        outln!(
            "{:>6} {:>10} {:>14} {:>10} {:>11.2} {:>10.2}  {}",
            b.id,
            b.tick,
            b.created_ms,
            b.objects,
            mib(b.bytes),
            mib(b.new_bytes + b.manifest_bytes),
            b.source
        );
    }
    Ok(())
}

fn verify(repo: &std::path::Path, as_json: bool) -> Result<(), Fail> {
    let v = Repo::open(repo)?.verify()?;
    if as_json {
        let backups: Vec<_> = v
            .backups
            .iter()
            .map(|b| {
                json!({ "id": b.id, "objects": b.objects, "whole": b.is_whole(),
                "damaged_objects": b.damaged.len(), "unrestorable": b.unrestorable })
            })
            .collect();
        let damaged: Vec<_> = v
            .damaged
            .iter()
            .map(|(p, d)| json!({ "file": p.display().to_string(), "detail": d }))
            .collect();
        let out = json!({ "clean": v.is_clean(), "backups": backups, "damaged": damaged,
            "pieces": v.pieces, "bytes": v.bytes, "unused_packs": v.unused_packs.len() });
        outln!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        for b in &v.backups {
            let state = match (&b.unrestorable, b.damaged.len()) {
                (Some(why), _) => format!("cannot be restored: {why}"),
                (None, 0) => "whole".to_string(),
                (None, n) => format!("{n} object(s) damaged or missing"),
            };
            outln!("backup {}: {} objects, {state}", b.id, b.objects);
        }
        for (p, d) in &v.damaged {
            outln!("damaged: {}: {d}", p.display());
        }
        outln!(
            "{} pieces checked ({:.2} MiB); {} pack file(s) no backup needs (the next prune deletes them)",
            v.pieces,
            mib(v.bytes),
            v.unused_packs.len()
        );
    }
    if v.is_clean() { Ok(()) } else { Err(Fail::other("the repository is damaged (see above)")) }
}

/// `terrane restore`.
pub fn restore(a: &RestoreArgs) -> Result<(), Fail> {
    let t = Instant::now();
    let repo = Repo::open(&a.repo)?;
    let id = match a.at {
        Some(id) => id,
        None => repo.latest()?.ok_or_else(|| {
            Fail::usage(format!("{}: the repository holds no backup yet", a.repo.display()))
        })?,
    };
    let contents = repo.contents(id)?;
    if !a.area.is_empty() {
        return restore_areas(a, &contents);
    }
    if let (Some(from), Some(to)) = (a.from, a.to) {
        let mut world = World::open(&a.world)?;
        let r = world.restore_box(&contents, terrane::BlockBox::new(from, to))?;
        world.close()?;
        if a.json {
            let v = json!({ "id": contents.id(), "tick": contents.tick(), "chunks": r.chunks,
                "chunks_written": r.chunks_written, "blocks_changed": r.blocks_changed });
            outln!("{}", serde_json::to_string_pretty(&v)?);
        } else {
            outln!(
                "box restored to backup {} (tick {}): {} blocks set back in {} of its {} chunks",
                contents.id(),
                contents.tick(),
                r.blocks_changed,
                r.chunks_written,
                r.chunks
            );
        }
        return Ok(());
    }
    let r = terrane::restore_world(&contents, &a.world, a.backend)?;
    let secs = t.elapsed().as_secs_f64();
    if a.json {
        let v = json!({ "id": id, "tick": contents.tick(), "world": a.world.display().to_string(),
            "objects": r.objects, "bytes": r.bytes, "seconds": secs });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!(
            "restored backup {id} (tick {}) into {}: {} objects, {:.2} MiB in {:.2} s",
            contents.tick(),
            a.world.display(),
            r.objects,
            mib(r.bytes),
            secs
        );
    }
    Ok(())
}

/// `terrane restore --area`: areas of an existing world, one atomic batch each.
fn restore_areas(
    a: &RestoreArgs,
    contents: &terrane::backup::BackupContents<'_>,
) -> Result<(), Fail> {
    let mut world = World::open(&a.world)?;
    let mut rows = Vec::new();
    for area in &a.area {
        let r = world.restore_area(contents, a.dim, *area)?;
        if !a.json {
            outln!(
                "area {},{} (dimension {}) restored to backup {} (tick {}): {} objects written ({:.2} MiB), {} removed, {} unchanged, of {} before",
                area.x,
                area.z,
                a.dim,
                contents.id(),
                contents.tick(),
                r.objects_written,
                mib(r.bytes_written),
                r.objects_removed,
                r.objects_unchanged,
                r.objects_before
            );
        }
        rows.push(json!({ "x": area.x, "z": area.z, "objects_before": r.objects_before,
            "objects_written": r.objects_written, "bytes_written": r.bytes_written,
            "objects_removed": r.objects_removed, "objects_unchanged": r.objects_unchanged }));
    }
    world.close()?;
    if a.json {
        let v =
            json!({ "id": contents.id(), "tick": contents.tick(), "dim": a.dim, "areas": rows });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    }
    Ok(())
}
