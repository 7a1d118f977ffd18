//! A Java world folder's dimensions and players in a terrane world. Where the folder keeps
//! them, in the layout before Minecraft 26.1 and the one since, is terrane-anvil's
//! ([`terrane_anvil::folder`], re-exported here); this file gives each dimension its terrane
//! id (the Overworld, the Nether and the End 0, 1 and 2; a datapack's dimension the next free
//! id, recorded by its name under [`DIMENSION_NAME_PREFIX`] so that every import of that world
//! gives it the same id and an export writes it back where it was) and carries the player
//! files in and out.

use std::fs;
use std::path::Path;

use terrane_store::tables;

use crate::error::io;
use crate::java_players::PLAYER_FILE_PREFIX;
use crate::{Error, Result, TickSave, World};
pub use terrane_anvil::folder::{
    DIMENSIONS_DATA_VERSION, Dimension, JavaLayout, PLAYER_FILE_KINDS, find_dimensions, layout_of,
    vanilla_dimensions,
};

/// The `worldProperties` key prefix of a datapack dimension's id: then its name
/// (`namespace:name`); the value is the terrane dimension, `u64` big-endian.
pub const DIMENSION_NAME_PREFIX: &[u8] = b"anvil:dimension:";

/// The datapack dimensions `world` has recorded: name → terrane dimension.
pub fn recorded_dimensions(world: &World) -> Result<Vec<(String, u64)>> {
    let mut out = Vec::new();
    for e in world.store().scan_prefix(tables::WORLD_PROPERTIES, DIMENSION_NAME_PREFIX)? {
        let (k, o) = e?;
        let name = String::from_utf8_lossy(&k[DIMENSION_NAME_PREFIX.len()..]).into_owned();
        let id = <[u8; 8]>::try_from(o.data.as_slice()).map(u64::from_be_bytes).map_err(|_| {
            Error::Inconsistent(format!(
                "worldProperties {:?} holds {} bytes, not an 8-byte dimension id",
                String::from_utf8_lossy(&k),
                o.data.len()
            ))
        })?;
        out.push((name, id));
    }
    Ok(out)
}

/// Gives each datapack dimension of `found` its terrane id: the one `world` recorded for its
/// name, else the next free one (3 on), recorded in `save`.
pub(crate) fn assign_ids(
    world: &World,
    found: &mut [Dimension],
    save: &mut TickSave,
) -> Result<()> {
    let recorded = recorded_dimensions(world)?;
    let mut next = recorded.iter().map(|(_, id)| id + 1).max().unwrap_or(3).max(3);
    for d in found.iter_mut().filter(|d| d.name.contains(':')) {
        match recorded.iter().find(|(n, _)| *n == d.name) {
            Some((_, id)) => d.id = *id,
            None => {
                d.id = next;
                next += 1;
                let key = [DIMENSION_NAME_PREFIX, d.name.as_bytes()].concat();
                save.put_object(tables::WORLD_PROPERTIES, key, d.id.to_be_bytes().to_vec());
            }
        }
    }
    Ok(())
}

/// Adds every player file of the Java world folder `dir` (in `layout`'s folders) to `save`;
/// returns how many.
pub(crate) fn import_players(dir: &Path, layout: JavaLayout, save: &mut TickSave) -> Result<u64> {
    let mut n = 0;
    for kind in PLAYER_FILE_KINDS {
        let folder = dir.join(layout.players_dir(kind));
        let Ok(entries) = fs::read_dir(&folder) else { continue };
        for e in entries {
            let e = e.map_err(io(&folder))?;
            if !e.file_type().map_err(io(&folder))?.is_file() {
                continue;
            }
            let Some(name) = e.file_name().to_str().map(str::to_string) else { continue };
            if name.ends_with(".dat_old") || name.ends_with(".tmp") {
                continue;
            }
            let bytes = fs::read(e.path()).map_err(io(e.path()))?;
            let key = [PLAYER_FILE_PREFIX, kind.as_bytes(), b"/", name.as_bytes()].concat();
            save.put_object(tables::WORLD_PROPERTIES, key, bytes);
            n += 1;
        }
    }
    Ok(n)
}

/// Writes the player files `world` kept into the Java world folder `dir`, in `layout`'s
/// folders, each with what a game server saved of that player since
/// ([`crate::java_players::with_record`]), and a file for each player the game saved who had
/// none; returns how many.
pub(crate) fn export_players(world: &World, dir: &Path, layout: JavaLayout) -> Result<u64> {
    let mut n = 0;
    let data_version = crate::imported::data_version(world)?;
    let mut records = crate::game::players(world)?;
    let mut write = |kind: &str, name: &str, bytes: &[u8]| -> Result<()> {
        let folder = dir.join(layout.players_dir(kind));
        fs::create_dir_all(&folder).map_err(io(&folder))?;
        crate::export::write_whole(&folder.join(name), bytes)?;
        n += 1;
        Ok(())
    };
    for e in world.store().scan_prefix(tables::WORLD_PROPERTIES, PLAYER_FILE_PREFIX)? {
        let (k, o) = e?;
        let rest = String::from_utf8_lossy(&k[PLAYER_FILE_PREFIX.len()..]).into_owned();
        let Some((kind, name)) = rest.split_once('/') else { continue };
        if !PLAYER_FILE_KINDS.contains(&kind) || name.contains(['/', '\\']) || name.starts_with('.')
        {
            continue;
        }
        let record = (kind == "data")
            .then(|| name.strip_suffix(".dat"))
            .flatten()
            .and_then(|u| u128::from_str_radix(&u.replace('-', ""), 16).ok())
            .and_then(|id| records.remove(&id));
        let merged =
            record.and_then(|r| crate::java_players::with_record(Some(&o.data), &r, data_version));
        write(kind, name, merged.as_deref().unwrap_or(&o.data))?;
    }
    for (id, r) in records {
        if let Some(bytes) = crate::java_players::with_record(None, &r, data_version) {
            let name = format!("{}.dat", terrane_anvil::folder::uuid_text(id));
            write("data", &name, &bytes)?;
        }
    }
    Ok(n)
}
