//! terrane: storage and world management for voxel game servers, in one crate.
//!
//! # Overview
//!
//! This is the facade over terrane's member crates. Each is re-exported as a module, so one
//! dependency gives all of them with matching versions:
//!
//! | module | crate | job |
//! |---|---|---|
//! | [`section`] | terrane-section | positions, sections, Morton keys |
//! | [`nbt`] | terrane-nbt | NBT for untrusted bytes: the tree, the bounded reader, the writer |
//! | [`chunk`] | terrane-chunk | the cubic chunk format v1 and the world's registries |
//! | [`store`] | terrane-store | the versioned object store interface, in-memory backend |
//! | `rocksdb` (feature) | terrane-rocksdb | the embedded RocksDB backend |
//! | `blockfile` (feature) | terrane-blockfile | the crash-safe single-file backend |
//! | [`cluster`] | terrane-cluster | clusters and the hot / warm / cold tiered chunk store |
//! | [`regionizer`] | terrane-regionizer | Folia's regionizer and the parallel tick scheduler |
//! | [`distance`] | terrane-distance | the distance graph for nearest-first generation |
//! | [`snapshot`] | terrane-snapshot | arena snapshots, budgeted restore, Sponge schematics |
//! | [`anvil`] | terrane-anvil | Minecraft Java Edition region files in and out |
//! | [`bedrock::format`] | terrane-bedrock | Minecraft Bedrock Edition LevelDB worlds in and out |
//! | [`worldgen`] | terrane-worldgen | terrain as cubic chunks: flat ground, hills from a seed |
//! | [`backup`] | terrane-backup | incremental backups of a store into a repository folder |
//! | [`convert`] | terrane-convert | a Java world folder to a Bedrock one and back |
//!
//! On top of them, [`World`] composes one world directory: the object store (embedded
//! RocksDB by default), the [tiered chunk store](cluster::TieredStore), a
//! [regionizer](regionizer::Regionizer) fed by chunk loads and unloads (optionally with its
//! [scheduler](regionizer::Scheduler) ticking regions in parallel), the
//! [distance graph](distance::DistanceGraph) persisted inside the world, arena
//! [snapshots](snapshot::Snapshot) of boxes, and the atomic save of a tick. [`WorldBuilder`]
//! configures it; every setting has a documented default.
//!
//! [`java`] brings whole Minecraft Java worlds (`level.dat`, the Overworld, the Nether and the
//! End) or single region folders in and out of a [`World`], through terrane-anvil's
//! converter; [`bedrock`] does the same for Bedrock world folders through terrane-bedrock
//! (re-exported as [`bedrock::format`]). [`schem`] carries Sponge schematic block entities in
//! and out of chunks by terrane-anvil's block-entity component convention. [`block_states`]
//! finds one block state stored under several ids (spellings from before the importers
//! canonicalised state strings), which [`World::verify`] reports and
//! [`World::merge_duplicate_states`] merges.
//! [`convert`] (terrane-convert) turns a Java world folder into a new Bedrock one and back,
//! block states translated through terrane-bedrock's table
//! ([`bedrock::format::translate`]), column by column in bounded memory; it opens no
//! [`World`], and its errors reach the facade's as [`Error::Convert`].
//! [`game`] keeps what a game server saves beside its chunks in the same tick save: players
//! (position, inventory, the item on the cursor) and containers (a chest's items);
//! [`window`] decides a player's clicks in an open window as the game does, from the
//! server's own view of its slots.
//! [`World::backup_incremental`] backs a world up into a [`backup::Repo`], writing only what
//! changed since the repository's newest backup ([`World::backup_source`] for a thread of its
//! own while the world saves); [`restore_world`] brings one back as a new world.
//!
//! The World is thin glue: the logic lives in the member crates, and everything it holds is
//! reachable ([`World::tiered`], [`World::regionizer`], [`World::distance`], [`World::store`])
//! for what the glue does not cover.
//!
//! # Example
//!
//! ```
//! use terrane::{Backend, BlockBox, BlockPos, Chunk, ChunkPos, Schema, TickSave, World};
//!
//! let dir = tempfile::tempdir()?;
//! let mut schema = Schema::new();
//! let air = schema.add_block("minecraft:air", &[])?;
//! let stone = schema.add_block("minecraft:stone", &[])?;
//!
//! // Create a world (the doctest uses the in-memory backend; the default is RocksDB).
//! let mut world = World::builder().backend(Backend::Memory).schema(schema).create(dir.path())?;
//!
//! // A player walks in: the chunk loads (absent: the game generates it) and the regionizer
//! // gives it a region.
//! let pos = ChunkPos::new(0, 4, 0);
//! assert!(world.load_chunk(pos)?.is_none());
//! let mut chunk = Chunk::new(air);
//! for x in 0..16 {
//!     for z in 0..16 {
//!         chunk.set(x, 0, z, stone);
//!     }
//! }
//! assert!(world.regionizer().owner_of_chunk(pos).is_some());
//!
//! // Save the tick: chunks, entities, player data and the distance graph in one atomic batch.
//! world.mark_generated(terrane::ColumnPos::new(0, 0))?;
//! let mut save = TickSave::new();
//! save.put_chunk(0, pos, chunk.encode(world.schema()));
//! world.save_tick(1, save)?;
//! assert_eq!(world.get_chunk(pos)?.unwrap().get(3, 0, 3), stone);
//!
//! // Snapshot an arena, break it, put it back.
//! let arena = BlockBox::new(BlockPos::new(0, 64, 0), BlockPos::new(7, 67, 7));
//! let snap = world.capture(arena)?;
//! let mut blocks = world.arena(arena)?;
//! blocks.chunks.get_mut(&pos).unwrap().set(3, 0, 3, air);
//! let stats = snap.restore(&mut blocks, true)?;
//! assert_eq!(stats.written, 1);
//! world.save_arena(2, &blocks)?;
//!
//! // Unload; the regionizer forgets the chunk, the tiered store lets it age towards L1.
//! world.unload_chunk(pos)?;
//! let report = world.verify()?;
//! assert_eq!(report.levels.chunks, [1, 0, 0]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! - `rocksdb` (default): the embedded RocksDB backend, [`Backend::RocksDb`], the default
//!   for new worlds. Needs a C++ compiler and libclang at build time.
//! - `blockfile`: the pure-Rust single-file backend, [`Backend::BlockFile`].
//! - `postgres`: worlds on PostgreSQL, [`Backend::Postgres`]: every `World` constructor takes a
//!   connection string (`postgres://…`, or `host=… dbname=…`, with terrane's `schema=NAME`)
//!   in place of a directory; [`copy::copy_world`] moves a world between any two backends.
//!
//! The in-memory backend ([`Backend::Memory`]) is always built.
//!
//! # Durability
//!
//! [`World::save_tick`] is one atomic batch of the backend: after any crash either the whole
//! tick (chunks, entities, objects, the distance graph, the `gameTick`) is there or none of
//! it. With [`WorldBuilder::sync_saves`] (the default) a returned save also survives power
//! loss; without it, a process crash. See `terrane_store`'s durability section.
//!
//! # What it does not guarantee
//!
//! - The distance graph is persisted with the tick saves: generation completed but not yet
//!   saved is found missing again after a crash (which is what you want: its chunks were not
//!   saved either).
//! - Loaded-chunk state (regionizer, tiered store load set) is memory only: after a restart
//!   nothing is loaded.
//! - One writing process per world at a time (enforced: a second one gets a `Locked` error
//!   naming the holder; read-only opens share a world with each other, not with a writer).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod area_scan;
mod backend;
pub mod backup_changes;
pub mod bedrock;
pub mod block_states;
pub mod copy;
mod dimensions;
mod duplicate_state;
mod error;
pub mod export;
pub mod game;
mod import_mark;
mod imported;
pub mod java;
mod java_containers;
mod java_layout;
mod java_players;
mod loaded_columns;
pub mod refusal;
mod region_columns;
mod restore_area;
pub mod schem;
pub mod shared;
mod sink_error;
pub mod stats;
mod trim;
pub mod window;
mod world;
mod world_backup;
mod world_dir;

pub use backend::{Backend, SIGNATURE, connection_string};
pub use block_states::{DuplicateState, MergeReport};
pub use dimensions::{DISTANCE_KEY, dimension_distance, dimension_distance_key};
pub use error::{Error, Result};
pub use loaded_columns::{ChangesPut, LoadedColumns};
pub use refusal::Refusal;
pub use restore_area::{AreaRestoreReport, BoxRestoreReport};
pub use trim::{TrimOptions, TrimReport};
pub use world::{
    VerifyReport, World, WorldBuilder, WorldInfo, default_schema, distance_key, world_distance,
};
pub use world_backup::{
    BackupSource, RESTORING_KEY, ScheduledBackup, restore_world, restore_world_with,
};
pub use world_dir::IMPORTING_KEY;

/// terrane-anvil: Minecraft Java Edition worlds in and out.
pub use terrane_anvil as anvil;
/// Incremental backups of a world into a repository folder (terrane-backup).
pub use terrane_backup as backup;
/// terrane-blockfile: the crash-safe single-file backend (feature `blockfile`).
#[cfg(feature = "blockfile")]
pub use terrane_blockfile as blockfile;
/// terrane-chunk: the cubic chunk format v1 and the world's registries.
pub use terrane_chunk as chunk;
/// terrane-cluster: the cluster container and the tiered chunk store.
pub use terrane_cluster as cluster;
/// terrane-convert: a Java world folder to a Bedrock world folder and back.
pub use terrane_convert as convert;
/// terrane-distance: the distance graph for nearest-first generation.
pub use terrane_distance as distance;
/// terrane-lease: leased areas of a world shared by several servers.
pub use terrane_lease as lease;
/// terrane-nbt: NBT (Java Edition), the workspace's one implementation.
pub use terrane_nbt as nbt;
#[cfg(feature = "postgres")]
#[doc(inline)]
pub use terrane_postgres as postgres;
/// terrane-regionizer: Folia's regionizer and the tick scheduler.
pub use terrane_regionizer as regionizer;
/// terrane-rocksdb: the RocksDB backend (feature `rocksdb`, default).
#[cfg(feature = "rocksdb")]
pub use terrane_rocksdb as rocksdb;
/// terrane-section: positions, sections and Morton keys.
pub use terrane_section as section;
/// terrane-snapshot: arena snapshots and Sponge schematics.
pub use terrane_snapshot as snapshot;
/// terrane-store: the object store interface and the in-memory backend.
pub use terrane_store as store;
/// terrane-worldgen: terrain as cubic chunks, flat ground and hills from a seed.
pub use terrane_worldgen as worldgen;

// The common types, by name.
pub use terrane_chunk::{BlockId, Chunk, ChunkView, ComponentKind, Schema, Uuid};
pub use terrane_cluster::{LevelStats, PlayerPos, TickSave, TieredStore};
pub use terrane_distance::{DistanceGraph, SharedDistanceGraph};
pub use terrane_regionizer::{
    RegionId, RegionState, Regionizer, RegionizerConfig, Scheduler, SchedulerConfig, TickContext,
};
pub use terrane_section::keys::Level;
pub use terrane_section::{BlockPos, ChunkPos, ColumnPos, GridPos};
pub use terrane_snapshot::{BlockBox, ChunkWorld, QueueConfig, RestoreQueue, Schematic, Snapshot};
pub use terrane_store::{Batch, MemStore, Object, ReadView, Store, StoreConfig, tables};
