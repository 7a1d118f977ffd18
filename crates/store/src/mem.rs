//! The in-memory backend.

use std::collections::BTreeMap;
use std::ops::{Bound, Range};
use std::sync::{Arc, RwLock};

use crate::{
    Batch, Error, KeyRange, Object, Op, OpenMode, Parts, ReadView, Result, Scan, Store,
    StoreConfig, cut_parts, cut_parts_then,
};

type Table = Arc<BTreeMap<Vec<u8>, Object>>;
type Tables = BTreeMap<String, Table>;

/// The in-memory backend: every table a copy-on-write `BTreeMap`.
///
/// Snapshots and scans share the maps and cost O(1) to take; the first write to a table while
/// one is alive copies that table. Nothing survives the process ([`Store::sync`] is a no-op).
/// Values are limited to [`MemStore::MAX_VALUE`] bytes like the persistent backends.
#[derive(Debug)]
pub struct MemStore {
    signature: String,
    tables: RwLock<Tables>,
}

impl MemStore {
    /// The largest value accepted (1 GiB), as in the persistent backends.
    pub const MAX_VALUE: usize = 1 << 30;

    /// Creates an empty store. [`OpenMode::Open`] fails with [`Error::NotFound`]: there is
    /// never an existing in-memory store to open.
    pub fn open(config: &StoreConfig) -> Result<Self> {
        config.validate()?;
        if config.mode == OpenMode::Open {
            return Err(Error::NotFound("<memory>".into()));
        }
        let tables = config.tables.iter().map(|t| (t.clone(), Table::default())).collect();
        Ok(MemStore { signature: config.signature.clone(), tables: RwLock::new(tables) })
    }

    /// An empty store with the design's tables and the signature `"terrane memory"`.
    pub fn new() -> Self {
        MemStore::open(&StoreConfig::new("terrane memory")).expect("the default config is valid")
    }

    fn read(&self) -> Result<std::sync::RwLockReadGuard<'_, Tables>> {
        self.tables.read().map_err(|_| Error::Poisoned("a writer panicked".into()))
    }

    fn table(&self, table: &str) -> Result<Table> {
        self.read()?.get(table).cloned().ok_or_else(|| Error::UnknownTable(table.to_string()))
    }
}

impl Default for MemStore {
    fn default() -> Self {
        MemStore::new()
    }
}

/// A lazy ordered scan over a shared table: each step looks up the next key after the last.
pub(crate) struct TableScan {
    table: Table,
    range: KeyRange,
    last: Option<Vec<u8>>,
}

impl Iterator for TableScan {
    type Item = Result<(Vec<u8>, Object)>;

    fn next(&mut self) -> Option<Self::Item> {
        let (start, end) = self.range.as_bounds();
        let start = match &self.last {
            Some(k) => Bound::Excluded(k.as_slice()),
            None => start,
        };
        if self.range.is_empty() {
            return None;
        }
        let (k, v) = self.table.range::<[u8], _>((start, end)).next()?;
        self.last = Some(k.clone());
        Some(Ok((k.clone(), v.clone())))
    }
}

fn scan_table(table: Table, range: KeyRange) -> Scan<'static> {
    Box::new(TableScan { table, range, last: None })
}

/// A snapshot of a [`MemStore`].
struct MemSnapshot {
    tables: Tables,
}

impl ReadView for MemSnapshot {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        let t = self.tables.get(table).ok_or_else(|| Error::UnknownTable(table.to_string()))?;
        Ok(t.get(key).cloned())
    }

    fn get_parts(&self, table: &str, key: &[u8], ranges: &[Range<u64>]) -> Result<Option<Parts>> {
        let t = self.tables.get(table).ok_or_else(|| Error::UnknownTable(table.to_string()))?;
        Ok(t.get(key).map(|o| cut_parts(o.version, &o.data, ranges)))
    }

    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        let t = self.tables.get(table).ok_or_else(|| Error::UnknownTable(table.to_string()))?;
        Ok(t.get(key).map(|o| cut_parts_then(o.version, &o.data, first, then)))
    }

    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        let t = self.tables.get(table).ok_or_else(|| Error::UnknownTable(table.to_string()))?;
        Ok(scan_table(t.clone(), range))
    }
}

impl ReadView for MemStore {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        crate::check_key(key)?;
        let g = self.read()?;
        let t = g.get(table).ok_or_else(|| Error::UnknownTable(table.to_string()))?;
        Ok(t.get(key).cloned())
    }

    /// Slices the stored value: only the ranges are copied.
    fn get_parts(&self, table: &str, key: &[u8], ranges: &[Range<u64>]) -> Result<Option<Parts>> {
        crate::check_key(key)?;
        let t = self.table(table)?;
        Ok(t.get(key).map(|o| cut_parts(o.version, &o.data, ranges)))
    }

    /// Both steps slice the same value (the table is a shared immutable map).
    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        crate::check_key(key)?;
        let t = self.table(table)?;
        Ok(t.get(key).map(|o| cut_parts_then(o.version, &o.data, first, then)))
    }

    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        let t = self.table(table)?;
        keys.iter()
            .map(|k| {
                crate::check_key(k)?;
                Ok(t.get(*k).cloned())
            })
            .collect()
    }

    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        Ok(scan_table(self.table(table)?, range))
    }
}

impl Store for MemStore {
    fn signature(&self) -> &str {
        &self.signature
    }

    fn tables(&self) -> Vec<String> {
        self.read().map(|g| g.keys().cloned().collect()).unwrap_or_default()
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        let mut g = self.tables.write().map_err(|_| Error::Poisoned("a writer panicked".into()))?;
        batch.validate(|t| g.contains_key(t), Self::MAX_VALUE)?;
        batch.check_preconditions(|t, k| Ok(g[t].get(k).map(|o| o.version)))?;
        for op in batch.ops() {
            let t = Arc::make_mut(g.get_mut(op.table()).expect("validated"));
            match op {
                Op::Put { key, version, data, .. } => {
                    t.insert(key.clone(), Object { version: *version, data: data.clone() });
                }
                Op::Delete { key, .. } => {
                    t.remove(key);
                }
            }
        }
        Ok(())
    }

    fn snapshot(&self) -> Result<Box<dyn ReadView + '_>> {
        Ok(Box::new(MemSnapshot { tables: self.read()?.clone() }))
    }

    fn flush(&self) -> Result<()> {
        Ok(())
    }

    fn sync(&self) -> Result<()> {
        Ok(())
    }
}
