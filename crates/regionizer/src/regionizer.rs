//! The regionizer state machine (spec: `docs/spec/regionizer.md`).

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use ahash::AHashMap;
use dashmap::DashMap;
use parking_lot::{Mutex, MutexGuard};
use terrane_section::GridPos;

use crate::region::Shared;
use crate::{
    Callbacks, Error, Region, RegionData, RegionId, RegionState, RegionizerConfig, Result,
    SplitRoute,
};

type Map<K, V> = DashMap<K, V, ahash::RandomState>;

/// One section: its owner (readable without the write lock) and its chunk bookkeeping.
pub(crate) struct Section {
    /// Owning region id, 0 while a freshly created section is not yet assigned.
    pub(crate) owner: AtomicU64,
    pub(crate) st: Mutex<SecState>,
}

pub(crate) struct SecState {
    pub(crate) count: u32,
    pub(crate) nen: u32,
    /// Chunk presence by local index, allocated with the first chunk.
    pub(crate) bits: Box<[u64]>,
    /// Set when purged: a late fast path holding the `Arc` must not use it.
    pub(crate) removed: bool,
}

impl SecState {
    fn has(&self, i: usize) -> bool {
        self.bits.get(i / 64).is_some_and(|w| w >> (i % 64) & 1 == 1)
    }
    fn set(&mut self, i: usize, words: usize) {
        if self.bits.is_empty() {
            self.bits = vec![0; words].into_boxed_slice();
        }
        self.bits[i / 64] |= 1 << (i % 64);
    }
    fn clear(&mut self, i: usize) {
        self.bits[i / 64] &= !(1 << (i % 64));
    }
    pub(crate) fn popcount(&self) -> u32 {
        self.bits.iter().map(|w| w.count_ones()).sum()
    }
}

impl Section {
    fn new(nen: u32) -> Self {
        Self {
            owner: AtomicU64::new(0),
            st: Mutex::new(SecState { count: 0, nen, bits: Box::new([]), removed: false }),
        }
    }
    fn owner(&self) -> RegionId {
        RegionId(self.owner.load(Ordering::Acquire))
    }
}

pub(crate) struct RegionRec<P, D> {
    pub(crate) shared: Arc<Shared<D>>,
    pub(crate) state: RegionState,
    pub(crate) active: bool,
    pub(crate) sections: BTreeSet<P>,
    pub(crate) dead: BTreeSet<P>,
    pub(crate) mil: BTreeSet<RegionId>,
    pub(crate) emf: BTreeSet<RegionId>,
    /// The section set when the current tick began (debug builds): invariant 7 compares it
    /// with the set as it is, so a change by any path is caught, not only the ones that say so.
    #[cfg(debug_assertions)]
    pub(crate) ticking_sections: Option<BTreeSet<P>>,
}

pub(crate) struct Inner<P, D> {
    pub(crate) regions: BTreeMap<RegionId, RegionRec<P, D>>,
    pub(crate) next_id: u64,
}

thread_local! {
    /// Instances whose callbacks are running on this thread (innermost last).
    static IN_CALLBACK: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);

struct CallbackScope;

impl CallbackScope {
    fn enter(instance: u64) -> Self {
        IN_CALLBACK.with(|v| v.borrow_mut().push(instance));
        CallbackScope
    }
}

impl Drop for CallbackScope {
    fn drop(&mut self) {
        IN_CALLBACK.with(|v| v.borrow_mut().pop());
    }
}

/// The write lock; poisons the regionizer when dropped during a panic.
pub(crate) struct WriteGuard<'a, P, D> {
    g: MutexGuard<'a, Inner<P, D>>,
    poisoned: &'a AtomicBool,
}

impl<P, D> Deref for WriteGuard<'_, P, D> {
    type Target = Inner<P, D>;
    fn deref(&self) -> &Inner<P, D> {
        &self.g
    }
}

impl<P, D> DerefMut for WriteGuard<'_, P, D> {
    fn deref_mut(&mut self) -> &mut Inner<P, D> {
        &mut self.g
    }
}

impl<P, D> Drop for WriteGuard<'_, P, D> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.poisoned.store(true, Ordering::Release);
        }
    }
}

/// Folia's regionizer over positions `P` ([`ColumnPos`](terrane_section::ColumnPos) for
/// column worlds, [`ChunkPos`](terrane_section::ChunkPos) for cubic worlds) with per-region
/// data `D`.
///
/// Thread safe: share it in an `Arc`. See the crate docs for the locking design.
pub struct Regionizer<P: GridPos, D: RegionData<P>> {
    cfg: RegionizerConfig,
    words: usize,
    pub(crate) sections: Map<P, Arc<Section>>,
    live: Map<RegionId, Arc<Shared<D>>>,
    pub(crate) inner: Mutex<Inner<P, D>>,
    callbacks: Box<dyn Callbacks<P, D>>,
    poisoned: AtomicBool,
    instance: u64,
}

impl<P: GridPos, D: RegionData<P>> std::fmt::Debug for Regionizer<P, D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Regionizer")
            .field("config", &self.cfg)
            .field("sections", &self.sections.len())
            .field("regions", &self.live.len())
            .finish()
    }
}

impl<P: GridPos, D: RegionData<P>> Regionizer<P, D> {
    /// An empty regionizer with `config` and `callbacks` (use
    /// [`NoCallbacks`](crate::NoCallbacks) when `D: Default` and nothing needs notifying).
    pub fn new(config: RegionizerConfig, callbacks: impl Callbacks<P, D>) -> Self {
        Self::with_boxed_callbacks(config, Box::new(callbacks))
    }

    /// [`new`](Self::new) with already boxed callbacks.
    pub fn with_boxed_callbacks(
        config: RegionizerConfig,
        callbacks: Box<dyn Callbacks<P, D>>,
    ) -> Self {
        let bits = (config.shift as usize) * P::DIMS;
        Self {
            cfg: config,
            words: (1usize << bits).div_ceil(64),
            sections: Map::default(),
            live: Map::default(),
            inner: Mutex::new(Inner { regions: BTreeMap::new(), next_id: 1 }),
            callbacks,
            poisoned: AtomicBool::new(false),
            instance: NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &RegionizerConfig {
        &self.cfg
    }

    fn enter(&self) -> Result<()> {
        if self.poisoned.load(Ordering::Acquire) {
            return Err(Error::Poisoned);
        }
        if IN_CALLBACK.with(|v| v.borrow().contains(&self.instance)) {
            return Err(Error::Reentrant);
        }
        Ok(())
    }

    pub(crate) fn write(&self) -> Result<WriteGuard<'_, P, D>> {
        self.enter()?;
        let g = self.inner.lock();
        if self.poisoned.load(Ordering::Acquire) {
            return Err(Error::Poisoned);
        }
        Ok(WriteGuard { g, poisoned: &self.poisoned })
    }

    fn cb<R>(&self, f: impl FnOnce(&dyn Callbacks<P, D>) -> R) -> R {
        let _scope = CallbackScope::enter(self.instance);
        f(&*self.callbacks)
    }

    fn user<R>(&self, f: impl FnOnce() -> R) -> R {
        let _scope = CallbackScope::enter(self.instance);
        f()
    }

    pub(crate) fn sec(&self, p: P) -> Option<Arc<Section>> {
        self.sections.get(&p).map(|r| Arc::clone(r.value()))
    }

    fn coords(p: P) -> Vec<i64> {
        p.coords().as_ref().to_vec()
    }

    // ----- chunks -----------------------------------------------------------------------

    /// Loads `chunk`. The fast path (its section exists and holds a chunk) takes only that
    /// section's lock; otherwise the write lock is taken, empty sections are created around
    /// it and nearby regions merge (now, or later when they are ticking).
    ///
    /// # Errors
    /// [`Error::DuplicateChunk`] if already loaded; [`Error::Reentrant`] from a callback;
    /// [`Error::Poisoned`].
    pub fn add_chunk(&self, chunk: P) -> Result<()> {
        self.enter()?;
        let shift = self.cfg.shift;
        let c = chunk.section(shift);
        let idx = chunk.local_index(shift);
        if let Some(s) = self.sec(c) {
            let mut st = s.st.lock();
            if !st.removed && st.count > 0 {
                if st.has(idx) {
                    return Err(Error::DuplicateChunk { chunk: Self::coords(chunk) });
                }
                st.set(idx, self.words);
                st.count += 1;
                return Ok(());
            }
        }
        let mut w = self.write()?;
        self.add_slow(&mut w, chunk, c, idx)
    }

    fn add_slow(&self, inner: &mut Inner<P, D>, chunk: P, c: P, idx: usize) -> Result<()> {
        let cr = self.cfg.create_radius;
        let (centre, fresh) = match self.sec(c) {
            Some(s) => (s, false),
            None => (Arc::new(Section::new(0)), true),
        };
        {
            let mut st = centre.st.lock();
            if st.has(idx) {
                return Err(Error::DuplicateChunk { chunk: Self::coords(chunk) });
            }
            st.set(idx, self.words);
            st.count += 1;
            if st.count > 1 {
                // Another thread's slow path made it non-empty meanwhile: nothing else to do.
                return Ok(());
            }
            if !fresh && st.nen == 0 {
                drop(st);
                self.dead_remove(inner, c, &centre);
            }
        }
        let mut created = Vec::new();
        if fresh {
            self.sections.insert(c, centre);
            created.push(c);
        }
        for q in c.within(cr) {
            if q == c {
                continue;
            }
            match self.sec(q) {
                Some(s) => {
                    let mut st = s.st.lock();
                    let was_dead = st.count == 0 && st.nen == 0;
                    st.nen += 1;
                    drop(st);
                    if was_dead {
                        self.dead_remove(inner, q, &s);
                    }
                }
                None => {
                    // By invariant 2 no other non-empty section is within C of q.
                    self.sections.insert(q, Arc::new(Section::new(1)));
                    created.push(q);
                }
            }
        }
        let mut nearby = BTreeSet::new();
        for q in c.within(cr + self.cfg.merge_radius) {
            if let Some(s) = self.sec(q) {
                let o = s.owner.load(Ordering::Acquire);
                if o != 0 {
                    nearby.insert(RegionId(o));
                }
            }
        }
        if created.is_empty() {
            return Ok(());
        }
        // Target: the largest non-ticking nearby region, ties to the smallest id.
        let target = nearby
            .iter()
            .filter(|r| inner.regions[r].state != RegionState::Ticking)
            .max_by_key(|r| (inner.regions[r].sections.len(), std::cmp::Reverse(**r)))
            .copied();
        let t = match target {
            Some(t) => {
                self.give_sections(inner, t, created);
                t
            }
            None => self.new_region(inner, created),
        };
        for &y in &nearby {
            if y == t {
                continue;
            }
            if inner.regions[&y].state == RegionState::Ticking {
                inner.regions.get_mut(&t).expect("live").mil.insert(y);
                inner.regions.get_mut(&y).expect("live").emf.insert(t);
            } else {
                self.merge_now(inner, y, t, None);
            }
        }
        let next = if inner.regions[&t].mil.is_empty() {
            RegionState::Ready
        } else {
            RegionState::Transient
        };
        self.set_state(inner, t, next);
        Ok(())
    }

    /// Unloads `chunk`: updates counts and dead marks only (sections are purged later, at a
    /// `mark_not_ticking`). The fast path (the section keeps a chunk) takes only the
    /// section's lock.
    ///
    /// # Errors
    /// [`Error::ChunkNotLoaded`]; [`Error::Reentrant`]; [`Error::Poisoned`].
    pub fn remove_chunk(&self, chunk: P) -> Result<()> {
        self.enter()?;
        let shift = self.cfg.shift;
        let c = chunk.section(shift);
        let idx = chunk.local_index(shift);
        let not_loaded = || Error::ChunkNotLoaded { chunk: Self::coords(chunk) };
        {
            let Some(s) = self.sec(c) else { return Err(not_loaded()) };
            let mut st = s.st.lock();
            if st.removed || !st.has(idx) {
                return Err(not_loaded());
            }
            if st.count >= 2 {
                st.clear(idx);
                st.count -= 1;
                return Ok(());
            }
        }
        let mut w = self.write()?;
        let inner = &mut *w;
        let Some(s) = self.sec(c) else { return Err(not_loaded()) };
        let mut st = s.st.lock();
        if !st.has(idx) {
            return Err(not_loaded());
        }
        st.clear(idx);
        st.count -= 1;
        if st.count > 0 {
            return Ok(());
        }
        let now_dead = st.nen == 0;
        drop(st);
        if now_dead {
            self.dead_add(inner, c, &s);
        }
        for q in c.within(self.cfg.create_radius) {
            if q == c {
                continue;
            }
            let s = self.sec(q).expect("invariant 2: sections exist within C of a non-empty one");
            let mut st = s.st.lock();
            st.nen -= 1;
            let dead = st.count == 0 && st.nen == 0;
            drop(st);
            if dead {
                self.dead_add(inner, q, &s);
            }
        }
        Ok(())
    }

    fn dead_add(&self, inner: &mut Inner<P, D>, p: P, s: &Section) {
        if let Some(r) = inner.regions.get_mut(&s.owner()) {
            r.dead.insert(p);
        }
    }

    fn dead_remove(&self, inner: &mut Inner<P, D>, p: P, s: &Section) {
        if let Some(r) = inner.regions.get_mut(&s.owner()) {
            r.dead.remove(&p);
        }
    }

    // ----- regions ----------------------------------------------------------------------

    fn give_sections(&self, inner: &mut Inner<P, D>, to: RegionId, secs: Vec<P>) {
        let rec = inner.regions.get_mut(&to).expect("live");
        for p in secs {
            let s = self.sec(p).expect("section exists");
            s.owner.store(to.0, Ordering::Release);
            let st = s.st.lock();
            if st.count == 0 && st.nen == 0 {
                rec.dead.insert(p);
            }
            drop(st);
            rec.sections.insert(p);
        }
    }

    /// Creates a region owning `secs` (state TRANSIENT, inactive until `set_state`).
    fn new_region(&self, inner: &mut Inner<P, D>, secs: Vec<P>) -> RegionId {
        let id = RegionId(inner.next_id);
        inner.next_id += 1;
        let data = self.cb(|c| c.new_data(id));
        let shared = Arc::new(Shared::new(id, data));
        inner.regions.insert(
            id,
            RegionRec {
                shared: Arc::clone(&shared),
                state: RegionState::Transient,
                active: false,
                sections: BTreeSet::new(),
                dead: BTreeSet::new(),
                mil: BTreeSet::new(),
                emf: BTreeSet::new(),
                #[cfg(debug_assertions)]
                ticking_sections: None,
            },
        );
        self.live.insert(id, shared);
        self.give_sections(inner, id, secs);
        self.cb(|c| c.on_create(id));
        id
    }

    fn set_state(&self, inner: &mut Inner<P, D>, id: RegionId, new: RegionState) {
        let rec = inner.regions.get_mut(&id).expect("live");
        rec.state = new;
        rec.shared.state.store(new as u8, Ordering::Release);
        let want = matches!(new, RegionState::Ready | RegionState::Ticking);
        if want && !rec.active {
            rec.active = true;
            self.cb(|c| c.on_active(id));
        } else if !want && rec.active {
            rec.active = false;
            self.cb(|c| c.on_inactive(id));
        }
    }

    /// Marks `id` DEAD (inactive first if active), unregisters it, then `on_destroy`. Its
    /// data must already have been moved out (or is dropped here).
    fn kill(&self, inner: &mut Inner<P, D>, id: RegionId) {
        self.set_state(inner, id, RegionState::Dead);
        let rec = inner.regions.remove(&id).expect("live");
        self.live.remove(&id);
        if let Some(g) = rec.shared.data.try_lock() {
            let mut g = g;
            let d = g.take();
            drop(g);
            self.user(|| drop(d));
        }
        self.cb(|c| c.on_destroy(id));
    }

    /// Merges `from` (not ticking) into `into`; `held` is `into`'s data when the caller holds
    /// its lock.
    fn merge_now(
        &self,
        inner: &mut Inner<P, D>,
        from: RegionId,
        into: RegionId,
        held: Option<&mut Option<D>>,
    ) {
        self.cb(|c| c.pre_merge(from, into));
        let y = inner.regions.get_mut(&from).expect("live");
        let secs = std::mem::take(&mut y.sections);
        let dead = std::mem::take(&mut y.dead);
        let mil = std::mem::take(&mut y.mil);
        debug_assert!(y.emf.is_empty(), "a non-ticking region expects no merges");
        let ydata = y.shared.data.lock().take();
        for &z in &mil {
            if z == into {
                continue;
            }
            let zr = inner.regions.get_mut(&z).expect("merge-later targets are live");
            zr.emf.remove(&from);
            zr.emf.insert(into);
        }
        let t = inner.regions.get_mut(&into).expect("live");
        for p in secs {
            if let Some(s) = self.sec(p) {
                s.owner.store(into.0, Ordering::Release);
            }
            t.sections.insert(p);
        }
        t.dead.extend(dead);
        t.mil.extend(mil.into_iter().filter(|&z| z != into));
        t.emf.remove(&from);
        if let Some(yd) = ydata {
            match held {
                Some(slot) => {
                    if let Some(td) = slot.as_mut() {
                        self.user(|| td.merge(yd));
                    }
                }
                None => {
                    let shared = Arc::clone(&t.shared);
                    let mut g = shared.data.lock();
                    if let Some(td) = g.as_mut() {
                        self.user(|| td.merge(yd));
                    }
                }
            }
        }
        self.kill(inner, from);
    }

    /// Moves region `id` from READY to TICKING. Returns false (and changes nothing) when it
    /// is not READY, including when it has died: a region scheduled as READY may have become
    /// TRANSIENT or merged away meanwhile.
    ///
    /// # Errors
    /// [`Error::UnknownRegion`] for an id never handed out; [`Error::Reentrant`];
    /// [`Error::Poisoned`].
    pub fn try_mark_ticking(&self, id: RegionId) -> Result<bool> {
        let mut w = self.write()?;
        let inner = &mut *w;
        let Some(rec) = inner.regions.get_mut(&id) else {
            return if id.0 > 0 && id.0 < inner.next_id {
                Ok(false)
            } else {
                Err(Error::UnknownRegion(id))
            };
        };
        if rec.state != RegionState::Ready {
            return Ok(false);
        }
        #[cfg(debug_assertions)]
        {
            rec.ticking_sections = Some(rec.sections.clone());
        }
        self.set_state(inner, id, RegionState::Ticking);
        Ok(true)
    }

    /// Ends the tick of region `id`: absorbs the regions waiting to merge into it, then turns
    /// TRANSIENT (if it must itself merge into another ticking region), or purges its dead
    /// sections and splits into independent regions when the spec's rule says so. Returns
    /// whether this same region may be ticked again (it is READY).
    ///
    /// # Errors
    /// [`Error::NotTicking`] unless TICKING (nothing changes); [`Error::DataLocked`] while
    /// a [`Region::lock_data`] guard of it is alive; [`Error::UnknownRegion`];
    /// [`Error::Reentrant`]; [`Error::Poisoned`].
    pub fn mark_not_ticking(&self, id: RegionId) -> Result<bool> {
        let mut w = self.write()?;
        let inner = &mut *w;
        let Some(rec) = inner.regions.get_mut(&id) else {
            return Err(if id.0 > 0 && id.0 < inner.next_id {
                Error::NotTicking { region: id, state: RegionState::Dead }
            } else {
                Error::UnknownRegion(id)
            });
        };
        if rec.state != RegionState::Ticking {
            return Err(Error::NotTicking { region: id, state: rec.state });
        }
        let shared = Arc::clone(&rec.shared);
        let Some(mut guard) = shared.data.try_lock() else {
            return Err(Error::DataLocked(id));
        };
        // 1. absorb the regions expecting to merge into this one.
        let absorb = std::mem::take(&mut rec.emf);
        let absorbed = !absorb.is_empty();
        for x in absorb {
            inner.regions.get_mut(&x).expect("live").mil.remove(&id);
            self.merge_now(inner, x, id, Some(&mut guard));
        }
        let rec = inner.regions.get_mut(&id).expect("live");
        // 2. pending a merge into another ticking region: TRANSIENT.
        if !rec.mil.is_empty() {
            drop(guard);
            self.set_state(inner, id, RegionState::Transient);
            return Ok(false);
        }
        // 3. purge dead sections?
        let total = rec.sections.len();
        let dead = rec.dead.len();
        let purge = absorbed
            || dead == total
            || (total >= self.cfg.recalc_count
                && dead as f64 / total as f64 >= self.cfg.max_dead_fraction);
        if !purge || dead == 0 {
            drop(guard);
            self.set_state(inner, id, RegionState::Ready);
            return Ok(true);
        }
        for p in std::mem::take(&mut rec.dead) {
            rec.sections.remove(&p);
            if let Some((_, s)) = self.sections.remove(&p) {
                let mut st = s.st.lock();
                debug_assert!(st.count == 0 && st.nen == 0, "only dead sections are purged");
                st.removed = true;
                s.owner.store(0, Ordering::Release);
            }
        }
        // 4. empty: DEAD.
        if rec.sections.is_empty() {
            let d = guard.take();
            drop(guard);
            self.user(|| drop(d));
            self.kill(inner, id);
            return Ok(false);
        }
        // 5. split into connected components (adjacent iff d <= max(M, C)).
        let comps = components(&rec.sections, self.cfg.merge_radius.max(self.cfg.create_radius));
        if comps.len() == 1 {
            drop(guard);
            self.set_state(inner, id, RegionState::Ready);
            return Ok(true);
        }
        let mut route = AHashMap::new();
        for (i, comp) in comps.iter().enumerate() {
            for &p in comp {
                route.insert(p, i);
            }
        }
        inner.regions.get_mut(&id).expect("live").sections.clear();
        let ids: Vec<RegionId> = comps.into_iter().map(|c| self.new_region(inner, c)).collect();
        self.cb(|c| c.pre_split(id, &ids));
        let mut parts: Vec<D> = ids
            .iter()
            .map(|n| inner.regions[n].shared.data.lock().take().expect("fresh data"))
            .collect();
        if let Some(mut old) = guard.take() {
            let r = SplitRoute { map: &route, shift: self.cfg.shift, ids: &ids };
            self.user(|| {
                old.split(&r, &mut parts);
                drop(old);
            });
        }
        drop(guard);
        for (n, d) in ids.iter().zip(parts) {
            *inner.regions[n].shared.data.lock() = Some(d);
        }
        self.kill(inner, id);
        for &n in &ids {
            self.set_state(inner, n, RegionState::Ready);
        }
        Ok(false)
    }

    // ----- lookups ----------------------------------------------------------------------

    /// The region owning `section`, read without the write lock. It may be stale by one
    /// structural operation in flight on another thread: a region that is merging away
    /// at this moment (its id then reads DEAD / `try_mark_ticking` returns false), or `None`
    /// for a section being created. Use [`owner_of_section_exact`](Self::owner_of_section_exact)
    /// for a synchronised answer.
    pub fn owner_of_section(&self, section: P) -> Option<RegionId> {
        let o = self.sections.get(&section)?.owner.load(Ordering::Acquire);
        (o != 0).then_some(RegionId(o))
    }

    /// The region owning the section of `chunk` (unsynchronised, see
    /// [`owner_of_section`](Self::owner_of_section)).
    pub fn owner_of_chunk(&self, chunk: P) -> Option<RegionId> {
        self.owner_of_section(chunk.section(self.cfg.shift))
    }

    /// The region owning `section`, under the write lock: exact at the time of the call.
    ///
    /// # Errors
    /// [`Error::Reentrant`]; [`Error::Poisoned`].
    pub fn owner_of_section_exact(&self, section: P) -> Result<Option<RegionId>> {
        let _w = self.write()?;
        Ok(self.owner_of_section(section))
    }

    /// The region owning the section of `chunk`, exact (see
    /// [`owner_of_section_exact`](Self::owner_of_section_exact)).
    ///
    /// # Errors
    /// As [`owner_of_section_exact`](Self::owner_of_section_exact).
    pub fn owner_of_chunk_exact(&self, chunk: P) -> Result<Option<RegionId>> {
        self.owner_of_section_exact(chunk.section(self.cfg.shift))
    }

    /// Whether `chunk` is loaded (unsynchronised).
    pub fn is_loaded(&self, chunk: P) -> bool {
        let Some(s) = self.sec(chunk.section(self.cfg.shift)) else { return false };
        let st = s.st.lock();
        !st.removed && st.has(chunk.local_index(self.cfg.shift))
    }

    /// A handle on a live region, without the write lock (`None` once it is dead).
    pub fn region(&self, id: RegionId) -> Option<Region<D>> {
        self.live.get(&id).map(|s| Region { shared: Arc::clone(s.value()) })
    }

    /// Number of live regions (unsynchronised).
    pub fn region_count(&self) -> usize {
        self.live.len()
    }

    /// Number of sections (unsynchronised).
    pub fn section_count(&self) -> usize {
        self.sections.len()
    }

    /// The live regions, in id order (exact).
    ///
    /// # Errors
    /// [`Error::Reentrant`]; [`Error::Poisoned`].
    pub fn region_ids(&self) -> Result<Vec<RegionId>> {
        Ok(self.write()?.regions.keys().copied().collect())
    }

    /// Every loaded chunk, sorted. Exact only when no `add_chunk` / `remove_chunk` runs
    /// concurrently (their fast paths do not take the write lock).
    ///
    /// # Errors
    /// [`Error::Reentrant`]; [`Error::Poisoned`].
    pub fn loaded_chunks(&self) -> Result<Vec<P>> {
        let _w = self.write()?;
        let shift = self.cfg.shift;
        let n = 1usize << (shift as usize * P::DIMS);
        let mut out = Vec::new();
        for e in self.sections.iter() {
            let st = e.value().st.lock();
            if st.count == 0 {
                continue;
            }
            let min = e.key().section_min(shift).expect("section of a valid chunk");
            let base = min.coords();
            for i in 0..n {
                if st.has(i) {
                    out.push(local_to_pos::<P>(base.as_ref(), i, shift));
                }
            }
        }
        out.sort_unstable();
        Ok(out)
    }

    /// Runs `f` on the data of a region that is not TICKING, under the write lock (`f` must
    /// not call back into the regionizer: that returns [`Error::Reentrant`]).
    ///
    /// # Errors
    /// [`Error::RegionTicking`] (its ticker owns the data: use [`Region::lock_data`]);
    /// [`Error::NotTicking`] with state DEAD for a dead region; [`Error::UnknownRegion`];
    /// [`Error::Reentrant`]; [`Error::Poisoned`].
    pub fn with_data<R>(&self, id: RegionId, f: impl FnOnce(&mut D) -> R) -> Result<R> {
        let w = self.write()?;
        let Some(rec) = w.regions.get(&id) else {
            return Err(if id.0 > 0 && id.0 < w.next_id {
                Error::NotTicking { region: id, state: RegionState::Dead }
            } else {
                Error::UnknownRegion(id)
            });
        };
        if rec.state == RegionState::Ticking {
            return Err(Error::RegionTicking(id));
        }
        let mut g = rec.shared.data.lock();
        let d = g.as_mut().expect("live regions have data");
        Ok(self.user(|| f(d)))
    }

    /// A consistent copy of the whole state (regions ordered by their smallest section,
    /// sections ascending), as printed by the replay tool. Chunk counts are exact only when no
    /// add/remove fast path runs concurrently.
    ///
    /// # Errors
    /// [`Error::Reentrant`]; [`Error::Poisoned`].
    pub fn snapshot(&self) -> Result<RegionizerSnapshot<P>> {
        let w = self.write()?;
        let mut regions: Vec<RegionSnapshot<P>> = w
            .regions
            .iter()
            .map(|(&id, r)| RegionSnapshot {
                id,
                state: r.state,
                sections: r.sections.iter().copied().collect(),
                dead: r.dead.iter().copied().collect(),
                merge_into_later: r.mil.iter().copied().collect(),
                expecting_merge_from: r.emf.iter().copied().collect(),
            })
            .collect();
        regions.sort_by_key(|r| r.sections.first().copied());
        let mut sections: Vec<SectionSnapshot<P>> = self
            .sections
            .iter()
            .map(|e| {
                let st = e.value().st.lock();
                SectionSnapshot {
                    pos: *e.key(),
                    chunk_count: st.count,
                    non_empty_neighbours: st.nen,
                    owner: e.value().owner(),
                }
            })
            .collect();
        sections.sort_unstable_by_key(|s| s.pos); // positions are unique
        Ok(RegionizerSnapshot { regions, sections })
    }
}

fn local_to_pos<P: GridPos>(base: &[i64], i: usize, shift: u32) -> P {
    let m = (1usize << shift) - 1;
    let mut c = [0i64; 3];
    let d = base.len();
    let mut rest = i;
    for k in (0..d).rev() {
        c[k] = base[k] + (rest & m) as i64;
        rest >>= shift;
    }
    P::from_coords(&c[..d]).expect("inside a valid section")
}

/// Connected components of `secs` where two sections are adjacent iff within `radius`;
/// components ordered by their smallest section, each sorted.
pub(crate) fn components<P: GridPos>(secs: &BTreeSet<P>, radius: u32) -> Vec<Vec<P>> {
    // A sorted vector and a `seen` flag per entry: binary searches over contiguous memory
    // instead of two B-trees (this search is most of a release's cost).
    let list: Vec<P> = secs.iter().copied().collect();
    let mut seen = vec![false; list.len()];
    let mut out = Vec::new();
    let mut stack = Vec::new();
    for i in 0..list.len() {
        if seen[i] {
            continue;
        }
        seen[i] = true;
        let mut comp = vec![list[i]];
        stack.push(i);
        while let Some(k) = stack.pop() {
            // One search per run of neighbours contiguous in sort order, galloping from the
            // section's own place: its neighbours sort near it.
            for (lo, hi) in list[k].within_runs(radius) {
                let mut j = lower_bound_near(&list, k, lo);
                while let Some(&q) = list.get(j) {
                    if q > hi {
                        break;
                    }
                    if !seen[j] {
                        seen[j] = true;
                        comp.push(q);
                        stack.push(j);
                    }
                    j += 1;
                }
            }
        }
        if comp.len() == list.len() {
            // Still one piece (the common case of a release): `list` is already sorted.
            return vec![list];
        }
        comp.sort_unstable();
        out.push(comp);
    }
    out
}

/// The first index of sorted `list` whose entry is not below `key`, searched outwards from
/// `from` in doubling steps, then by bisection: O(log distance) instead of O(log len).
fn lower_bound_near<P: Ord>(list: &[P], from: usize, key: P) -> usize {
    let (mut lo, mut hi) = if list[from] < key {
        // The answer is after `from`: gallop forwards.
        let (mut lo, mut step) = (from, 1);
        while lo + step < list.len() && list[lo + step] < key {
            lo += step;
            step *= 2;
        }
        (lo + 1, (lo + step).min(list.len()))
    } else {
        // At or before `from`: gallop backwards.
        let (mut hi, mut step) = (from, 1);
        while hi >= step && list[hi - step] >= key {
            hi -= step;
            step *= 2;
        }
        (hi.saturating_sub(step), hi)
    };
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if list[mid] < key { lo = mid + 1 } else { hi = mid }
    }
    lo
}

/// A copy of the regionizer's state ([`Regionizer::snapshot`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionizerSnapshot<P> {
    /// Live regions, ordered by their smallest section.
    pub regions: Vec<RegionSnapshot<P>>,
    /// Every section, ascending.
    pub sections: Vec<SectionSnapshot<P>>,
}

/// One region in a [`RegionizerSnapshot`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegionSnapshot<P> {
    /// Its id.
    pub id: RegionId,
    /// Its state (never DEAD).
    pub state: RegionState,
    /// Its sections, ascending.
    pub sections: Vec<P>,
    /// Its dead sections, ascending.
    pub dead: Vec<P>,
    /// Ticking regions it will merge into, ascending ids.
    pub merge_into_later: Vec<RegionId>,
    /// Regions that will merge into it when its tick ends, ascending ids.
    pub expecting_merge_from: Vec<RegionId>,
}

/// One section in a [`RegionizerSnapshot`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SectionSnapshot<P> {
    /// Section position.
    pub pos: P,
    /// Loaded chunks in it.
    pub chunk_count: u32,
    /// Other sections within the create radius holding at least one chunk.
    pub non_empty_neighbours: u32,
    /// Owning region.
    pub owner: RegionId,
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    proptest! {
        /// The galloping search finds what a bisection of the whole list finds, from any start.
        #[test]
        fn lower_bound_near_is_a_lower_bound(
            mut list in prop::collection::vec(-50i32..50, 1..200),
            from in any::<prop::sample::Index>(),
            key in -60i32..60,
        ) {
            list.sort_unstable();
            list.dedup();
            let from = from.index(list.len());
            let want = list.partition_point(|&v| v < key);
            prop_assert_eq!(super::lower_bound_near(&list, from, key), want);
        }
    }
}
