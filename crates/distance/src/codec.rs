//! The canonical checksummed encoding and atomic file save. Layout:
//! `docs/format/distance-graph-v1.md`.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::Error;
use crate::geom::{DMIN, Rect};
use crate::graph::{DistanceGraph, ROOT_MAX, ROOT_MIN};
use crate::node::{Child, L3, Node};

/// Magic bytes opening an encoded graph.
pub const MAGIC: [u8; 4] = *b"TRDG";
/// Format version written and read by this build.
pub const VERSION: u8 = 1;
const HEADER: usize = 20;
const TRAILER: usize = 4;

pub(crate) struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N], Error> {
        let end =
            self.pos.checked_add(N).filter(|&e| e <= self.buf.len()).ok_or(Error::Truncated)?;
        let mut a = [0u8; N];
        a.copy_from_slice(&self.buf[self.pos..end]);
        self.pos = end;
        Ok(a)
    }
    fn u16(&mut self) -> Result<u16, Error> {
        self.take().map(u16::from_le_bytes)
    }
    fn u64(&mut self) -> Result<u64, Error> {
        self.take().map(u64::from_le_bytes)
    }
    fn i32(&mut self) -> Result<i32, Error> {
        self.take().map(i32::from_le_bytes)
    }
    fn remaining(&self) -> usize {
        self.buf.len() - self.pos
    }
}

/// Encoding and decoding of one stored child.
pub(crate) trait Codec: Child {
    fn enc(&self, out: &mut Vec<u8>);
    /// Decodes a stored (partial) child covering `rect`.
    fn dec(r: &mut Reader<'_>, rect: Rect) -> Result<Self, Error>;
}

impl Codec for u16 {
    fn enc(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.to_le_bytes());
    }
    fn dec(r: &mut Reader<'_>, rect: Rect) -> Result<Self, Error> {
        let m = r.u16()?;
        if m == 0 || m == 0xFFFF {
            return Err(Error::NonCanonical("a stored batch mask is empty or full"));
        }
        if (rect.x0 < DMIN && m & 0x1111 != 0) || (rect.z0 < DMIN && m & 0x000F != 0) {
            return Err(Error::NonCanonical("a chunk outside the valid range is completed"));
        }
        Ok(m)
    }
}

impl<C: Codec> Node<C> {
    fn dec_node(r: &mut Reader<'_>, rect: Rect, root: bool) -> Result<Self, Error> {
        let full = r.u64()?;
        let partial = r.u64()?;
        if full & partial != 0 {
            return Err(Error::NonCanonical("a child is flagged both full and partial"));
        }
        if full == 0 && partial == 0 {
            return Err(Error::NonCanonical("an empty node is stored"));
        }
        if !root && full == u64::MAX {
            return Err(Error::NonCanonical("a full node is stored below a root"));
        }
        let n = partial.count_ones() as usize;
        let mut kids = Vec::with_capacity(n.min(r.remaining() / 2));
        let mut count = 0u32;
        for idx in 0..64u32 {
            let cell = Rect::cell_at(rect, C::SHIFT, idx);
            if full >> idx & 1 == 1 {
                if cell.x0 < DMIN || cell.z0 < DMIN {
                    return Err(Error::NonCanonical(
                        "a chunk outside the valid range is completed",
                    ));
                }
                count += C::CAP;
            } else if partial >> idx & 1 == 1 {
                let kid = C::dec(r, cell)?;
                count += kid.count();
                kids.push(kid);
            }
        }
        Ok(Node { full, partial, kids, count })
    }

    fn enc_node(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.full.to_le_bytes());
        out.extend_from_slice(&self.partial.to_le_bytes());
        for k in &self.kids {
            k.enc(out);
        }
    }
}

impl<C: Codec> Codec for Node<C> {
    fn enc(&self, out: &mut Vec<u8>) {
        self.enc_node(out);
    }
    fn dec(r: &mut Reader<'_>, rect: Rect) -> Result<Self, Error> {
        Self::dec_node(r, rect, false)
    }
}

impl Rect {
    /// Child `idx` (of 64) of the cell `rect`, whose children have side `2^shift`.
    fn cell_at(rect: Rect, shift: u32, idx: u32) -> Rect {
        let x0 = rect.x0 + (((idx & 7) as i64) << shift);
        let z0 = rect.z0 + (((idx >> 3) as i64) << shift);
        Rect { x0, z0, x1: x0 + (1 << shift) - 1, z1: z0 + (1 << shift) - 1 }
    }
}

impl DistanceGraph {
    /// The canonical encoding ([format](https://github.com/terrane-rs/terrane/blob/main/docs/format/distance-graph-v1.md)):
    /// the same set of chunks always gives the same bytes, whatever the history that built it.
    /// Ends with a CRC-32C of everything before it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut keys: Vec<(i32, i32)> = self.roots.keys().copied().collect();
        keys.sort_unstable_by_key(|&(x, z)| (z, x));
        let mut out = Vec::with_capacity(64);
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&[VERSION, 0, 0, 0]);
        out.extend_from_slice(&self.len.to_le_bytes());
        out.extend_from_slice(&(keys.len() as u32).to_le_bytes());
        for k in keys {
            out.extend_from_slice(&k.0.to_le_bytes());
            out.extend_from_slice(&k.1.to_le_bytes());
            self.roots[&k].enc_node(&mut out);
        }
        let crc = crc32c::crc32c(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out
    }

    /// Decodes [`to_bytes`](Self::to_bytes). Accepts exactly the canonical encodings: anything
    /// it accepts re-encodes to the identical bytes.
    ///
    /// # Errors
    /// [`Error::BadMagic`], [`Error::UnsupportedVersion`], [`Error::Truncated`],
    /// [`Error::Checksum`], [`Error::TrailingBytes`] or [`Error::NonCanonical`]; never panics.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        if bytes.len() >= 4 && bytes[..4] != MAGIC || bytes.len() < 4 && !MAGIC.starts_with(bytes) {
            return Err(Error::BadMagic);
        }
        if bytes.len() >= 5 && bytes[4] != VERSION {
            return Err(Error::UnsupportedVersion(bytes[4]));
        }
        if bytes.len() < HEADER + TRAILER {
            return Err(Error::Truncated);
        }
        let (body, tail) = bytes.split_at(bytes.len() - TRAILER);
        let stored = u32::from_le_bytes([tail[0], tail[1], tail[2], tail[3]]);
        let computed = crc32c::crc32c(body);
        if stored != computed {
            return Err(Error::Checksum { stored, computed });
        }
        if body[5..8] != [0, 0, 0] {
            return Err(Error::NonCanonical("reserved header bytes are not zero"));
        }
        let mut r = Reader { buf: body, pos: 8 };
        let len = r.u64()?;
        let n = u32::from_le_bytes(r.take()?) as usize;
        let mut g = DistanceGraph::new();
        g.roots.reserve(n.min(r.remaining() / 24));
        let mut prev: Option<(i32, i32)> = None;
        let mut total = 0u64;
        for _ in 0..n {
            let rx = r.i32()?;
            let rz = r.i32()?;
            if !(ROOT_MIN..=ROOT_MAX).contains(&(rx as i64))
                || !(ROOT_MIN..=ROOT_MAX).contains(&(rz as i64))
            {
                return Err(Error::NonCanonical("a root lies outside the valid range"));
            }
            if prev.is_some_and(|(px, pz)| (pz, px) >= (rz, rx)) {
                return Err(Error::NonCanonical(
                    "roots are not in strictly increasing (z, x) order",
                ));
            }
            prev = Some((rx, rz));
            let root = L3::dec_node(&mut r, Rect::cell(3, rx as i64, rz as i64), true)?;
            total += root.count as u64;
            g.roots.insert((rx, rz), root);
        }
        if r.remaining() != 0 {
            return Err(Error::TrailingBytes(r.remaining()));
        }
        if total != len {
            return Err(Error::NonCanonical("the length field does not match the chunks stored"));
        }
        g.len = len;
        Ok(g)
    }

    /// Saves the graph to `path` atomically: the encoding goes to a temporary file in the same
    /// folder, which is flushed to disk (fsync), renamed over `path`, and the folder is
    /// flushed. A crash leaves either the old file or the new one, never a torn one.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file that failed.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), Error> {
        write_atomic(path.as_ref(), &self.to_bytes())
    }

    /// Loads a graph saved with [`save`](Self::save).
    ///
    /// # Errors
    /// [`Error::Io`] when the file cannot be read, or any decoding error of
    /// [`from_bytes`](Self::from_bytes).
    pub fn load(path: impl AsRef<Path>) -> Result<Self, Error> {
        let path = path.as_ref();
        let bytes =
            fs::read(path).map_err(|source| Error::Io { path: path.to_path_buf(), source })?;
        Self::from_bytes(&bytes)
    }
}

/// Writes `bytes` to `path` through a temporary file, fsync, rename and a folder fsync.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let io = |p: &Path| {
        let p: PathBuf = p.to_path_buf();
        move |source| Error::Io { path: p, source }
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().ok_or_else(|| {
        io(path)(std::io::Error::new(std::io::ErrorKind::InvalidInput, "not a file path"))
    })?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(name);
    // Unique per process and per call: concurrent saves never share a temporary file.
    static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let seq = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    tmp_name.push(format!(".{}-{seq}.tmp", std::process::id()));
    let tmp = dir.join(tmp_name);
    let write = || -> std::io::Result<()> {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()
    };
    if let Err(e) = write() {
        let _ = fs::remove_file(&tmp);
        return Err(io(&tmp)(e));
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(io(path)(e));
    }
    #[cfg(unix)]
    File::open(&dir).and_then(|d| d.sync_all()).map_err(io(&dir))?;
    Ok(())
}
