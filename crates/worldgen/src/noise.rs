//! Value noise over a seed, shared by the generators: smooth pseudo-random fields in `[-1, 1]`.

fn hash(seed: u64, x: i64, z: i64) -> u64 {
    let mut h = seed ^ 0x9E37_79B9_7F4A_7C15;
    for v in [x as u64, z as u64] {
        h ^= v.wrapping_mul(0xBF58_476D_1CE4_E5B9);
        h = h.rotate_left(31).wrapping_mul(0x94D0_49BB_1331_11EB);
        h ^= h >> 29;
    }
    h
}

/// Lattice value in `[-1, 1)`.
fn lattice(seed: u64, x: i64, z: i64) -> f64 {
    (hash(seed, x, z) >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

fn smooth(t: f64) -> f64 {
    t * t * t * (t * (t * 6.0 - 15.0) + 10.0)
}

/// Value noise at `(x, z)` with lattice spacing `scale` blocks, in `[-1, 1]`.
pub(crate) fn value_noise(seed: u64, x: f64, z: f64, scale: f64) -> f64 {
    let (fx, fz) = (x / scale, z / scale);
    let (x0, z0) = (fx.floor(), fz.floor());
    let (tx, tz) = (smooth(fx - x0), smooth(fz - z0));
    let (ix, iz) = (x0 as i64, z0 as i64);
    let a = lattice(seed, ix, iz);
    let b = lattice(seed, ix + 1, iz);
    let c = lattice(seed, ix, iz + 1);
    let d = lattice(seed, ix + 1, iz + 1);
    let top = a + (b - a) * tx;
    let bottom = c + (d - c) * tx;
    top + (bottom - top) * tz
}

/// Fractal noise at `(x, z)`: `octaves` layers of [`value_noise`], each half the scale and
/// half the weight of the one before, from lattice spacing `scale`; about `[-2, 2]`.
pub(crate) fn fractal(seed: u64, x: f64, z: f64, scale: f64, octaves: u64) -> f64 {
    let (mut h, mut amp, mut scale) = (0.0, 1.0, scale);
    for octave in 0..octaves {
        h += amp * value_noise(seed.wrapping_add(octave), x, z, scale);
        amp *= 0.5;
        scale *= 0.5;
    }
    h
}
