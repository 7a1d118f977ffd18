//! Manifests: one per backup, the changes since its parent backup (or the whole store, for
//! a backup without one). Format: `docs/format/backup-repo-v1.md`, "Manifests".

use std::path::Path;

use crate::error::{Result, damaged};
use crate::pack::PieceRef;

/// A manifest's first eight bytes: magic and format version 1.
const MANIFEST_HEADER: &[u8; 8] = b"TBMF\x01\0\0\0";

/// An object of a backup: its version and where its value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Put {
    /// The object's version.
    pub(crate) version: i64,
    /// Its value.
    pub(crate) piece: PieceRef,
}

/// One change: the object `key` of table `table` (an index into the manifest's tables) is
/// `put` in this backup, or gone from it (`None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) table: u16,
    pub(crate) key: Vec<u8>,
    pub(crate) put: Option<Put>,
}

/// A decoded manifest.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Manifest {
    /// The backup's id.
    pub(crate) id: u64,
    /// The backup its entries are changes against; 0: none (the entries are the whole store).
    pub(crate) parent: u64,
    /// When the backup was taken, milliseconds since the Unix epoch.
    pub(crate) created_ms: u64,
    /// The caller's label of the moment (a world's game tick).
    pub(crate) tick: u64,
    /// The store's format signature.
    pub(crate) signature: String,
    /// What was backed up (a world's path), for people.
    pub(crate) source: String,
    /// The tables the entries index.
    pub(crate) tables: Vec<String>,
    /// The changes, sorted by table and key.
    pub(crate) entries: Vec<Entry>,
    /// Objects in the backup, and their bytes (the whole store, not the changes).
    pub(crate) objects: u64,
    pub(crate) bytes: u64,
    /// Bytes this backup added to the repository's packs.
    pub(crate) new_bytes: u64,
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u16).to_le_bytes());
    out.extend(s.as_bytes());
}

impl Manifest {
    /// The manifest's bytes.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let mut out = MANIFEST_HEADER.to_vec();
        for v in [self.id, self.parent, self.created_ms, self.tick] {
            out.extend(v.to_le_bytes());
        }
        put_str(&mut out, &self.signature);
        put_str(&mut out, &self.source);
        out.extend((self.tables.len() as u16).to_le_bytes());
        for t in &self.tables {
            put_str(&mut out, t);
        }
        out.extend((self.entries.len() as u64).to_le_bytes());
        for e in &self.entries {
            out.push(if e.put.is_some() { 1 } else { 2 });
            out.extend(e.table.to_le_bytes());
            out.extend((e.key.len() as u16).to_le_bytes());
            out.extend(&e.key);
            if let Some(p) = &e.put {
                out.extend(p.version.to_le_bytes());
                out.extend(p.piece.raw_len.to_le_bytes());
                out.extend(p.piece.sha);
                out.extend(p.piece.pack.to_le_bytes());
                out.extend(p.piece.offset.to_le_bytes());
            }
        }
        for v in [self.objects, self.bytes, self.new_bytes] {
            out.extend(v.to_le_bytes());
        }
        let crc = crc32c::crc32c(&out);
        out.extend(crc.to_le_bytes());
        out
    }

    /// Decodes and checks a manifest read from `path`.
    pub(crate) fn decode(bytes: &[u8], path: &Path) -> Result<Manifest> {
        let bad = |what: &str| damaged(path, format!("manifest: {what}"));
        if bytes.len() < MANIFEST_HEADER.len() + 4 || &bytes[..8] != MANIFEST_HEADER {
            return Err(bad("not a manifest of format 1"));
        }
        let (body, crc) = bytes.split_at(bytes.len() - 4);
        if crc32c::crc32c(body) != u32::from_le_bytes(crc.try_into().expect("4 bytes")) {
            return Err(bad("checksum mismatch"));
        }
        let mut r = Reader { b: &body[8..] };
        let cut = || bad("cut short");
        let mut m = Manifest {
            id: r.u64().ok_or_else(cut)?,
            parent: r.u64().ok_or_else(cut)?,
            created_ms: r.u64().ok_or_else(cut)?,
            tick: r.u64().ok_or_else(cut)?,
            signature: r.str().ok_or_else(cut)?,
            source: r.str().ok_or_else(cut)?,
            ..Manifest::default()
        };
        let tables = r.u16().ok_or_else(cut)?;
        for _ in 0..tables {
            m.tables.push(r.str().ok_or_else(cut)?);
        }
        let n = r.u64().ok_or_else(cut)?;
        // Each entry takes at least 5 bytes: a count beyond that is damage.
        if n > (r.b.len() / 5) as u64 {
            return Err(bad("entry count larger than the file"));
        }
        m.entries.reserve(n as usize);
        for _ in 0..n {
            let kind = r.u8().ok_or_else(cut)?;
            let table = r.u16().ok_or_else(cut)?;
            if usize::from(table) >= m.tables.len() {
                return Err(bad("an entry names a table the manifest does not list"));
            }
            let klen = r.u16().ok_or_else(cut)?;
            let key = r.take(usize::from(klen)).ok_or_else(cut)?.to_vec();
            let put = match kind {
                1 => Some(Put {
                    version: r.u64().ok_or_else(cut)? as i64,
                    piece: {
                        let raw_len = r.u32().ok_or_else(cut)?;
                        let sha = r.take(32).ok_or_else(cut)?.try_into().expect("32 bytes");
                        let pack = r.u64().ok_or_else(cut)?;
                        let offset = r.u64().ok_or_else(cut)?;
                        PieceRef { pack, offset, raw_len, sha }
                    },
                }),
                2 => None,
                k => return Err(bad(&format!("unknown entry kind {k}"))),
            };
            m.entries.push(Entry { table, key, put });
        }
        m.objects = r.u64().ok_or_else(cut)?;
        m.bytes = r.u64().ok_or_else(cut)?;
        m.new_bytes = r.u64().ok_or_else(cut)?;
        if !r.b.is_empty() {
            return Err(bad("bytes after the end"));
        }
        Ok(m)
    }
}

/// A cursor over a manifest's bytes.
struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.b.len() < n {
            return None;
        }
        let (head, rest) = self.b.split_at(n);
        self.b = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    fn str(&mut self) -> Option<String> {
        let n = self.u16()?;
        String::from_utf8(self.take(usize::from(n))?.to_vec()).ok()
    }
}

/// Decodes untrusted bytes as a manifest (the fuzz target's entry point): never panics.
pub fn decode_manifest(bytes: &[u8]) -> std::result::Result<(), crate::Error> {
    Manifest::decode(bytes, Path::new("(fuzz)")).map(|_| ())
}
