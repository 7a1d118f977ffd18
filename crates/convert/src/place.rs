//! Where a conversion writes: a destination that holds nothing, a temporary folder beside
//! it that names the conversion it holds (so that a run after a crash goes on from it), and
//! the rename into place once the world is whole.

use std::fmt;
use std::fs;
use std::path::Path;

use terrane_anvil::folder::{has_region_files, is_java_world};
use terrane_bedrock::is_bedrock_world;

use crate::error::{Error, Result, io};

/// What a destination path holds, as a conversion or an export looks at it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// Nothing: the path does not exist, or is an empty folder.
    Nothing,
    /// A file (or anything that is not a folder).
    File,
    /// A terrane world, or one being created (its marker files,
    /// [`holds_terrane_world`](terrane_store::file::holds_terrane_world)).
    TerraneWorld,
    /// A Bedrock world folder (`db/CURRENT`).
    BedrockWorld,
    /// A Java world folder (`level.dat`, `region/` or `dimensions/`).
    JavaWorld,
    /// Region files (`r.X.Z.mca`) right in the folder: a region folder.
    RegionFiles,
    /// A folder holding other things.
    Other,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Found::Nothing => "nothing",
            Found::File => "a file",
            Found::TerraneWorld => "a terrane world",
            Found::BedrockWorld => "a Bedrock world",
            Found::JavaWorld => "a Java world",
            Found::RegionFiles => "region files",
            Found::Other => "files",
        })
    }
}

/// What `path` holds.
///
/// # Errors
/// [`Error::Io`] when `path` exists and cannot be read.
pub fn inspect(path: &Path) -> Result<Found> {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Nothing),
        Err(e) => return Err(io(path)(e)),
    };
    if !meta.is_dir() {
        return Ok(Found::File);
    }
    Ok(if terrane_store::file::holds_terrane_world(path) {
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

/// Refuses a destination that holds anything: a conversion writes a new world.
fn check_new(dst: &Path) -> Result<()> {
    match inspect(dst)? {
        Found::Nothing => Ok(()),
        holds => Err(Error::Destination { path: dst.into(), holds }),
    }
}

/// The file in a conversion's temporary folder that says which conversion it holds: the
/// direction, the source folder (canonical path) and the terrane version, one per line.
const RESUME_MARKER: &str = ".terrane-convert";

/// Writes through `write` into a temporary folder beside `dst`, then renames it into place;
/// on failure the temporary folder is removed. A temporary folder an interrupted run of the
/// same conversion (same direction and source) left behind is handed to `write` as it is, so
/// it goes on where that run stopped (`write` gets `true`); another one is removed first.
pub(crate) fn into_place<T>(
    src: &Path,
    dst: &Path,
    direction: &str,
    write: impl FnOnce(&Path, bool) -> Result<T>,
) -> Result<T> {
    check_new(dst)?;
    let name = dst.file_name().ok_or_else(|| Error::NoFolderName(dst.into()))?;
    let tmp = dst.with_file_name(format!(".{}.terrane-convert", name.to_string_lossy()));
    let source = fs::canonicalize(src).map_err(io(src))?;
    let marker =
        format!("{direction}\n{}\nterrane {}\n", source.display(), env!("CARGO_PKG_VERSION"));
    let resumed = fs::read_to_string(tmp.join(RESUME_MARKER)).is_ok_and(|m| m == marker);
    if !resumed {
        let _ = fs::remove_dir_all(&tmp);
        fs::create_dir_all(&tmp).map_err(io(&tmp))?;
        write_whole(&tmp.join(RESUME_MARKER), marker.as_bytes())?;
    }
    let r = write(&tmp, resumed).and_then(|v| {
        let m = tmp.join(RESUME_MARKER);
        fs::remove_file(&m).map_err(io(&m))?;
        if dst.exists() {
            fs::remove_dir(dst).map_err(io(dst))?; // an empty folder (checked above)
        }
        fs::rename(&tmp, dst).map_err(io(dst))?;
        Ok(v)
    });
    // A failure (not a crash) leaves nothing behind; a crash leaves the folder to resume.
    if r.is_err() {
        let _ = fs::remove_dir_all(&tmp);
    }
    r
}

/// [`terrane_store::file::write_whole`] with the crate's error.
pub(crate) fn write_whole(path: &Path, bytes: &[u8]) -> Result<()> {
    terrane_store::file::write_whole(path, bytes).map_err(io(path))
}

/// The name a converted world takes when its `level.dat` names none: the source folder's.
pub(crate) fn level_name(src: &Path) -> String {
    src.file_name().map_or_else(|| "terrane world".into(), |n| n.to_string_lossy().into_owned())
}
