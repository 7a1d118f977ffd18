//! The crate's error type.

use crate::ComponentId;

/// Everything that can go wrong decoding a chunk, decoding a schema, or checking that a schema
/// extends a world's stored one.
///
/// Decoding never panics: every malformed or non-canonical input maps to one of these variants.
/// Offsets in messages count bytes from the first byte of the chunk.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The chunk's `formatVersion` is not 1.
    #[error("unsupported chunk format version {found} (this build reads version 1)")]
    UnsupportedVersion {
        /// The version found in the header.
        found: u64,
    },
    /// The input ends before a field does.
    #[error(
        "chunk truncated: {what} needs {needed} bytes at offset {offset}, only {available} left"
    )]
    Truncated {
        /// The field being read.
        what: &'static str,
        /// Its start.
        offset: u64,
        /// Bytes it needs.
        needed: u64,
        /// Bytes left in the input from `offset`.
        available: u64,
    },
    /// A header offset points outside the chunk.
    #[error("{field} = {offset} is beyond the end of the {len}-byte chunk")]
    OffsetOutOfBounds {
        /// `componentOffset` or `entityOffset`.
        field: &'static str,
        /// Its value.
        offset: u64,
        /// The chunk's length.
        len: u64,
    },
    /// `entityOffset` comes before `componentOffset`.
    #[error("offsets out of order: entityOffset {entity} < componentOffset {component}")]
    OffsetsOutOfOrder {
        /// `componentOffset`.
        component: u64,
        /// `entityOffset`.
        entity: u64,
    },
    /// A length or offset does not add up with the rest of the chunk.
    #[error("{what}: expected {expected}, found {found}")]
    LengthMismatch {
        /// What was checked.
        what: &'static str,
        /// The value the other fields imply.
        expected: u64,
        /// The value stored.
        found: u64,
    },
    /// The block palette is empty (a chunk always has at least its layer 0 blocks).
    #[error("the block palette is empty: a chunk needs at least one palette entry")]
    EmptyPalette,
    /// A palette entry does not fit a [`BlockId`](crate::BlockId) (`u32`).
    #[error("palette entry {index} holds global block id {id}, beyond u32")]
    BlockIdTooLarge {
        /// Palette index (local id).
        index: u64,
        /// The stored id.
        id: u64,
    },
    /// The palette is not strictly ascending (non-canonical, or a duplicate entry).
    #[error(
        "palette not strictly ascending at local id {index}: canonical palettes are sorted without duplicates"
    )]
    PaletteNotSorted {
        /// The first offending local id.
        index: u64,
    },
    /// A palette entry is used by no cell at any layer (non-canonical).
    #[error(
        "palette entry {index} (global id {id}) is used by no cell: canonical palettes hold only used blocks"
    )]
    UnusedPaletteEntry {
        /// Its local id.
        index: u64,
        /// Its global id.
        id: u32,
    },
    /// A packed local id is not below the palette count.
    #[error(
        "cell {cell} layer {layer}: local id {local} is beyond the {palette_len}-entry palette"
    )]
    LocalIdOutOfRange {
        /// The cell index.
        cell: u16,
        /// The layer (0 for the packed array).
        layer: u64,
        /// The stored local id.
        local: u64,
        /// The palette count.
        palette_len: u64,
    },
    /// Extra-layer records are not sorted by cell (non-canonical).
    #[error(
        "layer record {index} (cell {cell}) comes after a record of a higher cell: records must be sorted by (cell, layer)"
    )]
    LayerRecordsUnsorted {
        /// The record's position in the record list.
        index: u64,
        /// Its cell.
        cell: u16,
    },
    /// Padding or unused bits are not zero (non-canonical).
    #[error("non-zero padding at offset {offset}: padding bits and bytes must be zero")]
    NonZeroPadding {
        /// Byte offset of the offending byte.
        offset: u64,
    },
    /// A palette entry names a block the schema does not register.
    #[error("global block id {id} is not registered in the schema ({registered} blocks)")]
    UnknownBlock {
        /// The block id.
        id: u32,
        /// The schema's block count.
        registered: usize,
    },
    /// A component id is not registered in the schema, or its size class (MSB) disagrees.
    #[error(
        "component id {id:#x} is unknown to the schema (or its fixed/variable bit disagrees with it)"
    )]
    UnknownComponent {
        /// The raw component id.
        id: u64,
    },
    /// Component ids are not strictly ascending.
    #[error(
        "component {id:#x} at offset {offset} is not after the previous one: component ids must be strictly ascending"
    )]
    ComponentsUnsorted {
        /// The offending id.
        id: u64,
        /// Its offset.
        offset: u64,
    },
    /// A component carried by some block of the chunk is not stored.
    #[error("component {id:#x} is carried by {count} entries of the chunk but is not stored")]
    MissingComponent {
        /// The component.
        id: ComponentId,
        /// Number of (cell, layer) entries that carry it.
        count: u64,
    },
    /// A component is stored although no block of the chunk carries it (non-canonical).
    #[error("component {id:#x} is stored but no block of the chunk carries it")]
    UnexpectedComponent {
        /// The component.
        id: ComponentId,
    },
    /// A variable-size component's offset width is not 1, 2, 4 or 8, or is not the smallest
    /// width that holds its data length (non-canonical).
    #[error(
        "component {id:#x}: offset width {width} is not allowed (canonical: the smallest of 1, 2, 4, 8 holding the data length {data_len})"
    )]
    BadOffsetWidth {
        /// The component.
        id: ComponentId,
        /// The stored width.
        width: u8,
        /// The data length (the last offset), when known.
        data_len: u64,
    },
    /// A variable-size component's offset table does not start at 0 or decreases.
    #[error(
        "component {id:#x}: offset table not monotone at entry {index} (first must be 0, then non-decreasing)"
    )]
    OffsetTableNotMonotone {
        /// The component.
        id: ComponentId,
        /// The offending entry.
        index: u64,
    },
    /// Entity UUIDs are not strictly ascending (non-canonical, or a duplicate).
    #[error("entity {index} is not after the previous one: UUIDs must be strictly ascending")]
    EntitiesUnsorted {
        /// The offending position.
        index: u64,
    },
    /// Invalid LEB128 in a registry or schema encoding.
    #[error("{what}: invalid or overlong LEB128 at byte {offset}")]
    BadLeb128 {
        /// The structure being decoded.
        what: &'static str,
        /// Byte offset.
        offset: usize,
    },
    /// A registry entry is not UTF-8.
    #[error("{registry} registry entry {index} is not UTF-8")]
    BadUtf8 {
        /// Registry name.
        registry: &'static str,
        /// Entry index.
        index: usize,
    },
    /// A name is registered twice.
    #[error("{registry} registry: name {name:?} is already registered")]
    DuplicateName {
        /// Registry name.
        registry: &'static str,
        /// The name.
        name: String,
    },
    /// A registry or the schema layout has bytes after its last entry, or counts disagree.
    #[error("schema encoding: {0}")]
    BadSchema(String),
    /// A newer schema renames or reorders an existing registry entry.
    #[error(
        "{registry} registry entry {index} was {old:?} and is now {new:?}: registries only grow, existing ids never change"
    )]
    RegistryEntryChanged {
        /// Registry name.
        registry: &'static str,
        /// Entry index (its id).
        index: usize,
        /// The stored name.
        old: String,
        /// The new name.
        new: String,
    },
    /// A newer schema lacks entries of the stored one.
    #[error("{registry} registry shrank from {old} to {new} entries: registries only grow")]
    RegistryShrunk {
        /// Registry name.
        registry: &'static str,
        /// Stored length.
        old: usize,
        /// New length.
        new: usize,
    },
    /// A newer schema changes the size (or size class) of an existing component.
    #[error(
        "component {name:?} changed from {old} to {new}: existing component sizes never change"
    )]
    ComponentResized {
        /// Its name.
        name: String,
        /// Stored kind.
        old: crate::ComponentKind,
        /// New kind.
        new: crate::ComponentKind,
    },
    /// A newer schema changes the component set of an existing block.
    #[error("block {name:?} changed its components: existing blocks keep their component set")]
    BlockComponentsChanged {
        /// The block's name.
        name: String,
    },
    /// A Java block-state string does not parse ([`block_state::parse`](crate::block_state::parse)).
    #[error(
        "{state:?} is not a block state: {reason}; write `namespace:name[key=value,...]`, e.g. `minecraft:oak_stairs[facing=east,half=top]`"
    )]
    InvalidBlockState {
        /// The string.
        state: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An edit addressed a layer that does not exist.
    #[error("cell {cell} has {layers} layers; layer {layer} does not exist")]
    NoSuchLayer {
        /// The cell.
        cell: u16,
        /// The layer asked for.
        layer: u32,
        /// The cell's layer count (including layer 0).
        layers: u32,
    },
    /// A component value does not fit the component (wrong fixed size) or the entry's block
    /// does not carry the component.
    #[error("component {id:#x}: {reason}")]
    BadComponentValue {
        /// The component.
        id: ComponentId,
        /// What is wrong.
        reason: String,
    },
}

/// `Result<T, terrane_chunk::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;
