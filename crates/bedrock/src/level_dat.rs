//! `level.dat`: an 8-byte header (storage version and body length, `i32` little-endian) and a
//! little-endian NBT compound (`docs/format/bedrock.md`, "level.dat"); and the settings both
//! editions keep ([`LevelSettings`]) read and written, for conversions from and to Java
//! (terrane-anvil's `level_dat` is the other side).
//!
//! | Bedrock | [`LevelSettings`] |
//! |---|---|
//! | `LevelName` (and `levelname.txt`) | `name` |
//! | `SpawnX`/`SpawnY`/`SpawnZ` | `spawn` |
//! | `RandomSeed` | `seed` |
//! | `GameType` | `game_type` |
//! | `Difficulty` | `difficulty` |
//! | `LastPlayed` (seconds) | `last_played` |
//! | `Generator` 2 (flat) | `flat` |

pub use terrane_chunk::level_settings::LevelSettings;
use terrane_nbt::{Compound, Reader, Tag, Writer};

use crate::error::{Error, Result};

/// A parsed `level.dat`.
#[derive(Clone, Debug, PartialEq)]
pub struct LevelDat {
    /// The header's storage version (10 for current worlds).
    pub storage_version: i32,
    /// The world's settings.
    pub nbt: Compound,
}

impl LevelDat {
    /// Parses `level.dat` bytes: the header's length must match the body.
    pub fn parse(b: &[u8]) -> Result<LevelDat> {
        if b.len() < 8 {
            return Err(Error::LevelDat(format!(
                "{} bytes, shorter than its 8-byte header",
                b.len()
            )));
        }
        let storage_version = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let len = i32::from_le_bytes([b[4], b[5], b[6], b[7]]);
        if usize::try_from(len).ok() != Some(b.len() - 8) {
            return Err(Error::LevelDat(format!(
                "the header says {len} bytes follow, the file has {}",
                b.len() - 8
            )));
        }
        let nbt = Reader::little_endian(&b[8..]).root_compound()?;
        Ok(LevelDat { storage_version, nbt })
    }

    /// The world's name (`LevelName`), if set.
    pub fn level_name(&self) -> Option<&str> {
        match self.nbt.get("LevelName") {
            Some(terrane_nbt::Tag::String(s)) => Some(s),
            _ => None,
        }
    }
}

fn int(c: &Compound, k: &str) -> Option<i32> {
    c.get(k).and_then(Tag::as_int)
}

/// The shared settings of a Bedrock `level.dat`; `None` when it does not read.
pub fn read_settings(bytes: &[u8]) -> Option<LevelSettings> {
    let l = LevelDat::parse(bytes).ok()?;
    let c = &l.nbt;
    let spawn = match (int(c, "SpawnX"), int(c, "SpawnY"), int(c, "SpawnZ")) {
        (Some(x), Some(y), Some(z)) => Some((x, y, z)),
        _ => None,
    };
    Some(LevelSettings {
        name: c.get("LevelName").and_then(Tag::as_str).map(str::to_string),
        spawn,
        seed: c.get("RandomSeed").and_then(Tag::as_i64),
        game_type: int(c, "GameType"),
        difficulty: int(c, "Difficulty"),
        last_played: c.get("LastPlayed").and_then(Tag::as_i64),
        flat: int(c, "Generator") == Some(2),
    })
}

/// A Bedrock `level.dat` holding `s` (name `fallback` when it has none), for block version
/// `release` (`[1, 26, 30, 0, 0]`).
pub fn write(s: &LevelSettings, fallback: &str, release: [i32; 5]) -> Vec<u8> {
    let mut c = Compound::new();
    c.insert("LevelName", Tag::String(s.name.clone().unwrap_or_else(|| fallback.to_string())));
    c.insert("StorageVersion", Tag::Int(10));
    c.insert("Generator", Tag::Int(if s.flat { 2 } else { 1 }));
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
    encode(c)
}

/// A Bedrock `level.dat` of `c`: the 8-byte header (storage version 10, body length) and `c`
/// as little-endian NBT.
pub fn encode(c: Compound) -> Vec<u8> {
    let mut w = Writer::new().little_endian();
    w.named("", &Tag::Compound(c)).expect("a compound of plain tags encodes");
    [&10i32.to_le_bytes()[..], &(w.out.len() as i32).to_le_bytes(), &w.out].concat()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_settings_cross_a_bedrock_level_dat() {
        let s = LevelSettings {
            name: Some("Castle".into()),
            spawn: Some((12, 70, -5)),
            seed: Some(-42),
            game_type: Some(1),
            difficulty: Some(2),
            last_played: Some(1_700_000_000),
            flat: false,
        };
        assert_eq!(read_settings(&write(&s, "x", [1, 26, 30, 0, 0])), Some(s.clone()));
        let flat = LevelSettings { flat: true, ..s };
        assert_eq!(read_settings(&write(&flat, "x", [1, 26, 30, 0, 0])), Some(flat));
        let empty = write(&LevelSettings::default(), "fallback", [1, 26, 30, 0, 0]);
        assert_eq!(read_settings(&empty).unwrap().name.as_deref(), Some("fallback"));
    }

    #[test]
    fn header_must_match_the_body() {
        let mut c = Compound::new();
        c.insert("LevelName", Tag::String("x".into()));
        let mut w = Writer::new().little_endian();
        w.named("", &Tag::Compound(c.clone())).unwrap();
        let body = w.out;
        let file = [&10i32.to_le_bytes()[..], &(body.len() as i32).to_le_bytes(), &body].concat();
        let l = LevelDat::parse(&file).unwrap();
        assert_eq!((l.storage_version, l.level_name()), (10, Some("x")));
        assert!(LevelDat::parse(&file[..file.len() - 1]).is_err());
        assert!(LevelDat::parse(&file[..7]).is_err());
        let mut long = file.clone();
        long.push(0);
        assert!(LevelDat::parse(&long).is_err());
    }
}
