//! Region ids, states, user data, callbacks and the public region handle.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::{MappedMutexGuard, Mutex, MutexGuard};
use terrane_section::GridPos;

use crate::{Error, Result};

/// A region's identity: unique within one regionizer, never reused, allocated in increasing
/// order (so a replay of the same operations yields the same ids).
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct RegionId(pub(crate) u64);

impl RegionId {
    /// The raw id (`>= 1`).
    pub fn get(self) -> u64 {
        self.0
    }
}

impl fmt::Display for RegionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// The four states of a region (spec: "Terms").
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
#[repr(u8)]
pub enum RegionState {
    /// Pending a merge into a ticking region: may not tick.
    Transient = 0,
    /// May start ticking ([`Regionizer::try_mark_ticking`](crate::Regionizer::try_mark_ticking)).
    Ready = 1,
    /// Ticking: its section set is frozen until `mark_not_ticking`.
    Ticking = 2,
    /// Merged away, split, or emptied: no longer part of the regionizer.
    Dead = 3,
}

impl RegionState {
    pub(crate) fn from_u8(v: u8) -> Self {
        match v {
            0 => Self::Transient,
            1 => Self::Ready,
            2 => Self::Ticking,
            _ => Self::Dead,
        }
    }

    /// Lower-case name as in the replay format (`"transient"`, `"ready"`, `"ticking"`, `"dead"`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Transient => "transient",
            Self::Ready => "ready",
            Self::Ticking => "ticking",
            Self::Dead => "dead",
        }
    }
}

/// Where each section goes when a region splits: handed to [`RegionData::split`].
#[derive(Debug)]
pub struct SplitRoute<'a, P: GridPos> {
    pub(crate) map: &'a ahash::AHashMap<P, usize>,
    pub(crate) shift: u32,
    pub(crate) ids: &'a [RegionId],
}

impl<P: GridPos> SplitRoute<'_, P> {
    /// Index into `into` of the new region owning `section`, or `None` for a section the old
    /// region no longer owns (a purged dead section: it held no chunk).
    pub fn region_of_section(&self, section: P) -> Option<usize> {
        self.map.get(&section).copied()
    }
    /// Index into `into` of the new region owning the section of `chunk`.
    pub fn region_of_chunk(&self, chunk: P) -> Option<usize> {
        self.region_of_section(chunk.section(self.shift))
    }
    /// The new regions' ids, in the order of `into`.
    pub fn ids(&self) -> &[RegionId] {
        self.ids
    }
    /// The section shift (to map chunk positions yourself).
    pub fn shift(&self) -> u32 {
        self.shift
    }
}

/// Per-region user data (e.g. the entities and scheduled tasks of the region's chunks).
///
/// Created by [`Callbacks::new_data`], merged when regions merge, split when a region splits.
/// Both run under the regionizer's write lock and must not call back into it.
pub trait RegionData<P: GridPos>: Send + 'static {
    /// Absorb `from` (the data of a region merging into this one).
    fn merge(&mut self, from: Self)
    where
        Self: Sized;
    /// Move every element to `into[route.region_of_section(its section)]`; `into` holds the
    /// freshly created data of the new regions, in the order of `route.ids()`.
    fn split(&mut self, route: &SplitRoute<'_, P>, into: &mut [Self])
    where
        Self: Sized;
}

impl<P: GridPos> RegionData<P> for () {
    fn merge(&mut self, _: Self) {}
    fn split(&mut self, _: &SplitRoute<'_, P>, _: &mut [Self]) {}
}

/// Lifecycle callbacks and the data constructor. All run under the regionizer's write lock,
/// on the thread whose operation caused them; calling back into the same regionizer from
/// one returns [`Error::Reentrant`]. Order per region: `on_create` first; then
/// `on_active` / `on_inactive` alternating, starting with `on_active`; `on_destroy` last,
/// once, when the region is DEAD. A panic in a callback poisons the regionizer
/// ([`Error::Poisoned`]).
pub trait Callbacks<P: GridPos, D>: Send + Sync + 'static {
    /// The data of a new region (created by an `add_chunk` or a split).
    fn new_data(&self, region: RegionId) -> D;
    /// A region was created (before any other callback about it).
    fn on_create(&self, _region: RegionId) {}
    /// A region died (merged away, split, or emptied by a purge).
    fn on_destroy(&self, _region: RegionId) {}
    /// A region became READY from creation or split: schedule it for ticking.
    fn on_active(&self, _region: RegionId) {}
    /// A READY or TICKING region became TRANSIENT or DEAD: unschedule it.
    fn on_inactive(&self, _region: RegionId) {}
    /// `from` is about to merge into `into` (its data is merged right after).
    fn pre_merge(&self, _from: RegionId, _into: RegionId) {}
    /// `from` is about to split into `into` (created just before; data split right after).
    fn pre_split(&self, _from: RegionId, _into: &[RegionId]) {}
}

/// Callbacks that do nothing, with `D::default()` as the data of new regions.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoCallbacks;

impl<P: GridPos, D: Default> Callbacks<P, D> for NoCallbacks {
    fn new_data(&self, _: RegionId) -> D {
        D::default()
    }
}

/// Tick statistics of one region, recorded by the scheduler (or by your own loop through
/// [`Region::record_tick`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TickStats {
    /// Ticks recorded.
    pub ticks: u64,
    /// Duration of the last tick.
    pub last_duration: Duration,
    /// How late the last tick started after its deadline.
    pub last_lag: Duration,
    /// Largest lag recorded.
    pub max_lag: Duration,
    /// Sum of all tick durations.
    pub total_duration: Duration,
}

pub(crate) struct Shared<D> {
    pub(crate) id: RegionId,
    pub(crate) state: AtomicU8,
    pub(crate) data: Mutex<Option<D>>,
    ticks: AtomicU64,
    last_ns: AtomicU64,
    lag_ns: AtomicU64,
    max_lag_ns: AtomicU64,
    total_ns: AtomicU64,
}

impl<D> Shared<D> {
    pub(crate) fn new(id: RegionId, data: D) -> Self {
        Self {
            id,
            state: AtomicU8::new(RegionState::Transient as u8),
            data: Mutex::new(Some(data)),
            ticks: AtomicU64::new(0),
            last_ns: AtomicU64::new(0),
            lag_ns: AtomicU64::new(0),
            max_lag_ns: AtomicU64::new(0),
            total_ns: AtomicU64::new(0),
        }
    }
}

/// A handle on a region, obtained without the write lock from
/// [`Regionizer::region`](crate::Regionizer::region). It stays valid after the region dies
/// (its state then reads DEAD and its data is gone).
pub struct Region<D> {
    pub(crate) shared: Arc<Shared<D>>,
}

impl<D> Clone for Region<D> {
    fn clone(&self) -> Self {
        Self { shared: Arc::clone(&self.shared) }
    }
}

impl<D> fmt::Debug for Region<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Region").field("id", &self.id()).field("state", &self.state()).finish()
    }
}

fn ns(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl<D> Region<D> {
    /// The region's id.
    pub fn id(&self) -> RegionId {
        self.shared.id
    }

    /// The region's state (read without the write lock: may be momentarily stale).
    pub fn state(&self) -> RegionState {
        RegionState::from_u8(self.shared.state.load(Ordering::Acquire))
    }

    /// The region's data, for its ticker: only while the region is TICKING (after your
    /// `try_mark_ticking` returned true and before your `mark_not_ticking`). Drop the guard
    /// before `mark_not_ticking` (else that returns [`Error::DataLocked`]). The data of
    /// non-ticking regions is reached with
    /// [`Regionizer::with_data`](crate::Regionizer::with_data).
    ///
    /// # Errors
    /// [`Error::NotTicking`] when the region is not TICKING.
    pub fn lock_data(&self) -> Result<MappedMutexGuard<'_, D>> {
        let g = self.shared.data.lock();
        let state = self.state();
        if state != RegionState::Ticking || g.is_none() {
            return Err(Error::NotTicking { region: self.id(), state });
        }
        Ok(MutexGuard::map(g, |d| d.as_mut().expect("checked above")))
    }

    /// Records one tick: `lag` is how late it started after its deadline.
    pub fn record_tick(&self, duration: Duration, lag: Duration) {
        let s = &self.shared;
        s.ticks.fetch_add(1, Ordering::Relaxed);
        s.last_ns.store(ns(duration), Ordering::Relaxed);
        s.lag_ns.store(ns(lag), Ordering::Relaxed);
        s.max_lag_ns.fetch_max(ns(lag), Ordering::Relaxed);
        s.total_ns.fetch_add(ns(duration), Ordering::Relaxed);
    }

    /// The tick statistics recorded so far (each field read atomically; the set may be torn
    /// by a concurrent `record_tick`).
    pub fn stats(&self) -> TickStats {
        let s = &self.shared;
        TickStats {
            ticks: s.ticks.load(Ordering::Relaxed),
            last_duration: Duration::from_nanos(s.last_ns.load(Ordering::Relaxed)),
            last_lag: Duration::from_nanos(s.lag_ns.load(Ordering::Relaxed)),
            max_lag: Duration::from_nanos(s.max_lag_ns.load(Ordering::Relaxed)),
            total_duration: Duration::from_nanos(s.total_ns.load(Ordering::Relaxed)),
        }
    }
}
