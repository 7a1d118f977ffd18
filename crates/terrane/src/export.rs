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

use std::fs;
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

/// What a destination holds, as far as an export is concerned.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// Nothing: the path does not exist, or is an empty folder.
    Nothing,
    /// A file (or anything that is not a folder).
    File,
    /// A terrane world (its `terrane-world` marker, or one being created).
    TerraneWorld,
    /// A Bedrock world folder (`db/CURRENT`).
    BedrockWorld,
    /// A Java world folder (`level.dat` or `region/`).
    JavaWorld,
    /// Region files (`r.X.Z.mca`) right in the folder: a region folder.
    RegionFiles,
    /// A folder holding other things.
    Other,
}

/// What `path` holds ([`Found`]).
pub(crate) fn inspect(path: &Path) -> Result<Found> {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Nothing),
        Err(e) => return Err(io(path)(e)),
    };
    if !meta.is_dir() {
        return Ok(Found::File);
    }
    Ok(if path.join(crate::world_dir::MARKER).exists() || crate::world_dir::is_unfinished(path) {
        Found::TerraneWorld
    } else if is_bedrock_world(path) {
        Found::BedrockWorld
    } else if is_java_world(path) {
        Found::JavaWorld
    } else if has_region_files(path) {
        Found::RegionFiles
    } else if fs::read_dir(path).map_err(io(path))?.next().is_none() {
        Found::Nothing
    } else {
        Found::Other
    })
}

/// Whether `dir` is a Java world folder (it holds `level.dat`, a `region` or a `dimensions`
/// folder), as opposed to a region folder.
pub fn is_java_world(dir: &Path) -> bool {
    dir.join("level.dat").is_file()
        || dir.join("region").is_dir()
        || dir.join("dimensions").is_dir()
}

/// Whether `dir` holds region files (`r.X.Z.mca`).
pub fn has_region_files(dir: &Path) -> bool {
    terrane_anvil::region::list_regions(dir).is_ok_and(|r| !r.is_empty())
}

/// Whether `dir` is a Bedrock world folder (`db/CURRENT` is there).
pub fn is_bedrock_world(dir: &Path) -> bool {
    dir.join("db").join("CURRENT").is_file()
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
/// file is either the old one or the new one whole, never half-written. What every file an
/// export writes goes through (the `terrane` command's chunk and map files too).
///
/// # Errors
/// [`Error::Io`] naming `path`; the temporary file is removed.
pub fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    write_whole_with(path, |f| f.write_all(bytes))
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
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".terrane-tmp");
    let tmp = path.with_file_name(name);
    let write = || -> std::io::Result<()> {
        use std::io::Write as _;
        let mut f = std::io::BufWriter::new(fs::File::create(&tmp)?);
        write(&mut f)?;
        f.flush()?;
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().map_err(|e| {
        let _ = fs::remove_file(&tmp);
        io(path)(e)
    })
}
