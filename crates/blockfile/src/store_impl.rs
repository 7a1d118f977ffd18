//! The [`Store`] and [`ReadView`] implementations: reads through the read cache, ordered scans
//! and snapshots that pin the blocks they read, and writes handed to the write path.

use std::collections::BTreeMap;
use std::fs::File;
use std::sync::Arc;

use terrane_store::{Batch, KeyRange, Object, Parts, ReadView, Scan, Store, check_key};

use crate::format::MAX_VALUE;
use crate::read::{read_entry, read_parts, read_parts_then};
use crate::{BlockFile, Entry, Error, Result, State, Table, cache};

/// The index entry of (`table`, `key`), `None` when absent; [`Error::UnknownTable`] for a
/// table the store does not have.
fn entry<'t>(
    tables: &'t BTreeMap<String, Table>,
    table: &str,
    key: &[u8],
) -> Result<Option<&'t Entry>> {
    check_key(key)?;
    let t = tables.get(table).ok_or_else(|| Error::UnknownTable(table.into()))?;
    Ok(t.get(key))
}

/// An object through the read cache: the cached bytes when the cache holds the version the
/// entry names, else read (and checked) from the file and kept.
fn read_cached(
    file: &File,
    cache: &cache::ReadCache,
    table: &str,
    key: &[u8],
    e: &Entry,
) -> Result<Object> {
    if let Some(data) = cache.get(table, key, e.txn) {
        return Ok(Object { version: e.version, data: data.to_vec() });
    }
    let data = read_entry(file, table, key, e)?;
    cache.insert(table, key, e.txn, &data);
    Ok(Object { version: e.version, data })
}

/// An ordered scan over a table captured at one point in time, holding a pin so that the
/// blocks it will read are not reused.
struct BlockScan<'a> {
    file: &'a File,
    name: String,
    table: Table,
    range: KeyRange,
    last: Option<Vec<u8>>,
    _pin: Arc<()>,
}

impl Iterator for BlockScan<'_> {
    type Item = Result<(Vec<u8>, Object)>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.range.is_empty() {
            return None;
        }
        let (start, end) = self.range.as_bounds();
        let start = match &self.last {
            Some(k) => std::ops::Bound::Excluded(k.as_slice()),
            None => start,
        };
        let (k, e) = self.table.range::<[u8], _>((start, end)).next()?;
        let k = k.clone();
        self.last = Some(k.clone());
        Some(
            read_entry(self.file, &self.name, &k, e)
                .map(|data| (k, Object { version: e.version, data })),
        )
    }
}

/// A snapshot: the tables as they were, and a pin on their blocks.
struct Snapshot<'a> {
    file: &'a File,
    cache: &'a cache::ReadCache,
    tables: BTreeMap<String, Table>,
    pin: Arc<()>,
}

impl ReadView for Snapshot<'_> {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        entry(&self.tables, table, key)?
            .map(|e| read_cached(self.file, self.cache, table, key, e))
            .transpose()
    }

    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<Parts>> {
        entry(&self.tables, table, key)?
            .map(|e| read_parts(self.file, table, key, e, ranges))
            .transpose()
    }

    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        entry(&self.tables, table, key)?
            .map(|e| read_parts_then(self.file, table, key, e, first, then))
            .transpose()
    }

    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        let t = self.tables.get(table).ok_or_else(|| Error::UnknownTable(table.into()))?;
        Ok(Box::new(BlockScan {
            file: self.file,
            name: table.to_string(),
            table: t.clone(),
            range,
            last: None,
            _pin: self.pin.clone(),
        }))
    }
}

impl ReadView for BlockFile {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        let st = self.read_state()?;
        entry(&st.tables, table, key)?
            .map(|e| read_cached(&self.file, &self.cache, table, key, e))
            .transpose()
    }

    /// Reads only the blocks the ranges touch.
    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<Parts>> {
        let st = self.read_state()?;
        entry(&st.tables, table, key)?
            .map(|e| read_parts(&self.file, table, key, e, ranges))
            .transpose()
    }

    /// Both steps read the blocks of the same index entry, under the read lock.
    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        let st = self.read_state()?;
        entry(&st.tables, table, key)?
            .map(|e| read_parts_then(&self.file, table, key, e, first, then))
            .transpose()
    }

    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        let st = self.read_state()?;
        let t = st.tables.get(table).ok_or_else(|| Error::UnknownTable(table.into()))?;
        // Read in block order (fewer seeks), answer in key order.
        let mut order: Vec<(usize, &Entry)> = Vec::with_capacity(keys.len());
        for (i, k) in keys.iter().enumerate() {
            check_key(k)?;
            if let Some(e) = t.get(*k) {
                order.push((i, e));
            }
        }
        order.sort_by_key(|(_, e)| e.runs[0].0);
        let mut out = vec![None; keys.len()];
        for (i, e) in order {
            out[i] = Some(read_cached(&self.file, &self.cache, table, keys[i], e)?);
        }
        Ok(out)
    }

    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        let st = self.read_state()?;
        let t = st.tables.get(table).ok_or_else(|| Error::UnknownTable(table.into()))?;
        Ok(Box::new(BlockScan {
            file: &self.file,
            name: table.to_string(),
            table: t.clone(),
            range,
            last: None,
            _pin: self.pin.clone(),
        }))
    }
}

impl Store for BlockFile {
    fn signature(&self) -> &str {
        &self.signature
    }

    fn tables(&self) -> Vec<String> {
        self.read_state().map(|st| st.tables.keys().cloned().collect()).unwrap_or_default()
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly(self.path.clone()));
        }
        let mut st = self.write_state()?;
        if let Some(why) = &st.poisoned {
            return Err(Error::Poisoned(why.clone()));
        }
        batch.validate(|t| st.tables.contains_key(t), MAX_VALUE)?;
        // Under the state lock: no other write can come between the check and the commit.
        batch.check_preconditions(|t, k| Ok(st.tables[t].get(k).map(|e| e.version)))?;
        if batch.is_empty() {
            if batch.is_synced() {
                self.sync_or_poison(&mut st)?;
            }
            return Ok(());
        }
        match self.commit(&mut st, batch) {
            Ok(()) => Ok(()),
            Err(e) => {
                // The file may hold half a batch: refuse further writes until a reopen
                // (which recovers it) rather than risk building on it.
                st.poisoned = Some(e.to_string());
                Err(e)
            }
        }
    }

    fn snapshot(&self) -> Result<Box<dyn ReadView + '_>> {
        let st = self.read_state()?;
        Ok(Box::new(Snapshot {
            file: &self.file,
            cache: &self.cache,
            tables: st.tables.clone(),
            pin: self.pin.clone(),
        }))
    }

    /// Does nothing: every write goes straight to the operating system.
    fn flush(&self) -> Result<()> {
        Ok(())
    }

    /// `fdatasync`. On a read-only store, does nothing (there is nothing to make durable).
    fn sync(&self) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        let mut st = self.write_state()?;
        if let Some(why) = &st.poisoned {
            // Whatever failed may have lost writes this sync would now claim durable.
            return Err(Error::Poisoned(why.clone()));
        }
        self.sync_or_poison(&mut st)
    }
}

impl BlockFile {
    /// `fdatasync` (counted against the fault budget), then everything written so far is
    /// durable and the blocks freed so far become reusable. A failed `fdatasync` poisons the
    /// handle: the kernel may have dropped the pages it could not write, so a later
    /// `fdatasync` that succeeds proves nothing about them (PostgreSQL's "fsyncgate"); only a
    /// reopen, which reads the file back, can tell what it holds.
    fn sync_or_poison(&self, st: &mut State) -> Result<()> {
        match self.io_sync() {
            Ok(()) => {
                st.synced();
                Ok(())
            }
            Err(e) => {
                st.poisoned = Some(format!("fdatasync failed: {e}"));
                Err(e)
            }
        }
    }
}
