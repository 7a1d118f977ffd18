//! The world's registries as stored in `worldMeta` (one object per part, the keys of
//! [`SchemaBytes::KEYS`]; `docs/format/keys.md`): read here, for the tiered store's open and
//! for anyone else who needs the stored schema without opening one.

use terrane_chunk::{Schema, SchemaBytes};
use terrane_store::{Store, tables};

use crate::error::{Error, Result};

/// The stored schema and the versions of its objects (`None` for an absent one).
pub(crate) type StoredSchema = (Option<Schema>, Vec<Option<i64>>);

/// Reads the schema parts and their versions: `None` when the store holds none of them yet,
/// [`Error::CorruptMeta`] when it holds only some.
pub(crate) fn read_with_versions<S: Store + ?Sized>(store: &S) -> Result<StoredSchema> {
    let mut parts = Vec::with_capacity(SchemaBytes::KEYS.len());
    let mut versions = Vec::with_capacity(SchemaBytes::KEYS.len());
    for k in SchemaBytes::KEYS {
        let o = store.get(tables::WORLD_META, k.as_bytes())?;
        versions.push(o.as_ref().map(|o| o.version));
        parts.push(o.map(|o| o.data));
    }
    let present = parts.iter().filter(|p| p.is_some()).count();
    if present == 0 {
        return Ok((None, versions));
    }
    if present != parts.len() {
        return Err(Error::CorruptMeta(format!(
            "worldMeta holds {present} of the {} schema properties",
            parts.len()
        )));
    }
    let mut it = parts.into_iter().map(Option::unwrap_or_default);
    let mut next = || it.next().unwrap_or_default();
    let bytes = SchemaBytes {
        blocks: next(),
        components: next(),
        entities: next(),
        structures: next(),
        layout: next(),
    };
    Ok((Some(Schema::decode(&bytes)?), versions))
}

/// The schema a world stored in `worldMeta`, or `None` for a store that has none yet.
///
/// # Errors
/// [`Error::CorruptMeta`] when only some of its parts are there; a decode error for damaged
/// parts; the store's errors.
pub fn stored_schema<S: Store + ?Sized>(store: &S) -> Result<Option<Schema>> {
    Ok(read_with_versions(store)?.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use terrane_store::{Batch, MemStore, StoreConfig};

    #[test]
    fn none_all_or_a_part_of_the_schema() {
        let store = MemStore::open(&StoreConfig::new("t")).unwrap();
        assert!(stored_schema(&store).unwrap().is_none(), "a new store holds none");
        let mut schema = Schema::new();
        schema.add_block("minecraft:air", &[]).unwrap();
        let enc = schema.encode();
        let mut batch = Batch::new();
        batch.put(tables::WORLD_META, SchemaBytes::KEYS[0].as_bytes().to_vec(), 0, enc.blocks);
        store.write(&batch).unwrap();
        assert!(
            matches!(stored_schema(&store), Err(Error::CorruptMeta(_))),
            "one part of five is damage, not an empty world"
        );
        let parts = [enc.components, enc.entities, enc.structures, enc.layout];
        let mut batch = Batch::new();
        for (k, v) in SchemaBytes::KEYS[1..].iter().zip(parts) {
            batch.put(tables::WORLD_META, k.as_bytes().to_vec(), 0, v);
        }
        store.write(&batch).unwrap();
        assert_eq!(stored_schema(&store).unwrap(), Some(schema));
    }
}
