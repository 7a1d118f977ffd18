//! Recognising a creation that was cut off: what RocksDB leaves before its `CURRENT` file.
//!
//! RocksDB creates a database by writing `LOCK`, its info `LOG`, `IDENTITY` and the first
//! `MANIFEST-*`, and only then `CURRENT` (through `<n>.dbtmp`, renamed). A directory without
//! `CURRENT` therefore holds no data. When every entry in it is one of those files, it is a
//! creation that was killed before it finished, and [`RocksStore::open_with`] replaces it;
//! anything else (a stranger's files, SST tables, a non-empty write-ahead log) is refused and
//! left alone.
//!
//! [`RocksStore::open_with`]: crate::RocksStore::open_with

use std::path::Path;

use terrane_store::Result;

/// Whether the name is a file RocksDB writes while creating a database, before `CURRENT`.
fn is_creation_file(name: &str, len: u64) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match name {
        "LOCK" | "LOG" | "IDENTITY" => true,
        _ => {
            if let Some(rest) = name.strip_prefix("LOG.old.") {
                digits(rest)
            } else if let Some(rest) = name.strip_prefix("MANIFEST-") {
                digits(rest)
            } else if let Some(rest) = name.strip_prefix("OPTIONS-") {
                digits(rest.strip_suffix(".dbtmp").unwrap_or(rest))
            } else if let Some(rest) = name.strip_suffix(".dbtmp") {
                digits(rest)
            } else if let Some(rest) = name.strip_suffix(".log") {
                // A write-ahead log is only created after CURRENT; an empty one holds nothing.
                digits(rest) && len == 0
            } else {
                false
            }
        }
    }
}

/// Whether `dir` (which has no `CURRENT`) holds only what an unfinished RocksDB creation
/// leaves, and at least one such file.
pub(crate) fn is_unfinished_creation(dir: &Path) -> Result<bool> {
    let mut any = false;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let meta = entry.metadata()?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { return Ok(false) };
        if !meta.is_file() || !is_creation_file(name, meta.len()) {
            return Ok(false);
        }
        any = true;
    }
    Ok(any)
}

/// Removes every file of an unfinished creation from `dir` (the directory itself stays: the
/// caller holds its lock).
pub(crate) fn clear(dir: &Path) -> Result<()> {
    for entry in std::fs::read_dir(dir)? {
        std::fs::remove_file(entry?.path())?;
    }
    std::fs::File::open(dir)?.sync_all()?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creation_leftovers_are_recognised_and_strangers_are_not() {
        for name in ["LOCK", "LOG", "LOG.old.1732", "IDENTITY", "MANIFEST-000001", "000001.dbtmp"] {
            assert!(is_creation_file(name, 10), "{name}");
        }
        assert!(is_creation_file("000004.log", 0));
        for name in ["CURRENT", "000004.log", "000009.sst", "notes.txt", "MANIFEST-x", "LOG.old."] {
            assert!(!is_creation_file(name, 10), "{name}");
        }
        let dir = tempfile::tempdir().unwrap();
        assert!(!is_unfinished_creation(dir.path()).unwrap(), "an empty directory is not one");
        std::fs::write(dir.path().join("LOCK"), b"").unwrap();
        std::fs::write(dir.path().join("000001.dbtmp"), b"MANIFEST-000001\n").unwrap();
        assert!(is_unfinished_creation(dir.path()).unwrap());
        std::fs::write(dir.path().join("world.txt"), b"mine").unwrap();
        assert!(!is_unfinished_creation(dir.path()).unwrap());
    }
}
