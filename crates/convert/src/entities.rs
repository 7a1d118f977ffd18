//! A column's entities from one edition's form to the other's, through
//! [`terrane_bedrock::entity`]: Java entity compounds into Bedrock's entity records (one
//! `actorprefix` record each and the column's `digp` list), and Bedrock entity records into
//! Java compounds for the column's entity chunk. Used by the conversions and by the
//! `terrane` facade's Bedrock export of a world of Java states.

use terrane_anvil::mapping::ints_uuid;
use terrane_bedrock::entity::{self, EntityReport};
use terrane_bedrock::key::{BedrockColumnPos, actor_key};
use terrane_nbt::{Reader, Tag, Writer};

use crate::error::Result;

/// The records of a column's Java entities (`java`: the UUID terrane-anvil's importer gave
/// each, and its big-endian NBT) in Bedrock's form: each translated entity under its
/// `actorprefix` key, and the column's `digp` list naming them; none when none translates.
/// `data_version` is the column's.
pub fn java_to_bedrock_records<'a>(
    pos: BedrockColumnPos,
    java: impl IntoIterator<Item = (&'a [u8; 16], &'a [u8])>,
    data_version: Option<i32>,
    report: &mut EntityReport,
) -> Result<Vec<(Vec<u8>, Vec<u8>)>> {
    let mut out = Vec::new();
    let mut ids: Vec<i64> = Vec::new();
    for (uuid, bytes) in java {
        let compound = match terrane_nbt::from_bytes(bytes) {
            Ok((_, Tag::Compound(c))) => c,
            _ => {
                *report.left.entry("(damaged entity)".into()).or_default() += 1;
                continue;
            }
        };
        let Some(mut b) = entity::java_to_bedrock(&compound, data_version, report) else {
            continue;
        };
        let mut id = b.get("UniqueID").and_then(Tag::as_i64).unwrap_or_default();
        if ids.contains(&id) {
            // An entity without a UUID of its own where another is: the importer's UUID for
            // it (distinct within the column) gives the id.
            let half = |h: &[u8]| i64::from_be_bytes(h.try_into().expect("8 bytes"));
            id = half(&uuid[..8]) ^ half(&uuid[8..]);
            b.insert("UniqueID", Tag::Long(id));
        }
        if ids.contains(&id) {
            *report.left.entry("(unique id taken)".into()).or_default() += 1;
            continue;
        }
        let mut w = Writer::new().little_endian();
        w.named("", &Tag::Compound(b))?;
        out.push((actor_key(id), w.out));
        ids.push(id);
    }
    if !ids.is_empty() {
        out.push((pos.digp_key(), ids.iter().flat_map(|i| i.to_le_bytes()).collect()));
    }
    Ok(out)
}

/// A column's Bedrock entities in Java's form: its entity records (`records`, little-endian
/// NBT, one entity each) and its pre-1.18.30 entity list (`legacy`, compounds back to back),
/// each translated entity as its Java UUID (16 bytes) and big-endian NBT compound. A damaged
/// record is counted as a left-out `(damaged entity)`; damage in the list ends it there.
pub(crate) fn bedrock_to_java_entities<'a>(
    records: impl IntoIterator<Item = &'a [u8]>,
    legacy: Option<&[u8]>,
    report: &mut EntityReport,
) -> Result<Vec<([u8; 16], Vec<u8>)>> {
    let mut compounds = Vec::new();
    let mut damaged = 0;
    for bytes in records {
        match Reader::little_endian(bytes).root_compound() {
            Ok(c) => compounds.push(c),
            Err(_) => damaged += 1,
        }
    }
    if let Some(list) = legacy {
        let mut r = Reader::little_endian(list);
        while r.remaining() > 0 {
            match r.root_compound() {
                Ok(c) => compounds.push(c),
                Err(_) => {
                    damaged += 1;
                    break;
                }
            }
        }
    }
    if damaged > 0 {
        *report.left.entry("(damaged entity)".into()).or_default() += damaged;
    }
    let mut out = Vec::new();
    for compound in compounds {
        let Some(java) = entity::bedrock_to_java(&compound, report) else { continue };
        let uuid = match java.get("UUID") {
            Some(Tag::IntArray(ints)) => ints_uuid(ints).unwrap_or_default(),
            _ => [0; 16],
        };
        out.push((uuid, terrane_nbt::to_bytes("", &Tag::Compound(java))?));
    }
    Ok(out)
}
