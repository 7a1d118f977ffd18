//! Every player of a world between the editions, beside the single-player world's own
//! (`convert`): Java's player files (`playerdata/<uuid>.dat`, 26.1's `players/data/`) ⇄
//! Bedrock's `player_server_<id>` records, each through
//! [`terrane_bedrock::player`] (place, dimension, game mode, experience, inventory, armour,
//! off hand, ender chest).
//!
//! The ids (`docs/format/java-bedrock-table.md`, "Players"): a Java player's UUID is its
//! Bedrock server id, as text (`player_server_0f1e…`), and back. A Bedrock id that is not a
//! UUID gets the UUID whose bytes are the first 16 of SHA-256(`terrane:bedrock-player:` ‖
//! id), version 8, and a line `<uuid> <id>` in the Java world's [`BEDROCK_PLAYER_IDS`], which
//! a conversion back to Bedrock reads: either way, converting again finds the same players.

use std::collections::BTreeMap;
use std::fs;
use std::io::{Read, Write};
use std::path::Path;

use sha2::{Digest, Sha256};
use terrane_bedrock::db::WriteDb;
use terrane_bedrock::entity::EntityReport;
use terrane_nbt::{Reader, Tag, Writer};

use crate::error::Result;
use crate::error::io;

/// The prefix of a Bedrock server's player records.
pub const PLAYER_SERVER_PREFIX: &[u8] = b"player_server_";

/// The file of a Java world converted from Bedrock naming the Bedrock id of each player whose
/// id is not a UUID: lines `<uuid> <bedrock id>`.
pub const BEDROCK_PLAYER_IDS: &str = "terrane-bedrock-players.txt";

/// What the report counts a player file or record that does not read under.
const DAMAGED_PLAYER: &str = "(damaged player)";

/// Whether `s` is a UUID in its text form (`8-4-4-4-12` hex digits).
fn is_uuid(s: &str) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups.iter().all(|g| g.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The four ints of a UUID's text form.
fn uuid_ints(s: &str) -> Option<[i32; 4]> {
    let hex: String = s.split('-').collect();
    let mut out = [0i32; 4];
    for (i, o) in out.iter_mut().enumerate() {
        *o = u32::from_str_radix(hex.get(i * 8..i * 8 + 8)?, 16).ok()? as i32;
    }
    Some(out)
}

/// The Java UUID a Bedrock player id that is not a UUID gets: the first 16 bytes of
/// SHA-256(`terrane:bedrock-player:` ‖ id), version 8 (`docs/format/java-bedrock-table.md`,
/// "Players").
pub fn bedrock_player_uuid(id: &str) -> String {
    let mut b: [u8; 16] =
        Sha256::digest(format!("terrane:bedrock-player:{id}"))[..16].try_into().expect("16 bytes");
    b[6] = (b[6] & 0x0f) | 0x80; // version 8
    b[8] = (b[8] & 0x3f) | 0x80; // RFC 4122 variant
    terrane_anvil::folder::uuid_text(u128::from_be_bytes(b))
}

/// The Java world's player files, by UUID (`playerdata/`, or 26.1's `players/data/`).
pub(crate) fn java_player_files(src: &Path) -> BTreeMap<String, std::path::PathBuf> {
    let mut out = BTreeMap::new();
    for dir in ["playerdata", "players/data"].map(|d| src.join(d)) {
        let Ok(entries) = fs::read_dir(&dir) else { continue };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(uuid) = name.strip_suffix(".dat") {
                out.insert(uuid.to_string(), e.path());
            }
        }
    }
    out
}

/// The Bedrock ids a Java world's [`BEDROCK_PLAYER_IDS`] names, by UUID.
fn bedrock_ids(src: &Path) -> BTreeMap<String, String> {
    let text = fs::read_to_string(src.join(BEDROCK_PLAYER_IDS)).unwrap_or_default();
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(u, id)| (u.to_string(), id.to_string()))
        .collect()
}

/// Java → Bedrock: every player file of `src` but the single player's (`local`), as a
/// `player_server_` record in `db`. Returns the players written; the report counts each
/// translated, and each file that does not read.
pub(crate) fn java_to_bedrock(
    src: &Path,
    local: Option<&str>,
    db: &mut WriteDb,
    report: &mut EntityReport,
) -> Result<u64> {
    let ids = bedrock_ids(src);
    let mut written = 0;
    for (uuid, path) in java_player_files(src) {
        if Some(uuid.as_str()) == local {
            continue;
        }
        let mut raw = Vec::new();
        let bytes = fs::read(&path).map_err(io(&path))?;
        let read = flate2::read::GzDecoder::new(&bytes[..]).take(64 << 20).read_to_end(&mut raw);
        let java = match read.ok().map(|_| Reader::new(&raw).root_compound()) {
            Some(Ok(c)) => c,
            _ => {
                *report.left.entry(DAMAGED_PLAYER.into()).or_default() += 1;
                continue;
            }
        };
        let Some(b) = terrane_bedrock::player::java_to_bedrock(&java, report) else { continue };
        let id = ids.get(&uuid).cloned().unwrap_or_else(|| uuid.clone());
        let mut w = Writer::new().little_endian();
        w.named("", &Tag::Compound(b))?;
        db.put(&[PLAYER_SERVER_PREFIX, id.as_bytes()].concat(), &w.out)?;
        written += 1;
    }
    Ok(written)
}

/// Bedrock → Java: every `player_server_` record (`(id, value)`) as a player file of the
/// Java world being written in `dst` (`playerdata/<uuid>.dat`), and the ids that are not
/// UUIDs in its [`BEDROCK_PLAYER_IDS`]. Returns the players written.
pub(crate) fn bedrock_to_java(
    records: &[(String, Vec<u8>)],
    dst: &Path,
    report: &mut EntityReport,
) -> Result<u64> {
    let mut written = 0;
    let mut named = String::new();
    for (id, value) in records {
        let bedrock = match Reader::little_endian(value).root_compound() {
            Ok(c) => c,
            Err(_) => {
                *report.left.entry(DAMAGED_PLAYER.into()).or_default() += 1;
                continue;
            }
        };
        let Some(mut java) = terrane_bedrock::player::bedrock_to_java(&bedrock, report) else {
            continue;
        };
        let uuid = if is_uuid(id) {
            id.to_ascii_lowercase()
        } else {
            let u = bedrock_player_uuid(id);
            named.push_str(&format!("{u} {id}\n"));
            u
        };
        let ints = uuid_ints(&uuid).expect("a UUID's text form");
        java.insert("UUID", Tag::IntArray(ints.to_vec()));
        let mut w = Writer::new();
        w.named("", &Tag::Compound(java))?;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(&w.out).expect("writing to memory");
        let dir = dst.join("playerdata");
        fs::create_dir_all(&dir).map_err(io(&dir))?;
        let path = dir.join(format!("{uuid}.dat"));
        fs::write(&path, gz.finish().expect("writing to memory")).map_err(io(&path))?;
        written += 1;
    }
    if !named.is_empty() {
        let path = dst.join(BEDROCK_PLAYER_IDS);
        fs::write(&path, named).map_err(io(&path))?;
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_are_not_uuids_get_one_of_their_own_always_the_same() {
        assert!(is_uuid("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0"));
        assert!(!is_uuid("0f1e2d3c4b5a69788796a5b4c3d2e1f0"));
        assert!(!is_uuid("-8"));
        let u = bedrock_player_uuid("xbox:2535416");
        assert!(is_uuid(&u), "{u}");
        assert_eq!(u, bedrock_player_uuid("xbox:2535416"));
        assert_ne!(u, bedrock_player_uuid("xbox:2535417"));
        assert_eq!(&u[14..15], "8", "version 8");
        let ints = uuid_ints("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0").unwrap();
        assert_eq!(ints, [0x0f1e2d3c, 0x4b5a6978, 0x8796a5b4_u32 as i32, 0xc3d2e1f0_u32 as i32]);
    }
}
