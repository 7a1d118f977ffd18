//! Files written whole, and the bytes a folder holds: what the world folders terrane writes
//! beside its stores (exports, conversions, the command's files) share; and the marker files
//! by which any of them recognises a terrane world's directory.

use std::fs;
use std::io::{self, Write};
use std::path::Path;

/// The marker file of a terrane world's directory, naming its backend: a directory holding it
/// is a world (`docs/format/world-dir.md`).
pub const WORLD_MARKER: &str = "terrane-world";

/// The creation intent of a terrane world's directory: the marker's text, written first at
/// creation and renamed over [`WORLD_MARKER`] last (`docs/format/world-dir.md`).
pub const WORLD_CREATING: &str = "terrane-world.creating";

/// Whether `dir` holds a terrane world, or one being created, by its marker files.
pub fn holds_terrane_world(dir: &Path) -> bool {
    dir.join(WORLD_MARKER).exists() || dir.join(WORLD_CREATING).exists()
}

/// Writes `path` under a temporary name beside it (`NAME.terrane-tmp`), syncs it, and renames
/// it into place: the file is either the old one or the new one whole, never half-written.
///
/// # Errors
/// The I/O error; the temporary file is removed.
pub fn write_whole(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_whole_with(path, |f| f.write_all(bytes))
}

/// [`write_whole`] of what `write` writes to the temporary file (buffered), for a file too
/// large to hold in memory (a map streamed row by row). An error of `write` stops it, like
/// one of the file's.
///
/// # Errors
/// The I/O error (or `write`'s); the temporary file is removed.
pub fn write_whole_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(".terrane-tmp");
    let tmp = path.with_file_name(name);
    let write = || -> io::Result<()> {
        let mut f = io::BufWriter::new(fs::File::create(&tmp)?);
        write(&mut f)?;
        f.flush()?;
        f.into_inner().map_err(|e| e.into_error())?.sync_all()?;
        fs::rename(&tmp, path)
    };
    write().inspect_err(|_| {
        let _ = fs::remove_file(&tmp);
    })
}

/// The apparent size of `dir`, what a copy of it takes: the lengths of its files and folders
/// (`dir` included), as `du -sb` counts them (a file with several names counts once per
/// name here); what cannot be read counts 0.
pub fn dir_bytes(dir: &Path) -> u64 {
    let Ok(top) = fs::metadata(dir) else { return 0 };
    let mut total = top.len();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            match e.metadata() {
                Ok(m) if m.is_dir() => {
                    total += m.len();
                    stack.push(e.path());
                }
                Ok(m) => total += m.len(),
                Err(_) => {}
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_written_whole_replaces_the_old_one_and_leaves_no_temporary_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("level.dat");
        write_whole(&path, b"old").unwrap();
        write_whole(&path, b"new").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"new");
        let failed = write_whole_with(&path, |_| Err(io::Error::other("cut")));
        assert!(failed.is_err());
        assert_eq!(fs::read(&path).unwrap(), b"new");
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(dir_bytes(dir.path()) >= 3);
    }
}
