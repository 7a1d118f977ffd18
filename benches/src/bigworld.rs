//! A Java world of real shape at any size, for the whole-world figures: the finished chunks
//! of the repository's real region files tiled over a square of columns.
//!
//! Real worlds are not bench terrain: a 1.18+ column holds 24 sub-chunks of which most are all
//! air, a few carry ores, caves and aquifers, and block ticks sit where the generator left
//! them. [`write_java_world`] keeps all of that by copying real chunks: each column of the
//! square takes one of the finished (`Status` full) chunks of `testdata/anvil/1.18.2` and
//! `testdata/anvil/1.21.1`, chosen by a generator seeded from the world's seed and the
//! column's position, with its position rewritten (`xPos`, `zPos`, block entities, block and
//! fluid ticks; structure starts and references, which name other chunks, are emptied).
//! Sections, heightmaps, biomes, `DataVersion`s (a world holding chunks of two versions, as
//! every world that was opened in a newer game does) are kept byte for byte.
//!
//! Beside the regions it writes `level.dat` and [`PLAYERS`] players in `playerdata/`, each
//! with an inventory and ender chest. The same seed and size give the same bytes.
//!
//! Sizes: about 8.6 KiB of region file per column (zlib, level 6), so 1 GB is about 120,000
//! columns. Memory: one region at a time per thread.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use terrane_anvil::region::{RegionFile, RegionWriter};
use terrane_nbt::{Compound, Tag};

use crate::Rng;

/// The region fixtures whose finished chunks are tiled (relative to `testdata/`).
pub const TEMPLATE_REGIONS: [&str; 2] = ["anvil/1.18.2/r.0.0.mca", "anvil/1.21.1/r.0.0.mca"];

/// How many players the world gets.
pub const PLAYERS: usize = 4;

/// The `DataVersion` written to `level.dat` and the players (1.21.1, the newer template).
pub const DATA_VERSION: i32 = 3955;

/// What [`write_java_world`] wrote.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BigWorldSummary {
    /// Columns written.
    pub columns: u64,
    /// Region files written.
    pub regions: u64,
    /// Bytes of region files.
    pub region_bytes: u64,
    /// Finished chunks available as templates.
    pub templates: usize,
}

/// A finished chunk of a real region: its parsed NBT and the column it came from.
#[derive(Clone, Debug)]
struct Template {
    nbt: Compound,
    x: i32,
    z: i32,
}

/// The finished chunks of [`TEMPLATE_REGIONS`] under `testdata`.
fn templates(testdata: &Path) -> std::io::Result<Vec<Template>> {
    let bad = |what: String| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
    let mut out = Vec::new();
    for rel in TEMPLATE_REGIONS {
        let path = testdata.join(rel);
        let bytes = std::fs::read(&path)
            .map_err(|e| bad(format!("{}: {e} (`git checkout -- testdata`)", path.display())))?;
        let region = RegionFile::new(bytes).map_err(|e| bad(format!("{}: {e}", path.display())))?;
        let entries: Vec<_> = region.entries().collect();
        for entry in entries {
            let raw = region.read(&entry).map_err(|e| bad(format!("{}: {e}", path.display())))?;
            let nbt = Compound::from_bytes(&raw.nbt)
                .map_err(|e| bad(format!("{}: {e}", path.display())))?;
            let finished = nbt
                .get("Status")
                .and_then(Tag::as_str)
                .is_some_and(|s| s.trim_start_matches("minecraft:") == "full");
            let (Some(x), Some(z)) =
                (nbt.get("xPos").and_then(Tag::as_int), nbt.get("zPos").and_then(Tag::as_int))
            else {
                continue;
            };
            if finished {
                out.push(Template { nbt, x, z });
            }
        }
    }
    if out.is_empty() {
        return Err(bad(format!("no finished chunk in {TEMPLATE_REGIONS:?}")));
    }
    Ok(out)
}

/// Adds `(dx, dz)` blocks to the `x` and `z` of every compound in the list at `key`.
fn shift_list(chunk: &mut Compound, key: &str, dx: i32, dz: i32) {
    let Some(Tag::List(_, items)) = chunk.get_mut(key) else { return };
    for item in items {
        let Tag::Compound(c) = item else { continue };
        for (k, d) in [("x", dx), ("z", dz)] {
            if let Some(Tag::Int(v)) = c.get_mut(k) {
                *v = v.wrapping_add(d);
            }
        }
    }
}

/// The template's NBT moved to column `(x, z)`.
fn placed(t: &Template, x: i32, z: i32) -> Compound {
    let mut c = t.nbt.clone();
    let (dx, dz) = ((x - t.x) * 16, (z - t.z) * 16);
    c.insert("xPos", Tag::Int(x));
    c.insert("zPos", Tag::Int(z));
    for key in ["block_entities", "block_ticks", "fluid_ticks"] {
        shift_list(&mut c, key, dx, dz);
    }
    if c.contains_key("structures") {
        let mut s = Compound::new();
        s.insert("References", Tag::Compound(Compound::new()));
        s.insert("starts", Tag::Compound(Compound::new()));
        c.insert("structures", Tag::Compound(s));
    }
    c
}

/// The square the world's columns fill: its side and the lowest column coordinate (the square
/// is centred on column 0, 0).
fn square(columns: u64) -> (i64, i64) {
    let side = (columns as f64).sqrt().ceil() as i64;
    let side = if side * side < columns as i64 { side + 1 } else { side.max(1) };
    (side, -(side / 2))
}

/// Writes a Java world of `columns` real-shaped Overworld columns to `out` (a new folder, or an
/// empty one), from the region fixtures under `testdata`, on `threads` threads.
///
/// Columns fill a square centred on column (0, 0) row by row (z, then x), so every region but
/// those on the square's edge is full. Errors when `out` holds files, when a fixture is
/// missing, or on a write error.
pub fn write_java_world(
    out: &Path,
    testdata: &Path,
    columns: u64,
    seed: u64,
    threads: usize,
) -> std::io::Result<BigWorldSummary> {
    if out.exists() && std::fs::read_dir(out)?.next().is_some() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("{} is not empty: give a new folder", out.display()),
        ));
    }
    let templates = templates(testdata)?;
    let region_dir = out.join("region");
    std::fs::create_dir_all(&region_dir)?;
    let (side, low) = square(columns);
    let high = low + side; // exclusive
    let (rlow, rhigh) = (low.div_euclid(32), (high - 1).div_euclid(32));
    let regions: Vec<(i64, i64)> =
        (rlow..=rhigh).flat_map(|rz| (rlow..=rhigh).map(move |rx| (rx, rz))).collect();
    let next = AtomicUsize::new(0);
    let results: Vec<std::io::Result<(u64, u64, u64)>> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                s.spawn(|| -> std::io::Result<(u64, u64, u64)> {
                    let (mut cols, mut files, mut bytes) = (0, 0, 0);
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&(rx, rz)) = regions.get(i) else { break };
                        let mut writer = RegionWriter::new(rx as i32, rz as i32);
                        for lz in 0..32 {
                            for lx in 0..32 {
                                let (x, z) = (rx * 32 + lx, rz * 32 + lz);
                                if x < low || x >= high || z < low || z >= high {
                                    continue;
                                }
                                let order = (z - low) * side + (x - low);
                                if order as u64 >= columns {
                                    continue;
                                }
                                let mut rng = Rng::new(
                                    seed ^ (x as u64).wrapping_mul(0x9E37_79B9)
                                        ^ (z as u64).wrapping_mul(0x85EB_CA6B) << 17,
                                );
                                let t = &templates[rng.below(templates.len() as u64) as usize];
                                let nbt = terrane_nbt::to_bytes(
                                    "",
                                    &Tag::Compound(placed(t, x as i32, z as i32)),
                                )
                                .map_err(|e| std::io::Error::other(e.to_string()))?;
                                writer.insert((lx + 32 * lz) as usize, nbt, 1_700_000_000);
                                cols += 1;
                            }
                        }
                        if writer.is_empty() {
                            continue;
                        }
                        let path = region_dir.join(format!("r.{rx}.{rz}.mca"));
                        let mut file = std::io::BufWriter::new(std::fs::File::create(&path)?);
                        let (len, _) = writer.write_to(&mut file)?;
                        file.flush()?;
                        files += 1;
                        bytes += len;
                    }
                    Ok((cols, files, bytes))
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().expect("a builder thread panicked")).collect()
    });
    let mut summary = BigWorldSummary { templates: templates.len(), ..Default::default() };
    for r in results {
        let (c, f, b) = r?;
        summary.columns += c;
        summary.regions += f;
        summary.region_bytes += b;
    }
    write_gzip(&out.join("level.dat"), &level_dat(seed))?;
    std::fs::create_dir_all(out.join("playerdata"))?;
    for p in 0..PLAYERS {
        let (uuid, nbt) = player(seed, p, side);
        write_gzip(&out.join("playerdata").join(format!("{uuid}.dat")), &nbt)?;
    }
    Ok(summary)
}

/// Writes `nbt` (a root compound) gzip-compressed, as Minecraft writes `level.dat` and players.
fn write_gzip(path: &Path, nbt: &Compound) -> std::io::Result<()> {
    let bytes = terrane_nbt::to_bytes("", &Tag::Compound(nbt.clone()))
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&bytes)?;
    std::fs::write(path, gz.finish()?)
}

fn string(s: &str) -> Tag {
    Tag::String(s.to_owned())
}

/// `level.dat`: a 1.21.1 survival world named after its seed, spawn at column (0, 0).
fn level_dat(seed: u64) -> Compound {
    let mut version = Compound::new();
    version.insert("Id", Tag::Int(DATA_VERSION));
    version.insert("Name", string("1.21.1"));
    version.insert("Series", string("main"));
    version.insert("Snapshot", Tag::Byte(0));
    let mut world_gen = Compound::new();
    world_gen.insert("seed", Tag::Long(seed as i64));
    world_gen.insert("generate_features", Tag::Byte(1));
    world_gen.insert("bonus_chest", Tag::Byte(0));
    world_gen.insert("dimensions", Tag::Compound(Compound::new()));
    let mut data = Compound::new();
    data.insert("DataVersion", Tag::Int(DATA_VERSION));
    data.insert("version", Tag::Int(19133));
    data.insert("LevelName", string(&format!("terrane real-shaped world {seed}")));
    data.insert("SpawnX", Tag::Int(8));
    data.insert("SpawnY", Tag::Int(80));
    data.insert("SpawnZ", Tag::Int(8));
    data.insert("GameType", Tag::Int(0));
    data.insert("Difficulty", Tag::Byte(2));
    data.insert("LastPlayed", Tag::Long(1_700_000_000_000));
    data.insert("Version", Tag::Compound(version));
    data.insert("WorldGenSettings", Tag::Compound(world_gen));
    let mut root = Compound::new();
    root.insert("Data", Tag::Compound(data));
    root
}

/// Items players carry: (id, count, slot).
const ITEMS: [(&str, i32); 8] = [
    ("minecraft:diamond_pickaxe", 1),
    ("minecraft:cobblestone", 64),
    ("minecraft:oak_planks", 37),
    ("minecraft:bread", 12),
    ("minecraft:torch", 48),
    ("minecraft:iron_ingot", 9),
    ("minecraft:oak_log", 20),
    ("minecraft:coal", 30),
];

fn item(id: &str, count: i32, slot: i8) -> Tag {
    let mut c = Compound::new();
    c.insert("Slot", Tag::Byte(slot));
    c.insert("id", string(id));
    c.insert("count", Tag::Int(count));
    Tag::Compound(c)
}

/// Player `n`: its UUID (text form) and its file's NBT, standing somewhere in the square.
fn player(seed: u64, n: usize, side: i64) -> (String, Compound) {
    let mut rng = Rng::new(seed.wrapping_add(0x5EED_0000 + n as u64));
    let hi = rng.next_u64();
    let lo = rng.next_u64();
    // A version-4 UUID: the game's form for online players.
    let hi = (hi & !0xF000) | 0x4000;
    let lo = (lo & !(0xC << 60)) | (0x8 << 60);
    let uuid = format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        hi >> 32,
        (hi >> 16) & 0xFFFF,
        hi & 0xFFFF,
        lo >> 48,
        lo & 0xFFFF_FFFF_FFFF
    );
    let ids = [(hi >> 32) as i32, hi as i32, (lo >> 32) as i32, lo as i32];
    let half = (side * 8).max(1);
    let px = (rng.below(2 * half as u64) as i64 - half) as f64 + 0.5;
    let pz = (rng.below(2 * half as u64) as i64 - half) as f64 + 0.5;
    let mut c = Compound::new();
    c.insert("DataVersion", Tag::Int(DATA_VERSION));
    c.insert("UUID", Tag::IntArray(ids.to_vec()));
    c.insert("Pos", Tag::list(vec![Tag::Double(px), Tag::Double(90.0), Tag::Double(pz)]));
    c.insert("Rotation", Tag::list(vec![Tag::Float(0.0), Tag::Float(0.0)]));
    c.insert("Dimension", string("minecraft:overworld"));
    c.insert("playerGameType", Tag::Int((n % 2) as i32));
    c.insert("XpLevel", Tag::Int(n as i32 * 7));
    c.insert("XpP", Tag::Float(0.25));
    c.insert("Health", Tag::Float(20.0));
    c.insert("SelectedItemSlot", Tag::Int(0));
    let inventory: Vec<Tag> = (0..ITEMS.len())
        .filter(|i| !(i + n).is_multiple_of(3))
        .map(|i| item(ITEMS[i].0, ITEMS[i].1, i as i8))
        .chain([item("minecraft:iron_chestplate", 1, 102)])
        .collect();
    c.insert("Inventory", Tag::list(inventory));
    c.insert("EnderItems", Tag::list(vec![item("minecraft:emerald", 5 + n as i32, 0)]));
    (uuid, c)
}

/// `<workspace>/testdata`, from this crate's directory.
pub fn testdata_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every region file under `dir/region`, by name, with its bytes.
    fn regions(dir: &Path) -> Vec<(String, Vec<u8>)> {
        let mut out: Vec<_> = std::fs::read_dir(dir.join("region"))
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.file_name().into_string().unwrap(), std::fs::read(e.path()).unwrap())
            })
            .collect();
        out.sort();
        out
    }

    #[test]
    fn a_world_holds_real_finished_chunks_in_their_places_the_same_from_the_same_seed() {
        let tmp = tempfile::tempdir().unwrap();
        let (a, b, c) = (tmp.path().join("a"), tmp.path().join("b"), tmp.path().join("c"));
        let s = write_java_world(&a, &testdata_dir(), 300, 7, 2).unwrap();
        assert_eq!((s.columns, s.templates), (300, 43));
        write_java_world(&b, &testdata_dir(), 300, 7, 1).unwrap();
        write_java_world(&c, &testdata_dir(), 300, 8, 2).unwrap();
        assert_eq!(regions(&a), regions(&b), "threads change nothing");
        assert_ne!(regions(&a), regions(&c), "the seed chooses the chunks");
        let err = write_java_world(&a, &testdata_dir(), 300, 7, 2).unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);

        let (mut columns, mut sections, mut air, mut versions) = (0, 0, 0, Vec::new());
        for (name, bytes) in regions(&a) {
            let (rx, rz) = terrane_anvil::region::parse_region_name(&name).unwrap();
            let region = RegionFile::new(bytes).unwrap();
            let entries: Vec<_> = region.entries().collect();
            for e in entries {
                let nbt = Compound::from_bytes(&region.read(&e).unwrap().nbt).unwrap();
                let int = |k: &str| nbt.get(k).and_then(Tag::as_int).unwrap();
                assert_eq!(int("xPos"), rx * 32 + (e.index % 32) as i32);
                assert_eq!(int("zPos"), rz * 32 + (e.index / 32) as i32);
                let (x, z) = (i64::from(int("xPos")), i64::from(int("zPos")));
                assert!((-9..9).contains(&x) && (-9..9).contains(&z), "{x},{z}");
                let status = nbt.get("Status").and_then(Tag::as_str).unwrap();
                assert_eq!(status.trim_start_matches("minecraft:"), "full");
                versions.push(int("DataVersion"));
                for s in nbt.get("sections").and_then(Tag::as_list).unwrap() {
                    sections += 1;
                    let palette = s.as_compound().and_then(|s| s.get("block_states"));
                    let palette = palette.and_then(Tag::as_compound).and_then(|b| b.get("palette"));
                    let palette = palette.and_then(Tag::as_list).unwrap();
                    let name = palette[0].as_compound().and_then(|p| p.get("Name"));
                    if palette.len() == 1 && name.and_then(Tag::as_str) == Some("minecraft:air") {
                        air += 1;
                    }
                }
                columns += 1;
            }
        }
        assert_eq!(columns, 300);
        // Real shape: 24 sections a column, most of them all air, two versions of the game.
        assert_eq!(sections, 300 * 24);
        assert!(air * 100 > sections * 60 && air < sections, "{air} of {sections} all air");
        versions.sort_unstable();
        versions.dedup();
        assert_eq!(versions, vec![2975, 3955]);
        assert!(a.join("level.dat").is_file());
        assert_eq!(std::fs::read_dir(a.join("playerdata")).unwrap().count(), PLAYERS);
    }

    #[test]
    fn the_square_holds_every_column() {
        for n in [1, 2, 5, 1024, 1025, 120_000] {
            let (side, low) = square(n);
            assert!((side * side) as u64 >= n, "{n}");
            assert!(((side - 1) * (side - 1)) as u64 <= n, "{n}: side {side} too large");
            assert_eq!(low, -(side / 2));
        }
    }
}
