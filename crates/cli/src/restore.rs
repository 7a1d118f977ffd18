//! `terrane restore`: a backup into a new world, or areas and boxes of an existing world as
//! a backup holds them. A world `terrane serve` is playing is restored by that server,
//! through its control socket (terrane-valence's `control`).

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use terrane::backup::{BackupContents, Repo};
use terrane::section::AreaId;
use terrane::{Backend, BlockBox, BlockPos, World};
use terrane_valence::{LiveRestoreReport, LiveRestoreRequest};

use crate::out::mib;
use crate::{Fail, backend_arg};

/// Flags of `terrane restore`.
#[derive(clap::Args, Debug)]
pub struct RestoreArgs {
    /// The backup repository.
    repo: PathBuf,
    /// The new world: a directory that must not exist or be empty, or a connection string
    /// whose schema holds no world. With --area or --from, the existing world to restore
    /// part of; when `terrane serve` is playing it, the server restores it.
    world: PathBuf,
    /// Restore only this area of WORLD, which must exist (`X,Z` in areas of 256 × 256 blocks:
    /// area 0,0 is blocks 0..255 on x and z, area -1,0 blocks -256..-1 on x; repeatable). Each
    /// area is one atomic batch; an area leased by another server is refused. A server
    /// playing WORLD saves first, restores between two ticks and sends the area's columns
    /// again to its players.
    #[arg(long, value_name = "X,Z", value_parser = crate::commands::parse_area)]
    area: Vec<AreaId>,
    /// The dimension of --area: 0 the Overworld, 1 the Nether, 2 the End.
    #[arg(long, default_value_t = 0)]
    dim: u64,
    /// Restore only the blocks of the box from this corner (`x,y,z`) to --to, in the
    /// existing world WORLD (the Overworld), in one atomic save. Entities and block entities
    /// in the box are left; restore the area for those.
    #[arg(long, value_name = "X,Y,Z", value_parser = crate::commands::parse_xyz, requires = "to", conflicts_with = "area")]
    from: Option<BlockPos>,
    /// The other corner of --from's box.
    #[arg(long, value_name = "X,Y,Z", value_parser = crate::commands::parse_xyz, requires = "from")]
    to: Option<BlockPos>,
    /// The backup to restore (`terrane backup list REPO`); default the newest.
    #[arg(long, value_name = "ID")]
    at: Option<u64>,
    /// Restore the world as it was at this moment: the newest backup taken then or before.
    /// A date (`2026-11-28T12:00:00Z`) or an age (`45s`, `90m`, `1h30m`, `2d`).
    #[arg(long, value_name = "WHEN", value_parser = crate::when::parse_when, conflicts_with = "at")]
    as_of: Option<u64>,
    /// The control socket of the `terrane serve` playing WORLD (default: WORLD/serve.sock,
    /// used when WORLD is in use by a server).
    #[arg(long, value_name = "PATH")]
    control: Option<PathBuf>,
    /// Backend of a new directory world: rocksdb (default) or blockfile (one file that
    /// rewrites its whole index at every save: for worlds of a few thousand columns).
    #[arg(long, value_parser = backend_arg)]
    backend: Option<Backend>,
    /// Print JSON on stdout.
    #[arg(long)]
    json: bool,
}

/// `terrane restore`.
pub fn run(a: &RestoreArgs) -> Result<(), Fail> {
    let t = Instant::now();
    let repo = Repo::open(&a.repo)?;
    let id = match (a.at, a.as_of) {
        (Some(id), _) => id,
        (None, Some(ms)) => repo.taken_by(ms)?.ok_or_else(|| {
            Fail::usage(format!(
                "{}: no backup was taken at or before {} (`terrane backup list` shows when each was)",
                a.repo.display(),
                crate::when::show(ms)
            ))
        })?,
        (None, None) => repo.latest()?.ok_or_else(|| {
            Fail::usage(format!("{}: the repository holds no backup yet", a.repo.display()))
        })?,
    };
    let contents = repo.contents(id)?;
    if a.area.is_empty() && a.from.is_none() {
        return whole_world(a, &contents, t);
    }
    let mut target = Target::open(a)?;
    let mut rows = Vec::new();
    for &area in &a.area {
        let r = target.area(a, &contents, area)?;
        if !a.json {
            outln!("area {},{} (dimension {}) {}", area.x, area.z, a.dim, said(&r, &target));
        }
        rows.push(row(&r, json!({ "x": area.x, "z": area.z }))?);
    }
    if let (Some(from), Some(to)) = (a.from, a.to) {
        let r = target.bbox(a, &contents, from, to)?;
        if !a.json {
            outln!("box {}", said(&r, &target));
        }
        rows.push(row(&r, json!({ "from": [from.x, from.y, from.z], "to": [to.x, to.y, to.z] }))?);
    }
    let served = matches!(target, Target::Served(_));
    if let Target::Open(world) = target {
        world.close()?;
    }
    if a.json {
        let v = json!({ "id": contents.id(), "tick": contents.tick(), "dim": a.dim,
            "served": served, "restored": rows });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    }
    Ok(())
}

/// A JSON row: the report's fields and `place`'s.
fn row(r: &LiveRestoreReport, place: serde_json::Value) -> Result<serde_json::Value, Fail> {
    let mut v = serde_json::to_value(r)?;
    if let (Some(v), serde_json::Value::Object(place)) = (v.as_object_mut(), place) {
        v.extend(place);
    }
    Ok(v)
}

/// A backup into a new world.
fn whole_world(a: &RestoreArgs, contents: &BackupContents<'_>, t: Instant) -> Result<(), Fail> {
    let pb = crate::progress::bytes_bar(a.json, contents.bytes().saturating_mul(2));
    pb.set_message("restore");
    let r = terrane::restore_world_with(contents, &a.world, a.backend, &mut |done, _| {
        pb.set_position(done);
    });
    pb.finish_and_clear();
    let r = r?;
    let secs = t.elapsed().as_secs_f64();
    if a.json {
        let v = json!({ "id": contents.id(), "tick": contents.tick(),
            "world": a.world.display().to_string(), "objects": r.objects, "bytes": r.bytes,
            "seconds": secs });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        outln!(
            "restored backup {} (tick {}) into {}: {} objects, {:.2} MiB in {:.2} s",
            contents.id(),
            contents.tick(),
            a.world.display(),
            r.objects,
            mib(r.bytes),
            secs
        );
    }
    Ok(())
}

/// An existing world: opened here, or played by a server that restores it.
enum Target {
    Open(Box<World>),
    /// The server's control socket.
    Served(PathBuf),
}

impl Target {
    /// Opens WORLD; when a server holds it, its control socket (`--control`, or the one in
    /// the world's folder).
    fn open(a: &RestoreArgs) -> Result<Target, Fail> {
        if let Some(socket) = &a.control {
            return Ok(Target::Served(socket.clone()));
        }
        match World::open(&a.world) {
            Ok(world) => Ok(Target::Open(Box::new(world))),
            Err(terrane::Error::Store(terrane::store::Error::Locked { .. }))
                if a.world.join(terrane_valence::control::SOCKET_NAME).exists() =>
            {
                Ok(Target::Served(a.world.join(terrane_valence::control::SOCKET_NAME)))
            }
            Err(e) => Err(e.into()),
        }
    }

    fn area(
        &mut self,
        a: &RestoreArgs,
        contents: &BackupContents<'_>,
        area: AreaId,
    ) -> Result<LiveRestoreReport, Fail> {
        match self {
            Target::Open(world) => Ok(LiveRestoreReport::of_area(
                contents,
                &world.restore_area(contents, a.dim, area)?,
            )),
            Target::Served(socket) => ask(
                socket,
                &LiveRestoreRequest::Area {
                    repo: absolute(&a.repo)?,
                    at: Some(contents.id()),
                    dim: a.dim,
                    x: area.x,
                    z: area.z,
                },
            ),
        }
    }

    fn bbox(
        &mut self,
        a: &RestoreArgs,
        contents: &BackupContents<'_>,
        from: BlockPos,
        to: BlockPos,
    ) -> Result<LiveRestoreReport, Fail> {
        match self {
            Target::Open(world) => Ok(LiveRestoreReport::of_box(
                contents,
                &world.restore_box(contents, BlockBox::new(from, to))?,
            )),
            Target::Served(socket) => ask(
                socket,
                &LiveRestoreRequest::Box {
                    repo: absolute(&a.repo)?,
                    at: Some(contents.id()),
                    from: [from.x, from.y, from.z],
                    to: [to.x, to.y, to.z],
                },
            ),
        }
    }
}

fn absolute(path: &std::path::Path) -> Result<PathBuf, Fail> {
    std::fs::canonicalize(path).map_err(|e| Fail::io(path, e))
}

fn ask(socket: &std::path::Path, request: &LiveRestoreRequest) -> Result<LiveRestoreReport, Fail> {
    terrane_valence::control::request_restore(socket, request).map_err(|e| match e {
        terrane_valence::Error::RestoreRefused(_) => Fail::other(e.to_string()),
        e => Fail::other(format!("{e} (is `terrane serve` running on this world?)")),
    })
}

/// The line after "area X,Z (dimension D)" or "box".
fn said(r: &LiveRestoreReport, target: &Target) -> String {
    let (line, resent) = match r {
        LiveRestoreReport::Area {
            backup,
            backup_tick,
            objects_before,
            objects_written,
            bytes_written,
            objects_removed,
            objects_unchanged,
            columns_regenerated,
            columns_resent,
        } => (
            format!(
                "restored to backup {backup} (tick {backup_tick}): {objects_written} objects \
                 written ({:.2} MiB), {objects_removed} removed, {objects_unchanged} unchanged, \
                 of {objects_before} before{}",
                mib(*bytes_written),
                match columns_regenerated {
                    0 => String::new(),
                    n => format!("; {n} columns generated since to generate again"),
                }
            ),
            *columns_resent,
        ),
        LiveRestoreReport::Box {
            backup,
            backup_tick,
            chunks,
            chunks_written,
            blocks_changed,
            columns_resent,
        } => (
            format!(
                "restored to backup {backup} (tick {backup_tick}): {blocks_changed} blocks set \
                 back in {chunks_written} of its {chunks} chunks"
            ),
            *columns_resent,
        ),
        _ => (format!("{r:?}"), 0),
    };
    match target {
        Target::Open(_) => line,
        Target::Served(_) => {
            format!("{line}; by the running server, which sent {resent} columns again to players")
        }
    }
}
