//! Recovery by scanning: rebuilds the index from the block trailers.
//!
//! The rules (argued in `docs/format/blockfile.md`):
//! 1. The last committed transaction `T` is the newest one whose commit record is intact and
//!    whose every put is a complete chain of that transaction; when an index names a durable
//!    transaction, also one whose chain of `prev` links reaches it through such records.
//! 2. Per key, the object is the complete chain with the highest transaction `<= T`; chains of
//!    later transactions are an interrupted batch and are ignored.
//! 3. A key named in `T`'s graveyard at transaction `g` is deleted when its chain is `<= g`.
//! 4. A chain that starts (block 0 of the chain parses) but is broken, newer than the chosen
//!    version and not deleted, is damage: the key is dropped and reported, never served at an
//!    older version.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::sync::Arc;

use crate::format::{BLOCK, KIND_COMMIT, KIND_OBJECT, Reader, from_runs, parse_block, to_runs};
use crate::{Entry, Error, Result, State, read_blocks};

#[derive(Clone, Debug)]
struct Info {
    kind: u8,
    table: Box<[u8]>,
    key: Box<[u8]>,
    used: u32,
    version: i64,
    txn: u64,
    seq: u32,
    count: u32,
    next: i64,
}

/// (table, key) as raw bytes.
type Id = (Vec<u8>, Vec<u8>);
/// A put named by a commit record: table, key, version, length, blocks.
type RecordPut = (String, Vec<u8>, i64, u64, Vec<(u32, u32)>);

pub(crate) struct Recovered {
    pub state: State,
    pub commit_verified: bool,
    pub damaged: Vec<(String, Vec<u8>)>,
    /// The object count of the last commit record.
    pub objects_expected: Option<u64>,
    /// Keys the last commit record deletes.
    pub deleted: BTreeSet<Id>,
}

struct Record {
    txn: u64,
    /// The transaction the batch followed (format 2; `None` in a format 1 record).
    prev: Option<u64>,
    tables: Vec<String>,
    puts: Vec<RecordPut>,
    graveyard: Vec<(String, Vec<u8>, u64)>,
    objects: u64,
    chain: Vec<u32>,
}

/// Follows the chain starting at `first` (which must be its block 0): the blocks, when the
/// chain is complete and consistent.
fn walk(infos: &[Option<Info>], first: u32) -> Option<Vec<u32>> {
    let head = infos.get(first as usize)?.as_ref()?;
    if head.seq != 0 || head.count as usize > infos.len() {
        return None;
    }
    let mut out = Vec::with_capacity(head.count as usize);
    let mut b = first;
    loop {
        let i = infos.get(b as usize)?.as_ref()?;
        if i.kind != head.kind
            || i.txn != head.txn
            || i.version != head.version
            || i.count != head.count
            || i.seq as usize != out.len()
            || i.table != head.table
            || i.key != head.key
            || b == 0
        {
            return None;
        }
        out.push(b);
        if i.next < 0 {
            return (out.len() == head.count as usize).then_some(out);
        }
        if out.len() >= head.count as usize {
            return None;
        }
        b = u32::try_from(i.next).ok()?;
    }
}

fn parse_record(payload: &[u8], txn: u64, chain: Vec<u32>) -> Option<Record> {
    let mut r = Reader::new(payload);
    if r.u64("txn").ok()? != txn {
        return None;
    }
    let nt = r.count(2, "tables").ok()?;
    let mut tables = Vec::with_capacity(nt);
    for _ in 0..nt {
        tables.push(r.table().ok()?);
    }
    let nops = r.count(4, "ops").ok()?;
    let mut puts = Vec::new();
    for _ in 0..nops {
        let kind = r.u8("op").ok()?;
        let t = r.table().ok()?;
        let k = r.key().ok()?;
        match kind {
            0 => {
                let version = r.i64("version").ok()?;
                let len = r.u64("len").ok()?;
                let runs = r.runs().ok()?;
                puts.push((t, k, version, len, runs));
            }
            1 => {}
            _ => return None,
        }
    }
    let ng = r.count(11, "graveyard").ok()?;
    let mut graveyard = Vec::with_capacity(ng);
    for _ in 0..ng {
        let t = r.table().ok()?;
        let k = r.key().ok()?;
        graveyard.push((t, k, r.u64("txn").ok()?));
    }
    let objects = r.u64("objects").ok()?;
    // Format 2 records end with the batch they follow; format 1 records end here.
    let prev = if r.is_done() { None } else { Some(r.u64("previous txn").ok()?) };
    r.is_done().then_some(Record { txn, prev, tables, puts, graveyard, objects, chain })
}

/// Scans every block of the file and rebuilds the state. `durable`: the last transaction an
/// index of the file says was durable, when one can be read; then the batches kept after it
/// are a whole prefix of those written (format 2 records name the batch they follow).
pub(crate) fn scan(file: &File, file_blocks: u32, durable: Option<u64>) -> Result<Recovered> {
    let mut infos: Vec<Option<Info>> = vec![None; file_blocks as usize];
    let mut max_seen = 0u64;
    let mut s = 0u32;
    while s < file_blocks {
        let n = (file_blocks - s).min(256);
        let buf = read_blocks(file, s, n)?;
        for i in 0..n {
            let bytes = &buf[i as usize * BLOCK..(i as usize + 1) * BLOCK];
            if let Some(t) = parse_block(bytes) {
                max_seen = max_seen.max(t.txn);
                if s + i == 0 {
                    continue; // block 0 is always the index
                }
                infos[(s + i) as usize] = Some(Info {
                    kind: t.kind,
                    table: t.table.into(),
                    key: t.key.into(),
                    used: t.used as u32,
                    version: t.version,
                    txn: t.txn,
                    seq: t.seq,
                    count: t.count,
                    next: t.next,
                });
            }
        }
        s += n;
    }
    let complete_len = |chain: &[u32]| -> u64 {
        chain.iter().map(|b| infos[*b as usize].as_ref().map_or(0, |i| i.used as u64)).sum()
    };

    // 1. The newest verified commit record.
    let mut heads: Vec<(u64, u32)> = infos
        .iter()
        .enumerate()
        .filter_map(|(b, i)| {
            i.as_ref().filter(|i| i.kind == KIND_COMMIT && i.seq == 0).map(|i| (i.txn, b as u32))
        })
        .collect();
    heads.sort_unstable_by(|a, b| b.cmp(a));
    let mut record: Option<Record> = None;
    // The newest record that parses, when its batch is not all there: after a crash that
    // batch was interrupted, but with no verified record left (damage) its object count and
    // puts still say what the store held.
    let mut newest: Option<Record> = None;
    // Every record that parses, newest first, with whether its batch is all there.
    let mut parsed: Vec<(Record, bool)> = Vec::new();
    for (txn, first) in heads {
        let Some(chain) = walk(&infos, first) else { continue };
        let mut payload = Vec::new();
        for b in &chain {
            let buf = read_blocks(file, *b, 1)?;
            match parse_block(&buf) {
                Some(t) => payload.extend_from_slice(t.payload(&buf)),
                None => break,
            }
        }
        let Some(rec) = parse_record(&payload, txn, chain) else { continue };
        let all_present = rec.puts.iter().all(|(t, k, version, len, runs)| {
            // Runs naming more blocks than the file has are not all there: refused before the
            // blocks are listed (a crafted record may name 2^31 of them).
            if runs.iter().map(|r| u64::from(r.1)).sum::<u64>() > u64::from(file_blocks) {
                return false;
            }
            let blocks: Vec<u32> = from_runs(runs).collect();
            let Some(first) = blocks.first() else { return false };
            match infos.get(*first as usize).and_then(|i| i.as_ref()) {
                Some(i)
                    if i.kind == KIND_OBJECT
                        && *i.table == *t.as_bytes()
                        && *i.key == **k
                        && i.version == *version
                        && i.txn == txn => {}
                _ => return false,
            }
            walk(&infos, *first).is_some_and(|c| c == blocks && complete_len(&c) == *len)
        });
        parsed.push((rec, all_present));
    }
    // A batch after the durable one counts only when every batch between them is there too
    // (each names the one it follows): a power loss may keep a later unsynced batch and lose
    // an earlier one, and the later one alone is not a state the store was ever in.
    let whole_prefix = |r: &Record| -> bool {
        let Some(durable) = durable else { return true };
        let mut cur = r;
        loop {
            if cur.txn <= durable {
                return cur.txn == durable;
            }
            let Some(prev) = cur.prev else { return false };
            if prev == durable {
                return true;
            }
            match parsed.iter().find(|(p, _)| p.txn == prev) {
                Some((p, true)) => cur = p,
                _ => return false,
            }
        }
    };
    let mut chosen_at = None;
    for (i, (rec, all_present)) in parsed.iter().enumerate() {
        if *all_present && whole_prefix(rec) {
            chosen_at = Some(i);
            break;
        }
    }
    if chosen_at.is_none() && durable.is_some() {
        // No record reaches the durable one by whole batches (it may predate the records
        // left): the newest whole batch, as in format 1.
        chosen_at = parsed.iter().position(|(_, all)| *all);
    }
    for (i, (rec, all_present)) in parsed.into_iter().enumerate() {
        if Some(i) == chosen_at {
            record = Some(rec);
            break;
        }
        if !all_present && newest.is_none() {
            newest = Some(rec);
        }
    }
    let limit = record.as_ref().map_or(u64::MAX, |r| r.txn);

    // 2. Per key, the newest complete chain up to the limit.
    let mut chosen: BTreeMap<Id, (u64, Vec<u32>)> = BTreeMap::new();
    let mut broken: Vec<(Id, u64)> = Vec::new();
    for (b, info) in infos.iter().enumerate() {
        let Some(i) = info else { continue };
        if i.kind != KIND_OBJECT || i.seq != 0 || i.txn > limit {
            continue;
        }
        let id = (i.table.to_vec(), i.key.to_vec());
        match walk(&infos, b as u32) {
            Some(chain) => {
                if chosen.get(&id).is_none_or(|(t, _)| *t < i.txn) {
                    chosen.insert(id, (i.txn, chain));
                }
            }
            None => broken.push((id, i.txn)),
        }
    }
    // 3. The graveyard of the last record.
    let mut deleted: BTreeMap<Id, u64> = BTreeMap::new();
    if let Some(rec) = &record {
        for (t, k, g) in &rec.graveyard {
            let e = deleted.entry((t.as_bytes().to_vec(), k.clone())).or_insert(0);
            *e = (*e).max(*g);
        }
    }
    chosen.retain(|id, (txn, _)| deleted.get(id).is_none_or(|g| *txn > *g));
    // 4. Damage: a newer broken chain that was not deleted.
    let mut damaged = BTreeSet::new();
    for (id, txn) in broken {
        let newer = chosen.get(&id).is_none_or(|(t, _)| *t < txn);
        let was_deleted = deleted.get(&id).is_some_and(|g| txn <= *g);
        if newer && !was_deleted {
            chosen.remove(&id);
            damaged.insert(id);
        }
    }
    // 5. No verified record (damage): the puts of the newest record that parses which are
    // not there at its transaction are lost (dropped, never served at an older version).
    if record.is_none()
        && let Some(rec) = &newest
    {
        for (t, k, ..) in &rec.puts {
            let id = (t.as_bytes().to_vec(), k.clone());
            if chosen.get(&id).is_none_or(|(txn, _)| *txn != rec.txn) {
                chosen.remove(&id);
                damaged.insert(id);
            }
        }
    }

    // The state.
    let mut tables: BTreeMap<String, BTreeMap<Vec<u8>, Entry>> = BTreeMap::new();
    if let Some(rec) = &record {
        for t in &rec.tables {
            tables.entry(t.clone()).or_default();
        }
    }
    let mut used = vec![false; file_blocks as usize];
    used[0] = true;
    let mut txn = 0;
    for ((t, k), (etxn, chain)) in chosen {
        let Ok(name) = String::from_utf8(t) else { continue };
        if terrane_store::check_table_name(&name).is_err() {
            continue;
        }
        let first = &infos[chain[0] as usize].as_ref().expect("walked");
        let len = complete_len(&chain);
        for b in &chain {
            used[*b as usize] = true;
        }
        txn = txn.max(etxn);
        let e = Entry { version: first.version, txn: etxn, len, runs: to_runs(&chain).into() };
        tables.entry(name).or_default().insert(k, e);
    }
    let commit_chain = record.as_ref().map(|r| r.chain.clone()).unwrap_or_default();
    for b in &commit_chain {
        used[*b as usize] = true;
    }
    let txn = record.as_ref().map_or(txn, |r| r.txn);
    // A block with a valid checksum may carry any number: the counter must not wrap.
    let next_txn = max_seen.checked_add(1).ok_or_else(|| {
        Error::Corrupt("a block carries transaction number u64::MAX: numbers exhausted".into())
    })?;
    let state = State {
        tables: tables.into_iter().map(|(k, v)| (k, Arc::new(v))).collect(),
        txn,
        next_txn,
        file_blocks,
        free: (1..file_blocks).filter(|b| !used[*b as usize]).collect(),
        index_chain: vec![0],
        commit_chain,
        ..State::default()
    };
    let objects_expected = record.as_ref().or(newest.as_ref()).map(|r| r.objects);
    let damaged =
        damaged.into_iter().map(|(t, k)| (String::from_utf8_lossy(&t).into_owned(), k)).collect();
    let deleted = deleted.into_keys().collect();
    Ok(Recovered { state, commit_verified: record.is_some(), damaged, deleted, objects_expected })
}
