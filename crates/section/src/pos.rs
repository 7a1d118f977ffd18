//! Positions, sections, distances and neighbourhoods.

use std::fmt::Debug;
use std::hash::Hash;

/// Cells along one edge of a chunk.
const CHUNK_EDGE: u32 = 16;

/// The cell index of local coordinates `(x, y, z)` (each `0..16`) inside a 16³ chunk:
/// `(x << 8) | (y << 4) | z`, z fastest, as in the chunk format (docs/format/chunk-v1.md).
///
/// Only the low four bits of each coordinate are used.
#[inline]
pub const fn cell_index(x: u32, y: u32, z: u32) -> u16 {
    (((x & 15) << 8) | ((y & 15) << 4) | (z & 15)) as u16
}

/// The local coordinates `(x, y, z)` of a cell index (the inverse of [`cell_index`]; only the
/// low 12 bits of `i` are used).
#[inline]
pub const fn cell_coords(i: u16) -> (u32, u32, u32) {
    let i = i as u32;
    ((i >> 8) & 15, (i >> 4) & 15, i & 15)
}

/// A position on an integer grid of 2 or 3 dimensions: what the regionizer and the distance
/// graph are generic over. Chunk positions and section positions share one type: a section
/// position is a chunk position shifted right.
///
/// Ordering is lexicographic over the coordinates in declaration order ((x, z) for
/// [`ColumnPos`], (x, y, z) for [`ChunkPos`]).
pub trait GridPos: Copy + Eq + Ord + Hash + Debug + Send + Sync + 'static {
    /// Number of coordinates: 2 or 3.
    const DIMS: usize;
    /// The coordinates as an array (`[i64; 2]` or `[i64; 3]`).
    type Coords: AsRef<[i64]> + Copy + Debug;

    /// The coordinates, widened to `i64`, in declaration order.
    fn coords(self) -> Self::Coords;
    /// Builds a position from `DIMS` coordinates; `None` if the count is wrong or a value does
    /// not fit the coordinate type.
    fn from_coords(c: &[i64]) -> Option<Self>;

    /// The section holding this position at `shift` (arithmetic shift right: floor division by
    /// `2^shift`, so `-1 >> 4 == -1`). `shift` is clamped to the coordinate width.
    fn section(self, shift: u32) -> Self;

    /// The smallest position inside section `self` at `shift`, or `None` if it does not fit.
    fn section_min(self, shift: u32) -> Option<Self>;

    /// Index of this position inside its section at `shift`, z fastest: for 2D
    /// `(x mod n) * n + (z mod n)`, for 3D `((x mod n) * n + (y mod n)) * n + (z mod n)` with
    /// `n = 2^shift`. Shifts above 10 (2D) or 7 (3D) make indices that overflow `usize` on
    /// 32-bit targets; callers use small shifts.
    fn local_index(self, shift: u32) -> usize;

    /// Chebyshev distance (max over coordinates of the absolute difference). Never overflows.
    fn chebyshev(self, other: Self) -> u64;

    /// Squared Euclidean distance. Exact for every pair of [`ColumnPos`]; for [`ChunkPos`],
    /// exact whenever the result fits in `u128` and saturating otherwise.
    fn dist2(self, other: Self) -> u128;

    /// Squared Euclidean distance from `self` to the closed box `[min, max]` (0 inside).
    /// `min` must be `<=` `max` in every coordinate.
    fn dist2_to_box(self, min: Self, max: Self) -> u128;

    /// Every position within Chebyshev distance `radius` of `self` (itself included), in
    /// ascending order; positions outside the coordinate range are skipped.
    fn within(self, radius: u32) -> impl Iterator<Item = Self>;

    /// [`within`](Self::within) as runs that are contiguous in `Ord` order, each
    /// `(first, last)` inclusive: one range search per run in a sorted collection instead of
    /// one lookup per position. Default: one run per position.
    fn within_runs(self, radius: u32) -> impl Iterator<Item = (Self, Self)> {
        self.within(radius).map(|p| (p, p))
    }
}

#[inline]
fn abs_diff(a: i64, b: i64) -> u64 {
    a.abs_diff(b)
}

#[inline]
fn sq(d: u64) -> u128 {
    let d = d as u128;
    d * d
}

/// Distance along one axis from `v` to the interval `[lo, hi]`.
#[inline]
fn axis_gap(v: i64, lo: i64, hi: i64) -> u64 {
    if v < lo {
        lo.abs_diff(v)
    } else if v > hi {
        v.abs_diff(hi)
    } else {
        0
    }
}

#[inline]
fn shr_i64(v: i64, shift: u32) -> i64 {
    v >> shift.min(63)
}

/// Inclusive range `[v - r, v + r]` clamped to `[lo, hi]`.
#[inline]
fn clamp_range(v: i64, r: u32, lo: i64, hi: i64) -> (i64, i64) {
    (v.saturating_sub(r as i64).max(lo), v.saturating_add(r as i64).min(hi))
}

/// The points of an inclusive box `lo..=hi` in ascending lexicographic order, the last axis
/// fastest: one flat loop where nested `flat_map`s keep a state machine per level. As fast as
/// those in a release build, and cheaper in the fuzzers' instrumented builds, which spent a
/// third of their time stepping them (docs/RELIABILITY.md, Fuzzing).
struct Odometer<const N: usize> {
    lo: [i64; N],
    hi: [i64; N],
    /// The next point, or `None` once every point was yielded.
    next: Option<[i64; N]>,
}

impl<const N: usize> Odometer<N> {
    /// Every point of `lo..=hi` (none when `lo > hi` on some axis).
    #[inline]
    fn new(lo: [i64; N], hi: [i64; N]) -> Self {
        let empty = lo.iter().zip(&hi).any(|(l, h)| l > h);
        Self { lo, hi, next: (!empty).then_some(lo) }
    }
}

impl<const N: usize> Iterator for Odometer<N> {
    type Item = [i64; N];

    #[inline]
    fn next(&mut self) -> Option<[i64; N]> {
        let out = self.next?;
        let mut cur = out;
        // Advance the last axis; on overflow reset it and carry into the one before.
        let mut axis = N;
        self.next = loop {
            if axis == 0 {
                break None;
            }
            axis -= 1;
            if cur[axis] < self.hi[axis] {
                cur[axis] += 1;
                break Some(cur);
            }
            cur[axis] = self.lo[axis];
        };
        Some(out)
    }
}

/// A 2D chunk column position (Minecraft Java's `ChunkPos`): `i32` x and z.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct ColumnPos {
    /// Column x (block x >> 4).
    pub x: i32,
    /// Column z (block z >> 4).
    pub z: i32,
}

impl ColumnPos {
    /// A column at `(x, z)`.
    #[inline]
    pub const fn new(x: i32, z: i32) -> Self {
        Self { x, z }
    }

    /// Packs into a `u64`: x in the low 32 bits, z in the high 32 bits (Minecraft's
    /// `ChunkPos.toLong` layout).
    #[inline]
    pub const fn to_u64(self) -> u64 {
        (self.x as u32 as u64) | ((self.z as u32 as u64) << 32)
    }

    /// Unpacks [`to_u64`](Self::to_u64).
    #[inline]
    pub const fn from_u64(v: u64) -> Self {
        Self { x: v as u32 as i32, z: (v >> 32) as u32 as i32 }
    }
}

impl GridPos for ColumnPos {
    const DIMS: usize = 2;
    type Coords = [i64; 2];

    #[inline]
    fn coords(self) -> [i64; 2] {
        [self.x as i64, self.z as i64]
    }

    fn from_coords(c: &[i64]) -> Option<Self> {
        match *c {
            [x, z] => Some(Self::new(i32::try_from(x).ok()?, i32::try_from(z).ok()?)),
            _ => None,
        }
    }

    #[inline]
    fn section(self, shift: u32) -> Self {
        let s = shift.min(31);
        Self::new(self.x >> s, self.z >> s)
    }

    fn section_min(self, shift: u32) -> Option<Self> {
        let f = |v: i32| -> Option<i32> { i32::try_from((v as i64).checked_shl(shift)?).ok() };
        if shift >= 32 {
            return None;
        }
        Some(Self::new(f(self.x)?, f(self.z)?))
    }

    #[inline]
    fn local_index(self, shift: u32) -> usize {
        let s = shift.min(31);
        let m = (1u64 << s) - 1;
        (((self.x as u64 & m) << s) | (self.z as u64 & m)) as usize
    }

    #[inline]
    fn chebyshev(self, o: Self) -> u64 {
        abs_diff(self.x as i64, o.x as i64).max(abs_diff(self.z as i64, o.z as i64))
    }

    #[inline]
    fn dist2(self, o: Self) -> u128 {
        sq(abs_diff(self.x as i64, o.x as i64)) + sq(abs_diff(self.z as i64, o.z as i64))
    }

    fn dist2_to_box(self, min: Self, max: Self) -> u128 {
        sq(axis_gap(self.x as i64, min.x as i64, max.x as i64))
            + sq(axis_gap(self.z as i64, min.z as i64, max.z as i64))
    }

    fn within(self, radius: u32) -> impl Iterator<Item = Self> {
        let (x0, x1) = clamp_range(self.x as i64, radius, i32::MIN as i64, i32::MAX as i64);
        let (z0, z1) = clamp_range(self.z as i64, radius, i32::MIN as i64, i32::MAX as i64);
        Odometer::new([x0, z0], [x1, z1]).map(|[x, z]| Self::new(x as i32, z as i32))
    }

    /// One run per x: positions sort by x, then z.
    fn within_runs(self, radius: u32) -> impl Iterator<Item = (Self, Self)> {
        let (x0, x1) = clamp_range(self.x as i64, radius, i32::MIN as i64, i32::MAX as i64);
        let (z0, z1) = clamp_range(self.z as i64, radius, i32::MIN as i64, i32::MAX as i64);
        (x0..=x1).map(move |x| (Self::new(x as i32, z0 as i32), Self::new(x as i32, z1 as i32)))
    }
}

/// A 3D cubic chunk position: `i64` x, y and z (block coordinates `>> 4`).
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct ChunkPos {
    /// Chunk x.
    pub x: i64,
    /// Chunk y.
    pub y: i64,
    /// Chunk z.
    pub z: i64,
}

impl ChunkPos {
    /// A chunk at `(x, y, z)`.
    #[inline]
    pub const fn new(x: i64, y: i64, z: i64) -> Self {
        Self { x, y, z }
    }

    /// The block at local cell `(lx, ly, lz)` (each `0..16`) of this chunk, or `None` when the
    /// block coordinates do not fit `i64`.
    pub fn block(self, lx: u32, ly: u32, lz: u32) -> Option<BlockPos> {
        let f = |c: i64, l: u32| c.checked_mul(CHUNK_EDGE as i64)?.checked_add((l & 15) as i64);
        Some(BlockPos::new(f(self.x, lx)?, f(self.y, ly)?, f(self.z, lz)?))
    }
}

impl GridPos for ChunkPos {
    const DIMS: usize = 3;
    type Coords = [i64; 3];

    #[inline]
    fn coords(self) -> [i64; 3] {
        [self.x, self.y, self.z]
    }

    fn from_coords(c: &[i64]) -> Option<Self> {
        match *c {
            [x, y, z] => Some(Self::new(x, y, z)),
            _ => None,
        }
    }

    #[inline]
    fn section(self, shift: u32) -> Self {
        Self::new(shr_i64(self.x, shift), shr_i64(self.y, shift), shr_i64(self.z, shift))
    }

    fn section_min(self, shift: u32) -> Option<Self> {
        if shift >= 64 {
            return None;
        }
        let f = |v: i64| -> Option<i64> {
            let r = v.checked_shl(shift)?;
            (r >> shift == v).then_some(r)
        };
        Some(Self::new(f(self.x)?, f(self.y)?, f(self.z)?))
    }

    #[inline]
    fn local_index(self, shift: u32) -> usize {
        let s = shift.min(21);
        let m = (1u64 << s) - 1;
        let (x, y, z) = (self.x as u64 & m, self.y as u64 & m, self.z as u64 & m);
        ((((x << s) | y) << s) | z) as usize
    }

    #[inline]
    fn chebyshev(self, o: Self) -> u64 {
        abs_diff(self.x, o.x).max(abs_diff(self.y, o.y)).max(abs_diff(self.z, o.z))
    }

    #[inline]
    fn dist2(self, o: Self) -> u128 {
        sq(abs_diff(self.x, o.x))
            .saturating_add(sq(abs_diff(self.y, o.y)))
            .saturating_add(sq(abs_diff(self.z, o.z)))
    }

    fn dist2_to_box(self, min: Self, max: Self) -> u128 {
        sq(axis_gap(self.x, min.x, max.x))
            .saturating_add(sq(axis_gap(self.y, min.y, max.y)))
            .saturating_add(sq(axis_gap(self.z, min.z, max.z)))
    }

    fn within(self, radius: u32) -> impl Iterator<Item = Self> {
        let (x0, x1) = clamp_range(self.x, radius, i64::MIN, i64::MAX);
        let (y0, y1) = clamp_range(self.y, radius, i64::MIN, i64::MAX);
        let (z0, z1) = clamp_range(self.z, radius, i64::MIN, i64::MAX);
        Odometer::new([x0, y0, z0], [x1, y1, z1]).map(|[x, y, z]| Self::new(x, y, z))
    }

    /// One run per (x, y): positions sort by x, then y, then z.
    fn within_runs(self, radius: u32) -> impl Iterator<Item = (Self, Self)> {
        let (x0, x1) = clamp_range(self.x, radius, i64::MIN, i64::MAX);
        let (y0, y1) = clamp_range(self.y, radius, i64::MIN, i64::MAX);
        let (z0, z1) = clamp_range(self.z, radius, i64::MIN, i64::MAX);
        Odometer::new([x0, y0], [x1, y1])
            .map(move |[x, y]| (Self::new(x, y, z0), Self::new(x, y, z1)))
    }
}

/// A block position: `i64` x, y and z.
#[derive(Copy, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct BlockPos {
    /// Block x.
    pub x: i64,
    /// Block y.
    pub y: i64,
    /// Block z.
    pub z: i64,
}

impl BlockPos {
    /// A block at `(x, y, z)`.
    #[inline]
    pub const fn new(x: i64, y: i64, z: i64) -> Self {
        Self { x, y, z }
    }

    /// The cubic chunk holding this block (each coordinate `>> 4`).
    #[inline]
    pub const fn chunk(self) -> ChunkPos {
        ChunkPos::new(self.x >> 4, self.y >> 4, self.z >> 4)
    }

    /// The column holding this block, or `None` when `x >> 4` or `z >> 4` does not fit `i32`.
    pub fn column(self) -> Option<ColumnPos> {
        Some(ColumnPos::new(i32::try_from(self.x >> 4).ok()?, i32::try_from(self.z >> 4).ok()?))
    }

    /// Local coordinates inside its chunk, each `0..16`.
    #[inline]
    pub const fn local(self) -> (u32, u32, u32) {
        ((self.x & 15) as u32, (self.y & 15) as u32, (self.z & 15) as u32)
    }

    /// The cell index inside its chunk (see [`cell_index`]).
    #[inline]
    pub const fn cell_index(self) -> u16 {
        let (x, y, z) = self.local();
        cell_index(x, y, z)
    }
}

/// As users write a column on a command line: `x,z`.
impl std::fmt::Display for ColumnPos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{},{}", self.x, self.z)
    }
}

/// As users write a chunk position on a command line: `x,y,z`.
impl std::fmt::Display for ChunkPos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{},{},{}", self.x, self.y, self.z)
    }
}

/// As users write a block position on a command line: `x,y,z` (`32,-64,-208`).
impl std::fmt::Display for BlockPos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{},{},{}", self.x, self.y, self.z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_print_as_users_type_them() {
        assert_eq!(BlockPos::new(32, -64, -208).to_string(), "32,-64,-208");
        assert_eq!(ChunkPos::new(2, -4, -13).to_string(), "2,-4,-13");
        assert_eq!(ColumnPos::new(-1, 7).to_string(), "-1,7");
    }
}
