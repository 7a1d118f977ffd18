//! What every export shares: the rule for a destination that already holds something.
//!
//! An export never writes over a world, region files or a file without being told:
//! [`java::export_region_dir`](crate::java::export_region_dir),
//! [`java::export_java_world`](crate::java::export_java_world),
//! [`bedrock::export_bedrock_world`](crate::bedrock::export_bedrock_world) and
//! [`schem::write_schematic`](crate::schem::write_schematic) take an [`Overwrite`], check
//! their destination first and, with [`Overwrite::Refuse`] (the default), refuse one that
//! holds something with [`Error::WouldOverwrite`] before anything is written. A destination
//! of the wrong kind (a file where a folder goes, a Java world where a Bedrock one goes, a
//! terrane world) is refused with [`Error::Refused`] whatever the [`Overwrite`].
//!
//! ```
//! use terrane::{Backend, Error, World, export::Overwrite, java};
//!
//! let dir = tempfile::tempdir()?;
//! let world = World::builder().backend(Backend::Memory).create(dir.path().join("w"))?;
//! let out = dir.path().join("region");
//! std::fs::create_dir(&out)?;
//! std::fs::write(out.join("r.0.0.mca"), b"a player's region")?;
//! let e = java::export_region_dir(&world, 0, &out, &Default::default(), Overwrite::Refuse, &mut |_| {});
//! assert!(matches!(e, Err(Error::WouldOverwrite { .. })));
//! assert_eq!(std::fs::read(out.join("r.0.0.mca"))?, b"a player's region");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::path::Path;

use crate::error::io;
use crate::refusal::{Holds, Refusal, Writes};
use crate::{Error, Result};

/// What an export does when its destination already holds a world, region files or a file.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum Overwrite {
    /// Refuse ([`Error::WouldOverwrite`]) before anything is written. The default, and what
    /// the `terrane` command does without `--force` or `--merge`.
    #[default]
    Refuse,
    /// Replace (`--force`): the destination ends up holding exactly the exported world. Java:
    /// the region and side files the export did not write are removed from the folders it
    /// writes (every dimension's, for a world folder, and `level.dat` when the world kept
    /// none); Bedrock: the world folder is replaced whole; a schematic: the file.
    Replace,
    /// Merge (`--merge`): the exported world's regions (Java: `r.X.Z.mca` files, with their
    /// entity regions and side files) or columns (Bedrock) are written over the same-named
    /// ones, the others are kept; so are `level.dat` and the other files the export does not
    /// write (a Bedrock world keeps its packs and icon; its `level.dat` is the exported
    /// world's when it kept one). Not for a schematic, which is one file.
    Merge,
}

pub(crate) use terrane_convert::place::Found;

/// What `path` holds ([`Found`]).
pub(crate) fn inspect(path: &Path) -> Result<Found> {
    Ok(terrane_convert::place::inspect(path)?)
}

/// The refusal of a destination at `path` that holds `found` where `writes` goes.
pub(crate) fn refused(path: &Path, found: Found, writes: Writes) -> Error {
    let holds = match found {
        Found::File => Holds::File,
        Found::TerraneWorld => Holds::TerraneWorld,
        Found::JavaWorld => Holds::JavaWorld,
        Found::BedrockWorld => Holds::BedrockWorld,
        Found::RegionFiles => Holds::RegionFiles,
        Found::Nothing | Found::Other => Holds::OtherFiles,
    };
    Refusal::Destination { path: path.into(), holds, writes }.into()
}

/// Writes `path` under a temporary name beside it, syncs it, and renames it into place: the
/// file is either the old one or the new one whole, never half-written
/// ([`terrane_store::file::write_whole`]). What every file an export writes goes through (the
/// `terrane` command's chunk and map files too).
///
/// # Errors
/// [`Error::Io`] naming `path`; the temporary file is removed.
pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    terrane_store::file::write_whole(path, bytes).map_err(io(path))
}

/// [`write_whole`] of what `write` writes to the temporary file (buffered), for a file too
/// large to hold in memory (a map streamed row by row). An error of `write` stops it, like
/// one of the file's.
///
/// # Errors
/// [`Error::Io`] naming `path`; the temporary file is removed.
pub fn write_whole_with(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<()> {
    terrane_store::file::write_whole_with(path, write).map_err(io(path))
}
