//! The crate's error types.

use std::path::PathBuf;

/// Why one chunk of a region file could not be read or converted.
///
/// A damaged chunk is reported (see [`DamagedChunk`](crate::DamagedChunk)) and skipped: it never
/// aborts an import.
#[derive(Debug, thiserror::Error, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChunkError {
    /// The location entry points into the 8 KiB header.
    #[error("location points into the region header (sector {sector})")]
    SectorInHeader {
        /// The sector offset found in the location table.
        sector: u32,
    },
    /// The chunk's sectors overlap another chunk's: the location table lies about at least
    /// one of them, and neither is read as data.
    #[error(
        "chunk {index}'s sectors overlap those of chunk {other}: the region's location table is damaged, neither chunk is read"
    )]
    SharedSectors {
        /// This chunk's location index.
        index: usize,
        /// The other chunk's location index.
        other: usize,
    },
    /// The location entry or the chunk length points past the end of the file.
    #[error("chunk data out of bounds: needs bytes up to {needed}, the file has {len}")]
    OutOfBounds {
        /// The end offset the chunk needs.
        needed: u64,
        /// The file's length.
        len: u64,
    },
    /// The 4-byte length field is zero (or smaller than the compression byte needs).
    #[error("chunk length field is {0}: no data")]
    EmptyChunk(u32),
    /// The compression type byte is not one of 1 (gzip), 2 (zlib), 3 (none), 4 (LZ4).
    #[error("unknown compression type {0} (expected 1 gzip, 2 zlib, 3 none or 4 LZ4)")]
    UnknownCompression(u8),
    /// The chunk is compressed with a custom algorithm (compression type 127, Minecraft
    /// 24w04a+), named in the chunk, which terrane does not have.
    #[error(
        "compressed with the custom algorithm {algorithm:?} (compression type 127), which \
         terrane cannot read: have the server or mod that wrote it save the world with \
         region-file-compression zlib, deflate, lz4 or none first"
    )]
    CustomCompression {
        /// The algorithm's name as the chunk gives it (a namespaced id).
        algorithm: String,
    },
    /// The chunk is stored in an external `.mcc` file that is missing or unreadable.
    #[error("oversize chunk file {path} could not be read: {message}")]
    ExternalFile {
        /// The `.mcc` path that was looked up.
        path: PathBuf,
        /// The I/O error text.
        message: String,
    },
    /// The compressed stream is corrupt or truncated.
    #[error("decompression failed ({compression}): {message}")]
    Decompress {
        /// The compression scheme's name.
        compression: &'static str,
        /// What the decoder reported.
        message: String,
    },
    /// The decompressed chunk is larger than the configured limit.
    #[error("decompressed chunk exceeds {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The chunk's NBT could not be parsed.
    #[error("NBT: {0}")]
    Nbt(#[from] terrane_nbt::Error),
    /// The region file is shorter than its 8 KiB header (the whole file is skipped).
    #[error("region file truncated: {0} bytes, the header needs 8192")]
    TruncatedRegion(u64),
    /// The NBT parsed, but its structure is not a chunk this crate understands.
    #[error("malformed chunk: {0}")]
    Malformed(String),
    /// A Linear region file (`r.X.Z.linear`) that does not read: the whole region.
    #[error("Linear region: {0}")]
    Linear(#[from] crate::linear::LinearError),
    /// Reading the chunk's bytes from a region file opened on disk failed (the disk's
    /// error; the file changed or became unreadable while it was read).
    #[error("reading the region file failed at bytes {start}..{end}: {message}")]
    Read {
        /// First byte read.
        start: u64,
        /// End of the read.
        end: u64,
        /// The system's error.
        message: String,
    },
}

/// The error type of this crate's fallible operations (other than per-chunk damage, which is
/// a [`ChunkError`] reported in the summary).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or directory could not be read or written.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The path involved.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A region file is shorter than its 8 KiB header (and not empty).
    #[error("region file {path} is truncated: {len} bytes, the header alone needs 8192")]
    TruncatedHeader {
        /// The region file.
        path: PathBuf,
        /// Its length.
        len: u64,
    },
    /// One chunk of a region file is damaged (returned by the single-chunk readers).
    #[error(transparent)]
    Chunk(#[from] ChunkError),
    /// A column holds pre-1.13 numeric blocks (`legacy:<id>:<data>`), which have no flattened
    /// name: exporting it would lose information.
    #[error(
        "column ({x}, {z}) holds pre-1.13 numeric block {name:?}: legacy blocks cannot be \
         exported; upgrade the world with Minecraft 1.13+ before importing it, or remove these \
         blocks"
    )]
    LegacyExport {
        /// Column x.
        x: i32,
        /// Column z.
        z: i32,
        /// The first legacy block state found.
        name: String,
    },
    /// A block state string is not of the form `ns:name[k=v,...]`.
    #[error("invalid block state string {0:?}: expected `namespace:name[key=value,...]`")]
    InvalidBlockState(String),
    /// A chunk or column could not be converted (missing registry entry, bad component, ...).
    #[error("conversion error: {0}")]
    Convert(String),
    /// The import sink or export source failed.
    #[error("sink/source error: {0}")]
    Sink(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl Error {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}

/// Result alias for [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// A [`ChunkError::Malformed`] saying `m`.
pub(crate) fn malformed(m: impl Into<String>) -> ChunkError {
    ChunkError::Malformed(m.into())
}
