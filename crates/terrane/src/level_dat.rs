//! `level.dat` from one edition to the other, for `terrane convert`: the settings both
//! editions share (name, spawn, seed, game mode, difficulty, last played) carried across;
//! everything else is each edition's own and starts at the game's defaults.
//!
//! | Java (`Data`, gzip NBT) | Bedrock (little-endian NBT after an 8-byte header) |
//! |---|---|
//! | `LevelName` | `LevelName` (and `levelname.txt`) |
//! | `SpawnX`/`SpawnY`/`SpawnZ`, or 1.21.9's `spawn.pos` | `SpawnX`/`SpawnY`/`SpawnZ` |
//! | `WorldGenSettings.seed`, or `RandomSeed` before 1.16 | `RandomSeed` |
//! | `GameType` | `GameType` |
//! | `Difficulty` | `Difficulty` |
//! | `LastPlayed` (milliseconds) | `LastPlayed` (seconds) |
//!
//! A Java `level.dat` written here has no `WorldGenSettings`: Minecraft Java needs them to
//! open the world in a world list, so a converted Java world is for tools and servers that
//! supply their own (as `terrane serve` does), or for copying regions into a world the game
//! made.

use std::io::{Read, Write};

use terrane_nbt::{Compound, Reader, Tag, Writer};

/// The settings both editions keep.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Shared {
    pub name: Option<String>,
    pub spawn: Option<(i32, i32, i32)>,
    pub seed: Option<i64>,
    pub game_type: Option<i32>,
    pub difficulty: Option<i32>,
    /// Seconds since the epoch.
    pub last_played: Option<i64>,
}

fn int(c: &Compound, k: &str) -> Option<i32> {
    c.get(k).and_then(|t| match t {
        Tag::Byte(b) => Some(i32::from(*b)),
        t => t.as_int(),
    })
}

/// The shared settings of a Java `level.dat` (gzip NBT); `None` when it does not read.
pub(crate) fn read_java(bytes: &[u8]) -> Option<Shared> {
    let mut raw = Vec::new();
    flate2::read::GzDecoder::new(bytes).take(64 << 20).read_to_end(&mut raw).ok()?;
    let root = Reader::new(&raw).root_compound().ok()?;
    let data = root.get("Data")?.as_compound()?;
    let spawn = match (int(data, "SpawnX"), int(data, "SpawnY"), int(data, "SpawnZ")) {
        (Some(x), Some(y), Some(z)) => Some((x, y, z)),
        _ => data.get("spawn").and_then(Tag::as_compound).and_then(|s| match s.get("pos") {
            Some(Tag::IntArray(p)) if p.len() == 3 => Some((p[0], p[1], p[2])),
            _ => None,
        }),
    };
    let seed = data
        .get("WorldGenSettings")
        .and_then(Tag::as_compound)
        .and_then(|w| w.get("seed"))
        .or_else(|| data.get("RandomSeed"))
        .and_then(Tag::as_i64);
    Some(Shared {
        name: data.get("LevelName").and_then(Tag::as_str).map(str::to_string),
        spawn,
        seed,
        game_type: int(data, "GameType"),
        difficulty: int(data, "Difficulty"),
        last_played: data.get("LastPlayed").and_then(Tag::as_i64).map(|ms| ms / 1000),
    })
}

/// The shared settings of a Bedrock `level.dat`; `None` when it does not read.
pub(crate) fn read_bedrock(bytes: &[u8]) -> Option<Shared> {
    let l = terrane_bedrock::LevelDat::parse(bytes).ok()?;
    let c = &l.nbt;
    let spawn = match (int(c, "SpawnX"), int(c, "SpawnY"), int(c, "SpawnZ")) {
        (Some(x), Some(y), Some(z)) => Some((x, y, z)),
        _ => None,
    };
    Some(Shared {
        name: c.get("LevelName").and_then(Tag::as_str).map(str::to_string),
        spawn,
        seed: c.get("RandomSeed").and_then(Tag::as_i64),
        game_type: int(c, "GameType"),
        difficulty: int(c, "Difficulty"),
        last_played: c.get("LastPlayed").and_then(Tag::as_i64),
    })
}

/// A Bedrock `level.dat` holding `s` (name `fallback` when it has none), for block version
/// `release` (`[1, 26, 30, 0, 0]`).
pub(crate) fn bedrock_level_dat(s: &Shared, fallback: &str, release: [i32; 5]) -> Vec<u8> {
    let mut c = Compound::new();
    c.insert("LevelName", Tag::String(s.name.clone().unwrap_or_else(|| fallback.to_string())));
    c.insert("StorageVersion", Tag::Int(10));
    c.insert("Generator", Tag::Int(1));
    c.insert("lastOpenedWithVersion", Tag::List(3, release.map(Tag::Int).to_vec()));
    if let Some((x, y, z)) = s.spawn {
        c.insert("SpawnX", Tag::Int(x));
        c.insert("SpawnY", Tag::Int(y));
        c.insert("SpawnZ", Tag::Int(z));
    }
    if let Some(seed) = s.seed {
        c.insert("RandomSeed", Tag::Long(seed));
    }
    if let Some(g) = s.game_type {
        c.insert("GameType", Tag::Int(g));
    }
    if let Some(d) = s.difficulty {
        c.insert("Difficulty", Tag::Int(d));
    }
    if let Some(t) = s.last_played {
        c.insert("LastPlayed", Tag::Long(t));
    }
    encode_bedrock(c)
}

/// A Bedrock `level.dat` of `c`: the 8-byte header (storage version 10, body length) and `c`
/// as little-endian NBT.
pub(crate) fn encode_bedrock(c: Compound) -> Vec<u8> {
    let mut w = Writer::new().little_endian();
    w.named("", &Tag::Compound(c)).expect("a compound of plain tags encodes");
    [&10i32.to_le_bytes()[..], &(w.out.len() as i32).to_le_bytes(), &w.out].concat()
}

/// A Java `level.dat` (gzip NBT) holding `s` (name `fallback` when it has none) at
/// `data_version` (`version_name` as its `Version.Name`).
pub(crate) fn java_level_dat(
    s: &Shared,
    fallback: &str,
    data_version: i32,
    version_name: &str,
) -> Vec<u8> {
    let mut version = Compound::new();
    version.insert("Id", Tag::Int(data_version));
    version.insert("Name", Tag::String(version_name.into()));
    version.insert("Snapshot", Tag::Byte(0));
    let mut d = Compound::new();
    d.insert("DataVersion", Tag::Int(data_version));
    d.insert("Version", Tag::Compound(version));
    d.insert("version", Tag::Int(19133));
    d.insert("LevelName", Tag::String(s.name.clone().unwrap_or_else(|| fallback.to_string())));
    if let Some((x, y, z)) = s.spawn {
        d.insert("SpawnX", Tag::Int(x));
        d.insert("SpawnY", Tag::Int(y));
        d.insert("SpawnZ", Tag::Int(z));
    }
    if let Some(seed) = s.seed {
        d.insert("RandomSeed", Tag::Long(seed));
    }
    if let Some(g) = s.game_type {
        d.insert("GameType", Tag::Int(g));
    }
    if let Some(v) = s.difficulty {
        d.insert("Difficulty", Tag::Byte(v.clamp(0, 3) as i8));
    }
    if let Some(t) = s.last_played {
        d.insert("LastPlayed", Tag::Long(t.saturating_mul(1000)));
    }
    let mut root = Compound::new();
    root.insert("Data", Tag::Compound(d));
    let mut w = Writer::new();
    w.named("", &Tag::Compound(root)).expect("a compound of plain tags encodes");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&w.out).expect("writing to memory");
    gz.finish().expect("writing to memory")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_settings_cross_both_ways() {
        let s = Shared {
            name: Some("Castle".into()),
            spawn: Some((12, 70, -5)),
            seed: Some(-42),
            game_type: Some(1),
            difficulty: Some(2),
            last_played: Some(1_700_000_000),
        };
        let java = java_level_dat(&s, "x", 4671, "1.21.11");
        assert_eq!(read_java(&java), Some(s.clone()));
        let bedrock = bedrock_level_dat(&s, "x", [1, 26, 30, 0, 0]);
        assert_eq!(read_bedrock(&bedrock), Some(s));
        let empty = bedrock_level_dat(&Shared::default(), "fallback", [1, 26, 30, 0, 0]);
        assert_eq!(read_bedrock(&empty).unwrap().name.as_deref(), Some("fallback"));
        assert_eq!(read_java(b"not gzip"), None);
    }
}
