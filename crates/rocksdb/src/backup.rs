//! A backup of a closed (or read-only, writer-free) database: a copy of its files.

use std::fs;
use std::path::Path;

use terrane_store::{Error, Result};

/// Copies the database in `from` to `to` (which must not exist): table and blob files, which
/// RocksDB never changes once written, are hard-linked when on the same file system; the rest
/// (`CURRENT`, `MANIFEST-*`, `OPTIONS-*`, `IDENTITY`, write-ahead logs) is copied. The lock
/// file and the info logs are left out. Every file and the directory are synced.
pub(crate) fn copy_files(from: &Path, to: &Path) -> Result<()> {
    if to.exists() {
        return Err(Error::AlreadyExists(to.into()));
    }
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let name = entry.file_name();
        let name_str = name.to_string_lossy();
        if !entry.file_type()?.is_file() || name_str == "LOCK" || name_str.starts_with("LOG") {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        let immutable = name_str.ends_with(".sst") || name_str.ends_with(".blob");
        if !(immutable && fs::hard_link(&src, &dst).is_ok()) {
            fs::copy(&src, &dst)?;
        }
        fs::File::open(&dst)?.sync_all()?;
    }
    fs::File::open(to)?.sync_all()?;
    Ok(())
}
