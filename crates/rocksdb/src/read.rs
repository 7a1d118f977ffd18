//! Reads: point reads, parts of values, batched reads and range scans, on the store and on
//! its snapshots; stored values are an 8-byte version and the bytes.

use std::ops::Bound;

use rocksdb::{DB, IteratorMode, ReadOptions, SnapshotWithThreadMode};
use terrane_store::{KeyRange, Object, Parts, PartsThen, ReadView, Scan, check_key, cut_parts};

use crate::error::rocks_err;
use crate::{Error, Result, RocksStore};

/// Splits a stored value into version and bytes.
pub(crate) fn decode(table: &str, raw: &[u8]) -> Result<Object> {
    if raw.len() < 8 {
        return Err(Error::Corrupt(format!("value in {table} shorter than its 8-byte version")));
    }
    let version = i64::from_le_bytes(raw[..8].try_into().expect("8 bytes"));
    Ok(Object { version, data: raw[8..].to_vec() })
}

/// Read options bounding an iterator to `range` (the start bound is applied by seeking).
pub(crate) fn bounded(range: &KeyRange) -> ReadOptions {
    let mut ro = ReadOptions::default();
    match &range.start {
        Bound::Included(s) | Bound::Excluded(s) => ro.set_iterate_lower_bound(s.clone()),
        Bound::Unbounded => {}
    }
    match &range.end {
        Bound::Excluded(e) => ro.set_iterate_upper_bound(e.clone()),
        Bound::Included(e) => {
            let mut after = e.clone();
            after.push(0);
            ro.set_iterate_upper_bound(after);
        }
        Bound::Unbounded => {}
    }
    ro
}

impl RocksStore {
    pub(crate) fn scan_with<'a>(
        &'a self,
        table: &str,
        range: KeyRange,
        snapshot: Option<&SnapshotWithThreadMode<'a, DB>>,
    ) -> Result<Scan<'a>> {
        let cf = self.cf(table)?;
        if range.is_empty() {
            return Ok(Box::new(std::iter::empty()));
        }
        let mut ro = bounded(&range);
        ro.fill_cache(self.scans_fill_cache);
        if let Some(s) = snapshot {
            ro.set_snapshot(s);
        }
        let mode = match &range.start {
            Bound::Included(s) | Bound::Excluded(s) => {
                IteratorMode::From(s, rocksdb::Direction::Forward)
            }
            Bound::Unbounded => IteratorMode::Start,
        };
        let table = table.to_string();
        let it = self.db.iterator_cf_opt(cf, ro, mode);
        Ok(Box::new(
            it.filter(move |item| match (item, &range.start) {
                (Ok((k, _)), Bound::Excluded(s)) => **k != **s,
                _ => true,
            })
            .map(move |item| {
                let (k, v) = item.map_err(rocks_err)?;
                Ok((k.into_vec(), decode(&table, &v)?))
            }),
        ))
    }

    pub(crate) fn get_with(
        &self,
        table: &str,
        key: &[u8],
        ro: &ReadOptions,
    ) -> Result<Option<Object>> {
        check_key(key)?;
        let cf = self.cf(table)?;
        match self.db.get_pinned_cf_opt(cf, key, ro).map_err(rocks_err)? {
            Some(v) => Ok(Some(decode(table, &v)?)),
            None => Ok(None),
        }
    }

    /// Ranges of a pinned value: only the ranges are copied out of RocksDB's block (both
    /// steps of `get_parts_then` cut the same pinned value).
    pub(crate) fn get_parts_with(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: Option<&mut PartsThen<'_>>,
        ro: &ReadOptions,
    ) -> Result<Option<(Parts, Option<Parts>)>> {
        check_key(key)?;
        let cf = self.cf(table)?;
        let Some(v) = self.db.get_pinned_cf_opt(cf, key, ro).map_err(rocks_err)? else {
            return Ok(None);
        };
        if v.len() < 8 {
            return Err(Error::Corrupt(format!(
                "value in {table} shorter than its 8-byte version"
            )));
        }
        let version = i64::from_le_bytes(v[..8].try_into().expect("8 bytes"));
        let a = cut_parts(version, &v[8..], first);
        let b = then.map(|f| cut_parts(version, &v[8..], &f(&a)));
        Ok(Some((a, b)))
    }

    pub(crate) fn multi_get_with(
        &self,
        table: &str,
        keys: &[&[u8]],
        ro: &ReadOptions,
    ) -> Result<Vec<Option<Object>>> {
        let cf = self.cf(table)?;
        for k in keys {
            check_key(k)?;
        }
        self.db
            .batched_multi_get_cf_opt(cf, keys.iter().copied(), false, ro)
            .into_iter()
            .map(|r| match r.map_err(rocks_err)? {
                Some(v) => Ok(Some(decode(table, &v)?)),
                None => Ok(None),
            })
            .collect()
    }
}

impl ReadView for RocksStore {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        self.get_with(table, key, &ReadOptions::default())
    }

    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<Parts>> {
        Ok(self.get_parts_with(table, key, ranges, None, &ReadOptions::default())?.map(|(a, _)| a))
    }

    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        let found = self.get_parts_with(table, key, first, Some(then), &ReadOptions::default())?;
        Ok(found.map(|(a, b)| (a, b.unwrap_or_default())))
    }

    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        self.multi_get_with(table, keys, &ReadOptions::default())
    }

    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        self.scan_with(table, range, None)
    }
}

/// A RocksDB snapshot of a [`RocksStore`].
pub(crate) struct RocksSnapshot<'a> {
    pub(crate) store: &'a RocksStore,
    pub(crate) snap: SnapshotWithThreadMode<'a, DB>,
}

impl RocksSnapshot<'_> {
    fn ro(&self) -> ReadOptions {
        let mut ro = ReadOptions::default();
        ro.set_snapshot(&self.snap);
        ro
    }
}

impl ReadView for RocksSnapshot<'_> {
    fn get(&self, table: &str, key: &[u8]) -> Result<Option<Object>> {
        self.store.get_with(table, key, &self.ro())
    }

    fn get_parts(
        &self,
        table: &str,
        key: &[u8],
        ranges: &[std::ops::Range<u64>],
    ) -> Result<Option<Parts>> {
        Ok(self.store.get_parts_with(table, key, ranges, None, &self.ro())?.map(|(a, _)| a))
    }

    fn get_parts_then(
        &self,
        table: &str,
        key: &[u8],
        first: &[std::ops::Range<u64>],
        then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
    ) -> Result<Option<(Parts, Parts)>> {
        let found = self.store.get_parts_with(table, key, first, Some(then), &self.ro())?;
        Ok(found.map(|(a, b)| (a, b.unwrap_or_default())))
    }

    fn multi_get(&self, table: &str, keys: &[&[u8]]) -> Result<Vec<Option<Object>>> {
        self.store.multi_get_with(table, keys, &self.ro())
    }

    fn scan(&self, table: &str, range: KeyRange) -> Result<Scan<'_>> {
        self.store.scan_with(table, range, Some(&self.snap))
    }
}
