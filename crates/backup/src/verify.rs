//! Checking a repository: every manifest, every piece a backup needs (its checksum and its
//! SHA-256), and which backups the damage touches.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fs;
use std::path::PathBuf;

use crate::contents::{BackupContents, State, apply};
use crate::error::{Result, io};
use crate::manifest::Manifest;
use crate::pack::{PieceRef, pack_id, pack_name};
use crate::repo::Repo;

/// One backup's verdict.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackupCheck {
    /// The backup.
    pub id: u64,
    /// Its objects.
    pub objects: u64,
    /// Objects whose pieces are damaged or missing: table and key.
    pub damaged: Vec<(String, Vec<u8>)>,
    /// Why it cannot be restored at all (a manifest of its chain damaged or missing).
    pub unrestorable: Option<String>,
}

impl BackupCheck {
    /// It restores whole.
    pub fn is_whole(&self) -> bool {
        self.damaged.is_empty() && self.unrestorable.is_none()
    }
}

/// What [`Repo::verify`] found.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifyReport {
    /// Every backup, oldest first.
    pub backups: Vec<BackupCheck>,
    /// Damaged files and what is wrong with them (manifests, pieces of packs).
    pub damaged: Vec<(PathBuf, String)>,
    /// Distinct pieces read and checked.
    pub pieces: u64,
    /// Bytes of their values.
    pub bytes: u64,
    /// Pack files no backup needs (left by a backup that was cut off, or by a prune): space
    /// the next prune frees.
    pub unused_packs: Vec<PathBuf>,
}

impl VerifyReport {
    /// Every backup restores whole and no file is damaged.
    pub fn is_clean(&self) -> bool {
        self.damaged.is_empty() && self.backups.iter().all(BackupCheck::is_whole)
    }
}

impl Repo {
    /// Reads every manifest and every piece the backups need, once each, and says which
    /// backups restore whole. Damage is reported, never repaired.
    pub fn verify(&self) -> Result<VerifyReport> {
        let mut report = VerifyReport::default();
        let (manifests, bad) = self.manifests()?;
        for (_, e) in &bad {
            if let crate::Error::Damaged { path, detail } = e {
                report.damaged.push((path.clone(), detail.clone()));
            }
        }
        let reader = BackupContents::empty(self);
        let mut checked: HashMap<PieceRef, bool> = HashMap::new();
        let mut states: BTreeMap<u64, State> = BTreeMap::new();
        // How many backups build on each: a state is dropped once its last child is folded.
        let mut children: HashMap<u64, usize> = HashMap::new();
        for m in manifests.values() {
            *children.entry(m.parent).or_default() += 1;
        }
        for (&id, m) in &manifests {
            let mut check = BackupCheck { id, objects: 0, damaged: Vec::new(), unrestorable: None };
            let state = match self.state_of(m, &manifests, &mut states, &mut children) {
                Ok(s) => s,
                Err(why) => {
                    check.unrestorable = Some(why);
                    report.backups.push(check);
                    continue;
                }
            };
            check.objects = state.len() as u64;
            for ((t, k), p) in &state {
                let ok = *checked.entry(p.piece).or_insert_with(|| {
                    report.pieces += 1;
                    report.bytes += u64::from(p.piece.raw_len);
                    match reader.read(&p.piece) {
                        Ok(_) => true,
                        Err(crate::Error::Damaged { path, detail }) => {
                            report.damaged.push((path, detail));
                            false
                        }
                        Err(e) => {
                            report
                                .damaged
                                .push((PathBuf::from(pack_name(p.piece.pack)), e.to_string()));
                            false
                        }
                    }
                });
                if !ok {
                    check.damaged.push((t.clone(), k.clone()));
                }
            }
            states.insert(id, state);
            report.backups.push(check);
        }
        report.damaged.sort();
        report.damaged.dedup();
        let used: HashSet<u64> = checked.keys().map(|p| p.pack).collect();
        let dir = self.packs_dir();
        for e in fs::read_dir(&dir).map_err(io(&dir))? {
            let path = e.map_err(io(&dir))?.path();
            if pack_id(&path).is_some_and(|id| !used.contains(&id)) && bad.is_empty() {
                report.unused_packs.push(path);
            }
        }
        report.unused_packs.sort();
        Ok(report)
    }

    /// The state of backup `m`, from its parent's state when that one was folded already
    /// (dropped once every backup building on it is folded).
    fn state_of(
        &self,
        m: &Manifest,
        manifests: &BTreeMap<u64, Manifest>,
        states: &mut BTreeMap<u64, State>,
        children: &mut HashMap<u64, usize>,
    ) -> std::result::Result<State, String> {
        if m.parent == 0 {
            let mut s = State::new();
            apply(&mut s, m);
            return Ok(s);
        }
        let left = children.get_mut(&m.parent).map(|n| {
            *n -= 1;
            *n
        });
        let parent =
            if left == Some(0) { states.remove(&m.parent) } else { states.get(&m.parent).cloned() };
        let Some(mut s) = parent else {
            return Err(match manifests.get(&m.parent) {
                Some(_) => format!("backup {} it builds on cannot be restored", m.parent),
                None => format!("backup {} it builds on is damaged or missing", m.parent),
            });
        };
        apply(&mut s, m);
        Ok(s)
    }
}
