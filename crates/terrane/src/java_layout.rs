//! Where a Java world folder keeps its dimensions and its players: the layout before
//! Minecraft 26.1 and the one since (`docs/format/world-dir.md`, "Java world folders").
//!
//! | what | [`JavaLayout::Classic`] (to 1.21.11) | [`JavaLayout::Dimensions`] (26.1 on) |
//! |---|---|---|
//! | Overworld | `region/`, `entities/` | `dimensions/minecraft/overworld/region/`, `.../entities/` |
//! | Nether | `DIM-1/region/`, `DIM-1/entities/` | `dimensions/minecraft/the_nether/...` |
//! | End | `DIM1/region/`, `DIM1/entities/` | `dimensions/minecraft/the_end/...` |
//! | datapack dimensions | `dimensions/<namespace>/<name>/...` | the same |
//! | players | `playerdata/`, `stats/`, `advancements/` | `players/data/`, `players/stats/`, `players/advancements/` |
//!
//! Minecraft moved to the second layout in 26.1 Snapshot 6 (`DataVersion` 4774,
//! [`DIMENSIONS_DATA_VERSION`]). Each dimension becomes a terrane dimension: the Overworld,
//! the Nether and the End 0, 1 and 2; a datapack's dimension the next free id, recorded by its
//! name under [`DIMENSION_NAME_PREFIX`] so that every import of that world gives it the same
//! id and an export writes it back where it was.

use std::fs;
use std::path::{Path, PathBuf};

use terrane_store::tables;

use crate::error::io;
use crate::java_players::PLAYER_FILE_PREFIX;
use crate::{Error, Result, TickSave, World};

/// The first `DataVersion` whose worlds keep every dimension under `dimensions/` (Minecraft
/// 26.1 Snapshot 6, by minecraft-data's `protocolVersions.json`).
pub const DIMENSIONS_DATA_VERSION: i32 = 4774;

/// The `worldProperties` key prefix of a datapack dimension's id: then its name
/// (`namespace:name`); the value is the terrane dimension, `u64` big-endian.
pub const DIMENSION_NAME_PREFIX: &[u8] = b"anvil:dimension:";

/// How a Java world folder is laid out.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum JavaLayout {
    /// Before 26.1: the Overworld at the folder's top, `DIM-1`, `DIM1`, players in
    /// `playerdata/`, `stats/`, `advancements/`.
    Classic,
    /// 26.1 on: every dimension under `dimensions/<namespace>/<name>/`, players under
    /// `players/`.
    Dimensions,
}

impl JavaLayout {
    /// The layout of a world whose newest `DataVersion` is `v` (no version: [`Classic`]).
    ///
    /// [`Classic`]: JavaLayout::Classic
    pub fn of_data_version(v: Option<i32>) -> JavaLayout {
        match v {
            Some(v) if v >= DIMENSIONS_DATA_VERSION => JavaLayout::Dimensions,
            _ => JavaLayout::Classic,
        }
    }

    /// The folder, relative to the world folder, of the dimension named `name`
    /// (`minecraft:overworld`, `mymod:mining`).
    pub fn dimension_dir(self, name: &str) -> PathBuf {
        let (ns, path) = name.split_once(':').unwrap_or(("minecraft", name));
        match (self, ns, path) {
            (JavaLayout::Classic, "minecraft", "overworld") => PathBuf::new(),
            (JavaLayout::Classic, "minecraft", "the_nether") => PathBuf::from("DIM-1"),
            (JavaLayout::Classic, "minecraft", "the_end") => PathBuf::from("DIM1"),
            _ => Path::new("dimensions").join(ns).join(path),
        }
    }

    /// The folder, relative to the world folder, of one kind of player file (`data`,
    /// `stats`, `advancements`).
    pub fn players_dir(self, kind: &str) -> PathBuf {
        match (self, kind) {
            (JavaLayout::Classic, "data") => PathBuf::from("playerdata"),
            (JavaLayout::Classic, k) => PathBuf::from(k),
            (JavaLayout::Dimensions, k) => Path::new("players").join(k),
        }
    }
}

/// The kinds of player files, by their 26.1 folder names.
pub const PLAYER_FILE_KINDS: [&str; 3] = ["data", "stats", "advancements"];

/// One of a Java world's dimensions and where its files live in a Java world folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Dimension {
    /// The terrane dimension (first part of every chunk key).
    pub id: u64,
    /// Minecraft's name: `overworld`, `the_nether`, `the_end` (`minecraft:` omitted), or a
    /// datapack's `namespace:name`.
    pub name: String,
    /// The region folder, relative to the Java world folder.
    pub region: PathBuf,
    /// The 1.17+ entity region folder, relative to the Java world folder.
    pub entities: PathBuf,
}

impl Dimension {
    /// The dimension named `name` (as [`Dimension::name`]) at terrane id `id`, in `layout`.
    pub fn new(id: u64, name: &str, layout: JavaLayout) -> Dimension {
        let full = if name.contains(':') { name.to_string() } else { format!("minecraft:{name}") };
        let dir = layout.dimension_dir(&full);
        Dimension {
            id,
            name: name.to_string(),
            region: dir.join("region"),
            entities: dir.join("entities"),
        }
    }
}

/// The names of the Overworld, the Nether and the End, terrane dimensions 0, 1 and 2.
pub const VANILLA: [&str; 3] = ["overworld", "the_nether", "the_end"];

/// The Overworld, the Nether and the End in `layout`.
pub fn vanilla_dimensions(layout: JavaLayout) -> [Dimension; 3] {
    [0u64, 1, 2].map(|i| Dimension::new(i, VANILLA[i as usize], layout))
}

/// The layout of the Java world folder `dir`: [`JavaLayout::Dimensions`] when one of the three
/// vanilla dimensions is under `dimensions/minecraft/`.
pub fn layout_of(dir: &Path) -> JavaLayout {
    let new = VANILLA.iter().any(|n| dir.join("dimensions/minecraft").join(n).is_dir());
    if new { JavaLayout::Dimensions } else { JavaLayout::Classic }
}

/// Every dimension of the Java world folder `dir` that holds region files: the vanilla three
/// where `layout` keeps them, and every `dimensions/<namespace>/<name>/` of another name
/// (their `id` is 0 here: the import assigns theirs). Sorted: vanilla ones first.
pub fn find_dimensions(dir: &Path, layout: JavaLayout) -> Result<Vec<Dimension>> {
    let has = |rel: &Path| crate::export::has_region_files(&dir.join(rel));
    let mut out: Vec<Dimension> =
        vanilla_dimensions(layout).into_iter().filter(|d| has(&d.region)).collect();
    let root = dir.join("dimensions");
    let Ok(namespaces) = fs::read_dir(&root) else { return Ok(out) };
    let mut custom = Vec::new();
    for ns in namespaces {
        let ns = ns.map_err(io(&root))?;
        let Some(ns_name) = ns.file_name().to_str().map(str::to_string) else { continue };
        let Ok(names) = fs::read_dir(ns.path()) else { continue };
        for n in names {
            let n = n.map_err(io(ns.path()))?;
            let Some(name) = n.file_name().to_str().map(str::to_string) else { continue };
            if ns_name == "minecraft" && VANILLA.contains(&name.as_str()) {
                continue;
            }
            let d = Dimension::new(0, &format!("{ns_name}:{name}"), layout);
            if has(&d.region) {
                custom.push(d);
            }
        }
    }
    custom.sort_by(|a, b| a.name.cmp(&b.name));
    out.extend(custom);
    Ok(out)
}

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
            let name = format!("{}.dat", crate::game::uuid_text(id));
            write("data", &name, &bytes)?;
        }
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_layouts_place_the_vanilla_dimensions_and_datapack_ones() {
        let c = vanilla_dimensions(JavaLayout::Classic);
        assert_eq!(c[0].region, Path::new("region"));
        assert_eq!(c[1].entities, Path::new("DIM-1/entities"));
        let d = vanilla_dimensions(JavaLayout::Dimensions);
        assert_eq!(d[2].region, Path::new("dimensions/minecraft/the_end/region"));
        for l in [JavaLayout::Classic, JavaLayout::Dimensions] {
            let m = Dimension::new(3, "mymod:mining", l);
            assert_eq!(m.region, Path::new("dimensions/mymod/mining/region"));
        }
        assert_eq!(JavaLayout::Dimensions.players_dir("data"), Path::new("players/data"));
        assert_eq!(JavaLayout::Classic.players_dir("data"), Path::new("playerdata"));
        assert_eq!(JavaLayout::of_data_version(Some(4786)), JavaLayout::Dimensions);
        assert_eq!(JavaLayout::of_data_version(Some(4671)), JavaLayout::Classic);
        assert_eq!(JavaLayout::of_data_version(None), JavaLayout::Classic);
    }
}
