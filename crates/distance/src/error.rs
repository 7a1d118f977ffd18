//! The crate's error type.

use std::path::PathBuf;

/// Everything that can go wrong in terrane-distance.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A chunk or centre outside the supported range.
    #[error(
        "chunk ({x}, {z}) is out of range: the distance graph holds chunks with |x| and |z| below 2^30"
    )]
    OutOfRange {
        /// Chunk x.
        x: i32,
        /// Chunk z.
        z: i32,
    },
    /// The bytes do not start with the distance graph's magic.
    #[error("not a terrane distance graph: the bytes do not start with \"TRDG\"")]
    BadMagic,
    /// A format version this build does not read.
    #[error("distance graph format version {0} is not supported: this build reads version 1")]
    UnsupportedVersion(u8),
    /// The bytes end before the encoding does.
    #[error("the distance graph is truncated: the bytes end before the encoding does")]
    Truncated,
    /// The checksum does not match: the bytes are corrupt.
    #[error(
        "distance graph checksum mismatch (stored {stored:#010x}, computed {computed:#010x}): the data is corrupt; restore a backup or rebuild the graph"
    )]
    Checksum {
        /// CRC-32C stored in the bytes.
        stored: u32,
        /// CRC-32C of the bytes read.
        computed: u32,
    },
    /// Bytes left over after the last root.
    #[error("{0} unexpected bytes after the last root of the distance graph")]
    TrailingBytes(usize),
    /// A well-formed but non-canonical encoding (a different writer, or a bug).
    #[error("non-canonical distance graph encoding: {0}")]
    NonCanonical(&'static str),
    /// An I/O error while saving or loading.
    #[error("I/O error on {}: {source}", path.display())]
    Io {
        /// The file or folder the operation failed on.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
}
