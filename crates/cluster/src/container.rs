//! Cluster container v1: 4³ or 16³ chunk blobs in one value (`docs/format/cluster-v1.md`).
//!
//! [`ClusterBuilder`] assembles a cluster from `(local index, chunk bytes)` pairs and
//! [`ClusterView`] reads one back without copying: construction validates the whole offset
//! table (never the blobs), then [`ClusterView::get`] returns one chunk's bytes without
//! touching the others.

use std::borrow::Cow;
use std::fmt;

use terrane_section::keys::Level;
use terrane_section::{ChunkPos, GridPos};
use zerocopy::FromBytes;
use zerocopy::little_endian::U64;

use crate::error::{Error, Result};

/// The only cluster `formatVersion` this crate reads and writes.
pub const FORMAT_VERSION: u64 = 1;

/// Bytes before the offset table: `u64 formatVersion`, `u8 scaleLevel`.
pub(crate) const PREFIX_LEN: usize = 9;

/// The scale of a cluster: a cube of 4³ chunks (stored at [`Level::L1`], warm) or 16³ chunks
/// ([`Level::L2`], cold). A cluster has no level-0 form, which this type cannot express:
/// [`Scale::level`] and [`Scale::from_level`] convert.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Scale {
    /// `scaleLevel = 1`: 4×4×4 = 64 chunks, the `chunkl1` table.
    Cube4,
    /// `scaleLevel = 2`: 16×16×16 = 4096 chunks, the `chunkl2` table.
    Cube16,
}

impl Scale {
    /// Both scales, finer first.
    pub const ALL: [Scale; 2] = [Scale::Cube4, Scale::Cube16];

    /// The scale with header byte `b` (1 or 2).
    pub const fn from_byte(b: u8) -> Option<Scale> {
        match b {
            1 => Some(Scale::Cube4),
            2 => Some(Scale::Cube16),
            _ => None,
        }
    }

    /// The `scaleLevel` header byte (1 or 2).
    pub const fn byte(self) -> u8 {
        match self {
            Scale::Cube4 => 1,
            Scale::Cube16 => 2,
        }
    }

    /// The storage level whose table holds clusters of this scale.
    pub const fn level(self) -> Level {
        match self {
            Scale::Cube4 => Level::L1,
            Scale::Cube16 => Level::L2,
        }
    }

    /// The scale of `level`'s clusters; `None` for [`Level::L0`] (one chunk per key).
    pub const fn from_level(level: Level) -> Option<Scale> {
        match level {
            Level::L0 => None,
            Level::L1 => Some(Scale::Cube4),
            Level::L2 => Some(Scale::Cube16),
        }
    }

    /// Right shift from chunk coordinates to cluster coordinates (2 or 4).
    pub const fn shift(self) -> u32 {
        self.level().shift()
    }

    /// Chunks along one edge (4 or 16).
    pub const fn edge(self) -> u32 {
        1 << self.shift()
    }

    /// Chunks per cluster, i.e. entries of the offset table (64 or 4096).
    pub const fn chunk_count(self) -> usize {
        1 << (3 * self.shift())
    }

    /// Length of the header: 9 bytes plus 8 per offset (521 or 32 777). The first chunk
    /// blob starts here.
    pub const fn header_len(self) -> usize {
        PREFIX_LEN + 8 * self.chunk_count()
    }

    /// The cluster holding chunk `pos`, in cluster coordinates (`pos >> shift`, floor).
    pub fn cluster_of(self, pos: ChunkPos) -> ChunkPos {
        pos.section(self.shift())
    }

    /// Local index of chunk `pos` inside its cluster: `(x << 2s) | (y << s) | z` of the low
    /// `s = shift` bits of each coordinate (z fastest, as inside a chunk).
    pub fn local_index(self, pos: ChunkPos) -> u16 {
        // At most 4095: fits.
        pos.local_index(self.shift()) as u16
    }

    /// The local `(x, y, z)` of `index` (each `0..edge`); `None` when out of range.
    pub fn local_coords(self, index: u16) -> Option<(u32, u32, u32)> {
        if usize::from(index) >= self.chunk_count() {
            return None;
        }
        let s = self.shift();
        let m = (1u32 << s) - 1;
        let i = u32::from(index);
        Some((i >> (2 * s), (i >> s) & m, i & m))
    }

    /// The chunk at local `index` of cluster `cluster` (cluster coordinates); `None` when the
    /// index is out of range or the chunk coordinates overflow `i64`.
    pub fn chunk_pos(self, cluster: ChunkPos, index: u16) -> Option<ChunkPos> {
        let (x, y, z) = self.local_coords(index)?;
        let min = cluster.section_min(self.shift())?;
        Some(ChunkPos::new(min.x | i64::from(x), min.y | i64::from(y), min.z | i64::from(z)))
    }
}

impl fmt::Display for Scale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let e = self.edge();
        write!(f, "scale {} ({e}×{e}×{e} chunks)", self.byte())
    }
}

fn offset_table(bytes: &[u8], scale: Scale) -> Option<&[U64]> {
    let table = bytes.get(PREFIX_LEN..scale.header_len())?;
    <[U64]>::ref_from_bytes(table).ok()
}

/// A validated, zero-copy view of a cluster v1.
///
/// [`ClusterView::new`] checks the header and the whole offset table in one pass over the
/// table (`chunk_count` reads, no allocation) and never looks at the blobs; afterwards every
/// accessor is infallible and returns slices of the original bytes. Blobs are opaque here:
/// decode them with terrane-chunk.
///
/// ```
/// use terrane_cluster::{ClusterBuilder, ClusterView, Scale};
///
/// let mut b = ClusterBuilder::new(Scale::Cube4);
/// b.insert(5, b"chunk five".as_slice())?;
/// b.insert(0, b"chunk zero".as_slice())?;
/// let bytes = b.build()?;
///
/// let view = ClusterView::new(&bytes)?;
/// assert_eq!(view.get(5), Some(b"chunk five".as_slice()));
/// assert_eq!(view.get(6), None); // absent
/// assert_eq!(view.iter().map(|(i, _)| i).collect::<Vec<_>>(), [0, 5]);
/// # Ok::<(), terrane_cluster::Error>(())
/// ```
#[derive(Copy, Clone)]
pub struct ClusterView<'a> {
    bytes: &'a [u8],
    offsets: &'a [U64],
    scale: Scale,
    len: u16,
}

impl<'a> ClusterView<'a> {
    /// Validates `bytes` as a cluster v1 of either scale.
    ///
    /// Checks, in order: the 9-byte prefix is present, `formatVersion == 1`, `scaleLevel` is
    /// 1 or 2, the offset table is complete, and every non-zero offset is past the header,
    /// strictly greater than the previous non-zero one (the first equal to the header length)
    /// and smaller than the cluster's length; a cluster without chunks ends right after its
    /// header.
    pub fn new(bytes: &'a [u8]) -> Result<Self> {
        let prefix = bytes
            .get(..PREFIX_LEN)
            .ok_or(Error::Truncated { needed: PREFIX_LEN, len: bytes.len() })?;
        let mut version = [0u8; 8];
        version.copy_from_slice(&prefix[..8]);
        let version = u64::from_le_bytes(version);
        if version != FORMAT_VERSION {
            return Err(Error::UnsupportedVersion(version));
        }
        let scale = Scale::from_byte(prefix[8]).ok_or(Error::InvalidScale(prefix[8]))?;
        let header_len = scale.header_len();
        let offsets = offset_table(bytes, scale)
            .ok_or(Error::Truncated { needed: header_len, len: bytes.len() })?;
        let mut previous: Option<u64> = None;
        let mut len = 0u16;
        for (i, o) in offsets.iter().enumerate() {
            let offset = o.get();
            if offset == 0 {
                continue;
            }
            // `i < 4096` always.
            let index = i as u16;
            if offset < header_len as u64 {
                return Err(Error::OffsetInHeader { index, offset, header_len });
            }
            match previous {
                None if offset != header_len as u64 => {
                    return Err(Error::GapAfterHeader { index, offset, header_len });
                }
                Some(previous) if offset <= previous => {
                    return Err(Error::OffsetNotIncreasing { index, offset, previous });
                }
                _ => {}
            }
            if usize::try_from(offset).map_or(true, |o| o >= bytes.len()) {
                return Err(Error::OffsetOutOfBounds { index, offset, len: bytes.len() });
            }
            previous = Some(offset);
            len += 1;
        }
        if len == 0 && bytes.len() != header_len {
            return Err(Error::TrailingBytes { len: bytes.len(), header_len });
        }
        Ok(Self { bytes, offsets, scale, len })
    }

    /// Like [`ClusterView::new`], and also checks that the cluster has scale `scale` (the
    /// scale its table implies).
    pub fn with_scale(bytes: &'a [u8], scale: Scale) -> Result<Self> {
        let view = Self::new(bytes)?;
        if view.scale != scale {
            return Err(Error::ScaleMismatch { expected: scale.byte(), found: view.scale.byte() });
        }
        Ok(view)
    }

    /// The cluster's scale.
    pub fn scale(&self) -> Scale {
        self.scale
    }

    /// Number of present chunks.
    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Whether no chunk is present.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The whole cluster's bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The offset of `index`'s blob, 0 when absent or out of range.
    fn offset(&self, index: usize) -> usize {
        // Validated in `new`: every offset fits `usize` and lies inside `bytes`.
        self.offsets.get(index).map_or(0, |o| o.get() as usize)
    }

    /// Where the blob starting before local index `after` ends: the next present offset, or
    /// the end of the cluster.
    fn end_after(&self, after: usize) -> usize {
        self.offsets
            .get(after..)
            .and_then(|rest| rest.iter().find(|o| o.get() != 0))
            .map_or(self.bytes.len(), |o| o.get() as usize)
    }

    /// Whether the chunk at local `index` is present (`false` out of range).
    pub fn contains(&self, index: u16) -> bool {
        self.offset(usize::from(index)) != 0
    }

    /// The bytes of the chunk at local `index`, `None` when absent (or out of range). Reads
    /// the offset table from `index` to the next present chunk and nothing else.
    pub fn get(&self, index: u16) -> Option<&'a [u8]> {
        let i = usize::from(index);
        let start = self.offset(i);
        if start == 0 {
            return None;
        }
        self.bytes.get(start..self.end_after(i + 1))
    }

    /// The bytes of chunk `pos` if it is present, whichever cluster `pos` is in (only its
    /// local index is used).
    pub fn get_pos(&self, pos: ChunkPos) -> Option<&'a [u8]> {
        self.get(self.scale.local_index(pos))
    }

    /// The present chunks, `(local index, bytes)` in ascending index order.
    pub fn iter(&self) -> Iter<'a> {
        Iter { view: *self, next: 0 }
    }
}

impl fmt::Debug for ClusterView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterView")
            .field("scale", &self.scale.byte())
            .field("chunks", &self.len)
            .field("bytes", &self.bytes.len())
            .finish()
    }
}

impl<'a> IntoIterator for &ClusterView<'a> {
    type Item = (u16, &'a [u8]);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

/// Iterator over the present chunks of a [`ClusterView`], in ascending local index order.
#[derive(Clone, Debug)]
pub struct Iter<'a> {
    view: ClusterView<'a>,
    next: usize,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (u16, &'a [u8]);

    fn next(&mut self) -> Option<Self::Item> {
        let offsets = self.view.offsets;
        let start_index =
            self.next + offsets.get(self.next..)?.iter().position(|o| o.get() != 0)?;
        let start = self.view.offset(start_index);
        let rest = offsets.get(start_index + 1..).unwrap_or(&[]);
        let (end, next) = match rest.iter().position(|o| o.get() != 0) {
            Some(p) => (offsets[start_index + 1 + p].get() as usize, start_index + 1 + p),
            None => (self.view.bytes.len(), offsets.len()),
        };
        self.next = next;
        Some((start_index as u16, self.view.bytes.get(start..end)?))
    }
}

/// Builds a cluster v1 from `(local index, chunk bytes)` pairs; borrowed blobs are not
/// copied until [`build`](ClusterBuilder::build).
///
/// The builder is a sparse array of `chunk_count` slots, so pairs may come in any order and
/// an existing cluster can be edited ([`from_view`](ClusterBuilder::from_view), then
/// [`set`](ClusterBuilder::set) / [`remove`](ClusterBuilder::remove)). It rejects indices
/// `>= chunk_count`, empty blobs (an absent chunk is left out instead) and, in
/// [`insert`](ClusterBuilder::insert), an index given twice. The output is canonical: the
/// same set of chunks always encodes to the same bytes.
#[derive(Clone)]
pub struct ClusterBuilder<'a> {
    scale: Scale,
    slots: Vec<Option<Cow<'a, [u8]>>>,
    len: usize,
    body_len: usize,
}

impl<'a> ClusterBuilder<'a> {
    /// An empty cluster of `scale`.
    pub fn new(scale: Scale) -> Self {
        Self { scale, slots: vec![None; scale.chunk_count()], len: 0, body_len: 0 }
    }

    /// A builder holding the present chunks of `view` (borrowed, not copied).
    pub fn from_view(view: &ClusterView<'a>) -> Self {
        let mut b = Self::new(view.scale());
        for (i, blob) in view.iter() {
            b.slots[usize::from(i)] = Some(Cow::Borrowed(blob));
            b.len += 1;
            b.body_len += blob.len();
        }
        b
    }

    /// A builder of `scale` holding `pairs`; fails like [`insert`](ClusterBuilder::insert).
    pub fn from_pairs<I, B>(scale: Scale, pairs: I) -> Result<Self>
    where
        I: IntoIterator<Item = (u16, B)>,
        B: Into<Cow<'a, [u8]>>,
    {
        let mut b = Self::new(scale);
        for (i, blob) in pairs {
            b.insert(i, blob)?;
        }
        Ok(b)
    }

    fn check(&self, index: u16, blob: &[u8]) -> Result<usize> {
        let i = usize::from(index);
        if i >= self.slots.len() {
            return Err(Error::IndexOutOfRange { index: i, count: self.slots.len() });
        }
        if blob.is_empty() {
            return Err(Error::EmptyChunk { index });
        }
        Ok(i)
    }

    /// Adds the chunk at local `index`; rejects an index out of range, one already present
    /// and an empty blob.
    pub fn insert(&mut self, index: u16, blob: impl Into<Cow<'a, [u8]>>) -> Result<()> {
        let blob = blob.into();
        let i = self.check(index, &blob)?;
        if self.slots[i].is_some() {
            return Err(Error::DuplicateChunk { index });
        }
        self.body_len = self.body_len.checked_add(blob.len()).ok_or(Error::TooLarge)?;
        self.slots[i] = Some(blob);
        self.len += 1;
        Ok(())
    }

    /// Sets the chunk at local `index`, returning the previous blob; rejects an index out of
    /// range and an empty blob.
    pub fn set(
        &mut self,
        index: u16,
        blob: impl Into<Cow<'a, [u8]>>,
    ) -> Result<Option<Cow<'a, [u8]>>> {
        let blob = blob.into();
        let i = self.check(index, &blob)?;
        let old_len = self.slots[i].as_ref().map_or(0, |b| b.len());
        self.body_len = (self.body_len - old_len).checked_add(blob.len()).ok_or(Error::TooLarge)?;
        let old = self.slots[i].replace(blob);
        if old.is_none() {
            self.len += 1;
        }
        Ok(old)
    }

    /// Removes the chunk at local `index` (absent or out of range: `None`).
    pub fn remove(&mut self, index: u16) -> Option<Cow<'a, [u8]>> {
        let old = self.slots.get_mut(usize::from(index))?.take()?;
        self.len -= 1;
        self.body_len -= old.len();
        Some(old)
    }

    /// The blob at local `index`, if present.
    pub fn get(&self, index: u16) -> Option<&[u8]> {
        self.slots.get(usize::from(index))?.as_deref()
    }

    /// Whether local `index` holds a chunk.
    pub fn contains(&self, index: u16) -> bool {
        self.get(index).is_some()
    }

    /// The present chunks in ascending index order.
    pub fn iter(&self) -> impl Iterator<Item = (u16, &[u8])> + '_ {
        self.slots.iter().enumerate().filter_map(|(i, s)| Some((i as u16, s.as_deref()?)))
    }

    /// The cluster's scale.
    pub fn scale(&self) -> Scale {
        self.scale
    }

    /// Number of present chunks.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no chunk is present.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Length of the encoding [`build`](ClusterBuilder::build) returns.
    pub fn encoded_len(&self) -> Result<usize> {
        self.scale.header_len().checked_add(self.body_len).ok_or(Error::TooLarge)
    }

    /// Encodes the cluster, appending to `out`.
    pub fn write_to(&self, out: &mut Vec<u8>) -> Result<()> {
        let total = self.encoded_len()?;
        u64::try_from(total).map_err(|_| Error::TooLarge)?;
        out.reserve(total);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.push(self.scale.byte());
        let mut at = self.scale.header_len();
        for slot in &self.slots {
            match slot {
                Some(blob) => {
                    out.extend_from_slice(&(at as u64).to_le_bytes());
                    at += blob.len();
                }
                None => out.extend_from_slice(&0u64.to_le_bytes()),
            }
        }
        for blob in self.slots.iter().flatten() {
            out.extend_from_slice(blob);
        }
        Ok(())
    }

    /// Encodes the cluster.
    pub fn build(&self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        self.write_to(&mut out)?;
        Ok(out)
    }
}

impl fmt::Debug for ClusterBuilder<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClusterBuilder")
            .field("scale", &self.scale.byte())
            .field("chunks", &self.len)
            .field("body_len", &self.body_len)
            .finish()
    }
}
