//! The repository folder: its marker, lock, manifests and packs, and publishing a file into
//! it crash-safely. Format: `docs/format/backup-repo-v1.md`.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use terrane_store::lock::{LockMode, lock_path};

use crate::error::{Error, Result, io};
use crate::manifest::Manifest;

/// The marker file's name and its contents.
pub(crate) const MARKER: &str = "terrane-backup-repo";
const MARKER_TEXT: &str = "terrane backup repository\nformat = 1\n";
/// The format this build reads and writes.
pub const FORMAT: u32 = 1;

/// A backup repository: a folder of manifests and pack files, locked while open (shared to
/// read, exclusive to back up or prune; another process waits at most a quarter second, then
/// gets a `Locked` error naming the holder).
#[derive(Debug)]
pub struct Repo {
    path: PathBuf,
    _lock: File,
}

/// A backup as [`Repo::list`] shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct BackupInfo {
    /// Its id: backups are numbered from 1, in the order they were taken.
    pub id: u64,
    /// When it was taken, milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// The caller's label of the moment (a world's game tick).
    pub tick: u64,
    /// What was backed up (a world's path).
    pub source: String,
    /// Objects in the backup, and their bytes.
    pub objects: u64,
    /// Bytes of the objects' values.
    pub bytes: u64,
    /// Objects put or removed since the backup before it.
    pub changes: u64,
    /// Bytes the backup added to the repository's packs.
    pub new_bytes: u64,
    /// Bytes of its manifest.
    pub manifest_bytes: u64,
}

/// The readable manifests by id, and the ids of damaged ones with their errors.
pub(crate) type Manifests = (BTreeMap<u64, Manifest>, Vec<(u64, Error)>);

/// Makes the entries of `dir` durable (renames and removals in it).
pub(crate) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))
}

/// Writes `bytes` to `tmp`, makes them durable and renames the file to `dest` (in a folder
/// whose entries are then made durable): `dest` is the old file or the new one, whole.
pub(crate) fn publish(tmp: &Path, dest: &Path, bytes: &[u8]) -> Result<()> {
    let mut f = File::create(tmp).map_err(io(tmp))?;
    f.write_all(bytes).and_then(|()| f.sync_all()).map_err(io(tmp))?;
    drop(f);
    fs::rename(tmp, dest).map_err(io(dest))?;
    sync_dir(dest.parent().expect("a file in a folder"))
}

impl Repo {
    /// Opens the repository at `path` to read it (list, verify, restore).
    pub fn open(path: impl AsRef<Path>) -> Result<Repo> {
        Self::open_mode(path.as_ref(), LockMode::Shared)
    }

    /// Opens the existing repository at `path` to add or remove backups.
    pub fn open_to_write(path: impl AsRef<Path>) -> Result<Repo> {
        Self::open_mode(path.as_ref(), LockMode::Exclusive)
    }

    /// Opens the repository at `path` to add or remove backups, creating it when `path` does
    /// not exist or is an empty folder.
    pub fn open_or_create(path: impl AsRef<Path>) -> Result<Repo> {
        let path = path.as_ref();
        if !path.join(MARKER).exists() {
            let empty = !path.exists() || fs::read_dir(path).map_err(io(path))?.next().is_none();
            if !empty {
                return Err(Error::NotEmpty(path.to_path_buf()));
            }
            fs::create_dir_all(path).map_err(io(path))?;
            let lock = lock_path(path, LockMode::Exclusive)?;
            for sub in ["packs", "backups", "tmp"] {
                fs::create_dir_all(path.join(sub)).map_err(io(path))?;
            }
            sync_dir(path)?;
            // The marker last: a folder without it is an unfinished creation, taken over.
            publish(&path.join("tmp/marker"), &path.join(MARKER), MARKER_TEXT.as_bytes())?;
            drop(lock);
        }
        Self::open_mode(path, LockMode::Exclusive)
    }

    fn open_mode(path: &Path, mode: LockMode) -> Result<Repo> {
        let marker = path.join(MARKER);
        let text = match fs::read_to_string(&marker) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::NotARepository(path.to_path_buf()));
            }
            Err(e) => return Err(io(&marker)(e)),
        };
        let found = text
            .lines()
            .find_map(|l| l.strip_prefix("format = "))
            .unwrap_or("unknown")
            .trim()
            .to_string();
        if found != FORMAT.to_string() {
            return Err(Error::UnsupportedFormat {
                path: path.to_path_buf(),
                found,
                supported: FORMAT,
            });
        }
        let lock = lock_path(path, mode)?;
        let repo = Repo { path: path.to_path_buf(), _lock: lock };
        if mode == LockMode::Exclusive {
            // What a cut-off writer left in tmp/ was never published: remove it.
            let tmp = repo.path.join("tmp");
            fs::create_dir_all(&tmp).map_err(io(&tmp))?;
            for e in fs::read_dir(&tmp).map_err(io(&tmp))? {
                let p = e.map_err(io(&tmp))?.path();
                fs::remove_file(&p).map_err(io(&p))?;
            }
        }
        Ok(repo)
    }

    /// The repository's folder.
    pub fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn packs_dir(&self) -> PathBuf {
        self.path.join("packs")
    }

    pub(crate) fn tmp_dir(&self) -> PathBuf {
        self.path.join("tmp")
    }

    pub(crate) fn manifest_path(&self, id: u64) -> PathBuf {
        self.path.join("backups").join(format!("{id:020}.tbm"))
    }

    /// The ids of the published manifests, in order.
    pub(crate) fn ids(&self) -> Result<Vec<u64>> {
        let dir = self.path.join("backups");
        let mut ids = Vec::new();
        for e in fs::read_dir(&dir).map_err(io(&dir))? {
            let name = e.map_err(io(&dir))?.file_name();
            let name = name.to_string_lossy();
            if let Some(id) = name.strip_suffix(".tbm").and_then(|n| n.parse::<u64>().ok()) {
                ids.push(id);
            }
        }
        ids.sort_unstable();
        Ok(ids)
    }

    /// Reads and checks manifest `id`.
    pub(crate) fn manifest(&self, id: u64) -> Result<Manifest> {
        let path = self.manifest_path(id);
        let bytes = match fs::read(&path) {
            Ok(b) => b,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::NoSuchBackup(id));
            }
            Err(e) => return Err(io(&path)(e)),
        };
        let m = Manifest::decode(&bytes, &path)?;
        if m.id != id {
            return Err(crate::error::damaged(&path, format!("holds backup {}", m.id)));
        }
        Ok(m)
    }

    /// Publishes manifest `m` (replacing one of the same id).
    pub(crate) fn write_manifest(&self, m: &Manifest) -> Result<u64> {
        let bytes = m.encode();
        let tmp = self.tmp_dir().join(format!("{:020}.tbm", m.id));
        publish(&tmp, &self.manifest_path(m.id), &bytes)?;
        Ok(bytes.len() as u64)
    }

    /// Every readable manifest, by id, and the damaged ones with their errors.
    pub(crate) fn manifests(&self) -> Result<Manifests> {
        let (mut ok, mut bad) = (BTreeMap::new(), Vec::new());
        for id in self.ids()? {
            match self.manifest(id) {
                Ok(m) => {
                    ok.insert(id, m);
                }
                Err(e @ Error::Damaged { .. }) => bad.push((id, e)),
                Err(e) => return Err(e),
            }
        }
        Ok((ok, bad))
    }

    /// The backups, oldest first (damaged manifests are left out: [`Repo::verify`] names
    /// them).
    pub fn list(&self) -> Result<Vec<BackupInfo>> {
        let (manifests, _) = self.manifests()?;
        Ok(manifests
            .values()
            .map(|m| BackupInfo {
                id: m.id,
                created_ms: m.created_ms,
                tick: m.tick,
                source: m.source.clone(),
                objects: m.objects,
                bytes: m.bytes,
                changes: m.entries.len() as u64,
                new_bytes: m.new_bytes,
                manifest_bytes: fs::metadata(self.manifest_path(m.id)).map_or(0, |md| md.len()),
            })
            .collect())
    }

    /// The newest backup's id, if any.
    pub fn latest(&self) -> Result<Option<u64>> {
        Ok(self.ids()?.last().copied())
    }

    /// The newest backup taken at or before `ms` (milliseconds since the Unix epoch): what a
    /// restore "as of" that moment brings back. `None` when every backup is younger.
    pub fn taken_by(&self, ms: u64) -> Result<Option<u64>> {
        Ok(self.list()?.iter().filter(|b| b.created_ms <= ms).map(|b| b.id).max())
    }
}
