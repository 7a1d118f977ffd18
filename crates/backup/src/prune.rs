//! Removing backups: each removed backup's changes are folded into the next one first, so
//! every kept backup stays restorable at every step; then the packs no kept backup needs are
//! deleted, and those it needs little of are rewritten smaller (`repack`).

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::path::PathBuf;

use crate::error::{Result, io};
use crate::manifest::{Entry, Manifest};
use crate::pack::pack_id;
use crate::repo::{Repo, sync_dir};

/// Which backups [`Repo::prune`] keeps: the union of the rules (the newest backup is always
/// kept).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Keep {
    /// Keep the newest this many. Default 0.
    pub last: usize,
    /// Keep these ids. Default none.
    pub ids: Vec<u64>,
}

/// What [`Repo::prune`] did, or with `dry_run` would do.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PruneReport {
    /// Backups removed.
    pub removed: Vec<u64>,
    /// Backups kept.
    pub kept: Vec<u64>,
    /// Pack files deleted.
    pub packs_deleted: u64,
    /// Of them, packs mostly unneeded whose needed pieces were copied into new packs first.
    pub packs_rewritten: u64,
    /// Bytes freed: those of the packs deleted, less those of the new packs.
    pub bytes_freed: u64,
}

/// `child`'s changes over `parent`'s: the manifest that takes `child` from `parent`'s parent
/// (a whole listing when `parent` had none).
fn fold_into(parent: &Manifest, child: &Manifest) -> Manifest {
    let mut merged: BTreeMap<(String, Vec<u8>), Entry> = BTreeMap::new();
    for m in [parent, child] {
        for e in &m.entries {
            merged.insert((m.tables[usize::from(e.table)].clone(), e.key.clone()), e.clone());
        }
    }
    let mut tables: Vec<String> = merged.keys().map(|(t, _)| t.clone()).collect();
    tables.dedup();
    let mut entries = Vec::with_capacity(merged.len());
    for ((t, _), mut e) in merged {
        // Below a first backup there is nothing to remove.
        if parent.parent == 0 && e.put.is_none() {
            continue;
        }
        e.table = tables.iter().position(|x| *x == t).expect("listed") as u16;
        entries.push(e);
    }
    Manifest { parent: parent.parent, tables, entries, ..child.clone() }
}

impl Repo {
    /// Removes every backup `keep` does not keep, oldest first, and deletes the pack files
    /// no kept backup needs; a pack less than half needed has its needed pieces copied into
    /// a new pack and is deleted too. With `dry_run`, only says which backups it would
    /// remove.
    ///
    /// Each removal rewrites the next backup's manifest to hold the removed one's changes
    /// too (published whole, by rename), and only then deletes the removed manifest: a prune
    /// cut off at any point leaves every kept backup restorable (and maybe a removed one
    /// still listed, removed by the next prune).
    pub fn prune(&self, keep: &Keep, dry_run: bool) -> Result<PruneReport> {
        let ids = self.ids()?;
        let newest = ids.len().saturating_sub(keep.last.max(1));
        let mut report = PruneReport::default();
        for (i, id) in ids.iter().enumerate() {
            if i >= newest || keep.ids.contains(id) {
                report.kept.push(*id);
            } else {
                report.removed.push(*id);
            }
        }
        if dry_run {
            return Ok(report);
        }
        for &id in &report.removed {
            let gone = self.manifest(id)?;
            if let Some(child_id) = ids.iter().copied().find(|c| *c > id) {
                let child = self.manifest(child_id)?;
                if child.parent == id {
                    self.write_manifest(&fold_into(&gone, &child))?;
                }
            }
            let path = self.manifest_path(id);
            fs::remove_file(&path).map_err(io(&path))?;
            sync_dir(path.parent().expect("backups/"))?;
        }
        let (deleted, bytes) = self.delete_unused_packs()?;
        let repacked = self.repack()?;
        let (rewritten, old_bytes) =
            if repacked.packs > 0 { self.delete_unused_packs()? } else { (0, 0) };
        report.packs_deleted = deleted + rewritten;
        report.packs_rewritten = repacked.packs;
        report.bytes_freed = (bytes + old_bytes).saturating_sub(repacked.bytes_written);
        Ok(report)
    }

    /// Deletes the pack files no readable manifest names (none when a manifest is damaged:
    /// its pieces might be needed). Returns the files and bytes deleted.
    fn delete_unused_packs(&self) -> Result<(u64, u64)> {
        let (manifests, bad) = self.manifests()?;
        if !bad.is_empty() {
            return Ok((0, 0));
        }
        let used: HashSet<u64> = manifests
            .values()
            .flat_map(|m| m.entries.iter().filter_map(|e| e.put.map(|p| p.piece.pack)))
            .collect();
        let dir = self.packs_dir();
        let (mut n, mut bytes) = (0, 0);
        let mut doomed: Vec<PathBuf> = Vec::new();
        for e in fs::read_dir(&dir).map_err(io(&dir))? {
            let path = e.map_err(io(&dir))?.path();
            if pack_id(&path).is_some_and(|id| !used.contains(&id)) {
                doomed.push(path);
            }
        }
        for path in doomed {
            bytes += fs::metadata(&path).map_or(0, |m| m.len());
            fs::remove_file(&path).map_err(io(&path))?;
            n += 1;
        }
        if n > 0 {
            sync_dir(&dir)?;
        }
        Ok((n, bytes))
    }
}
