//! A world's incremental backups into a repository of terrane-backup, taken while the world
//! goes on saving, and a whole world restored from one into a new world.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use terrane_backup::{BackupContents, BackupReport, Keep, PruneReport, Repo, RestoreReport};
use terrane_store::Store;

use crate::backend::{
    Backend, Mode, SIGNATURE, connection_string, open_backend_with, open_postgres,
};
use crate::backup_changes::ChangeRecorder;
use crate::error::{Error, Result, io};
use crate::world::World;
use crate::world_dir;

pub use crate::world_dir::RESTORING_KEY;

/// What a backup needs of a world, apart from the `World`: its store, shared. Move it to a
/// thread and back the world up there while the world goes on saving ticks.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use terrane::{Backend, TickSave, World, backup::Repo};
/// let dir = tempfile::tempdir()?;
/// let mut world = World::builder().backend(Backend::BlockFile).create(dir.path().join("w"))?;
/// let source = world.backup_source();
/// let repo_path = dir.path().join("backups");
/// let backup = std::thread::spawn(move || -> terrane::Result<u64> {
///     let repo = Repo::open_or_create(repo_path)?;
///     Ok(source.backup(&repo)?.id)
/// });
/// world.save_tick(1, TickSave::new())?; // saves go on meanwhile
/// assert_eq!(backup.join().unwrap()?, 1);
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct BackupSource {
    store: Arc<dyn Store>,
    source: String,
    /// The world's record of its changes (a writable directory world).
    changes: Option<Arc<ChangeRecorder>>,
}

/// The *since* mark of backup `id` of `repo` ([`crate::backup_changes`]).
fn since_mark(repo: &Repo, id: u64) -> Result<String> {
    let created = repo.info(id)?.created_ms;
    let path = fs::canonicalize(repo.path()).unwrap_or_else(|_| repo.path().to_path_buf());
    Ok(format!("{created} {id} {}", path.display()))
}

impl BackupSource {
    /// Backs the world up into `repo` ([`Repo::backup`]): one snapshot, only what changed
    /// since the repository's newest backup written. The backup's tick is the world's game
    /// tick in that snapshot.
    ///
    /// A writable directory world records which objects it writes
    /// ([`backup_changes`](crate::backup_changes)): when the repository's newest backup is
    /// the world's last one, only those objects are read ([`Repo::backup_changes`]); else
    /// (the first backup, another repository, a world opened read-only, a PostgreSQL world)
    /// the whole world is read. Either way the backup holds the world as it is.
    ///
    /// # Errors
    /// Also when the backup was published but the world could not record it (the next
    /// backup then reads the whole world).
    pub fn backup(&self, repo: &Repo) -> Result<BackupReport> {
        self.backup_with(repo, &mut |_, _| {})
    }

    /// [`backup`](Self::backup), calling `progress(objects, bytes)` with what it has read
    /// of the world so far.
    pub fn backup_with(
        &self,
        repo: &Repo,
        progress: &mut dyn FnMut(u64, u64),
    ) -> Result<BackupReport> {
        let tick_of = |view: &dyn terrane_store::ReadView| {
            terrane_cluster::world_tick(view).map_err(|e| match e {
                terrane_cluster::Error::Store(e) => e,
                e => terrane_store::Error::Corrupt(e.to_string()),
            })
        };
        let Some(changes) = &self.changes else {
            return Ok(repo.backup_with(&*self.store, &self.source, tick_of, progress)?);
        };
        // One backup of the world at a time, from its step 1 to its mark.
        let _alone = changes.lock_backup();
        // 1. Close a generation: every write from here on is recorded in a new one.
        let open = changes.close_generation();
        // 2. Back up: from the records in the backup's own snapshot when the world's mark
        //    names the repository's newest backup (they then hold every change since it),
        //    else the whole world.
        let newest = repo.latest()?;
        let since = match (newest, changes.since()?) {
            (Some(id), Some(mark)) if mark == since_mark(repo, id)? => Some(id),
            _ => None,
        };
        let mut closed = Vec::new();
        let report = match since {
            Some(id) => repo.backup_changes(
                &*self.store,
                id,
                |view| {
                    let recorded = changes.recorded(view, open)?;
                    closed = recorded.closed;
                    Ok(recorded.keys)
                },
                &self.source,
                tick_of,
                progress,
            )?,
            // The closed records, from the snapshot the whole world is read from.
            None => repo.backup_with(
                &*self.store,
                &self.source,
                |view| {
                    closed = changes.recorded(view, open)?.closed;
                    tick_of(view)
                },
                progress,
            )?,
        };
        // 3. Mark: the closed records go, the mark names the new backup.
        changes.mark(&closed, &since_mark(repo, report.id)?)?;
        Ok(report)
    }
}

/// One backup of a schedule ([`BackupSource::spawn_every`]) and the prune after it.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ScheduledBackup {
    /// The backup.
    pub backup: BackupReport,
    /// The prune that followed it, when the schedule keeps only some backups.
    pub pruned: Option<PruneReport>,
}

impl BackupSource {
    /// Backs the world up into the repository at `repo` (created when missing) at once and
    /// then every `every`, on a thread of its own, until `stop` is set; after each backup,
    /// with `keep`, prunes the repository to the backups it keeps ([`Repo::prune`]). Each
    /// result goes to `on_backup`. The repository is locked only while a backup or prune
    /// runs, so `terrane backup list` and `verify` read it in between. This is how a running
    /// server backs its world up: `terrane serve --backup-repo REPO --backup-every MINUTES
    /// --backup-keep N`.
    ///
    /// # Errors
    /// When the operating system cannot start the thread.
    pub fn spawn_every(
        self,
        repo: PathBuf,
        every: Duration,
        keep: Option<Keep>,
        stop: Arc<AtomicBool>,
        mut on_backup: impl FnMut(Result<ScheduledBackup>) + Send + 'static,
    ) -> Result<std::thread::JoinHandle<()>> {
        let once = move |source: &BackupSource| -> Result<ScheduledBackup> {
            let repo = Repo::open_or_create(&repo)?;
            let backup = source.backup(&repo)?;
            let pruned = match &keep {
                Some(keep) => Some(repo.prune(keep, false)?),
                None => None,
            };
            Ok(ScheduledBackup { backup, pruned })
        };
        std::thread::Builder::new()
            .name("terrane-backup".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let started = Instant::now();
                    on_backup(once(&self));
                    while started.elapsed() < every && !stop.load(Ordering::Relaxed) {
                        std::thread::sleep(Duration::from_millis(20).min(every));
                    }
                }
            })
            .map_err(io("the backup thread"))
    }
}

impl World {
    /// A handle a backup thread can own ([`BackupSource`]).
    pub fn backup_source(&self) -> BackupSource {
        let source = match self.dir() {
            Some(d) => d.display().to_string(),
            None => format!("a {} world", self.backend.name()),
        };
        BackupSource {
            store: Arc::clone(self.tiered().store()),
            source,
            changes: self.changes.clone(),
        }
    }

    /// Backs the world up into `repo`: only the objects changed since the repository's
    /// newest backup are written (see [`BackupSource::backup`]).
    pub fn backup_incremental(&self, repo: &Repo) -> Result<BackupReport> {
        self.backup_source().backup(repo)
    }
}

/// Restores a whole world from `backup` into a new world at `dest` (a folder that does not
/// exist or is empty, or a PostgreSQL connection string whose database holds no world), of
/// `backend` (default: PostgreSQL for a connection string, else [`Backend::default`]).
///
/// Every piece is checked before anything is written; a damaged backup is refused (see
/// [`Repo::verify`]). The new world holds [`RESTORING_KEY`] until its last batch: a restore
/// cut off leaves a world that refuses to open, never a partial one that opens.
pub fn restore_world(
    backup: &BackupContents<'_>,
    dest: impl AsRef<Path>,
    backend: Option<Backend>,
) -> Result<RestoreReport> {
    restore_world_with(backup, dest, backend, &mut |_, _| {})
}

/// [`restore_world`], calling `progress(done, total)` as it goes (bytes of values checked,
/// then written: [`BackupContents::restore_into_with`]).
pub fn restore_world_with(
    backup: &BackupContents<'_>,
    dest: impl AsRef<Path>,
    backend: Option<Backend>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<RestoreReport> {
    let dest = dest.as_ref();
    if backup.signature() != SIGNATURE {
        return Err(Error::NotAWorldBackup(backup.signature().to_string()));
    }
    let mut restore = |store: &dyn Store| -> Result<RestoreReport> {
        world_dir::Fill::Restore.mark(store, backup.id().to_le_bytes().to_vec())?;
        Ok(backup.restore_into_with(store, false, progress)?)
    };
    if let Some(conninfo) = connection_string(dest) {
        if backend.is_some_and(|b| b != Backend::Postgres) {
            return Err(Error::BackendMismatch {
                dir: None,
                found: Backend::Postgres,
                requested: backend.unwrap_or_default(),
            });
        }
        let handle = open_postgres(conninfo, Mode::Create, false, false, true)?;
        return restore(&*handle.store());
    }
    let backend = backend.unwrap_or_default();
    if backend == Backend::Memory {
        return Err(Error::OpenInMemory(dest.to_path_buf()));
    }
    let existed = dest.exists();
    if existed && fs::read_dir(dest).map_err(io(dest))?.next().is_some() {
        return Err(Error::AlreadyExists(dest.to_path_buf()));
    }
    fs::create_dir_all(dest).map_err(io(dest))?;
    let lock = world_dir::lock(dest, false)?;
    let result = (|| {
        world_dir::write_intent(dest, backend, Some(world_dir::Fill::Restore))?;
        let handle = open_backend_with(dest, backend, Mode::Create, false, false, true)?;
        let report = restore(&*handle.store())?;
        drop(handle);
        world_dir::commit_fill(dest, backend)?;
        Ok(report)
    })();
    drop(lock);
    if result.is_err() {
        world_dir::discard(dest, existed);
    }
    result
}
