//! A Java world folder: where it keeps its dimensions and its players, in the layout before
//! Minecraft 26.1 and the one since (`docs/format/world-dir.md`, "Java world folders"), and
//! how its player files are named.
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
//! [`DIMENSIONS_DATA_VERSION`]). The Overworld, the Nether and the End are terrane
//! dimensions 0, 1 and 2 ([`vanilla_dimensions`]).

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The first `DataVersion` whose worlds keep every dimension under `dimensions/` (Minecraft
/// 26.1 Snapshot 6, by minecraft-data's `protocolVersions.json`).
pub const DIMENSIONS_DATA_VERSION: i32 = 4774;

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
/// (their `id` is 0 here: an import assigns theirs). Sorted: vanilla ones first.
pub fn find_dimensions(dir: &Path, layout: JavaLayout) -> Result<Vec<Dimension>> {
    let has = |rel: &Path| has_region_files(&dir.join(rel));
    let mut out: Vec<Dimension> =
        vanilla_dimensions(layout).into_iter().filter(|d| has(&d.region)).collect();
    let root = dir.join("dimensions");
    let Ok(namespaces) = fs::read_dir(&root) else { return Ok(out) };
    let mut custom = Vec::new();
    for ns in namespaces {
        let ns = ns.map_err(|e| Error::io(&root, e))?;
        let Some(ns_name) = ns.file_name().to_str().map(str::to_string) else { continue };
        let Ok(names) = fs::read_dir(ns.path()) else { continue };
        for n in names {
            let n = n.map_err(|e| Error::io(ns.path(), e))?;
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

/// Where a Java world keeps its region files, as messages that find none say it.
pub const REGION_FOLDERS: &str = "a Java world keeps them in region/, DIM-1/region and \
     DIM1/region, or since 26.1 in dimensions/<namespace>/<name>/region";

/// Whether `dir` is a Java world folder (it holds `level.dat`, a `region` or a `dimensions`
/// folder), as opposed to a region folder.
pub fn is_java_world(dir: &Path) -> bool {
    dir.join("level.dat").is_file()
        || dir.join("region").is_dir()
        || dir.join("dimensions").is_dir()
}

/// Whether `dir` holds region files (`r.X.Z.mca`).
pub fn has_region_files(dir: &Path) -> bool {
    crate::region::list_regions(dir).is_ok_and(|r| !r.is_empty())
}

/// The text form of UUID `id` (`8-4-4-4-12` lower-case hex digits), as a Java world names a
/// player's files.
pub fn uuid_text(id: u128) -> String {
    let h = format!("{id:032x}");
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
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
        assert_eq!(uuid_text(0x0123 << 112 | 0xab), "01230000-0000-0000-0000-0000000000ab");
    }
}
