//! The error type shared by every store.

use std::path::PathBuf;

/// A `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything a store operation can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A key longer than [`MAX_KEY_LEN`](crate::MAX_KEY_LEN).
    #[error("key of {len} bytes is longer than the maximum of 512: shorten or hash it")]
    KeyTooLong {
        /// The key's length.
        len: usize,
    },
    /// A value larger than the backend accepts.
    #[error("value of {len} bytes exceeds this backend's maximum of {max} bytes: split it")]
    ValueTooLarge {
        /// The value's length.
        len: usize,
        /// The backend's maximum.
        max: usize,
    },
    /// A table that the store does not have.
    #[error("unknown table `{0}`: list it in StoreConfig::tables when opening the store")]
    UnknownTable(String),
    /// A table name that is empty, too long or has characters outside `[A-Za-z0-9_.:-]`.
    #[error("invalid table name `{0}`: use 1 to 64 ASCII letters, digits, `_`, `-`, `.`, `:`")]
    InvalidTableName(String),
    /// A signature that is empty, too long, or not printable ASCII.
    #[error("invalid format signature `{0}`: use 1 to 200 printable ASCII characters")]
    InvalidSignature(String),
    /// The store was created with another format signature.
    #[error(
        "format signature mismatch: the store says `{found}`, the application expects `{expected}`"
    )]
    SignatureMismatch {
        /// The signature the application asked for.
        expected: String,
        /// The signature found in the store.
        found: String,
    },
    /// The file or directory is not a store of this backend at all.
    #[error("not a {backend} store: {detail}")]
    NotAStore {
        /// The backend that tried to open it.
        backend: &'static str,
        /// What was found instead.
        detail: String,
    },
    /// [`OpenMode::Open`](crate::OpenMode::Open) and no store exists there.
    #[error("no store at {0}: create it with OpenMode::Create or OpenOrCreate")]
    NotFound(PathBuf),
    /// [`OpenMode::Create`](crate::OpenMode::Create) and a store already exists there.
    #[error("a store already exists at {0}: open it, or remove it first")]
    AlreadyExists(PathBuf),
    /// Stored data failed a check (checksum, structure): the data is not returned.
    #[error("corrupt store: {0}")]
    Corrupt(String),
    /// A snapshot or scan outlived what the backend can keep for it.
    #[error("snapshot expired: {0}")]
    SnapshotExpired(String),
    /// An operating system I/O error.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// An error reported by the backend's engine (e.g. RocksDB), with its message.
    #[error("backend error: {0}")]
    Backend(String),
    /// The store failed earlier in a way that makes further writes unsafe; reopen it.
    #[error("store is unusable after an earlier failure ({0}): reopen it")]
    Poisoned(String),
    /// Another process (or another handle in this one) has the store open in a way that
    /// excludes this open: a writer excludes everyone, readers exclude writers.
    #[error("{} is in use: {}; close it there first", path.display(), holder_text(*holder))]
    Locked {
        /// The file or directory that holds the lock.
        path: PathBuf,
        /// The process holding the lock, when the operating system says.
        holder: Option<u32>,
    },
    /// The store was opened read-only ([`StoreConfig::read_only`](crate::StoreConfig::read_only)).
    #[error("the store at {0} is open read-only: open it for writing to change it")]
    ReadOnly(PathBuf),
    /// Opening found less than the store's own records say it holds (damage: truncation,
    /// overwritten bytes), and nothing was changed. The detail names what is missing.
    #[error(
        "damaged store {}: {detail}; nothing was changed: restore a backup, or open it in repair mode to keep every intact object and list each lost one",
        path.display()
    )]
    Damaged {
        /// The store's file or directory.
        path: PathBuf,
        /// What is missing or damaged.
        detail: String,
    },
    /// A precondition of the batch ([`Batch::expect`](crate::Batch::expect)) did not hold:
    /// nothing of the batch was applied.
    #[error(
        "precondition failed: {table}/{} is at {}, the batch expected {}; nothing of the batch was applied",
        hex(key),
        version_text(*found),
        version_text(*expected)
    )]
    PreconditionFailed {
        /// The table.
        table: String,
        /// The key.
        key: Vec<u8>,
        /// The version the batch expected (`None`: absent).
        expected: Option<i64>,
        /// The version found (`None`: absent).
        found: Option<i64>,
    },
    /// A fault injected by [`FaultyStore`](crate::FaultyStore).
    #[error("injected fault: {0}")]
    Injected(String),
}

impl Error {
    /// Whether the store failed because its disk (or the database server's) is full: an
    /// [`Error::Io`] of kind [`StorageFull`](std::io::ErrorKind::StorageFull) (`ENOSPC`, or
    /// the platform's own "disk full" code), as every backend reports a full disk.
    pub fn is_storage_full(&self) -> bool {
        matches!(self, Error::Io(e) if e.kind() == std::io::ErrorKind::StorageFull)
    }
}

fn holder_text(holder: Option<u32>) -> String {
    match holder {
        Some(pid) if pid == std::process::id() => "it is already open in this process".into(),
        Some(pid) => format!("it is open in another process (pid {pid})"),
        None => "it is open in another process".into(),
    }
}

fn hex(key: &[u8]) -> String {
    key.iter().map(|b| format!("{b:02x}")).collect()
}

fn version_text(v: Option<i64>) -> String {
    match v {
        Some(v) => format!("version {v}"),
        None => "absent".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::Error;
    use std::io;

    #[test]
    fn an_io_error_of_a_full_disk_is_storage_full() {
        assert!(Error::Io(io::Error::new(io::ErrorKind::StorageFull, "full")).is_storage_full());
    }

    #[cfg(unix)]
    #[test]
    fn enospc_is_storage_full() {
        assert!(Error::from(io::Error::from_raw_os_error(28)).is_storage_full());
    }

    #[test]
    fn other_errors_are_not_storage_full() {
        assert!(!Error::Io(io::Error::other("No space left on device")).is_storage_full());
        assert!(!Error::Io(io::Error::from(io::ErrorKind::PermissionDenied)).is_storage_full());
        assert!(!Error::Backend("No space left on device".into()).is_storage_full());
        assert!(!Error::Corrupt("x".into()).is_storage_full());
    }
}
