//! The crate's one error type.

use std::path::PathBuf;

/// What went wrong with a backup repository.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Reading or writing a file of the repository failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The folder is not a backup repository (no `terrane-backup-repo` file in it).
    #[error("{} is not a terrane backup repository (a first backup into it creates one: `Repo::open_or_create`)", .0.display())]
    NotARepository(PathBuf),
    /// The folder exists and holds something else: a repository is created only in a new or
    /// empty folder.
    #[error("{} is not empty and not a terrane backup repository: pick a new folder", .0.display())]
    NotEmpty(PathBuf),
    /// The repository was written by a newer terrane.
    #[error("{}: backup repository format {found} is not supported (this build reads formats 1 to {supported}: use a newer terrane)", path.display())]
    UnsupportedFormat {
        /// The repository.
        path: PathBuf,
        /// The format found.
        found: String,
        /// The format this build reads.
        supported: u32,
    },
    /// No backup has this id (see [`Repo::list`](crate::Repo::list)).
    #[error("no backup {0} in the repository (`Repo::list` shows them)")]
    NoSuchBackup(u64),
    /// The repository holds no backup yet.
    #[error("the repository holds no backup yet")]
    Empty,
    /// A manifest or a piece failed its checks: the file named is damaged. Other backups
    /// may still be whole: `terrane backup verify REPO` says which.
    #[error("{}: damaged: {detail}", path.display())]
    Damaged {
        /// The manifest or pack file.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A restore met damaged or missing pieces and was not allowed to leave them out.
    #[error("backup {id}: {} object(s) are damaged or missing (first: table {}, key {}); restore refused, nothing of them written", objects.len(), objects[0].0, hex(&objects[0].1))]
    DamagedObjects {
        /// The backup.
        id: u64,
        /// The objects affected: table and key.
        objects: Vec<(String, Vec<u8>)>,
    },
    /// A backup from changes was asked for against a backup that is not the newest.
    #[error(
        "the changes given are since backup {since}, but the repository's newest is {newest}: take a whole backup"
    )]
    NotNewest {
        /// The backup the changes are since.
        since: u64,
        /// The repository's newest backup (0: none).
        newest: u64,
    },
    /// The store a backup restores into lacks a table the backup holds.
    #[error("the target store has no table {0:?}, which the backup holds")]
    TableMissing(String),
    /// The object store refused a read or a write.
    #[error(transparent)]
    Store(#[from] terrane_store::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The lower-case hexadecimal form of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// An [`Error::Io`] maker for `path`, for `map_err`.
pub(crate) fn io(path: &std::path::Path) -> impl FnOnce(std::io::Error) -> Error + '_ {
    move |source| Error::Io { path: path.to_path_buf(), source }
}

/// An [`Error::Damaged`] for `path`.
pub(crate) fn damaged(path: &std::path::Path, detail: impl Into<String>) -> Error {
    Error::Damaged { path: path.to_path_buf(), detail: detail.into() }
}
