//! Linear region files (`r.X.Z.linear`), which Paper forks (LinearPaper and its successors)
//! write instead of Anvil's `.mca`: a region's chunks, uncompressed NBT, in one zstd stream
//! (v1) or in a grid of zstd buckets (v2), by the public description of
//! xymb-endcrystalme/LinearRegionFileFormatTools (`docs/format/linear.md`).
//!
//! terrane reads a Linear file into an Anvil region in memory ([`to_anvil`]), which the
//! importer then reads like any `.mca` file, and writes one from an Anvil region
//! ([`from_anvil`]). Every length, count and hash is checked; a file that does not add up is
//! a [`LinearError`], never a panic or a partial region.

use std::io::Read;

use twox_hash::XxHash64;

use crate::region::{Compression, RegionFile, RegionWriter};

/// The first and last 8 bytes of every Linear file.
pub const LINEAR_SIGNATURE: u64 = 0xc3ff_1318_3cca_9d9a;

/// The largest region a Linear file may decompress to, by default (Anvil's own bound: 1,024
/// chunks of at most 255 sectors of 4 KiB).
pub const MAX_DECOMPRESSED: usize = 1024 * 255 * 4096;

/// Grid sizes a v2 file may have.
pub const GRID_SIZES: [u8; 6] = [1, 2, 4, 8, 16, 32];

/// A Linear file that does not read.
#[derive(Clone, Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum LinearError {
    /// Not a Linear file: the signature is missing at its start or end.
    #[error("not a Linear region file (no Linear signature at its start and end)")]
    Signature,
    /// A version this build does not read.
    #[error("Linear version {0} (this build reads 1, 2 and 3)")]
    Version(u8),
    /// The file is shorter than its own structure says.
    #[error("Linear file truncated: {0}")]
    Truncated(String),
    /// zstd refused the data.
    #[error("Linear zstd data does not decompress: {0}")]
    Zstd(String),
    /// The data decompresses to more than the bound.
    #[error("Linear region decompresses to more than {0} bytes")]
    TooLarge(usize),
    /// A v2 bucket's xxHash64 differs from the one the file records.
    #[error("Linear bucket {bucket}: its xxHash64 differs from the file's (damaged)")]
    Hash {
        /// The bucket's index (x-major).
        bucket: usize,
    },
    /// Sizes or counts that disagree with each other.
    #[error("Linear file inconsistent: {0}")]
    Inconsistent(String),
}

/// One chunk of a Linear file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LinearChunk {
    /// Index in the region: `local_x + 32 * local_z`.
    pub index: usize,
    /// Last modification time, seconds since the Unix epoch.
    pub timestamp: u64,
    /// The chunk's uncompressed NBT.
    pub nbt: Vec<u8>,
}

/// A decoded Linear file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinearRegion {
    /// The version byte (1 or 2: one stream; 2 or 3: buckets).
    pub version: u8,
    /// The present chunks, by index.
    pub chunks: Vec<LinearChunk>,
}

fn be_u32(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

fn be_u64(b: &[u8], at: usize) -> Option<u64> {
    Some(u64::from_be_bytes(b.get(at..at + 8)?.try_into().ok()?))
}

fn truncated(what: &str) -> LinearError {
    LinearError::Truncated(what.to_string())
}

/// Decompresses one zstd stream, at most `limit` bytes.
fn unzstd(data: &[u8], limit: usize) -> Result<Vec<u8>, LinearError> {
    let d = zstd::stream::read::Decoder::new(data).map_err(|e| LinearError::Zstd(e.to_string()))?;
    let mut out = Vec::new();
    d.take((limit as u64).saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|e| LinearError::Zstd(e.to_string()))?;
    if out.len() > limit {
        return Err(LinearError::TooLarge(limit));
    }
    Ok(out)
}

/// `data` as one zstd frame at `level`, with its content checksum (a damaged file is found
/// when it is read).
fn zstd(data: &[u8], level: i32) -> Vec<u8> {
    use std::io::Write;
    let compress = || -> std::io::Result<Vec<u8>> {
        let mut e = zstd::stream::write::Encoder::new(Vec::new(), level)?;
        e.include_checksum(true)?;
        e.write_all(data)?;
        e.finish()
    };
    compress().expect("compressing in memory")
}

/// The xxHash64 (seed 0) of `b`, as the file stores it (big-endian).
fn xxh64(b: &[u8]) -> [u8; 8] {
    XxHash64::oneshot(0, b).to_be_bytes()
}

/// Decodes a Linear file, decompressing at most `limit` bytes ([`MAX_DECOMPRESSED`] by
/// default). Versions 1 and 2 with the one-stream layout, versions 2 and 3 with buckets: a
/// version 2 file is read by the layout its lengths agree with.
pub fn decode(bytes: &[u8], limit: usize) -> Result<LinearRegion, LinearError> {
    if bytes.len() < 17 || be_u64(bytes, 0) != Some(LINEAR_SIGNATURE) {
        return Err(LinearError::Signature);
    }
    if be_u64(bytes, bytes.len() - 8) != Some(LINEAR_SIGNATURE) {
        return Err(LinearError::Signature);
    }
    let version = bytes[8];
    let one_stream =
        bytes.len() >= 40 && be_u32(bytes, 20).is_some_and(|n| n as usize == bytes.len() - 40);
    match version {
        1 => decode_v1(bytes, limit),
        2 if one_stream => decode_v1(bytes, limit),
        2 | 3 => decode_v2(bytes, limit),
        v => Err(LinearError::Version(v)),
    }
}

/// The one-stream layout: a 32-byte header (signature, version, newest timestamp,
/// compression level, chunk count, compressed length, 8 reserved bytes), zstd of 1,024
/// `(size u32, timestamp u32)` pairs and the chunks back to back, the signature.
fn decode_v1(bytes: &[u8], limit: usize) -> Result<LinearRegion, LinearError> {
    if bytes.len() < 40 {
        return Err(truncated("shorter than its 32-byte header and footer"));
    }
    let count = i16::from_be_bytes([bytes[18], bytes[19]]);
    let length = be_u32(bytes, 20).ok_or_else(|| truncated("header"))? as usize;
    if length != bytes.len() - 40 {
        return Err(LinearError::Inconsistent(format!(
            "the header says {length} compressed bytes, the file holds {}",
            bytes.len() - 40
        )));
    }
    let data = unzstd(&bytes[32..bytes.len() - 8], limit)?;
    if data.len() < 8192 {
        return Err(truncated("the decompressed chunk table"));
    }
    let mut chunks = Vec::new();
    let mut at = 8192;
    for index in 0..1024 {
        let size = be_u32(&data, index * 8).expect("8192 bytes") as usize;
        let timestamp = u64::from(be_u32(&data, index * 8 + 4).expect("8192 bytes"));
        if size == 0 {
            continue;
        }
        let nbt = data.get(at..at + size).ok_or_else(|| {
            LinearError::Inconsistent(format!("chunk {index} runs past the data"))
        })?;
        chunks.push(LinearChunk { index, timestamp, nbt: nbt.to_vec() });
        at += size;
    }
    if at != data.len() {
        return Err(LinearError::Inconsistent(format!(
            "{} bytes after the last chunk",
            data.len() - at
        )));
    }
    if count >= 0 && count as usize != chunks.len() {
        return Err(LinearError::Inconsistent(format!(
            "the header counts {count} chunks, the table {}",
            chunks.len()
        )));
    }
    Ok(LinearRegion { version: bytes[8], chunks })
}

/// The bucket layout: a 26-byte header (signature, version, newest timestamp, grid size,
/// region x and z), a 1,024-bit existence bitmap, a dictionary of features, per bucket its
/// compressed size, level and xxHash64, the buckets, the signature.
fn decode_v2(bytes: &[u8], limit: usize) -> Result<LinearRegion, LinearError> {
    let grid = *bytes.get(17).ok_or_else(|| truncated("header"))?;
    if !GRID_SIZES.contains(&grid) {
        return Err(LinearError::Inconsistent(format!("grid size {grid}")));
    }
    let mut at = 26;
    let bitmap = bytes.get(at..at + 128).ok_or_else(|| truncated("existence bitmap"))?;
    at += 128;
    // The features: (key length, key, u32) until a zero length.
    loop {
        let len = *bytes.get(at).ok_or_else(|| truncated("features"))? as usize;
        at += 1;
        if len == 0 {
            break;
        }
        at += len + 4;
        if at > bytes.len() {
            return Err(truncated("features"));
        }
    }
    let buckets = usize::from(grid) * usize::from(grid);
    let mut table = Vec::with_capacity(buckets);
    for _ in 0..buckets {
        let size = be_u32(bytes, at).ok_or_else(|| truncated("bucket table"))? as usize;
        let hash: [u8; 8] = bytes
            .get(at + 5..at + 13)
            .ok_or_else(|| truncated("bucket table"))?
            .try_into()
            .expect("8 bytes");
        table.push((size, hash));
        at += 13;
    }
    let side = 32 / usize::from(grid);
    let mut chunks = Vec::new();
    let mut total = 0usize;
    for (bucket, (size, hash)) in table.into_iter().enumerate() {
        let data = bytes.get(at..at + size).filter(|_| at + size <= bytes.len() - 8);
        let data = data.ok_or_else(|| truncated(&format!("bucket {bucket}")))?;
        at += size;
        if size == 0 {
            continue;
        }
        if xxh64(data) != hash {
            return Err(LinearError::Hash { bucket });
        }
        let raw = unzstd(data, limit - total)?;
        total += raw.len();
        let (bx, bz) = (bucket / usize::from(grid), bucket % usize::from(grid));
        let mut r = 0;
        for ix in 0..side {
            for iz in 0..side {
                let index = (bx * side + ix) + (bz * side + iz) * 32;
                let size = be_u32(&raw, r).ok_or_else(|| truncated("bucket chunk table"))?;
                let timestamp = be_u64(&raw, r + 4).ok_or_else(|| truncated("bucket chunk"))?;
                r += 12;
                if size == 0 {
                    continue;
                }
                let len = (size as usize).checked_sub(8).ok_or_else(|| {
                    LinearError::Inconsistent(format!("chunk {index}: size {size} below 8"))
                })?;
                let nbt = raw.get(r..r + len).ok_or_else(|| truncated("bucket chunk"))?;
                r += len;
                chunks.push(LinearChunk { index, timestamp, nbt: nbt.to_vec() });
            }
        }
        if r != raw.len() {
            return Err(LinearError::Inconsistent(format!("bucket {bucket}: bytes left over")));
        }
    }
    if at != bytes.len() - 8 {
        return Err(LinearError::Inconsistent(
            "bytes between the last bucket and the footer".into(),
        ));
    }
    chunks.sort_by_key(|c| c.index);
    for c in &chunks {
        if bitmap[c.index / 8] & (0x80 >> (c.index % 8)) == 0 {
            return Err(LinearError::Inconsistent(format!(
                "chunk {} is stored but the bitmap says it is not",
                c.index
            )));
        }
    }
    let bits: u32 = bitmap.iter().map(|b| b.count_ones()).sum();
    if bits as usize != chunks.len() {
        return Err(LinearError::Inconsistent("the bitmap counts other chunks".into()));
    }
    Ok(LinearRegion { version: bytes[8], chunks })
}

/// A Linear file as an Anvil region (chunks LZ4-compressed: quick, and never past Anvil's
/// 1 MiB per chunk for real chunks), for the readers of `.mca` files.
pub fn to_anvil(bytes: &[u8], limit: usize) -> Result<Vec<u8>, LinearError> {
    let region = decode(bytes, limit)?;
    let mut w = RegionWriter::new(0, 0).with_compression(Compression::Lz4);
    for c in region.chunks {
        w.insert(c.index, c.nbt, c.timestamp.min(u64::from(u32::MAX)) as u32);
    }
    let (out, side) = w.finish().map_err(|e| LinearError::Inconsistent(e.to_string()))?;
    if !side.is_empty() {
        return Err(LinearError::Inconsistent("a chunk too large for a region file".into()));
    }
    Ok(out)
}

/// The Linear layout [`from_anvil`] writes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LinearLayout {
    /// Version 1: one zstd stream.
    V1,
    /// Version 3 (the bucket layout of "Linear v2"), with this grid size (one of
    /// [`GRID_SIZES`]).
    V2 {
        /// Buckets per side.
        grid: u8,
    },
}

/// An Anvil region's chunks as a Linear file of `layout`, zstd at `level`; region
/// coordinates `(x, z)` (recorded by the bucket layout).
pub fn from_anvil(
    region: &RegionFile,
    (x, z): (i32, i32),
    layout: LinearLayout,
    level: i32,
) -> Result<Vec<u8>, crate::ChunkError> {
    let mut chunks = Vec::new();
    for e in region.entries() {
        let c = region.read(&e)?;
        chunks.push(LinearChunk { index: e.index, timestamp: u64::from(e.timestamp), nbt: c.nbt });
    }
    Ok(encode(&chunks, (x, z), layout, level))
}

/// `chunks` (by index, each at most once) as a Linear file.
pub fn encode(
    chunks: &[LinearChunk],
    (x, z): (i32, i32),
    layout: LinearLayout,
    level: i32,
) -> Vec<u8> {
    let newest = chunks.iter().map(|c| c.timestamp).max().unwrap_or(0);
    let mut by_index: Vec<Option<&LinearChunk>> = vec![None; 1024];
    for c in chunks {
        by_index[c.index] = Some(c);
    }
    let mut out = LINEAR_SIGNATURE.to_be_bytes().to_vec();
    match layout {
        LinearLayout::V1 => {
            let mut data = Vec::new();
            for c in &by_index {
                let (size, ts) = c.map_or((0, 0), |c| (c.nbt.len() as u32, c.timestamp as u32));
                data.extend_from_slice(&size.to_be_bytes());
                data.extend_from_slice(&ts.to_be_bytes());
            }
            for c in by_index.iter().flatten() {
                data.extend_from_slice(&c.nbt);
            }
            let body = zstd(&data, level);
            out.push(1);
            out.extend_from_slice(&newest.to_be_bytes());
            out.push(level.clamp(i8::MIN.into(), i8::MAX.into()) as i8 as u8);
            out.extend_from_slice(&(chunks.len() as i16).to_be_bytes());
            out.extend_from_slice(&(body.len() as u32).to_be_bytes());
            out.extend_from_slice(&[0; 8]);
            out.extend_from_slice(&body);
        }
        LinearLayout::V2 { grid } => {
            let grid = if GRID_SIZES.contains(&grid) { grid } else { 8 };
            out.push(3);
            out.extend_from_slice(&newest.to_be_bytes());
            out.push(grid);
            out.extend_from_slice(&x.to_be_bytes());
            out.extend_from_slice(&z.to_be_bytes());
            let mut bitmap = [0u8; 128];
            for c in chunks {
                bitmap[c.index / 8] |= 0x80 >> (c.index % 8);
            }
            out.extend_from_slice(&bitmap);
            out.push(0); // no features
            let (g, side) = (usize::from(grid), 32 / usize::from(grid));
            let mut bodies = Vec::with_capacity(g * g);
            for bucket in 0..g * g {
                let (bx, bz) = (bucket / g, bucket % g);
                let mut data = Vec::new();
                let mut any = false;
                for ix in 0..side {
                    for iz in 0..side {
                        let index = (bx * side + ix) + (bz * side + iz) * 32;
                        match by_index[index] {
                            Some(c) => {
                                any = true;
                                data.extend_from_slice(&(c.nbt.len() as u32 + 8).to_be_bytes());
                                data.extend_from_slice(&c.timestamp.to_be_bytes());
                                data.extend_from_slice(&c.nbt);
                            }
                            None => data.extend_from_slice(&[0; 12]),
                        }
                    }
                }
                bodies.push(if any { zstd(&data, level) } else { Vec::new() });
            }
            for b in &bodies {
                out.extend_from_slice(&(b.len() as u32).to_be_bytes());
                out.push(level.clamp(i8::MIN.into(), i8::MAX.into()) as i8 as u8);
                out.extend_from_slice(&xxh64(b));
            }
            for b in bodies {
                out.extend_from_slice(&b);
            }
        }
    }
    out.extend_from_slice(&LINEAR_SIGNATURE.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunks() -> Vec<LinearChunk> {
        [(0, b"a".repeat(300)), (33, b"bc".repeat(2000)), (1023, vec![7; 10])]
            .into_iter()
            .map(|(index, nbt)| LinearChunk { index, timestamp: 1_700_000_000 + index as u64, nbt })
            .collect()
    }

    /// The repository's Linear fixtures, written by the format's own tool from the 1.21.1
    /// region: every chunk is the region's, byte for byte, with its timestamp.
    #[test]
    fn files_the_formats_own_tool_wrote_read_as_the_region_they_came_from() {
        let testdata = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
        let mca = std::fs::read(testdata.join("anvil/1.21.1/r.0.0.mca")).unwrap();
        let anvil = RegionFile::new(mca).unwrap();
        let want: Vec<LinearChunk> = anvil
            .entries()
            .map(|e| LinearChunk {
                index: e.index,
                timestamp: u64::from(e.timestamp),
                nbt: anvil.read(&e).unwrap().nbt,
            })
            .collect();
        assert_eq!(want.len(), 225);
        for (dir, version) in [("1.21.1-v1", 1), ("1.21.1-v2", 3)] {
            let bytes = std::fs::read(testdata.join("linear").join(dir).join("r.0.0.linear"));
            let r = decode(&bytes.unwrap(), MAX_DECOMPRESSED).unwrap();
            assert_eq!(r.version, version, "{dir}");
            assert_eq!(r.chunks, want, "{dir}");
        }
    }

    #[test]
    fn both_layouts_round_trip_and_every_damage_is_refused() {
        for layout in [
            LinearLayout::V1,
            LinearLayout::V2 { grid: 1 },
            LinearLayout::V2 { grid: 8 },
            LinearLayout::V2 { grid: 32 },
        ] {
            let bytes = encode(&chunks(), (3, -4), layout, 3);
            let r = decode(&bytes, MAX_DECOMPRESSED).unwrap();
            assert_eq!(r.chunks, chunks(), "{layout:?}");
            assert!(decode(&bytes, 100).is_err(), "{layout:?}: the bound holds");
            for cut in [1, 9, bytes.len() / 2, bytes.len() - 9] {
                assert!(
                    decode(&bytes[..cut], MAX_DECOMPRESSED).is_err(),
                    "{layout:?} cut at {cut}"
                );
            }
            for i in (0..bytes.len()).step_by(7) {
                let mut b = bytes.clone();
                b[i] ^= 0x20;
                // A flipped byte is refused, or (v1's unchecked header fields) still reads as
                // the same chunks: never other data.
                if let Ok(r) = decode(&b, MAX_DECOMPRESSED) {
                    assert_eq!(r.chunks, chunks(), "{layout:?}: byte {i} flipped");
                }
            }
        }
        assert_eq!(decode(b"not a linear file at all", 1 << 20), Err(LinearError::Signature));
    }

    /// Version 2 names either layout in the wild: it is read by the one its lengths agree
    /// with; another version is refused by number.
    #[test]
    fn version_two_is_read_by_its_layout() {
        for layout in [LinearLayout::V1, LinearLayout::V2 { grid: 4 }] {
            let mut bytes = encode(&chunks(), (0, 0), layout, 1);
            bytes[8] = 2;
            assert_eq!(decode(&bytes, MAX_DECOMPRESSED).unwrap().chunks, chunks(), "{layout:?}");
            bytes[8] = 9;
            assert_eq!(decode(&bytes, MAX_DECOMPRESSED), Err(LinearError::Version(9)));
        }
    }
}
