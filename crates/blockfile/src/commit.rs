//! The write path: allocating blocks and numbers, writing a batch (new blocks with their commit
//! record, then the index, then one flush), and freeing and erasing old blocks once that is safe.

use std::collections::BTreeMap;
use std::sync::Arc;

use terrane_store::{Batch, Op};

use crate::format::{
    BLOCK, KIND_COMMIT, KIND_INDEX, KIND_OBJECT, Writer, blocks_for, capacity, to_runs,
};
use crate::{BlockFile, Blocks, Entry, Error, Result, State, signature_line};

/// A write calls `fdatasync` itself (to make blocks freed by unsynced batches reusable) when
/// more than this many blocks, and more than a quarter of the file, wait for one.
const PENDING_SYNC_MIN: usize = 64;

impl State {
    /// Takes `n` blocks: free ones lowest first, then new ones at the end of the file.
    fn alloc(&mut self, n: usize) -> Result<Vec<u32>> {
        let mut out = Vec::with_capacity(n);
        while out.len() < n {
            match self.free.pop_first() {
                Some(b) => out.push(b),
                None => {
                    let b = self.file_blocks;
                    self.file_blocks = b
                        .checked_add(1)
                        .ok_or_else(|| Error::Backend("block file full (16 TiB)".into()))?;
                    out.push(b);
                }
            }
        }
        Ok(out)
    }

    /// Takes the next transaction or index write number.
    fn take_number(&mut self) -> Result<u64> {
        let n = self.next_txn;
        self.next_txn = n
            .checked_add(1)
            .ok_or_else(|| Error::Corrupt("transaction numbers exhausted (u64::MAX)".into()))?;
        Ok(n)
    }

    /// Blocks freed by batches whose index is not durable yet.
    pub(crate) fn pending_blocks(&self) -> usize {
        self.deferred.iter().filter(|(t, _)| *t > self.durable_txn).map(|(_, c)| c.len()).sum()
    }

    /// Records a completed `fdatasync`: every index written and every block erased so far is
    /// durable, so the graveyard forgets the keys whose blocks are durably erased.
    pub(crate) fn synced(&mut self) {
        self.durable_txn = self.txn;
        let erased = self.erased_txn;
        self.graveyard.retain(|(_, _, g)| *g > erased);
    }
}

/// The index payload (after the signature line). `write_no` is below `u64::MAX` (it was
/// taken with [`State::take_number`], which leaves a next number).
pub(crate) fn encode_index(st: &State, write_no: u64) -> Vec<u8> {
    let mut w = Writer::default();
    w.u64(st.txn);
    w.u64(write_no.saturating_add(1));
    w.u64(st.index_durable);
    w.u32(st.file_blocks);
    w.runs(&to_runs(&st.commit_chain));
    w.u32(st.tables.len() as u32);
    for (name, t) in &st.tables {
        w.table(name);
        w.u64(t.len() as u64);
        for (k, e) in t.iter() {
            w.key(k);
            w.i64(e.version);
            w.u64(e.txn);
            w.u64(e.len);
            w.runs(&e.runs);
        }
    }
    let free: Vec<u32> = st.free.iter().copied().collect();
    w.runs(&to_runs(&free));
    w.0
}

impl BlockFile {
    /// Rewrites the index in place over its chain (growing it with free blocks, or freeing
    /// its tail), under a fresh write number.
    pub(crate) fn write_index(&self, st: &mut State) -> Result<()> {
        let write_no = st.take_number()?;
        st.index_durable = st.durable_txn.min(st.txn);
        let mut payload = signature_line(&self.signature);
        // Chain growth takes blocks before the free list is encoded.
        let body_guess = encode_index(st, write_no);
        let need = (payload.len() + body_guess.len()).div_ceil(capacity(0, 0)) + 1;
        while st.index_chain.len() < need {
            let b = st.alloc(1)?[0];
            st.index_chain.push(b);
        }
        let body = encode_index(st, write_no);
        payload.extend_from_slice(&body);
        let need = payload.len().div_ceil(capacity(0, 0)).max(1);
        let spare = st.index_chain.split_off(need);
        let mut blocks = Blocks::with_capacity(st.index_chain.len());
        blocks.chain(KIND_INDEX, &[], &[], &payload, 0, write_no, &st.index_chain);
        self.io_write_blocks(&blocks)?;
        // Spare index blocks carry an older write number (recovery ignores index blocks), but
        // the durable index may still be the one that used them: they wait like freed chains.
        if !spare.is_empty() {
            st.deferred.push((st.txn, spare));
        }
        Ok(())
    }

    /// Cuts free blocks off the end of the file.
    pub(crate) fn truncate_tail(&self, st: &mut State) -> Result<()> {
        let before = st.file_blocks;
        while st.file_blocks > 1 && st.free.contains(&(st.file_blocks - 1)) {
            st.file_blocks -= 1;
            st.free.remove(&st.file_blocks);
        }
        if st.file_blocks != before {
            self.io_tick()?;
            self.file.set_len(st.file_blocks as u64 * BLOCK as u64)?;
        }
        Ok(())
    }

    /// Erases and frees the deferred chains whose dropping index is durable. Only while no
    /// snapshot or scan is alive.
    pub(crate) fn release_deferred(&self, st: &mut State) -> Result<()> {
        let durable = st.durable_txn;
        let (ready, waiting): (Vec<_>, Vec<_>) =
            std::mem::take(&mut st.deferred).into_iter().partition(|(t, _)| *t <= durable);
        st.deferred = waiting;
        for (_, chain) in ready {
            if let Some(first) = chain.first() {
                self.io_erase(*first)?;
            }
            st.free.extend(chain);
        }
        st.erased_txn = st.erased_txn.max(durable);
        Ok(())
    }

    pub(crate) fn commit(&self, st: &mut State, batch: &Batch) -> Result<()> {
        // A batch takes two numbers (its own and its index write's): refuse before writing.
        if st.next_txn.checked_add(2).is_none() {
            return Err(Error::Corrupt("transaction numbers exhausted (u64::MAX)".into()));
        }
        let pinned = self.pinned();
        if !pinned {
            // Blocks freed by unsynced batches are reused only after a sync: when too many
            // wait, sync now rather than let the file grow.
            let pending = st.pending_blocks();
            if pending > PENDING_SYNC_MIN && pending > st.file_blocks as usize / 4 {
                self.io_sync()?;
                st.synced();
            }
            self.release_deferred(st)?;
        }
        let txn = st.take_number()?;
        // The last operation on each key wins.
        type Final<'b> = Option<(i64, &'b [u8])>;
        let mut finals: BTreeMap<(&str, &[u8]), Final<'_>> = BTreeMap::new();
        for op in batch.ops() {
            match op {
                Op::Put { table, key, version, data } => {
                    finals.insert((table, key), Some((*version, data)));
                }
                Op::Delete { table, key } => {
                    finals.insert((table, key), None);
                }
            }
        }
        // 1. New blocks: objects, then the commit record naming them.
        let nblocks: usize = finals
            .iter()
            .map(|((t, k), v)| v.map_or(0, |(_, d)| blocks_for(d.len(), t.len(), k.len())))
            .sum();
        let mut blocks = Blocks::with_capacity(nblocks + 2);
        let mut record = Writer::default();
        record.u64(txn);
        record.u32(st.tables.len() as u32);
        for name in st.tables.keys() {
            record.table(name);
        }
        record.u32(finals.len() as u32);
        let mut new_entries = Vec::with_capacity(finals.len());
        for ((table, key), v) in &finals {
            match v {
                Some((version, data)) => {
                    let n = blocks_for(data.len(), table.len(), key.len());
                    let chain = st.alloc(n)?;
                    blocks.chain(KIND_OBJECT, table.as_bytes(), key, data, *version, txn, &chain);
                    let runs = to_runs(&chain);
                    record.u8(0);
                    record.table(table);
                    record.key(key);
                    record.i64(*version);
                    record.u64(data.len() as u64);
                    record.runs(&runs);
                    let e =
                        Entry { version: *version, txn, len: data.len() as u64, runs: runs.into() };
                    new_entries.push((*table, *key, Some(e)));
                }
                None => {
                    record.u8(1);
                    record.table(table);
                    record.key(key);
                    new_entries.push((*table, *key, None));
                }
            }
        }
        for (table, key, e) in &new_entries {
            if e.is_none() {
                st.graveyard.push((table.to_string(), key.to_vec(), txn));
            }
        }
        record.u32(st.graveyard.len() as u32);
        for (t, k, gtxn) in &st.graveyard {
            record.table(t);
            record.key(k);
            record.u64(*gtxn);
        }
        // The number of objects after this batch: a recovery scan checks it.
        let mut objects = st.objects();
        for ((table, key), v) in &finals {
            let exists = st.tables.get(*table).is_some_and(|t| t.contains_key(*key));
            match (exists, v.is_some()) {
                (false, true) => objects += 1,
                (true, false) => objects -= 1,
                _ => {}
            }
        }
        record.u64(objects);
        // Format 2: the transaction this batch follows, so that a recovery scan keeps only a
        // whole prefix of the batches after the durable one.
        record.u64(st.txn);
        let record = record.0;
        let rec_chain = st.alloc(blocks_for(record.len(), 0, 0))?;
        blocks.chain(KIND_COMMIT, &[], &[], &record, 0, txn, &rec_chain);
        // Apply the batch in memory.
        let mut freed: Vec<Vec<u32>> = Vec::new();
        for (table, key, e) in new_entries {
            let t = Arc::make_mut(st.tables.get_mut(table).expect("validated"));
            let old = match e {
                Some(e) => t.insert(key.to_vec(), e),
                None => t.remove(key),
            };
            if let Some(old) = old {
                freed.push(old.blocks().collect());
            }
        }
        freed.push(std::mem::replace(&mut st.commit_chain, rec_chain));
        st.txn = txn;
        // 2. The index, in place, written after the new blocks (a process crash never
        // leaves a whole index over a partial batch); 3. one flush for both.
        self.io_write_blocks(&blocks)?;
        self.write_index(st)?;
        if batch.is_synced() {
            self.io_sync()?;
            st.synced();
        }
        // 4. Free the old blocks: erase each old chain's first trailer, then reuse. Only once
        // this batch's index is durable (else an older durable index may still name them,
        // and a power loss would show it pointing at erased or reused blocks) and no
        // snapshot reads them: until then they wait in `deferred`.
        st.deferred.extend(freed.into_iter().filter(|c| !c.is_empty()).map(|c| (txn, c)));
        if !pinned {
            self.release_deferred(st)?;
            self.truncate_tail(st)?;
        }
        Ok(())
    }
}
