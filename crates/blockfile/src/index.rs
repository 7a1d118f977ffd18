//! Reading the index from block 0's chain, and what an index that cannot be used still says.
//!
//! A valid index is the store's state. When it cannot be used, what it still shows is kept as
//! a [`Listing`]: the whole listing of an intact index that names blocks past the end of the
//! file (a truncated file), or the entries of the part of a torn or damaged index chain that
//! still parses. Recovery checks a scan against it, so that what the file's own records say
//! exists is never dropped without a trace.

use std::collections::BTreeMap;
use std::fs::File;
use std::sync::Arc;

use crate::format::{
    self, KIND_COMMIT, KIND_INDEX, KIND_OBJECT, MAX_VALUE, Reader, blocks_for, from_runs,
    parse_block, to_runs,
};
use crate::{Entry, State, read_blocks, read_chain, recover};

/// What an index that could not be used lists: its transaction, and each entry's.
pub(crate) struct Listing {
    /// The last committed transaction when the index was written.
    pub txn: u64,
    /// The last transaction that was durable when the index was written: the batches after it
    /// were not acknowledged as durable, and a crash during their flush may lose them whole.
    pub durable: u64,
    /// (table, key) → the entry's transaction.
    pub entries: BTreeMap<(String, Vec<u8>), u64>,
    /// Whether this is the whole index (intact, but naming blocks past the end of the file),
    /// or only the entries of the part of a torn or damaged chain that still parses.
    pub complete: bool,
    /// A whole index: the blocks it references (its highest block + 1).
    pub blocks_needed: u32,
    /// A whole index that is intact, but whose batches after `durable` are not all on disk:
    /// every entry of a batch the scan keeps must be found exactly.
    pub unflushed: bool,
}

/// An index read back from block 0's chain.
pub(crate) struct LoadedIndex {
    pub state: State,
}

/// The blocks of the index chain from block 0 that parse, in order and of one index write:
/// their payload, their numbers and the write number, and why the chain stops early, if it
/// does.
struct Walked {
    payload: Vec<u8>,
    chain: Vec<u32>,
    write_no: Option<u64>,
    broken: Option<String>,
}

fn walk_index(file: &File, file_blocks: u32) -> Walked {
    let mut w = Walked { payload: Vec::new(), chain: Vec::new(), write_no: None, broken: None };
    let mut count = None;
    let mut b = 0u32;
    let reason = loop {
        if b >= file_blocks {
            break format!("index chain points to block {b}, past the end of the file");
        }
        if w.chain.len() > file_blocks as usize || w.chain.contains(&b) {
            break "index chain loops".into();
        }
        let buf = match read_blocks(file, b, 1) {
            Ok(buf) => buf,
            Err(e) => break format!("reading index block {b}: {e}"),
        };
        let Some(t) = parse_block(&buf) else {
            break format!("index block {b} fails its checksum");
        };
        if t.kind != KIND_INDEX || t.seq as usize != w.chain.len() {
            break format!("block {b} is not index block {}", w.chain.len());
        }
        match (w.write_no, count) {
            (None, _) => (w.write_no, count) = (Some(t.txn), Some(t.count)),
            (Some(n), Some(c)) if (n, c) != (t.txn, t.count) => {
                break format!("index block {b} belongs to another index write (torn index)");
            }
            _ => {}
        }
        w.payload.extend_from_slice(t.payload(&buf));
        w.chain.push(b);
        if t.next < 0 {
            return w;
        }
        match u32::try_from(t.next) {
            Ok(n) => b = n,
            Err(_) => break "index chain points out of range".into(),
        }
    };
    w.broken = Some(reason);
    w
}

/// The entries of the start of an index payload that could not be read whole (a torn or
/// damaged chain): every entry that decodes, up to the first that does not.
fn partial_listing(payload: &[u8], sig_len: usize, version: u8) -> Option<Listing> {
    let mut r = Reader::new(payload.get(sig_len..)?);
    let txn = r.u64("txn").ok()?;
    r.u64("next txn").ok()?;
    let durable = if version >= 2 { r.u64("durable txn").ok()?.min(txn) } else { txn };
    let mut listing = Listing {
        txn,
        durable,
        entries: BTreeMap::new(),
        complete: false,
        blocks_needed: 0,
        unflushed: false,
    };
    let mut entries = |r: &mut Reader<'_>| -> Option<()> {
        r.u32("file blocks").ok()?;
        r.runs().ok()?;
        let ntables = r.u32("table count").ok()?;
        for _ in 0..ntables {
            let name = r.table().ok()?;
            let n = r.u64("entry count").ok()?;
            for _ in 0..n {
                let key = r.key().ok()?;
                r.i64("version").ok()?;
                let etxn = r.u64("entry txn").ok()?;
                r.u64("length").ok()?;
                r.runs().ok()?;
                listing.entries.insert((name.clone(), key), etxn);
            }
        }
        Some(())
    };
    entries(&mut r);
    Some(listing)
}

/// Reads and validates the index chain; `Err(reason)` means "rebuild by scanning".
/// When the index is intact but names blocks past the end of the file (a truncated file),
/// `listing` receives all it lists; when the chain is torn or damaged, the entries of the
/// part that still parses. Recovery checks its scan against them.
///
/// `version` is the format version of the signature line: a version 2 index names the last
/// durable transaction, and the objects and commit record of the batches after it (written in
/// the same flush as the index) are checked block by block before the index is trusted.
pub(crate) fn load_index(
    file: &File,
    file_blocks: u32,
    sig_len: usize,
    version: u8,
    listing: &mut Option<Listing>,
) -> std::result::Result<LoadedIndex, String> {
    let Walked { payload, chain, write_no, broken } = walk_index(file, file_blocks);
    if let Some(reason) = broken {
        *listing = partial_listing(&payload, sig_len, version);
        return Err(reason);
    }
    let write_no = write_no.expect("at least one block");
    if payload.len() < sig_len {
        return Err("index shorter than the signature line".into());
    }
    let mut r = Reader::new(&payload[sig_len..]);
    let m = |e: format::Malformed| format!("index: {}", e.0);
    let txn = r.u64("txn").map_err(m)?;
    let next_txn = r.u64("next txn").map_err(m)?;
    let durable = if version >= 2 { r.u64("durable txn").map_err(m)? } else { txn };
    let _blocks_then = r.u32("file blocks").map_err(m)?;
    if write_no.checked_add(1) != Some(next_txn) || txn > write_no || durable > txn {
        return Err("index numbers are inconsistent".into());
    }
    let mut used = vec![false; file_blocks as usize];
    let mut past_end: Option<String> = None;
    let mut blocks_needed = 0u32;
    let mut listed = BTreeMap::new();
    // Each run is claimed block by block only within the file: a run past its end (a
    // truncated file, or a crafted count of 2^31 blocks) is noted without walking its blocks.
    let mut claim = |runs: &[(u32, u32)], what: &str| -> std::result::Result<(), String> {
        for &(start, len) in runs {
            let end = start.saturating_add(len);
            blocks_needed = blocks_needed.max(end);
            if end > file_blocks {
                let blk = start.max(file_blocks);
                past_end.get_or_insert_with(|| {
                    format!("{what}: block {blk} is past the end of the file (truncated)")
                });
            }
            let within = used.get_mut(start as usize..end.min(file_blocks) as usize);
            for (blk, slot) in (start..).zip(within.unwrap_or(&mut [])) {
                if *slot {
                    return Err(format!("{what}: block {blk} is used twice"));
                }
                *slot = true;
            }
        }
        Ok(())
    };
    claim(&to_runs(&chain), "index")?;
    let commit_runs = r.runs().map_err(m)?;
    claim(&commit_runs, "commit record")?;
    let ntables = r.count(2, "table count").map_err(m)?;
    let mut tables = BTreeMap::new();
    for _ in 0..ntables {
        let name = r.table().map_err(m)?;
        let n = r.u64("entry count").map_err(m)?;
        if n > (r.rest().len() / 30) as u64 {
            return Err("index: entry count larger than the index".into());
        }
        let mut t = BTreeMap::new();
        let mut last: Option<Vec<u8>> = None;
        for _ in 0..n {
            let key = r.key().map_err(m)?;
            let version = r.i64("version").map_err(m)?;
            let etxn = r.u64("entry txn").map_err(m)?;
            let len = r.u64("length").map_err(m)?;
            let runs = r.runs().map_err(m)?;
            if last.as_ref().is_some_and(|l| *l >= key) {
                return Err(format!("index: keys of {name} out of order"));
            }
            if len > MAX_VALUE as u64 || etxn > txn {
                return Err(format!("index: impossible entry in {name}"));
            }
            let nblocks: u64 = runs.iter().map(|r| r.1 as u64).sum();
            if nblocks != blocks_for(len as usize, name.len(), key.len()) as u64 {
                return Err(format!(
                    "index: block count of an entry of {name} does not match its length"
                ));
            }
            claim(&runs, &name)?;
            listed.insert((name.clone(), key.clone()), etxn);
            last = Some(key.clone());
            t.insert(key, Entry { version, txn: etxn, len, runs: runs.into() });
        }
        if tables.insert(name, Arc::new(t)).is_some() {
            return Err("index: a table is listed twice".into());
        }
    }
    let _free_runs = r.runs().map_err(m)?;
    if !r.is_done() {
        return Err("index: trailing bytes".into());
    }
    if let Some(reason) = past_end {
        *listing = Some(Listing {
            txn,
            durable,
            entries: listed,
            complete: true,
            blocks_needed,
            unflushed: false,
        });
        return Err(reason);
    }
    // The free list is recomputed: every block nothing references (the stored list is a
    // record of the same, kept for tools).
    let free = (1..file_blocks).filter(|b| !used[*b as usize]).collect();
    let state = State {
        tables,
        txn,
        next_txn,
        file_blocks,
        free,
        index_chain: chain,
        commit_chain: from_runs(&commit_runs).collect(),
        ..State::default()
    };
    if durable < txn
        && let Err(reason) = check_unflushed(file, &state, durable, &commit_runs)
    {
        // A crash during the flush that carried this index: the index reached the disk, part
        // of its batches did not. The scan rolls them back whole; what it keeps must be
        // exactly what the index lists.
        *listing = Some(Listing {
            txn,
            durable,
            entries: listed,
            complete: false,
            blocks_needed: 0,
            unflushed: true,
        });
        return Err(reason);
    }
    Ok(LoadedIndex { state })
}

/// Reads back the commit record and every object of the batches after `durable`: `Err` names
/// the first block that is not what the index says.
fn check_unflushed(
    file: &File,
    state: &State,
    durable: u64,
    commit_runs: &[(u32, u32)],
) -> std::result::Result<(), String> {
    let why = |e: crate::Error| format!("the newest batches are not all on disk ({e})");
    if !commit_runs.is_empty() {
        let record = Entry { version: 0, txn: state.txn, len: 0, runs: commit_runs.into() };
        read_chain(file, KIND_COMMIT, "", &[], &record, false).map_err(why)?;
    }
    for (name, table) in &state.tables {
        for (key, e) in table.iter().filter(|(_, e)| e.txn > durable) {
            read_chain(file, KIND_OBJECT, name, key, e, true).map_err(why)?;
        }
    }
    Ok(())
}

/// Checks a scan against what an index that could not be used lists: a listed key the scan
/// could not find, or found only at an older transaction (a stale chain not yet erased), is
/// dropped and reported as damaged, never served at an older version. When the listing is a
/// whole index (of a truncated file), an unlisted key the scan found at a transaction the
/// index covers was deleted, and stays deleted.
pub(crate) fn reconcile(
    rec: &mut recover::Recovered,
    listing: &Listing,
    damaged: &mut Vec<(String, Vec<u8>)>,
) {
    for (name, table) in rec.state.tables.iter_mut() {
        let mut dropped = Vec::new();
        for (k, e) in table.iter() {
            let stale = match listing.entries.get(&(name.clone(), k.clone())) {
                Some(listed) => e.txn < *listed,
                None => listing.complete && e.txn <= listing.txn,
            };
            if stale {
                dropped.push(k.clone());
            }
        }
        for k in dropped {
            if let Some(e) = Arc::make_mut(table).remove(&k) {
                rec.state.free.extend(e.blocks());
            }
        }
    }
    for (t, k) in listing.entries.keys() {
        let present = rec.state.tables.get(t).is_some_and(|m| m.contains_key(k));
        let deleted = rec.deleted.contains(&(t.as_bytes().to_vec(), k.clone()));
        let id = (t.clone(), k.clone());
        if !present && !deleted && !damaged.contains(&id) {
            damaged.push(id);
        }
    }
}
