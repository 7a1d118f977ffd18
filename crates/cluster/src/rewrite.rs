//! Every stored chunk where it is: read a page of keys at a time ([`TieredStore::for_each_chunk`]),
//! or rewritten in place, a page per atomic batch ([`TieredStore::rewrite_chunks`]), for
//! repairs that change what chunks hold but not where they live.

use std::ops::Bound;

use terrane_chunk::ChunkView;
use terrane_section::AreaId;
use terrane_section::keys::{self, Level};
use terrane_store::{Batch, KeyRange, Object, Store};

use crate::container::{ClusterBuilder, ClusterView, Scale};
use crate::error::{Error, Result};
use crate::opacity::column_tops;
use crate::tiered::{ChunkAddr, TieredStore, table_of};

/// Keys (L0 chunks or whole clusters) per page.
const PAGE_KEYS: usize = 64;
/// Value bytes per page, at most (a page ends after the key that reaches it).
const PAGE_BYTES: usize = 16 << 20;

/// What [`TieredStore::rewrite_chunks`] did.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RewriteReport {
    /// Chunks shown to the rewrite, per level (L0, L1, L2).
    pub seen: [usize; 3],
    /// Chunks rewritten, per level.
    pub rewritten: [usize; 3],
    /// Keys written: L0 chunks and whole clusters.
    pub keys: usize,
    /// Atomic batches written (one per page that changed).
    pub batches: usize,
}

impl<S: Store> TieredStore<S> {
    /// Shows `f` every stored chunk with its level, level after level in key order, reading
    /// a page of keys (64 keys or 16 MiB) at a time: memory stays bounded whatever the
    /// world's size (unlike [`all_chunks`](Self::all_chunks)). `f`'s first error stops it
    /// and is returned; `f` may return its caller's error type.
    pub fn for_each_chunk<E: From<Error>>(
        &self,
        mut f: impl FnMut(ChunkAddr, Level, &[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let mut failed: Option<E> = None;
        for level in Level::ALL {
            let paged = self.pages(level, |page| {
                for (key, obj) in page {
                    for (addr, _, blob) in chunks_of(level, key, &obj.data)? {
                        if let Err(e) = f(addr, level, blob) {
                            failed = Some(e);
                            // Stops the paging; the caller's error replaces it below.
                            return Err(Error::Inconsistent(String::new()));
                        }
                    }
                }
                Ok(())
            });
            if let Some(e) = failed.take() {
                return Err(e);
            }
            paged?;
        }
        Ok(())
    }

    /// Rewrites stored chunks in place: `f` is shown every chunk (address and bytes) and
    /// returns the bytes to store instead, or `None` to leave it. A chunk stays at its level
    /// (an L0 chunk at L0, a clustered chunk in its cluster) and every object keeps its
    /// version (its access time): nothing is promoted or demoted. Chunks outside the areas
    /// this store writes ([`set_areas`](Self::set_areas)) are not shown.
    ///
    /// Keys are read a page at a time (64 keys or 16 MiB), level after level in key order;
    /// the changed keys of a page are one synced batch that carries the store's fence and, as
    /// preconditions, the versions read, so each page is all-or-nothing across crashes and a
    /// key changed by someone else meanwhile fails the batch rather than being overwritten.
    /// After a crash the pages written hold the new bytes and the rest the old, so a rewrite
    /// whose `f` leaves its own output alone (returns `None` for it) finishes the job when run
    /// again.
    ///
    /// New bytes are checked against the schema and must keep each block column's opacity
    /// (the opacity map is not rewritten): a rewrite that changes which blocks are opaque is
    /// refused with [`Error::Inconsistent`] before its page is written. Entity references
    /// are the caller's business.
    pub fn rewrite_chunks(
        &mut self,
        mut f: impl FnMut(ChunkAddr, &[u8]) -> Result<Option<Vec<u8>>>,
    ) -> Result<RewriteReport> {
        let mut report = RewriteReport::default();
        for level in Level::ALL {
            let table = table_of(level);
            let li = usize::from(level.index());
            self.pages(level, |page| {
                let mut batch = Batch::new();
                for p in self.fence() {
                    batch.expect(&p.table, p.key.clone(), p.version);
                }
                let mut keys = 0;
                for (key, obj) in page {
                    let chunks = chunks_of(level, key, &obj.data)?;
                    if chunks
                        .first()
                        .is_some_and(|((_, p), _, _)| !self.in_scope(AreaId::of_chunk(*p)))
                    {
                        continue;
                    }
                    let mut changed = Vec::new();
                    for (addr, index, blob) in chunks {
                        report.seen[li] += 1;
                        if let Some(new) = f(addr, blob)? {
                            self.check_rewrite(addr, blob, &new)?;
                            changed.push((index, new));
                        }
                    }
                    if changed.is_empty() {
                        continue;
                    }
                    report.rewritten[li] += changed.len();
                    let bytes = match Scale::from_level(level) {
                        None => changed.pop().map(|(_, b)| b).unwrap_or_default(),
                        Some(scale) => {
                            let view = ClusterView::with_scale(&obj.data, scale)?;
                            let mut b = ClusterBuilder::from_view(&view);
                            for (index, new) in changed {
                                b.set(index, new)?;
                            }
                            b.build()?
                        }
                    };
                    batch.expect(table, key.clone(), Some(obj.version));
                    batch.put(table, key.clone(), obj.version, bytes);
                    keys += 1;
                }
                if keys > 0 {
                    self.store().write(&batch.synced())?;
                    report.keys += keys;
                    report.batches += 1;
                }
                Ok(())
            })?;
        }
        Ok(report)
    }

    /// Runs `g` on the keys of `level`'s table a page at a time, in key order; the scan is
    /// closed before `g` runs, so `g` may write.
    fn pages(
        &self,
        level: Level,
        mut g: impl FnMut(&[(Vec<u8>, Object)]) -> Result<()>,
    ) -> Result<()> {
        let table = table_of(level);
        let mut start = Bound::Unbounded;
        loop {
            let mut page = Vec::new();
            let mut bytes = 0;
            for e in self.store().scan(table, KeyRange { start, end: Bound::Unbounded })? {
                let (key, obj) = e?;
                bytes += obj.data.len();
                page.push((key, obj));
                if page.len() >= PAGE_KEYS || bytes >= PAGE_BYTES {
                    break;
                }
            }
            let Some((last, _)) = page.last() else { return Ok(()) };
            start = Bound::Excluded(last.clone());
            g(&page)?;
        }
    }

    /// Checks a rewritten chunk: it decodes against the schema, and each of its block
    /// columns keeps its highest opaque block.
    fn check_rewrite(&self, (dim, pos): ChunkAddr, old: &[u8], new: &[u8]) -> Result<()> {
        self.check_chunk(new)?;
        let opaque = self.opaque_table();
        if column_tops(&ChunkView::parse(old)?, opaque)
            != column_tops(&ChunkView::parse(new)?, opaque)
        {
            return Err(Error::Inconsistent(format!(
                "the rewrite of chunk {pos:?} of dimension {dim} changes which of its blocks are \
                 opaque, which the opacity map records: refused"
            )));
        }
        Ok(())
    }
}

/// The chunks of one stored value of `level`: an L0 chunk, or every chunk of a cluster, with
/// their addresses and local indices (0 for L0).
pub(crate) fn chunks_of<'a>(
    level: Level,
    key: &[u8],
    data: &'a [u8],
) -> Result<Vec<(ChunkAddr, u16, &'a [u8])>> {
    let table = table_of(level);
    let (dim, cell) =
        keys::parse_chunk_key(key).ok_or(Error::CorruptKey { table, len: key.len() })?;
    let Some(scale) = Scale::from_level(level) else {
        return Ok(vec![((dim, cell), 0, data)]);
    };
    let view = ClusterView::with_scale(data, scale)?;
    view.iter()
        .map(|(i, blob)| {
            let pos = scale.chunk_pos(cell, i).ok_or_else(|| {
                Error::Inconsistent(format!(
                    "cluster {cell:?} of dimension {dim} is outside the world"
                ))
            })?;
            Ok(((dim, pos), i, blob))
        })
        .collect()
}
