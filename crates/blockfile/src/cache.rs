//! The read cache: objects read recently, kept in memory by (table, key) with the transaction
//! that wrote them. An entry serves a read only when the index still names that transaction
//! for the key, so a write never needs to invalidate anything: its new version has a new
//! transaction. Two generations bound the memory: when the young one fills half the budget,
//! it becomes the old one and the previous old one is dropped; a hit in the old generation
//! moves the object back to the young one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// (table, key) as one byte string: the table name, 0xff (never in a table name), the key.
type Id = Vec<u8>;

fn id(table: &str, key: &[u8]) -> Id {
    let mut id = Vec::with_capacity(table.len() + 1 + key.len());
    id.extend_from_slice(table.as_bytes());
    id.push(0xff);
    id.extend_from_slice(key);
    id
}

#[derive(Default)]
struct Generations {
    young: HashMap<Id, (u64, Arc<[u8]>)>,
    old: HashMap<Id, (u64, Arc<[u8]>)>,
    young_bytes: usize,
}

/// A bounded cache of object bytes (see the module docs).
pub(crate) struct ReadCache {
    budget: usize,
    inner: Mutex<Generations>,
}

impl std::fmt::Debug for ReadCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let g = self.lock();
        f.debug_struct("ReadCache")
            .field("budget", &self.budget)
            .field("objects", &(g.young.len() + g.old.len()))
            .finish()
    }
}

impl ReadCache {
    /// A cache of at most about `budget` bytes of values; 0 caches nothing.
    pub fn new(budget: usize) -> Self {
        ReadCache { budget, inner: Mutex::new(Generations::default()) }
    }

    fn lock(&self) -> MutexGuard<'_, Generations> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The bytes of (`table`, `key`) as written by transaction `txn`, when cached.
    pub fn get(&self, table: &str, key: &[u8], txn: u64) -> Option<Arc<[u8]>> {
        if self.budget == 0 {
            return None;
        }
        let id = id(table, key);
        let mut g = self.lock();
        if let Some((t, data)) = g.young.get(&id) {
            return (*t == txn).then(|| data.clone());
        }
        let (t, data) = g.old.remove(&id)?;
        if t != txn {
            return None;
        }
        g.insert(id, t, data.clone(), self.budget);
        Some(data)
    }

    /// Keeps the bytes of (`table`, `key`) as written by `txn` (values over an eighth of the
    /// budget are not kept).
    pub fn insert(&self, table: &str, key: &[u8], txn: u64, data: &[u8]) {
        if data.len() > self.budget / 8 {
            return;
        }
        self.lock().insert(id(table, key), txn, data.into(), self.budget);
    }
}

impl Generations {
    fn insert(&mut self, id: Id, txn: u64, data: Arc<[u8]>, budget: usize) {
        self.young_bytes += data.len() + id.len();
        if let Some((_, old)) = self.young.insert(id, (txn, data)) {
            self.young_bytes -= old.len();
        }
        if self.young_bytes > budget / 2 {
            self.old = std::mem::take(&mut self.young);
            self.young_bytes = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hits_need_the_same_transaction_and_memory_stays_bounded() {
        let c = ReadCache::new(64 * 1024);
        c.insert("t", b"k", 7, b"seven");
        assert_eq!(c.get("t", b"k", 7).as_deref(), Some(&b"seven"[..]));
        assert_eq!(c.get("t", b"k", 8), None, "another transaction wrote the key since");
        assert_eq!(c.get("u", b"k", 7), None, "another table");
        for i in 0..1000u32 {
            c.insert("t", &i.to_le_bytes(), 1, &[0; 1000]);
        }
        let g = c.lock();
        let bytes: usize = g.young.values().chain(g.old.values()).map(|(_, d)| d.len()).sum();
        assert!(bytes <= 64 * 1024, "{bytes} bytes cached");
        drop(g);
        // The most recent insertions are still there.
        assert!(c.get("t", &999u32.to_le_bytes(), 1).is_some());
        // A value over an eighth of the budget would evict most of it: never kept.
        c.insert("t", b"big", 1, &vec![0; 64 * 1024 / 8 + 1]);
        assert_eq!(c.get("t", b"big", 1), None);
        let off = ReadCache::new(0);
        off.insert("t", b"k", 1, b"x");
        assert_eq!(off.get("t", b"k", 1), None);
    }
}
