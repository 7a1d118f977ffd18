//! Regionizer parameters: the five knobs of Folia's regionizer, validated at build.

use crate::{Error, Result};

/// Largest accepted section shift (a section is `2^shift` chunks per axis).
pub const MAX_SHIFT: u32 = 6;
/// Largest accepted `create_radius + merge_radius` (in sections): bounds the neighbourhood
/// scanned by a slow-path `add_chunk`.
pub const MAX_RADIUS_SUM: u32 = 16;

/// The five parameters of the regionizer (spec: `docs/spec/regionizer.md`).
///
/// Build one with [`RegionizerConfig::builder`] or take a Folia preset
/// ([`folia_shift4`](Self::folia_shift4), the default, or [`folia_shift2`](Self::folia_shift2)).
///
/// | preset | shift | chunks per section (2D) | recalc count | create radius C | merge radius M | max dead fraction |
/// |---|---|---|---|---|---|---|
/// | `folia_shift2` | 2 | 4×4   | 128 | 2 | 1 | 1/6 |
/// | `folia_shift4` | 4 | 16×16 | 8   | 1 | 1 | 1/6 |
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RegionizerConfig {
    pub(crate) shift: u32,
    pub(crate) create_radius: u32,
    pub(crate) merge_radius: u32,
    pub(crate) recalc_count: usize,
    pub(crate) max_dead_fraction: f64,
}

impl Default for RegionizerConfig {
    /// [`folia_shift4`](Self::folia_shift4).
    fn default() -> Self {
        Self::folia_shift4()
    }
}

impl RegionizerConfig {
    /// Folia's preset for grid exponent 2: 4×4-chunk sections, recalc count 128, C = 2, M = 1,
    /// max dead fraction 1/6.
    pub const fn folia_shift2() -> Self {
        Self::folia_formulas(2)
    }

    /// Folia's preset for grid exponent 4 (its current default): 16×16-chunk sections, recalc
    /// count 8, C = 1, M = 1, max dead fraction 1/6.
    pub const fn folia_shift4() -> Self {
        Self::folia_formulas(4)
    }

    /// Folia's formulas for any shift: `recalc = max(2, 2048 / 4^shift)`,
    /// `C = max(1, 8 >> shift)`, `M = 1`, max dead fraction 1/6. `shift` is clamped to
    /// [`MAX_SHIFT`].
    pub const fn folia_formulas(shift: u32) -> Self {
        let shift = if shift > MAX_SHIFT { MAX_SHIFT } else { shift };
        let per = 2048usize >> (2 * shift);
        let recalc = if per > 2 { per } else { 2 };
        let c = 8u32 >> shift;
        Self {
            shift,
            create_radius: if c > 1 { c } else { 1 },
            merge_radius: 1,
            recalc_count: recalc,
            max_dead_fraction: 1.0 / 6.0,
        }
    }

    /// A builder starting from [`folia_shift4`](Self::folia_shift4).
    pub fn builder() -> RegionizerConfigBuilder {
        RegionizerConfigBuilder { cfg: Self::folia_shift4() }
    }

    /// A builder starting from this configuration.
    pub fn to_builder(self) -> RegionizerConfigBuilder {
        RegionizerConfigBuilder { cfg: self }
    }

    /// Section shift: a section holds `2^shift` chunks per axis.
    pub fn shift(&self) -> u32 {
        self.shift
    }
    /// Empty-section create radius C, in sections.
    pub fn create_radius(&self) -> u32 {
        self.create_radius
    }
    /// Merge radius M, in sections.
    pub fn merge_radius(&self) -> u32 {
        self.merge_radius
    }
    /// Minimum section count of a region before dead sections are purged for the dead fraction.
    pub fn recalc_count(&self) -> usize {
        self.recalc_count
    }
    /// Dead fraction (dead / total sections) at or above which a large enough region purges.
    pub fn max_dead_fraction(&self) -> f64 {
        self.max_dead_fraction
    }
}

/// Builder for [`RegionizerConfig`]; every parameter defaults to the
/// [`folia_shift4`](RegionizerConfig::folia_shift4) value.
#[derive(Clone, Copy, Debug)]
pub struct RegionizerConfigBuilder {
    cfg: RegionizerConfig,
}

impl RegionizerConfigBuilder {
    /// Section shift, `0..=`[`MAX_SHIFT`] (default 4). Only this value changes: call
    /// [`RegionizerConfig::folia_formulas`] for the derived defaults of another shift.
    pub fn shift(mut self, shift: u32) -> Self {
        self.cfg.shift = shift;
        self
    }
    /// Empty-section create radius C, `>= 1` (default 1).
    pub fn create_radius(mut self, c: u32) -> Self {
        self.cfg.create_radius = c;
        self
    }
    /// Merge radius M, `>= 1` (default 1).
    pub fn merge_radius(mut self, m: u32) -> Self {
        self.cfg.merge_radius = m;
        self
    }
    /// Recalc count (default 8). Any value; 0 and 1 let every region purge on the fraction rule.
    pub fn recalc_count(mut self, n: usize) -> Self {
        self.cfg.recalc_count = n;
        self
    }
    /// Max dead fraction in `[0, 1]` (default 1/6).
    pub fn max_dead_fraction(mut self, f: f64) -> Self {
        self.cfg.max_dead_fraction = f;
        self
    }

    /// Validates and returns the configuration.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] when shift exceeds [`MAX_SHIFT`], C or M is 0, `C + M`
    /// exceeds [`MAX_RADIUS_SUM`], or the dead fraction is not a number in `[0, 1]`.
    pub fn build(self) -> Result<RegionizerConfig> {
        let c = self.cfg;
        let bad = |param, reason: String| Err(Error::InvalidConfig { param, reason });
        if c.shift > MAX_SHIFT {
            return bad("shift", format!("is {}, must be at most {MAX_SHIFT}", c.shift));
        }
        if c.create_radius == 0 {
            return bad("create_radius", "must be at least 1".into());
        }
        if c.merge_radius == 0 {
            return bad("merge_radius", "must be at least 1".into());
        }
        if c.create_radius.saturating_add(c.merge_radius) > MAX_RADIUS_SUM {
            return bad(
                "create_radius + merge_radius",
                format!(
                    "is {}, must be at most {MAX_RADIUS_SUM}",
                    c.create_radius.saturating_add(c.merge_radius)
                ),
            );
        }
        if !(0.0..=1.0).contains(&c.max_dead_fraction) {
            return bad(
                "max_dead_fraction",
                format!("is {}, must be in [0, 1]", c.max_dead_fraction),
            );
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_match_the_spec_table() {
        let s2 = RegionizerConfig::folia_shift2();
        assert_eq!((s2.shift, s2.recalc_count, s2.create_radius, s2.merge_radius), (2, 128, 2, 1));
        let s4 = RegionizerConfig::folia_shift4();
        assert_eq!((s4.shift, s4.recalc_count, s4.create_radius, s4.merge_radius), (4, 8, 1, 1));
        assert_eq!(s4.max_dead_fraction, 1.0 / 6.0);
        assert_eq!(RegionizerConfig::default(), s4);
        assert_eq!(RegionizerConfig::builder().build().unwrap(), s4);
        // Formulas at other shifts: recalc = max(2, 2048 / 4^shift), C = max(1, 8 >> shift).
        let s0 = RegionizerConfig::folia_formulas(0);
        assert_eq!((s0.recalc_count, s0.create_radius), (2048, 8));
        let s6 = RegionizerConfig::folia_formulas(6);
        assert_eq!((s6.recalc_count, s6.create_radius), (2, 1));
    }

    #[test]
    fn build_rejects_out_of_range_values() {
        let b = RegionizerConfig::builder();
        assert!(matches!(b.shift(7).build(), Err(Error::InvalidConfig { param: "shift", .. })));
        assert!(matches!(
            b.create_radius(0).build(),
            Err(Error::InvalidConfig { param: "create_radius", .. })
        ));
        assert!(matches!(
            b.merge_radius(0).build(),
            Err(Error::InvalidConfig { param: "merge_radius", .. })
        ));
        assert!(b.create_radius(10).merge_radius(7).build().is_err());
        assert!(b.max_dead_fraction(1.5).build().is_err());
        assert!(b.max_dead_fraction(f64::NAN).build().is_err());
        assert!(b.shift(2).create_radius(3).merge_radius(2).recalc_count(0).build().is_ok());
    }
}
