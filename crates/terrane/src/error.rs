//! The facade's error type.

use std::path::PathBuf;

/// Everything that can go wrong in a [`World`](crate::World): the member crates' errors,
/// wrapped, and the world directory's own.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The object store failed (I/O, corruption, signature mismatch, ...).
    #[error("store: {0}")]
    Store(#[from] terrane_store::Error),
    /// The tiered chunk store failed (schema mismatch, bad cluster, ...).
    #[error("chunk store: {0}")]
    Cluster(#[from] terrane_cluster::Error),
    /// A chunk or the schema did not decode.
    #[error("chunk: {0}")]
    Chunk(#[from] terrane_chunk::Error),
    /// The regionizer refused an operation (duplicate load, unload of an unloaded chunk, ...).
    #[error("regionizer: {0}")]
    Regionizer(#[from] terrane_regionizer::Error),
    /// The distance graph failed (coordinate out of range, corrupt encoding).
    #[error("distance graph: {0}")]
    Distance(#[from] terrane_distance::Error),
    /// A snapshot could not be captured or restored.
    #[error("snapshot: {0}")]
    Snapshot(#[from] terrane_snapshot::Error),
    /// A stored NBT value is damaged, or a value cannot be written as NBT.
    #[error("NBT: {0}")]
    Nbt(#[from] terrane_nbt::Error),
    /// A Minecraft conversion failed (registering block states, block entity values).
    #[error("anvil: {0}")]
    Anvil(#[from] terrane_anvil::Error),
    /// A Bedrock world could not be read or written.
    #[error(transparent)]
    Bedrock(#[from] terrane_bedrock::Error),
    /// File system access to the world directory failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The directory holds no terrane world (no `terrane-world` marker file).
    #[error(
        "{0} is not a terrane world (no terrane-world file): check the path, or create the world \
         first"
    )]
    NotAWorld(PathBuf),
    /// `create` was asked for a directory that already holds a world or other files.
    #[error("{0} already exists and is not empty; pick a new directory")]
    AlreadyExists(PathBuf),
    /// A [`SharedWorld`](crate::shared::SharedWorld)'s leases failed (an invalid owner id,
    /// a damaged lease record, an area held by another server). The leases' store failures
    /// are [`Error::Store`].
    #[error("lease: {0}")]
    Lease(#[source] terrane_lease::LeaseError),
    /// The world's marker file names a backend that this terrane does not know.
    #[error(
        "{}: unknown backend {name:?} (known: rocksdb, blockfile, memory, postgres): the world \
         was written by a newer terrane, or the marker file is damaged",
        path.display()
    )]
    UnknownBackend {
        /// The marker file.
        path: PathBuf,
        /// The backend name it holds.
        name: String,
    },
    /// The world uses a backend that this build of terrane does not include.
    #[error(
        "{}this build of terrane has no {backend} backend: use a build with the `{}` feature",
        world.as_ref().map(|w| format!("{} is a {backend} world, and ", w.display())).unwrap_or_default(),
        backend.name()
    )]
    BackendNotBuilt {
        /// The backend.
        backend: crate::Backend,
        /// The world that uses it, when one was being opened.
        world: Option<PathBuf>,
    },
    /// The builder asked for another backend ([`WorldBuilder::backend`](crate::WorldBuilder::backend))
    /// than the world's.
    #[error(
        "{} holds a {found} world, not {requested}: open it without choosing a backend, or \
         choose {found}",
        dir.as_ref().map_or_else(|| "the connection string".into(), |d| d.display().to_string())
    )]
    BackendMismatch {
        /// The world's directory (`None`: a PostgreSQL connection string).
        dir: Option<PathBuf>,
        /// The world's backend.
        found: crate::Backend,
        /// The backend asked for.
        requested: crate::Backend,
    },
    /// A marker file (`terrane-world`, or the creation intent) that is not terrane's: too
    /// large, another format, or no backend line.
    #[error(
        "{}: {detail}; not a terrane world marker: check the path, or restore the file from a \
         backup",
        path.display()
    )]
    InvalidMarker {
        /// The marker file.
        path: PathBuf,
        /// What is wrong with it.
        detail: String,
    },
    /// [`WorldBuilder::create`](crate::WorldBuilder::create) with
    /// [`read_only`](crate::WorldBuilder::read_only).
    #[error("a world cannot be created read-only: create it for writing, then open it read-only")]
    CreateReadOnly,
    /// [`WorldBuilder::open`](crate::WorldBuilder::open) with [`Backend::Memory`](crate::Backend::Memory).
    #[error(
        "an in-memory world cannot be opened from a directory ({}): open it without choosing \
         the memory backend",
        .0.display()
    )]
    OpenInMemory(PathBuf),
    /// [`World::checkpoint`](crate::World::checkpoint) of an in-memory world.
    #[error(
        "an in-memory world has nothing on disk to back up: copy it into a world on disk \
         instead (terrane::copy::copy_world)"
    )]
    BackupInMemory,
    /// The directory holds a creation intent that was itself cut off: the creation never
    /// started.
    #[error(
        "{}: a terrane world creation was cut off before it started; create the world again \
         (`World::builder().create`)",
        .0.display()
    )]
    CreationNotStarted(PathBuf),
    /// The world's creation was cut off before it finished, and the world was opened
    /// read-only, which cannot finish it.
    #[error(
        "{}: the world's creation was cut off before it finished; open it for writing to \
         finish it, or create it again",
        .0.display()
    )]
    CreationUnfinished(PathBuf),
    /// A [`SharedWorld`](crate::shared::SharedWorld) of a world opened without a server id.
    #[error("a shared world needs a server id: WorldBuilder::server")]
    NoServerId,
    /// A server id that is empty, longer than 32 bytes or not printable ASCII.
    #[error("invalid server id {0:?}: use 1 to 32 printable ASCII characters")]
    InvalidServerId(String),
    /// A [copy](crate::copy::copy_world) met a table of the source that the new world does
    /// not have; the new world was removed.
    #[error(
        "the source world has a table `{0}` that the copy does not: copy with the terrane \
         version that wrote the source world"
    )]
    CopyTableMissing(String),
    /// A backup repository refused an operation (see [`terrane_backup::Error`]).
    #[error(transparent)]
    Backup(#[from] terrane_backup::Error),
    /// The world's restore from a backup was cut off: it holds part of the backup. Restore
    /// it again into a new folder (`terrane restore REPO NEW-FOLDER`), then remove this one.
    #[error("{}: this world's restore from a backup was cut off; restore again into a new folder, then remove this one", .0.display())]
    RestoreUnfinished(PathBuf),
    /// A copy into this world was cut off: it holds part of the source. Copy again (a folder
    /// is replaced; a PostgreSQL world must be removed first), then use that copy.
    #[error("{}: this world is a copy that was cut off before it finished; copy again (into this folder, which is replaced, or a new one)", .0.display())]
    CopyUnfinished(PathBuf),
    /// An import into this world was cut off (or failed): the world holds part of its
    /// source. Run the import again: it goes on where it stopped
    /// ([`WorldBuilder::for_import`](crate::WorldBuilder::for_import)).
    #[error("{}: an import into this world was cut off before it finished; run the import again (it goes on where it stopped)", .0.display())]
    ImportUnfinished(PathBuf),
    /// An area cannot be restored now: a server uses it (`why` says how). Unload it, or stop
    /// the server holding it, and try again.
    #[error("area ({}, {}) is in use: {why}", area.x, area.z)]
    AreaBusy {
        /// The area.
        area: terrane_section::AreaId,
        /// What holds it.
        why: String,
    },
    /// A trim was asked of a world opened as one server of several: the other servers'
    /// distance graphs would still list the trimmed columns. Trim it while no server runs.
    #[error(
        "a world shared by several servers is not trimmed (opened as server {0}): trim it while no server runs, opened without a server id"
    )]
    TrimShared(String),
    /// The world's registry lacks blocks the terrain generates: it was not generated with
    /// that terrain, and nothing of it would compare equal.
    #[error(
        "the world holds none of some blocks this terrain generates: it was not generated with it (check the terrain and its seed)"
    )]
    TerrainMismatch,
    /// The backup is not of a terrane world (its store signature says what it is).
    #[error("the backup is of a store signed {0:?}, not a terrane world")]
    NotAWorldBackup(String),
    /// A player or container record ([`game`](crate::game)) did not decode: the world's
    /// store holds damaged bytes under `key`.
    #[error(
        "game record {key}: {source}; the record is damaged: restore the world from a backup, \
         or delete the record to start that player or container empty"
    )]
    DamagedRecord {
        /// The record's key in `worldProperties`.
        key: String,
        /// What is wrong, where.
        source: crate::game::RecordError,
    },
    /// An import, export, conversion or change was refused before anything was written: a
    /// folder without region files, an import over chunks of the world's own, coordinates
    /// Minecraft cannot hold ([`Refusal`](crate::Refusal) says which). The message says what
    /// to do.
    #[error(transparent)]
    Refused(#[from] crate::Refusal),
    /// An export's destination already holds a world, region files or a file, and the export
    /// was told neither to replace nor to merge
    /// ([`Overwrite::Refuse`](crate::export::Overwrite::Refuse)): nothing was written.
    #[error(
        "{path} already holds {holds}; nothing was written: export to a new place, or {}",
        crate::refusal::choices(.merge)
    )]
    WouldOverwrite {
        /// The destination (or the part of it that holds something: an `entities` folder).
        path: PathBuf,
        /// What it holds ("region files", "a Bedrock world", ...).
        holds: String,
        /// Whether merging applies ([`Overwrite::Merge`](crate::export::Overwrite::Merge)):
        /// not to a schematic.
        merge: bool,
    },
    /// A conversion between the editions was refused or failed
    /// ([`convert`](crate::convert)).
    #[error(transparent)]
    Convert(#[from] terrane_convert::Error),
    /// The world's files contradict each other (found by [`World::verify`](crate::World::verify)).
    #[error("inconsistent world: {0}")]
    Inconsistent(String),
    /// Chunks store one block state under several registry ids: spellings registered before
    /// the importers canonicalised block-state strings (found by
    /// [`World::verify`](crate::World::verify); merged by
    /// [`World::merge_duplicate_states`](crate::World::merge_duplicate_states)).
    #[error(
        "{}; World::merge_duplicate_states merges them into one id each",
        crate::duplicate_state::describe(.0)
    )]
    DuplicateStates(Vec<crate::duplicate_state::DuplicateState>),
}

impl Error {
    /// Whether the failure is a full disk (of the world, or of its PostgreSQL server): a
    /// store error that [says so](terrane_store::Error::is_storage_full), or an I/O error of
    /// kind [`StorageFull`](std::io::ErrorKind::StorageFull), also when a member crate's error
    /// wraps it (an import's, a snapshot's). Everything saved before it is kept; freeing
    /// space and opening the world again resumes.
    pub fn is_storage_full(&self) -> bool {
        let mut next: Option<&(dyn std::error::Error + 'static)> = Some(self);
        while let Some(e) = next {
            let full = if let Some(e) = e.downcast_ref::<terrane_store::Error>() {
                e.is_storage_full()
            } else if let Some(e) = e.downcast_ref::<std::io::Error>() {
                e.kind() == std::io::ErrorKind::StorageFull
            } else {
                false
            };
            if full {
                return true;
            }
            next = e.source();
        }
        false
    }
}

impl From<terrane_lease::LeaseError> for Error {
    /// The leases' store failures become [`Error::Store`], the rest [`Error::Lease`].
    fn from(e: terrane_lease::LeaseError) -> Self {
        match e {
            terrane_lease::LeaseError::Store(s) => Error::Store(s),
            other => Error::Lease(other),
        }
    }
}

/// The facade's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.into();
    move |source| Error::Io { path, source }
}

#[cfg(test)]
mod tests {
    use super::Error;
    use std::io;

    fn full() -> io::Error {
        io::Error::new(io::ErrorKind::StorageFull, "No space left on device")
    }

    #[test]
    fn a_full_disk_is_storage_full_however_it_is_wrapped() {
        assert!(Error::Store(terrane_store::Error::Io(full())).is_storage_full());
        let cluster = terrane_cluster::Error::Store(terrane_store::Error::Io(full()));
        assert!(Error::Cluster(cluster).is_storage_full());
        assert!(Error::Io { path: "w".into(), source: full() }.is_storage_full());
        // An import's sink error: the world's own, boxed by the importer.
        let sink = Error::Store(terrane_store::Error::Io(full()));
        assert!(Error::Anvil(terrane_anvil::Error::Sink(Box::new(sink))).is_storage_full());
    }

    #[test]
    fn other_failures_are_not_storage_full() {
        let untyped = io::Error::other("No space left on device");
        assert!(!Error::Store(terrane_store::Error::Io(untyped)).is_storage_full());
        assert!(!Error::Store(terrane_store::Error::Corrupt("x".into())).is_storage_full());
        assert!(!Error::NotAWorld("w".into()).is_storage_full());
        assert!(!Error::CreateReadOnly.is_storage_full());
    }

    #[test]
    fn lease_errors_keep_store_failures_as_store_errors() {
        let e = Error::from(terrane_lease::LeaseError::Store(terrane_store::Error::Io(full())));
        assert!(matches!(e, Error::Store(_)) && e.is_storage_full(), "{e:?}");
        let e = Error::from(terrane_lease::LeaseError::InvalidServerId(String::new()));
        assert!(matches!(e, Error::Lease(terrane_lease::LeaseError::InvalidServerId(_))), "{e:?}");
        assert!(std::error::Error::source(&e).is_some());
    }

    #[test]
    fn configuration_errors_name_what_to_do() {
        use crate::Backend;
        let e = Error::BackendMismatch {
            dir: Some("w".into()),
            found: Backend::BlockFile,
            requested: Backend::RocksDb,
        };
        assert_eq!(
            e.to_string(),
            "w holds a blockfile world, not rocksdb: open it without choosing a backend, or \
             choose blockfile"
        );
        let e = Error::BackendNotBuilt { backend: Backend::Postgres, world: Some("w".into()) };
        assert_eq!(
            e.to_string(),
            "w is a postgres world, and this build of terrane has no postgres backend: use a \
             build with the `postgres` feature"
        );
        let e = Error::BackendNotBuilt { backend: Backend::Postgres, world: None };
        assert!(e.to_string().starts_with("this build of terrane has no postgres backend"), "{e}");
        let e = Error::BackendMismatch {
            dir: None,
            found: Backend::Postgres,
            requested: Backend::BlockFile,
        };
        assert!(e.to_string().starts_with("the connection string holds a postgres world"), "{e}");
    }
}
