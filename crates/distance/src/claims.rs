//! [`Claims`]: chunks handed to workers and not yet completed.

use std::collections::HashMap;

use terrane_section::ColumnPos;

use crate::Hit;
use crate::node::batch_bit;

/// The in-flight layer: for each batch, the chunks a worker has claimed and not yet released.
///
/// A worker claims a [`Hit`]'s missing mask ([`claim`](Self::claim)), generates the chunks,
/// and releases each one as it finishes ([`release`](Self::release), idempotent), whether it
/// completed or failed. [`DistanceGraph::nearest_unclaimed`](crate::DistanceGraph::nearest_unclaimed)
/// skips claimed chunks, so no caller-side "tracked batches" set is needed, and a batch whose
/// claim was released without completing becomes a candidate again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Claims {
    /// Batch (in batch coordinates) → claimed chunk bits (never 0).
    map: HashMap<ColumnPos, u16, ahash::RandomState>,
    chunks: u64,
}

#[inline]
fn batch_of(p: ColumnPos) -> (ColumnPos, u16) {
    (ColumnPos::new(p.x >> 2, p.z >> 2), batch_bit(p.x as u32, p.z as u32))
}

impl Claims {
    /// No claims.
    pub fn new() -> Self {
        Self::default()
    }

    /// Claims the chunks `mask` of `batch` (batch coordinates). Returns the bits that were not
    /// claimed before (claiming twice is harmless).
    pub fn claim_mask(&mut self, batch: ColumnPos, mask: u16) -> u16 {
        if mask == 0 {
            return 0;
        }
        let e = self.map.entry(batch).or_insert(0);
        let new = mask & !*e;
        *e |= mask;
        self.chunks += new.count_ones() as u64;
        new
    }

    /// Claims a search result's missing chunks; see [`claim_mask`](Self::claim_mask).
    pub fn claim(&mut self, hit: &Hit) -> u16 {
        self.claim_mask(hit.batch, hit.missing)
    }

    /// Releases the claim on chunk `p` (chunk coordinates). Returns whether it was claimed;
    /// releasing an unclaimed chunk does nothing (idempotent).
    pub fn release(&mut self, p: ColumnPos) -> bool {
        let (b, bit) = batch_of(p);
        let Some(e) = self.map.get_mut(&b) else { return false };
        if *e & bit == 0 {
            return false;
        }
        *e &= !bit;
        if *e == 0 {
            self.map.remove(&b);
        }
        self.chunks -= 1;
        true
    }

    /// Releases every claimed chunk of `batch`; returns the bits that were claimed.
    pub fn release_batch(&mut self, batch: ColumnPos) -> u16 {
        let m = self.map.remove(&batch).unwrap_or(0);
        self.chunks -= m.count_ones() as u64;
        m
    }

    /// Claimed chunk bits of `batch` (batch coordinates), 0 when none.
    pub fn claimed(&self, batch: ColumnPos) -> u16 {
        self.map.get(&batch).copied().unwrap_or(0)
    }

    /// Is chunk `p` claimed?
    pub fn is_claimed(&self, p: ColumnPos) -> bool {
        let (b, bit) = batch_of(p);
        self.claimed(b) & bit != 0
    }

    /// Number of batches with at least one claimed chunk.
    pub fn batches(&self) -> usize {
        self.map.len()
    }

    /// Number of claimed chunks.
    pub fn chunks(&self) -> u64 {
        self.chunks
    }

    /// Are no chunks claimed?
    pub fn is_empty(&self) -> bool {
        self.chunks == 0
    }

    /// Releases every claim.
    pub fn clear(&mut self) {
        self.map.clear();
        self.chunks = 0;
    }

    /// Every claimed batch and its bits, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = (ColumnPos, u16)> + '_ {
        self.map.iter().map(|(&b, &m)| (b, m))
    }
}
