//! A write overlay over a store: reads see the pending writes, and the whole overlay becomes
//! one atomic [`Batch`], fenced by the store's preconditions.

use std::collections::BTreeMap;
use std::ops::Range;

use terrane_store::{Batch, Object, Parts, Precondition, Store, cut_parts_then};

use crate::error::Result;

pub(crate) struct Txn<'s, S: ?Sized> {
    store: &'s S,
    pending: BTreeMap<(&'static str, Vec<u8>), Option<Object>>,
    /// Objects read ahead with one `multi_get` ([`Txn::prefetch`]), as the store had them.
    read: BTreeMap<(&'static str, Vec<u8>), Option<Object>>,
    fence: Vec<Precondition>,
}

impl<'s, S: Store + ?Sized> Txn<'s, S> {
    /// An overlay whose batch carries `fence` (see `TieredStore::set_fence`).
    pub(crate) fn new(store: &'s S, fence: &[Precondition]) -> Self {
        Self { store, pending: BTreeMap::new(), read: BTreeMap::new(), fence: fence.to_vec() }
    }

    /// Reads `keys` of `table` ahead in one `multi_get` (one round trip on a networked store):
    /// later `get`s of them are answered from memory.
    pub(crate) fn prefetch(&mut self, table: &'static str, keys: &[Vec<u8>]) -> Result<()> {
        let wanted: Vec<&[u8]> = keys
            .iter()
            .filter(|k| !self.read.contains_key(&(table, k.to_vec())))
            .map(Vec::as_slice)
            .collect();
        if wanted.is_empty() {
            return Ok(());
        }
        let found = self.store.multi_get(table, &wanted)?;
        for (k, o) in wanted.into_iter().zip(found) {
            self.read.insert((table, k.to_vec()), o);
        }
        Ok(())
    }

    pub(crate) fn get(&self, table: &'static str, key: &[u8]) -> Result<Option<Object>> {
        let id = (table, key.to_vec());
        if let Some(p) = self.pending.get(&id).or_else(|| self.read.get(&id)) {
            return Ok(p.clone());
        }
        Ok(self.store.get(table, key)?)
    }

    /// [`ReadView::get_parts_then`](terrane_store::ReadView::get_parts_then) through the
    /// overlay: cut from a pending or read-ahead object, else read by parts from the store.
    pub(crate) fn get_parts_then(
        &self,
        table: &'static str,
        key: &[u8],
        first: &[Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        let id = (table, key.to_vec());
        if let Some(p) = self.pending.get(&id).or_else(|| self.read.get(&id)) {
            return Ok(p.as_ref().map(|o| cut_parts_then(o.version, &o.data, first, then)));
        }
        Ok(self.store.get_parts_then(table, key, first, then)?)
    }

    pub(crate) fn put(&mut self, table: &'static str, key: &[u8], version: i64, data: Vec<u8>) {
        self.pending.insert((table, key.to_vec()), Some(Object { version, data }));
    }

    pub(crate) fn delete(&mut self, table: &'static str, key: &[u8]) {
        self.pending.insert((table, key.to_vec()), None);
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.pending.is_empty()
    }

    pub(crate) fn into_batch(self) -> Batch {
        let mut b = Batch::with_capacity(self.pending.len());
        for p in self.fence {
            b.expect(&p.table, p.key, p.version);
        }
        for ((table, key), v) in self.pending {
            match v {
                Some(o) => b.put(table, key, o.version, o.data),
                None => b.delete(table, key),
            };
        }
        b
    }

    /// Writes everything as one batch.
    pub(crate) fn commit(self, sync: bool) -> Result<()> {
        if self.is_empty() {
            return Ok(());
        }
        let store = self.store;
        let mut b = self.into_batch();
        b.set_sync(sync);
        store.write(&b)?;
        Ok(())
    }
}
