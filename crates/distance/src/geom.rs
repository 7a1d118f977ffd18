//! Disc geometry: squared distances in 64-bit integers, boxes, lattice points per row.

use terrane_section::ColumnPos;

use crate::Error;

/// Coordinates must satisfy `|x|, |z| < LIMIT`.
pub(crate) const LIMIT: i64 = 1 << 30;
/// Smallest valid coordinate.
pub(crate) const DMIN: i64 = -(LIMIT - 1);
/// Largest valid coordinate.
pub(crate) const DMAX: i64 = LIMIT - 1;

/// log2 of the side in chunks of a cell at `level` (0 = batch, 1, 2, 3 = root, above: virtual).
#[inline]
pub(crate) const fn level_shift(level: u8) -> u32 {
    2 + 3 * level as u32
}

/// Is `p` inside the valid coordinate range?
#[inline]
pub(crate) fn in_range(p: ColumnPos) -> bool {
    (DMIN..=DMAX).contains(&(p.x as i64)) && (DMIN..=DMAX).contains(&(p.z as i64))
}

/// `Ok(())` when `p` is in range, the typed error otherwise.
#[inline]
pub(crate) fn check(p: ColumnPos) -> Result<(), Error> {
    if in_range(p) { Ok(()) } else { Err(Error::OutOfRange { x: p.x, z: p.z }) }
}

/// The disc `D(c, r)`: centre, radius and squared radius.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Disc {
    pub(crate) cx: i64,
    pub(crate) cz: i64,
    pub(crate) r: i64,
    pub(crate) r2: u64,
}

/// An inclusive box of chunks, `x0..=x1` × `z0..=z1` (empty when `x0 > x1` or `z0 > z1`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rect {
    pub(crate) x0: i64,
    pub(crate) z0: i64,
    pub(crate) x1: i64,
    pub(crate) z1: i64,
}

impl Rect {
    /// The chunks of cell `(nx, nz)` at `level`.
    #[inline]
    pub(crate) fn cell(level: u8, nx: i64, nz: i64) -> Rect {
        let s = level_shift(level);
        Rect { x0: nx << s, z0: nz << s, x1: ((nx + 1) << s) - 1, z1: ((nz + 1) << s) - 1 }
    }

    /// This box intersected with the valid coordinate range.
    #[inline]
    pub(crate) fn clip(self) -> Rect {
        Rect {
            x0: self.x0.max(DMIN),
            z0: self.z0.max(DMIN),
            x1: self.x1.min(DMAX),
            z1: self.z1.min(DMAX),
        }
    }

    #[inline]
    pub(crate) fn is_empty(self) -> bool {
        self.x0 > self.x1 || self.z0 > self.z1
    }
}

#[inline]
fn gap(v: i64, lo: i64, hi: i64) -> u64 {
    if v < lo {
        (lo - v) as u64
    } else if v > hi {
        (v - hi) as u64
    } else {
        0
    }
}

impl Disc {
    /// The disc around `c` with radius `r`; `c` must be in range.
    pub(crate) fn new(c: ColumnPos, r: u32) -> Result<Disc, Error> {
        check(c)?;
        let r2 = r as u64 * r as u64;
        Ok(Disc { cx: c.x as i64, cz: c.z as i64, r: r as i64, r2 })
    }

    /// Squared distance from the centre to chunk `(x, z)` (both in or near range: no overflow
    /// for any coordinates within `2^31` of the centre).
    #[inline]
    pub(crate) fn d2(&self, x: i64, z: i64) -> u64 {
        let dx = x.abs_diff(self.cx);
        let dz = z.abs_diff(self.cz);
        dx * dx + dz * dz
    }

    /// Smallest squared distance from the centre to a chunk of `b` (which must be non-empty).
    #[inline]
    pub(crate) fn near(&self, b: Rect) -> u64 {
        let dx = gap(self.cx, b.x0, b.x1);
        let dz = gap(self.cz, b.z0, b.z1);
        dx * dx + dz * dz
    }

    /// Largest squared distance from the centre to a chunk of `b`.
    #[inline]
    pub(crate) fn far(&self, b: Rect) -> u64 {
        let dx = self.cx.abs_diff(b.x0).max(self.cx.abs_diff(b.x1));
        let dz = self.cz.abs_diff(b.z0).max(self.cz.abs_diff(b.z1));
        dx * dx + dz * dz
    }

    /// Bits of the valid chunks of batch `(bx, bz)` that lie inside the disc, and for each bit
    /// its squared distance.
    #[inline]
    pub(crate) fn batch_mask(&self, bx: i64, bz: i64) -> (u16, [u64; 16]) {
        // Squared distances per column and per row; out-of-range ones can never be inside.
        let axis = |b: i64, c: i64| -> [u64; 4] {
            std::array::from_fn(|i| {
                let v = b * 4 + i as i64;
                if (DMIN..=DMAX).contains(&v) { v.abs_diff(c).pow(2) } else { u64::MAX }
            })
        };
        let (dx, dz) = (axis(bx, self.cx), axis(bz, self.cz));
        let mut mask = 0u16;
        let mut d = [u64::MAX; 16];
        for (i, di) in d.iter_mut().enumerate() {
            let v = dx[i & 3].saturating_add(dz[i >> 2]);
            if v <= self.r2 {
                mask |= 1 << i;
                *di = v;
            }
        }
        (mask, d)
    }

    /// Half-width of the disc's row at `z`, `None` when the row misses the disc.
    #[inline]
    pub(crate) fn half_width(&self, z: i64) -> Option<i64> {
        let dz = z.abs_diff(self.cz);
        if dz > self.r as u64 {
            return None;
        }
        Some((self.r2 - dz * dz).isqrt() as i64)
    }

    /// Number of lattice points of the disc inside box `b`, counted row by row: `O(rows)`.
    pub(crate) fn points_in(&self, b: Rect) -> u64 {
        let b = b.clip();
        if b.is_empty() {
            return 0;
        }
        let z0 = b.z0.max(self.cz - self.r);
        let z1 = b.z1.min(self.cz + self.r);
        let mut n = 0u64;
        for z in z0..=z1 {
            if let Some(w) = self.half_width(z) {
                let lo = b.x0.max(self.cx - w);
                let hi = b.x1.min(self.cx + w);
                if lo <= hi {
                    n += (hi - lo + 1) as u64;
                }
            }
        }
        n
    }

    /// Bounding box of the disc, clipped to the valid range.
    pub(crate) fn bounds(&self) -> Rect {
        Rect {
            x0: self.cx - self.r,
            z0: self.cz - self.r,
            x1: self.cx + self.r,
            z1: self.cz + self.r,
        }
        .clip()
    }
}
