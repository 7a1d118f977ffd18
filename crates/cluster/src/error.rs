//! The crate's error type.

/// Everything that can go wrong in terrane-cluster: malformed cluster bytes, rejected builder
/// input and, for the tiered store, backend and world-metadata failures.
///
/// Decoding never panics: every malformed input maps to one of these variants, each naming
/// the offending local index or offset so that a corrupt value can be located.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes end before the part of the header that must be there.
    #[error("cluster truncated: {needed} header bytes needed, only {len} present")]
    Truncated {
        /// Bytes the header needs.
        needed: usize,
        /// Bytes present.
        len: usize,
    },
    /// `formatVersion` is not one this crate reads (only 1).
    #[error("unsupported cluster format version {0} (this crate reads version 1)")]
    UnsupportedVersion(u64),
    /// `scaleLevel` is neither 1 nor 2.
    #[error("invalid cluster scale level {0} (must be 1 or 2)")]
    InvalidScale(u8),
    /// The cluster's scale level is not the one its table implies.
    #[error("cluster has scale level {found}, expected {expected}")]
    ScaleMismatch {
        /// Scale level the caller expected.
        expected: u8,
        /// Scale level in the header.
        found: u8,
    },
    /// A non-zero offset points inside the header.
    #[error("chunk {index}: offset {offset} points inside the {header_len}-byte header")]
    OffsetInHeader {
        /// Local chunk index.
        index: u16,
        /// The offset read.
        offset: u64,
        /// Length of the header.
        header_len: usize,
    },
    /// The first present chunk does not start right after the header.
    #[error(
        "chunk {index}: first blob starts at {offset}, not right after the header at {header_len}"
    )]
    GapAfterHeader {
        /// Local chunk index.
        index: u16,
        /// The offset read.
        offset: u64,
        /// Length of the header.
        header_len: usize,
    },
    /// A present chunk's offset is not greater than the previous present chunk's.
    #[error("chunk {index}: offset {offset} is not after the previous chunk's offset {previous}")]
    OffsetNotIncreasing {
        /// Local chunk index.
        index: u16,
        /// The offset read.
        offset: u64,
        /// Offset of the previous present chunk.
        previous: u64,
    },
    /// A present chunk's offset is at or past the end of the cluster (its blob would be empty).
    #[error("chunk {index}: offset {offset} is not inside the {len}-byte cluster")]
    OffsetOutOfBounds {
        /// Local chunk index.
        index: u16,
        /// The offset read.
        offset: u64,
        /// Length of the cluster.
        len: usize,
    },
    /// A cluster without chunks has bytes after its header.
    #[error("cluster has no chunks but {len} bytes where its header is {header_len}")]
    TrailingBytes {
        /// Length of the cluster.
        len: usize,
        /// Length of the header.
        header_len: usize,
    },
    /// A local chunk index outside `0..chunk_count` was given to a builder.
    #[error("local chunk index {index} out of range (a cluster of this scale holds {count})")]
    IndexOutOfRange {
        /// The index given.
        index: usize,
        /// Chunks per cluster at this scale.
        count: usize,
    },
    /// The same local chunk index was inserted twice.
    #[error("local chunk index {index} given twice")]
    DuplicateChunk {
        /// The index given twice.
        index: u16,
    },
    /// A zero-length chunk blob was given to a builder (absent chunks are left out instead).
    #[error(
        "chunk {index}: empty blob (a present chunk has at least one byte; leave absent chunks out)"
    )]
    EmptyChunk {
        /// Local chunk index.
        index: u16,
    },
    /// The encoded cluster would not fit in memory or in a `u64` offset.
    #[error("cluster too large to encode")]
    TooLarge,
    /// The object store failed.
    #[error("store: {0}")]
    Store(#[from] terrane_store::Error),
    /// A chunk (or the schema) failed to decode or check.
    #[error("chunk: {0}")]
    Chunk(#[from] terrane_chunk::Error),
    /// A saved chunk uses a block id the world's schema does not have.
    #[error("chunk uses block id {0}, which the world's schema does not register")]
    UnknownBlock(u32),
    /// A saved chunk lists an entity that is neither in the save nor in the store.
    #[error(
        "chunk {pos:?} of dimension {dim} lists entity {uuid:02x?}, which is neither saved with it nor stored: save the entity in the same TickSave"
    )]
    DanglingEntity {
        /// The entity's UUID.
        uuid: [u8; 16],
        /// The chunk's dimension.
        dim: u64,
        /// The chunk.
        pos: terrane_section::ChunkPos,
    },
    /// A [`TickSave`](crate::TickSave) object targets a table the tiered store manages.
    #[error(
        "table `{0}` is managed by the tiered store: write chunks and entities with their own TickSave methods"
    )]
    ReservedTable(String),
    /// A write in an area this store does not own (`TieredStore::set_areas`).
    #[error(
        "area ({}, {}) is not this server's: a server of a shared world writes only the areas it leases",
        area.x, area.z
    )]
    OutOfScope {
        /// The area.
        area: terrane_section::AreaId,
    },
    /// A key of a chunk table is not a chunk key.
    #[error("table `{table}` holds a {len}-byte key, not a 32-byte chunk key")]
    CorruptKey {
        /// The table.
        table: &'static str,
        /// The key's length.
        len: usize,
    },
    /// `worldMeta` is malformed.
    #[error("corrupt worldMeta: {0}")]
    CorruptMeta(String),
    /// An `opacityMap` value is not 32 768 bytes.
    #[error("opacity tile of {len} bytes (must be 32768)")]
    BadOpacityTile {
        /// The value's length.
        len: usize,
    },
    /// The tiers break their invariant (a chunk at two levels, an empty cluster, ...).
    #[error("tiered store inconsistent: {0}")]
    Inconsistent(String),
    /// A column tile's shift outside `MIN_TILE_SHIFT..=MAX_TILE_SHIFT`.
    #[error("a column tile is 2^4 to 2^30 columns on a side: shift {0} is outside 4..=30")]
    TileShift(u32),
    /// [`TieredStore::top_blocks`](crate::TieredStore::top_blocks) of a tile too large to hold.
    #[error(
        "a tile's top blocks are held for tiles of 2^4 to 2^8 columns on a side: shift {0} is \
         above 8; list the tiles with column_tiles(dim, 4..=8)"
    )]
    TopBlocksTileShift(u32),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
