//! The zero-copy view over an encoded chunk, and the component rank index.

use zerocopy::little_endian::U64;
use zerocopy::{FromBytes, Immutable, IntoBytes, KnownLayout, Unaligned};

use crate::bits::{bits_for, for_each_cell, map_large_palette, map_small_palette, read_bits};
use crate::{BlockId, CELLS, ComponentId, ComponentKind, Error, FORMAT_VERSION, Result, Schema};

/// The fixed 40-byte header.
#[derive(FromBytes, KnownLayout, Immutable, Unaligned)]
#[repr(C)]
struct RawHeader {
    version: U64,
    component_offset: U64,
    entity_offset: U64,
    layered_count: U64,
    palette_count: U64,
}

pub(crate) const HEADER_LEN: usize = 40;

/// A 16-byte entity UUID, as stored (byte order is the caller's; canonical chunks sort them
/// as byte strings).
pub type Uuid = [u8; 16];

/// A validated, zero-copy view of an encoded chunk (format v1).
///
/// [`ChunkView::parse`] checks the whole chunk except what needs the schema (see
/// [`ChunkView::components`]); after that every accessor is infallible and bounds-safe. Block
/// lookups at layer 0 are O(1), at extra layers O(log L) for `L` layer records, or O(1)
/// through [`ChunkView::layer_index`], built once per chunk.
#[derive(Debug, Clone, Copy)]
pub struct ChunkView<'a> {
    bytes: &'a [u8],
    palette: &'a [U64],
    bits: u32,
    layer0: &'a [u8],
    records: &'a [u8],
    layered: usize,
    component_offset: usize,
    entity_offset: usize,
    entities: &'a [Uuid],
}

/// One extra-layer block: cell, layer (from 1) and global block id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LayerRecord {
    /// The cell index ([`terrane_section::cell_index`]).
    pub cell: u16,
    /// The layer, from 1 (layer 0 is the packed array).
    pub layer: u32,
    /// The global block id.
    pub block: BlockId,
}

fn truncated(what: &'static str, offset: usize, needed: u128, len: usize) -> Error {
    Error::Truncated {
        what,
        offset: offset as u64,
        needed: u64::try_from(needed).unwrap_or(u64::MAX),
        available: len.saturating_sub(offset) as u64,
    }
}

/// Whether every pair is in strictly ascending order, without an early exit (an integer OR,
/// which vectorises).
#[inline(always)]
fn strictly_ascending(pairs: impl Iterator<Item = (u32, u32)>) -> bool {
    pairs.fold(0u32, |a, (x, y)| a | u32::from(y <= x)) == 0
}

/// The ids of a palette (validated to fit `u32`), zero from its end up to `len`.
fn padded_ids(palette: &[U64], len: usize) -> Vec<u32> {
    let mut ids = vec![0u32; len.max(palette.len())];
    // As 8-byte loads (see `parse_inner`: `U64::get` in a loop was read a byte at a time).
    let entries = <[[u8; 8]]>::ref_from_bytes(palette.as_bytes()).unwrap_or_default();
    for (d, e) in ids.iter_mut().zip(entries) {
        *d = u64::from_le_bytes(*e) as u32;
    }
    ids
}

/// [`padded_ids`] of a palette of at most 64 entries, as an array (so that a 6-bit local id
/// indexes it without a bounds check).
fn small_ids(palette: &[U64]) -> [u32; 64] {
    let mut ids = [0u32; 64];
    for (d, e) in ids.iter_mut().zip(palette) {
        *d = e.get() as u32;
    }
    ids
}

impl<'a> ChunkView<'a> {
    /// Parses and validates an encoded chunk: header, version, palette (strictly ascending,
    /// every entry used), every local id below the palette count, layer records sorted by
    /// cell, zero padding, offsets, entity section length and order.
    ///
    /// Component values are checked by [`ChunkView::components`], which needs the schema.
    pub fn parse(bytes: &'a [u8]) -> Result<ChunkView<'a>> {
        Self::parse_inner(bytes, None)
    }

    /// [`ChunkView::parse`] and [`ChunkView::read_blocks`] in one pass over layer 0: the
    /// bulk read of a stored chunk, which unpacks each local id once, both to check it and to
    /// look it up. On an error, `out` holds unspecified blocks.
    ///
    /// ```
    /// # use terrane_chunk::{BlockId, Chunk, ChunkView, Schema};
    /// # let mut schema = Schema::new();
    /// # schema.add_block("air", &[]).unwrap();
    /// # let stone = schema.add_block("stone", &[]).unwrap();
    /// let mut chunk = Chunk::new(BlockId(0));
    /// chunk.set(1, 2, 3, stone);
    /// let bytes = chunk.encode(&schema);
    /// let mut blocks = [BlockId(0); 4096];
    /// let view = ChunkView::parse_blocks(&bytes, &mut blocks)?;
    /// assert_eq!(blocks[(1 << 8) | (2 << 4) | 3], stone);
    /// assert_eq!(view.block((1 << 8) | (2 << 4) | 3), stone);
    /// # Ok::<(), terrane_chunk::Error>(())
    /// ```
    pub fn parse_blocks(bytes: &'a [u8], out: &mut [BlockId; CELLS]) -> Result<ChunkView<'a>> {
        Self::parse_inner(bytes, Some(out))
    }

    /// Parses; with `out`, writes layer 0's blocks there during the local-id check.
    fn parse_inner(bytes: &'a [u8], out: Option<&mut [BlockId; CELLS]>) -> Result<ChunkView<'a>> {
        let len = bytes.len();
        let (header, rest) = RawHeader::ref_from_prefix(bytes)
            .map_err(|_| truncated("header", 0, HEADER_LEN as u128, len))?;
        let version = header.version.get();
        if version != FORMAT_VERSION {
            return Err(Error::UnsupportedVersion { found: version });
        }
        let n = header.palette_count.get();
        if n == 0 {
            return Err(Error::EmptyPalette);
        }
        let pal_bytes = u128::from(n) * 8;
        if pal_bytes > rest.len() as u128 {
            return Err(truncated("block palette", HEADER_LEN, pal_bytes, len));
        }
        let (pal_raw, rest) = rest.split_at(pal_bytes as usize);
        let palette = <[U64]>::ref_from_bytes(pal_raw)
            .map_err(|_| truncated("block palette", HEADER_LEN, pal_bytes, len))?;
        let n = palette.len();
        let bits = bits_for(n as u64);
        // Strictly ascending and within `u32`, checked without an early exit (the common,
        // valid case vectorises); a bad palette pays a second pass to name the entry. The
        // order is compared on the low halves, as `u32`, once the high halves are known to be
        // zero (baseline x86-64 has no vector compare of 64-bit lanes), with an integer OR over
        // pairs (a `bool` fold over `windows(2)` stayed a scalar chain: a quarter of a
        // 4096-entry bulk read in perf). A bulk read past 64 entries keeps the low halves as
        // its lookup table, padded to the packing's width: one pass over the palette fewer.
        let bulk_ids = out.is_some() && n > 64 && bits <= 12;
        // Each entry read as one 8-byte load (through `U64::get` and through closures that
        // also OR the high halves, LLVM read them a byte at a time: 2.6 µs of a 6 µs bulk
        // read of 4096 entries in perf).
        let entries = <[[u8; 8]]>::ref_from_bytes(pal_raw).unwrap_or_default();
        let mut high = 0u64;
        let low: Vec<u32> = if bulk_ids {
            let mut low = vec![0u32; 1 << bits];
            for (d, e) in low.iter_mut().zip(entries) {
                let v = u64::from_le_bytes(*e);
                high |= v >> 32;
                *d = v as u32;
            }
            low
        } else {
            high = entries.iter().fold(0u64, |a, e| a | u64::from_le_bytes(*e) >> 32);
            Vec::new()
        };
        let ascending = if bulk_ids {
            strictly_ascending(low[..n].iter().zip(&low[1..n]).map(|(&x, &y)| (x, y)))
        } else {
            strictly_ascending(
                entries
                    .iter()
                    .zip(&entries[1..])
                    .map(|(x, y)| (u64::from_le_bytes(*x) as u32, u64::from_le_bytes(*y) as u32)),
            )
        };
        if !(ascending && high == 0) {
            let mut prev: Option<u64> = None;
            for (i, e) in palette.iter().enumerate() {
                let id = e.get();
                if id > u64::from(u32::MAX) {
                    return Err(Error::BlockIdTooLarge { index: i as u64, id });
                }
                if prev.is_some_and(|p| p >= id) {
                    return Err(Error::PaletteNotSorted { index: i as u64 });
                }
                prev = Some(id);
            }
        }

        let l0_off = HEADER_LEN + pal_raw.len();
        let l0_len = 512 * bits as usize;
        if l0_len > rest.len() {
            return Err(truncated("layer 0", l0_off, l0_len as u128, len));
        }
        let (layer0, rest) = rest.split_at(l0_len);

        let rec_off = l0_off + l0_len;
        let layered_u64 = header.layered_count.get();
        let rec_bits = u128::from(layered_u64) * u128::from(12 + bits);
        let rec_len = rec_bits.div_ceil(8);
        if rec_len > rest.len() as u128 {
            return Err(truncated("layer records", rec_off, rec_len, len));
        }
        let layered = layered_u64 as usize;
        let records = &rest[..rec_len as usize];
        let rec_end = rec_off + rec_len as usize;
        let comp_expected = rec_end.next_multiple_of(8);

        let component_offset = header.component_offset.get();
        let entity_offset = header.entity_offset.get();
        for (field, off) in [("componentOffset", component_offset), ("entityOffset", entity_offset)]
        {
            if off > len as u64 {
                return Err(Error::OffsetOutOfBounds { field, offset: off, len: len as u64 });
            }
        }
        if entity_offset < component_offset {
            return Err(Error::OffsetsOutOfOrder {
                component: component_offset,
                entity: entity_offset,
            });
        }
        if component_offset != comp_expected as u64 {
            return Err(Error::LengthMismatch {
                what: "componentOffset (end of the layer records, padded to 8 bytes)",
                expected: comp_expected as u64,
                found: component_offset,
            });
        }
        // Unused bits of the last record byte, then the padding bytes, must be zero.
        let used_bits = (rec_bits % 8) as u32;
        if used_bits != 0 && records[records.len() - 1] >> used_bits != 0 {
            return Err(Error::NonZeroPadding { offset: (rec_end - 1) as u64 });
        }
        if let Some(p) = bytes[rec_end..comp_expected].iter().position(|&b| b != 0) {
            return Err(Error::NonZeroPadding { offset: (rec_end + p) as u64 });
        }
        let component_offset = component_offset as usize;
        let entity_offset = entity_offset as usize;

        // Entities.
        let ent = &bytes[entity_offset..];
        if ent.len() < 8 {
            return Err(truncated("entity count", entity_offset, 8, len));
        }
        let (count, uuids) = ent.split_at(8);
        let count = u64::from_le_bytes(count.try_into().unwrap_or([0; 8]));
        if u128::from(count) * 16 != uuids.len() as u128 {
            return Err(Error::LengthMismatch {
                what: "entity section bytes after the count (16 per UUID, to the end)",
                expected: u64::try_from(u128::from(count) * 16).unwrap_or(u64::MAX),
                found: uuids.len() as u64,
            });
        }
        let entities = <[Uuid]>::ref_from_bytes(uuids).map_err(|_| Error::LengthMismatch {
            what: "entity section length",
            expected: count.saturating_mul(16),
            found: uuids.len() as u64,
        })?;
        for i in 1..entities.len() {
            if entities[i - 1] >= entities[i] {
                return Err(Error::EntitiesUnsorted { index: i as u64 });
            }
        }

        // Local ids: below the palette count, and every palette entry used. One pass marks
        // the ids seen and keeps the largest (no load-to-store chain through a counter), and
        // only a bad chunk pays a second pass to name the cell.
        let mut used = vec![false; n];
        let mut max = 0u32;
        match out {
            // Up to 64 entries, with an output: the ids seen are bits of a register.
            Some(out) if n <= 64 => {
                let seen = map_small_palette(layer0, bits, &small_ids(palette), out);
                max = 63 - seen.leading_zeros();
                for (l, u) in used.iter_mut().enumerate() {
                    *u = seen >> l & 1 == 1;
                }
            }
            // Up to 4096 entries: marks in an array as wide as the packing allows.
            Some(out) if bits <= 12 => {
                let ids = low;
                let mut seen = vec![false; 1 << bits];
                map_large_palette(layer0, bits, &ids, &mut seen, out);
                max = seen.iter().rposition(|&s| s).unwrap_or(0) as u32;
                used.copy_from_slice(&seen[..n]);
            }
            out => {
                for_each_cell(layer0, bits, |_, v| {
                    max = max.max(v);
                    if let Some(u) = used.get_mut(v as usize) {
                        *u = true;
                    }
                });
                if let Some(out) = out {
                    let ids = padded_ids(palette, n);
                    for_each_cell(layer0, bits, |i, v| {
                        out[i] = BlockId(ids.get(v as usize).copied().unwrap_or(0));
                    });
                }
            }
        }
        if max as usize >= n {
            let mut bad = None;
            for_each_cell(layer0, bits, |i, v| {
                if v as usize >= n {
                    bad.get_or_insert((i, v));
                }
            });
            let (i, v) = bad.unwrap_or((0, max));
            return Err(Error::LocalIdOutOfRange {
                cell: i as u16,
                layer: 0,
                local: u64::from(v),
                palette_len: n as u64,
            });
        }
        let mut layer_used: Vec<bool> = Vec::new();
        if layered > 0 {
            layer_used = vec![false; n];
            let w = 12 + bits;
            let mut prev_cell = 0u16;
            let mut layer = 0u64;
            for r in 0..layered {
                let v = read_bits(records, r as u64 * u64::from(w), w);
                let cell = (v & 0xfff) as u16;
                let local = v >> 12;
                if cell < prev_cell {
                    return Err(Error::LayerRecordsUnsorted { index: r as u64, cell });
                }
                layer = if r > 0 && cell == prev_cell { layer + 1 } else { 1 };
                prev_cell = cell;
                match layer_used.get_mut(local as usize) {
                    Some(u) => *u = true,
                    None => {
                        return Err(Error::LocalIdOutOfRange {
                            cell,
                            layer,
                            local,
                            palette_len: n as u64,
                        });
                    }
                }
            }
        }
        // Without an early exit the common case (all used at layer 0) vectorises.
        let all_used = used.iter().fold(true, |a, &u| a & u);
        if !all_used {
            for (i, &u) in used.iter().enumerate() {
                if !u && !layer_used.get(i).copied().unwrap_or(false) {
                    return Err(Error::UnusedPaletteEntry {
                        index: i as u64,
                        id: palette[i].get() as u32,
                    });
                }
            }
        }

        Ok(ChunkView {
            bytes,
            palette,
            bits,
            layer0,
            records,
            layered,
            component_offset,
            entity_offset,
            entities,
        })
    }

    /// The encoded bytes.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// Number of palette entries.
    pub fn palette_len(&self) -> usize {
        self.palette.len()
    }

    /// The global id of local id `local`, if it exists.
    pub fn palette(&self, local: usize) -> Option<BlockId> {
        self.palette.get(local).map(|e| BlockId(e.get() as u32))
    }

    /// The palette's global ids, ascending.
    pub fn palette_iter(&self) -> impl ExactSizeIterator<Item = BlockId> + 'a {
        self.palette.iter().map(|e| BlockId(e.get() as u32))
    }

    /// Bits per local id: `ceil(log2(palette_len))`.
    pub fn bits_per_block(&self) -> u32 {
        self.bits
    }

    /// The local id of cell `index` at layer 0 (only the low 12 bits of `index` are used).
    #[inline]
    pub fn local(&self, index: u16) -> usize {
        let i = u64::from(index & 0xfff);
        read_bits(self.layer0, i * u64::from(self.bits), self.bits) as usize
    }

    /// The block of cell `index` at layer 0 (only the low 12 bits of `index` are used). O(1).
    #[inline]
    pub fn block(&self, index: u16) -> BlockId {
        let l = self.local(index);
        BlockId(self.palette.get(l).map_or(0, |e| e.get() as u32))
    }

    /// The block at local coordinates (low 4 bits of each) at layer 0.
    #[inline]
    pub fn block_at(&self, x: u32, y: u32, z: u32) -> BlockId {
        self.block(terrane_section::cell_index(x, y, z))
    }

    /// Calls `f(index, block)` for the 4096 cells at layer 0, in index order (faster than 4096
    /// calls to [`ChunkView::block`]).
    pub fn for_each_block(&self, mut f: impl FnMut(u16, BlockId)) {
        let pal = self.palette_ids();
        for_each_cell(self.layer0, self.bits, |i, v| {
            f(i as u16, BlockId(pal.get(v as usize).copied().unwrap_or(0)));
        });
    }

    /// The 4096 layer-0 blocks into `out`, in cell index order (`x << 8 | y << 4 | z`,
    /// `terrane_section::cell_index`): the bulk read.
    ///
    /// ```
    /// # use terrane_chunk::{BlockId, Chunk, ChunkView, Schema};
    /// # let mut schema = Schema::new();
    /// # schema.add_block("air", &[]).unwrap();
    /// # let stone = schema.add_block("stone", &[]).unwrap();
    /// let mut chunk = Chunk::new(BlockId(0));
    /// chunk.set(1, 2, 3, stone);
    /// let bytes = chunk.encode(&schema);
    /// let mut blocks = [BlockId(0); 4096];
    /// ChunkView::parse(&bytes)?.read_blocks(&mut blocks);
    /// assert_eq!(blocks[(1 << 8) | (2 << 4) | 3], stone);
    /// # Ok::<(), terrane_chunk::Error>(())
    /// ```
    pub fn read_blocks(&self, out: &mut [BlockId; CELLS]) {
        if self.palette.len() <= 64 {
            map_small_palette(self.layer0, self.bits, &small_ids(self.palette), out);
            return;
        }
        let pal = self.palette_ids();
        for_each_cell(self.layer0, self.bits, |i, v| {
            out[i] = BlockId(pal.get(v as usize).copied().unwrap_or(0));
        });
    }

    /// The 4096 layer-0 local ids (indices into [`palette_iter`](Self::palette_iter)) into
    /// `out`, in cell index order: the bulk read for callers that translate a palette once
    /// instead of every cell (an edition converter), with no hashing per cell.
    ///
    /// ```
    /// # use terrane_chunk::{BlockId, Chunk, ChunkView, Schema};
    /// # let mut schema = Schema::new();
    /// # schema.add_block("air", &[]).unwrap();
    /// # let stone = schema.add_block("stone", &[]).unwrap();
    /// let mut chunk = Chunk::new(BlockId(0));
    /// chunk.set(1, 2, 3, stone);
    /// let bytes = chunk.encode(&schema);
    /// let view = ChunkView::parse(&bytes)?;
    /// let mut locals = [0u16; 4096];
    /// view.read_locals(&mut locals);
    /// let palette: Vec<BlockId> = view.palette_iter().collect();
    /// assert_eq!(palette[locals[(1 << 8) | (2 << 4) | 3] as usize], stone);
    /// assert_eq!(palette[locals[0] as usize], BlockId(0));
    /// # Ok::<(), terrane_chunk::Error>(())
    /// ```
    pub fn read_locals(&self, out: &mut [u16; CELLS]) {
        for_each_cell(self.layer0, self.bits, |i, v| out[i] = v as u16);
    }

    /// The palette as `u32` block ids (validated at parse to fit).
    fn palette_ids(&self) -> Vec<u32> {
        padded_ids(self.palette, 0)
    }

    /// Number of extra-layer records (`layeredBlockCount`).
    pub fn layered_block_count(&self) -> usize {
        self.layered
    }

    fn record(&self, r: usize) -> (u16, BlockId) {
        let w = 12 + self.bits;
        let v = read_bits(self.records, r as u64 * u64::from(w), w);
        let local = (v >> 12) as usize;
        ((v & 0xfff) as u16, BlockId(self.palette.get(local).map_or(0, |e| e.get() as u32)))
    }

    /// Every extra-layer block, in (cell, layer) order.
    pub fn layer_records(&self) -> impl Iterator<Item = LayerRecord> + '_ {
        let mut prev: Option<(u16, u32)> = None;
        (0..self.layered).map(move |r| {
            let (cell, block) = self.record(r);
            let layer = match prev {
                Some((c, l)) if c == cell => l + 1,
                _ => 1,
            };
            prev = Some((cell, layer));
            LayerRecord { cell, layer, block }
        })
    }

    /// The extra layers of cell `index` (layer 1 first). O(log L) to find them.
    pub fn layers(&self, index: u16) -> impl Iterator<Item = BlockId> + '_ {
        let index = index & 0xfff;
        let start = partition_point(self.layered, |r| self.record(r).0 < index);
        (start..self.layered)
            .map(move |r| self.record(r))
            .take_while(move |&(c, _)| c == index)
            .map(|(_, b)| b)
    }

    /// An index of the extra layers, built once per chunk in O(4096 + L): through it every
    /// (cell, layer) lookup is O(1) ([`Layers::block_layer`]).
    pub fn layer_index(&self) -> Layers<'a> {
        let mut start = Vec::with_capacity(CELLS + 1);
        let mut r = 0usize;
        for cell in 0..CELLS {
            start.push(r as u32);
            while r < self.layered && usize::from(self.record(r).0) == cell {
                r += 1;
            }
        }
        start.push(r as u32);
        Layers { view: *self, start }
    }

    /// The block of cell `index` at `layer` (0 is the packed array), if the cell has it.
    /// O(log L + layer) for `L` layer records; [`ChunkView::layer_index`] makes it O(1).
    pub fn block_layer(&self, index: u16, layer: u32) -> Option<BlockId> {
        match layer {
            0 => Some(self.block(index)),
            l => self.layers(index).nth(l as usize - 1),
        }
    }

    /// The raw component section (from `componentOffset` to `entityOffset`).
    pub fn component_bytes(&self) -> &'a [u8] {
        &self.bytes[self.component_offset..self.entity_offset]
    }

    /// The entity UUIDs, strictly ascending.
    pub fn entities(&self) -> &'a [Uuid] {
        self.entities
    }

    /// Validates the component section against `schema` and builds the rank index that reads
    /// any component value in O(1) (one pass over the chunk's 4096 + L entries).
    ///
    /// Checks: every palette block is registered; stored components are exactly those carried
    /// by some block of the chunk, strictly ascending, known to the schema with the right
    /// size class; fixed sizes and variable offset tables add up; the section ends exactly at
    /// `entityOffset`.
    pub fn components(&self, schema: &Schema) -> Result<Components<'a>> {
        Components::build(self, schema)
    }

    /// Calls `f(ordinal, cell, layer, local)` for every (cell, layer) entry in (cell, layer)
    /// order.
    fn for_each_entry(&self, mut f: impl FnMut(usize, u16, u32, usize)) {
        let w = 12 + self.bits;
        let mut r = 0usize;
        let next = |r: usize| -> Option<(u16, usize)> {
            (r < self.layered).then(|| {
                let v = read_bits(self.records, r as u64 * u64::from(w), w);
                ((v & 0xfff) as u16, (v >> 12) as usize)
            })
        };
        let mut pending = next(0);
        let mut ord = 0usize;
        for_each_cell(self.layer0, self.bits, |i, v| {
            let cell = i as u16;
            f(ord, cell, 0, v as usize);
            ord += 1;
            let mut layer = 1;
            while let Some((c, local)) = pending {
                if c != cell {
                    break;
                }
                f(ord, cell, layer, local);
                ord += 1;
                layer += 1;
                r += 1;
                pending = next(r);
            }
        });
    }
}

fn partition_point(len: usize, pred: impl Fn(usize) -> bool) -> usize {
    let (mut lo, mut hi) = (0, len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if pred(mid) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    lo
}

#[derive(Debug, Clone)]
struct Column<'a> {
    id: ComponentId,
    kind: ComponentKind,
    /// One bit per (cell, layer) entry ordinal: whether the entry carries the component.
    carry: Vec<u64>,
    /// `ranks[w]` = number of carrying entries before word `w`.
    ranks: Vec<u32>,
    count: usize,
    width: usize,
    offsets: &'a [u8],
    data: &'a [u8],
}

impl<'a> Column<'a> {
    fn value(&self, rank: usize) -> &'a [u8] {
        match self.kind {
            ComponentKind::Fixed(size) => {
                let s = size as usize;
                self.data.get(rank * s..rank * s + s).unwrap_or(&[])
            }
            ComponentKind::Variable => {
                let a = read_uint(self.offsets, rank, self.width) as usize;
                let b = read_uint(self.offsets, rank + 1, self.width) as usize;
                self.data.get(a..b).unwrap_or(&[])
            }
        }
    }

    fn rank(&self, ord: usize) -> Option<usize> {
        let word = *self.carry.get(ord / 64)?;
        let bit = 1u64 << (ord % 64);
        (word & bit != 0)
            .then(|| self.ranks[ord / 64] as usize + (word & (bit - 1)).count_ones() as usize)
    }
}

fn read_uint(bytes: &[u8], i: usize, width: usize) -> u64 {
    let mut buf = [0u8; 8];
    if let Some(s) = bytes.get(i * width..i * width + width) {
        buf[..width].copy_from_slice(s);
    }
    u64::from_le_bytes(buf)
}

/// A chunk's extra layers with a per-cell index, for O(1) lookups at any layer. Built by
/// [`ChunkView::layer_index`].
#[derive(Debug, Clone)]
pub struct Layers<'a> {
    view: ChunkView<'a>,
    /// Index of the first layer record of each cell, plus the record count (4097 entries).
    start: Vec<u32>,
}

impl<'a> Layers<'a> {
    /// The block of cell `index` (low 12 bits) at `layer` (0 is the packed array), if the
    /// cell has that layer. O(1).
    #[inline]
    pub fn block_layer(&self, index: u16, layer: u32) -> Option<BlockId> {
        let cell = usize::from(index & 0xfff);
        if layer == 0 {
            return Some(self.view.block(index));
        }
        let r = self.start[cell] as usize + (layer as usize - 1);
        (r < self.start[cell + 1] as usize).then(|| self.view.record(r).1)
    }

    /// Number of layers of cell `index` above layer 0. O(1).
    #[inline]
    pub fn extra_layers(&self, index: u16) -> u32 {
        let cell = usize::from(index & 0xfff);
        self.start[cell + 1] - self.start[cell]
    }

    /// The extra layers of cell `index` (layer 1 first). O(1) to find them.
    pub fn layers(&self, index: u16) -> impl Iterator<Item = BlockId> + '_ {
        let cell = usize::from(index & 0xfff);
        (self.start[cell] as usize..self.start[cell + 1] as usize).map(|r| self.view.record(r).1)
    }

    /// The view the index was built over.
    pub fn view(&self) -> &ChunkView<'a> {
        &self.view
    }
}

/// The component values of a chunk, with a rank index for O(1) access. Built by
/// [`ChunkView::components`].
#[derive(Debug, Clone)]
pub struct Components<'a> {
    /// Ordinal of entry (cell, 0) for each cell, plus the total; empty when there are no extra
    /// layers (then the ordinal is the cell index).
    cell_start: Vec<u32>,
    columns: Vec<Column<'a>>,
}

impl<'a> Components<'a> {
    fn build(view: &ChunkView<'a>, schema: &Schema) -> Result<Self> {
        let n = view.palette_len();
        // Per local id, the column slots it carries.
        let mut ids: Vec<ComponentId> = Vec::new();
        for b in view.palette_iter() {
            if !schema.has_block(b) {
                return Err(Error::UnknownBlock { id: b.0, registered: schema.blocks().len() });
            }
            ids.extend_from_slice(schema.block_components(b));
        }
        ids.sort_unstable();
        ids.dedup();
        let section = view.component_bytes();
        let base = view.component_offset;
        if ids.is_empty() {
            if section.len() >= 8 {
                let id = u64::from_le_bytes(section[..8].try_into().unwrap_or([0; 8]));
                return Err(match schema.component_kind(ComponentId(id)) {
                    None => Error::UnknownComponent { id },
                    Some(_) => Error::UnexpectedComponent { id: ComponentId(id) },
                });
            }
            if !section.is_empty() {
                return Err(Error::LengthMismatch {
                    what: "component section length",
                    expected: 0,
                    found: section.len() as u64,
                });
            }
            return Ok(Components { cell_start: Vec::new(), columns: Vec::new() });
        }
        let mut local_cols: Vec<Vec<u16>> = Vec::with_capacity(n);
        for b in view.palette_iter() {
            local_cols.push(
                schema
                    .block_components(b)
                    .iter()
                    .map(|c| ids.binary_search(c).unwrap_or(0) as u16)
                    .collect(),
            );
        }
        let total = CELLS + view.layered;
        let words = total.div_ceil(64);
        let mut carry = vec![vec![0u64; words]; ids.len()];
        let mut cell_start = Vec::new();
        if view.layered > 0 {
            cell_start.reserve(CELLS + 1);
        }
        let layered = view.layered > 0;
        view.for_each_entry(|ord, _cell, layer, local| {
            if layered && layer == 0 {
                cell_start.push(ord as u32);
            }
            if let Some(cols) = local_cols.get(local) {
                for &c in cols {
                    carry[c as usize][ord / 64] |= 1u64 << (ord % 64);
                }
            }
        });
        if layered {
            cell_start.push(total as u32);
        }

        let mut columns = Vec::with_capacity(ids.len());
        let mut pos = 0usize;
        let mut prev: Option<u64> = None;
        for (slot, bitset) in carry.into_iter().enumerate() {
            let expected = ids[slot];
            let mut ranks = Vec::with_capacity(words);
            let mut acc = 0u32;
            for w in &bitset {
                ranks.push(acc);
                acc += w.count_ones();
            }
            let count = acc as usize;
            let at = base + pos;
            let Some(idb) = section.get(pos..pos + 8) else {
                return Err(Error::MissingComponent { id: expected, count: count as u64 });
            };
            let id = u64::from_le_bytes(idb.try_into().unwrap_or([0; 8]));
            if schema.component_kind(ComponentId(id)).is_none() {
                return Err(Error::UnknownComponent { id });
            }
            if prev.is_some_and(|p| p >= id) {
                return Err(Error::ComponentsUnsorted { id, offset: at as u64 });
            }
            prev = Some(id);
            if id < expected.0 {
                return Err(Error::UnexpectedComponent { id: ComponentId(id) });
            }
            if id > expected.0 {
                return Err(Error::MissingComponent { id: expected, count: count as u64 });
            }
            pos += 8;
            let kind = schema.component_kind(expected).unwrap_or(ComponentKind::Variable);
            let (width, offsets, data);
            match kind {
                ComponentKind::Fixed(size) => {
                    let need = count as u128 * u128::from(size);
                    if need > (section.len() - pos) as u128 {
                        return Err(truncated(
                            "fixed component data",
                            base + pos,
                            need,
                            base + section.len(),
                        ));
                    }
                    width = 0;
                    offsets = &section[pos..pos];
                    data = &section[pos..pos + need as usize];
                    pos += need as usize;
                }
                ComponentKind::Variable => {
                    let Some(&w) = section.get(pos) else {
                        return Err(truncated("offset width", base + pos, 1, base + section.len()));
                    };
                    pos += 1;
                    if !matches!(w, 1 | 2 | 4 | 8) {
                        return Err(Error::BadOffsetWidth { id: expected, width: w, data_len: 0 });
                    }
                    width = w as usize;
                    let need = (count as u128 + 1) * width as u128;
                    if need > (section.len() - pos) as u128 {
                        return Err(truncated(
                            "offset table",
                            base + pos,
                            need,
                            base + section.len(),
                        ));
                    }
                    offsets = &section[pos..pos + need as usize];
                    pos += need as usize;
                    let mut last = 0u64;
                    for i in 0..=count {
                        let o = read_uint(offsets, i, width);
                        if (i == 0 && o != 0) || o < last {
                            return Err(Error::OffsetTableNotMonotone {
                                id: expected,
                                index: i as u64,
                            });
                        }
                        last = o;
                    }
                    let canonical = match last {
                        0..=0xff => 1,
                        0x100..=0xffff => 2,
                        0x1_0000..=0xffff_ffff => 4,
                        _ => 8,
                    };
                    if width != canonical {
                        return Err(Error::BadOffsetWidth {
                            id: expected,
                            width: w,
                            data_len: last,
                        });
                    }
                    if u128::from(last) > (section.len() - pos) as u128 {
                        return Err(truncated(
                            "variable component data",
                            base + pos,
                            u128::from(last),
                            base + section.len(),
                        ));
                    }
                    data = &section[pos..pos + last as usize];
                    pos += last as usize;
                }
            }
            columns.push(Column {
                id: expected,
                kind,
                carry: bitset,
                ranks,
                count,
                width,
                offsets,
                data,
            });
        }
        if pos != section.len() {
            if let Some(idb) = section.get(pos..pos + 8) {
                let id = u64::from_le_bytes(idb.try_into().unwrap_or([0; 8]));
                return Err(match schema.component_kind(ComponentId(id)) {
                    None => Error::UnknownComponent { id },
                    Some(_) if prev.is_some_and(|p| p >= id) => {
                        Error::ComponentsUnsorted { id, offset: (base + pos) as u64 }
                    }
                    Some(_) => Error::UnexpectedComponent { id: ComponentId(id) },
                });
            }
            return Err(Error::LengthMismatch {
                what: "component section length (componentOffset..entityOffset)",
                expected: pos as u64,
                found: section.len() as u64,
            });
        }
        Ok(Components { cell_start, columns })
    }

    fn ordinal(&self, cell: u16, layer: u32) -> Option<usize> {
        let cell = usize::from(cell & 0xfff);
        if self.cell_start.is_empty() {
            return (layer == 0).then_some(cell);
        }
        let start = self.cell_start[cell] as usize;
        let end = self.cell_start[cell + 1] as usize;
        let ord = start + layer as usize;
        (ord < end).then_some(ord)
    }

    fn ordinal_to_entry(&self, ord: usize) -> (u16, u32) {
        if self.cell_start.is_empty() {
            return (ord as u16, 0);
        }
        let cell = self.cell_start.partition_point(|&s| s as usize <= ord) - 1;
        (cell as u16, (ord - self.cell_start[cell] as usize) as u32)
    }

    /// The stored components, ascending.
    pub fn ids(&self) -> impl ExactSizeIterator<Item = ComponentId> + '_ {
        self.columns.iter().map(|c| c.id)
    }

    /// Number of values stored for `id` (the entries whose block carries it).
    pub fn count(&self, id: ComponentId) -> usize {
        self.column(id).map_or(0, |c| c.count)
    }

    fn column(&self, id: ComponentId) -> Option<&Column<'a>> {
        self.columns.binary_search_by_key(&id, |c| c.id).ok().map(|i| &self.columns[i])
    }

    /// The value of component `id` at (cell `index`, `layer`): `None` when the entry does not
    /// exist or its block does not carry the component. O(1) (plus a binary search over the
    /// few components of the chunk).
    pub fn get(&self, index: u16, layer: u32, id: ComponentId) -> Option<&'a [u8]> {
        let col = self.column(id)?;
        let ord = self.ordinal(index, layer)?;
        col.rank(ord).map(|r| col.value(r))
    }

    /// The values of component `id` as `(cell, layer, value)`, in (cell, layer) order.
    pub fn values(&self, id: ComponentId) -> impl Iterator<Item = (u16, u32, &'a [u8])> + '_ {
        let col = self.column(id);
        let carry: &[u64] = col.map_or(&[], |c| &c.carry);
        let mut rank = 0usize;
        carry
            .iter()
            .enumerate()
            .flat_map(move |(w, &word)| {
                let mut bits = word;
                std::iter::from_fn(move || {
                    if bits == 0 {
                        return None;
                    }
                    let t = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    Some(w * 64 + t)
                })
            })
            .filter_map(move |ord| {
                let col = col?;
                let (cell, layer) = self.ordinal_to_entry(ord);
                let v = col.value(rank);
                rank += 1;
                Some((cell, layer, v))
            })
    }
}
