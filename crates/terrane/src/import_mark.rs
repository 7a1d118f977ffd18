//! The mark a world holds while an import writes into it
//! ([`IMPORTING_KEY`](crate::IMPORTING_KEY)): a world whose import was cut off (Ctrl-C, a
//! kill, a power loss, an error) holds part of its source and does not open
//! ([`Error::ImportUnfinished`](crate::Error::ImportUnfinished)), except to import again
//! ([`WorldBuilder::for_import`](crate::WorldBuilder::for_import)): the import skips the
//! columns it wrote and removes the mark when it ends.
//!
//! Format: `docs/format/world-dir.md`, "Keys the facade and the CLI add".

use crate::world_dir::Fill;
use crate::{Result, World};

/// Marks `world` as being imported into from `edition` (empty: not yet known), synced.
pub(crate) fn mark(world: &World, edition: &str) -> Result<()> {
    Fill::Import.mark(world.store(), edition.as_bytes().to_vec())
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
    Fill::Import.unmark(world.store())?;
    Ok(done)
}
