//! Repacking: a pack file most of whose bytes no kept backup needs any more is rewritten
//! with only the pieces still needed, so that a prune frees the space of the values that
//! changed since, and not only of packs no backup needs at all.

use std::collections::HashMap;
use std::fs::File;

use crate::error::{Error, Result, io};
use crate::pack::{
    PACK_HEADER, PackSeries, PieceRef, pack_name, read_piece, record_bytes, record_len,
};
use crate::repo::Repo;

/// A piece a manifest names, with its stored length where the manifest records it.
type Needed = (PieceRef, Option<u32>);

/// A pack is rewritten when the records still needed are less than this share of its bytes.
const REPACK_BELOW: f64 = 0.5;

/// What [`Repo::repack`] did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Repacked {
    /// Pack files whose needed pieces were copied into new packs (the next deletion of
    /// unused packs removes them).
    pub(crate) packs: u64,
    /// Bytes of the new packs.
    pub(crate) bytes_written: u64,
}

impl Repo {
    /// Copies the needed pieces of every pack that is less than half needed into new packs,
    /// and points the manifests at the copies; the old packs are left for
    /// `delete_unused_packs`. Nothing is done while a manifest is damaged, and a pack with a
    /// damaged piece (or missing) is left as it is (`verify` names it). Each piece of a pack
    /// rewritten is read twice: checked, then copied.
    ///
    /// Crash safety: a new pack is published (fsynced, renamed) before any manifest names
    /// it, each manifest is replaced whole by rename, and an old pack is deleted only once no
    /// manifest names it. A cut leaves every manifest naming the old or the new copy of each
    /// piece, both present.
    pub(crate) fn repack(&self) -> Result<Repacked> {
        let (mut manifests, bad) = self.manifests()?;
        let Some(&latest) = manifests.keys().next_back() else { return Ok(Repacked::default()) };
        if !bad.is_empty() {
            return Ok(Repacked::default());
        }
        // Each piece a manifest names, with its stored length where a manifest records it.
        let mut needed: HashMap<u64, Vec<Needed>> = HashMap::new();
        for m in manifests.values() {
            for put in m.entries.iter().filter_map(|e| e.put) {
                needed.entry(put.piece.pack).or_default().push((put.piece, put.stored_len));
            }
        }
        let mut packs: Vec<(u64, Vec<Needed>)> = needed.into_iter().collect();
        packs.sort_unstable_by_key(|(id, _)| *id);
        let mut moved: HashMap<PieceRef, (PieceRef, u32)> = HashMap::new();
        let mut out = PackSeries::new(self.tmp_dir(), self.packs_dir(), latest);
        let mut done = Repacked::default();
        for (pack, mut pieces) in packs {
            pieces.sort_unstable_by_key(|(p, stored)| (p.offset, stored.is_none()));
            pieces.dedup_by(|a, b| a.0 == b.0);
            let path = self.packs_dir().join(pack_name(pack));
            let file = match File::open(&path) {
                Ok(f) => f,
                // A missing pack is damage `verify` names; it is nothing to rewrite.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io(&path)(e)),
            };
            let size = file.metadata().map_err(io(&path))?.len();
            // The needed records' bytes: from the manifests' stored lengths, a record's own
            // header read only where a format-1 manifest did not record it.
            let mut kept = Some(PACK_HEADER.len() as u64);
            for (p, stored) in &pieces {
                let n = match stored {
                    Some(s) => Ok(record_bytes(*s)),
                    None => record_len(&file, &path, p),
                };
                match n {
                    Ok(n) => kept = kept.map(|k| k + n),
                    Err(Error::Damaged { .. }) => kept = None,
                    Err(e) => return Err(e),
                }
            }
            if kept.is_none_or(|k| k as f64 >= size as f64 * REPACK_BELOW) {
                continue;
            }
            // Every piece checked before any is copied: a pack with a damaged piece stays
            // whole and leaves nothing behind in the new pack.
            let mut whole = true;
            for (p, _) in &pieces {
                match read_piece(&file, &path, p) {
                    Ok(_) => {}
                    Err(Error::Damaged { .. }) => whole = false,
                    Err(e) => return Err(e),
                }
            }
            if !whole {
                continue;
            }
            for (p, _) in &pieces {
                let value = read_piece(&file, &path, p)?;
                moved.insert(*p, out.append(&value, p.sha)?);
            }
            done.packs += 1;
        }
        done.bytes_written = out.finish()?;
        if moved.is_empty() {
            return Ok(done);
        }
        for m in manifests.values_mut() {
            let mut changed = false;
            for put in m.entries.iter_mut().filter_map(|e| e.put.as_mut()) {
                if let Some(&(to, stored)) = moved.get(&put.piece) {
                    (put.piece, put.stored_len) = (to, Some(stored));
                    changed = true;
                }
            }
            if changed {
                self.write_manifest(m)?;
            }
        }
        Ok(done)
    }
}
