//! [`World`]: one world directory composed of the member crates.

use std::collections::VecDeque;
use std::fmt;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use terrane_chunk::{BlockId, Chunk, Schema};
use terrane_cluster::{
    LevelStats, MaintenanceReport, PlayerPos, TickSave, TieredStore, TieredStoreBuilder,
};
use terrane_distance::{DistanceGraph, SharedDistanceGraph};
use terrane_regionizer::{
    NoCallbacks, Regionizer, RegionizerConfig, Scheduler, SchedulerConfig, TickContext,
};
use terrane_section::{AreaId, ChunkPos, ColumnPos, keys};
use terrane_snapshot::{BlockBox, ChunkWorld, Snapshot};
use terrane_store::{DEFAULT_CACHE_BYTES, MemStore, ReadAhead, Store, WritePipeline, tables};

use crate::backend::{
    Backend, Handle, Mode, connection_string, open_backend_with, open_postgres, store_config,
};
use crate::backup_changes::ChangeRecorder;
use crate::dimensions::OtherDimensions;
use crate::error::{Error, Result, io};
use crate::world_dir::{self, DirState};

/// The dimension every chunk of a [`World`] is stored under.
const DIM: u64 = 0;

type TickFn = Box<dyn Fn(&TickContext<'_, ChunkPos, ()>) + Send + Sync + 'static>;
type TiersFn = Box<dyn FnOnce(TieredStoreBuilder) -> TieredStoreBuilder>;

/// Refuses a builder's backend other than PostgreSQL for a PostgreSQL world.
fn postgres_requested(requested: Option<Backend>) -> Result<()> {
    match requested.filter(|b| *b != Backend::Postgres) {
        Some(b) => {
            Err(Error::BackendMismatch { dir: None, found: Backend::Postgres, requested: b })
        }
        None => Ok(()),
    }
}

/// Builds or opens a [`World`]. Defaults:
///
/// - backend: [`Backend::default`] (RocksDB) for new worlds; an existing world's own backend
///   (from its marker file) on open;
/// - schema: the stored one on open; for a new world, a schema with only `minecraft:air`;
/// - regionizer: [`RegionizerConfig::folia_shift4`] over cubic [`ChunkPos`], no scheduler
///   (see [`tick_regions`](Self::tick_regions));
/// - tiered store: [`TieredStoreBuilder`]'s defaults (5 / 30 game minutes, 1024 blocks),
///   saves synced ([`sync_saves`](Self::sync_saves)).
pub struct WorldBuilder {
    backend: Option<Backend>,
    schema: Option<Schema>,
    regionizer: RegionizerConfig,
    scheduler: Option<(SchedulerConfig, TickFn)>,
    tiers: Option<TiersFn>,
    sync_saves: bool,
    read_only: bool,
    repair: bool,
    one_pass: bool,
    /// What fills a new directory world before it may open ([`WorldBuilder::fill`]).
    fill: Option<world_dir::Fill>,
    for_import: bool,
    server: Option<String>,
    saves_in_flight: usize,
}

impl fmt::Debug for WorldBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WorldBuilder")
            .field("backend", &self.backend)
            .field("regionizer", &self.regionizer)
            .field("scheduler", &self.scheduler.as_ref().map(|s| s.0))
            .field("sync_saves", &self.sync_saves)
            .field("read_only", &self.read_only)
            .field("repair", &self.repair)
            .field("one_pass", &self.one_pass)
            .field("for_import", &self.for_import)
            .field("server", &self.server)
            .field("saves_in_flight", &self.saves_in_flight)
            .finish_non_exhaustive()
    }
}

impl Default for WorldBuilder {
    fn default() -> Self {
        Self {
            backend: None,
            schema: None,
            regionizer: RegionizerConfig::folia_shift4(),
            scheduler: None,
            tiers: None,
            sync_saves: true,
            read_only: false,
            repair: false,
            one_pass: false,
            fill: None,
            for_import: false,
            server: None,
            saves_in_flight: 0,
        }
    }
}

impl WorldBuilder {
    /// A builder with the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// The backend of a new world; on open, the world's own backend must match it.
    pub fn backend(mut self, backend: Backend) -> Self {
        self.backend = Some(backend);
        self
    }

    /// The world's schema (registries). On open it must extend the stored one (registries
    /// only grow); the stored one is used when none is given.
    pub fn schema(mut self, schema: Schema) -> Self {
        self.schema = Some(schema);
        self
    }

    /// The regionizer's parameters (default [`RegionizerConfig::folia_shift4`]).
    pub fn regionizer(mut self, config: RegionizerConfig) -> Self {
        self.regionizer = config;
        self
    }

    /// Ticks every READY region on the [`Scheduler`]'s worker threads with `tick` (default:
    /// no scheduler; the game ticks regions itself with `try_mark_ticking` /
    /// `mark_not_ticking`). Region data is `()`: keep the game's per-region state keyed by
    /// [`RegionId`](terrane_regionizer::RegionId) or by chunk.
    pub fn tick_regions(
        mut self,
        config: SchedulerConfig,
        tick: impl Fn(&TickContext<'_, ChunkPos, ()>) + Send + Sync + 'static,
    ) -> Self {
        self.scheduler = Some((config, Box::new(tick)));
        self
    }

    /// Adjusts the tiered store's configuration (demotion times, distance, opacity rule).
    pub fn tiers(
        mut self,
        f: impl FnOnce(TieredStoreBuilder) -> TieredStoreBuilder + 'static,
    ) -> Self {
        self.tiers = Some(Box::new(f));
        self
    }

    /// Whether every tick save is synced to stable storage (default `true`: a returned save
    /// survives power loss; `false`: it survives a process crash).
    pub fn sync_saves(mut self, sync: bool) -> Self {
        self.sync_saves = sync;
        self
    }

    /// This process is server `id` of several sharing one world (a PostgreSQL world: its
    /// store opens with `shared_writers`). Its game tick and distance graph get keys of
    /// their own (`gameTick/<id>`, [`distance_key`]); reads see the world-wide view (the
    /// largest tick, the union of the graphs). Default: none, the world's only writer.
    ///
    /// Several servers stay apart only with leases (terrane-lease, `docs/EMBEDDING.md`
    /// "One world, many servers"): limit the writes to the areas leased with
    /// `world.tiered_mut().set_areas(..)` and fence them with `set_fence(..)`. Ids must be
    /// unique among the servers.
    pub fn server(mut self, id: impl Into<String>) -> Self {
        self.server = Some(id.into());
        self
    }

    /// Tick saves (and every other write of the world) in flight at once (default 0: each
    /// returns once its batch is durable). With `n` > 0 the world writes through a
    /// [`WritePipeline`](terrane_store::WritePipeline): [`World::save_tick`] returns once its
    /// batch is accepted, batches land in order from a thread of their own, and
    /// [`World::landed_saves`] says which ticks are durable; at most `n` are in flight, so a
    /// store that falls behind slows the saves instead of buffering them. For a world whose
    /// store is a network away (PostgreSQL on another machine): the tick goes on while its
    /// save crosses the network. With [`server`](Self::server) the tables other servers
    /// write into (entities, leases, presence) are kept out of the pipeline's cache, and
    /// [`SharedWorld`](crate::shared::SharedWorld) writes its leases around the pipeline
    /// ([`World::durable_store`]).
    pub fn saves_in_flight(mut self, n: usize) -> Self {
        self.saves_in_flight = n;
        self
    }

    /// Opens the world for reading only (default `false`): nothing is written to it, not even
    /// recovery; saves fail with a read-only error. Readers share the world with each other,
    /// never with a writer: opening fails with a "locked" error while another process has it
    /// open for writing, and a writer cannot open it while readers have it (see
    /// `terrane_store::lock`).
    pub fn read_only(mut self, read_only: bool) -> Self {
        self.read_only = read_only;
        self
    }

    /// Opens a damaged world anyway (default `false`: a world whose backend finds less than
    /// its own records say it holds is refused with a `Damaged` error, unchanged). With
    /// `repair`, the block-file backend keeps every intact object and reports each lost one
    /// ([`World::verify`] then fails, listing them). RocksDB checks its own files and has no
    /// repair mode here.
    pub fn repair(mut self, repair: bool) -> Self {
        self.repair = repair;
        self
    }

    /// Opens the world for one pass over its chunks (default `false`): a command that reads
    /// or writes each chunk once (an import, an export, a copy, a verify, a backup, a
    /// restore, a render). The store's read caches are kept small, since nothing it reads is
    /// read again: RocksDB's block cache is 8 MiB (64 MiB by default), holding no block a scan
    /// reads, and its row cache off (32 MiB by default); the block file's read cache is 4 MiB
    /// (32 MiB); a sole PostgreSQL writer's read cache is 4 MiB (64 MiB). What is written
    /// waits in memory less: RocksDB flushes a table's memtable at 8 MiB (32 MiB) and all of
    /// them past 32 MiB together (64 MiB). Reads and writes are otherwise the same; a game on
    /// such a world reads more from disk.
    pub fn one_pass(mut self, one_pass: bool) -> Self {
        self.one_pass = one_pass;
        self
    }

    /// Opens or creates the world for an import (default `false`). A world whose import was
    /// cut off, which otherwise does not open ([`Error::ImportUnfinished`]), opens, for the
    /// import to go on: it skips the columns it wrote and, once it ends, removes the mark
    /// ([`IMPORTING_KEY`](crate::IMPORTING_KEY)). A world this builder creates holds the
    /// mark from its creation on, so an import cut off even before its first column never
    /// opens as an empty world. Any other world opens as without it.
    pub fn for_import(mut self, for_import: bool) -> Self {
        self.for_import = for_import;
        self
    }

    /// [`create`](Self::create) leaves a directory world an unfinished creation whose intent
    /// names `fill` (`docs/format/world-dir.md`), for a caller that fills it, then calls
    /// `world_dir::commit_fill`: cut off before, it never opens, and the next `create`
    /// replaces it.
    pub(crate) fn fill(mut self, fill: world_dir::Fill) -> Self {
        self.fill = Some(fill);
        self
    }

    /// Creates a new world in `dir`, which must not exist, be empty, or be a creation of
    /// terrane's that was cut off (which is replaced). On failure nothing is left behind.
    ///
    /// Creation writes a creation intent first and turns it into the world's marker last
    /// (`docs/format/world-dir.md`), so a creation killed at any point is recognised.
    pub fn create(self, dir: impl AsRef<Path>) -> Result<World> {
        let dir = dir.as_ref();
        let backend = self.backend.unwrap_or_default();
        if backend == Backend::Memory {
            return self.finish(
                Handle::Mem(Arc::new(MemStore::open(&store_config(Mode::Create, false))?)),
                None,
                backend,
                None,
            );
        }
        if self.read_only {
            return Err(Error::CreateReadOnly);
        }
        if let Some(conninfo) = connection_string(dir) {
            let handle =
                open_postgres(conninfo, Mode::Create, false, self.server.is_some(), self.one_pass)?;
            let for_import = self.for_import;
            let world = self.finish(handle, None, Backend::Postgres, None)?;
            if for_import {
                crate::import_mark::mark(&world, "")?;
            }
            return Ok(world);
        }
        let existed = dir.exists();
        fs::create_dir_all(dir).map_err(io(dir))?;
        let lock = world_dir::lock(dir, false)?;
        if fs::read_dir(dir).map_err(io(dir))?.next().is_some() {
            if !world_dir::is_unfinished(dir) {
                return Err(Error::AlreadyExists(dir.to_path_buf()));
            }
            world_dir::clear(dir);
        }
        let result = (|| {
            let for_import = self.for_import;
            let fill = self.fill.or(for_import.then_some(world_dir::Fill::Import));
            world_dir::write_intent(dir, backend, fill)?;
            let handle =
                open_backend_with(dir, backend, Mode::Create, false, false, self.one_pass)?;
            let world = self.finish(handle, Some(dir.to_path_buf()), backend, Some(lock))?;
            match fill {
                None => world_dir::commit_intent(dir)?,
                Some(world_dir::Fill::Import) => {
                    crate::import_mark::mark(&world, "")?;
                    world_dir::commit_fill(dir, backend)?;
                }
                // The caller commits once it filled the world.
                Some(_) => {}
            }
            Ok(world)
        })();
        if result.is_err() {
            world_dir::discard(dir, existed);
        }
        result
    }

    /// Opens the world at `location` when one is there, else creates it with this builder's
    /// settings: a folder that does not exist or is empty gets a new world (any other folder
    /// is opened, a creation that was cut off finished); on PostgreSQL a database without a
    /// world gets one, and a world another process created first is opened. The builder's
    /// [`backend`](Self::backend), when set, is the new world's, and an existing world's must
    /// match it.
    ///
    /// ```
    /// # fn main() -> terrane::Result<()> {
    /// let dir = tempfile::tempdir().unwrap();
    /// let first = terrane::World::builder().open_or_create(dir.path().join("w"))?;
    /// drop(first);
    /// let again = terrane::World::builder().open_or_create(dir.path().join("w"))?;
    /// assert_eq!(again.tick(), 0);
    /// # Ok(())
    /// # }
    /// ```
    pub fn open_or_create(self, location: impl AsRef<Path>) -> Result<World> {
        let dir = location.as_ref();
        if let Some(conninfo) = connection_string(dir) {
            postgres_requested(self.backend)?;
            let shared = self.server.is_some();
            let mut created = false;
            let handle =
                match open_postgres(conninfo, Mode::Open, self.read_only, shared, self.one_pass) {
                    Err(Error::Store(terrane_store::Error::NotFound(_))) if !self.read_only => {
                        match open_postgres(conninfo, Mode::Create, false, shared, self.one_pass) {
                            Ok(h) => {
                                created = true;
                                h
                            }
                            // Another process created it first.
                            Err(_) => {
                                open_postgres(conninfo, Mode::Open, false, shared, self.one_pass)?
                            }
                        }
                    }
                    h => h?,
                };
            let for_import = self.for_import;
            let world = self.finish(handle, None, Backend::Postgres, None)?;
            if created && for_import {
                crate::import_mark::mark(&world, "")?;
            }
            return Ok(world);
        }
        let empty = match fs::read_dir(dir) {
            Ok(mut entries) => entries.next().is_none(),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
            Err(e) => return Err(io(dir)(e)),
        };
        if empty || self.backend == Some(Backend::Memory) {
            self.create(dir)
        } else {
            self.open(dir)
        }
    }

    /// Opens the world in `dir`. A creation that was cut off is finished (when not
    /// [`read_only`](Self::read_only)).
    pub fn open(self, dir: impl AsRef<Path>) -> Result<World> {
        let dir = dir.as_ref();
        if self.backend == Some(Backend::Memory) {
            return Err(Error::OpenInMemory(dir.to_path_buf()));
        }
        if let Some(conninfo) = connection_string(dir) {
            postgres_requested(self.backend)?;
            let shared = self.server.is_some();
            let handle =
                open_postgres(conninfo, Mode::Open, self.read_only, shared, self.one_pass)?;
            return self.finish(handle, None, Backend::Postgres, None);
        }
        if !dir.is_dir() {
            return Err(Error::NotAWorld(dir.to_path_buf()));
        }
        let lock = world_dir::lock(dir, self.read_only)?;
        let state = world_dir::read_state(dir)?;
        let (backend, mode) = match state {
            DirState::World(b) => (b, Mode::Open),
            DirState::Unfinished(b) if !self.read_only => (b, Mode::Finish),
            DirState::Unfinished(_) => {
                return Err(Error::CreationUnfinished(dir.to_path_buf()));
            }
            // An import cut off before its world's creation ended: the import goes on.
            DirState::FillUnfinished(world_dir::Fill::Import, b)
                if self.for_import && !self.read_only =>
            {
                (b, Mode::Finish)
            }
            DirState::FillUnfinished(fill, _) => return Err(fill.unfinished(dir)),
        };
        if let Some(b) = self.backend
            && b != backend
        {
            return Err(Error::BackendMismatch {
                dir: Some(dir.to_path_buf()),
                found: backend,
                requested: b,
            });
        }
        let handle =
            open_backend_with(dir, backend, mode, self.read_only, self.repair, self.one_pass)?;
        let world = self.finish(handle, Some(dir.to_path_buf()), backend, Some(lock))?;
        if let DirState::FillUnfinished(world_dir::Fill::Import, _) = state {
            crate::import_mark::mark(&world, "")?;
            world_dir::commit_fill(dir, backend)?;
        } else if mode == Mode::Finish {
            world_dir::commit_intent(dir)?;
        }
        Ok(world)
    }

    fn finish(
        self,
        handle: Handle,
        dir: Option<PathBuf>,
        backend: Backend,
        lock: Option<fs::File>,
    ) -> Result<World> {
        let mut store = handle.store();
        // A directory world's own writes are recorded for its next backup; its change
        // records are hidden from everything above (`backup_changes`).
        let mut changes = None;
        if dir.is_some() && self.server.is_none() {
            let recorder = Arc::new(ChangeRecorder::open(store)?);
            #[cfg(feature = "blockfile")]
            if let Handle::Block(b) = &handle
                && !b.recovery().is_clean()
                && !self.read_only
            {
                // The repair lost objects and records without a write: a backup from the
                // records would keep the lost objects.
                recorder.forget_mark()?;
            }
            store = Arc::clone(&recorder) as Arc<dyn Store>;
            changes = (!self.read_only).then_some(recorder);
        }
        // A copy, restore or import cut off: refused (an import's world opens to the import).
        let except = self.for_import.then_some(world_dir::Fill::Import);
        if let Some(fill) = world_dir::Fill::unfinished_in(&*store, except)? {
            let at = dir.clone().unwrap_or_else(|| PathBuf::from("the PostgreSQL world"));
            return Err(fill.unfinished(&at));
        }
        let schema = match self.schema {
            Some(s) => s,
            None => match terrane_cluster::stored_schema(&*store)? {
                Some(s) => s,
                None => default_schema(),
            },
        };
        let (store, pipeline, read_ahead) = match self.saves_in_flight {
            0 => (store, None, None),
            _ if self.read_only => (store, None, None),
            n => {
                // A shared world's other servers write into these tables (entities handed
                // off into this server's areas, leases, presence): never cached.
                let others: &[&str] = match self.server {
                    Some(_) => &[tables::ENTITY, tables::WORLD_META, tables::WORLD_PROPERTIES],
                    None => &[],
                };
                let p = WritePipeline::with_uncached(store, n, DEFAULT_CACHE_BYTES, others)?;
                (Arc::clone(&p) as Arc<dyn Store>, Some(p), Some(ReadAhead::new()?))
            }
        };
        let mut tb = TieredStoreBuilder::new(schema).sync_saves(self.sync_saves);
        if let Some(id) = &self.server {
            tb = tb.server(id.clone());
        }
        if let Some(f) = self.tiers {
            tb = f(tb);
        }
        let tiered = tb.open(Arc::clone(&store))?;
        let graph = world_distance(&*store)?;
        let distance_key = distance_key(self.server.as_deref());
        let saved_graph_len = graph.len();
        let (regionizer, scheduler) = match self.scheduler {
            Some((cfg, tick)) => {
                let s = Scheduler::start(
                    self.regionizer,
                    cfg,
                    NoCallbacks,
                    move |ctx: &TickContext<'_, ChunkPos, ()>| tick(ctx),
                );
                (Arc::clone(s.regionizer()), Some(s))
            }
            None => (Arc::new(Regionizer::new(self.regionizer, NoCallbacks)), None),
        };
        Ok(World {
            dir,
            _lock: lock,
            read_only: self.read_only,
            backend,
            handle,
            tiered,
            regionizer,
            scheduler,
            distance: Arc::new(SharedDistanceGraph::new(graph)),
            others: OtherDimensions::new(self.regionizer, self.server.clone()),
            distance_key,
            saved_graph_len,
            distance_dirty: false,
            pipeline,
            read_ahead,
            saved_ticks: VecDeque::new(),
            changes,
        })
    }
}

/// The `worldProperties` key of a server's distance graph: [`DISTANCE_KEY`](crate::DISTANCE_KEY)
/// for a world's only server, `DISTANCE_KEY/<id>` for server `id` of a shared world
/// ([`WorldBuilder::server`]), so that no two servers write one key.
pub fn distance_key(server: Option<&str>) -> Vec<u8> {
    crate::dimensions::dimension_distance_key(server, 0)
}

/// The world-wide distance graph: the union of [`DISTANCE_KEY`](crate::DISTANCE_KEY) and every
/// server's [`distance_key`] (a column generated by any server counts as generated).
pub fn world_distance(store: &dyn Store) -> Result<DistanceGraph> {
    crate::dimensions::dimension_distance(store, 0)
}

/// The schema of a world created without one: only `minecraft:air` (id 0). A server that
/// knows its block states up front extends it (`terrane create --blocks`,
/// [`schem::register_states`](crate::schem::register_states)) and passes it to
/// [`WorldBuilder::schema`].
pub fn default_schema() -> Schema {
    Schema::air_only()
}

/// A summary of a world, from [`World::info`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct WorldInfo {
    /// The backend.
    pub backend: Backend,
    /// The last saved game tick.
    pub tick: u64,
    /// Registered block states, without the [`unused_spellings`](Self::unused_spellings).
    pub block_states: usize,
    /// Registry entries that spell a block state another entry spells too and that no chunk
    /// uses: what [`World::merge_duplicate_states`] leaves registered (registries only grow).
    pub unused_spellings: usize,
    /// Registered components, entity types, structures.
    pub components: usize,
    /// Chunks, keys and bytes per level (L0, L1, L2).
    pub levels: LevelStats,
    /// Entities stored.
    pub entities: u64,
    /// Columns the distance graph marks generated.
    pub generated_columns: u64,
    /// Bytes of the world directory: the apparent size of its files and folders, as `du -sb`
    /// counts them (0 in memory). A closed RocksDB world holds no write-ahead log beyond an
    /// empty one.
    pub disk_bytes: u64,
}

/// The result of [`World::verify`]: what was checked, all of it consistent.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct VerifyReport {
    /// Chunks, keys and bytes per level; every chunk decoded against the schema and sits at
    /// exactly one level.
    pub levels: LevelStats,
    /// Entities stored.
    pub entities: u64,
    /// Entity references of chunks checked (each names a stored entity).
    pub entity_refs: u64,
    /// Columns the distance graph marks generated (it decoded and is canonical).
    pub generated_columns: u64,
    /// Objects whose bytes the backend re-read and checksummed (block file only; RocksDB
    /// checks block checksums on every read above).
    pub objects_checked: u64,
}

/// One world: the object store, the tiered chunk store, the regionizer (and scheduler), the
/// distance graph and arena snapshots, glued together. See the [crate docs](crate).
///
/// Chunks are cubic ([`ChunkPos`]) in dimensions (0, the Overworld, unless a method `_in`
/// names another: each dimension has its own regionizer and distance graph); the distance
/// graph is over columns ([`ColumnPos`], chunk x and z).
pub struct World {
    dir: Option<PathBuf>,
    /// The world directory's advisory lock, held for the world's life.
    _lock: Option<fs::File>,
    read_only: bool,
    pub(crate) backend: Backend,
    pub(crate) handle: Handle,
    /// What the world changed since its last backup (a writable directory world).
    pub(crate) changes: Option<Arc<ChangeRecorder>>,
    tiered: TieredStore<Arc<dyn Store>>,
    regionizer: Arc<Regionizer<ChunkPos, ()>>,
    scheduler: Option<Scheduler<ChunkPos, ()>>,
    distance: Arc<SharedDistanceGraph>,
    /// The dimensions beyond the Overworld played in since the world opened.
    others: OtherDimensions,
    /// Where this process saves the distance graph ([`distance_key`]).
    distance_key: Vec<u8>,
    saved_graph_len: u64,
    distance_dirty: bool,
    /// The writes in flight ([`WorldBuilder::saves_in_flight`]), when there are any.
    pipeline: Option<Arc<WritePipeline>>,
    /// Reads ahead into the pipeline's cache ([`World::read_ahead_chunks`]), beside it.
    read_ahead: Option<ReadAhead>,
    /// Tick saves not reported by [`World::landed_saves`] yet: the pipeline's sequence number
    /// of each save's batch (0 without a pipeline: landed on return), its tick, and how many
    /// saves in a row had both.
    saved_ticks: VecDeque<(u64, u64, u64)>,
}

impl fmt::Debug for World {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("World")
            .field("dir", &self.dir)
            .field("backend", &self.backend)
            .field("tiered", &self.tiered)
            .field("regions", &self.regionizer.region_count())
            .finish_non_exhaustive()
    }
}

impl World {
    /// A [`WorldBuilder`] with the defaults.
    pub fn builder() -> WorldBuilder {
        WorldBuilder::new()
    }

    /// Opens the world in `dir` with the defaults.
    pub fn open(dir: impl AsRef<Path>) -> Result<World> {
        WorldBuilder::new().open(dir)
    }

    /// Opens the world in `dir` for reading only, with the defaults (see
    /// [`WorldBuilder::read_only`]): nothing is written to it.
    pub fn open_read_only(dir: impl AsRef<Path>) -> Result<World> {
        WorldBuilder::new().read_only(true).open(dir)
    }

    /// Deletes the world in `dir` and the directory (or, at a connection string, its
    /// PostgreSQL schema): refused when `dir` is not a world (nor one of terrane's creations
    /// that was cut off), or while any process has it open.
    pub fn remove(dir: impl AsRef<Path>) -> Result<()> {
        let dir = dir.as_ref();
        #[cfg(feature = "postgres")]
        if let Some(conninfo) = connection_string(dir) {
            return Ok(terrane_postgres::PgStore::remove(
                conninfo,
                &terrane_postgres::PgOptions::default(),
            )?);
        }
        if !dir.is_dir() {
            return Err(Error::NotAWorld(dir.to_path_buf()));
        }
        let _lock = world_dir::lock(dir, false)?;
        if !world_dir::is_unfinished(dir) {
            world_dir::read_state(dir)?;
        }
        fs::remove_dir_all(dir).map_err(io(dir))
    }

    /// Whether `dir` is one of terrane's world creations that was cut off before it finished
    /// (which [`WorldBuilder::create`] replaces).
    pub fn is_unfinished_creation(dir: impl AsRef<Path>) -> bool {
        world_dir::is_unfinished(dir.as_ref())
    }

    /// The world directory (`None` in memory).
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// What opening lost, when it had to repair damage ([`WorldBuilder::repair`]): a sentence
    /// naming the missing objects; `None` when nothing was lost.
    pub fn repair_report(&self) -> Option<String> {
        match &self.handle {
            #[cfg(feature = "blockfile")]
            Handle::Block(b) if !b.recovery().is_clean() => Some(b.recovery().describe()),
            _ => None,
        }
    }

    /// Whether the world was opened read-only ([`WorldBuilder::read_only`]).
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// The backend.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The object store.
    pub fn store(&self) -> &dyn Store {
        &**self.tiered.store()
    }

    /// The tiered chunk store.
    pub fn tiered(&self) -> &TieredStore<Arc<dyn Store>> {
        &self.tiered
    }

    /// The tiered chunk store, mutably (loads, saves, maintenance without the glue).
    pub fn tiered_mut(&mut self) -> &mut TieredStore<Arc<dyn Store>> {
        &mut self.tiered
    }

    /// The world's schema.
    pub fn schema(&self) -> &Schema {
        self.tiered.schema()
    }

    /// Grows the world's registries to `schema` (which must extend the current one: the
    /// registries only grow) and stores it, in its own atomic batch, before any chunk uses
    /// the new entries. Reopens the tiered store over the same backend with the same
    /// configuration; refused while chunks are loaded (their load state would be lost).
    pub fn extend_schema(&mut self, schema: Schema) -> Result<()> {
        if !self.regionizer.loaded_chunks()?.is_empty() {
            return Err(Error::Inconsistent(
                "extend_schema while chunks are loaded: unload them first".into(),
            ));
        }
        schema.check_extends(self.schema())?;
        let mut tiered = TieredStoreBuilder::from_config(schema, self.tiered.config().clone())
            .open(Arc::clone(self.tiered.store()))?;
        tiered.set_fence(self.tiered.fence().to_vec());
        tiered.set_areas(self.tiered.areas().cloned());
        self.tiered = tiered;
        Ok(())
    }

    /// The regionizer, fed by [`load_chunk`](Self::load_chunk) and
    /// [`unload_chunk`](Self::unload_chunk).
    pub fn regionizer(&self) -> &Arc<Regionizer<ChunkPos, ()>> {
        &self.regionizer
    }

    /// The scheduler, when built with [`WorldBuilder::tick_regions`].
    pub fn scheduler(&self) -> Option<&Scheduler<ChunkPos, ()>> {
        self.scheduler.as_ref()
    }

    /// The distance graph of generated columns (with its claims, shared with generator
    /// threads). Saved by [`save_tick`](Self::save_tick) whenever its count of completed
    /// columns changed, or after [`mark_distance_dirty`](Self::mark_distance_dirty).
    pub fn distance(&self) -> &Arc<SharedDistanceGraph> {
        &self.distance
    }

    /// Makes the next tick save write the distance graph (after changes that kept its count,
    /// e.g. a removal and an insertion).
    pub fn mark_distance_dirty(&mut self) {
        self.distance_dirty = true;
    }

    /// The `worldProperties` key this world's distance graph is saved under.
    pub(crate) fn distance_key(&self) -> &[u8] {
        &self.distance_key
    }

    /// Notes that the distance graph as it is now was written (by a batch of the caller's).
    pub(crate) fn note_graph_saved(&mut self) {
        self.saved_graph_len = self.distance.len();
        self.distance_dirty = false;
    }

    /// Marks column `col` generated in the distance graph (saved with the next tick).
    pub fn mark_generated(&mut self, col: ColumnPos) -> Result<bool> {
        Ok(self.distance.complete(col)?)
    }

    /// [`mark_generated`](Self::mark_generated) in dimension `dim`'s graph
    /// ([`distance_in`](Self::distance_in)).
    pub fn mark_generated_in(&mut self, dim: u64, col: ColumnPos) -> Result<bool> {
        Ok(self.distance_in(dim)?.complete(col)?)
    }

    /// The latest game tick seen.
    pub fn tick(&self) -> u64 {
        self.tiered.tick()
    }

    /// The block id of air (`minecraft:air` or `air`; id 0 when neither is registered), what
    /// absent chunks hold.
    pub fn air(&self) -> BlockId {
        let b = self.schema().blocks();
        BlockId(b.find("minecraft:air").or_else(|| b.find("air")).unwrap_or(0))
    }

    /// A player loads chunk `pos`: the tiered store promotes it to L0 and keeps it there, the
    /// regionizer adds it to a region. Returns the chunk, `None` when it does not exist yet
    /// (generate it and save it with the tick).
    pub fn load_chunk(&mut self, pos: ChunkPos) -> Result<Option<Chunk>> {
        Ok(self.load_chunks(&[pos])?.pop().flatten())
    }

    /// Players load chunks `positions` together (a column, a view of columns): as
    /// [`load_chunk`](Self::load_chunk) for each, read and promoted by the tiered store in a
    /// few round trips for the whole set ([`TieredStore::load_chunks`]). Returns each chunk in
    /// the order of `positions`, `None` for those that do not exist yet. On an error nothing
    /// is added to the regionizer.
    ///
    /// [`TieredStore::load_chunks`]: terrane_cluster::TieredStore::load_chunks
    pub fn load_chunks(&mut self, positions: &[ChunkPos]) -> Result<Vec<Option<Chunk>>> {
        self.load_chunks_in(DIM, positions)
    }

    /// [`load_chunks`](Self::load_chunks) in dimension `dim` (0 the Overworld; an import
    /// numbers the Nether 1 and the End 2): each dimension has its own regionizer
    /// ([`regionizer_in`](Self::regionizer_in)).
    pub fn load_chunks_in(
        &mut self,
        dim: u64,
        positions: &[ChunkPos],
    ) -> Result<Vec<Option<Chunk>>> {
        let tick = self.tiered.tick();
        let regionizer = self.regionizer_in(dim)?;
        let mut added = Vec::with_capacity(positions.len());
        let undo = |added: &[ChunkPos]| {
            for &p in added {
                let _ = regionizer.remove_chunk(p);
            }
        };
        for &pos in positions {
            if let Err(e) = regionizer.add_chunk(pos) {
                undo(&added);
                return Err(e.into());
            }
            added.push(pos);
        }
        let found = match self.tiered.load_chunks(dim, positions, tick) {
            Ok(f) => f,
            Err(e) => {
                undo(&added);
                return Err(e.into());
            }
        };
        let mut out = Vec::with_capacity(found.len());
        for bytes in found {
            out.push(match bytes {
                Some(b) => Some(Chunk::decode(&b, self.schema())?),
                None => None,
            });
        }
        Ok(out)
    }

    /// Chunk `pos` left every player's simulation distance: the regionizer drops it, the
    /// tiered store lets it age towards L1.
    pub fn unload_chunk(&mut self, pos: ChunkPos) -> Result<()> {
        self.unload_chunk_in(DIM, pos)
    }

    /// [`unload_chunk`](Self::unload_chunk) in dimension `dim`.
    pub fn unload_chunk_in(&mut self, dim: u64, pos: ChunkPos) -> Result<()> {
        self.regionizer_in(dim)?.remove_chunk(pos)?;
        let tick = self.tiered.tick();
        self.tiered.unload_chunk(dim, pos, tick);
        Ok(())
    }

    /// Chunk `pos`, decoded, without loading or moving it.
    pub fn get_chunk(&self, pos: ChunkPos) -> Result<Option<Chunk>> {
        self.get_chunk_in(DIM, pos)
    }

    /// [`get_chunk`](Self::get_chunk) in dimension `dim`.
    pub fn get_chunk_in(&self, dim: u64, pos: ChunkPos) -> Result<Option<Chunk>> {
        Ok(self.tiered.get_chunk_decoded(dim, pos)?)
    }

    /// The regionizer of dimension `dim`: [`regionizer`](Self::regionizer) for the Overworld
    /// (0), one of its own (the world's [`RegionizerConfig`], no scheduler) for another,
    /// made the first time it is asked for.
    pub fn regionizer_in(&mut self, dim: u64) -> Result<Arc<Regionizer<ChunkPos, ()>>> {
        match dim {
            DIM => Ok(Arc::clone(&self.regionizer)),
            _ => Ok(Arc::clone(&self.others.get(&**self.tiered.store(), dim)?.regionizer)),
        }
    }

    /// The distance graph of dimension `dim`: [`distance`](Self::distance) for the Overworld
    /// (0); for another, its own, read from the world the first time it is asked for and
    /// saved with the tick saves after it changed (`worldProperties`
    /// `terrane:distanceGraph.<dim>`).
    pub fn distance_in(&mut self, dim: u64) -> Result<Arc<SharedDistanceGraph>> {
        match dim {
            DIM => Ok(Arc::clone(&self.distance)),
            _ => Ok(Arc::clone(&self.others.get(&**self.tiered.store(), dim)?.distance)),
        }
    }

    /// The players' positions, for the distance rule of demotion.
    pub fn set_players(&mut self, players: &[PlayerPos]) {
        self.tiered.set_players(players);
    }

    /// Saves game tick `tick` as one atomic batch: `save` (chunks, entities, objects) plus
    /// the distance graph when it changed. A crash keeps all of it or none.
    pub fn save_tick(&mut self, tick: u64, mut save: TickSave) -> Result<()> {
        let len = self.distance.len();
        let graph_changed = self.distance_dirty || len != self.saved_graph_len;
        if graph_changed {
            save.put_object(
                tables::WORLD_PROPERTIES,
                self.distance_key.clone(),
                self.distance.to_bytes(),
            );
        }
        let others = self.others.put_graphs(&mut save);
        self.tiered.save_tick(tick, &save)?;
        if graph_changed {
            self.saved_graph_len = len;
            self.distance_dirty = false;
        }
        self.others.saved(&others);
        let seq = self.pipeline.as_ref().map_or(0, |p| p.submitted());
        match self.saved_ticks.back_mut() {
            // The same tick saved again and landed with the last (without saves in flight
            // every save lands at once; an import saves every column at the world's tick):
            // counted in one entry, so what is kept for `landed_saves` does not grow with
            // saves nobody asks about. Saves in flight land one by one: an entry each.
            Some(last) if last.0 == seq && last.1 == tick => last.2 += 1,
            _ => self.saved_ticks.push_back((seq, tick, 1)),
        }
        Ok(())
    }

    /// The ticks whose saves are durable since the last call, in order: at once without
    /// [`WorldBuilder::saves_in_flight`]; with it, as their batches land. Report a save (to
    /// players, to a log of acknowledgements) only from here. When a write in flight failed,
    /// the saves that landed before it are reported first; the next call fails with the
    /// store's error: the failed save's outcome is the store's (on PostgreSQL unknown: whole
    /// or absent), no save after it was written, and every later write fails; reopen the
    /// world, or [`resume_saves`](Self::resume_saves) once what the game holds is read back.
    pub fn landed_saves(&mut self) -> Result<Vec<u64>> {
        let durable = self.pipeline.as_ref().map_or(u64::MAX, |p| p.durable());
        let mut landed = Vec::new();
        while let Some(&(seq, tick, saves)) = self.saved_ticks.front() {
            if seq > durable {
                break;
            }
            landed.extend(std::iter::repeat_n(tick, saves as usize));
            self.saved_ticks.pop_front();
        }
        if landed.is_empty()
            && let Some(p) = &self.pipeline
        {
            if let Some((_, e)) = p.failure() {
                return Err(e.into());
            }
            p.check()?;
        }
        Ok(landed)
    }

    /// Saves again after a write in flight failed ([`landed_saves`](Self::landed_saves)
    /// reported it): the saves not reported as landed are forgotten (the failed one's outcome
    /// is the store's error's; none after it was written), the distance graph is written
    /// again with the next save, and later saves land. The game must first read back what it
    /// holds from the store (its state was ahead of it): unload its chunks and load them
    /// again, read its entities back. Returns whether a failure was there to resume from.
    pub fn resume_saves(&mut self) -> bool {
        let Some(p) = &self.pipeline else { return false };
        if p.resume().is_none() {
            return false;
        }
        self.saved_ticks.clear();
        self.distance_dirty = true;
        self.others.mark_dirty();
        true
    }

    /// The store whose writes are durable when they return: with
    /// [`WorldBuilder::saves_in_flight`] the store under the writes in flight, else
    /// [`store`](Self::store). For writes that must not wait behind the saves, nor be
    /// reported late (a shared world's leases and presence).
    pub fn durable_store(&self) -> Arc<dyn Store> {
        match &self.pipeline {
            Some(p) => Arc::clone(p.inner()),
            None => Arc::clone(self.tiered.store()),
        }
    }

    /// Forgets what the writes in flight cached of the store (nothing without
    /// [`WorldBuilder::saves_in_flight`]): for a shared world's server taking an area another
    /// server wrote, whose objects it may have read before.
    pub fn forget_cached_reads(&self) {
        if let Some(p) = &self.pipeline {
            p.forget_cache();
        }
    }

    /// Waits until every save in flight has landed; [`landed_saves`](Self::landed_saves)
    /// then reports them all. The store's error when one failed.
    pub fn settle_saves(&self) -> Result<()> {
        match &self.pipeline {
            Some(p) => Ok(p.settle()?),
            None => Ok(()),
        }
    }

    /// Writes accepted and not yet durable (0 without
    /// [`WorldBuilder::saves_in_flight`]).
    pub fn saves_in_flight(&self) -> u64 {
        self.pipeline.as_ref().map_or(0, |p| p.in_flight())
    }

    /// How long saves waited for room in the pipeline since the last call: the store falling
    /// behind the game (zero without [`WorldBuilder::saves_in_flight`]).
    pub fn take_save_wait(&self) -> std::time::Duration {
        self.pipeline.as_ref().map_or(std::time::Duration::ZERO, |p| p.take_waited())
    }

    /// Starts reading chunks `positions` ahead, with what saving them reads, on a thread of
    /// the world's own into the cache of its writes in flight: once
    /// [`is_read_ahead`](Self::is_read_ahead) says so, [`load_chunks`](Self::load_chunks) of
    /// them costs no round trip (unless the cache had to let them go: then it reads them
    /// itself). For a game's tick that must not wait on a network: ask for a player's next
    /// columns, load them a tick later. `None` without
    /// [`WorldBuilder::saves_in_flight`]: there is no cache to read into, so load at once.
    /// A read ahead that fails costs the load its round trip, which then reports the error.
    pub fn read_ahead_chunks(&self, positions: &[ChunkPos]) -> Option<u64> {
        self.read_ahead_chunks_in(DIM, positions)
    }

    /// [`read_ahead_chunks`](Self::read_ahead_chunks) in dimension `dim`.
    pub fn read_ahead_chunks_in(&self, dim: u64, positions: &[ChunkPos]) -> Option<u64> {
        let ahead = self.read_ahead.as_ref()?;
        let store = Arc::clone(self.tiered.store());
        let positions = positions.to_vec();
        Some(ahead.submit(move || {
            TieredStore::<Arc<dyn Store>>::read_ahead_loads(&store, dim, &positions)
                .map_err(Into::into)
        }))
    }

    /// Starts reading objects `keys` of `table` ahead, as
    /// [`read_ahead_chunks`](Self::read_ahead_chunks) does chunks (player and container
    /// records: [`game`](crate::game) has the keys). `None` without saves in flight.
    pub fn read_ahead_objects(&self, table: &'static str, keys: Vec<Vec<u8>>) -> Option<u64> {
        let ahead = self.read_ahead.as_ref()?;
        let store = Arc::clone(self.tiered.store());
        Some(ahead.submit(move || {
            let keys: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
            store.multi_get(table, &keys).map(drop).map_err(Into::into)
        }))
    }

    /// Runs `job` on the thread that reads ahead, after the reads asked before it: work a
    /// tick should not wait for, such as generating the columns it will load. Its ticket
    /// is done ([`is_read_ahead`](Self::is_read_ahead)) once the job and every read asked
    /// before it finished. `None` without [`WorldBuilder::saves_in_flight`] (no thread:
    /// do the work in the tick).
    pub fn run_ahead(
        &self,
        job: impl FnOnce() -> std::result::Result<(), terrane_store::JobError> + Send + 'static,
    ) -> Option<u64> {
        Some(self.read_ahead.as_ref()?.submit(job))
    }

    /// Whether reads ahead go anywhere: the world has saves in flight, whose cache keeps what
    /// is read ahead ([`read_ahead_chunks`](Self::read_ahead_chunks)).
    pub fn reads_ahead(&self) -> bool {
        self.read_ahead.is_some()
    }

    /// Whether the read ahead `ticket` (and every one asked before it) finished.
    pub fn is_read_ahead(&self, ticket: u64) -> bool {
        self.read_ahead.as_ref().is_none_or(|a| a.is_done(ticket))
    }

    /// One demotion pass of the tiered store at `tick`.
    pub fn maintain(&mut self, tick: u64) -> Result<MaintenanceReport> {
        Ok(self.tiered.maintain(tick)?)
    }

    /// The chunks of `bbox` as a [`ChunkWorld`] (absent chunks filled with air), to restore
    /// a snapshot into or edit, then save with [`save_arena`](Self::save_arena).
    pub fn arena(&self, bbox: BlockBox) -> Result<ChunkWorld> {
        let mut w = ChunkWorld::new(self.schema().clone());
        let air = self.air();
        for r in bbox.sub_regions() {
            let c = self.get_chunk(r.chunk)?.unwrap_or_else(|| Chunk::new(air));
            w.chunks.insert(r.chunk, c);
        }
        Ok(w)
    }

    /// Captures `bbox` (absent chunks read as air).
    pub fn capture(&self, bbox: BlockBox) -> Result<Snapshot> {
        Ok(Snapshot::capture(&self.arena(bbox)?, bbox)?)
    }

    /// Saves every chunk of `arena` in the tick save of `tick` (one atomic batch).
    pub fn save_arena(&mut self, tick: u64, arena: &ChunkWorld) -> Result<()> {
        let mut save = TickSave::new();
        let mut chunks: Vec<_> = arena.chunks.iter().collect();
        chunks.sort_by_key(|(p, _)| **p);
        for (pos, c) in chunks {
            save.put_chunk(DIM, *pos, c.encode(self.schema()));
        }
        self.save_tick(tick, save)
    }

    /// A summary: levels, entities, generated columns, bytes on disk. Reads every chunk
    /// table (it runs [`TieredStore::verify`]), and every chunk's palette once more when two
    /// registry entries spell one block state (to count [`WorldInfo::unused_spellings`]).
    pub fn info(&self) -> Result<WorldInfo> {
        let levels = self.tiered.verify()?;
        let unused_spellings = self.unused_spellings()?;
        let entities =
            self.store().scan(tables::ENTITY, terrane_store::KeyRange::all())?.count() as u64;
        Ok(WorldInfo {
            backend: self.backend,
            tick: self.tiered.tick(),
            block_states: self.schema().blocks().len() - unused_spellings,
            unused_spellings,
            components: self.schema().components().len(),
            levels,
            entities,
            generated_columns: self.distance.len(),
            disk_bytes: self.disk_bytes(),
        })
    }

    /// Bytes of the world's folder on disk (0 for a world without one: PostgreSQL, memory),
    /// without reading the world ([`info`](Self::info) reads every chunk).
    pub fn disk_bytes(&self) -> u64 {
        self.dir.as_deref().map_or(0, dir_bytes)
    }

    /// The full consistency check: every chunk decodes against the registries and sits at
    /// exactly one level, every entity a chunk lists is stored, the distance graph decodes,
    /// (block file) every object's checksum holds, and no block state is stored under
    /// several ids ([`Error::DuplicateStates`]; see
    /// [`duplicate_states`](Self::duplicate_states)). The first problem is an error.
    pub fn verify(&self) -> Result<VerifyReport> {
        self.verify_with(&mut |_, _| {})
    }

    /// [`verify`](Self::verify), telling `progress` how many of the chunks' tiles (squares
    /// of 64 × 64 columns, [`TieredStore::verify_each`]) are checked, and how many there
    /// are, after each: every chunk is read once.
    pub fn verify_with(&self, progress: &mut dyn FnMut(usize, usize)) -> Result<VerifyReport> {
        let mut report = VerifyReport::default();
        for e in self.store().scan(tables::ENTITY, terrane_store::KeyRange::all())? {
            let (k, _) = e?;
            if k.len() != 16 && keys::parse_area_entity_key(&k).is_none() {
                return Err(Error::Inconsistent(format!(
                    "entity key of {} bytes, neither a UUID (16) nor an area and a UUID (24)",
                    k.len()
                )));
            }
            report.entities += 1;
        }
        let mut used = std::collections::HashSet::new();
        let mut entity_refs = 0;
        report.levels = self.tiered.verify_each(
            |(_, pos), level, view| -> Result<()> {
                used.extend(view.palette_iter());
                for uuid in view.entities() {
                    let in_area = keys::area_entity_key(AreaId::of_chunk(pos), uuid);
                    if self.store().get(tables::ENTITY, uuid)?.is_none()
                        && self.store().get(tables::ENTITY, &in_area)?.is_none()
                    {
                        return Err(Error::Inconsistent(format!(
                            "chunk {pos:?} at {level:?} lists entity {} which is not stored",
                            hex(uuid)
                        )));
                    }
                    entity_refs += 1;
                }
                Ok(())
            },
            progress,
        )?;
        report.entity_refs = entity_refs;
        report.generated_columns = world_distance(self.store())?.len();
        #[cfg(feature = "blockfile")]
        if let Handle::Block(b) = &self.handle {
            let bad = b.verify()?;
            if let Some((t, k, e)) = bad.first() {
                return Err(Error::Inconsistent(format!(
                    "{} damaged objects; first: table {t}, key {}: {e}",
                    bad.len(),
                    hex(k)
                )));
            }
            report.objects_checked = b.stats()?.objects;
        }
        let duplicates = self.duplicate_states_among(&used);
        if !duplicates.is_empty() {
            return Err(Error::DuplicateStates(duplicates));
        }
        Ok(report)
    }

    /// Flushes the backend and makes every save durable against power loss.
    pub fn sync(&self) -> Result<()> {
        self.store().flush()?;
        self.store().sync()?;
        Ok(())
    }

    /// Stops the scheduler (when there is one), syncs, and closes the store. On RocksDB the
    /// sync's flush leaves nothing in the write-ahead log, which RocksDB then deletes: the
    /// closed world holds its tables, not a copy of its recent writes
    /// (`docs/format/rocksdb-v1.md`, "Closing"; a world dropped without `close` flushes the
    /// same way when its store closes, without reporting an error).
    pub fn close(mut self) -> Result<()> {
        if let Some(s) = self.scheduler.take() {
            s.shutdown()?;
        }
        self.sync()
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

// On a closed RocksDB world, `dir_bytes` is its tables and an empty write-ahead log
// (`docs/format/rocksdb-v1.md`, "Closing").
pub(crate) use terrane_store::file::dir_bytes;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saves_nobody_asks_about_keep_one_entry_and_each_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = World::builder().backend(Backend::Memory).create(dir.path()).unwrap();
        for _ in 0..1000 {
            w.save_tick(7, TickSave::new()).unwrap();
        }
        assert_eq!(w.saved_ticks.len(), 1, "an import's saves grew the world's memory");
        for tick in [8, 8, 9] {
            w.save_tick(tick, TickSave::new()).unwrap();
        }
        let landed = w.landed_saves().unwrap();
        assert_eq!(landed.len(), 1003, "one report a save (a server acknowledges by them)");
        assert_eq!(&landed[998..], [7, 7, 8, 8, 9]);
        assert!(w.saved_ticks.is_empty());
    }
}
