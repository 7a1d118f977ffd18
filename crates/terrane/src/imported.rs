//! What `java` and `bedrock` imports share: the keys of their column records, their `i32`
//! world properties and the rule that an import does not write over a world's own chunks
//! (`docs/format/world-dir.md`).

use terrane_section::{ColumnPos, morton};
use terrane_store::{KeyRange, tables};

use crate::refusal::{ChunksFrom, ImportedFrom, Refusal};
use crate::{Error, Result, World};

/// The key of a column's record under `prefix`: then, for dimensions other than 0, the
/// dimension (`u64` big-endian), then the 2D Morton key of the column (16 bytes, keys.md).
/// Overworld keys have no dimension part, as before dimensions were imported.
pub(crate) fn column_record_key(prefix: &[u8], dim: u64, pos: ColumnPos) -> Vec<u8> {
    let morton = morton::encode2(i64::from(pos.x), i64::from(pos.z));
    if dim == 0 {
        [prefix, &morton].concat()
    } else {
        [prefix, &dim.to_be_bytes(), &morton].concat()
    }
}

/// Splits a key made by [`column_record_key`] with `prefix`; `None` for another key.
pub(crate) fn parse_column_record_key(prefix: &[u8], key: &[u8]) -> Option<(u64, ColumnPos)> {
    let rest = key.strip_prefix(prefix)?;
    let (dim, m) = match rest.len() {
        16 => (0, rest),
        24 => (u64::from_be_bytes(rest[..8].try_into().ok()?), &rest[8..]),
        _ => return None,
    };
    let (x, z) = morton::decode2(m.try_into().ok()?);
    Some((dim, ColumnPos::new(i32::try_from(x).ok()?, i32::try_from(z).ok()?)))
}

/// A `worldProperties` value that is one `i32` big-endian (`what` names it in the error), if
/// the world has it.
pub(crate) fn i32_property(world: &World, key: &[u8], what: &str) -> Result<Option<i32>> {
    let Some(o) = world.store().get(tables::WORLD_PROPERTIES, key)? else {
        return Ok(None);
    };
    match <[u8; 4]>::try_from(o.data.as_slice()) {
        Ok(b) => Ok(Some(i32::from_be_bytes(b))),
        Err(_) => Err(Error::Inconsistent(format!(
            "worldProperties {:?} holds {} bytes, not a 4-byte {what}",
            String::from_utf8_lossy(key),
            o.data.len()
        ))),
    }
}

/// The `worldProperties` key prefix of Java column records (`terrane::java::RECORD_PREFIX`).
pub(crate) const JAVA_RECORD_PREFIX: &[u8] = b"anvil:column:";

/// The `worldProperties` key prefix of Bedrock column records
/// (`terrane::bedrock::RECORD_PREFIX`).
pub(crate) const BEDROCK_RECORD_PREFIX: &[u8] = b"bedrock:column:";

/// The `worldProperties` key of the newest `DataVersion` imported
/// (`terrane::java::DATA_VERSION_KEY`).
pub(crate) const DATA_VERSION_KEY: &[u8] = b"minecraft:dataVersion";

/// The `worldProperties` key of a Bedrock world's block version
/// (`terrane::bedrock::BLOCK_VERSION_KEY`).
pub(crate) const BLOCK_VERSION_KEY: &[u8] = b"bedrock:blockVersion";

/// The newest `DataVersion` the world's blocks were imported at, if any import recorded one.
pub(crate) fn data_version(world: &World) -> Result<Option<i32>> {
    i32_property(world, DATA_VERSION_KEY, "DataVersion")
}

/// The block version a Bedrock import recorded, if one did.
pub(crate) fn block_version(world: &World) -> Result<Option<i32>> {
    i32_property(world, BLOCK_VERSION_KEY, "block version")
}

/// The world imports whose column records tell where a world's chunks came from: the
/// records' key prefix, and the import.
const IMPORTS: [(&[u8], ImportedFrom); 2] =
    [(JAVA_RECORD_PREFIX, ImportedFrom::Java), (BEDROCK_RECORD_PREFIX, ImportedFrom::Bedrock)];

/// Refuses an import into a world that holds chunks of its own: the import would write its
/// columns over them without a word. A world that holds column records under `prefix` (its
/// chunks came from this kind of import) is a resumed import: allowed. `import` names the
/// source. The refusal says where the chunks came from: another kind of import
/// ([`IMPORTS`]), or the world's own saves.
pub(crate) fn refuse_overwrite(world: &World, prefix: &[u8], import: ImportedFrom) -> Result<()> {
    let store = world.store();
    let mut has_chunks = false;
    for t in [tables::CHUNK_L0, tables::CHUNK_L1, tables::CHUNK_L2] {
        if store.scan(t, KeyRange::all())?.next().is_some() {
            has_chunks = true;
            break;
        }
    }
    if !has_chunks || store.scan_prefix(tables::WORLD_PROPERTIES, prefix)?.next().is_some() {
        return Ok(());
    }
    let mut chunks = ChunksFrom::Saves;
    for (p, from) in IMPORTS {
        if p != prefix && store.scan_prefix(tables::WORLD_PROPERTIES, p)?.next().is_some() {
            chunks = ChunksFrom::Import(from);
            break;
        }
    }
    Err(Refusal::ImportOverChunks { chunks, import }.into())
}
