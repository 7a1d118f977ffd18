//! In-memory snapshots: per-chunk sub-regions holding a small palette and bit-packed indices.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use terrane_chunk::block_state;
use terrane_section::{BlockPos, ChunkPos};

use crate::Error;
use crate::schematic::Schematic;
use crate::world::{ChunkAccess, ChunkRead, ChunkWrite};

type Fast<K, V> = HashMap<K, V, BuildHasherDefault<ahash::AHasher>>;

/// An axis-aligned box of blocks, both corners inclusive.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct BlockBox {
    min: BlockPos,
    max: BlockPos,
}

impl BlockBox {
    /// The box spanned by two corners (in any order), both inclusive.
    pub fn new(a: BlockPos, b: BlockPos) -> Self {
        Self {
            min: BlockPos::new(a.x.min(b.x), a.y.min(b.y), a.z.min(b.z)),
            max: BlockPos::new(a.x.max(b.x), a.y.max(b.y), a.z.max(b.z)),
        }
    }

    /// The box at `min` of `size` (x, y, z) blocks; `None` if a size is 0 or overflows.
    pub fn from_size(min: BlockPos, size: [u64; 3]) -> Option<Self> {
        let f = |m: i64, s: u64| m.checked_add(i64::try_from(s.checked_sub(1)?).ok()?);
        Some(Self {
            min,
            max: BlockPos::new(f(min.x, size[0])?, f(min.y, size[1])?, f(min.z, size[2])?),
        })
    }

    /// The minimum corner.
    pub fn min(&self) -> BlockPos {
        self.min
    }

    /// The maximum corner (inclusive).
    pub fn max(&self) -> BlockPos {
        self.max
    }

    /// Extent along x, y and z.
    pub fn size(&self) -> [u64; 3] {
        [
            self.max.x.abs_diff(self.min.x) + 1,
            self.max.y.abs_diff(self.min.y) + 1,
            self.max.z.abs_diff(self.min.z) + 1,
        ]
    }

    /// Number of blocks (saturating).
    pub fn volume(&self) -> u128 {
        let [x, y, z] = self.size();
        x as u128 * y as u128 * z as u128
    }

    /// Whether `p` lies inside.
    pub fn contains(&self, p: BlockPos) -> bool {
        (self.min.x..=self.max.x).contains(&p.x)
            && (self.min.y..=self.max.y).contains(&p.y)
            && (self.min.z..=self.max.z).contains(&p.z)
    }

    /// The box split into per-chunk sub-regions clamped to the box, chunk x then z outer and
    /// y inner (a column's chunks are consecutive).
    pub fn sub_regions(&self) -> impl Iterator<Item = SubRegion> + '_ {
        let (c0, c1) = (self.min.chunk(), self.max.chunk());
        (c0.x..=c1.x).flat_map(move |cx| {
            (c0.z..=c1.z).flat_map(move |cz| {
                (c0.y..=c1.y).map(move |cy| {
                    let c = ChunkPos::new(cx, cy, cz);
                    let lo = |cc: i64, m: i64| if cc == m >> 4 { (m & 15) as u8 } else { 0 };
                    let hi = |cc: i64, m: i64| if cc == m >> 4 { (m & 15) as u8 } else { 15 };
                    let min = [lo(cx, self.min.x), lo(cy, self.min.y), lo(cz, self.min.z)];
                    let max = [hi(cx, self.max.x), hi(cy, self.max.y), hi(cz, self.max.z)];
                    SubRegion {
                        chunk: c,
                        min,
                        size: [max[0] - min[0] + 1, max[1] - min[1] + 1, max[2] - min[2] + 1],
                    }
                })
            })
        })
    }
}

/// The part of a box inside one 16³ chunk. Blocks are visited in Sponge order: x fastest,
/// then z, then y; block number `c` sits at local `min + (c % sx, c / (sx*sz), (c / sx) % sz)`.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct SubRegion {
    /// The chunk.
    pub chunk: ChunkPos,
    /// Local minimum corner inside the chunk (x, y, z), each `0..16`.
    pub min: [u8; 3],
    /// Extent (x, y, z), each `1..=16`.
    pub size: [u8; 3],
}

impl SubRegion {
    /// Number of blocks.
    pub fn volume(&self) -> u32 {
        self.size[0] as u32 * self.size[1] as u32 * self.size[2] as u32
    }

    /// Local chunk coordinates of block number `c` (from the block counter, never a byte
    /// offset).
    #[inline]
    pub fn local(&self, c: u32) -> (u32, u32, u32) {
        let (sx, sz) = (self.size[0] as u32, self.size[2] as u32);
        (
            self.min[0] as u32 + c % sx,
            self.min[1] as u32 + c / (sx * sz),
            self.min[2] as u32 + (c / sx) % sz,
        )
    }

    /// The world position of block number `c`.
    pub fn pos(&self, c: u32) -> BlockPos {
        let (x, y, z) = self.local(c);
        BlockPos::new(
            self.chunk.x * 16 + x as i64,
            self.chunk.y * 16 + y as i64,
            self.chunk.z * 16 + z as i64,
        )
    }
}

/// Walks the blocks of a sub-region in order from a block counter, keeping local coordinates
/// incrementally.
#[derive(Clone, Copy)]
struct Walk {
    x: u32,
    y: u32,
    z: u32,
    x0: u32,
    z0: u32,
    x1: u32,
    z1: u32,
}

impl Walk {
    #[inline]
    fn at(r: &SubRegion, c: u32) -> Self {
        let (x, y, z) = r.local(c);
        Self {
            x,
            y,
            z,
            x0: r.min[0] as u32,
            z0: r.min[2] as u32,
            x1: r.min[0] as u32 + r.size[0] as u32,
            z1: r.min[2] as u32 + r.size[2] as u32,
        }
    }

    #[inline]
    fn advance(&mut self) {
        self.x += 1;
        if self.x == self.x1 {
            self.x = self.x0;
            self.z += 1;
            if self.z == self.z1 {
                self.z = self.z0;
                self.y += 1;
            }
        }
    }
}

/// One sub-region's blocks: a palette of snapshot-wide state ids and bit-packed indices
/// (`bits` per block, values never straddle a `u64`; `bits == 0` for a single state).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Packed {
    region: SubRegion,
    palette: Box<[u32]>,
    bits: u8,
    words: Box<[u64]>,
}

impl Packed {
    fn pack(region: SubRegion, palette: Vec<u32>, local: &[u32]) -> Self {
        let bits =
            if palette.len() <= 1 { 0 } else { 32 - (palette.len() as u32 - 1).leading_zeros() }
                as u8;
        let words = if bits == 0 {
            Box::default()
        } else {
            let per = 64 / bits as usize;
            let mut w = vec![0u64; local.len().div_ceil(per)];
            for (i, chunk) in local.chunks(per).enumerate() {
                let mut v = 0u64;
                for (j, &id) in chunk.iter().enumerate() {
                    v |= (id as u64) << (j * bits as usize);
                }
                w[i] = v;
            }
            w.into_boxed_slice()
        };
        Self { region, palette: palette.into_boxed_slice(), bits, words }
    }

    /// The local palette index of block number `c`.
    #[inline]
    fn index(&self, c: u32) -> u32 {
        if self.bits == 0 {
            return 0;
        }
        let per = 64 / self.bits as u32;
        let w = self.words[(c / per) as usize];
        ((w >> ((c % per) * self.bits as u32)) & ((1u64 << self.bits) - 1)) as u32
    }

    fn heap_bytes(&self) -> usize {
        self.palette.len() * 4 + self.words.len() * 8
    }
}

/// A captured box: block states by name (the snapshot-wide palette) and one packed
/// sub-region per chunk the box touches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    bbox: BlockBox,
    states: Vec<String>,
    regions: Vec<Packed>,
}

/// Maps world blocks to snapshot state ids while capturing (names asked once per block).
struct Interner<'w, W: ChunkAccess> {
    world: &'w W,
    ids: Fast<W::Block, u32>,
    states: Vec<String>,
}

impl<W: ChunkAccess> Interner<'_, W> {
    #[inline]
    fn id(&mut self, b: W::Block) -> u32 {
        if let Some(&g) = self.ids.get(&b) {
            return g;
        }
        let g = self.states.len() as u32;
        self.states.push(self.world.state_name(b).into_owned());
        self.ids.insert(b, g);
        g
    }
}

/// Builds a sub-region's palette from snapshot-wide ids, block by block.
struct RegionBuilder {
    /// Local index per snapshot id, valid when `stamp[g] == gen`.
    local_of: Vec<u32>,
    stamp: Vec<u32>,
    generation: u32,
    palette: Vec<u32>,
    local: Vec<u32>,
}

impl RegionBuilder {
    fn new() -> Self {
        Self {
            local_of: Vec::new(),
            stamp: Vec::new(),
            generation: 0,
            palette: Vec::new(),
            local: Vec::with_capacity(4096),
        }
    }

    fn start(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.stamp.iter_mut().for_each(|s| *s = u32::MAX);
            self.generation = 1;
        }
        self.palette.clear();
        self.local.clear();
    }

    #[inline]
    fn push(&mut self, g: u32) {
        let gi = g as usize;
        if gi >= self.stamp.len() {
            self.stamp.resize(gi + 1, u32::MAX);
            self.local_of.resize(gi + 1, 0);
        }
        let l = if self.stamp[gi] == self.generation {
            self.local_of[gi]
        } else {
            self.stamp[gi] = self.generation;
            let l = self.palette.len() as u32;
            self.local_of[gi] = l;
            self.palette.push(g);
            l
        };
        self.local.push(l);
    }

    fn finish(&mut self, region: SubRegion) -> Packed {
        Packed::pack(region, std::mem::take(&mut self.palette), &self.local)
    }
}

/// Blocks copied out of a world by [`Snapshot::copy`], not yet encoded.
#[derive(Clone, Debug)]
pub struct CapturedBlocks<B> {
    bbox: BlockBox,
    regions: Vec<(SubRegion, Vec<B>)>,
}

impl<B: Copy + Eq + std::hash::Hash> CapturedBlocks<B> {
    /// The captured box.
    pub fn bbox(&self) -> BlockBox {
        self.bbox
    }

    /// Encodes into a [`Snapshot`]; `name_of` gives a block's state name and is called once
    /// per distinct block.
    pub fn encode(self, mut name_of: impl FnMut(B) -> String) -> Snapshot {
        let mut ids: Fast<B, u32> = Fast::default();
        let mut states = Vec::new();
        let mut rb = RegionBuilder::new();
        let mut out = Vec::with_capacity(self.regions.len());
        for (r, blocks) in self.regions {
            rb.start();
            let mut last: Option<(B, u32)> = None;
            for b in blocks {
                let g = match last {
                    Some((lb, lg)) if lb == b => lg,
                    _ => {
                        let g = *ids.entry(b).or_insert_with(|| {
                            states.push(name_of(b));
                            states.len() as u32 - 1
                        });
                        last = Some((b, g));
                        g
                    }
                };
                rb.push(g);
            }
            out.push(rb.finish(r));
        }
        Snapshot { bbox: self.bbox, states, regions: out }
    }
}

/// Counts from a restore.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RestoreStats {
    /// Blocks visited.
    pub visited: u64,
    /// Blocks written (all visited ones, or only the differing ones in a diff restore).
    pub written: u64,
    /// Sub-regions completed.
    pub regions: u64,
}

impl Snapshot {
    /// Captures `bbox` from `world`, one chunk at a time. Every chunk the box touches must be
    /// available ([`Error::ChunkUnavailable`] otherwise).
    pub fn capture<W: ChunkAccess>(world: &W, bbox: BlockBox) -> Result<Self, Error> {
        let mut int = Interner { world, ids: Fast::default(), states: Vec::new() };
        let mut rb = RegionBuilder::new();
        let mut regions = Vec::new();
        for r in bbox.sub_regions() {
            let chunk = world.chunk(r.chunk).ok_or(Error::ChunkUnavailable(r.chunk))?;
            rb.start();
            let mut last: Option<(W::Block, u32)> = None;
            let mut w = Walk::at(&r, 0);
            for _ in 0..r.volume() {
                let b = chunk.get(w.x, w.y, w.z);
                let g = match last {
                    Some((lb, lg)) if lb == b => lg,
                    _ => {
                        let g = int.id(b);
                        last = Some((b, g));
                        g
                    }
                };
                rb.push(g);
                w.advance();
            }
            regions.push(rb.finish(r));
        }
        Ok(Self { bbox, states: int.states, regions })
    }

    /// The hot half of a two-phase capture: copies the box's blocks out of `world` (one
    /// plain array per sub-region, no hashing, no packing) so that the world can move on;
    /// [`CapturedBlocks::encode`] then builds the snapshot, on any thread.
    pub fn copy<W: ChunkAccess>(
        world: &W,
        bbox: BlockBox,
    ) -> Result<CapturedBlocks<W::Block>, Error> {
        let mut regions = Vec::new();
        for r in bbox.sub_regions() {
            let chunk = world.chunk(r.chunk).ok_or(Error::ChunkUnavailable(r.chunk))?;
            let mut blocks = Vec::with_capacity(r.volume() as usize);
            let mut w = Walk::at(&r, 0);
            for _ in 0..r.volume() {
                blocks.push(chunk.get(w.x, w.y, w.z));
                w.advance();
            }
            regions.push((r, blocks));
        }
        Ok(CapturedBlocks { bbox, regions })
    }

    /// A snapshot of a schematic placed with its minimum corner at `min`. Its states are the
    /// schematic's in their canonical form ([`block_state::canonical`]); palette entries that
    /// spell one state become one.
    pub fn from_schematic(s: &Schematic, min: BlockPos) -> Result<Self, Error> {
        let bbox =
            BlockBox::from_size(min, [s.width() as u64, s.height() as u64, s.length() as u64])
                .ok_or_else(|| {
                    Error::Invalid("schematic placed outside the coordinate range".into())
                })?;
        let mut states: Vec<String> = Vec::new();
        let mut index: HashMap<String, u32> = HashMap::new();
        let remap: Vec<u32> = s
            .palette()
            .iter()
            .map(|p| {
                let c = block_state::canonical(p);
                *index.entry(c).or_insert_with_key(|c| {
                    states.push(c.clone());
                    states.len() as u32 - 1
                })
            })
            .collect();
        let mut rb = RegionBuilder::new();
        let mut regions = Vec::new();
        let ids = s.ids();
        for r in bbox.sub_regions() {
            rb.start();
            for c in 0..r.volume() {
                let p = r.pos(c);
                let (x, y, z) = ((p.x - min.x) as u32, (p.y - min.y) as u32, (p.z - min.z) as u32);
                let i = s.index(x, y, z).expect("sub-regions lie inside the box");
                let id = ids.get(i).expect("sub-regions lie inside the box");
                rb.push(*remap.get(id as usize).ok_or(Error::IdOutOfPalette {
                    field: "blocks",
                    index: i as u64,
                    id,
                    len: remap.len(),
                })?);
            }
            regions.push(rb.finish(r));
        }
        Ok(Self { bbox, states, regions })
    }

    /// This snapshot as a schematic (v3, `Offset` 0 and `Metadata.WorldEdit.Origin` at the
    /// box's minimum corner when it fits `i32`: pasting with `-o` puts it back in place).
    pub fn to_schematic(&self, data_version: i32) -> Result<Schematic, Error> {
        let [sx, sy, sz] = self.bbox.size();
        let dim = |v: u64| {
            u16::try_from(v).map_err(|_| Error::Invalid(format!("box extent {v} exceeds 65535")))
        };
        let (w, h, l) = (dim(sx)?, dim(sy)?, dim(sz)?);
        if sx * sy * sz > i32::MAX as u64 {
            return Err(Error::Dimensions { width: sx, height: sy, length: sz });
        }
        let mut ids = vec![0u32; (sx * sy * sz) as usize];
        let min = self.bbox.min;
        for p in &self.regions {
            for c in 0..p.region.volume() {
                let b = p.region.pos(c);
                let (x, y, z) =
                    ((b.x - min.x) as usize, (b.y - min.y) as usize, (b.z - min.z) as usize);
                ids[x + z * sx as usize + y * (sx * sz) as usize] = p.palette[p.index(c) as usize];
            }
        }
        let mut s = Schematic::from_parts(w, h, l, self.states.clone(), ids)?;
        s.data_version = Some(data_version);
        let o = [min.x, min.y, min.z].map(|v| i32::try_from(v).unwrap_or(0));
        s.set_placement(o, o);
        Ok(s)
    }

    /// The captured box.
    pub fn bbox(&self) -> BlockBox {
        self.bbox
    }

    /// The snapshot-wide palette: every distinct state name.
    pub fn states(&self) -> &[String] {
        &self.states
    }

    /// Number of sub-regions (chunks touched).
    pub fn region_count(&self) -> usize {
        self.regions.len()
    }

    /// The `i`-th sub-region.
    pub fn region(&self, i: usize) -> Option<SubRegion> {
        self.regions.get(i).map(|p| p.region)
    }

    /// The state name at `pos`, or `None` outside the box.
    pub fn block(&self, pos: BlockPos) -> Option<&str> {
        if !self.bbox.contains(pos) {
            return None;
        }
        // Sub-regions are ordered chunk x, z, y.
        let (c0, c1) = (self.bbox.min.chunk(), self.bbox.max.chunk());
        let c = pos.chunk();
        let (ny, nz) = ((c1.y - c0.y + 1) as usize, (c1.z - c0.z + 1) as usize);
        let i = ((c.x - c0.x) as usize * nz + (c.z - c0.z) as usize) * ny + (c.y - c0.y) as usize;
        let p = &self.regions[i];
        let (x, y, z) = pos.local();
        let r = &p.region;
        let (lx, ly, lz) = (x - r.min[0] as u32, y - r.min[1] as u32, z - r.min[2] as u32);
        let c = lx + lz * r.size[0] as u32 + ly * (r.size[0] as u32 * r.size[2] as u32);
        Some(&self.states[p.palette[p.index(c) as usize] as usize])
    }

    /// Bytes of heap held by the block data (palettes and packed words, plus the per-region
    /// headers and the state names).
    pub fn heap_bytes(&self) -> usize {
        self.regions.iter().map(Packed::heap_bytes).sum::<usize>()
            + self.regions.len() * std::mem::size_of::<Packed>()
            + self.states.iter().map(|s| s.len() + std::mem::size_of::<String>()).sum::<usize>()
    }

    /// Restores the whole snapshot into `world` now (no budget). With `diff`, only blocks that
    /// differ are written.
    pub fn restore<W: ChunkAccess>(
        &self,
        world: &mut W,
        diff: bool,
    ) -> Result<RestoreStats, Error> {
        let mut cur = RestoreCursor::new(diff);
        cur.run(self, world, u64::MAX, &mut || false)?;
        Ok(cur.stats)
    }
}

/// A resumable position inside a restore: the sub-region and the block counter within it,
/// plus the snapshot-state → target-block cache (each state resolved once per restore).
///
/// A cursor belongs to one snapshot and one target world: use it with the same pair until it
/// is [`done`](Self::done).
#[derive(Clone, Debug)]
pub struct RestoreCursor<B> {
    pub(crate) region: usize,
    block: u32,
    /// Only write blocks that differ.
    pub diff: bool,
    /// Counts so far.
    pub stats: RestoreStats,
    resolved: Vec<Option<B>>,
    /// Target blocks for the current region's palette (built once per region entry).
    targets: Vec<B>,
    targets_for: Option<usize>,
}

impl<B: Copy + Eq> RestoreCursor<B> {
    /// A cursor at the start.
    pub fn new(diff: bool) -> Self {
        Self {
            region: 0,
            block: 0,
            diff,
            stats: RestoreStats::default(),
            resolved: Vec::new(),
            targets: Vec::new(),
            targets_for: None,
        }
    }

    /// Index of the current sub-region.
    pub fn region(&self) -> usize {
        self.region
    }

    /// Block counter inside the current sub-region (blocks already restored there).
    pub fn block(&self) -> u32 {
        self.block
    }

    /// `true` once every sub-region is restored.
    pub fn done(&self, s: &Snapshot) -> bool {
        self.region >= s.regions.len()
    }

    /// Restores the current sub-region from the current block on, visiting at most `max`
    /// blocks (never crossing into the next sub-region). Returns blocks visited.
    fn region_slice<W: ChunkAccess<Block = B>>(
        &mut self,
        s: &Snapshot,
        world: &mut W,
        max: u32,
    ) -> Result<u32, Error> {
        let p = &s.regions[self.region];
        if self.targets_for != Some(self.region) {
            if self.resolved.len() < s.states.len() {
                self.resolved.resize(s.states.len(), None);
            }
            self.targets.clear();
            for &g in p.palette.iter() {
                let b = match self.resolved[g as usize] {
                    Some(b) => b,
                    None => {
                        let name = &s.states[g as usize];
                        let b = world
                            .resolve_state(name)
                            .ok_or_else(|| Error::UnknownState(name.clone()))?;
                        self.resolved[g as usize] = Some(b);
                        b
                    }
                };
                self.targets.push(b);
            }
            self.targets_for = Some(self.region);
        }
        let r = p.region;
        let end = (self.block as u64 + max as u64).min(r.volume() as u64) as u32;
        let mut chunk = world.chunk_mut(r.chunk).ok_or(Error::ChunkUnavailable(r.chunk))?;
        let mut w = Walk::at(&r, self.block);
        let mut written = 0u64;
        let targets = &self.targets;
        if p.bits == 0 {
            let b = targets[0];
            for _ in self.block..end {
                if !self.diff || chunk.get(w.x, w.y, w.z) != b {
                    chunk.set(w.x, w.y, w.z, b);
                    written += 1;
                }
                w.advance();
            }
        } else {
            let bits = p.bits as u32;
            let per = 64 / bits;
            let mask = (1u64 << bits) - 1;
            let mut wi = (self.block / per) as usize;
            let mut slot = self.block % per;
            let mut word = p.words[wi] >> (slot * bits);
            for _ in self.block..end {
                let b = targets[(word & mask) as usize];
                if !self.diff || chunk.get(w.x, w.y, w.z) != b {
                    chunk.set(w.x, w.y, w.z, b);
                    written += 1;
                }
                w.advance();
                slot += 1;
                if slot == per {
                    slot = 0;
                    wi += 1;
                    word = p.words.get(wi).copied().unwrap_or(0);
                } else {
                    word >>= bits;
                }
            }
        }
        let n = end - self.block;
        self.stats.visited += n as u64;
        self.stats.written += written;
        self.block = end;
        if end == r.volume() {
            self.region += 1;
            self.block = 0;
            self.stats.regions += 1;
        }
        Ok(n)
    }

    /// Runs until done, until `limit` blocks were visited, or until `stop()` says so; `stop`
    /// is asked before every slice of blocks (a slice ends at a region end or after
    /// `slice` blocks). Used by [`Snapshot::restore`] and the restore queue.
    pub(crate) fn run<W: ChunkAccess<Block = B>>(
        &mut self,
        s: &Snapshot,
        world: &mut W,
        limit: u64,
        stop: &mut dyn FnMut() -> bool,
    ) -> Result<(), Error> {
        let mut left = limit;
        while !self.done(s) && left > 0 && !stop() {
            let n = self.region_slice(s, world, left.min(u32::MAX as u64) as u32)?;
            left -= n as u64;
        }
        Ok(())
    }

    /// Restores at most `max` blocks of the current sub-region (never crossing into the
    /// next); returns how many were visited.
    pub fn step<W: ChunkAccess<Block = B>>(
        &mut self,
        s: &Snapshot,
        world: &mut W,
        max: u32,
    ) -> Result<u32, Error> {
        if self.done(s) || max == 0 {
            return Ok(0);
        }
        self.region_slice(s, world, max)
    }

    /// Total blocks in the snapshot.
    pub fn total(s: &Snapshot) -> u64 {
        s.regions.iter().map(|p| p.region.volume() as u64).sum()
    }
}
