//! `terrane backup`: incremental backups into a repository folder, and `list`, `verify`,
//! `prune` of one.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;

use terrane::backup::{Keep, Repo};

use crate::Fail;
use crate::out::mib;

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
                    "packs_deleted": p.packs_deleted, "packs_rewritten": p.packs_rewritten,
                    "bytes_freed": p.bytes_freed });
                outln!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                let verb = if *dry_run { "would remove" } else { "removed" };
                outln!(
                    "{verb} {} backup(s) {:?}, kept {:?}; {} pack file(s) deleted ({} of them \
                     rewritten with only what kept backups need), {:.2} MiB freed",
                    p.removed.len(),
                    p.removed,
                    p.kept,
                    p.packs_deleted,
                    p.packs_rewritten,
                    mib(p.bytes_freed)
                );
            }
            Ok(())
        }
        None => {
            let (world, repo) =
                (a.world.as_ref().expect("required"), a.repo.as_ref().expect("required"));
            let t = Instant::now();
            // Writable: the world records what it changes after this backup, so that the
            // next one reads only that (`terrane::backup_changes`). A world that cannot be
            // opened for writing (a read-only copy, files of another user) is backed up whole.
            let w = match terrane::World::builder().one_pass(true).open(world) {
                Ok(w) => w,
                Err(e) => match crate::open_one_pass(world) {
                    Ok(w) => {
                        tracing::warn!(
                            "{}: not writable ({e}): backed up read-only, reading every object",
                            world.display()
                        );
                        w
                    }
                    Err(_) => return Err(e.into()),
                },
            };
            let r = Repo::open_or_create(repo)?;
            // The newest backup's size: the length this one is expected to reach.
            let expected = match r.latest()? {
                Some(id) => r.info(id)?.bytes,
                None => 0,
            };
            let pb = crate::progress::bytes_bar(a.json, expected);
            pb.set_message("backup");
            let b = w.backup_source().backup_with(&r, &mut |objects, bytes| {
                if objects % 256 == 0 {
                    crate::progress::grow(&pb, bytes);
                    pb.set_prefix(format!("{objects} objects"));
                }
            });
            pb.finish_and_clear();
            let b = b?;
            let secs = t.elapsed().as_secs_f64();
            if a.json {
                let v = json!({ "id": b.id, "parent": b.parent, "objects": b.objects,
                    "bytes": b.bytes, "read": b.read, "changed": b.changed, "changed_bytes": b.changed_bytes,
                    "removed": b.removed, "pack_bytes": b.pack_bytes,
                    "manifest_bytes": b.manifest_bytes, "seconds": secs });
                outln!("{}", serde_json::to_string_pretty(&v)?);
            } else {
                outln!(
                    "backup {} of {}: {} objects ({:.2} MiB), {} read; {} changed ({:.2} MiB), {} removed since backup {}; wrote {:.2} MiB in {:.2} s",
                    b.id,
                    world.display(),
                    b.objects,
                    mib(b.bytes),
                    b.read,
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
                    "created": crate::when::show(b.created_ms),
                    "source": b.source, "objects": b.objects, "bytes": b.bytes,
                    "changes": b.changes, "new_bytes": b.new_bytes,
                    "manifest_bytes": b.manifest_bytes })
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    outln!(
        "{:>6} {:>10} {:>20} {:>10} {:>11} {:>10}  source",
        "id",
        "tick",
        "taken (UTC)",
        "objects",
        "MiB",
        "added MiB"
    );
    for b in &backups {
        outln!(
            "{:>6} {:>10} {:>20} {:>10} {:>11.2} {:>10.2}  {}",
            b.id,
            b.tick,
            crate::when::show(b.created_ms),
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
