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
    /// The world was written with a backend this build does not include, or the builder
    /// asked for a different backend than the world's.
    #[error("backend: {0}")]
    Backend(String),
    /// An import or export was refused before anything was written: a folder without
    /// region files, an import over chunks of the world's own, coordinates Minecraft cannot
    /// hold. The message says what to do.
    #[error("{0}")]
    Refused(String),
    /// An export's destination already holds a world, region files or a file, and the export
    /// was told neither to replace nor to merge
    /// ([`Overwrite::Refuse`](crate::export::Overwrite::Refuse)): nothing was written.
    #[error(
        "{path} already holds {holds}; nothing was written: export to a new place, or {}",
        crate::export::choices(.merge)
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
    /// The world's files contradict each other (found by [`World::verify`](crate::World::verify)).
    #[error("inconsistent world: {0}")]
    Inconsistent(String),
    /// Chunks store one block state under several registry ids: spellings registered before
    /// the importers canonicalised block-state strings (found by
    /// [`World::verify`](crate::World::verify); merged by
    /// [`World::merge_duplicate_states`](crate::World::merge_duplicate_states)).
    #[error(
        "{}; World::merge_duplicate_states merges them into one id each",
        crate::block_states::describe(.0)
    )]
    DuplicateStates(Vec<crate::block_states::DuplicateState>),
}

/// The facade's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

pub(crate) fn io(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> Error {
    let path = path.into();
    move |source| Error::Io { path, source }
}
