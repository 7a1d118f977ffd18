//! The soak: the demo's world under continuous play, measured per interval (tick-save
//! latency percentiles, resident memory, arena restores), and the verdict of the soak goal
//! (docs/RELIABILITY.md, "Soak").

use std::time::{Duration, Instant};

use serde::Serialize;
use terrane::stats::percentile;

/// A soak: the demo plays for `minutes` of wall time instead of its ticks (and on until a
/// first arena restore is counted), damaging and restoring the arena again every 200 ticks,
/// and closes a [`SoakRow`] every `row_seconds`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SoakConfig {
    /// Minutes of wall time to play.
    pub minutes: f64,
    /// Seconds per row. Default 60: one row a minute.
    pub row_seconds: f64,
}

impl SoakConfig {
    /// A soak of `minutes`, one row a minute.
    pub const fn minutes(minutes: f64) -> Self {
        SoakConfig { minutes, row_seconds: 60.0 }
    }
}
/// One row of the soak table: the ticks of one interval (a minute unless told otherwise).
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct SoakRow {
    /// 1-based interval number.
    pub minute: usize,
    /// Ticks run in the interval.
    pub ticks: u64,
    /// Median tick-save latency, milliseconds.
    pub save_p50_ms: f64,
    /// 99th percentile of tick-save latency, milliseconds.
    pub save_p99_ms: f64,
    /// Longest tick save, milliseconds.
    pub save_max_ms: f64,
    /// Resident memory at the interval's end (VmRSS), MiB; 0 where /proc is missing.
    pub rss_mib: f64,
    /// Of it, what the store's bounded caches and write buffers hold (RocksDB: memtables,
    /// block cache, table readers), MiB; 0 for a backend that keeps none.
    pub cache_mib: f64,
    /// Arena restores finished in the interval.
    pub restores: u64,
    /// Of them, those that ended identical to the snapshot.
    pub restores_exact: u64,
}

/// The soak goal, judged on the rows after the first (warm-up: the pre-generator, caches and
/// the first maintenance passes) by their trend, first third against last third: resident
/// memory swings by ±10 % from minute to minute (allocator, RocksDB's memtables), so a row
/// against a row would judge the noise.
#[derive(Serialize, Debug, Clone, Default, PartialEq)]
pub struct SoakVerdict {
    /// Median resident memory of the last third of the steady rows over the first third's.
    pub memory_growth: f64,
    /// Least-squares slope of resident memory over the steady rows, MiB per row (minute).
    pub memory_slope_mib: f64,
    /// The same slope for resident memory less the store's caches (what a leak would grow).
    pub rest_slope_mib: f64,
    /// Median tick-save p99 of the last third of the steady rows over the first third's.
    pub p99_growth: f64,
    /// Every arena restore ended identical to its snapshot.
    pub restores_exact: bool,
    /// Memory growth at most [`MAX_MEMORY_GROWTH`], p99 growth at most [`MAX_P99_GROWTH`],
    /// every restore exact, and at least three steady rows to judge by.
    pub goal_met: bool,
}

/// Memory is flat when the last third's median stays within 10 % of the first third's.
pub const MAX_MEMORY_GROWTH: f64 = 1.10;
/// The p99 does not grow when the last third's is within 1.5× the first third's (the machines
/// are shared: a factor, not a few per cent).
pub const MAX_P99_GROWTH: f64 = 1.5;

/// Resident memory of this process, MiB (Linux `/proc/self/status`), 0 elsewhere.
pub fn rss_mib() -> f64 {
    let Ok(s) = std::fs::read_to_string("/proc/self/status") else { return 0.0 };
    s.lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    if v.is_empty() { 0.0 } else { v[v.len() / 2] }
}

/// Collects the rows as the demo runs.
pub(crate) struct SoakRecorder {
    start: Instant,
    interval: Duration,
    /// Index into the demo's save timings where the current interval starts.
    saves_from: usize,
    ticks: u64,
    restores: u64,
    restores_exact: u64,
    /// The rows so far.
    pub rows: Vec<SoakRow>,
}

impl SoakRecorder {
    /// A recorder starting now, one row per `interval`.
    pub fn new(interval: Duration) -> Self {
        SoakRecorder {
            start: Instant::now(),
            interval,
            saves_from: 0,
            ticks: 0,
            restores: 0,
            restores_exact: 0,
            rows: Vec::new(),
        }
    }

    /// Time since the soak started.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Restores counted in the rows closed so far.
    pub fn restores_in_rows(&self) -> u64 {
        self.rows.iter().map(|r| r.restores).sum()
    }

    /// A restore finished (`exact`: identical to its snapshot).
    pub fn restored(&mut self, exact: bool) {
        self.restores += 1;
        self.restores_exact += u64::from(exact);
    }

    /// After each tick: closes the interval when its time is up. `save_nanos` is the demo's
    /// list of every tick's save time; `cache_bytes` reads the store's caches
    /// ([`terrane_store::Store::cache_bytes`]) when a row closes.
    pub fn tick(&mut self, save_nanos: &[u64], cache_bytes: impl FnOnce() -> Option<u64>) {
        self.ticks += 1;
        let due = self.interval * (self.rows.len() as u32 + 1);
        if self.start.elapsed() >= due {
            self.close(save_nanos, cache_bytes().unwrap_or(0));
        }
    }

    fn close(&mut self, save_nanos: &[u64], cache_bytes: u64) {
        let mut v = save_nanos[self.saves_from.min(save_nanos.len())..].to_vec();
        v.sort_unstable();
        let ms = |n: u64| n as f64 / 1e6;
        self.rows.push(SoakRow {
            minute: self.rows.len() + 1,
            ticks: self.ticks,
            save_p50_ms: ms(percentile(&mut v, 0.50).unwrap_or(0)),
            save_p99_ms: ms(percentile(&mut v, 0.99).unwrap_or(0)),
            save_max_ms: ms(v.last().copied().unwrap_or(0)),
            rss_mib: rss_mib(),
            cache_mib: cache_bytes as f64 / (1024.0 * 1024.0),
            restores: self.restores,
            restores_exact: self.restores_exact,
        });
        self.saves_from = save_nanos.len();
        self.ticks = 0;
        self.restores = 0;
        self.restores_exact = 0;
    }
}

/// Least-squares slope of values taken one per row, per row.
fn slope(values: impl Iterator<Item = f64>) -> f64 {
    let v: Vec<f64> = values.collect();
    let n = v.len() as f64;
    let mx = (n - 1.0) / 2.0;
    let my = v.iter().sum::<f64>() / n;
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for (i, y) in v.iter().enumerate() {
        sxy += (i as f64 - mx) * (y - my);
        sxx += (i as f64 - mx) * (i as f64 - mx);
    }
    sxy / sxx.max(f64::MIN_POSITIVE)
}

/// Judges the rows (see [`SoakVerdict`]).
pub fn verdict(rows: &[SoakRow]) -> SoakVerdict {
    let steady = rows.get(1..).unwrap_or(&[]);
    let restores_exact = rows.iter().all(|r| r.restores == r.restores_exact);
    if steady.len() < 3 {
        return SoakVerdict { restores_exact, ..SoakVerdict::default() };
    }
    let third = (steady.len() / 3).max(1);
    let (first, last) = (&steady[..third], &steady[steady.len() - third..]);
    let rss = |rows: &[SoakRow]| median(rows.iter().map(|r| r.rss_mib).collect());
    let memory_growth = rss(last) / rss(first).max(f64::MIN_POSITIVE);
    let p99 = |rows: &[SoakRow]| median(rows.iter().map(|r| r.save_p99_ms).collect());
    let p99_growth = p99(last) / p99(first).max(1e-9);
    let memory_slope_mib = slope(steady.iter().map(|r| r.rss_mib));
    let rest_slope_mib = slope(steady.iter().map(|r| r.rss_mib - r.cache_mib));
    SoakVerdict {
        memory_growth,
        memory_slope_mib,
        rest_slope_mib,
        p99_growth,
        restores_exact,
        goal_met: memory_growth <= MAX_MEMORY_GROWTH
            && p99_growth <= MAX_P99_GROWTH
            && restores_exact,
    }
}

/// Prints the rows and the verdict for people.
#[cfg(test)]
mod tests {
    use super::*;

    fn row(minute: usize, p99: f64, rss: f64) -> SoakRow {
        SoakRow { minute, save_p99_ms: p99, rss_mib: rss, ..SoakRow::default() }
    }

    #[test]
    fn the_verdict_sees_growing_memory_and_latency_and_skips_the_warm_up() {
        // Warm-up row (large) ignored; flat after it.
        let flat: Vec<SoakRow> =
            [(9.0, 500.0), (2.0, 100.0), (2.2, 104.0), (1.9, 103.0), (2.1, 105.0)]
                .iter()
                .enumerate()
                .map(|(i, &(p, m))| row(i + 1, p, m))
                .collect();
        let v = verdict(&flat);
        assert!(v.goal_met, "{v:?}");
        assert!((v.memory_growth - 105.0 / 100.0).abs() < 1e-9, "{v:?}");
        assert!((v.memory_slope_mib - 1.4).abs() < 1e-9, "{v:?}");
        // Noise without a trend: one row 30 % up is not growth.
        let noisy: Vec<SoakRow> = [100.0, 100.0, 130.0, 99.0, 101.0, 100.0, 98.0]
            .iter()
            .enumerate()
            .map(|(i, &m)| row(i + 1, 2.0, m))
            .collect();
        assert!(verdict(&noisy).goal_met, "{:?}", verdict(&noisy));
        // A leak: 10 % more per row.
        let leak: Vec<SoakRow> =
            (0..8).map(|i| row(i + 1, 2.0, 100.0 * 1.1f64.powi(i as i32))).collect();
        assert!(!verdict(&leak).goal_met);
        // Memory that grows with the store's caches only: the rest is flat.
        let filling: Vec<SoakRow> = (0..8)
            .map(|i| SoakRow {
                cache_mib: 2.0 * i as f64,
                ..row(i + 1, 2.0, 100.0 + 2.0 * i as f64)
            })
            .collect();
        let v = verdict(&filling);
        assert!((v.memory_slope_mib - 2.0).abs() < 1e-9 && v.rest_slope_mib.abs() < 1e-9, "{v:?}");
        // A p99 that doubles.
        let slow: Vec<SoakRow> = (0..7).map(|i| row(i + 1, 1.0 + i as f64, 100.0)).collect();
        let v = verdict(&slow);
        assert!(v.p99_growth > 2.0 && !v.goal_met, "{v:?}");
        // Too short to judge; a restore that was not exact fails the goal.
        assert!(!verdict(&flat[..3]).goal_met);
        let mut bad = flat.clone();
        bad[2].restores = 1;
        assert!(!verdict(&bad).goal_met);
    }
}
