//! The Anvil region container (`r.X.Z.mca`, plus `c.X.Z.mcc` oversize side files): a lenient
//! reader and a writer that follows Minecraft's rules.
//!
//! The layout is specified in `docs/format/anvil.md`; in short: a 4 KiB table of 1024
//! big-endian location entries (`sector offset << 8 | sector count`), a 4 KiB table of 1024
//! big-endian timestamps, then chunks in runs of 4 KiB sectors, each `u32 length` (counting
//! the compression byte), `u8 compression`, data.
//!
//! Leniency (all of it exercised by the fixtures or the fuzz target):
//! - zlib and gzip streams are decoded up to their own end, within the sector run, so a
//!   length field one byte short (written by some third-party tools) still decodes;
//! - a chunk whose location, length, compression or stream is damaged yields a
//!   [`ChunkError`] for that chunk only; the other chunks stay readable;
//! - nothing here panics on arbitrary bytes (fuzz target `anvil_region`).

use std::io::{Read, Seek};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::ChunkError;

/// Size of a region sector in bytes.
pub const SECTOR: usize = 4096;
/// Size of the region header (locations + timestamps) in bytes.
pub const HEADER: usize = 2 * SECTOR;
/// Flag set in the compression byte when the chunk lives in a `c.X.Z.mcc` side file.
pub const EXTERNAL_FLAG: u8 = 128;
/// Default limit on one decompressed chunk (guards against decompression bombs).
pub const DEFAULT_MAX_DECOMPRESSED: usize = 64 << 20;
/// Largest sector count a location entry can express; chunks that need more sectors go to a
/// `.mcc` side file.
pub const MAX_SECTORS: usize = 255;

const LZ4_MAGIC: &[u8; 8] = b"LZ4Block";

/// Compression of one stored chunk (the low 7 bits of the compression byte).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub enum Compression {
    /// 1: gzip (RFC 1952).
    Gzip,
    /// 2: zlib (RFC 1950), what Minecraft writes by default and [`RegionWriter`]'s default.
    #[default]
    Zlib,
    /// 3: uncompressed NBT.
    None,
    /// 4: LZ4 in lz4-java's `LZ4BlockOutputStream` framing (Minecraft 24w04a+, optional).
    Lz4,
}

impl Compression {
    /// The compression byte's value.
    pub const fn id(self) -> u8 {
        match self {
            Compression::Gzip => 1,
            Compression::Zlib => 2,
            Compression::None => 3,
            Compression::Lz4 => 4,
        }
    }

    /// Parses a compression byte (without the external flag).
    pub const fn from_id(id: u8) -> Option<Self> {
        match id {
            1 => Some(Compression::Gzip),
            2 => Some(Compression::Zlib),
            3 => Some(Compression::None),
            4 => Some(Compression::Lz4),
            _ => None,
        }
    }

    /// The compression a name gives: `zlib` (or `deflate`, as Minecraft's
    /// `region-file-compression` says), `gzip`, `lz4` or `none`.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "zlib" | "deflate" => Some(Compression::Zlib),
            "gzip" => Some(Compression::Gzip),
            "lz4" => Some(Compression::Lz4),
            "none" => Some(Compression::None),
            _ => None,
        }
    }

    /// A short name for messages.
    pub const fn name(self) -> &'static str {
        match self {
            Compression::Gzip => "gzip",
            Compression::Zlib => "zlib",
            Compression::None => "none",
            Compression::Lz4 => "lz4",
        }
    }
}

/// One present entry of a region's location table.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ChunkEntry {
    /// Index in the table: `local_x + 32 * local_z`.
    pub index: usize,
    /// First sector of the chunk.
    pub sector: u32,
    /// Number of sectors reserved for the chunk.
    pub sectors: u8,
    /// Last modification time (seconds since the Unix epoch), from the timestamp table.
    pub timestamp: u32,
}

impl ChunkEntry {
    /// Column x inside the region (0..32).
    pub const fn local_x(&self) -> u32 {
        (self.index % 32) as u32
    }
    /// Column z inside the region (0..32).
    pub const fn local_z(&self) -> u32 {
        (self.index / 32) as u32
    }
}

/// A chunk read from a region: its decompressed NBT bytes and where they came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawChunk {
    /// Location table index.
    pub index: usize,
    /// The compression the chunk was stored with.
    pub compression: Compression,
    /// True when the data came from a `.mcc` side file.
    pub external: bool,
    /// Stored (compressed) bytes, header excluded.
    pub stored_len: usize,
    /// The timestamp table's entry.
    pub timestamp: u32,
    /// The uncompressed NBT.
    pub nbt: Vec<u8>,
}

/// For each location index, 1 + the index of another entry whose sector run overlaps its own
/// (0: none): a sweep over the runs sorted by first sector.
fn overlapping_runs(bytes: &[u8]) -> Vec<u16> {
    let mut out = vec![0u16; 1024];
    if bytes.len() < HEADER {
        return out;
    }
    let mut runs: Vec<(u32, u32, usize)> = (0..1024)
        .filter_map(|i| {
            let b = &bytes[i * 4..i * 4 + 4];
            let loc = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
            let (sector, count) = (loc >> 8, loc & 0xFF);
            (loc != 0 && count > 0).then_some((sector, sector + count, i))
        })
        .collect();
    runs.sort_unstable();
    // The run reaching furthest so far: any later run starting before its end overlaps it.
    let mut reach: Option<(u32, usize)> = None;
    for &(start, end, i) in &runs {
        if let Some((far, j)) = reach
            && start < far
        {
            out[i] = j as u16 + 1;
            if out[j] == 0 {
                out[j] = i as u16 + 1;
            }
        }
        if reach.is_none_or(|(far, _)| end > far) {
            reach = Some((end, i));
        }
    }
    out
}

/// Parses a region file name `r.<x>.<z>.mca` into region coordinates.
pub fn parse_region_name(name: &str) -> Option<(i32, i32)> {
    let rest = name.strip_prefix("r.")?.strip_suffix(".mca")?;
    let (x, z) = rest.split_once('.')?;
    Some((x.parse().ok()?, z.parse().ok()?))
}

/// Parses a Linear region file name `r.<x>.<z>.linear` ([`crate::linear`]) into region
/// coordinates.
pub fn parse_linear_name(name: &str) -> Option<(i32, i32)> {
    let rest = name.strip_prefix("r.")?.strip_suffix(".linear")?;
    let (x, z) = rest.split_once('.')?;
    Some((x.parse().ok()?, z.parse().ok()?))
}

/// The side-file name Minecraft uses for an oversize chunk at absolute column `(x, z)`.
pub fn external_name(x: i32, z: i32) -> String {
    format!("c.{x}.{z}.mcc")
}

/// Parses a side-file name `c.<x>.<z>.mcc` ([`external_name`]) into the column's absolute
/// coordinates.
pub fn parse_external_name(name: &str) -> Option<(i32, i32)> {
    let rest = name.strip_prefix("c.")?.strip_suffix(".mcc")?;
    let (x, z) = rest.split_once('.')?;
    Some((x.parse().ok()?, z.parse().ok()?))
}

/// A region file held in memory, read leniently.
///
/// ```
/// use terrane_anvil::region::{RegionFile, RegionWriter};
///
/// let mut w = RegionWriter::new(0, 0);
/// w.insert(33, b"\x0a\x00\x00\x00".to_vec(), 1_700_000_000);
/// let (bytes, side_files) = w.finish().unwrap();
/// assert!(side_files.is_empty());
/// let region = RegionFile::new(bytes).unwrap();
/// let entries: Vec<_> = region.entries().collect();
/// assert_eq!(entries.len(), 1);
/// let chunk = region.read(&entries[0]).unwrap();
/// assert_eq!(chunk.nbt, b"\x0a\x00\x00\x00");
/// ```
#[derive(Clone, Debug)]
pub struct RegionFile {
    source: Source,
    /// The header (location and timestamp tables): the whole file for an in-memory region,
    /// its first 8 KiB for one read from disk (empty for an empty file).
    bytes: Vec<u8>,
    position: Option<(i32, i32)>,
    external_dir: Option<PathBuf>,
    max_decompressed: usize,
    /// Per location index: 1 + the index of another entry whose sector run overlaps this
    /// one's (0: none). Two chunks cannot share sectors, so neither is believed.
    overlaps: Vec<u16>,
}

/// Where a region's chunks are read from.
#[derive(Clone, Debug)]
enum Source {
    /// The whole file, in `RegionFile::bytes`.
    Memory,
    /// The open file, read a chunk at a time, and its length.
    File(Arc<Mutex<std::fs::File>>, u64),
}

/// Returned by [`RegionFile::new`] when the bytes are shorter than the header (and not
/// empty: an empty file is an empty region, as in Minecraft).
#[derive(Copy, Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("region file truncated: {0} bytes, the header needs 8192")]
pub struct TruncatedHeader(pub usize);

impl RegionFile {
    /// Wraps the bytes of a region file. An empty file is a region without chunks.
    pub fn new(bytes: Vec<u8>) -> Result<Self, TruncatedHeader> {
        if !bytes.is_empty() && bytes.len() < HEADER {
            return Err(TruncatedHeader(bytes.len()));
        }
        let overlaps = overlapping_runs(&bytes);
        Ok(RegionFile {
            source: Source::Memory,
            bytes,
            position: None,
            external_dir: None,
            max_decompressed: DEFAULT_MAX_DECOMPRESSED,
            overlaps,
        })
    }

    /// Opens a region file to read its chunks one at a time from disk: only the 8 KiB header
    /// is held, so that memory does not grow with the region (a full region of a real world
    /// is 5 to 20 MiB). Reads give the same chunks and errors as [`new`](Self::new) over the
    /// file's bytes, as long as the file does not change while it is read.
    ///
    /// The outer error is the file's (open, read); the inner one a file shorter than its
    /// header.
    pub fn open(path: &Path) -> std::io::Result<Result<Self, TruncatedHeader>> {
        let mut file = std::fs::File::open(path)?;
        let len = file.metadata()?.len();
        let mut header = Vec::with_capacity(HEADER);
        (&mut file).take(HEADER as u64).read_to_end(&mut header)?;
        if !header.is_empty() && header.len() < HEADER {
            return Ok(Err(TruncatedHeader(header.len())));
        }
        let overlaps = overlapping_runs(&header);
        Ok(Ok(RegionFile {
            source: Source::File(Arc::new(Mutex::new(file)), len),
            bytes: header,
            position: None,
            external_dir: None,
            max_decompressed: DEFAULT_MAX_DECOMPRESSED,
            overlaps,
        }))
    }

    /// The file's length in bytes.
    pub fn len(&self) -> u64 {
        match &self.source {
            Source::Memory => self.bytes.len() as u64,
            Source::File(_, len) => *len,
        }
    }

    /// True for an empty file (a region without chunks).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes `start..end` of the file (`end` within [`len`](Self::len)).
    fn span(&self, start: usize, end: usize) -> Result<std::borrow::Cow<'_, [u8]>, ChunkError> {
        match &self.source {
            Source::Memory => Ok(std::borrow::Cow::Borrowed(&self.bytes[start..end])),
            Source::File(file, len) => {
                let mut buf = vec![0u8; end - start];
                // A poisoned lock only means another reader panicked: the file is still good.
                let mut f = file.lock().unwrap_or_else(|p| p.into_inner());
                debug_assert!(end as u64 <= *len);
                f.seek(std::io::SeekFrom::Start(start as u64))
                    .and_then(|_| f.read_exact(&mut buf))
                    .map_err(|e| ChunkError::Read {
                        start: start as u64,
                        end: end as u64,
                        message: e.to_string(),
                    })?;
                Ok(std::borrow::Cow::Owned(buf))
            }
        }
    }

    /// Sets the region's coordinates and the folder holding its `.mcc` side files; without
    /// them, externally stored chunks report [`ChunkError::ExternalFile`].
    pub fn with_external(mut self, region_x: i32, region_z: i32, dir: impl Into<PathBuf>) -> Self {
        self.position = Some((region_x, region_z));
        self.external_dir = Some(dir.into());
        self
    }

    /// Sets the limit on one decompressed chunk (default [`DEFAULT_MAX_DECOMPRESSED`]).
    pub fn with_max_decompressed(mut self, limit: usize) -> Self {
        self.max_decompressed = limit;
        self
    }

    /// The file's bytes as held: the whole file for a region made by [`new`](Self::new),
    /// only the header for one [`open`](Self::open)ed.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    fn be32(&self, at: usize) -> u32 {
        let b = &self.bytes[at..at + 4];
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    /// The present entries of the location table (entry != 0), in index order.
    pub fn entries(&self) -> impl Iterator<Item = ChunkEntry> + '_ {
        let n = if self.bytes.is_empty() { 0 } else { 1024 };
        (0..n).filter_map(move |index| {
            let loc = self.be32(index * 4);
            if loc == 0 {
                return None;
            }
            Some(ChunkEntry {
                index,
                sector: loc >> 8,
                sectors: (loc & 0xFF) as u8,
                timestamp: self.be32(SECTOR + index * 4),
            })
        })
    }

    /// The entry at a location-table index, if present.
    pub fn entry(&self, index: usize) -> Option<ChunkEntry> {
        if self.bytes.is_empty() || index >= 1024 {
            return None;
        }
        let loc = self.be32(index * 4);
        (loc != 0).then(|| ChunkEntry {
            index,
            sector: loc >> 8,
            sectors: (loc & 0xFF) as u8,
            timestamp: self.be32(SECTOR + index * 4),
        })
    }

    /// Reads and decompresses one chunk. Never panics; damage is a [`ChunkError`].
    pub fn read(&self, entry: &ChunkEntry) -> Result<RawChunk, ChunkError> {
        let len = self.len();
        if entry.sector < 2 {
            return Err(ChunkError::SectorInHeader { sector: entry.sector });
        }
        if let Some(&o) = self.overlaps.get(entry.index)
            && o != 0
        {
            return Err(ChunkError::SharedSectors { index: entry.index, other: o as usize - 1 });
        }
        let start = entry.sector as u64 * SECTOR as u64;
        if start + 5 > len {
            return Err(ChunkError::OutOfBounds { needed: start + 5, len });
        }
        let start = start as usize;
        let head = self.span(start, start + 5)?;
        let length = u32::from_be_bytes([head[0], head[1], head[2], head[3]]);
        if length == 0 {
            return Err(ChunkError::EmptyChunk(length));
        }
        let kind = head[4];
        let declared_end = start as u64 + 4 + length as u64;
        if declared_end > len {
            return Err(ChunkError::OutOfBounds { needed: declared_end, len });
        }
        let declared_end = declared_end as usize;
        // The sector run: where a lenient decoder may look for the end of a stream.
        let run_end = (start as u64 + entry.sectors as u64 * SECTOR as u64).min(len) as usize;
        let run_end = run_end.max(declared_end);
        if kind & !EXTERNAL_FLAG == CUSTOM_COMPRESSION {
            let data = match kind & EXTERNAL_FLAG {
                0 => self.span(start + 5, declared_end)?.to_vec(),
                _ => self.read_external(entry.index)?,
            };
            return Err(ChunkError::CustomCompression { algorithm: custom_algorithm(&data) });
        }
        let compression = Compression::from_id(kind & !EXTERNAL_FLAG)
            .ok_or(ChunkError::UnknownCompression(kind & !EXTERNAL_FLAG))?;
        if kind & EXTERNAL_FLAG != 0 {
            let data = self.read_external(entry.index)?;
            let nbt = decompress(compression, &data, data.len(), self.max_decompressed)?;
            return Ok(RawChunk {
                index: entry.index,
                compression,
                external: true,
                stored_len: data.len(),
                timestamp: entry.timestamp,
                nbt,
            });
        }
        let data = self.span(start + 5, run_end)?;
        let exact = declared_end - (start + 5);
        let nbt = decompress(compression, &data, exact, self.max_decompressed)?;
        Ok(RawChunk {
            index: entry.index,
            compression,
            external: false,
            stored_len: exact,
            timestamp: entry.timestamp,
            nbt,
        })
    }

    fn read_external(&self, index: usize) -> Result<Vec<u8>, ChunkError> {
        let (Some((rx, rz)), Some(dir)) = (self.position, &self.external_dir) else {
            return Err(ChunkError::ExternalFile {
                path: PathBuf::from(format!("c.?.?.mcc (chunk index {index})")),
                message: "region position and folder unknown".into(),
            });
        };
        let x = rx.wrapping_mul(32).wrapping_add((index % 32) as i32);
        let z = rz.wrapping_mul(32).wrapping_add((index / 32) as i32);
        let path = dir.join(external_name(x, z));
        let limit = self.max_decompressed as u64;
        let read = std::fs::File::open(&path).and_then(|f| {
            let mut v = Vec::new();
            f.take(limit + 1).read_to_end(&mut v)?;
            Ok(v)
        });
        match read {
            Ok(v) if v.len() as u64 > limit => {
                Err(ChunkError::TooLarge { limit: self.max_decompressed })
            }
            Ok(v) => Ok(v),
            Err(e) => Err(ChunkError::ExternalFile { path, message: e.to_string() }),
        }
    }
}

/// The compression type of a chunk compressed with a custom, named algorithm.
pub const CUSTOM_COMPRESSION: u8 = 127;

/// The algorithm a custom-compressed chunk names first: a string of an unsigned 16-bit
/// big-endian length and its bytes (cut to 256 characters; `?` when cut short).
fn custom_algorithm(data: &[u8]) -> String {
    let Some(len) = data.get(..2).map(|b| usize::from(u16::from_be_bytes([b[0], b[1]]))) else {
        return "?".into();
    };
    match data.get(2..2 + len) {
        Some(name) => String::from_utf8_lossy(name).chars().take(256).collect(),
        None => "?".into(),
    }
}

/// Decompresses one chunk payload. `data` may extend past the declared length (`exact`
/// bytes) up to the end of the sector run: zlib, gzip and LZ4 decode up to their own end
/// marker, which is how one-byte-short length fields are tolerated.
pub fn decompress(
    compression: Compression,
    data: &[u8],
    exact: usize,
    limit: usize,
) -> Result<Vec<u8>, ChunkError> {
    let err = |message: String| ChunkError::Decompress { compression: compression.name(), message };
    match compression {
        Compression::Zlib => inflate(data, true, limit).map_err(err),
        Compression::Gzip => {
            let mut out = Vec::new();
            flate2::read::GzDecoder::new(data)
                .take(limit as u64 + 1)
                .read_to_end(&mut out)
                .map_err(|e| err(e.to_string()))?;
            if out.len() > limit {
                return Err(ChunkError::TooLarge { limit });
            }
            Ok(out)
        }
        Compression::None => {
            let mut exact = exact.min(data.len());
            // NBT ends with the root compound's TAG_End (0): a payload ending otherwise, with a
            // 0 right after it, is a length field one byte short.
            if exact > 0 && data[exact - 1] != 0 && data.get(exact) == Some(&0) {
                exact += 1;
            }
            if exact > limit {
                return Err(ChunkError::TooLarge { limit });
            }
            Ok(data[..exact].to_vec())
        }
        Compression::Lz4 => lz4_block_decode(data, limit).map_err(|e| match e {
            Lz4Error::TooLarge => ChunkError::TooLarge { limit },
            Lz4Error::Bad(m) => err(m),
        }),
    }
}

/// Inflates one zlib (or raw deflate) stream, stopping at its end; trailing bytes are
/// ignored. Errors if the stream does not end within `data`.
fn inflate(data: &[u8], zlib: bool, limit: usize) -> Result<Vec<u8>, String> {
    use flate2::Decompress;
    thread_local! {
        // One inflater per thread, reset per stream: a new one allocates and clears its
        // 32 KiB window and state each time (a tenth of an import's time when measured).
        static INFLATER: std::cell::RefCell<Option<Decompress>> = const { std::cell::RefCell::new(None) };
    }
    INFLATER.with_borrow_mut(|slot| {
        let d = match slot {
            Some(d) => {
                d.reset(zlib);
                d
            }
            None => slot.insert(Decompress::new(zlib)),
        };
        inflate_with(d, data, limit)
    })
}

fn inflate_with(d: &mut flate2::Decompress, data: &[u8], limit: usize) -> Result<Vec<u8>, String> {
    use flate2::{FlushDecompress, Status};
    let mut out: Vec<u8> = Vec::with_capacity((data.len() * 4).clamp(4096, limit.max(4096)));
    loop {
        if out.len() == out.capacity() {
            if out.len() > limit {
                return Err(format!("decompressed chunk exceeds {limit} bytes"));
            }
            out.reserve(out.len().max(4096));
        }
        let consumed = d.total_in() as usize;
        let produced_before = out.len();
        let status = d
            .decompress_vec(&data[consumed.min(data.len())..], &mut out, FlushDecompress::None)
            .map_err(|e| e.to_string())?;
        match status {
            Status::StreamEnd => break,
            Status::Ok | Status::BufError => {
                let no_progress = d.total_in() as usize == consumed && out.len() == produced_before;
                if no_progress && out.len() < out.capacity() {
                    return Err("incomplete or truncated stream".into());
                }
            }
        }
    }
    if out.len() > limit {
        return Err(format!("decompressed chunk exceeds {limit} bytes"));
    }
    Ok(out)
}

enum Lz4Error {
    TooLarge,
    Bad(String),
}

/// The seed of lz4-java's block checksums (`LZ4BlockOutputStream`'s default).
const LZ4_CHECKSUM_SEED: u32 = 0x9747_b28c;

/// The checksum lz4-java stores for a block's decompressed bytes: their xxHash32 (seed
/// [`LZ4_CHECKSUM_SEED`]) with the top four bits cleared.
fn lz4_checksum(bytes: &[u8]) -> u32 {
    twox_hash::XxHash32::oneshot(LZ4_CHECKSUM_SEED, bytes) & 0x0FFF_FFFF
}

/// Decodes lz4-java's `LZ4BlockOutputStream` framing: blocks of `"LZ4Block"`, a token byte
/// (method `0x10` raw or `0x20` LZ4 in the high nibble), compressed length, decompressed
/// length and a checksum of the decompressed bytes (all `i32` little-endian; the checksum
/// [`lz4_checksum`]'s, verified), then the block; an empty block ends the stream.
fn lz4_block_decode(data: &[u8], limit: usize) -> Result<Vec<u8>, Lz4Error> {
    let mut out = Vec::new();
    let mut at = 0usize;
    loop {
        let Some(head) = data.get(at..at + 21) else {
            if out.is_empty() {
                return Err(Lz4Error::Bad("truncated LZ4 block header".into()));
            }
            // Some writers omit the final empty block.
            return Ok(out);
        };
        if &head[..8] != LZ4_MAGIC {
            if !out.is_empty() {
                return Ok(out);
            }
            return Err(Lz4Error::Bad("missing LZ4Block magic".into()));
        }
        let token = head[8];
        let le = |i: usize| u32::from_le_bytes([head[i], head[i + 1], head[i + 2], head[i + 3]]);
        let clen = le(9) as usize;
        let dlen = le(13) as usize;
        let check = le(17);
        at += 21;
        if dlen == 0 {
            return Ok(out);
        }
        if out.len() + dlen > limit {
            return Err(Lz4Error::TooLarge);
        }
        let block = data
            .get(at..at.checked_add(clen).ok_or(Lz4Error::Bad("bad length".into()))?)
            .ok_or_else(|| Lz4Error::Bad("truncated LZ4 block".into()))?;
        at += clen;
        match token & 0xF0 {
            0x10 => {
                if clen != dlen {
                    return Err(Lz4Error::Bad("raw LZ4 block with differing lengths".into()));
                }
                out.extend_from_slice(block);
            }
            0x20 => {
                let start = out.len();
                out.resize(start + dlen, 0);
                let n = lz4_flex::block::decompress_into(block, &mut out[start..])
                    .map_err(|e| Lz4Error::Bad(e.to_string()))?;
                if n != dlen {
                    return Err(Lz4Error::Bad("LZ4 block shorter than declared".into()));
                }
            }
            m => return Err(Lz4Error::Bad(format!("unknown LZ4 block method {m:#x}"))),
        }
        if lz4_checksum(&out[out.len() - dlen..]) != check {
            return Err(Lz4Error::Bad("LZ4 block checksum mismatch".into()));
        }
    }
}

/// lz4-java's block size for Minecraft's regions (64 KiB) as its token's level nibble:
/// blocks of `1 << (10 + level)` bytes.
const LZ4_LEVEL: u8 = 6;

/// Encodes bytes in lz4-java's `LZ4BlockOutputStream` framing as Minecraft writes LZ4 regions
/// (`region-file-compression=lz4`): a block per 64 KiB, each LZ4-compressed (stored raw
/// where that is not smaller) with its checksum (lz4-java's: xxHash32 of the block's bytes, seed
/// `0x9747b28c`, top four bits cleared), then the empty end block.
pub fn lz4_block_encode(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in data.chunks(1 << (10 + LZ4_LEVEL)) {
        let c = lz4_flex::block::compress(chunk);
        let (method, body) = if c.len() < chunk.len() { (0x20, &c[..]) } else { (0x10, chunk) };
        out.extend_from_slice(LZ4_MAGIC);
        out.push(method | LZ4_LEVEL);
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&(chunk.len() as u32).to_le_bytes());
        out.extend_from_slice(&lz4_checksum(chunk).to_le_bytes());
        out.extend_from_slice(body);
    }
    out.extend_from_slice(LZ4_MAGIC);
    out.push(0x10 | LZ4_LEVEL);
    out.extend_from_slice(&[0; 12]);
    out
}

/// Builds a region file by Minecraft's rules: header of locations and timestamps, each chunk
/// zlib-compressed in whole 4 KiB sectors (zero padded) in index order, and chunks that need
/// more than 255 sectors (≥ 1 MiB) written as a one-sector stub with the external flag plus a
/// `c.X.Z.mcc` side file.
#[derive(Clone, Debug)]
pub struct RegionWriter {
    region_x: i32,
    region_z: i32,
    level: flate2::Compression,
    compression: Compression,
    chunks: Vec<Option<(Vec<u8>, Compression, u32)>>,
}

/// A `.mcc` side file produced by [`RegionWriter::finish`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SideFile {
    /// File name (`c.X.Z.mcc`, absolute column coordinates).
    pub name: String,
    /// Contents: the compressed chunk.
    pub bytes: Vec<u8>,
}

impl RegionWriter {
    /// An empty region at region coordinates `(x, z)` (used for side-file names).
    pub fn new(region_x: i32, region_z: i32) -> Self {
        RegionWriter {
            region_x,
            region_z,
            level: flate2::Compression::default(),
            compression: Compression::Zlib,
            chunks: vec![None; 1024],
        }
    }

    /// Sets the zlib level (default 6, Minecraft's).
    pub fn with_level(mut self, level: u32) -> Self {
        self.level = flate2::Compression::new(level.min(9));
        self
    }

    /// Sets the compression [`insert`](Self::insert) writes chunks with (default zlib, as
    /// Minecraft does; `region-file-compression` in a server's settings chooses the others).
    pub fn with_compression(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    /// Adds (or replaces) the chunk at `index` (`local_x + 32 * local_z`, < 1024) from its
    /// uncompressed NBT, to be compressed with the writer's compression.
    ///
    /// # Panics
    /// If `index >= 1024` (a caller bug, not data).
    pub fn insert(&mut self, index: usize, nbt: Vec<u8>, timestamp: u32) {
        use std::io::Write;
        // Writing to a Vec cannot fail.
        let data = match self.compression {
            Compression::Zlib => {
                let mut enc = flate2::write::ZlibEncoder::new(Vec::new(), self.level);
                let _ = enc.write_all(&nbt);
                enc.finish().unwrap_or_default()
            }
            Compression::Gzip => {
                let mut enc = flate2::write::GzEncoder::new(Vec::new(), self.level);
                let _ = enc.write_all(&nbt);
                enc.finish().unwrap_or_default()
            }
            Compression::Lz4 => lz4_block_encode(&nbt),
            Compression::None => nbt,
        };
        self.chunks[index] = Some((data, self.compression, timestamp));
    }

    /// Adds a chunk already compressed with `compression`.
    ///
    /// # Panics
    /// If `index >= 1024`.
    pub fn insert_compressed(
        &mut self,
        index: usize,
        data: Vec<u8>,
        compression: Compression,
        timestamp: u32,
    ) {
        self.chunks[index] = Some((data, compression, timestamp));
    }

    /// Number of chunks added.
    pub fn len(&self) -> usize {
        self.chunks.iter().filter(|c| c.is_some()).count()
    }

    /// True when no chunk was added.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The region file's bytes and its side files.
    ///
    /// Errors only if the file would exceed the 24-bit sector offset space (16 Mi sectors).
    pub fn finish(self) -> Result<(Vec<u8>, Vec<SideFile>), ChunkError> {
        let mut out = Vec::new();
        match self.write_to(&mut out) {
            Ok((_, side)) => Ok((out, side)),
            Err(e) => match e.into_inner().map(|b| b.downcast::<ChunkError>()) {
                Some(Ok(c)) => Err(*c),
                _ => unreachable!("writing to memory fails only past the sector offset space"),
            },
        }
    }

    /// Writes the region file to `w`, each chunk as it goes (nothing is built in memory but
    /// the 8 KiB header), and returns its length and its side files.
    ///
    /// Errors with `w`'s error, or with a [`ChunkError`] inside an
    /// [`InvalidInput`](std::io::ErrorKind::InvalidInput) error if the file would exceed the
    /// 24-bit sector offset space (16 Mi sectors).
    pub fn write_to(self, w: &mut impl std::io::Write) -> std::io::Result<(u64, Vec<SideFile>)> {
        // The header first: each chunk's sectors follow in index order.
        let mut header = vec![0u8; HEADER];
        let mut sector = HEADER / SECTOR;
        for (index, chunk) in self.chunks.iter().enumerate() {
            let Some((data, _, timestamp)) = chunk else { continue };
            if sector >= 1 << 24 {
                let e = ChunkError::OutOfBounds { needed: (sector * SECTOR) as u64, len: 1 << 36 };
                return Err(std::io::Error::new(std::io::ErrorKind::InvalidInput, e));
            }
            let needed = (data.len() + 5).div_ceil(SECTOR);
            let sectors = if needed > MAX_SECTORS { 1 } else { needed };
            let loc = ((sector as u32) << 8) | sectors as u32;
            header[index * 4..index * 4 + 4].copy_from_slice(&loc.to_be_bytes());
            header[SECTOR + index * 4..SECTOR + index * 4 + 4]
                .copy_from_slice(&timestamp.to_be_bytes());
            sector += sectors;
        }
        w.write_all(&header)?;
        let mut side = Vec::new();
        let zeros = [0u8; SECTOR];
        for (index, chunk) in self.chunks.into_iter().enumerate() {
            let Some((data, compression, _)) = chunk else { continue };
            let needed = (data.len() + 5).div_ceil(SECTOR);
            let written = if needed > MAX_SECTORS {
                let x = self.region_x.wrapping_mul(32).wrapping_add((index % 32) as i32);
                let z = self.region_z.wrapping_mul(32).wrapping_add((index / 32) as i32);
                w.write_all(&1u32.to_be_bytes())?;
                w.write_all(&[compression.id() | EXTERNAL_FLAG])?;
                side.push(SideFile { name: external_name(x, z), bytes: data });
                5
            } else {
                w.write_all(&(data.len() as u32 + 1).to_be_bytes())?;
                w.write_all(&[compression.id()])?;
                w.write_all(&data)?;
                data.len() + 5
            };
            w.write_all(&zeros[..written.next_multiple_of(SECTOR) - written])?;
        }
        Ok(((sector * SECTOR) as u64, side))
    }
}

/// Lists the region files of a folder, Anvil's (`r.X.Z.mca`) and Linear ones
/// (`r.X.Z.linear`, [`crate::linear`]), sorted by (x, z), an Anvil file before a Linear one
/// of the same region.
pub fn list_regions(dir: &Path) -> std::io::Result<Vec<(i32, i32, PathBuf)>> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name();
        let coords =
            name.to_str().and_then(|n| parse_region_name(n).or_else(|| parse_linear_name(n)));
        if let Some((x, z)) = coords
            && e.file_type()?.is_file()
        {
            v.push((x, z, e.path()));
        }
    }
    v.sort_by_key(|(x, z, p)| (*x, *z, is_linear(p)));
    Ok(v)
}

/// Whether `path` names a Linear region file (`.linear`).
pub fn is_linear(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "linear")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_lists_anvil_and_linear_regions_anvil_first() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["r.0.0.linear", "r.0.0.mca", "r.-1.2.linear", "c.0.0.mcc", "r.x.0.mca"] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        let listed: Vec<(i32, i32, String)> = list_regions(dir.path())
            .unwrap()
            .into_iter()
            .map(|(x, z, p)| (x, z, p.file_name().unwrap().to_string_lossy().into_owned()))
            .collect();
        assert_eq!(
            listed,
            [
                (-1, 2, "r.-1.2.linear".to_string()),
                (0, 0, "r.0.0.mca".to_string()),
                (0, 0, "r.0.0.linear".to_string())
            ]
        );
    }

    /// A location table that points several chunks at the same sectors (one chunk's data
    /// served as 225) is damage: every entry involved is refused, the others read.
    #[test]
    fn chunks_sharing_sectors_are_refused_not_copied() {
        let mut w = RegionWriter::new(0, 0);
        w.insert(0, b"\x0a\x00\x00\x00".to_vec(), 1);
        w.insert(1, b"\x0a\x00\x00\x00".to_vec(), 1);
        let (mut bytes, _) = w.finish().unwrap();
        let good = RegionFile::new(bytes.clone()).unwrap();
        assert!(good.entries().all(|e| good.read(&e).is_ok()));
        // 225 more slots pointing at chunk 0's sectors.
        let loc0: [u8; 4] = bytes[0..4].try_into().unwrap();
        for i in 2..227 {
            bytes[i * 4..i * 4 + 4].copy_from_slice(&loc0);
        }
        let bad = RegionFile::new(bytes).unwrap();
        let mut refused = 0;
        for e in bad.entries() {
            match bad.read(&e) {
                Err(ChunkError::SharedSectors { index, other }) => {
                    assert_eq!(index, e.index);
                    assert_ne!(index, other);
                    refused += 1;
                }
                Ok(_) => assert_eq!(e.index, 1, "only chunk 1 has sectors of its own"),
                Err(other) => panic!("{other}"),
            }
        }
        assert_eq!(refused, 226);
    }

    #[test]
    fn names() {
        assert_eq!(parse_region_name("r.-3.-2.mca"), Some((-3, -2)));
        assert_eq!(parse_region_name("r.0.0.mcr"), None);
        assert_eq!(parse_region_name("r.a.0.mca"), None);
        assert_eq!(external_name(-65, 3), "c.-65.3.mcc");
        assert_eq!(parse_external_name("c.-65.3.mcc"), Some((-65, 3)));
        assert_eq!(parse_external_name("r.-65.3.mca"), None);
    }

    #[test]
    fn lz4_roundtrip() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        let enc = lz4_block_encode(&data);
        let dec = decompress(Compression::Lz4, &enc, enc.len(), 1 << 20).unwrap();
        assert_eq!(dec, data);
        assert!(matches!(
            decompress(Compression::Lz4, &enc, enc.len(), 1000),
            Err(ChunkError::TooLarge { .. })
        ));
    }

    #[test]
    fn every_compression_and_oversize() {
        use std::io::Write;
        let nbt: Vec<u8> = (0..5000u32).flat_map(|i| i.to_le_bytes()).collect();
        let mut w = RegionWriter::new(1, -1);
        w.insert(0, nbt.clone(), 7);
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&nbt).unwrap();
        w.insert_compressed(1, gz.finish().unwrap(), Compression::Gzip, 8);
        w.insert_compressed(2, nbt.clone(), Compression::None, 9);
        w.insert_compressed(3, lz4_block_encode(&nbt), Compression::Lz4, 10);
        // 1.1 MiB of incompressible bytes: external.
        let mut s = 1u64;
        let big: Vec<u8> = (0..(1100 << 10))
            .map(|_| {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                s as u8
            })
            .collect();
        w.insert_compressed(1023, big.clone(), Compression::None, 11);
        let (bytes, side) = w.finish().unwrap();
        assert_eq!(bytes.len() % SECTOR, 0);
        assert_eq!(side.len(), 1);
        assert_eq!(side[0].name, "c.63.-1.mcc");
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(&side[0].name), &side[0].bytes).unwrap();
        let r = RegionFile::new(bytes.clone()).unwrap().with_external(1, -1, dir.path());
        let got: Vec<RawChunk> = r.entries().map(|e| r.read(&e).unwrap()).collect();
        assert_eq!(got.len(), 5);
        for c in &got[..4] {
            assert_eq!(c.nbt, nbt);
        }
        assert_eq!(
            got.iter().map(|c| c.compression).collect::<Vec<_>>(),
            [
                Compression::Zlib,
                Compression::Gzip,
                Compression::None,
                Compression::Lz4,
                Compression::None
            ]
        );
        assert!(got[4].external);
        assert_eq!(got[4].nbt, big);
        assert_eq!(got.iter().map(|c| c.timestamp).collect::<Vec<_>>(), [7, 8, 9, 10, 11]);
        // Without the folder, the external chunk is a typed error.
        let r = RegionFile::new(bytes).unwrap();
        let e = r.entry(1023).unwrap();
        assert!(matches!(r.read(&e), Err(ChunkError::ExternalFile { .. })));
    }

    #[test]
    fn short_length_field_still_decodes() {
        let nbt = vec![7u8; 3000];
        let mut w = RegionWriter::new(0, 0);
        w.insert(5, nbt.clone(), 1);
        let (mut bytes, _) = w.finish().unwrap();
        let start = 2 * SECTOR;
        let len = u32::from_be_bytes(bytes[start..start + 4].try_into().unwrap());
        bytes[start..start + 4].copy_from_slice(&(len - 1).to_be_bytes());
        let r = RegionFile::new(bytes).unwrap();
        let e = r.entry(5).unwrap();
        assert_eq!(r.read(&e).unwrap().nbt, nbt);
    }

    #[test]
    fn short_length_field_uncompressed() {
        let nbt = vec![10, 0, 0, 1, 0, 1, b'b', 7, 0];
        let mut w = RegionWriter::new(0, 0);
        w.insert_compressed(0, nbt.clone(), Compression::None, 1);
        let (mut bytes, _) = w.finish().unwrap();
        let start = 2 * SECTOR;
        let len = u32::from_be_bytes(bytes[start..start + 4].try_into().unwrap());
        let r = RegionFile::new(bytes.clone()).unwrap();
        assert_eq!(r.read(&r.entry(0).unwrap()).unwrap().nbt, nbt);
        bytes[start..start + 4].copy_from_slice(&(len - 1).to_be_bytes());
        let r = RegionFile::new(bytes).unwrap();
        assert_eq!(r.read(&r.entry(0).unwrap()).unwrap().nbt, nbt);
    }

    #[test]
    fn damage_is_typed() {
        let mut w = RegionWriter::new(0, 0);
        w.insert(0, vec![1; 100], 1);
        let (bytes, _) = w.finish().unwrap();
        assert_eq!(RegionFile::new(bytes[..100].to_vec()).unwrap_err(), TruncatedHeader(100));
        let mut b = bytes.clone();
        b[2 * SECTOR + 4] = 9;
        let r = RegionFile::new(b).unwrap();
        assert_eq!(r.read(&r.entry(0).unwrap()), Err(ChunkError::UnknownCompression(9)));
        let mut b = bytes.clone();
        b[2 * SECTOR + 7] ^= 0xFF;
        b[2 * SECTOR + 8] ^= 0xFF;
        let r = RegionFile::new(b).unwrap();
        assert!(matches!(r.read(&r.entry(0).unwrap()), Err(ChunkError::Decompress { .. })));
        let mut b = bytes;
        b[0..4].copy_from_slice(&0x0000_0101u32.to_be_bytes());
        let r = RegionFile::new(b).unwrap();
        assert_eq!(r.read(&r.entry(0).unwrap()), Err(ChunkError::SectorInHeader { sector: 1 }));
    }
}

#[cfg(test)]
mod open_tests {
    use super::*;

    /// Every chunk (or error) of `bytes`, read from memory and from a file.
    fn both_ways(bytes: Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.0.0.mca");
        std::fs::write(&path, &bytes).unwrap();
        let from_disk = RegionFile::open(&path).unwrap();
        let in_memory = RegionFile::new(bytes.clone());
        let (disk, memory) = match (from_disk, in_memory) {
            (Ok(d), Ok(m)) => (d, m),
            (d, m) => {
                assert_eq!(d.err(), m.err(), "both refuse the header alike");
                return;
            }
        };
        assert_eq!(disk.len(), bytes.len() as u64);
        let entries: Vec<_> = memory.entries().collect();
        assert_eq!(disk.entries().collect::<Vec<_>>(), entries);
        for e in &entries {
            let (d, m) = (disk.read(e), memory.read(e));
            match (&d, &m) {
                (Ok(d), Ok(m)) => {
                    assert_eq!((d.index, &d.nbt, d.stored_len), (m.index, &m.nbt, m.stored_len))
                }
                _ => assert_eq!(d.err(), m.err(), "entry {}", e.index),
            }
        }
    }

    #[test]
    fn a_region_read_from_disk_gives_what_its_bytes_give_whole_or_damaged() {
        for rel in ["anvil/1.18.2/r.0.0.mca", "anvil/1.21.1/r.0.0.mca", "anvil/1.12.2/r.0.-1.mca"] {
            let bytes = std::fs::read(terrane_section::testdata::fixture(rel)).unwrap();
            both_ways(bytes.clone());
            // Cut inside the chunks, and inside the header.
            for cut in [bytes.len() / 2, bytes.len() - 1000, 9000, 5000] {
                both_ways(bytes[..cut].to_vec());
            }
            // Damaged lengths and compression bytes.
            let mut damaged = bytes.clone();
            for i in (HEADER..damaged.len()).step_by(4096 * 3) {
                damaged[i] ^= 0x5A;
                damaged[i + 4] = damaged[i + 4].wrapping_add(3);
            }
            both_ways(damaged);
        }
        both_ways(Vec::new());
    }

    /// A real chunk's NBT (the 1.21.1 region's first).
    fn real_chunk_nbt() -> Vec<u8> {
        let f = RegionFile::new(terrane_section::testdata::read("anvil/1.21.1/r.0.0.mca")).unwrap();
        let e = f.entries().next().unwrap();
        f.read(&e).unwrap().nbt
    }

    #[test]
    fn regions_in_every_compression_minecraft_writes_read_back_and_lz4_is_lz4_javas() {
        use std::io::{Read as _, Write as _};
        let nbt = real_chunk_nbt();
        for c in [Compression::Zlib, Compression::Gzip, Compression::Lz4, Compression::None] {
            let mut w = RegionWriter::new(0, 0).with_compression(c);
            w.insert(5, nbt.clone(), 7);
            let f = RegionFile::new(w.finish().unwrap().0).unwrap();
            let raw = f.read(&f.entry(5).unwrap()).unwrap();
            assert_eq!((raw.compression, raw.timestamp), (c, 7), "{c:?}");
            assert!(raw.nbt == nbt, "{c:?}: the chunk reads back");
            assert_eq!(Compression::from_name(c.name()), Some(c));
        }
        assert_eq!(Compression::from_name("deflate"), Some(Compression::Zlib));
        // lz4-java's framing as an independent implementation writes it (lz4-java-wrc, real
        // checksums) reads here, and ours reads there, checksums checked both ways.
        let mut theirs = Vec::new();
        {
            let mut out = lz4_java_wrc::Lz4BlockOutput::new(&mut theirs);
            out.write_all(&nbt).unwrap();
        }
        assert!(decompress(Compression::Lz4, &theirs, theirs.len(), 1 << 30).unwrap() == nbt);
        let ours = lz4_block_encode(&nbt);
        let mut back = Vec::new();
        lz4_java_wrc::Lz4BlockInput::new(&ours[..]).read_to_end(&mut back).unwrap();
        assert!(back == nbt, "lz4-java-wrc reads what terrane writes");
        // Bytes LZ4 cannot shrink go in raw blocks, read both ways alike.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..100_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 32) as u8
            })
            .collect();
        let raw = lz4_block_encode(&noise);
        assert_eq!(raw[8] & 0xF0, 0x10, "a raw block");
        assert!(decompress(Compression::Lz4, &raw, raw.len(), 1 << 30).unwrap() == noise);
        let mut back = Vec::new();
        lz4_java_wrc::Lz4BlockInput::new(&raw[..]).read_to_end(&mut back).unwrap();
        assert!(back == noise);
        // A block whose checksum does not match its bytes is refused.
        let mut bad = ours.clone();
        bad[17] ^= 0x01;
        assert!(decompress(Compression::Lz4, &bad, bad.len(), 1 << 30).is_err());
    }

    #[test]
    fn a_custom_compressed_chunk_is_refused_by_its_algorithms_name() {
        let mut payload = vec![0, 10];
        payload.extend(b"mymod:zstd");
        payload.extend([0x28, 0xb5, 0x2f, 0xfd]);
        let mut w = RegionWriter::new(0, 0);
        w.insert_compressed(3, payload, Compression::Zlib, 1);
        let mut bytes = w.finish().unwrap().0;
        // The chunk's compression byte, after its 4-byte length, made 127.
        let sector = u32::from_be_bytes([0, bytes[12], bytes[13], bytes[14]]) as usize;
        bytes[sector * SECTOR + 4] = CUSTOM_COMPRESSION;
        let f = RegionFile::new(bytes).unwrap();
        match f.read(&f.entry(3).unwrap()) {
            Err(e @ ChunkError::CustomCompression { .. }) => {
                let m = e.to_string();
                assert!(m.contains("\"mymod:zstd\"") && m.contains("127"), "{m}");
            }
            other => panic!("{other:?}"),
        }
    }
}
