//! The crate's error type.

use std::path::PathBuf;

/// What can go wrong reading or writing a Bedrock world.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The operating system's error.
        source: std::io::Error,
    },
    /// The world's LevelDB database refused to open or failed.
    #[error(
        "{path}: the LevelDB database failed: {message} (a damaged db/ folder, or not a Bedrock world)"
    )]
    Db {
        /// The `db` folder.
        path: PathBuf,
        /// What LevelDB said.
        message: String,
    },
    /// `level.dat` is not an 8-byte header and a little-endian NBT compound.
    #[error("level.dat: {0}")]
    LevelDat(String),
    /// A sub-chunk record is damaged.
    #[error("damaged sub-chunk: {0}")]
    SubChunk(String),
    /// A sub-chunk of a format terrane does not read (kept as it is on import).
    #[error("unsupported sub-chunk format: {0} (kept as it is, not converted)")]
    UnsupportedSubChunk(String),
    /// A column's `Checksums` record is damaged (an export writes a new one).
    #[error("damaged Checksums record: {0}")]
    Checksums(String),
    /// A record's NBT is damaged.
    #[error("damaged NBT: {0}")]
    Nbt(#[from] terrane_nbt::Error),
    /// A block name that is not a Bedrock block state (`ns:name[key=value,...]`, values typed
    /// as `1b`, `1s`, `1`, `1L` or `"text"`).
    #[error("block state {0:?} is not a Bedrock block state name")]
    BlockName(String),
    /// A `Data3D` record (height map and biomes) is damaged.
    #[error("damaged Data3D record: {0}")]
    Data3D(String),
    /// A terrane chunk could not be read or written.
    #[error(transparent)]
    Chunk(#[from] terrane_chunk::Error),
    /// The caller's callback (of [`read_db`](crate::read::read_db)) failed: its own error.
    #[error(transparent)]
    Callback(Box<dyn std::error::Error + Send + Sync>),
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
