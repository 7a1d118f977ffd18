//! The mark a world holds while an import writes into it ([`IMPORTING_KEY`]): a world whose
//! import was cut off (Ctrl-C, a kill, a power loss, an error) holds part of its source and
//! does not open ([`Error::ImportUnfinished`](crate::Error::ImportUnfinished)), except to
//! import again ([`WorldBuilder::for_import`](crate::WorldBuilder::for_import)): the
//! import skips the columns it wrote and removes the mark when it ends.
//!
//! Format: `docs/format/world-dir.md`, "Keys the facade and the CLI add".

use terrane_store::{Batch, tables};

use crate::{Result, World};

/// The `worldMeta` key a world holds from an import's first write (or, made for an import,
/// from its creation: [`WorldBuilder::for_import`](crate::WorldBuilder::for_import)) to the
/// import's end: the import's source edition (`java` or `bedrock`; empty before it began).
pub const IMPORTING_KEY: &[u8] = b"terrane:importing";

/// Marks `world` as being imported into from `edition` (empty: not yet known), synced.
pub(crate) fn mark(world: &World, edition: &str) -> Result<()> {
    let mut begin = Batch::new();
    begin.put(tables::WORLD_META, IMPORTING_KEY.to_vec(), 0, edition.as_bytes().to_vec());
    Ok(world.store().write(&begin.synced())?)
}

/// Runs `import` on `world` between the mark (synced before anything is imported) and its
/// removal (synced after everything imported is durable). An import that fails or is cut
/// off leaves the mark.
pub(crate) fn marked<T>(
    world: &mut World,
    edition: &str,
    import: impl FnOnce(&mut World) -> Result<T>,
) -> Result<T> {
    mark(world, edition)?;
    let done = import(world)?;
    world.sync()?;
    let mut end = Batch::new();
    end.delete(tables::WORLD_META, IMPORTING_KEY.to_vec());
    world.store().write(&end.synced())?;
    Ok(done)
}
