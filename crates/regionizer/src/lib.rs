//! Folia's regionizer for 2D column and 3D cubic voxel worlds: loaded chunks grouped into
//! independent regions that tick in parallel, with an earliest-deadline tick scheduler.
//!
//! # Overview
//!
//! - [`Regionizer`]: the state machine of Folia's regionizer (spec:
//!   `docs/spec/regionizer.md`, which corrects Folia where its code and design differ),
//!   generic over [`GridPos`](terrane_section::GridPos): [`ColumnPos`](terrane_section::ColumnPos)
//!   for column worlds, [`ChunkPos`](terrane_section::ChunkPos) for cubic worlds. Chunks are
//!   grouped into sections of `2^shift` chunks per axis; regions own sections and are
//!   TRANSIENT, READY, TICKING or DEAD ([`RegionState`]). [`add_chunk`](Regionizer::add_chunk)
//!   creates empty sections around new chunks and merges nearby regions (now, or later when
//!   they are ticking); [`remove_chunk`](Regionizer::remove_chunk) only updates counts;
//!   [`try_mark_ticking`](Regionizer::try_mark_ticking) /
//!   [`mark_not_ticking`](Regionizer::mark_not_ticking) bracket a tick, and the release absorbs
//!   pending merges, purges dead sections and splits the region into independent ones.
//! - [`RegionizerConfig`]: the five parameters, with Folia's presets
//!   [`folia_shift4`](RegionizerConfig::folia_shift4) (default) and
//!   [`folia_shift2`](RegionizerConfig::folia_shift2), validated by a builder.
//! - [`RegionData`] (per-region user data, merged and split with the regions: a split routes
//!   each element by its section through a [`SplitRoute`]) and [`Callbacks`] (create, destroy,
//!   active, inactive, pre-merge, pre-split).
//! - [`Scheduler`]: worker threads ticking every READY region at a target rate (20 ticks/s by
//!   default), earliest deadline first; per-region [`TickStats`] (duration, lag).
//! - [`check_invariants`](Regionizer::check_invariants): the spec's eight invariants, verified
//!   from scratch.
//! - [`replay`]: the replay tool (`terrane-regionizer-replay`): a text log of operations in,
//!   one JSON state per operation out. Format: `docs/format/regionizer-replay.md`.
//! - [`oplog`]: seeded operation logs for the replay tool (`terrane regionizer generate`),
//!   the same bytes on every machine.
//!
//! # Example
//!
//! ```
//! use terrane_regionizer::{NoCallbacks, RegionState, Regionizer, RegionizerConfig};
//! use terrane_section::ColumnPos;
//!
//! let rz: Regionizer<ColumnPos, ()> = Regionizer::new(RegionizerConfig::folia_shift4(), NoCallbacks);
//! // Two far-apart chunks: two independent regions, both READY.
//! rz.add_chunk(ColumnPos::new(0, 0))?;
//! rz.add_chunk(ColumnPos::new(1000, 0))?;
//! let a = rz.owner_of_chunk(ColumnPos::new(0, 0)).unwrap();
//! assert_eq!(rz.region_count(), 2);
//!
//! // Tick region a. A chunk loaded next to it while it ticks goes to a TRANSIENT region
//! // that merges into a when its tick ends.
//! assert!(rz.try_mark_ticking(a)?);
//! rz.add_chunk(ColumnPos::new(33, 0))?; // section (2, 0): within C + M of a's sections
//! let t = rz.owner_of_chunk(ColumnPos::new(33, 0)).unwrap();
//! assert_eq!(rz.region(t).unwrap().state(), RegionState::Transient);
//! assert!(rz.mark_not_ticking(a)?); // absorbs t; a may tick again
//! assert_eq!(rz.owner_of_chunk(ColumnPos::new(33, 0)), Some(a));
//!
//! // Misuse is a typed error.
//! assert!(rz.add_chunk(ColumnPos::new(0, 0)).is_err());
//! assert!(rz.mark_not_ticking(a).is_err());
//! rz.check_invariants()?;
//! # Ok::<(), terrane_regionizer::Error>(())
//! ```
//!
//! # Concurrency
//!
//! - One writer at a time: the slow paths of `add_chunk` / `remove_chunk`, tick start and end,
//!   and the exact queries take a single write lock. Callbacks and user-data merges/splits run
//!   under it; calling back into the same regionizer from them returns [`Error::Reentrant`]
//!   (a thread-local marker checked on entry), never a deadlock.
//! - Sections live in a `DashMap` from section position to a record holding an atomic owner id
//!   and a small per-section mutex over the chunk count, the chunk presence bits and
//!   `non_empty_neighbours`. The fast path of `add_chunk` (section exists and non-empty) and of
//!   `remove_chunk` (the count stays above zero) take only that section's mutex.
//! - The fast-path / purge race is closed by one rule: **a section's chunk count crosses zero
//!   only under the write lock**. The fast paths check "count > 0" (add) or "count >= 2"
//!   (remove) and change the count in the same critical section of the section mutex; a
//!   purge (under the write lock) only removes sections whose count is zero, re-checks it
//!   under the section mutex, and marks the record `removed` before taking it out of the map.
//!   A fast path that still holds the removed record sees `count == 0` (or `removed`) and falls
//!   back to the slow path, which re-reads the map under the write lock. So a chunk is never
//!   added to a purged section, and dead marks (which change only when a count crosses zero
//!   or `non_empty_neighbours` changes, both under the write lock) are always exact.
//! - [`owner_of_chunk`](Regionizer::owner_of_chunk) reads the atomic owner without the write
//!   lock. It can be stale by the structural operation in flight on another thread: it may name
//!   a region that is merging away or splitting at that instant (its `try_mark_ticking` then
//!   returns false and [`Regionizer::region`] returns `None` or a DEAD handle), or return
//!   `None` for a section being created or purged. Once the operation that changed it has
//!   returned, the lookup is current. [`owner_of_chunk_exact`](Regionizer::owner_of_chunk_exact)
//!   takes the write lock.
//! - A TICKING region's data belongs to its ticker ([`Region::lock_data`]); the regionizer only
//!   touches it inside that region's own `mark_not_ticking`, which fails with
//!   [`Error::DataLocked`] if the guard is still held. The data of other regions is reached
//!   under the write lock with [`with_data`](Regionizer::with_data).
//! - Determinism: ids are allocated in order, merge targets are the largest non-ticking
//!   nearby region (ties: smallest id), merges, splits and callbacks run in sorted order. The
//!   same sequence of operations yields the same regions, ids and callback order.
//!
//! # Features
//!
//! None. The `terrane-regionizer-replay` binary needs nothing beyond the library.
//!
//! # What it does not guarantee
//!
//! - A panic in a callback or in [`RegionData::merge`] / [`split`](RegionData::split) leaves the
//!   structural change half done (Folia has no rollback either): the regionizer is then
//!   poisoned and every later call returns [`Error::Poisoned`] instead of working on broken
//!   state. The panic itself propagates to the caller.
//! - [`check_invariants`](Regionizer::check_invariants), [`loaded_chunks`](Regionizer::loaded_chunks)
//!   and [`snapshot`](Regionizer::snapshot) are exact only at quiescent points (no concurrent
//!   add/remove fast path).
//! - The region partition depends on history and tick timing, not only on the loaded chunks.
//! - Section shifts above [`MAX_SHIFT`] are rejected (chunk presence is a bitset per section).
#![deny(missing_docs)]
#![forbid(unsafe_code)]

mod config;
mod error;
mod invariants;
mod neighbourhood;
pub mod oplog;
mod region;
mod regionizer;
pub mod replay;
mod scheduler;

pub use config::{MAX_RADIUS_SUM, MAX_SHIFT, RegionizerConfig, RegionizerConfigBuilder};
pub use error::{Error, Result};
pub use region::{
    Callbacks, NoCallbacks, Region, RegionData, RegionId, RegionState, SplitRoute, TickStats,
};
pub use regionizer::{RegionSnapshot, Regionizer, RegionizerSnapshot, SectionSnapshot};
pub use scheduler::{Scheduler, SchedulerConfig, TickContext};
