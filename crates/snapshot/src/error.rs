//! The crate's error type.

use terrane_section::ChunkPos;

/// Everything that can go wrong reading or writing a schematic, capturing or restoring.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The gzip stream is corrupt or the reader failed.
    #[error("cannot inflate the gzip stream: {0}")]
    Io(#[from] std::io::Error),
    /// The inflated stream is larger than the configured limit.
    #[error(
        "the inflated schematic exceeds the limit of {limit} bytes: raise ReadOptions::max_inflated (terrane: --max-inflated) if the file is trusted"
    )]
    TooLarge {
        /// The limit in bytes ([`ReadOptions::max_inflated`](crate::ReadOptions)).
        limit: usize,
    },
    /// The NBT is damaged: truncated, nested deeper than 512, an unknown tag, a bad string ...
    #[error("malformed NBT: {0}")]
    Nbt(#[from] terrane_nbt::Error),
    /// The bytes are no Sponge schematic at all: not gzip-compressed NBT nor NBT, or NBT
    /// without a schematic's fields (another kind of NBT file). The text says which.
    #[error("not a Sponge schematic: {0}")]
    NotASchematic(String),
    /// A field the format requires is absent.
    #[error("required field `{0}` is missing")]
    MissingField(&'static str),
    /// A field has the wrong NBT type.
    #[error("field `{field}` should be {expected}")]
    WrongType {
        /// The field.
        field: &'static str,
        /// What it should be.
        expected: &'static str,
    },
    /// `Version` is not 1, 2 or 3.
    #[error("unsupported Sponge schematic version {0} (1, 2 and 3 are supported)")]
    UnsupportedVersion(i32),
    /// A dimension is zero, or the volume does not fit the format's `i32` array length.
    #[error(
        "invalid dimensions {width}x{height}x{length}: each must be 1..=65535 and the volume at most i32::MAX"
    )]
    Dimensions {
        /// Width (x).
        width: u64,
        /// Height (y).
        height: u64,
        /// Length (z).
        length: u64,
    },
    /// A declared size over a resource bound of [`ReadOptions`](crate::ReadOptions): refused
    /// before anything of that size is allocated.
    #[error(
        "the schematic's {what} ({found}) is over the limit of {limit}: raise ReadOptions::{option} (terrane: --{flag}) if the file is trusted"
    )]
    OverLimit {
        /// What is too large.
        what: &'static str,
        /// The file's figure.
        found: u64,
        /// The bound.
        limit: u64,
        /// The option that sets it.
        option: &'static str,
        /// The `terrane` command's flag for it.
        flag: &'static str,
    },
    /// The data array does not hold exactly one varint per block.
    #[error("{field} holds {found} varints, expected {expected} (one per position)")]
    VarintCount {
        /// `Data`, `BlockData`, `BiomeData` ...
        field: &'static str,
        /// W·H·L (or W·L for 2-D biomes).
        expected: u64,
        /// Varints found (counting a truncated trailing one).
        found: u64,
    },
    /// A varint longer than 5 bytes, or one that does not fit an `i32`.
    #[error("{field}: varint number {index} is longer than 5 bytes or exceeds i32")]
    VarintTooLong {
        /// The array.
        field: &'static str,
        /// The varint's position (a block counter, not a byte offset).
        index: u64,
    },
    /// A palette entry maps to an id outside `0..palette size`, or two entries share an id.
    #[error("palette entry `{name}` has id {id}: ids must be distinct and in 0..{len}")]
    PaletteId {
        /// The state string.
        name: String,
        /// Its id.
        id: i32,
        /// Palette size.
        len: usize,
    },
    /// A block refers to a palette id that does not exist.
    #[error("{field}: position {index} uses palette id {id} but the palette has {len} entries")]
    IdOutOfPalette {
        /// The array.
        field: &'static str,
        /// Block counter.
        index: u64,
        /// The id.
        id: u32,
        /// Palette size.
        len: usize,
    },
    /// Arguments that do not fit together (a position outside the volume, a length mismatch ...).
    #[error("invalid argument: {0}")]
    Invalid(String),
    /// The world has no chunk at this position (not loaded or not generated).
    #[error("chunk {0:?} is not available in the world")]
    ChunkUnavailable(ChunkPos),
    /// The target world cannot resolve a block state of the snapshot.
    #[error("the target world does not know block state `{0}`")]
    UnknownState(String),
}
