//! Minecraft's NBT (Named Binary Tag) for bytes that come from anywhere: Java Edition's
//! big-endian form and Bedrock Edition's little-endian one. The one NBT implementation of the
//! terrane workspace.
//!
//! # Overview
//!
//! - [`Tag`] and [`Compound`]: the tree. Compounds keep file order and compare as maps (order
//!   ignored); a key read twice keeps its first place and its last value, as Minecraft's own
//!   reader does. Lists keep their element type, so an empty list of compounds round-trips.
//! - [`from_bytes`] / [`Compound::from_bytes`]: one pass that validates while it builds.
//! - Bedrock's order: [`Reader::little_endian`] and [`Writer::little_endian`] (numbers
//!   low byte first, strings plain UTF-8); [`Reader::root`] reads the several roots Bedrock
//!   stores back to back.
//! - [`Reader`]: the cursor underneath, for decoders that stream a large file (a Sponge
//!   schematic's block array) and build the tree only for the parts they keep;
//!   [`Reader::skip`] passes over a value without building it.
//! - [`to_bytes`] and [`Writer`]: modified UTF-8, in file order or, with
//!   [`Writer::sorted`], with compound keys sorted so that equal values encode to equal bytes.
//! - [`decode_mutf8`] / [`encode_mutf8`]: Java's modified UTF-8 (`C0 80` for NUL,
//!   supplementary characters as CESU-8 surrogate pairs).
//!
//! # Example
//!
//! ```
//! use terrane_nbt::{Compound, Tag, Writer};
//!
//! let mut props = Compound::new();
//! props.insert("facing", Tag::String("east".into()));
//! let mut state = Compound::new();
//! state.insert("Properties", Tag::Compound(props));
//! state.insert("Name", Tag::String("minecraft:oak_stairs".into()));
//!
//! // File order is kept ...
//! let bytes = terrane_nbt::to_bytes("", &Tag::Compound(state.clone())).unwrap();
//! let back = Compound::from_bytes(&bytes).unwrap();
//! assert_eq!(back.keys().collect::<Vec<_>>(), ["Properties", "Name"]);
//! assert_eq!(back, state);
//!
//! // ... or sorted, for bytes that depend on the values only.
//! let mut w = Writer::sorted();
//! w.named("", &Tag::Compound(state)).unwrap();
//! let sorted = Compound::from_bytes(&w.out).unwrap();
//! assert_eq!(sorted.keys().collect::<Vec<_>>(), ["Name", "Properties"]);
//!
//! // Damaged bytes are a typed error, never a panic.
//! assert!(Compound::from_bytes(&bytes[..bytes.len() - 1]).is_err());
//! ```
//!
//! # Features
//!
//! None. The only dependency is `thiserror`.
//!
//! # Bounds on untrusted input
//!
//! Nesting of lists and compounds is capped at [`MAX_DEPTH`] (512, Minecraft's
//! `NbtAccounter`); every list and array length is checked against the bytes left before
//! anything is allocated, and a list reserves at most 256 elements up front; the tree a parse
//! builds counts against [`DEFAULT_TREE_LIMIT`] (256 MiB; [`Reader::with_tree_limit`]), so a
//! parse takes at most the input, that budget and the vectors' growth (at most twice it);
//! nested values are parsed with an explicit stack, so hostile input cannot exhaust the
//! thread's stack.
//!
//! # What it does not guarantee
//!
//! - No Bedrock (little-endian) or network NBT, no SNBT text, no serde: the tree is the API.
//! - The writer refuses what NBT cannot hold (a string over 65,535 encoded bytes, an array
//!   over `i32::MAX` elements, a list of mixed types, nesting over 512) with an error; it does
//!   not truncate.
//! - Float NaN payloads are kept bit for bit, so `Tag` equality follows `f32`/`f64` (a NaN
//!   is not equal to itself).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod copy;
mod error;
mod mutf8;
mod read;
mod tag;
mod write;

pub use error::Error;
pub use mutf8::{decode_mutf8, encode_mutf8};
pub use read::{Reader, from_bytes};
pub use tag::{Compound, Tag, dedup_entries};
pub use write::{Writer, to_bytes};

/// Maximum nesting of compounds and lists (Minecraft's `NbtAccounter` depth).
pub const MAX_DEPTH: usize = 512;

/// The memory a [`Reader`] may spend on the trees it builds unless told otherwise: 256 MiB,
/// room for the largest real chunks (a few MB of NBT) many times over, and a bound on what a
/// hostile input can ask for (an empty compound is one byte on the wire, 32 in memory).
pub const DEFAULT_TREE_LIMIT: usize = 256 << 20;

/// The NBT type ids, by name.
pub mod id {
    /// `TAG_End`: ends a compound; the element type of an empty list.
    pub const END: u8 = 0;
    /// `TAG_Byte`.
    pub const BYTE: u8 = 1;
    /// `TAG_Short`.
    pub const SHORT: u8 = 2;
    /// `TAG_Int`.
    pub const INT: u8 = 3;
    /// `TAG_Long`.
    pub const LONG: u8 = 4;
    /// `TAG_Float`.
    pub const FLOAT: u8 = 5;
    /// `TAG_Double`.
    pub const DOUBLE: u8 = 6;
    /// `TAG_Byte_Array`.
    pub const BYTE_ARRAY: u8 = 7;
    /// `TAG_String`.
    pub const STRING: u8 = 8;
    /// `TAG_List`.
    pub const LIST: u8 = 9;
    /// `TAG_Compound`.
    pub const COMPOUND: u8 = 10;
    /// `TAG_Int_Array`.
    pub const INT_ARRAY: u8 = 11;
    /// `TAG_Long_Array`.
    pub const LONG_ARRAY: u8 = 12;
}
