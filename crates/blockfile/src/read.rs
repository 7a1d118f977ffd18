//! Reading objects back: every block's trailer is checked against what the index says
//! (kind, table, key, version, transaction, place in the chain) and its checksum, whether the
//! whole object is read or only the blocks some byte ranges touch.

use std::fs::File;
use std::os::unix::fs::FileExt;

use terrane_store::{Parts, cut_range};

use crate::format::{BLOCK, KIND_COMMIT, KIND_OBJECT, Trailer, capacity, parse_block};
use crate::{Entry, Error, Result};

thread_local! {
    /// Testing only: reads of this thread left before the simulated read error (-1: off).
    static READ_FAULT: std::cell::Cell<i64> = const { std::cell::Cell::new(-1) };
}

/// Testing only: on this thread, the `n`th read of a block file from now (counted from 1:
/// the first block at open, the index, the recovery scan, every object read) fails once
/// with `EIO`, as a failing disk reports it; `None` turns it off. Per thread, because an
/// open reads before there is a handle to ask.
#[doc(hidden)]
pub fn simulate_read_error_at(n: Option<u64>) {
    READ_FAULT.set(n.map_or(-1, |n| n.saturating_sub(1) as i64));
}

/// Testing only: whether the read error asked for on this thread has not happened yet.
#[doc(hidden)]
pub fn read_error_pending() -> bool {
    READ_FAULT.get() >= 0
}

/// Every read of a block file: `read_exact_at`, counted against the simulated read error.
pub(crate) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    match READ_FAULT.get() {
        -1 => {}
        0 => {
            READ_FAULT.set(-1);
            return Err(std::io::Error::from_raw_os_error(5)); // EIO
        }
        left => READ_FAULT.set(left - 1),
    }
    file.read_exact_at(buf, offset)
}

/// Reads `n` whole blocks from block `first`.
pub(crate) fn read_blocks(file: &File, first: u32, n: u32) -> std::io::Result<Vec<u8>> {
    let mut buf = vec![0u8; n as usize * BLOCK];
    read_exact_at(file, &mut buf, first as u64 * BLOCK as u64)?;
    Ok(buf)
}

/// The error for block `blk` of a chain.
fn bad(kind: u8, table: &str, key: &[u8], blk: u32, detail: &str) -> Error {
    let what = if kind == KIND_COMMIT { "commit record" } else { "object" };
    Error::Corrupt(format!(
        "{what} {table}/{} block {blk}: {detail}",
        key.iter().map(|b| format!("{b:02x}")).collect::<String>()
    ))
}

/// Whether `t` is block `seq` of the chain of `kind` that `e` describes (`next` is the
/// following block, or -1).
fn is_chain_block(
    t: &Trailer<'_>,
    kind: u8,
    table: &str,
    key: &[u8],
    e: &Entry,
    seq: usize,
    next: i64,
) -> bool {
    t.kind == kind
        && t.table == table.as_bytes()
        && t.key == key
        && t.txn == e.txn
        && t.version == e.version
        && t.seq as usize == seq
        && t.count == e.block_count()
        && t.next == next
}

/// Reads blocks `first..first + n` of a file, reporting a short file as damage.
fn read_run(file: &File, kind: u8, table: &str, key: &[u8], first: u32, n: u32) -> Result<Vec<u8>> {
    read_blocks(file, first, n).map_err(|err| match err.kind() {
        std::io::ErrorKind::UnexpectedEof => {
            bad(kind, table, key, first, "past the end of the file")
        }
        _ => Error::Io(err),
    })
}

/// Reads an object's blocks and checks each trailer against the entry.
pub(crate) fn read_entry(file: &File, table: &str, key: &[u8], e: &Entry) -> Result<Vec<u8>> {
    read_chain(file, KIND_OBJECT, table, key, e, true)
}

/// Reads a chain of `kind` and checks each block's trailer against `e` (and the length, when
/// `check_len`).
pub(crate) fn read_chain(
    file: &File,
    kind: u8,
    table: &str,
    key: &[u8],
    e: &Entry,
    check_len: bool,
) -> Result<Vec<u8>> {
    let mut out = Vec::with_capacity(e.len as usize);
    let all: Vec<u32> = e.blocks().collect();
    let mut seq = 0usize;
    for &(start, len) in e.runs.iter() {
        let mut s = start;
        while s < start + len {
            let n = (start + len - s).min(256);
            let buf = read_run(file, kind, table, key, s, n)?;
            for i in 0..n {
                let blk = s + i;
                let bytes = &buf[i as usize * BLOCK..(i as usize + 1) * BLOCK];
                let t = parse_block(bytes)
                    .ok_or_else(|| bad(kind, table, key, blk, "checksum mismatch"))?;
                let next = all.get(seq + 1).map_or(-1, |n| *n as i64);
                if !is_chain_block(&t, kind, table, key, e, seq, next) {
                    return Err(bad(kind, table, key, blk, "belongs to another object"));
                }
                out.extend_from_slice(t.payload(bytes));
                seq += 1;
            }
            s += n;
        }
    }
    if check_len && out.len() as u64 != e.len {
        return Err(bad(kind, table, key, all[0], "length differs from the index"));
    }
    Ok(out)
}

/// Byte ranges of an object, reading only the blocks they touch. Block `i` of the chain holds
/// bytes `i * cap..(i + 1) * cap` (`cap` = the payload capacity of the object's blocks), so
/// a range maps to its blocks without reading the others; each block read is checked as by
/// [`read_entry`], its payload length included.
pub(crate) fn read_parts(
    file: &File,
    table: &str,
    key: &[u8],
    e: &Entry,
    ranges: &[std::ops::Range<u64>],
) -> Result<Parts> {
    let cap = capacity(table.len(), key.len()) as u64;
    let all: Vec<u32> = e.blocks().collect();
    let count = all.len();
    // The chain blocks the ranges touch, in chain order.
    let mut wanted: Vec<usize> = Vec::new();
    for r in ranges {
        let r = cut_range(r, e.len);
        if !r.is_empty() {
            wanted.extend((r.start / cap) as usize..=((r.end - 1) / cap) as usize);
        }
    }
    wanted.sort_unstable();
    wanted.dedup();
    // Read them (consecutive blocks together) into a sparse copy of the value.
    let mut value = Vec::new();
    let mut have: Vec<(u64, u64)> = Vec::new();
    let mut i = 0;
    while i < wanted.len() {
        let mut j = i + 1;
        while j < wanted.len()
            && wanted[j] == wanted[j - 1] + 1
            && all[wanted[j]] == all[wanted[j - 1]] + 1
            && j - i < 256
        {
            j += 1;
        }
        let first = all[wanted[i]];
        let buf = read_run(file, KIND_OBJECT, table, key, first, (j - i) as u32)?;
        for (n, &seq) in wanted[i..j].iter().enumerate() {
            let blk = first + n as u32;
            let bytes = &buf[n * BLOCK..(n + 1) * BLOCK];
            let t = parse_block(bytes)
                .ok_or_else(|| bad(KIND_OBJECT, table, key, blk, "checksum mismatch"))?;
            let next = all.get(seq + 1).map_or(-1, |n| *n as i64);
            let used = if seq + 1 == count { e.len - cap * (count as u64 - 1) } else { cap };
            if !is_chain_block(&t, KIND_OBJECT, table, key, e, seq, next) {
                return Err(bad(KIND_OBJECT, table, key, blk, "belongs to another object"));
            }
            if t.used as u64 != used {
                return Err(bad(KIND_OBJECT, table, key, blk, "length differs from the index"));
            }
            have.push((seq as u64 * cap, value.len() as u64));
            value.extend_from_slice(t.payload(bytes));
        }
        i = j;
    }
    // Each range from the blocks read (they cover it whole).
    let at = |pos: u64| -> usize {
        let blk = pos / cap;
        let k = have.partition_point(|(o, _)| *o / cap < blk);
        (have[k].1 + pos - have[k].0) as usize
    };
    let data = ranges
        .iter()
        .map(|r| {
            let r = cut_range(r, e.len);
            if r.is_empty() {
                return Vec::new();
            }
            // A range spans blocks read back to back only when they are consecutive in the
            // chain, which `wanted` guarantees for the blocks of one range.
            let (a, b) = (at(r.start), at(r.end - 1) + 1);
            value[a..b].to_vec()
        })
        .collect();
    Ok(Parts { version: e.version, len: e.len, data })
}

/// [`read_parts`], then [`read_parts`] of the ranges `then` computes from the first result,
/// on the same entry.
pub(crate) fn read_parts_then(
    file: &File,
    table: &str,
    key: &[u8],
    e: &Entry,
    first: &[std::ops::Range<u64>],
    then: &mut dyn FnMut(&Parts) -> Vec<std::ops::Range<u64>>,
) -> Result<(Parts, Parts)> {
    let a = read_parts(file, table, key, e, first)?;
    let b = read_parts(file, table, key, e, &then(&a))?;
    Ok((a, b))
}
