//! What a column keeps besides blocks, block entities and entities (`docs/format/anvil.md`,
//! the column record's `Rest`): the chunk's kept entries, edited as the import edits them
//! (placeholders for the lists taken out, each section's non-block fields, the `Level`
//! wrapper), then made a tree ([`Column::rest`](crate::Column::rest)) or written straight
//! into the column record's sorted NBT from the chunk's bytes.
//!
//! Both ends give the same bytes in the record: a key repeated keeps its last value
//! ([`dedup_entries`], as [`Compound`] keeps it; the values replaced are checked as the tree
//! reader checks them, so that damage fails both ends alike), keys are sorted as
//! [`Writer::sorted`] sorts them, and kept values go through [`Writer::copy_payload`], which
//! writes what the tree would. The import takes the second end: a tree per value was a third
//! of its time (allocations, the tree's walk and its drop).

use std::borrow::Cow;

use crate::column_read::{Kept, KeptEntries, RawValue};
use crate::error::ChunkError;
use crate::nbt::{Compound, Tag, Writer, id};
use terrane_nbt::{MAX_DEPTH, Reader, dedup_entries};

/// A value of the rest: kept as read, or made by the import.
pub(crate) enum RestNode<'a, V> {
    /// As read from the chunk.
    Kept(V),
    /// The `Level` compound of a 1.17-or-older chunk.
    Compound(RestEntries<'a, V>),
    /// The sections, each with its non-block fields.
    CompoundList(Vec<KeptEntries<'a, V>>),
    /// An empty list of this element type, in place of the block entities or entities.
    EmptyList(u8),
}

/// A compound's entries in the rest, in order (a key may repeat; the last value counts).
pub(crate) type RestEntries<'a, V> = Vec<(Cow<'a, str>, RestNode<'a, V>)>;

/// The rest as a tree.
pub(crate) fn to_compound(entries: RestEntries<'_, Tag>) -> Compound {
    entries
        .into_iter()
        .map(|(k, n)| {
            let v = match n {
                RestNode::Kept(t) => t,
                RestNode::Compound(e) => Tag::Compound(to_compound(e)),
                RestNode::CompoundList(l) => Tag::compound_list(
                    l.into_iter()
                        .map(|e| e.into_iter().map(|(k, v)| (k.into_owned(), v)).collect()),
                ),
                RestNode::EmptyList(et) => Tag::List(et, Vec::new()),
            };
            (k.into_owned(), v)
        })
        .collect()
}

/// The rest as the payload of the record's `Rest` compound (its entries and `TAG_End`), the
/// bytes `Writer::sorted().compound(&to_compound(..), 1)` writes for the same chunk.
pub(crate) fn write_sorted(entries: RestEntries<'_, RawValue<'_>>) -> Result<Vec<u8>, ChunkError> {
    let mut w = Writer::sorted().with_buffer(Vec::with_capacity(16 * 1024));
    compound(&mut w, entries, 1)?;
    Ok(w.out)
}

/// A compound at nesting `depth`, as [`Writer::compound`] writes it.
fn compound(
    w: &mut Writer,
    mut entries: RestEntries<'_, RawValue<'_>>,
    depth: usize,
) -> Result<(), ChunkError> {
    if depth > MAX_DEPTH {
        return Err(terrane_nbt::Error::TooDeep.into());
    }
    for (_, replaced) in dedup_entries(&mut entries) {
        if let RestNode::Kept(v) = replaced {
            v.check()?;
        }
    }
    entries.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    for (k, n) in entries {
        match n {
            RestNode::Kept(v) => {
                w.head(v.ty, &k)?;
                w.copy_payload(&mut Reader::new(v.bytes), v.ty, depth + 1)?;
            }
            RestNode::Compound(e) => {
                w.head(id::COMPOUND, &k)?;
                compound(w, e, depth + 1)?;
            }
            RestNode::CompoundList(l) => {
                w.head(id::LIST, &k)?;
                list_head(w, id::COMPOUND, l.len(), depth + 1)?;
                for e in l {
                    let e = e.into_iter().map(|(k, v)| (k, RestNode::Kept(v))).collect();
                    compound(w, e, depth + 2)?;
                }
            }
            RestNode::EmptyList(et) => {
                w.head(id::LIST, &k)?;
                list_head(w, et, 0, depth + 1)?;
            }
        }
    }
    w.out.push(id::END);
    Ok(())
}

/// A list's element type and length, the list at nesting `depth`.
fn list_head(w: &mut Writer, et: u8, n: usize, depth: usize) -> Result<(), ChunkError> {
    if depth > MAX_DEPTH {
        return Err(terrane_nbt::Error::TooDeep.into());
    }
    w.out.push(et);
    w.len(n)?;
    Ok(())
}
