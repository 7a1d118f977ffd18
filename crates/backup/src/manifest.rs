//! Manifests: one per backup, the changes since its parent backup (or the whole store, for
//! a backup without one), written and read as streams so that neither a backup nor a
//! restore holds one whole. Format: `docs/format/backup-repo.md`, "Manifests".

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result, damaged};
use crate::pack::PieceRef;

/// A manifest's first four bytes.
const MAGIC: &[u8; 4] = b"TBMF";
/// The manifest format this build writes; it reads format 1 too.
const FORMAT_WRITTEN: u8 = 2;
/// Entry kinds of format 2 (1 and 2 are format 1's too).
const KIND_END: u8 = 0;
const KIND_PUT: u8 = 1;
const KIND_REMOVED: u8 = 2;
/// A format-2 put's `stored_len` when the record's length was not recorded (the put was
/// copied from a format-1 manifest).
const STORED_UNKNOWN: u32 = u32::MAX;

/// An object of a backup: its version and where its value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Put {
    /// The object's version.
    pub(crate) version: i64,
    /// Its value.
    pub(crate) piece: PieceRef,
    /// The bytes of the piece's stored body (`None`: not recorded, read from the pack).
    pub(crate) stored_len: Option<u32>,
}

/// One change: the object `key` of table `table` (an index into the manifest's tables) is
/// `put` in this backup, or gone from it (`None`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) table: u16,
    pub(crate) key: Vec<u8>,
    pub(crate) put: Option<Put>,
}

/// A decoded manifest (or only its head and totals, `entries` empty, where a stream
/// carries the entries).
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
    /// The tables the entries index, in name order.
    pub(crate) tables: Vec<String>,
    /// The changes, sorted by table and key.
    pub(crate) entries: Vec<Entry>,
    /// Objects in the backup, and their bytes (the whole store, not the changes).
    pub(crate) objects: u64,
    pub(crate) bytes: u64,
    /// Bytes this backup added to the repository's packs.
    pub(crate) new_bytes: u64,
    /// Changes listed (the entries, once read).
    pub(crate) changes: u64,
}

impl Manifest {
    /// The manifest in the order format 2 keeps: tables by name (each once), entries by
    /// table name and key.
    pub(crate) fn sorted(mut self) -> Manifest {
        let mut names = self.tables.clone();
        names.sort();
        names.dedup();
        let to: Vec<u16> =
            self.tables.iter().map(|t| names.binary_search(t).expect("listed") as u16).collect();
        for e in &mut self.entries {
            e.table = to[usize::from(e.table)];
        }
        self.entries.sort_by(|a, b| (a.table, &a.key).cmp(&(b.table, &b.key)));
        self.tables = names;
        self
    }

    /// The manifest's bytes, in the format this build writes.
    pub(crate) fn encode(&self) -> Vec<u8> {
        let m = self.clone().sorted();
        let mut w = ManifestWriter::new(Vec::new(), &m).expect("a Vec takes every write");
        for e in &m.entries {
            w.entry(e).expect("a Vec takes every write");
        }
        w.finish(m.objects, m.bytes, m.new_bytes).expect("a Vec takes every write").0
    }

    /// Decodes and checks a whole manifest read from `path`.
    pub(crate) fn decode(bytes: &[u8], path: &Path) -> Result<Manifest> {
        let mut r = ManifestReader::new(bytes, path)?;
        let mut entries = Vec::new();
        while let Some(e) = r.next_entry()? {
            entries.push(e);
        }
        Ok(Manifest { entries, ..r.into_head() })
    }
}

/// Writes a manifest entry by entry: the head first, the totals and checksum last.
pub(crate) struct ManifestWriter<W: Write> {
    out: W,
    crc: u32,
    written: u64,
    count: u64,
    tables: usize,
    last: Option<(u16, Vec<u8>)>,
}

impl<W: Write> ManifestWriter<W> {
    /// Starts the manifest whose head is `head` (its tables in name order, each once).
    pub(crate) fn new(out: W, head: &Manifest) -> io::Result<Self> {
        debug_assert!(head.tables.windows(2).all(|w| w[0] < w[1]), "tables in name order");
        let mut w = ManifestWriter {
            out,
            crc: 0,
            written: 0,
            count: 0,
            tables: head.tables.len(),
            last: None,
        };
        w.put(&head_bytes(FORMAT_WRITTEN, head))?;
        Ok(w)
    }

    fn put(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.crc = crc32c::crc32c_append(self.crc, bytes);
        self.written += bytes.len() as u64;
        self.out.write_all(bytes)
    }

    /// Appends `e`, which sorts after every entry before it.
    pub(crate) fn entry(&mut self, e: &Entry) -> io::Result<()> {
        debug_assert!(usize::from(e.table) < self.tables, "a listed table");
        debug_assert!(
            self.last.as_ref().is_none_or(|(t, k)| (*t, k.as_slice()) < (e.table, &e.key[..])),
            "entries in order"
        );
        let mut b = Vec::with_capacity(16 + e.key.len() + 64);
        b.push(if e.put.is_some() { KIND_PUT } else { KIND_REMOVED });
        b.extend(e.table.to_le_bytes());
        b.extend((e.key.len() as u16).to_le_bytes());
        b.extend(&e.key);
        if let Some(p) = &e.put {
            b.extend(p.version.to_le_bytes());
            b.extend(p.piece.raw_len.to_le_bytes());
            b.extend(p.stored_len.unwrap_or(STORED_UNKNOWN).to_le_bytes());
            b.extend(p.piece.sha);
            b.extend(p.piece.pack.to_le_bytes());
            b.extend(p.piece.offset.to_le_bytes());
        }
        self.put(&b)?;
        self.count += 1;
        if cfg!(debug_assertions) {
            self.last = Some((e.table, e.key.clone()));
        }
        Ok(())
    }

    /// Ends the manifest with the backup's totals and the checksum; returns the writer and
    /// the manifest's bytes.
    pub(crate) fn finish(
        mut self,
        objects: u64,
        bytes: u64,
        new_bytes: u64,
    ) -> io::Result<(W, u64)> {
        let mut b = vec![KIND_END];
        for v in [self.count, objects, bytes, new_bytes] {
            b.extend(v.to_le_bytes());
        }
        self.put(&b)?;
        let crc = self.crc;
        self.out.write_all(&crc.to_le_bytes())?;
        Ok((self.out, self.written + 4))
    }
}

/// A manifest's bytes up to its entries (the same in formats 1 and 2): the magic and
/// `format`, the ids, times, signature, source and tables.
fn head_bytes(format: u8, head: &Manifest) -> Vec<u8> {
    let mut b = MAGIC.to_vec();
    b.extend([format, 0, 0, 0]);
    for v in [head.id, head.parent, head.created_ms, head.tick] {
        b.extend(v.to_le_bytes());
    }
    put_str(&mut b, &head.signature);
    put_str(&mut b, &head.source);
    b.extend((head.tables.len() as u16).to_le_bytes());
    for t in &head.tables {
        put_str(&mut b, t);
    }
    b
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    out.extend((s.len() as u16).to_le_bytes());
    out.extend(s.as_bytes());
}

/// Reads a manifest entry by entry, checking as it goes: the head when opened, each entry's
/// order, and the totals and checksum after the last entry (a manifest is trusted whole
/// only once [`ManifestReader::next_entry`] returned `None`). A format-1 manifest is read
/// whole and checked when opened, its entries put in format 2's order.
pub(crate) struct ManifestReader<R> {
    head: Manifest,
    source: Source<R>,
    path: PathBuf,
    last: Option<(u16, Vec<u8>)>,
    done: bool,
}

enum Source<R> {
    /// Format 1, decoded whole.
    Whole(std::vec::IntoIter<Entry>),
    /// Format 2, read as it goes.
    Stream(CrcReader<R>),
}

/// A reader that checksums what it reads.
struct CrcReader<R> {
    r: R,
    crc: u32,
}

impl<R: Read> CrcReader<R> {
    fn exact<const N: usize>(&mut self) -> io::Result<[u8; N]> {
        let mut b = [0u8; N];
        self.r.read_exact(&mut b)?;
        self.crc = crc32c::crc32c_append(self.crc, &b);
        Ok(b)
    }
    fn bytes(&mut self, n: usize) -> io::Result<Vec<u8>> {
        let mut b = vec![0u8; n];
        self.r.read_exact(&mut b)?;
        self.crc = crc32c::crc32c_append(self.crc, &b);
        Ok(b)
    }
    fn u8(&mut self) -> io::Result<u8> {
        Ok(self.exact::<1>()?[0])
    }
    fn u16(&mut self) -> io::Result<u16> {
        self.exact().map(u16::from_le_bytes)
    }
    fn u32(&mut self) -> io::Result<u32> {
        self.exact().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> io::Result<u64> {
        self.exact().map(u64::from_le_bytes)
    }
    fn str(&mut self) -> io::Result<Option<String>> {
        let n = self.u16()?;
        Ok(String::from_utf8(self.bytes(usize::from(n))?).ok())
    }
}

impl<R: Read> ManifestReader<R> {
    /// Opens the manifest read from `r` (the file at `path`, named in errors): reads and
    /// checks its head.
    pub(crate) fn new(mut r: R, path: &Path) -> Result<Self> {
        let bad = |what: &str| damaged(path, format!("manifest: {what}"));
        let mut magic = [0u8; 8];
        r.read_exact(&mut magic).map_err(|e| read_error(e, path))?;
        if &magic[..4] != MAGIC || magic[5..] != [0, 0, 0] {
            return Err(bad("not a manifest"));
        }
        match magic[4] {
            1 => {
                let mut bytes = magic.to_vec();
                r.read_to_end(&mut bytes).map_err(|e| read_error(e, path))?;
                let m = decode_v1(&bytes, path)?.sorted();
                let head = Manifest { entries: Vec::new(), ..m.clone() };
                Ok(ManifestReader {
                    head,
                    source: Source::Whole(m.entries.into_iter()),
                    path: path.to_path_buf(),
                    last: None,
                    done: false,
                })
            }
            FORMAT_WRITTEN => {
                let mut c = CrcReader { r, crc: crc32c::crc32c(&magic) };
                let head =
                    read_head(&mut c).map_err(|e| read_error(e, path))?.ok_or_else(|| {
                        bad("a name is not UTF-8, or the tables are not in name order")
                    })?;
                Ok(ManifestReader {
                    head,
                    source: Source::Stream(c),
                    path: path.to_path_buf(),
                    last: None,
                    done: false,
                })
            }
            f => Err(bad(&format!("format {f} is not one this build reads (1 and 2)"))),
        }
    }

    /// The manifest's head; its totals (`objects`, `bytes`, `new_bytes`, `changes`) once
    /// every entry was read.
    pub(crate) fn head(&self) -> &Manifest {
        &self.head
    }

    /// The head, with its totals once every entry was read.
    pub(crate) fn into_head(self) -> Manifest {
        self.head
    }

    /// The next entry, in order of table name and key; `None` after the last one, once the
    /// totals and the checksum were checked.
    pub(crate) fn next_entry(&mut self) -> Result<Option<Entry>> {
        if self.done {
            return Ok(None);
        }
        let path = self.path.clone();
        let bad = |what: &str| damaged(&path, format!("manifest: {what}"));
        let entry = match &mut self.source {
            Source::Whole(entries) => entries.next(),
            Source::Stream(c) => {
                let kind = c.u8().map_err(|e| read_error(e, &path))?;
                if kind == KIND_END {
                    let mut t = [0u64; 4];
                    for v in &mut t {
                        *v = c.u64().map_err(|e| read_error(e, &path))?;
                    }
                    let want = c.crc;
                    let mut crc = [0u8; 4];
                    c.r.read_exact(&mut crc).map_err(|e| read_error(e, &path))?;
                    if u32::from_le_bytes(crc) != want {
                        return Err(bad("checksum mismatch"));
                    }
                    if c.r.read(&mut [0u8; 1]).map_err(|e| read_error(e, &path))? != 0 {
                        return Err(bad("bytes after the end"));
                    }
                    if t[0] != self.head.changes {
                        return Err(bad("entry count does not match the entries"));
                    }
                    [self.head.objects, self.head.bytes, self.head.new_bytes] = [t[1], t[2], t[3]];
                    None
                } else {
                    let e = read_entry(c, kind, &self.head.tables).map_err(|e| match e {
                        EntryError::Io(e) => read_error(e, &path),
                        EntryError::Bad(what) => bad(what),
                    })?;
                    self.head.changes += 1;
                    Some(e)
                }
            }
        };
        let Some(e) = entry else {
            self.done = true;
            return Ok(None);
        };
        if self.last.as_ref().is_some_and(|(t, k)| (*t, k.as_slice()) >= (e.table, &e.key[..])) {
            return Err(bad("entries out of order"));
        }
        self.last = Some((e.table, e.key.clone()));
        Ok(Some(e))
    }
}

/// A read error: the end of the file is damage (cut short), anything else the system's.
fn read_error(e: io::Error, path: &Path) -> Error {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        damaged(path, "manifest: cut short")
    } else {
        crate::error::io(path)(e)
    }
}

/// Reads a format-2 head after the magic; `None` when a string is not UTF-8 or the tables
/// are not in strict name order.
fn read_head<R: Read>(c: &mut CrcReader<R>) -> io::Result<Option<Manifest>> {
    let mut m = Manifest {
        id: c.u64()?,
        parent: c.u64()?,
        created_ms: c.u64()?,
        tick: c.u64()?,
        ..Manifest::default()
    };
    let (Some(signature), Some(source)) = (c.str()?, c.str()?) else { return Ok(None) };
    (m.signature, m.source) = (signature, source);
    for _ in 0..c.u16()? {
        let Some(t) = c.str()? else { return Ok(None) };
        if m.tables.last().is_some_and(|l| *l >= t) {
            return Ok(None);
        }
        m.tables.push(t);
    }
    Ok(Some(m))
}

enum EntryError {
    Io(io::Error),
    Bad(&'static str),
}

impl From<io::Error> for EntryError {
    fn from(e: io::Error) -> Self {
        EntryError::Io(e)
    }
}

/// Reads a format-2 entry of `kind` (not the end).
fn read_entry<R: Read>(
    c: &mut CrcReader<R>,
    kind: u8,
    tables: &[String],
) -> std::result::Result<Entry, EntryError> {
    if kind != KIND_PUT && kind != KIND_REMOVED {
        return Err(EntryError::Bad("an unknown entry kind"));
    }
    let table = c.u16()?;
    if usize::from(table) >= tables.len() {
        return Err(EntryError::Bad("an entry names a table the manifest does not list"));
    }
    let klen = c.u16()?;
    let key = c.bytes(usize::from(klen))?;
    let put = if kind == KIND_PUT {
        let version = c.u64()? as i64;
        let raw_len = c.u32()?;
        let stored = c.u32()?;
        let sha = c.exact::<32>()?;
        let pack = c.u64()?;
        let offset = c.u64()?;
        Some(Put {
            version,
            piece: PieceRef { pack, offset, raw_len, sha },
            stored_len: (stored != STORED_UNKNOWN).then_some(stored),
        })
    } else {
        None
    };
    Ok(Entry { table, key, put })
}

/// Decodes and checks a whole manifest of format 1 (entries in its own order).
fn decode_v1(bytes: &[u8], path: &Path) -> Result<Manifest> {
    let bad = |what: &str| damaged(path, format!("manifest: {what}"));
    if bytes.len() < 12 {
        return Err(bad("cut short"));
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
        let t = r.str().ok_or_else(cut)?;
        if m.tables.contains(&t) {
            return Err(bad("a table listed twice"));
        }
        m.tables.push(t);
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
            KIND_PUT => Some(Put {
                version: r.u64().ok_or_else(cut)? as i64,
                piece: {
                    let raw_len = r.u32().ok_or_else(cut)?;
                    let sha = r.take(32).ok_or_else(cut)?.try_into().expect("32 bytes");
                    let pack = r.u64().ok_or_else(cut)?;
                    let offset = r.u64().ok_or_else(cut)?;
                    PieceRef { pack, offset, raw_len, sha }
                },
                stored_len: None,
            }),
            KIND_REMOVED => None,
            k => return Err(bad(&format!("unknown entry kind {k}"))),
        };
        m.entries.push(Entry { table, key, put });
    }
    m.objects = r.u64().ok_or_else(cut)?;
    m.bytes = r.u64().ok_or_else(cut)?;
    m.new_bytes = r.u64().ok_or_else(cut)?;
    m.changes = n;
    if !r.b.is_empty() {
        return Err(bad("bytes after the end"));
    }
    // Each (table, key) once: format 2's order is strict.
    let mut keys: Vec<(u16, &[u8])> = m.entries.iter().map(|e| (e.table, &e.key[..])).collect();
    keys.sort_unstable();
    if keys.windows(2).any(|w| w[0] == w[1]) {
        return Err(bad("an object listed twice"));
    }
    Ok(m)
}

/// A cursor over a format-1 manifest's bytes.
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

/// Decodes untrusted bytes as a manifest of either format (the fuzz target's entry point):
/// never panics.
pub fn decode_manifest(bytes: &[u8]) -> std::result::Result<(), crate::Error> {
    Manifest::decode(bytes, Path::new("(fuzz)")).map(|_| ())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A format-1 manifest's bytes, as builds before format 2 wrote them.
    pub(crate) fn encode_v1(m: &Manifest) -> Vec<u8> {
        let mut out = head_bytes(1, m);
        out.extend((m.entries.len() as u64).to_le_bytes());
        for e in &m.entries {
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
        for v in [m.objects, m.bytes, m.new_bytes] {
            out.extend(v.to_le_bytes());
        }
        let crc = crc32c::crc32c(&out);
        out.extend(crc.to_le_bytes());
        out
    }

    fn put(n: u8, stored_len: Option<u32>) -> Option<Put> {
        let piece =
            PieceRef { pack: 7 << 16, offset: 8 + u64::from(n), raw_len: 100, sha: [n; 32] };
        Some(Put { version: i64::from(n) - 3, piece, stored_len })
    }

    /// Tables in the order a store lists them (not by name), entries in that order.
    fn sample(stored: Option<u32>) -> Manifest {
        Manifest {
            id: 4,
            parent: 3,
            created_ms: 1_700_000_000_000,
            tick: 99,
            signature: "terrane world v1".into(),
            source: "w".into(),
            tables: vec!["worldMeta".into(), "chunkl0".into()],
            entries: vec![
                Entry { table: 0, key: b"a".to_vec(), put: put(1, stored) },
                Entry { table: 0, key: b"b".to_vec(), put: None },
                Entry { table: 1, key: b"\x00\x01".to_vec(), put: put(2, stored) },
            ],
            objects: 10,
            bytes: 1000,
            new_bytes: 200,
            changes: 3,
        }
    }

    #[test]
    fn format_two_round_trips_in_name_order_and_format_one_still_reads() {
        let path = Path::new("m.tbm");
        let m = sample(Some(60));
        let back = Manifest::decode(&m.encode(), path).unwrap();
        assert_eq!(back.tables, ["chunkl0", "worldMeta"], "tables by name");
        assert_eq!(back, m.clone().sorted());
        assert_eq!(back.entries[0].put.unwrap().stored_len, Some(60));
        let old = Manifest::decode(&encode_v1(&sample(None)), path).unwrap();
        assert_eq!(old, sample(None).sorted(), "format 1: same objects, no stored lengths");
        // A format-1 manifest written again is format 2, its lengths not recorded.
        let again = Manifest::decode(&old.encode(), path).unwrap();
        assert_eq!(again, old);
    }

    #[test]
    fn every_flipped_or_missing_byte_of_a_manifest_is_refused() {
        let path = Path::new("m.tbm");
        for bytes in [sample(Some(60)).encode(), encode_v1(&sample(None))] {
            for i in 0..bytes.len() {
                let mut bad = bytes.clone();
                bad[i] ^= 0x04;
                assert!(Manifest::decode(&bad, path).is_err(), "byte {i} flipped, yet decoded");
                assert!(Manifest::decode(&bytes[..i], path).is_err(), "cut at {i}, yet decoded");
            }
            let mut longer = bytes.clone();
            longer.push(0);
            assert!(Manifest::decode(&longer, path).is_err());
        }
    }

    #[test]
    fn entries_out_of_order_are_refused_even_with_a_good_checksum() {
        let mut m = sample(Some(60)).sorted();
        m.entries.swap(0, 2);
        // Each entry through a writer of its own: the bytes a writer without the order
        // check would make, checksum and count right.
        let mut w = ManifestWriter::new(Vec::new(), &m).unwrap();
        for e in &m.entries {
            let mut one = ManifestWriter {
                out: Vec::new(),
                crc: 0,
                written: 0,
                count: 0,
                tables: 2,
                last: None,
            };
            one.entry(e).unwrap();
            w.put(&one.out).unwrap();
            w.count += 1;
        }
        let (bytes, _) = w.finish(10, 1000, 200).unwrap();
        let err = Manifest::decode(&bytes, Path::new("m.tbm")).unwrap_err();
        assert!(err.to_string().contains("out of order"), "{err}");
    }
}
