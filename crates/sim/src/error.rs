//! The crate's one error type.

use std::path::PathBuf;

/// Why a simulation could not start, or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The world refused an operation (open, create, load, save, maintenance); the message
    /// says why. Saves acknowledged before it are kept.
    #[error(transparent)]
    World(#[from] terrane::Error),
    /// The world's store refused a read or a write of its own (the shared server's walker
    /// records).
    #[error(transparent)]
    Store(#[from] terrane::store::Error),
    /// A lease operation failed (renewing, reading another server's epoch for a hand-off).
    #[error(transparent)]
    Lease(#[from] terrane::lease::LeaseError),
    /// The world's distance graph refused a query or an update (the pre-generator's).
    #[error(transparent)]
    Distance(#[from] terrane::distance::Error),
    /// Capturing the arena's snapshot failed.
    #[error(transparent)]
    Snapshot(#[from] terrane::snapshot::Error),
    /// A tick's save failed.
    #[error("world {world}: saving tick {tick}: {source}")]
    SaveTick {
        /// The world's directory, or its connection string.
        world: String,
        /// The tick whose save failed.
        tick: u64,
        /// The world's error.
        source: terrane::Error,
    },
    /// Reading or writing a file beside the world (the region history, the write log).
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The demo's directory holds something else: it is never replaced unless it is a
    /// terrane world and [`DemoConfig::replace`](crate::demo::DemoConfig::replace) is set.
    #[error("{} already exists and is not empty (use --force to replace a terrane world there)", .0.display())]
    NotEmpty(PathBuf),
    /// Replacing was asked for, but the directory is not a terrane world.
    #[error("{} is not a terrane world: --force only replaces terrane worlds", .0.display())]
    NotAWorld(PathBuf),
    /// A setting is out of range or does not fit the others; the message names it.
    #[error("invalid setting: {0}")]
    Setting(String),
    /// The demo ran twenty times its ticks without its pre-generator filling the disc or its
    /// arena restore finishing.
    #[error("the demo did not finish: the pre-generator or the restore is stuck")]
    Stuck,
    /// A walker record in the shared world does not decode (its hexadecimal UUID).
    #[error("walker {0} is damaged")]
    DamagedWalker(String),
    /// The shared world's database did not answer for a minute.
    #[error("the world was unreachable for a minute: {0}")]
    Unreachable(Box<Error>),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An I/O error on `path`.
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}
