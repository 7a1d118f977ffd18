//! A LevelDB table's integrity checked before rusty-leveldb opens it
//! (`docs/format/bedrock.md`, "The database").
//!
//! rusty-leveldb panics on a table whose footer is damaged, allocates whatever a damaged
//! block handle says, and leaves out a table whose block fails its checksum while iterating:
//! the read ends early without an error. Every table (`*.ldb`, `*.sst`) is therefore checked
//! first, whole:
//!
//! ```text
//! ... blocks: data, 1-byte compression type, 4-byte masked CRC-32C of data ‖ type
//! footer (48 bytes): metaindex handle, index handle (varint64 offset, varint64 size each),
//!                    zero padding to 40 bytes, magic 0xdb4775248b80fb57 (u64 LE)
//! index block entries: shared, unshared, value length (varint32 each), key delta, value =
//!                      a data block's handle; then restart offsets (u32 each) and their count
//! ```
//!
//! The footer's handles, the index block and every data block it names must lie inside the
//! file and pass their checksum.

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

const MAGIC: u64 = 0xdb47_7524_8b80_fb57;
const FOOTER: usize = 48;
const TRAILER: usize = 5;

/// An unsigned LEB128 varint of at most 64 bits at `*at`, advancing past it (LevelDB's
/// varints; the legacy id table's).
pub(crate) fn varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7F) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// A block handle: offset and size, checked to lie (with its trailer) inside `len` bytes.
fn handle(b: &[u8], at: &mut usize, len: usize) -> Option<(usize, usize)> {
    let off = usize::try_from(varint(b, at)?).ok()?;
    let size = usize::try_from(varint(b, at)?).ok()?;
    (off.checked_add(size)?.checked_add(TRAILER)? <= len).then_some((off, size))
}

/// LevelDB's stored CRC-32C (tables and logs) is masked: rotated right by 15 bits plus a
/// constant. This undoes it.
pub(crate) fn unmask_crc(c: u32) -> u32 {
    c.wrapping_sub(0xa282_ead8).rotate_left(15)
}

/// The block at `(off, size)` after its checksum is verified: its compression type and data.
fn block(file: &[u8], (off, size): (usize, usize)) -> Option<(u8, &[u8])> {
    let data = &file[off..off + size];
    let ty = file[off + size];
    let stored = u32::from_le_bytes(file[off + size + 1..off + size + TRAILER].try_into().ok()?);
    let crc = crc32c::crc32c_append(crc32c::crc32c(data), &[ty]);
    (crc == unmask_crc(stored)).then_some((ty, data))
}

fn inflate(ty: u8, data: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let limit = 64 << 20;
    let r = match ty {
        0 => return Ok(data.to_vec()),
        2 => flate2::read::ZlibDecoder::new(data).take(limit).read_to_end(&mut out),
        4 => flate2::read::DeflateDecoder::new(data).take(limit).read_to_end(&mut out),
        t => return Err(format!("compression type {t} (Bedrock uses 0, 2 and 4)")),
    };
    r.map(|_| out).map_err(|e| e.to_string())
}

/// Checks one table file's bytes; `Err` says what is damaged.
pub fn check_table(file: &[u8]) -> std::result::Result<(), String> {
    let len = file.len();
    if len < FOOTER {
        return Err(format!("{len} bytes, shorter than a table's 48-byte footer"));
    }
    let footer = &file[len - FOOTER..];
    if u64::from_le_bytes(footer[40..].try_into().expect("8 bytes")) != MAGIC {
        return Err("the footer's magic number is wrong".into());
    }
    let mut at = 0;
    let body = len - FOOTER;
    let meta = handle(footer, &mut at, body)
        .ok_or("the footer's metaindex handle points outside the file")?;
    let index =
        handle(footer, &mut at, body).ok_or("the footer's index handle points outside the file")?;
    block(file, meta).ok_or("the metaindex block fails its checksum")?;
    let (ty, data) = block(file, index).ok_or("the index block fails its checksum")?;
    let data = inflate(ty, data).map_err(|e| format!("the index block does not inflate: {e}"))?;
    // Entries up to the restart array.
    if data.len() < 4 {
        return Err("the index block is shorter than its restart count".into());
    }
    let restarts = u32::from_le_bytes(data[data.len() - 4..].try_into().expect("4 bytes")) as usize;
    let end = restarts
        .checked_mul(4)
        .and_then(|r| data.len().checked_sub(4 + r))
        .ok_or("the index block's restart array is longer than the block")?;
    let entries = &data[..end];
    let mut at = 0;
    let mut blocks = 0usize;
    while at < entries.len() {
        let bad = || format!("the index block's entry {blocks} is damaged");
        let _shared = varint(entries, &mut at).ok_or_else(bad)?;
        let unshared =
            usize::try_from(varint(entries, &mut at).ok_or_else(bad)?).map_err(|_| bad())?;
        let vlen = usize::try_from(varint(entries, &mut at).ok_or_else(bad)?).map_err(|_| bad())?;
        at = at.checked_add(unshared).filter(|&a| a <= entries.len()).ok_or_else(bad)?;
        let value = entries.get(at..at.checked_add(vlen).ok_or_else(bad)?).ok_or_else(bad)?;
        at += vlen;
        let h = handle(value, &mut 0, body)
            .ok_or_else(|| format!("data block {blocks} points outside the file"))?;
        block(file, h)
            .ok_or_else(|| format!("data block {blocks} (at byte {}) fails its checksum", h.0))?;
        blocks += 1;
    }
    Ok(())
}

/// Checks every table of a database folder (see the module docs).
pub fn check_tables(db_dir: &Path) -> Result<()> {
    let io = |e| Error::Io { path: db_dir.to_path_buf(), source: e };
    for e in std::fs::read_dir(db_dir).map_err(io)? {
        let path = e.map_err(io)?.path();
        let is_table = path.extension().is_some_and(|x| x == "ldb" || x == "sst");
        if !is_table {
            continue;
        }
        let bytes =
            std::fs::read(&path).map_err(|e| Error::Io { path: path.clone(), source: e })?;
        check_table(&bytes).map_err(|why| Error::Db {
            path: path.clone(),
            message: format!("damaged table: {why}; its records cannot be read"),
        })?;
    }
    Ok(())
}
