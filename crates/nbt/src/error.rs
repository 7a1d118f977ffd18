//! The crate's error type.

/// What can go wrong reading or writing NBT.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The bytes end in the middle of a value, or a declared length is longer than the bytes
    /// left.
    #[error("the NBT data ends in the middle of a value (truncated or damaged file?)")]
    Truncated,
    /// Compounds and lists nest deeper than [`MAX_DEPTH`](crate::MAX_DEPTH).
    #[error("NBT nests deeper than 512 levels")]
    TooDeep,
    /// A tag type id outside 0..=12 (or `TAG_End` where a value must be).
    #[error("unknown NBT tag type {0}")]
    UnknownTag(u8),
    /// The tree would take more memory than the reader's budget
    /// ([`DEFAULT_TREE_LIMIT`](crate::DEFAULT_TREE_LIMIT) unless set).
    #[error(
        "the NBT tree would take more than {limit} bytes of memory: a hostile or damaged file (raise the reader's tree limit if it is trusted)"
    )]
    TreeTooLarge {
        /// The budget in bytes.
        limit: usize,
    },
    /// A list or array declares a negative length.
    #[error("NBT list or array with negative length {0}")]
    NegativeLength(i32),
    /// A list of `TAG_End` that claims elements.
    #[error("NBT list of TAG_End with {0} elements")]
    EndList(usize),
    /// A string that is neither UTF-8 nor Java modified UTF-8.
    #[error("NBT string is neither UTF-8 nor Java modified UTF-8")]
    BadString,
    /// The root is not the kind of tag the caller asked for.
    #[error("the NBT root is tag type {found}, expected a compound")]
    RootNotCompound {
        /// The root's type id.
        found: u8,
    },
    /// Writing: a string longer than NBT's 65,535 encoded bytes.
    #[error("a string of {0} bytes does not fit NBT's 65,535-byte limit")]
    StringTooLong(usize),
    /// Writing: an array or list longer than `i32::MAX` elements.
    #[error("an array of {0} elements does not fit NBT's i32 length")]
    ArrayTooLong(usize),
    /// Writing: a list whose items are not all of one type.
    #[error("an NBT list holds items of different types")]
    MixedList,
}
