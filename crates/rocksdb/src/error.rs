//! RocksDB's errors as the store's: a full disk, corruption, a lock held by another program.

use std::path::Path;

use crate::Error;

/// Maps a RocksDB error to the store's error.
///
/// A full disk becomes an [`Error::Io`] of kind
/// [`StorageFull`](std::io::ErrorKind::StorageFull) (so [`Error::is_storage_full`] says so):
/// RocksDB reports it only as text, the operating system's "No space left on device".
pub(crate) fn rocks_err(e: rocksdb::Error) -> Error {
    rocks_err_text(e.kind(), e.into_string())
}

/// [`rocks_err`] of an error's kind and text.
pub(crate) fn rocks_err_text(kind: rocksdb::ErrorKind, text: String) -> Error {
    // RocksDB's text starts with its own "IO error: "; `Error::Io` says it already.
    let io_text =
        |text: String| text.strip_prefix("IO error: ").map(str::to_string).unwrap_or(text);
    if text.contains(NO_SPACE) {
        return Error::Io(std::io::Error::new(std::io::ErrorKind::StorageFull, io_text(text)));
    }
    match kind {
        rocksdb::ErrorKind::Corruption => Error::Corrupt(text),
        rocksdb::ErrorKind::IOError => Error::Io(std::io::Error::other(io_text(text))),
        _ => Error::Backend(text),
    }
}

/// How RocksDB's messages say the disk is full: `strerror(ENOSPC)`.
const NO_SPACE: &str = "No space left on device";

/// Maps an error of opening the database; RocksDB's own lock error (another program holds its
/// `LOCK` file) becomes [`Error::Locked`], like terrane's own lock.
pub(crate) fn open_err(e: rocksdb::Error, path: &Path) -> Error {
    let text = e.to_string();
    if text.contains("While lock file") || text.contains("lock hold by current process") {
        return Error::Locked { path: path.into(), holder: None };
    }
    rocks_err(e)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_disk_is_a_typed_storage_full_error() {
        let text = "IO error: No space left on device: While appending to file: /w/db/000012.log";
        let e = rocks_err_text(rocksdb::ErrorKind::IOError, text.into());
        assert!(e.is_storage_full(), "{e:?}");
        assert!(e.to_string().contains("No space left on device"), "{e}");
        assert!(!e.to_string().contains("IO error: "), "{e}");
        // Also when the background error arrives under another kind.
        let e = rocks_err_text(rocksdb::ErrorKind::Unknown, "No space left on device".into());
        assert!(e.is_storage_full(), "{e:?}");
    }

    #[test]
    fn other_io_errors_are_not_storage_full() {
        let e = rocks_err_text(rocksdb::ErrorKind::IOError, "IO error: Input/output error".into());
        assert!(matches!(&e, Error::Io(_)) && !e.is_storage_full(), "{e:?}");
        let e = rocks_err_text(rocksdb::ErrorKind::Corruption, "Corruption: bad block".into());
        assert!(matches!(e, Error::Corrupt(_)));
    }
}
