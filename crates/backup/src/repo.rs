//! The repository folder: its marker, lock, manifests and packs, and publishing a file into
//! it crash-safely. Format: `docs/format/backup-repo.md`.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

use terrane_store::lock::{LockMode, lock_path};

use crate::error::{Error, Result, io};
use crate::manifest::{Entry, Manifest, ManifestReader, ManifestWriter};

/// The marker file's name and its contents.
pub(crate) const MARKER: &str = "terrane-backup-repo";
const MARKER_TEXT: &str = "terrane backup repository\nformat = 2\n";
/// The repository format this build writes (its manifests are format 2); it reads format 1
/// too, and a writer opening a format-1 repository marks it format 2 before writing.
pub const FORMAT: u32 = 2;

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

/// Flushes `out` (the file being written at `tmp`), makes it durable and renames it to
/// `dest`: `dest` is the old file or the new one, whole. The caller makes the entries of
/// `dest`'s folder durable.
pub(crate) fn durable_rename(out: BufWriter<File>, tmp: &Path, dest: &Path) -> Result<()> {
    let file = out.into_inner().map_err(|e| io(tmp)(e.into_error()))?;
    file.sync_all().map_err(io(tmp))?;
    drop(file);
    fs::rename(tmp, dest).map_err(io(dest))
}

/// A manifest being written in `tmp/`, entry by entry.
pub(crate) struct ManifestFile {
    writer: ManifestWriter<BufWriter<File>>,
    tmp: PathBuf,
    dest: PathBuf,
}

impl ManifestFile {
    /// Appends `e` (sorting after every entry before it).
    pub(crate) fn entry(&mut self, e: &Entry) -> Result<()> {
        self.writer.entry(e).map_err(io(&self.tmp))
    }

    /// Ends the manifest with its totals, makes it durable and renames it into `backups/`
    /// (whose entries are then made durable): listed from here on. Returns its bytes.
    pub(crate) fn publish(self, objects: u64, bytes: u64, new_bytes: u64) -> Result<u64> {
        let ManifestFile { writer, tmp, dest } = self;
        let (out, len) = writer.finish(objects, bytes, new_bytes).map_err(io(&tmp))?;
        durable_rename(out, &tmp, &dest)?;
        sync_dir(dest.parent().expect("a file in a folder"))?;
        Ok(len)
    }
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
        if found != "1" && found != FORMAT.to_string() {
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
            // A writer writes format-2 manifests: builds that read only format 1 are told
            // the repository's format rather than finding its new manifests "damaged".
            if found != FORMAT.to_string() {
                publish(&tmp.join("marker"), &marker, MARKER_TEXT.as_bytes())?;
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

    /// Reads and checks manifest `id`, whole.
    pub(crate) fn manifest(&self, id: u64) -> Result<Manifest> {
        let mut r = self.manifest_reader(id)?;
        let mut entries = Vec::new();
        while let Some(e) = r.next_entry()? {
            entries.push(e);
        }
        Ok(Manifest { entries, ..r.into_head() })
    }

    /// Opens manifest `id` to read its entries one at a time (its head read and checked).
    pub(crate) fn manifest_reader(&self, id: u64) -> Result<ManifestReader<BufReader<File>>> {
        let path = self.manifest_path(id);
        let file = match File::open(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::NoSuchBackup(id));
            }
            Err(e) => return Err(io(&path)(e)),
        };
        let r = ManifestReader::new(BufReader::with_capacity(64 << 10, file), &path)?;
        if r.head().id != id {
            return Err(crate::error::damaged(&path, format!("holds backup {}", r.head().id)));
        }
        Ok(r)
    }

    /// Reads manifest `id` through and checks it; returns its head with its totals (no
    /// entries held).
    pub(crate) fn manifest_head(&self, id: u64) -> Result<Manifest> {
        let mut r = self.manifest_reader(id)?;
        while r.next_entry()?.is_some() {}
        Ok(r.into_head())
    }

    /// Publishes manifest `m` (replacing one of the same id).
    pub(crate) fn write_manifest(&self, m: &Manifest) -> Result<u64> {
        let bytes = m.encode();
        let tmp = self.tmp_dir().join(format!("{:020}.tbm", m.id));
        publish(&tmp, &self.manifest_path(m.id), &bytes)?;
        Ok(bytes.len() as u64)
    }

    /// Starts manifest `head.id` in `tmp/`, to be written an entry at a time and published
    /// by [`ManifestFile::publish`].
    pub(crate) fn manifest_file(&self, head: &Manifest) -> Result<ManifestFile> {
        let tmp = self.tmp_dir().join(format!("{:020}.tbm", head.id));
        let file = File::create(&tmp).map_err(io(&tmp))?;
        let writer =
            ManifestWriter::new(BufWriter::with_capacity(1 << 20, file), head).map_err(io(&tmp))?;
        Ok(ManifestFile { writer, tmp, dest: self.manifest_path(head.id) })
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
    /// them). Each manifest is read through and checked, one at a time.
    pub fn list(&self) -> Result<Vec<BackupInfo>> {
        let mut out = Vec::new();
        for id in self.ids()? {
            match self.info(id) {
                Ok(info) => out.push(info),
                Err(Error::Damaged { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }

    /// Backup `id` as [`Repo::list`] shows it (its manifest read through and checked).
    pub fn info(&self, id: u64) -> Result<BackupInfo> {
        let m = self.manifest_head(id)?;
        Ok(BackupInfo {
            id: m.id,
            created_ms: m.created_ms,
            tick: m.tick,
            source: m.source,
            objects: m.objects,
            bytes: m.bytes,
            changes: m.changes,
            new_bytes: m.new_bytes,
            manifest_bytes: fs::metadata(self.manifest_path(id)).map_or(0, |md| md.len()),
        })
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

#[cfg(test)]
mod tests {
    use terrane_store::{KeyRange, MemStore, ReadView as _, Store as _, StoreConfig};

    use super::*;
    use crate::{BackupOptions, Keep};

    fn dump(s: &MemStore) -> Vec<(Vec<u8>, i64, Vec<u8>)> {
        s.scan("t", KeyRange::all())
            .unwrap()
            .map(|r| r.unwrap())
            .map(|(k, o)| (k, o.version, o.data))
            .collect()
    }

    /// A repository written before manifests of format 2 (marker and manifests of format 1)
    /// restores as it did; its first writer marks it format 2, backs up on top of it and
    /// prunes it, reading the pieces' lengths from the packs where format 1 did not record
    /// them.
    #[test]
    fn a_format_one_repository_reads_and_takes_new_backups() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("repo");
        let config = StoreConfig::new("s").table("t");
        let store = MemStore::open(&config).unwrap();
        let mut states = Vec::new();
        {
            let repo = Repo::open_or_create(&path).unwrap();
            for round in 0..2u8 {
                for i in 0..200u32 {
                    if i % 3 == u32::from(round) {
                        let v: Vec<u8> =
                            (0..500).map(|j| (i + j + u32::from(round)) as u8).collect();
                        store.put("t", &i.to_be_bytes(), i64::from(round), &v).unwrap();
                    }
                }
                store.delete("t", &u32::from(round).to_be_bytes()).unwrap();
                repo.backup(&store, &BackupOptions::default()).unwrap();
                states.push(dump(&store));
            }
        }
        // Rewrite it as a format-1 build left it.
        for id in [1, 2] {
            let p = path.join("backups").join(format!("{id:020}.tbm"));
            let m = Manifest::decode(&fs::read(&p).unwrap(), &p).unwrap();
            fs::write(&p, crate::manifest::tests::encode_v1(&m)).unwrap();
        }
        fs::write(path.join(MARKER), "terrane backup repository\nformat = 1\n").unwrap();
        {
            let repo = Repo::open(&path).unwrap();
            for (id, want) in [(1, &states[0]), (2, &states[1])] {
                let to = MemStore::open(&config).unwrap();
                repo.contents(id).unwrap().restore_into(&to, false).unwrap();
                assert_eq!(&dump(&to), want, "backup {id}");
            }
            assert!(fs::read_to_string(path.join(MARKER)).unwrap().contains("format = 1"));
        }
        let repo = Repo::open_to_write(&path).unwrap();
        assert!(fs::read_to_string(path.join(MARKER)).unwrap().contains("format = 2"));
        for i in 0..200u32 {
            store.put("t", &i.to_be_bytes(), 9, &[i as u8; 300]).unwrap();
        }
        let third = repo.backup(&store, &BackupOptions::default()).unwrap();
        assert_eq!((third.parent, third.changed), (2, 200));
        states.push(dump(&store));
        repo.prune(&Keep { last: 2, ..Keep::default() }, false).unwrap();
        assert_eq!(repo.list().unwrap().iter().map(|b| b.id).collect::<Vec<_>>(), [2, 3]);
        for (id, want) in [(2, &states[1]), (3, &states[2])] {
            let to = MemStore::open(&config).unwrap();
            repo.contents(id).unwrap().restore_into(&to, false).unwrap();
            assert_eq!(&dump(&to), want, "backup {id} after the prune");
        }
        assert!(repo.verify().unwrap().is_clean());
    }
}
