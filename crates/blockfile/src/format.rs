//! The on-disk layout (specified in `docs/format/blockfile.md`): blocks, trailers, and the
//! byte codec of the index and commit record payloads.

/// The block size.
pub const BLOCK: usize = 4096;
/// Size of the fixed part of a trailer (the last bytes of every block).
pub const FIXED: usize = 48;
/// Offset of the fixed trailer inside a block.
pub const FIXED_AT: usize = BLOCK - FIXED;
/// The first bytes of every block file this version writes, before the application's
/// signature.
pub const SIGNATURE_PREFIX: &str = "terrane-blockfile/2 ";
/// The first bytes of a version 1 file (read, and upgraded by a writer's open).
pub const SIGNATURE_PREFIX_V1: &str = "terrane-blockfile/1 ";

/// Block kinds (trailer byte 0). Zero means free.
pub const KIND_OBJECT: u8 = 1;
/// A block of the index object (chain starting at block 0).
pub const KIND_INDEX: u8 = 2;
/// A block of a commit record.
pub const KIND_COMMIT: u8 = 3;

/// The largest value stored (1 GiB).
pub const MAX_VALUE: usize = 1 << 30;

/// Payload bytes of a block whose trailer holds a table name and key of these lengths.
#[inline]
pub const fn capacity(table_len: usize, key_len: usize) -> usize {
    FIXED_AT - table_len - key_len
}

/// Blocks needed for an object of `len` bytes (at least one, even when empty).
#[inline]
pub fn blocks_for(len: usize, table_len: usize, key_len: usize) -> usize {
    len.div_ceil(capacity(table_len, key_len)).max(1)
}

/// The decoded trailer of a block whose checksum is valid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Trailer<'a> {
    /// KIND_OBJECT, KIND_INDEX or KIND_COMMIT.
    pub kind: u8,
    /// The object's table (empty for index and commit blocks).
    pub table: &'a [u8],
    /// The object's key (empty for index and commit blocks).
    pub key: &'a [u8],
    /// Payload bytes used in this block.
    pub used: usize,
    /// The object's version.
    pub version: i64,
    /// The transaction (or index write) number.
    pub txn: u64,
    /// Position of this block in its chain (0-based).
    pub seq: u32,
    /// Number of blocks in the chain.
    pub count: u32,
    /// The next block of the chain, or -1.
    pub next: i64,
}

impl Trailer<'_> {
    /// The payload of `block` described by this trailer.
    pub fn payload<'b>(&self, block: &'b [u8]) -> &'b [u8] {
        &block[..self.used]
    }
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}
fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// Parses a block: `None` unless its checksum, kind and lengths are valid.
pub fn parse_block(block: &[u8]) -> Option<Trailer<'_>> {
    if block.len() != BLOCK {
        return None;
    }
    let f = FIXED_AT;
    let crc = u32_at(block, BLOCK - 4);
    if crc32c::crc32c(&block[..BLOCK - 4]) != crc {
        return None;
    }
    let kind = block[f];
    if !(KIND_OBJECT..=KIND_COMMIT).contains(&kind) || u32_at(block, f + 40) != 0 {
        return None;
    }
    let tlen = block[f + 1] as usize;
    let klen = u16_at(block, f + 2) as usize;
    if tlen > terrane_store::MAX_TABLE_NAME_LEN || klen > terrane_store::MAX_KEY_LEN {
        return None;
    }
    if kind != KIND_OBJECT && (tlen != 0 || klen != 0) {
        return None;
    }
    let used = u32_at(block, f + 4) as usize;
    if used > capacity(tlen, klen) {
        return None;
    }
    let key_at = f - klen;
    let table_at = key_at - tlen;
    // The gap between payload and trailer is zero (canonical blocks only). An OR over the
    // whole gap, without an early exit, which the compiler vectorises (it can be 4 KiB).
    if block[used..table_at].iter().fold(0u8, |a, &b| a | b) != 0 {
        return None;
    }
    let seq = u32_at(block, f + 24);
    let count = u32_at(block, f + 28);
    let next = u64_at(block, f + 32) as i64;
    if seq >= count || next < -1 || (next == -1) != (seq + 1 == count) {
        return None;
    }
    Some(Trailer {
        kind,
        table: &block[table_at..key_at],
        key: &block[key_at..f],
        used,
        version: u64_at(block, f + 8) as i64,
        txn: u64_at(block, f + 16),
        seq,
        count,
        next,
    })
}

/// Zero bytes for a block's gap between payload and trailer.
pub const ZEROS: [u8; BLOCK] = [0; BLOCK];

/// Appends the end of a block that holds `payload` and `head` (whose `used` is the payload's
/// length): table, key, fixed trailer and checksum (the zero gap between payload and table,
/// `capacity(t, k) - payload.len()` bytes, is not appended). The payload is passed only to
/// compute the checksum, so a writer can send it straight from where it lies.
pub fn block_tail(out: &mut Vec<u8>, head: &Trailer<'_>, payload: &[u8]) {
    assert_eq!(head.used, payload.len());
    let gap = capacity(head.table.len(), head.key.len())
        .checked_sub(payload.len())
        .expect("the payload fits in the block");
    let start = out.len();
    out.extend_from_slice(head.table);
    out.extend_from_slice(head.key);
    out.push(head.kind);
    out.push(head.table.len() as u8);
    out.extend_from_slice(&(head.key.len() as u16).to_le_bytes());
    out.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    out.extend_from_slice(&head.version.to_le_bytes());
    out.extend_from_slice(&head.txn.to_le_bytes());
    out.extend_from_slice(&head.seq.to_le_bytes());
    out.extend_from_slice(&head.count.to_le_bytes());
    out.extend_from_slice(&head.next.to_le_bytes());
    out.extend_from_slice(&[0; 4]);
    let crc = crc32c::crc32c_append(crc32c::crc32c(payload), &ZEROS[..gap]);
    let crc = crc32c::crc32c_append(crc, &out[start..]);
    out.extend_from_slice(&crc.to_le_bytes());
    debug_assert_eq!(payload.len() + gap + out.len() - start, BLOCK);
}

/// Writes a whole block: payload, zero gap, then [`block_tail`] (tests build blocks by hand
/// with it).
#[cfg(test)]
#[allow(clippy::too_many_arguments)]
pub fn build_block(
    out: &mut [u8],
    kind: u8,
    table: &[u8],
    key: &[u8],
    payload: &[u8],
    version: i64,
    txn: u64,
    seq: u32,
    count: u32,
    next: i64,
) {
    assert_eq!(out.len(), BLOCK);
    let mut tail = Vec::with_capacity(FIXED + table.len() + key.len());
    let used = payload.len();
    let head = Trailer { kind, table, key, used, version, txn, seq, count, next };
    block_tail(&mut tail, &head, payload);
    let tail_at = BLOCK - tail.len();
    out[..payload.len()].copy_from_slice(payload);
    out[payload.len()..tail_at].fill(0);
    out[tail_at..].copy_from_slice(&tail);
}

/// Appends little-endian fields to a payload.
#[derive(Default)]
pub struct Writer(pub Vec<u8>);

impl Writer {
    pub fn u8(&mut self, v: u8) {
        self.0.push(v);
    }
    pub fn u16(&mut self, v: u16) {
        self.0.extend(v.to_le_bytes());
    }
    pub fn u32(&mut self, v: u32) {
        self.0.extend(v.to_le_bytes());
    }
    pub fn u64(&mut self, v: u64) {
        self.0.extend(v.to_le_bytes());
    }
    pub fn i64(&mut self, v: i64) {
        self.0.extend(v.to_le_bytes());
    }
    pub fn bytes(&mut self, v: &[u8]) {
        self.0.extend(v);
    }
    /// A table name: u8 length, bytes.
    pub fn table(&mut self, t: &str) {
        self.u8(t.len() as u8);
        self.bytes(t.as_bytes());
    }
    /// A key: u16 length, bytes.
    pub fn key(&mut self, k: &[u8]) {
        self.u16(k.len() as u16);
        self.bytes(k);
    }
    /// Block runs: u32 count, then (u32 start, u32 length) each.
    pub fn runs(&mut self, runs: &[(u32, u32)]) {
        self.u32(runs.len() as u32);
        for (s, l) in runs {
            self.u32(*s);
            self.u32(*l);
        }
    }
}

/// Reads little-endian fields from a payload; every read is bounds-checked.
pub struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
}

/// A payload that ended early or held an impossible value.
#[derive(Debug)]
pub struct Malformed(pub &'static str);

type R<T> = Result<T, Malformed>;

impl<'a> Reader<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Reader { data, pos: 0 }
    }
    pub fn take(&mut self, n: usize, what: &'static str) -> R<&'a [u8]> {
        let end =
            self.pos.checked_add(n).filter(|e| *e <= self.data.len()).ok_or(Malformed(what))?;
        let s = &self.data[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    pub fn u8(&mut self, what: &'static str) -> R<u8> {
        Ok(self.take(1, what)?[0])
    }
    pub fn u16(&mut self, what: &'static str) -> R<u16> {
        Ok(u16::from_le_bytes(self.take(2, what)?.try_into().expect("2")))
    }
    pub fn u32(&mut self, what: &'static str) -> R<u32> {
        Ok(u32::from_le_bytes(self.take(4, what)?.try_into().expect("4")))
    }
    pub fn u64(&mut self, what: &'static str) -> R<u64> {
        Ok(u64::from_le_bytes(self.take(8, what)?.try_into().expect("8")))
    }
    pub fn i64(&mut self, what: &'static str) -> R<i64> {
        Ok(self.u64(what)? as i64)
    }
    pub fn table(&mut self) -> R<String> {
        let n = self.u8("table name length")? as usize;
        let b = self.take(n, "table name")?;
        let s = std::str::from_utf8(b).map_err(|_| Malformed("table name is not UTF-8"))?;
        terrane_store::check_table_name(s).map_err(|_| Malformed("invalid table name"))?;
        Ok(s.to_string())
    }
    pub fn key(&mut self) -> R<Vec<u8>> {
        let n = self.u16("key length")? as usize;
        if n > terrane_store::MAX_KEY_LEN {
            return Err(Malformed("key longer than 512 bytes"));
        }
        Ok(self.take(n, "key")?.to_vec())
    }
    /// A count of items each at least `min_size` bytes long, checked against what is left.
    pub fn count(&mut self, min_size: usize, what: &'static str) -> R<usize> {
        let n = self.u32(what)? as usize;
        if n.saturating_mul(min_size) > self.data.len() - self.pos {
            return Err(Malformed(what));
        }
        Ok(n)
    }
    pub fn runs(&mut self) -> R<Vec<(u32, u32)>> {
        let n = self.count(8, "run count")?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            let s = self.u32("run start")?;
            let l = self.u32("run length")?;
            if l == 0 || s.checked_add(l).is_none() {
                return Err(Malformed("empty or overflowing run"));
            }
            v.push((s, l));
        }
        Ok(v)
    }
    pub fn is_done(&self) -> bool {
        self.pos == self.data.len()
    }
    pub fn rest(&self) -> &'a [u8] {
        &self.data[self.pos..]
    }
}

/// Block numbers as runs of consecutive blocks, in order.
pub fn to_runs(blocks: &[u32]) -> Vec<(u32, u32)> {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &b in blocks {
        match runs.last_mut() {
            Some((s, l)) if *s + *l == b => *l += 1,
            _ => runs.push((b, 1)),
        }
    }
    runs
}

/// The blocks of runs, in order.
pub fn from_runs(runs: &[(u32, u32)]) -> impl Iterator<Item = u32> + '_ {
    runs.iter().flat_map(|(s, l)| *s..*s + *l)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_roundtrip_and_checks() {
        let mut b = vec![0u8; BLOCK];
        build_block(&mut b, KIND_OBJECT, b"chunkl0", &[7; 32], b"hello", -5, 9, 1, 3, 42);
        let t = parse_block(&b).unwrap();
        assert_eq!(
            (t.kind, t.table, t.key, t.used, t.version, t.txn, t.seq, t.count, t.next),
            (KIND_OBJECT, &b"chunkl0"[..], &[7u8; 32][..], 5, -5, 9, 1, 3, 42)
        );
        assert_eq!(t.payload(&b), b"hello");
        for i in [0, 5, 100, FIXED_AT - 40, FIXED_AT, FIXED_AT + 20, BLOCK - 1] {
            let mut c = b.clone();
            c[i] ^= 0x10;
            assert!(parse_block(&c).is_none(), "flip at {i} undetected");
        }
        assert!(parse_block(&vec![0u8; BLOCK]).is_none(), "a zero block is free");
        // Last block of a chain must say next = -1 and vice versa.
        build_block(&mut b, KIND_OBJECT, b"t", b"k", b"", 0, 1, 2, 3, 7);
        assert!(parse_block(&b).is_none());
        build_block(&mut b, KIND_OBJECT, b"t", b"k", b"", 0, 1, 2, 3, -1);
        assert!(parse_block(&b).is_some());
        // A non-zero byte anywhere in the gap between payload and trailer, under a valid
        // checksum, is refused (canonical blocks only).
        build_block(&mut b, KIND_OBJECT, b"chunkl0", &[7; 32], b"hello", -5, 9, 1, 3, 42);
        let gap_end = FIXED_AT - 32 - 7;
        for i in [5, 6, 1000, gap_end - 1] {
            let mut c = b.clone();
            c[i] = 1;
            let crc = crc32c::crc32c(&c[..BLOCK - 4]);
            c[BLOCK - 4..].copy_from_slice(&crc.to_le_bytes());
            assert!(parse_block(&c).is_none(), "a non-zero gap byte at {i} accepted");
        }
    }

    #[test]
    fn runs() {
        assert_eq!(to_runs(&[1, 2, 3, 7, 8, 10]), vec![(1, 3), (7, 2), (10, 1)]);
        assert_eq!(from_runs(&[(1, 3), (7, 2)]).collect::<Vec<_>>(), vec![1, 2, 3, 7, 8]);
        assert_eq!(blocks_for(0, 7, 32), 1);
        assert_eq!(blocks_for(capacity(7, 32), 7, 32), 1);
        assert_eq!(blocks_for(capacity(7, 32) + 1, 7, 32), 2);
    }
}
