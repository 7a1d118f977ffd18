//! A wrapper that injects failures, for testing code built on a store.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::{Batch, Error, KeyRange, Object, ReadView, Result, Scan, Store};

/// Which calls of a [`FaultyStore`] fail. Calls are counted from 1; `None` never fails.
///
/// A failing call returns [`Error::Injected`] without reaching the inner store, so the
/// store's state is exactly as if the call had not been made.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FaultPlan {
    /// Fail the Nth call of [`Store::write`] (and every later one when `sticky`).
    pub fail_write: Option<u64>,
    /// Fail the Nth call of [`Store::sync`] (synced batches count as a sync too).
    pub fail_sync: Option<u64>,
    /// Once a fault fired, fail every later write and sync too (a dead disk).
    pub sticky: bool,
}

impl FaultPlan {
    /// A plan that fails the `n`th write (1-based).
    pub fn nth_write(n: u64) -> Self {
        FaultPlan { fail_write: Some(n), ..FaultPlan::default() }
    }

    /// A plan that fails the `n`th sync (1-based).
    pub fn nth_sync(n: u64) -> Self {
        FaultPlan { fail_sync: Some(n), ..FaultPlan::default() }
    }

    /// Makes the plan sticky: everything fails after the first fault.
    pub fn sticky(mut self) -> Self {
        self.sticky = true;
        self
    }
}

/// Wraps a store and fails the write or sync calls its [`FaultPlan`] names.
///
/// ```
/// use terrane_store::{FaultPlan, FaultyStore, MemStore, Store, Error, tables};
///
/// let store = FaultyStore::new(MemStore::new(), FaultPlan::nth_write(2));
/// store.put(tables::ENTITY, b"a", 1, b"x")?;
/// assert!(matches!(store.put(tables::ENTITY, b"b", 1, b"y"), Err(Error::Injected(_))));
/// store.put(tables::ENTITY, b"c", 1, b"z")?;  // not sticky: later writes work
/// assert_eq!(store.writes(), 3);
/// # Ok::<(), Error>(())
/// ```
#[derive(Debug)]
pub struct FaultyStore<S> {
    inner: S,
    plan: FaultPlan,
    writes: AtomicU64,
    syncs: AtomicU64,
    fired: AtomicU64,
}

impl<S: Store> FaultyStore<S> {
    /// Wraps `inner`.
    pub fn new(inner: S, plan: FaultPlan) -> Self {
        FaultyStore {
            inner,
            plan,
            writes: AtomicU64::new(0),
            syncs: AtomicU64::new(0),
            fired: AtomicU64::new(0),
        }
    }

    /// The wrapped store.
    pub fn inner(&self) -> &S {
        &self.inner
    }

    /// Unwraps the store.
    pub fn into_inner(self) -> S {
        self.inner
    }

    /// Write calls so far (failed ones included).
    pub fn writes(&self) -> u64 {
        self.writes.load(Ordering::SeqCst)
    }

    /// Sync calls so far, synced batches included (failed ones included).
    pub fn syncs(&self) -> u64 {
        self.syncs.load(Ordering::SeqCst)
    }

    /// How many calls failed by injection.
    pub fn faults(&self) -> u64 {
        self.fired.load(Ordering::SeqCst)
    }

    fn check(&self, counter: &AtomicU64, nth: Option<u64>, what: &str) -> Result<()> {
        let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
        let sticky = self.plan.sticky && self.fired.load(Ordering::SeqCst) > 0;
        if sticky || nth == Some(n) {
            self.fired.fetch_add(1, Ordering::SeqCst);
            return Err(Error::Injected(format!("{what} #{n} failed")));
        }
        Ok(())
    }
}

impl<S: Store> ReadView for FaultyStore<S> {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        self.inner.get(table, key)
    }
    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        self.inner.multi_get(table, keys)
    }
    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<crate::Parts>> {
        self.inner.get_parts(table, key, ranges)
    }
    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&crate::Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Result<Option<(crate::Parts, crate::Parts)>> {
        self.inner.get_parts_then(table, key, first, then)
    }
    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        self.inner.scan(table, range)
    }
}

impl<S: Store> Store for FaultyStore<S> {
    fn signature(&self) -> &str {
        self.inner.signature()
    }
    fn tables(&self) -> Vec<String> {
        self.inner.tables()
    }
    fn write(&self, batch: &Batch) -> Result<()> {
        self.check(&self.writes, self.plan.fail_write, "write")?;
        if batch.is_synced() {
            self.check(&self.syncs, self.plan.fail_sync, "sync")?;
        }
        self.inner.write(batch)
    }
    fn snapshot(&self) -> Result<Box<dyn ReadView + '_>> {
        self.inner.snapshot()
    }
    fn flush(&self) -> Result<()> {
        self.inner.flush()
    }
    fn sync(&self) -> Result<()> {
        self.check(&self.syncs, self.plan.fail_sync, "sync")?;
        self.inner.sync()
    }

    fn cache_bytes(&self) -> Option<u64> {
        self.inner.cache_bytes()
    }
}
