//! `level.dat`: an 8-byte header (storage version and body length, `i32` little-endian) and a
//! little-endian NBT compound (`docs/format/bedrock.md`, "level.dat").

use terrane_nbt::{Compound, Reader};

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

#[cfg(test)]
mod tests {
    use super::*;
    use terrane_nbt::{Tag, Writer};

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
