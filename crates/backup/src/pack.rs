//! Pack files: the pieces (object values) of the backups, each checksummed and addressed by
//! the SHA-256 of its bytes. Format: `docs/format/backup-repo.md`, "Pack files".

use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::error::{Result, damaged, io};

/// A pack file's first eight bytes: magic and format version 1.
pub(crate) const PACK_HEADER: &[u8; 8] = b"TBPK\x01\0\0\0";
/// Bytes of a record before its body: stored length, raw length, codec, SHA-256.
const RECORD_HEAD: usize = 4 + 4 + 1 + 32;
/// Codec of a body stored as is.
const CODEC_RAW: u8 = 0;
/// Codec of a body compressed as one LZ4 block.
const CODEC_LZ4: u8 = 1;

/// Where a piece is and what it must hash to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct PieceRef {
    /// The pack file's id (its name: 16 hex digits).
    pub(crate) pack: u64,
    /// The record's offset in the pack.
    pub(crate) offset: u64,
    /// The value's length.
    pub(crate) raw_len: u32,
    /// The SHA-256 of the value.
    pub(crate) sha: [u8; 32],
}

/// The SHA-256 of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

/// The file name of pack `id`.
pub(crate) fn pack_name(id: u64) -> String {
    format!("{id:016x}.tbp")
}

/// The id of the pack file at `path`, from its name; `None` for any other file.
pub(crate) fn pack_id(path: &Path) -> Option<u64> {
    let name = path.file_name()?.to_str()?.strip_suffix(".tbp")?;
    u64::from_str_radix(name, 16).ok()
}

/// A pack being written in the repository's `tmp/` folder.
pub(crate) struct PackWriter {
    id: u64,
    tmp: PathBuf,
    out: BufWriter<File>,
    offset: u64,
}

impl PackWriter {
    /// Starts pack `id` in `tmp_dir`.
    pub(crate) fn create(tmp_dir: &Path, id: u64) -> Result<Self> {
        let tmp = tmp_dir.join(pack_name(id));
        let file = File::create(&tmp).map_err(io(&tmp))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.write_all(PACK_HEADER).map_err(io(&tmp))?;
        Ok(PackWriter { id, tmp, out, offset: PACK_HEADER.len() as u64 })
    }

    /// Bytes written so far.
    pub(crate) fn len(&self) -> u64 {
        self.offset
    }

    /// Appends `raw` (whose SHA-256 is `sha`), compressed when that makes it smaller;
    /// returns where it is and the bytes of its stored body.
    pub(crate) fn append(&mut self, raw: &[u8], sha: [u8; 32]) -> Result<(PieceRef, u32)> {
        let packed = lz4_flex::block::compress(raw);
        let (codec, body) =
            if packed.len() < raw.len() { (CODEC_LZ4, &packed[..]) } else { (CODEC_RAW, raw) };
        let mut head = [0u8; RECORD_HEAD];
        head[0..4].copy_from_slice(&(body.len() as u32).to_le_bytes());
        head[4..8].copy_from_slice(&(raw.len() as u32).to_le_bytes());
        head[8] = codec;
        head[9..41].copy_from_slice(&sha);
        let crc = crc32c::crc32c_append(crc32c::crc32c(&head), body);
        let offset = self.offset;
        for part in [&head[..], body, &crc.to_le_bytes()] {
            self.out.write_all(part).map_err(io(&self.tmp))?;
        }
        self.offset += (RECORD_HEAD + body.len() + 4) as u64;
        Ok((PieceRef { pack: self.id, offset, raw_len: raw.len() as u32, sha }, body.len() as u32))
    }

    /// Makes the pack durable and moves it into `packs_dir`.
    pub(crate) fn finish(self, packs_dir: &Path) -> Result<()> {
        let PackWriter { id, tmp, out, .. } = self;
        crate::repo::durable_rename(out, &tmp, &packs_dir.join(pack_name(id)))
    }
}

/// A pack file is closed and another started past this many bytes.
const PACK_BYTES: u64 = 1 << 30;

/// The packs one job (a backup, a repack) writes: pieces go into a pack in `tmp/`, a new one
/// is started past [`PACK_BYTES`], each named `(id << 16) | n` with the first `n` whose
/// file `packs/` does not hold (one left in `tmp/` by a job cut off is overwritten).
pub(crate) struct PackSeries {
    tmp_dir: PathBuf,
    packs_dir: PathBuf,
    id: u64,
    seq: u64,
    open: Option<PackWriter>,
    written: u64,
}

impl PackSeries {
    /// The packs of job `id` (a backup's id).
    pub(crate) fn new(tmp_dir: PathBuf, packs_dir: PathBuf, id: u64) -> Self {
        PackSeries { tmp_dir, packs_dir, id, seq: 0, open: None, written: 0 }
    }

    /// Appends `raw` (whose SHA-256 is `sha`) to the open pack, publishing a full one first;
    /// returns where it is and the bytes of its stored body.
    pub(crate) fn append(&mut self, raw: &[u8], sha: [u8; 32]) -> Result<(PieceRef, u32)> {
        if self.open.as_ref().is_some_and(|w| w.len() >= PACK_BYTES) {
            let full = self.open.take().expect("checked");
            self.written += full.len();
            full.finish(&self.packs_dir)?;
        }
        let w = match &mut self.open {
            Some(w) => w,
            None => {
                let pid = loop {
                    let pid = (self.id << 16) | (self.seq & 0xffff);
                    self.seq += 1;
                    if !self.packs_dir.join(pack_name(pid)).exists() {
                        break pid;
                    }
                };
                self.open.insert(PackWriter::create(&self.tmp_dir, pid)?)
            }
        };
        w.append(raw, sha)
    }

    /// Publishes the open pack and makes `packs/` durable; returns the bytes of every pack
    /// written (0: none, nothing done).
    pub(crate) fn finish(mut self) -> Result<u64> {
        if let Some(w) = self.open.take() {
            self.written += w.len();
            w.finish(&self.packs_dir)?;
        }
        if self.written > 0 {
            crate::repo::sync_dir(&self.packs_dir)?;
        }
        Ok(self.written)
    }
}

/// Reads the piece `r` from the open pack `file` (at `path`) and checks it: the record's
/// checksum, its lengths, and the SHA-256 of the decoded value.
pub(crate) fn read_piece(mut file: &File, path: &Path, r: &PieceRef) -> Result<Vec<u8>> {
    let bad = |what: &str| damaged(path, format!("piece at offset {}: {what}", r.offset));
    file.seek(SeekFrom::Start(r.offset)).map_err(io(path))?;
    let mut head = [0u8; RECORD_HEAD];
    file.read_exact(&mut head).map_err(|_| bad("cut short"))?;
    let stored = check_head(&head, r).map_err(bad)?;
    let mut body = vec![0u8; stored + 4];
    file.read_exact(&mut body).map_err(|_| bad("cut short"))?;
    decode_record(&head, body, r).map_err(|w| bad(&w))
}

/// The bytes piece `r`'s record takes in the open pack `file` (at `path`), from its checked
/// header.
pub(crate) fn record_len(mut file: &File, path: &Path, r: &PieceRef) -> Result<u64> {
    let bad = |what: &str| damaged(path, format!("piece at offset {}: {what}", r.offset));
    file.seek(SeekFrom::Start(r.offset)).map_err(io(path))?;
    let mut head = [0u8; RECORD_HEAD];
    file.read_exact(&mut head).map_err(|_| bad("cut short"))?;
    let stored = check_head(&head, r).map_err(bad)?;
    Ok((RECORD_HEAD + stored + 4) as u64)
}

/// The bytes a record whose stored body is `stored_len` bytes takes in its pack.
pub(crate) fn record_bytes(stored_len: u32) -> u64 {
    (RECORD_HEAD + stored_len as usize + 4) as u64
}

/// Checks a record's header against the manifest's `r`; returns the stored body's length.
fn check_head(head: &[u8; RECORD_HEAD], r: &PieceRef) -> std::result::Result<usize, &'static str> {
    let stored = u32::from_le_bytes(head[0..4].try_into().expect("4 bytes")) as usize;
    let raw_len = u32::from_le_bytes(head[4..8].try_into().expect("4 bytes"));
    // An LZ4 block is never longer than this; a larger length is damage, not a big value.
    let most = r.raw_len as usize + r.raw_len as usize / 255 + 16;
    if raw_len != r.raw_len || stored > most || head[9..41] != r.sha {
        return Err("its header does not match the manifest");
    }
    Ok(stored)
}

/// Decodes a record's body (with its trailing checksum) and checks it.
fn decode_record(
    head: &[u8; RECORD_HEAD],
    mut body: Vec<u8>,
    r: &PieceRef,
) -> std::result::Result<Vec<u8>, String> {
    let stored = body.len() - 4;
    let crc = u32::from_le_bytes(body[stored..].try_into().expect("4 bytes"));
    body.truncate(stored);
    if crc32c::crc32c_append(crc32c::crc32c(head), &body) != crc {
        return Err("checksum mismatch".into());
    }
    let raw = match head[8] {
        CODEC_RAW => body,
        CODEC_LZ4 => lz4_flex::block::decompress(&body, r.raw_len as usize)
            .map_err(|e| format!("does not decompress: {e}"))?,
        c => return Err(format!("unknown codec {c}")),
    };
    if raw.len() != r.raw_len as usize || sha256(&raw) != r.sha {
        return Err("its bytes do not hash to the manifest's SHA-256".into());
    }
    Ok(raw)
}

/// Decodes untrusted bytes as one pack record, checked against the lengths and hash its own
/// header claims (the fuzz target's entry point): never panics.
pub fn decode_pack_record(bytes: &[u8]) -> std::result::Result<Vec<u8>, String> {
    let head: [u8; RECORD_HEAD] =
        bytes.get(..RECORD_HEAD).ok_or("cut short")?.try_into().expect("41 bytes");
    let r = PieceRef {
        pack: 0,
        offset: 0,
        raw_len: u32::from_le_bytes(head[4..8].try_into().expect("4 bytes")),
        sha: head[9..41].try_into().expect("32 bytes"),
    };
    let stored = check_head(&head, &r)?;
    let body = bytes.get(RECORD_HEAD..RECORD_HEAD + stored + 4).ok_or("cut short")?;
    decode_record(&head, body.to_vec(), &r)
}

/// Checks that `file` starts as a pack file.
pub(crate) fn check_header(mut file: &File, path: &Path) -> Result<()> {
    let mut h = [0u8; 8];
    file.seek(SeekFrom::Start(0)).map_err(io(path))?;
    file.read_exact(&mut h).map_err(|_| damaged(path, "not a pack file: cut short"))?;
    if &h != PACK_HEADER {
        return Err(damaged(path, "not a pack file of format 1"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_decodes_and_any_flipped_byte_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let raw: Vec<u8> = (0..5000u32).map(|i| (i % 7) as u8).collect();
        let mut w = PackWriter::create(dir.path(), 1).unwrap();
        let (r, _) = w.append(&raw, sha256(&raw)).unwrap();
        w.finish(dir.path()).unwrap();
        let bytes = std::fs::read(dir.path().join(pack_name(1))).unwrap();
        let record = &bytes[r.offset as usize..];
        assert_eq!(decode_pack_record(record).unwrap(), raw);
        assert!(record.len() < raw.len() / 4, "compressible values are stored compressed");
        for i in 0..record.len() {
            let mut bad = record.to_vec();
            bad[i] ^= 0x01;
            assert!(decode_pack_record(&bad).is_err(), "byte {i} flipped, yet decoded");
        }
        assert!(decode_pack_record(&record[..record.len() - 1]).is_err());
    }
}
