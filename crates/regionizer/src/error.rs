//! The crate's error type.

use crate::RegionId;
use crate::RegionState;

/// Everything that can go wrong in this crate. Misuse is reported, never turned into
/// corrupted state: an operation that returns an error changed nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A configuration parameter is out of range ([`RegionizerConfigBuilder::build`](crate::RegionizerConfigBuilder::build)).
    #[error("invalid regionizer configuration: {param} {reason}")]
    InvalidConfig {
        /// The parameter's name.
        param: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// `add_chunk` of a chunk that is already loaded: remove it first.
    #[error("chunk {chunk:?} is already loaded (each chunk is added once, then removed once)")]
    DuplicateChunk {
        /// The chunk's coordinates.
        chunk: Vec<i64>,
    },
    /// `remove_chunk` of a chunk that is not loaded.
    #[error("chunk {chunk:?} is not loaded, so it cannot be removed")]
    ChunkNotLoaded {
        /// The chunk's coordinates.
        chunk: Vec<i64>,
    },
    /// A region id that this regionizer never handed out.
    #[error("region {0} was never created by this regionizer")]
    UnknownRegion(RegionId),
    /// `mark_not_ticking` of a region that is not TICKING (only the caller whose
    /// `try_mark_ticking` returned true may release it, once).
    #[error(
        "region {region} is {state:?}, not TICKING: only a successful try_mark_ticking may be released"
    )]
    NotTicking {
        /// The region.
        region: RegionId,
        /// Its state (DEAD for a region that no longer exists).
        state: RegionState,
    },
    /// `with_data` of a TICKING region: its data belongs to its ticker (use
    /// [`Region::lock_data`](crate::Region::lock_data) from the tick).
    #[error("region {0} is TICKING: its data belongs to its ticker until mark_not_ticking")]
    RegionTicking(RegionId),
    /// The region's data is locked (by [`Region::lock_data`](crate::Region::lock_data)) while
    /// the operation needed it: drop the guard before `mark_not_ticking`.
    #[error("the data of region {0} is locked: drop the data guard before releasing the region")]
    DataLocked(RegionId),
    /// A callback (or a user-data merge/split, or a `with_data` closure) called back into the
    /// regionizer that is running it. Callbacks run under the regionizer's write lock; defer
    /// the work (e.g. push it to a queue) instead.
    #[error("re-entrant call: a regionizer callback called back into the same regionizer")]
    Reentrant,
    /// A callback panicked while the write lock was held; the regionizer's state may be
    /// half-updated, so every later call fails.
    #[error("the regionizer is poisoned: a callback panicked during a structural change")]
    Poisoned,
    /// `check_invariants` found a broken invariant (a bug: please report it with a replay log).
    #[error("regionizer invariant {number} violated: {detail}")]
    Invariant {
        /// The invariant's number in the spec (1 to 8).
        number: u8,
        /// What was found.
        detail: String,
    },
    /// A line of a replay log could not be parsed.
    #[error("replay log line {line}: {message}")]
    ReplayParse {
        /// 1-based line number in the input.
        line: u64,
        /// What is wrong with it.
        message: String,
    },
    /// A bad command-line flag for the replay tool.
    #[error("replay flags: {0}")]
    ReplayArgs(String),
    /// Reading the replay log or writing its output failed.
    #[error("replay I/O: {0}")]
    Io(#[from] std::io::Error),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
