//! `terrane trim`: removes the columns nobody changed since they were generated (a dry run
//! first counts them), so that they are generated again when players come near.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use terrane::section::AreaId;
use terrane::{TrimOptions, World};

use crate::Fail;
use crate::serve::TerrainArg;

/// Flags of `terrane trim`.
#[derive(clap::Args, Debug)]
pub struct TrimArgs {
    /// The world (a directory or a connection string).
    world: PathBuf,
    /// The terrain the world was generated with.
    #[arg(long, value_enum)]
    terrain: TerrainArg,
    /// The seed of `--terrain hills`.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// Keep every column within this many blocks of --center.
    #[arg(long, value_name = "BLOCKS")]
    keep_radius: Option<u32>,
    /// The centre of --keep-radius (block `X,Z`).
    #[arg(long, value_name = "X,Z", default_value = "0,0", value_parser = parse_xz)]
    center: (i64, i64),
    /// Keep this area whole (`X,Z` in areas of 256 × 256 blocks; repeatable).
    #[arg(long, value_name = "X,Z", value_parser = crate::commands::parse_area)]
    keep_area: Vec<AreaId>,
    /// Count what would be removed, remove nothing.
    #[arg(long)]
    dry_run: bool,
    /// Print JSON on stdout.
    #[arg(long)]
    json: bool,
}

fn parse_xz(s: &str) -> Result<(i64, i64), String> {
    let (x, z) = s.split_once(',').ok_or_else(|| format!("{s:?}: expected X,Z"))?;
    let n = |v: &str| v.trim().parse::<i64>().map_err(|e| format!("{s:?}: {e}"));
    Ok((n(x)?, n(z)?))
}

/// `terrane trim`.
pub fn run(a: &TrimArgs) -> Result<(), Fail> {
    let t = Instant::now();
    let mut world =
        if a.dry_run { crate::open_one_pass(&a.world)? } else { World::open(&a.world)? };
    let options = TrimOptions {
        keep_radius: a.keep_radius.map(|r| (a.center.0, a.center.1, r)),
        keep_areas: a.keep_area.clone(),
        dry_run: a.dry_run,
    };
    let r = world.trim(&a.terrain.terrain(a.seed), &options)?;
    if !a.dry_run {
        world.close()?;
    }
    let secs = t.elapsed().as_secs_f64();
    if a.json {
        let v = json!({ "dry_run": a.dry_run, "columns_checked": r.columns_checked,
            "columns_trimmed": r.columns_trimmed, "chunks_removed": r.chunks_removed,
            "bytes_removed": r.bytes_removed, "columns_changed": r.columns_changed,
            "columns_kept": r.columns_kept, "seconds": secs });
        outln!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        let verb = if a.dry_run { "would remove" } else { "removed" };
        outln!(
            "{verb} {} of {} generated columns ({} chunks, {:.2} MiB); kept {} changed and {} by --keep-* or loaded; {:.2} s",
            r.columns_trimmed,
            r.columns_checked,
            r.chunks_removed,
            r.bytes_removed as f64 / (1024.0 * 1024.0),
            r.columns_changed,
            r.columns_kept,
            secs
        );
    }
    Ok(())
}
