//! Writes: a batch checked against its preconditions and committed as one RocksDB write,
//! flushes and syncs; the store's [`Store`] implementation.

use rocksdb::{WriteBatch, WriteOptions};
use terrane_store::{Batch, Op, ReadView, Store};

use crate::error::rocks_err;
use crate::read::RocksSnapshot;
use crate::{Error, MAX_VALUE_LEN, Result, RocksStore};

/// A value as stored: its 8-byte version (little-endian), then its bytes.
pub(crate) fn encode(version: i64, data: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(8 + data.len());
    v.extend_from_slice(&version.to_le_bytes());
    v.extend_from_slice(data);
    v
}

impl Store for RocksStore {
    fn signature(&self) -> &str {
        &self.signature
    }

    fn tables(&self) -> Vec<String> {
        self.tables.iter().cloned().collect()
    }

    fn write(&self, batch: &Batch) -> Result<()> {
        if self.read_only {
            return Err(Error::ReadOnly(self.path.clone()));
        }
        batch.validate(|t| self.tables.contains(t), MAX_VALUE_LEN)?;
        // Writes of this store are serialised, so that a batch's preconditions still hold when
        // its WriteBatch applies (RocksDB serialises the writes themselves anyway).
        let _serial = self
            .write_lock
            .lock()
            .map_err(|_| Error::Poisoned("a thread panicked while writing".into()))?;
        batch.check_preconditions(|t, k| Ok(self.get(t, k)?.map(|o| o.version)))?;
        let mut wb = WriteBatch::default();
        for op in batch.ops() {
            let cf = self.cf(op.table())?;
            match op {
                Op::Put { key, version, data, .. } => wb.put_cf(cf, key, encode(*version, data)),
                Op::Delete { key, .. } => wb.delete_cf(cf, key),
            }
        }
        let mut wo = WriteOptions::default();
        wo.set_sync(batch.is_synced());
        self.db.write_opt(wb, &wo).map_err(rocks_err)
    }

    fn snapshot(&self) -> Result<Box<dyn ReadView + '_>> {
        Ok(Box::new(RocksSnapshot { store: self, snap: self.db.snapshot() }))
    }

    /// Writes the memtables of every column family (the `default` one with the signature
    /// included) to SST files and waits: every write-ahead log before the current one is then
    /// obsolete, and RocksDB deletes it.
    fn flush(&self) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        self.flush_all()
    }

    fn sync(&self) -> Result<()> {
        if self.read_only {
            return Ok(());
        }
        self.db.flush_wal(true).map_err(rocks_err)
    }

    /// Memtables of every column family (active, immutable and pinned), the shared block
    /// cache's usage (index and filter blocks included: they are cached there), the row
    /// cache's and the table readers' own memory.
    fn cache_bytes(&self) -> Option<u64> {
        let mut total = 0u64;
        let mut shared_cache = None;
        for t in &self.tables {
            let cf = self.db.cf_handle(t)?;
            for property in ["rocksdb.size-all-mem-tables", "rocksdb.estimate-table-readers-mem"] {
                total += self.db.property_int_value_cf(cf, property).ok().flatten()?;
            }
            // Every table's factory has the one shared cache (the `default` family, not a
            // table, has RocksDB's own): ask one of them.
            if shared_cache.is_none() {
                shared_cache =
                    self.db.property_int_value_cf(cf, "rocksdb.block-cache-usage").ok().flatten();
            }
        }
        let rows = self.row_cache.as_ref().map_or(0, |c| c.get_usage() as u64);
        Some(total + shared_cache? + rows)
    }
}
