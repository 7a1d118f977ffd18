//! The world directory's own files: the marker that makes a directory a world, the creation
//! intent that makes an unfinished creation recognisable, and the directory's lock.
//!
//! Format and crash argument: `docs/format/world-dir.md`.

use std::fs;
use std::io::Write as _;
use std::path::Path;

use terrane_store::lock::{LockMode, lock_path};
use terrane_store::{Batch, Store, tables};

use crate::backend::{Backend, SIGNATURE};
use crate::error::{Error, Result, io};

/// The `worldMeta` key a world holds while it is being restored from a backup: a world
/// holding it does not open ([`Error::RestoreUnfinished`]). The restore's last batch removes
/// it (`docs/format/world-dir.md`).
pub const RESTORING_KEY: &[u8] = b"terrane:restoring";

/// The `worldMeta` key a world holds while [`copy_world`](crate::copy::copy_world) fills it:
/// a world holding it does not open ([`Error::CopyUnfinished`]). The copy's first batch
/// writes it and its last removes it (`docs/format/world-dir.md`).
pub const COPYING_KEY: &[u8] = b"terrane:copying";

/// The `worldMeta` key a world holds from an import's first write (or, made for an import,
/// from its creation: [`WorldBuilder::for_import`](crate::WorldBuilder::for_import)) to the
/// import's end: the import's source edition (`java` or `bedrock`; empty before it began). A
/// world holding it opens only for an import ([`Error::ImportUnfinished`]).
pub const IMPORTING_KEY: &[u8] = b"terrane:importing";

/// The marker file naming the backend: a directory holding it is a world.
pub(crate) const MARKER: &str = terrane_store::file::WORLD_MARKER;

/// The creation intent: the marker's text, written first at creation and renamed over
/// [`MARKER`] last. A directory holding it and no marker is terrane's own unfinished creation.
pub(crate) const CREATING: &str = terrane_store::file::WORLD_CREATING;

/// What a directory is, judged by its marker files.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum DirState {
    /// A world of this backend.
    World(Backend),
    /// A creation of a world of this backend that was cut off before it finished.
    Unfinished(Backend),
    /// A world of this backend that a copy, a restore or an import was filling when it was
    /// cut off: its intent names the fill, and it opens only to go on with an import.
    FillUnfinished(Fill, Backend),
}

/// What fills a new world before it may open: named on its creation intent's `fill` line, so
/// a fill cut off at any point (before its first object, too) never opens.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Fill {
    /// `terrane::copy::copy_world`.
    Copy,
    /// `terrane::restore_world`.
    Restore,
    /// An import into a world created for it (`WorldBuilder::for_import`).
    Import,
}

impl Fill {
    fn name(self) -> &'static str {
        match self {
            Fill::Copy => "copy",
            Fill::Restore => "restore",
            Fill::Import => "import",
        }
    }

    /// The `worldMeta` key a world holds while this fill runs.
    fn key(self) -> &'static [u8] {
        match self {
            Fill::Copy => COPYING_KEY,
            Fill::Restore => RESTORING_KEY,
            Fill::Import => IMPORTING_KEY,
        }
    }

    /// Writes this fill's key into `store` (synced): from here on the world does not open
    /// until [`unmark`](Self::unmark).
    pub(crate) fn mark(self, store: &dyn Store, value: Vec<u8>) -> Result<()> {
        let mut b = Batch::new();
        b.put(tables::WORLD_META, self.key().to_vec(), 0, value);
        Ok(store.write(&b.synced())?)
    }

    /// Removes this fill's key from `store` (synced), once all it wrote is durable.
    pub(crate) fn unmark(self, store: &dyn Store) -> Result<()> {
        let mut b = Batch::new();
        b.delete(tables::WORLD_META, self.key().to_vec());
        Ok(store.write(&b.synced())?)
    }

    /// The fill `store` holds the key of (one read for all), other than `except`.
    pub(crate) fn unfinished_in(store: &dyn Store, except: Option<Fill>) -> Result<Option<Fill>> {
        let fills = [Fill::Restore, Fill::Copy, Fill::Import];
        let keys = fills.map(Fill::key);
        let found = store.multi_get(tables::WORLD_META, &keys)?;
        Ok(fills
            .into_iter()
            .zip(found)
            .find_map(|(f, o)| (o.is_some() && Some(f) != except).then_some(f)))
    }

    /// The error that refuses to open the world at `dir` this fill left unfinished.
    pub(crate) fn unfinished(self, dir: &Path) -> Error {
        match self {
            Fill::Copy => Error::CopyUnfinished(dir.to_path_buf()),
            Fill::Restore => Error::RestoreUnfinished(dir.to_path_buf()),
            Fill::Import => Error::ImportUnfinished(dir.to_path_buf()),
        }
    }
}

/// Locks the world directory: exclusive for a writer, shared for a reader, for the life of the
/// returned handle (the backend then locks its own files the same way).
pub(crate) fn lock(dir: &Path, read_only: bool) -> Result<fs::File> {
    Ok(lock_path(dir, LockMode::for_read_only(read_only))?)
}

fn marker_text(backend: Backend) -> String {
    format!("{SIGNATURE}\nbackend = {}\n", backend.name())
}

/// Writes the creation intent (synced, with the directory): from here on a cut-off creation
/// is recognisable as terrane's own. With a `fill`, the intent names it (a third line,
/// `fill = copy|restore|import`), and [`commit_fill`] ends the creation.
pub(crate) fn write_intent(dir: &Path, backend: Backend, fill: Option<Fill>) -> Result<()> {
    let path = dir.join(CREATING);
    let mut text = marker_text(backend);
    if let Some(fill) = fill {
        text.push_str(&format!("fill = {}\n", fill.name()));
    }
    let mut f = fs::File::create(&path).map_err(io(&path))?;
    f.write_all(text.as_bytes()).map_err(io(&path))?;
    f.sync_all().map_err(io(&path))?;
    sync_dir(dir)
}

/// Ends a filled creation: the marker written (synced, renamed: [`write_marker`]), then the
/// intent removed and the directory synced. Cut off between the two, the marker wins.
pub(crate) fn commit_fill(dir: &Path, backend: Backend) -> Result<()> {
    write_marker(dir, backend)?;
    let path = dir.join(CREATING);
    fs::remove_file(&path).map_err(io(&path))?;
    sync_dir(dir)
}

/// The fill a creation intent names, if any.
fn intent_fill(dir: &Path) -> Option<Fill> {
    let text = fs::read_to_string(dir.join(CREATING)).ok()?;
    match text.lines().find_map(|l| l.strip_prefix("fill = "))?.trim() {
        "copy" => Some(Fill::Copy),
        "restore" => Some(Fill::Restore),
        "import" => Some(Fill::Import),
        _ => None,
    }
}

/// Turns the creation intent into the marker (an atomic rename, then a directory sync): the
/// world exists from here on.
pub(crate) fn commit_intent(dir: &Path) -> Result<()> {
    let path = dir.join(MARKER);
    fs::rename(dir.join(CREATING), &path).map_err(io(&path))?;
    sync_dir(dir)
}

/// Writes the marker directly (a backup's copy, whose objects are complete already): to a
/// temporary file, synced, renamed, then a directory sync.
pub(crate) fn write_marker(dir: &Path, backend: Backend) -> Result<()> {
    let tmp = dir.join(format!("{MARKER}.tmp"));
    let path = dir.join(MARKER);
    let mut f = fs::File::create(&tmp).map_err(io(&tmp))?;
    f.write_all(marker_text(backend).as_bytes()).map_err(io(&tmp))?;
    f.sync_all().map_err(io(&tmp))?;
    drop(f);
    fs::rename(&tmp, &path).map_err(io(&path))?;
    sync_dir(dir)
}

fn sync_dir(dir: &Path) -> Result<()> {
    fs::File::open(dir).and_then(|d| d.sync_all()).map_err(io(dir))
}

/// Reads the marker (or, without one, the creation intent) of `dir`.
pub(crate) fn read_state(dir: &Path) -> Result<DirState> {
    if let Some(b) = read_marker_file(dir, MARKER)? {
        return Ok(DirState::World(b));
    }
    if !dir.join(CREATING).exists() {
        return Err(Error::NotAWorld(dir.to_path_buf()));
    }
    match read_marker_file(dir, CREATING) {
        Ok(Some(b)) => Ok(match intent_fill(dir) {
            Some(fill) => DirState::FillUnfinished(fill, b),
            None => DirState::Unfinished(b),
        }),
        // An intent torn by the crash itself (it is written before anything else).
        _ => Err(Error::CreationNotStarted(dir.to_path_buf())),
    }
}

/// Whether `dir` is terrane's own creation that was cut off (an intent file, torn or not, and
/// no marker): [`crate::WorldBuilder::create`] replaces such a directory.
pub(crate) fn is_unfinished(dir: &Path) -> bool {
    dir.join(CREATING).exists() && !dir.join(MARKER).exists()
}

/// The most a marker file may hold: its text is two short lines, so anything longer is not
/// terrane's and is refused without being read whole.
const MARKER_MAX: u64 = 64 << 10;

fn read_marker_file(dir: &Path, name: &str) -> Result<Option<Backend>> {
    use std::io::Read as _;
    let path = dir.join(name);
    let mut text = String::new();
    let read = fs::File::open(&path)
        .and_then(|f| f.take(MARKER_MAX + 1).read_to_string(&mut text).map(|_| ()));
    match read {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::Io { path, source: e }),
    }
    if text.len() as u64 > MARKER_MAX {
        return Err(Error::InvalidMarker {
            path,
            detail: format!(
                "larger than {} KiB (expected `{SIGNATURE}` and a backend line)",
                MARKER_MAX >> 10
            ),
        });
    }
    let mut lines = text.lines();
    if lines.next() != Some(SIGNATURE) {
        return Err(Error::InvalidMarker {
            path,
            detail: format!("unknown world format (expected `{SIGNATURE}`)"),
        });
    }
    let Some(name) = lines.find_map(|l| l.strip_prefix("backend = ")) else {
        return Err(Error::InvalidMarker { path, detail: "no backend line".into() });
    };
    let Some(backend) = Backend::parse(name.trim()) else {
        return Err(Error::UnknownBackend { path, name: name.to_string() });
    };
    if !backend.is_available() {
        return Err(Error::BackendNotBuilt { backend, world: Some(dir.to_path_buf()) });
    }
    Ok(Some(backend))
}

/// Removes everything in `dir` (a world directory being replaced or cleaned up).
pub(crate) fn clear(dir: &Path) {
    if let Ok(rd) = fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            let _ = if p.is_dir() { fs::remove_dir_all(&p) } else { fs::remove_file(&p) };
        }
    }
}

/// Undoes a world written into `dir` that failed: empties the directory when it `existed`
/// before, else removes it.
pub(crate) fn discard(dir: &Path, existed: bool) {
    if existed {
        clear(dir);
    } else {
        let _ = fs::remove_dir_all(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A marker is two short lines: a file past 64 KiB is refused without being read whole,
    /// even when it starts and ends like a marker.
    #[test]
    fn an_oversized_marker_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = format!("{SIGNATURE}\n");
        text.push_str(&"# padding\n".repeat(7000));
        text.push_str("backend = memory\n");
        fs::write(dir.path().join(MARKER), &text).unwrap();
        let e = read_marker_file(dir.path(), MARKER).unwrap_err().to_string();
        assert!(e.contains("larger than 64 KiB"), "{e}");
        // The same marker within the bound is read.
        let text = format!("{SIGNATURE}\nbackend = memory\n");
        fs::write(dir.path().join(MARKER), text).unwrap();
        assert_eq!(read_marker_file(dir.path(), MARKER).unwrap(), Some(Backend::Memory));
    }

    /// A filled creation never opens until its fill commits, whatever the backend holds: the
    /// intent names the fill from before the backend exists.
    #[test]
    fn a_fill_is_named_from_its_intent_to_its_marker() {
        for fill in [Fill::Copy, Fill::Restore, Fill::Import] {
            let dir = tempfile::tempdir().unwrap();
            write_intent(dir.path(), Backend::Memory, Some(fill)).unwrap();
            let state = read_state(dir.path()).unwrap();
            assert_eq!(state, DirState::FillUnfinished(fill, Backend::Memory));
            assert!(is_unfinished(dir.path()), "the next creation replaces it");
            let e = fill.unfinished(dir.path()).to_string();
            assert!(e.contains(fill.name()) && e.contains("cut off"), "{e}");
            commit_fill(dir.path(), Backend::Memory).unwrap();
            assert_eq!(read_state(dir.path()).unwrap(), DirState::World(Backend::Memory));
            assert!(!dir.path().join(CREATING).exists());
            let marker = fs::read_to_string(dir.path().join(MARKER)).unwrap();
            assert_eq!(marker, marker_text(Backend::Memory), "the marker names no fill");
        }
        // A plain creation's intent finishes when opened.
        let dir = tempfile::tempdir().unwrap();
        write_intent(dir.path(), Backend::Memory, None).unwrap();
        assert_eq!(read_state(dir.path()).unwrap(), DirState::Unfinished(Backend::Memory));
    }
}
