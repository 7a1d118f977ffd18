//! Atomic batches of puts and deletes across tables.

use crate::{Error, MAX_KEY_LEN, Result, check_key};

/// One operation of a [`Batch`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// Write `data` at `version` under `key` (replacing any older object).
    Put {
        /// The table.
        table: String,
        /// The key (at most [`MAX_KEY_LEN`] bytes).
        key: Vec<u8>,
        /// The application's version of the object.
        version: i64,
        /// The bytes.
        data: Vec<u8>,
    },
    /// Remove `key` (no error when absent).
    Delete {
        /// The table.
        table: String,
        /// The key.
        key: Vec<u8>,
    },
}

impl Op {
    /// The operation's table.
    pub fn table(&self) -> &str {
        match self {
            Op::Put { table, .. } | Op::Delete { table, .. } => table,
        }
    }

    /// The operation's key.
    pub fn key(&self) -> &[u8] {
        match self {
            Op::Put { key, .. } | Op::Delete { key, .. } => key,
        }
    }
}

/// Puts and deletes across tables, applied all-or-nothing by [`Store::write`](crate::Store::write).
///
/// A later operation on the same `(table, key)` wins. A game tick's save (chunks, entities,
/// players) is one batch, so a crash can never keep a player's inventory while losing the
/// chunk its items came from.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Batch {
    ops: Vec<Op>,
    preconditions: Vec<Precondition>,
    sync: bool,
    bytes: usize,
}

/// A condition a [`Batch`] applies under: the object under `key` in `table` is at `version`
/// (`None`: absent) when the batch is applied, checked inside the same atomic write. A
/// failed condition is [`Error::PreconditionFailed`] and nothing of the batch is applied.
///
/// This is how a writer fences its saves: "area A is still mine at epoch E" is a
/// precondition on A's lease object.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Precondition {
    /// The table.
    pub table: String,
    /// The key.
    pub key: Vec<u8>,
    /// The version the object must have, or `None` when it must be absent.
    pub version: Option<i64>,
}

impl Batch {
    /// An empty, unsynced batch.
    pub fn new() -> Self {
        Batch::default()
    }

    /// An empty batch with room for `n` operations.
    pub fn with_capacity(n: usize) -> Self {
        Batch { ops: Vec::with_capacity(n), ..Batch::default() }
    }

    /// Adds a put.
    pub fn put(
        &mut self,
        table: &str,
        key: impl Into<Vec<u8>>,
        version: i64,
        data: impl Into<Vec<u8>>,
    ) -> &mut Self {
        let key = key.into();
        let data = data.into();
        self.bytes += key.len() + data.len();
        self.ops.push(Op::Put { table: table.to_string(), key, version, data });
        self
    }

    /// Adds a delete.
    pub fn delete(&mut self, table: &str, key: impl Into<Vec<u8>>) -> &mut Self {
        let key = key.into();
        self.bytes += key.len();
        self.ops.push(Op::Delete { table: table.to_string(), key });
        self
    }

    /// Adds a precondition: the batch applies only if the object under `key` in `table` is
    /// at `version` (`None`: absent) at that moment (see [`Precondition`]).
    pub fn expect(
        &mut self,
        table: &str,
        key: impl Into<Vec<u8>>,
        version: Option<i64>,
    ) -> &mut Self {
        self.preconditions.push(Precondition {
            table: table.to_string(),
            key: key.into(),
            version,
        });
        self
    }

    /// The preconditions, in order.
    pub fn preconditions(&self) -> &[Precondition] {
        &self.preconditions
    }

    /// Checks every precondition against `current(table, key)`, the version stored now (the
    /// backend calls this where no other write can interleave before its own): the first that
    /// fails is [`Error::PreconditionFailed`].
    pub fn check_preconditions(
        &self,
        mut current: impl FnMut(&str, &[u8]) -> Result<Option<i64>>,
    ) -> Result<()> {
        for p in &self.preconditions {
            let found = current(&p.table, &p.key)?;
            if found != p.version {
                return Err(Error::PreconditionFailed {
                    table: p.table.clone(),
                    key: p.key.clone(),
                    expected: p.version,
                    found,
                });
            }
        }
        Ok(())
    }

    /// Marks the batch synced: `write` returns only once it survives power loss.
    pub fn synced(mut self) -> Self {
        self.sync = true;
        self
    }

    /// Sets whether the batch is synced.
    pub fn set_sync(&mut self, sync: bool) -> &mut Self {
        self.sync = sync;
        self
    }

    /// Whether the batch is synced.
    pub fn is_synced(&self) -> bool {
        self.sync
    }

    /// The operations, in order.
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }

    /// The number of operations.
    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// Whether the batch has no operations.
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    /// The total size of keys and values, in bytes.
    pub fn payload_bytes(&self) -> usize {
        self.bytes
    }

    /// Removes every operation and precondition (keeps the sync flag and the allocation).
    pub fn clear(&mut self) {
        self.ops.clear();
        self.preconditions.clear();
        self.bytes = 0;
    }

    /// Checks every operation: tables accepted by `has_table`, key lengths, and value sizes
    /// up to `max_value`. Backends call this before applying anything.
    pub fn validate(&self, has_table: impl Fn(&str) -> bool, max_value: usize) -> Result<()> {
        for p in &self.preconditions {
            if !has_table(&p.table) {
                return Err(Error::UnknownTable(p.table.clone()));
            }
            check_key(&p.key)?;
        }
        for op in &self.ops {
            if !has_table(op.table()) {
                return Err(Error::UnknownTable(op.table().to_string()));
            }
            check_key(op.key())?;
            debug_assert!(op.key().len() <= MAX_KEY_LEN);
            if let Op::Put { data, .. } = op
                && data.len() > max_value
            {
                return Err(Error::ValueTooLarge { len: data.len(), max: max_value });
            }
        }
        Ok(())
    }
}

impl Extend<Op> for Batch {
    fn extend<I: IntoIterator<Item = Op>>(&mut self, iter: I) {
        for op in iter {
            match op {
                Op::Put { table, key, version, data } => {
                    self.put(&table, key, version, data);
                }
                Op::Delete { table, key } => {
                    self.delete(&table, key);
                }
            }
        }
    }
}
