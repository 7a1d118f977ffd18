//! The read cache of a sole writer: objects read or written through this store, served from
//! memory while the store's lock session proves that no other process can have changed them.
//!
//! Why it is exact: a store opened for writing without `shared_writers` holds the store's
//! advisory lock exclusively for as long as its lock session lives, and every other writer
//! takes that lock before it writes. So while the session lives, only this store's own writes
//! change the tables, and they pass through [`Cache::begin_write`] / [`Cache::end_write`]:
//! - `begin_write` drops the batch's keys and counts the write in flight;
//! - `end_write` puts the written objects in (a put's object, a delete's absence) only when
//!   the write committed and no other write overlapped it; otherwise it drops the keys again;
//! - a read fills the cache only if no write began or ended since the read started (the
//!   write counter is unchanged), so a value read before a commit never lands after it.
//!
//! Every call served (even partly) from the cache first checks the lock session with one
//! empty query ([`PgStore`](crate::PgStore) does that); once it is gone (a server restart, a
//! failover) the cache is off for good, and reads go to the server.
//!
//! Memory: two generations of at most `budget / 2` bytes each; a lookup that hits the old
//! generation moves the object to the new one, and a full new generation replaces the old.

use std::collections::HashMap;
use std::sync::Mutex;

use terrane_store::{Batch, Object, Op, Parts, cut_parts_then};

/// Bytes counted per entry besides its key and data.
const ENTRY_OVERHEAD: usize = 64;

type Entries = HashMap<Vec<u8>, Option<Object>>;

#[derive(Default)]
struct Inner {
    new: Entries,
    old: Entries,
    new_bytes: usize,
    old_bytes: usize,
    /// Bumped by every write's begin and end.
    writes: u64,
    in_flight: u32,
    off: bool,
}

/// See the [module docs](self).
pub(crate) struct Cache {
    inner: Mutex<Inner>,
    budget: usize,
}

fn id(table: &str, key: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(table.len() + 1 + key.len());
    v.extend_from_slice(table.as_bytes());
    v.push(0);
    v.extend_from_slice(key);
    v
}

fn size(id: &[u8], o: &Option<Object>) -> usize {
    id.len() + o.as_ref().map_or(0, |o| o.data.len()) + ENTRY_OVERHEAD
}

impl Inner {
    fn remove(&mut self, id: &[u8]) {
        if let Some(o) = self.new.remove(id) {
            self.new_bytes -= size(id, &o);
        }
        if let Some(o) = self.old.remove(id) {
            self.old_bytes -= size(id, &o);
        }
    }

    fn insert(&mut self, id: Vec<u8>, o: Option<Object>, budget: usize) {
        let n = size(&id, &o);
        if n > budget / 2 {
            self.remove(&id);
            return;
        }
        self.remove(&id);
        if self.new_bytes + n > budget / 2 {
            self.old = std::mem::take(&mut self.new);
            self.old_bytes = std::mem::take(&mut self.new_bytes);
        }
        self.new.insert(id, o);
        self.new_bytes += n;
    }
}

/// A write's ticket: the write counter after its begin.
pub(crate) struct Ticket(u64);

/// A read's ticket: the write counter when it started.
pub(crate) struct ReadTicket(u64);

impl Cache {
    /// A cache of at most `budget` bytes.
    pub(crate) fn new(budget: usize) -> Self {
        Cache { inner: Mutex::new(Inner::default()), budget }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The cached object (`Some(None)`: known absent), `None` when not cached or off.
    pub(crate) fn get(&self, table: &str, key: &[u8]) -> Option<Option<Object>> {
        let mut g = self.lock();
        if g.off {
            return None;
        }
        let id = id(table, key);
        if let Some(o) = g.new.get(&id) {
            return Some(o.clone());
        }
        let o = g.old.remove(&id)?;
        g.insert(id, o.clone(), self.budget);
        Some(o)
    }

    /// Both steps of `get_parts_then` cut from the cached object inside the lock (the object
    /// is not copied); `None` when not cached or off.
    pub(crate) fn parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Option<Option<(Parts, Parts)>> {
        let mut g = self.lock();
        if g.off {
            return None;
        }
        let id = id(table, key);
        let mut cut = |o: &Option<Object>| {
            o.as_ref().map(|o| cut_parts_then(o.version, &o.data, first, then))
        };
        if let Some(o) = g.new.get(&id) {
            return Some(cut(o));
        }
        let o = g.old.remove(&id)?;
        let parts = cut(&o);
        g.insert(id, o, self.budget);
        Some(parts)
    }

    /// Ranges of the cached object (see [`parts_then`](Self::parts_then)).
    pub(crate) fn parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Option<Option<Parts>> {
        self.parts_then(table, key, ranges, &mut |_| Vec::new()).map(|o| o.map(|(a, _)| a))
    }

    /// Starts a read that may fill the cache.
    pub(crate) fn read_ticket(&self) -> ReadTicket {
        ReadTicket(self.lock().writes)
    }

    /// Fills the cache with what a read found, unless a write began or ended meanwhile.
    pub(crate) fn fill<'a>(
        &self,
        ticket: &ReadTicket,
        table: &str,
        found: impl IntoIterator<Item = (&'a [u8], &'a Option<Object>)>,
    ) {
        let mut g = self.lock();
        if g.off || g.writes != ticket.0 {
            return;
        }
        for (key, o) in found {
            g.insert(id(table, key), o.clone(), self.budget);
        }
    }

    /// Before a write: drops its keys.
    pub(crate) fn begin_write(&self, batch: &Batch) -> Ticket {
        let mut g = self.lock();
        g.writes += 1;
        g.in_flight += 1;
        for op in batch.ops() {
            g.remove(&id(op.table(), op.key()));
        }
        Ticket(g.writes)
    }

    /// After a write: its objects when it committed alone, else its keys dropped again.
    pub(crate) fn end_write(&self, ticket: Ticket, batch: &Batch, committed: bool) {
        let mut g = self.lock();
        g.in_flight -= 1;
        let alone = g.in_flight == 0 && g.writes == ticket.0;
        g.writes += 1;
        for op in batch.ops() {
            let id = id(op.table(), op.key());
            match op {
                Op::Put { version, data, .. } if committed && alone && !g.off => {
                    let o = Some(Object { version: *version, data: data.clone() });
                    g.insert(id, o, self.budget);
                }
                Op::Delete { .. } if committed && alone && !g.off => {
                    g.insert(id, None, self.budget)
                }
                _ => g.remove(&id),
            }
        }
    }

    /// Turns the cache off for good (the lock session is gone) and frees it.
    pub(crate) fn turn_off(&self) {
        let mut g = self.lock();
        g.off = true;
        g.new.clear();
        g.old.clear();
        g.new_bytes = 0;
        g.old_bytes = 0;
    }

    /// Bytes the cache holds now, counted as the budget counts them.
    pub(crate) fn held_bytes(&self) -> usize {
        let g = self.lock();
        g.new_bytes + g.old_bytes
    }

    /// Whether the cache is off.
    #[cfg(test)]
    pub(crate) fn is_off(&self) -> bool {
        self.lock().off
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(key: &[u8], v: i64) -> Batch {
        let mut b = Batch::new();
        b.put("t", key.to_vec(), v, vec![v as u8; 10]);
        b
    }

    #[test]
    fn a_read_that_overlaps_a_write_does_not_fill() {
        let c = Cache::new(1 << 20);
        let r = c.read_ticket();
        let b = put(b"k", 1);
        let t = c.begin_write(&b);
        c.fill(&r, "t", [(&b"k"[..], &None)]); // read before the commit: stale
        assert_eq!(c.get("t", b"k"), None);
        c.end_write(t, &b, true);
        assert_eq!(c.get("t", b"k").unwrap().unwrap().version, 1);
        c.fill(&r, "t", [(&b"k"[..], &None)]); // after it: refused too
        assert_eq!(c.get("t", b"k").unwrap().unwrap().version, 1);
    }

    #[test]
    fn overlapping_or_failed_writes_leave_their_keys_uncached() {
        let c = Cache::new(1 << 20);
        let (a, b) = (put(b"k", 1), put(b"k", 2));
        let ta = c.begin_write(&a);
        let tb = c.begin_write(&b);
        c.end_write(tb, &b, true);
        c.end_write(ta, &a, true);
        assert_eq!(c.get("t", b"k"), None, "commit order unknown: not cached");
        let t = c.begin_write(&a);
        c.end_write(t, &a, false);
        assert_eq!(c.get("t", b"k"), None);
        let mut d = Batch::new();
        d.delete("t", b"k".to_vec());
        let t = c.begin_write(&d);
        c.end_write(t, &d, true);
        assert_eq!(c.get("t", b"k"), Some(None), "a delete caches the absence");
        c.turn_off();
        assert_eq!(c.get("t", b"k"), None);
        assert!(c.is_off());
    }

    #[test]
    fn memory_stays_within_the_budget() {
        let c = Cache::new(10_000);
        for i in 0..1000u32 {
            let r = c.read_ticket();
            let o = Some(Object { version: 1, data: vec![0; 100] });
            c.fill(&r, "t", [(&i.to_be_bytes()[..], &o)]);
            let g = c.lock();
            let total: usize = g.new.iter().chain(g.old.iter()).map(|(k, o)| size(k, o)).sum();
            assert!(total <= 10_000, "{total}");
            drop(g);
            assert_eq!(c.held_bytes(), total);
        }
        assert!(c.get("t", &999u32.to_be_bytes()).is_some(), "the newest stays");
    }
}
