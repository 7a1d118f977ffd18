//! The owned, editable chunk and the canonical encoder.

use std::collections::BTreeMap;

use crate::bits::{BitWriter, bits_for, for_each_packed, get_packed, le_words, set_packed};
use crate::view::{ChunkView, HEADER_LEN, Uuid};
use crate::{BlockId, CELLS, ComponentId, ComponentKind, Error, FORMAT_VERSION, Result, Schema};

/// Palettes up to this length are searched linearly; longer ones through a hash index.
const LINEAR_PALETTE: usize = 16;
/// Palettes up to this length are searched with an early exit; longer ones compare every
/// entry (measured: `cargo xtask bench terrane-chunk -- set_random`, docs/BENCHMARKS.md).
const SHORT_PALETTE: usize = 8;

/// An owned, editable 16³ chunk: layer 0 bit-packed behind a palette that grows as new
/// blocks arrive and drops its unused entries when it fills, extra layers, component values
/// per (cell, layer) entry, and entity UUIDs.
///
/// Equality is semantic: two chunks are equal when they hold the same blocks at every cell
/// and layer, the same component values and the same entities, whatever their palettes.
///
/// Component values are stored only when they differ from the default (all zero bytes for
/// fixed-size components, empty for variable-size ones); an entry whose block carries a
/// component without a stored value encodes the default. Replacing the block of an entry
/// drops that entry's values.
#[derive(Debug, Clone)]
pub struct Chunk {
    /// Local id → global id. Entries no layer-0 cell uses any more stay until the palette
    /// fills (`make_room`) or `compact`: `set_index` keeps no use counts,
    /// which would cost it two read-modify-writes and two branches per call.
    palette: Vec<BlockId>,
    bits: u32,
    /// 4096 `bits`-bit local ids, tight LSB-first (`64 * bits` words).
    words: Vec<u64>,
    /// Global id → local id, built once the palette outgrows [`LINEAR_PALETTE`].
    index: Option<ahash::AHashMap<BlockId, u32>>,
    /// Extra layers (1, 2, ...) of the cells that have any; never an empty list.
    layers: BTreeMap<u16, Vec<BlockId>>,
    layered: usize,
    /// Non-default component values by (cell, layer, component).
    components: BTreeMap<(u16, u32, ComponentId), Vec<u8>>,
    /// Strictly ascending.
    entities: Vec<Uuid>,
    /// The palette is exactly the canonical one (sorted, every entry used at some layer, every
    /// layer block present): layer 0 encodes by copying the words.
    canonical: bool,
}

impl PartialEq for Chunk {
    fn eq(&self, other: &Self) -> bool {
        self.layers == other.layers
            && self.components == other.components
            && self.entities == other.entities
            && (0..CELLS as u16).all(|i| self.get_index(i) == other.get_index(i))
    }
}

impl Eq for Chunk {}

#[inline]
fn check_cell(index: u16) -> usize {
    assert!(usize::from(index) < CELLS, "cell index {index} out of range (0..4096)");
    usize::from(index)
}

fn default_value(id: ComponentId, v: &[u8]) -> bool {
    if id.is_variable() { v.is_empty() } else { v.iter().all(|&b| b == 0) }
}

/// How many of the cells use each index into a palette of `palette_len` entries: the counts
/// a paletted bulk write needs ([`Chunk::set_blocks_paletted`]), for a caller that wants them
/// too (to pick the most common block, to count what is not air). Four running counts, so
/// that a run of one index (a section of stone) is not a chain of increments of one counter
/// through memory.
///
/// ```
/// let mut indices = [0u16; 4096];
/// indices[5] = 2;
/// assert_eq!(terrane_chunk::count_indices(&indices, 3), vec![4095, 0, 1]);
/// ```
///
/// # Panics
/// If an index is `palette_len` or more.
pub fn count_indices(indices: &[u16; CELLS], palette_len: usize) -> Vec<u32> {
    let mut lanes = vec![0u32; 4 * palette_len];
    let (a, rest) = lanes.split_at_mut(palette_len);
    let (b, rest) = rest.split_at_mut(palette_len);
    let (c, d) = rest.split_at_mut(palette_len);
    for q in indices.chunks_exact(4) {
        a[usize::from(q[0])] += 1;
        b[usize::from(q[1])] += 1;
        c[usize::from(q[2])] += 1;
        d[usize::from(q[3])] += 1;
    }
    for i in 0..palette_len {
        a[i] += b[i] + c[i] + d[i];
    }
    lanes.truncate(palette_len);
    lanes
}

impl Chunk {
    /// A chunk whose 4096 cells hold `fill` at layer 0, without extra layers, components or
    /// entities.
    pub fn new(fill: BlockId) -> Self {
        Chunk {
            palette: vec![fill],
            bits: 0,
            words: Vec::new(),
            index: None,
            layers: BTreeMap::new(),
            layered: 0,
            components: BTreeMap::new(),
            entities: Vec::new(),
            canonical: true,
        }
    }

    /// The block at local coordinates (low 4 bits of each), layer 0.
    #[inline]
    pub fn get(&self, x: u32, y: u32, z: u32) -> BlockId {
        self.get_index(terrane_section::cell_index(x, y, z))
    }

    /// The block of cell `index` at layer 0.
    ///
    /// # Panics
    /// When `index >= 4096`.
    #[inline]
    pub fn get_index(&self, index: u16) -> BlockId {
        let i = check_cell(index);
        self.palette[get_packed(&self.words, i, self.bits) as usize]
    }

    /// Sets the block at local coordinates (low 4 bits of each), layer 0; returns the old one.
    #[inline]
    pub fn set(&mut self, x: u32, y: u32, z: u32, block: BlockId) -> BlockId {
        self.set_index(terrane_section::cell_index(x, y, z), block)
    }

    /// Sets the block of cell `index` at layer 0 and returns the old one. Replacing a block
    /// drops the component values of (index, 0).
    ///
    /// # Panics
    /// When `index >= 4096`.
    #[inline]
    pub fn set_index(&mut self, index: u16, block: BlockId) -> BlockId {
        let i = check_cell(index);
        if self.bits == 0 && self.palette[0] == block {
            return block; // a uniform chunk set to its own block: nothing to unpack
        }
        let old_local = get_packed(&self.words, i, self.bits) as usize;
        let Some(&old) = self.palette.get(old_local) else {
            unreachable!("local id {old_local} outside the palette of {}", self.palette.len())
        };
        if old == block {
            return old;
        }
        self.canonical = false;
        let local = self.local_for(block, old_local);
        set_packed(&mut self.words, i, self.bits, local as u64);
        if !self.components.is_empty() {
            self.drop_values(index, 0);
        }
        old
    }

    /// Sets all 4096 layer-0 blocks from `blocks`, in cell index order
    /// (`terrane_section::cell_index`): the bulk write, building the palette and the packing
    /// once instead of cell by cell. As with [`set_index`](Self::set_index), a cell whose
    /// block changes loses its layer-0 component values; extra layers and entities stay.
    ///
    /// ```
    /// # use terrane_chunk::{BlockId, Chunk};
    /// let mut blocks = [BlockId(0); 4096];
    /// blocks[7] = BlockId(3);
    /// let mut chunk = Chunk::new(BlockId(0));
    /// chunk.set_blocks(&blocks);
    /// assert_eq!(chunk.get_index(7), BlockId(3));
    /// ```
    pub fn set_blocks(&mut self, blocks: &[BlockId; CELLS]) {
        if !self.components.is_empty() || self.layered > 0 {
            // Values and extra layers to keep in step: cell by cell.
            for (i, &b) in blocks.iter().enumerate() {
                self.set_index(i as u16, b);
            }
            return;
        }
        let mut palette: Vec<BlockId> = Vec::new();
        let mut counts: Vec<u32> = Vec::new();
        let mut index: ahash::AHashMap<BlockId, u32> = ahash::AHashMap::new();
        let mut locals = vec![0u32; CELLS];
        let mut last: Option<(BlockId, u32)> = None;
        for (slot, &b) in locals.iter_mut().zip(blocks) {
            let l = match last {
                Some((lb, l)) if lb == b => l,
                _ => *index.entry(b).or_insert_with(|| {
                    palette.push(b);
                    counts.push(0);
                    (palette.len() - 1) as u32
                }),
            };
            last = Some((b, l));
            counts[l as usize] += 1;
            *slot = l;
        }
        self.set_canonical(&palette, &counts, locals.iter().copied());
    }

    /// Sets all 4096 layer-0 blocks from a palette and one index into it per cell, in cell
    /// index order: the bulk write for callers that hold their blocks paletted already (a
    /// Minecraft section, a schematic), with no hashing per cell. The palette may hold
    /// duplicates and unused entries. Component values and extra layers are handled as by
    /// [`set_blocks`](Self::set_blocks).
    ///
    /// ```
    /// # use terrane_chunk::{BlockId, Chunk};
    /// let mut indices = [0u16; 4096];
    /// indices[7] = 1;
    /// let mut chunk = Chunk::new(BlockId(0));
    /// let counts = chunk.set_blocks_paletted(&[BlockId(9), BlockId(3)], &indices);
    /// assert_eq!((chunk.get_index(0), chunk.get_index(7)), (BlockId(9), BlockId(3)));
    /// assert_eq!(counts, vec![4095, 1]);
    /// ```
    ///
    /// Returns how many cells hold each entry of `palette` ([`count_indices`]), which the
    /// write needs anyway: a caller that wants them too (an importer's statistics) need not
    /// count the cells again.
    ///
    /// # Panics
    /// If an index is outside the palette (a caller bug: validate outside data first).
    pub fn set_blocks_paletted(&mut self, palette: &[BlockId], indices: &[u16; CELLS]) -> Vec<u32> {
        let counts = count_indices(indices, palette.len());
        if !self.components.is_empty() || self.layered > 0 {
            for (i, &l) in indices.iter().enumerate() {
                self.set_index(i as u16, palette[l as usize]);
            }
            return counts;
        }
        self.set_canonical(palette, &counts, indices.iter().map(|&l| u32::from(l)));
        counts
    }

    /// Replaces layer 0 (no components, no extra layers) with `locals`, indices into
    /// `palette` (used `counts` times each; duplicates and unused entries allowed), straight
    /// into the canonical form: palette sorted, every entry used, packed at `bits_for(len)`,
    /// so that encoding copies the words instead of re-packing them.
    fn set_canonical(
        &mut self,
        palette: &[BlockId],
        counts: &[u32],
        locals: impl Iterator<Item = u32>,
    ) {
        let mut canon: Vec<BlockId> =
            palette.iter().zip(counts).filter(|&(_, &c)| c > 0).map(|(&b, _)| b).collect();
        canon.sort_unstable();
        canon.dedup();
        let remap: Vec<u32> =
            palette.iter().map(|b| canon.binary_search(b).unwrap_or(0) as u32).collect();
        let bits = bits_for(canon.len() as u64);
        // 4096 entries of `bits` bits fill exactly 64 * bits words; packed LSB first across
        // word boundaries, as the byte stream of `BitWriter` read as little-endian words.
        let mut words = Vec::with_capacity(64 * bits as usize);
        if bits > 0 {
            // The word being filled stays in a register (an `|=` into the vector per cell was
            // a load and a store per cell, chained through memory).
            let (mut acc, mut filled) = (0u64, 0u32);
            for l in locals {
                let v = u64::from(remap[l as usize]);
                acc |= v << filled;
                filled += bits;
                if filled >= 64 {
                    words.push(acc);
                    filled -= 64;
                    // The bits of `v` that did not fit (none when it ended the word exactly).
                    acc = if filled > 0 { v >> (bits - filled) } else { 0 };
                }
            }
            debug_assert!(filled == 0 && words.len() == 64 * bits as usize);
        }
        self.palette = canon;
        self.bits = bits;
        self.words = words;
        self.index = None;
        self.canonical = true;
    }

    /// The local id for `block`, adding it to the palette (and making room) if needed;
    /// `leaving` is the local id of the cell about to be overwritten.
    #[inline]
    fn local_for(&mut self, block: BlockId, leaving: usize) -> usize {
        if self.palette.len() <= SHORT_PALETTE {
            if let Some(l) = self.palette.iter().position(|&b| b == block) {
                return l;
            }
        } else if self.palette.len() <= LINEAR_PALETTE {
            // Every entry compared, the matches gathered in a mask: no early exit to
            // mispredict on random input.
            let mut found = 0u32;
            for (l, &b) in self.palette.iter().enumerate() {
                found |= u32::from(b == block) << l;
            }
            if found != 0 {
                return found.trailing_zeros() as usize;
            }
        } else {
            let palette = &self.palette;
            let index = self.index.get_or_insert_with(|| {
                palette.iter().enumerate().map(|(l, &b)| (b, l as u32)).collect()
            });
            if let Some(&l) = index.get(&block) {
                return l as usize;
            }
        }
        self.add_entry(block, leaving)
    }

    /// Appends `block` to the palette (making room first when it is full); its local id.
    #[inline(never)]
    fn add_entry(&mut self, block: BlockId, leaving: usize) -> usize {
        if self.palette.len() >= 1 << self.bits {
            self.make_room(leaving);
        }
        self.palette.push(block);
        let l = self.palette.len() - 1;
        if let Some(ix) = &mut self.index {
            ix.insert(block, l as u32);
        }
        l
    }

    /// Called when the palette is full and a new block arrives: counts the layer-0 uses of
    /// each entry (one pass over the packed cells), drops the unused entries and re-packs at
    /// the width that holds twice the entries in use, so that the next rebuild is at least
    /// that many new blocks away (amortised O(1) per new block, as a palette that only
    /// grows). `leaving`, the entry of the cell being overwritten, counts one use less.
    /// Entries keep their order; the chunk stays non-canonical.
    fn make_room(&mut self, leaving: usize) {
        let mut counts = self.layer0_counts();
        counts[leaving] -= 1;
        // Dropped entries map to 0: none is used, but for the leaving cell, rewritten next.
        let mut remap = vec![0u32; self.palette.len()];
        let mut kept = Vec::with_capacity(self.palette.len());
        for (l, (&b, &c)) in self.palette.iter().zip(&counts).enumerate() {
            if c > 0 {
                remap[l] = kept.len() as u32;
                kept.push(b);
            }
        }
        // At most 4096 entries: a full 4096-entry palette always frees `leaving`'s entry.
        let bits = bits_for(2 * kept.len() as u64).min(12);
        if kept.len() == self.palette.len() {
            self.repack(bits, None);
        } else {
            self.repack(bits, Some(&remap));
            self.palette = kept;
            self.index = None;
        }
    }

    /// How many layer-0 cells use each local id.
    fn layer0_counts(&self) -> Vec<u32> {
        let mut counts = vec![0u32; self.palette.len()];
        for_each_packed(self.words.iter().copied(), self.bits, CELLS, |_, v| {
            counts[v as usize] += 1;
        });
        counts
    }

    /// Re-packs layer 0 at `bits`, mapping local ids through `remap` when given.
    fn repack(&mut self, bits: u32, remap: Option<&[u32]>) {
        let mut bytes = Vec::with_capacity(512 * bits as usize);
        let mut w = BitWriter::new(&mut bytes);
        for_each_packed(self.words.iter().copied(), self.bits, CELLS, |_, v| {
            w.push(remap.map_or(v, |m| u64::from(m[v as usize])), bits);
        });
        w.finish();
        self.words = le_words(&bytes).collect();
        self.bits = bits;
    }

    /// The canonical palette (sorted, used blocks of every layer) and, per current local id,
    /// its canonical local id (`u32::MAX` for free slots).
    fn canonical_palette(&self) -> (Vec<BlockId>, Vec<u32>) {
        let counts = self.layer0_counts();
        let mut canon: Vec<BlockId> =
            self.palette.iter().zip(&counts).filter(|&(_, &c)| c > 0).map(|(&b, _)| b).collect();
        canon.extend(self.layers.values().flatten().copied());
        canon.sort_unstable();
        canon.dedup();
        let remap = self
            .palette
            .iter()
            .zip(&counts)
            .map(|(b, &c)| {
                if c > 0 { canon.binary_search(b).map_or(u32::MAX, |l| l as u32) } else { u32::MAX }
            })
            .collect();
        (canon, remap)
    }

    /// Shrinks the palette to the blocks in use (at any layer), sorted, and re-packs layer 0
    /// at `ceil(log2(len))` bits: the canonical form, which [`Chunk::encode`] then copies.
    /// Edits never shrink the packing on their own: [`Chunk::set_index`] only drops unused
    /// entries when the palette is full and a new block arrives. Call this after edits that
    /// removed most kinds of block to get the narrowest packing back.
    pub fn compact(&mut self) {
        if self.canonical {
            return;
        }
        let (canon, remap) = self.canonical_palette();
        let bits = bits_for(canon.len() as u64);
        self.repack(bits, Some(&remap));
        self.palette = canon;
        self.index = None;
        self.canonical = true;
    }

    /// Every cell's local id at layer 0 (an index into [`Chunk::palette`]), in cell order:
    /// the bulk read of a caller that works per palette entry, not per cell (a translation
    /// between block registries maps the palette once and carries the local ids over).
    ///
    /// ```
    /// use terrane_chunk::{BlockId, Chunk};
    /// let mut c = Chunk::new(BlockId(0));
    /// c.set_index(7, BlockId(3));
    /// let mut locals = [0u16; 4096];
    /// c.read_locals(&mut locals);
    /// assert_eq!(c.palette()[usize::from(locals[7])], BlockId(3));
    /// assert_eq!(c.palette()[usize::from(locals[8])], BlockId(0));
    /// ```
    pub fn read_locals(&self, out: &mut [u16; CELLS]) {
        for_each_packed(self.words.iter().copied(), self.bits, CELLS, |i, v| out[i] = v as u16);
    }

    /// The current local palette (local id → global id). It may hold blocks no longer used
    /// at layer 0 until it fills or the next [`Chunk::compact`]; encoding always writes the
    /// canonical one.
    pub fn palette(&self) -> &[BlockId] {
        &self.palette
    }

    /// Bits per local id of the in-memory packing (`ceil(log2(palette().len()))`).
    pub fn bits_per_block(&self) -> u32 {
        self.bits
    }

    /// The extra layers of cell `index` (layer 1 first); empty for most cells.
    ///
    /// # Panics
    /// When `index >= 4096`.
    pub fn layers(&self, index: u16) -> &[BlockId] {
        check_cell(index);
        self.layers.get(&index).map_or(&[], Vec::as_slice)
    }

    /// Number of layers of cell `index`, including layer 0.
    pub fn layer_count(&self, index: u16) -> u32 {
        1 + self.layers(index).len() as u32
    }

    /// The block of cell `index` at `layer`, if the cell has that layer.
    pub fn get_layer(&self, index: u16, layer: u32) -> Option<BlockId> {
        match layer {
            0 => Some(self.get_index(index)),
            l => self.layers(index).get(l as usize - 1).copied(),
        }
    }

    /// Cells with extra layers, ascending, with their extra layers.
    pub fn layered_cells(&self) -> impl Iterator<Item = (u16, &[BlockId])> + '_ {
        self.layers.iter().map(|(&c, v)| (c, v.as_slice()))
    }

    /// Total number of extra-layer blocks (`layeredBlockCount`).
    pub fn layered_block_count(&self) -> usize {
        self.layered
    }

    /// Adds `block` as a new top layer of cell `index`; returns the new layer's number.
    ///
    /// # Panics
    /// When `index >= 4096`.
    pub fn push_layer(&mut self, index: u16, block: BlockId) -> u32 {
        check_cell(index);
        let v = self.layers.entry(index).or_default();
        v.push(block);
        self.layered += 1;
        self.canonical = false;
        v.len() as u32
    }

    /// Replaces the block at an existing `layer` of cell `index` (0 is layer 0) and returns
    /// the old one; replacing drops the entry's component values.
    ///
    /// # Panics
    /// When `index >= 4096`.
    pub fn set_layer(&mut self, index: u16, layer: u32, block: BlockId) -> Result<BlockId> {
        if layer == 0 {
            return Ok(self.set_index(index, block));
        }
        let layers = self.layer_count(index);
        let slot = self
            .layers
            .get_mut(&index)
            .and_then(|v| v.get_mut(layer as usize - 1))
            .ok_or(Error::NoSuchLayer { cell: index, layer, layers })?;
        let old = std::mem::replace(slot, block);
        if old != block {
            self.canonical = false;
            self.drop_values(index, layer);
        }
        Ok(old)
    }

    /// Removes extra `layer` (>= 1) of cell `index`; higher layers move down by one, with
    /// their component values. Returns the removed block.
    pub fn remove_layer(&mut self, index: u16, layer: u32) -> Result<BlockId> {
        let layers = self.layer_count(index);
        if layer == 0 || layer >= layers {
            return Err(Error::NoSuchLayer { cell: index, layer, layers });
        }
        let v =
            self.layers.get_mut(&index).ok_or(Error::NoSuchLayer { cell: index, layer, layers })?;
        let old = v.remove(layer as usize - 1);
        if v.is_empty() {
            self.layers.remove(&index);
        }
        self.layered -= 1;
        self.canonical = false;
        if !self.components.is_empty() {
            let lo = (index, layer, ComponentId(0));
            let hi = (index, u32::MAX, ComponentId(u64::MAX));
            let moved: Vec<_> = self.components.range(lo..=hi).map(|(k, _)| *k).collect();
            for k in moved {
                if let Some(val) = self.components.remove(&k)
                    && k.1 > layer
                {
                    self.components.insert((k.0, k.1 - 1, k.2), val);
                }
            }
        }
        Ok(old)
    }

    /// Removes every extra layer of cell `index` (and their component values).
    pub fn clear_layers(&mut self, index: u16) {
        check_cell(index);
        if let Some(v) = self.layers.remove(&index) {
            self.layered -= v.len();
            self.canonical = false;
            let lo = (index, 1, ComponentId(0));
            let hi = (index, u32::MAX, ComponentId(u64::MAX));
            let keys: Vec<_> = self.components.range(lo..=hi).map(|(k, _)| *k).collect();
            for k in keys {
                self.components.remove(&k);
            }
        }
    }

    fn drop_values(&mut self, index: u16, layer: u32) {
        let lo = (index, layer, ComponentId(0));
        let hi = (index, layer, ComponentId(u64::MAX));
        let keys: Vec<_> = self.components.range(lo..=hi).map(|(k, _)| *k).collect();
        for k in keys {
            self.components.remove(&k);
        }
    }

    /// The stored value of component `id` at (cell `index`, `layer`). `None` means the
    /// default (zero bytes / empty) when the entry's block carries the component.
    pub fn component(&self, index: u16, layer: u32, id: ComponentId) -> Option<&[u8]> {
        self.components.get(&(index, layer, id)).map(Vec::as_slice)
    }

    /// Every stored (non-default) component value, by (cell, layer, component).
    pub fn component_values(&self) -> impl Iterator<Item = (u16, u32, ComponentId, &[u8])> + '_ {
        self.components.iter().map(|(&(c, l, id), v)| (c, l, id, v.as_slice()))
    }

    /// Sets component `id` at (cell `index`, `layer`). The entry must exist, its block must
    /// carry the component in `schema`, and fixed-size values must have exactly the size.
    /// Setting the default value removes the stored one.
    pub fn set_component(
        &mut self,
        schema: &Schema,
        index: u16,
        layer: u32,
        id: ComponentId,
        value: &[u8],
    ) -> Result<()> {
        let layers = self.layer_count(index);
        let block = self.get_layer(index, layer).ok_or(Error::NoSuchLayer {
            cell: index,
            layer,
            layers,
        })?;
        let bad = |reason: String| Error::BadComponentValue { id, reason };
        let kind = schema.component_kind(id).ok_or(Error::UnknownComponent { id: id.0 })?;
        if schema.block_components(block).binary_search(&id).is_err() {
            return Err(bad(format!(
                "block {} at cell {index} layer {layer} does not carry it",
                block.0
            )));
        }
        if let ComponentKind::Fixed(size) = kind
            && value.len() != size as usize
        {
            return Err(bad(format!("value has {} bytes, the component {size}", value.len())));
        }
        if default_value(id, value) {
            self.components.remove(&(index, layer, id));
        } else {
            self.components.insert((index, layer, id), value.to_vec());
        }
        Ok(())
    }

    /// Removes the value of component `id` at (cell `index`, `layer`), returning it.
    pub fn remove_component(&mut self, index: u16, layer: u32, id: ComponentId) -> Option<Vec<u8>> {
        self.components.remove(&(index, layer, id))
    }

    /// The entity UUIDs, ascending.
    pub fn entities(&self) -> &[Uuid] {
        &self.entities
    }

    /// Adds an entity reference; `false` when it was already there.
    pub fn add_entity(&mut self, uuid: Uuid) -> bool {
        match self.entities.binary_search(&uuid) {
            Ok(_) => false,
            Err(p) => {
                self.entities.insert(p, uuid);
                true
            }
        }
    }

    /// Removes an entity reference; `false` when it was not there.
    pub fn remove_entity(&mut self, uuid: &Uuid) -> bool {
        match self.entities.binary_search(uuid) {
            Ok(p) => {
                self.entities.remove(p);
                true
            }
            Err(_) => false,
        }
    }

    /// Decodes and validates an encoded chunk (see [`ChunkView::parse`] and
    /// [`ChunkView::components`] for the checks). Accepts canonical input only, so
    /// `decode(x).encode() == x` for every accepted `x`.
    pub fn decode(bytes: &[u8], schema: &Schema) -> Result<Chunk> {
        Self::from_view(&ChunkView::parse(bytes)?, schema)
    }

    /// Copies a parsed view into an owned chunk (validating its components against `schema`).
    pub fn from_view(view: &ChunkView<'_>, schema: &Schema) -> Result<Chunk> {
        let comps = view.components(schema)?;
        let palette: Vec<BlockId> = view.palette_iter().collect();
        let bits = view.bits_per_block();
        let l0 = &view.as_bytes()[HEADER_LEN + 8 * palette.len()..][..512 * bits as usize];
        let words: Vec<u64> = le_words(l0).collect();
        let mut layers: BTreeMap<u16, Vec<BlockId>> = BTreeMap::new();
        for r in view.layer_records() {
            layers.entry(r.cell).or_default().push(r.block);
        }
        let mut components = BTreeMap::new();
        for id in comps.ids() {
            for (cell, layer, v) in comps.values(id) {
                if !default_value(id, v) {
                    components.insert((cell, layer, id), v.to_vec());
                }
            }
        }
        Ok(Chunk {
            palette,
            bits,
            words,
            index: None,
            layers,
            layered: view.layered_block_count(),
            components,
            entities: view.entities().to_vec(),
            canonical: true,
        })
    }

    /// Encodes to canonical bytes (format v1; `schema` gives the components each block
    /// carries and their sizes). [`Chunk::decode`] with the same schema gives back an equal
    /// chunk provided every block is registered in it (unregistered ids encode, but decoding
    /// reports [`Error::UnknownBlock`]).
    pub fn encode(&self, schema: &Schema) -> Vec<u8> {
        let mut out = Vec::new();
        self.encode_into(schema, &mut out);
        out
    }

    /// Appends the canonical encoding to `out`.
    ///
    /// Stored component values of components the entry's block does not carry in `schema`
    /// are skipped; fixed-size values are cut or zero-extended to the schema's size.
    pub fn encode_into(&self, schema: &Schema, out: &mut Vec<u8>) {
        let start = out.len();
        let owned;
        let (canon, remap): (&[BlockId], Option<&[u32]>) = if self.canonical {
            (&self.palette, None)
        } else {
            owned = self.canonical_palette();
            // The words copy as they are only when packed at the canonical width too
            // (`make_room` leaves headroom).
            if owned.0 == self.palette && self.bits == bits_for(owned.0.len() as u64) {
                (&owned.0, None)
            } else {
                (&owned.0, Some(&owned.1))
            }
        };
        let bits = bits_for(canon.len() as u64);
        out.reserve(HEADER_LEN + 8 * canon.len() + 512 * bits as usize + 16);
        out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        out.extend_from_slice(&[0u8; 16]); // offsets, patched below
        out.extend_from_slice(&(self.layered as u64).to_le_bytes());
        out.extend_from_slice(&(canon.len() as u64).to_le_bytes());
        for b in canon {
            out.extend_from_slice(&u64::from(b.0).to_le_bytes());
        }
        match remap {
            None => {
                for w in &self.words {
                    out.extend_from_slice(&w.to_le_bytes());
                }
            }
            Some(m) if bits > 0 => {
                let mut w = BitWriter::new(out);
                for_each_packed(self.words.iter().copied(), self.bits, CELLS, |_, l| {
                    w.push(u64::from(m[l as usize]), bits);
                });
                w.finish();
            }
            Some(_) => {}
        }
        if self.layered > 0 {
            let mut w = BitWriter::new(out);
            for (&cell, blocks) in &self.layers {
                for b in blocks {
                    let l = canon.binary_search(b).unwrap_or(0) as u64;
                    w.push(u64::from(cell) | (l << 12), 12 + bits);
                }
            }
            w.finish();
        }
        let pad = (out.len() - start).next_multiple_of(8) - (out.len() - start);
        out.extend(std::iter::repeat_n(0u8, pad));
        let component_offset = (out.len() - start) as u64;
        self.encode_components(schema, canon, out);
        let entity_offset = (out.len() - start) as u64;
        out.extend_from_slice(&(self.entities.len() as u64).to_le_bytes());
        for e in &self.entities {
            out.extend_from_slice(e);
        }
        out[start + 8..start + 16].copy_from_slice(&component_offset.to_le_bytes());
        out[start + 16..start + 24].copy_from_slice(&entity_offset.to_le_bytes());
    }

    fn encode_components(&self, schema: &Schema, canon: &[BlockId], out: &mut Vec<u8>) {
        let mut ids: Vec<ComponentId> =
            canon.iter().flat_map(|&b| schema.block_components(b).iter().copied()).collect();
        if ids.is_empty() {
            return;
        }
        ids.sort_unstable();
        ids.dedup();
        // Every (cell, layer) entry with its block, in (cell, layer) order.
        let mut entries: Vec<(u16, u32, BlockId)> = Vec::with_capacity(CELLS + self.layered);
        let mut layers = self.layers.iter().peekable();
        for i in 0..CELLS as u16 {
            entries.push((i, 0, self.get_index(i)));
            if let Some((_, v)) = layers.next_if(|(c, _)| **c == i) {
                for (k, &b) in v.iter().enumerate() {
                    entries.push((i, k as u32 + 1, b));
                }
            }
        }
        let mut values: Vec<&[u8]> = Vec::new();
        for id in ids {
            let kind = schema.component_kind(id).unwrap_or(ComponentKind::Variable);
            values.clear();
            for &(cell, layer, b) in &entries {
                if schema.block_components(b).binary_search(&id).is_ok() {
                    values.push(self.component(cell, layer, id).unwrap_or(&[]));
                }
            }
            out.extend_from_slice(&id.0.to_le_bytes());
            match kind {
                ComponentKind::Fixed(size) => {
                    let size = size as usize;
                    for v in &values {
                        let n = v.len().min(size);
                        out.extend_from_slice(&v[..n]);
                        out.extend(std::iter::repeat_n(0u8, size - n));
                    }
                }
                ComponentKind::Variable => {
                    let total: u64 = values.iter().map(|v| v.len() as u64).sum();
                    let width: usize = match total {
                        0..=0xff => 1,
                        0x100..=0xffff => 2,
                        0x1_0000..=0xffff_ffff => 4,
                        _ => 8,
                    };
                    out.push(width as u8);
                    let mut acc = 0u64;
                    out.extend_from_slice(&acc.to_le_bytes()[..width]);
                    for v in &values {
                        acc += v.len() as u64;
                        out.extend_from_slice(&acc.to_le_bytes()[..width]);
                    }
                    for v in &values {
                        out.extend_from_slice(v);
                    }
                }
            }
        }
    }
}
