//! Block states of Bedrock worlds from before 1.13, which stored blocks by number: a block's
//! numeric id and its *meta* (0–15), in palettes as `{name, val}` (1.2.13 to 1.12) or, before
//! 1.2.13, as two plain arrays per sub-chunk (versions 0 and 2–7). Both become the 1.12.0
//! block state through the public tables of pmmp/BedrockBlockUpgradeSchema, vendored in
//! `data/block-upgrade-schema/legacy/` (its `id_meta_to_nbt/1.12.0.bin` and
//! `block_legacy_id_map.json`; `docs/format/bedrock.md`, "Old block states"), which
//! [`upgrade`](crate::upgrade) then brings up to date. An id or meta the tables lack is kept by name (`{name, val}`), so the
//! translation report names it.

use std::collections::HashMap;
use std::sync::OnceLock;

use terrane_nbt::{Compound, Reader, Tag};

use crate::error::{Error, Result};
use crate::subchunk::{CELLS, Storage};

/// `(name, meta)` → the 1.12.0 state, `{name, states, version}`.
const ID_META_TO_NBT: &[u8] =
    include_bytes!("../data/block-upgrade-schema/legacy/id_meta_to_nbt_1.12.0.bin");

/// Block name → numeric id, for every block up to 1.16.0.
const LEGACY_IDS: &str =
    include_str!("../data/block-upgrade-schema/legacy/block_legacy_id_map.json");

/// What the name of a numeric id the tables lack is: `terrane:legacy_id_<id>`.
pub const UNKNOWN_ID_PREFIX: &str = "terrane:legacy_id_";

struct Tables {
    states: HashMap<(String, u16), Compound>,
    names: HashMap<u16, String>,
}

/// An unsigned LEB128 varint of at most 32 bits.
fn varint(b: &[u8], at: &mut usize) -> Option<u32> {
    u32::try_from(crate::table_check::varint(b, at)?).ok()
}

/// Parses the `.bin` table (the schema's README: entries of a name and its metas, each with a
/// little-endian NBT state).
fn parse_id_meta(b: &[u8]) -> Option<HashMap<(String, u16), Compound>> {
    let mut at = 0;
    let mut out = HashMap::new();
    for _ in 0..varint(b, &mut at)? {
        let len = varint(b, &mut at)? as usize;
        let name = std::str::from_utf8(b.get(at..at + len)?).ok()?.to_string();
        at += len;
        for _ in 0..varint(b, &mut at)? {
            let meta = u16::try_from(varint(b, &mut at)?).ok()?;
            let mut r = Reader::little_endian(b.get(at..)?);
            let state = r.root_compound().ok()?;
            at += r.position();
            out.insert((name.clone(), meta), state);
        }
    }
    (at == b.len()).then_some(out)
}

fn tables() -> &'static Tables {
    static T: OnceLock<Tables> = OnceLock::new();
    T.get_or_init(|| {
        let states = parse_id_meta(ID_META_TO_NBT)
            .expect("the vendored id/meta table parses (checked by its tests)");
        let ids: HashMap<String, u16> = serde_json::from_str(LEGACY_IDS)
            .expect("the vendored legacy id map parses (checked by its tests)");
        let names = ids.into_iter().map(|(n, id)| (id, n)).collect();
        Tables { states, names }
    })
}

/// The 1.12.0 state of block `name` with meta `meta`; `None` when the table lacks it.
pub fn state_of(name: &str, meta: u16) -> Option<&'static Compound> {
    tables().states.get(&(name.to_string(), meta))
}

/// The name of numeric block id `id`; `None` when the table lacks it.
pub fn name_of(id: u16) -> Option<&'static str> {
    tables().names.get(&id).map(String::as_str)
}

/// A `{name, val}` palette entry (1.2.13 to 1.12) as its 1.12.0 state; `None` when `entry`
/// is not one or the table lacks it.
pub fn state_of_entry(entry: &Compound) -> Option<&'static Compound> {
    if entry.contains_key("states") {
        return None;
    }
    let Some(Tag::String(name)) = entry.get("name") else { return None };
    let meta = match entry.get("val") {
        Some(Tag::Short(v)) => u16::try_from(*v).ok()?,
        _ => return None,
    };
    state_of(name, meta)
}

/// A sub-chunk of version 0 or 2–7 (`value` after its version byte): 4,096 block ids, then
/// 2,048 bytes of metas (a nibble each, low nibble first), cells in Bedrock's order; the light
/// arrays some versions add after them are not read. One storage whose palette holds a
/// `{name, val}` entry per id and meta found.
pub fn decode_subchunk(value: &[u8]) -> Result<Storage> {
    let too_short = || Error::SubChunk(format!("legacy sub-chunk of {} bytes", value.len()));
    let ids = value.get(..CELLS).ok_or_else(too_short)?;
    let metas = value.get(CELLS..CELLS + CELLS / 2).ok_or_else(too_short)?;
    let mut palette: Vec<Compound> = Vec::new();
    let mut seen: HashMap<(u8, u8), u16> = HashMap::new();
    let mut indices = Box::new([0u16; CELLS]);
    for (i, index) in indices.iter_mut().enumerate() {
        let meta = (metas[i / 2] >> ((i % 2) * 4)) & 0x0f;
        let id = ids[i];
        *index = *seen.entry((id, meta)).or_insert_with(|| {
            let name = match name_of(u16::from(id)) {
                Some(n) => n.to_string(),
                None => format!("{UNKNOWN_ID_PREFIX}{id}"),
            };
            let mut c = Compound::new();
            c.insert("name", Tag::String(name));
            c.insert("val", Tag::Short(i16::from(meta)));
            palette.push(c);
            (palette.len() - 1) as u16
        });
    }
    Ok(Storage { palette, indices })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vendored_tables_parse_whole() {
        let t = tables();
        assert!(t.states.len() > 3_000, "{}", t.states.len());
        assert_eq!(name_of(1), Some("minecraft:stone"));
        assert_eq!(name_of(2), Some("minecraft:grass"));
        let granite = state_of("minecraft:stone", 1).unwrap();
        let Some(Tag::Compound(states)) = granite.get("states") else { panic!("{granite:?}") };
        assert_eq!(states.get("stone_type"), Some(&Tag::String("granite".into())));
        assert!(state_of("minecraft:stone", 15).is_none());
        // A truncated table does not parse.
        assert!(parse_id_meta(&ID_META_TO_NBT[..ID_META_TO_NBT.len() - 1]).is_none());
    }

    #[test]
    fn a_legacy_subchunk_becomes_one_storage_of_ids_and_metas() {
        let mut v = vec![0u8; CELLS + CELLS / 2 + 2 * 2048];
        v[0] = 1; // stone
        v[CELLS] = 0x01; // meta 1 (granite) in the low nibble of cell 0
        v[1] = 2; // grass, meta 0
        v[2] = 230; // an id the table lacks
        let s = decode_subchunk(&v).unwrap();
        let entry = |i: usize| &s.palette[s.indices[i] as usize];
        assert_eq!(entry(0).get("name"), Some(&Tag::String("minecraft:stone".into())));
        assert_eq!(entry(0).get("val"), Some(&Tag::Short(1)));
        assert_eq!(entry(1).get("name"), Some(&Tag::String("minecraft:grass".into())));
        let unknown = format!("{UNKNOWN_ID_PREFIX}230");
        assert_eq!(entry(2).get("name"), Some(&Tag::String(unknown)));
        assert_eq!(entry(3).get("name"), Some(&Tag::String("minecraft:air".into())));
        assert_eq!(s.palette.len(), 4);
        assert!(decode_subchunk(&v[..CELLS + 10]).is_err());
    }
}
