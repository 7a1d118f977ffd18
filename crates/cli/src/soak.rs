//! The soak's table and verdict (`terrane demo --minutes N`), printed for people.

use terrane_sim::soak::{MAX_MEMORY_GROWTH, MAX_P99_GROWTH, SoakRow, SoakVerdict};

/// Prints the rows and the verdict for people.
pub fn print_table(rows: &[SoakRow], v: &SoakVerdict) {
    outln!("soak (a row per minute; the first is the warm-up)");
    outln!("  minute   ticks   save p50    p99      max   RSS MiB  caches MiB  restores");
    for r in rows {
        outln!(
            "  {:6} {:7} {:8.2} {:8.2} {:8.2} {:9.1} {:11.1}  {}/{}",
            r.minute,
            r.ticks,
            r.save_p50_ms,
            r.save_p99_ms,
            r.save_max_ms,
            r.rss_mib,
            r.cache_mib,
            r.restores_exact,
            r.restores
        );
    }
    if rows.len() < 4 {
        outln!("  verdict: too short to judge (needs four rows: the warm-up and three more)");
    } else {
        outln!(
            "  verdict: memory x{:.3} (goal <= {MAX_MEMORY_GROWTH}; trend {:+.2} MiB/minute, {:+.2} without the store's caches), p99 x{:.2} (goal <= {MAX_P99_GROWTH}), restores {}: goal {}",
            v.memory_growth,
            v.memory_slope_mib,
            v.rest_slope_mib,
            v.p99_growth,
            if v.restores_exact { "all exact" } else { "NOT all exact" },
            if v.goal_met { "met" } else { "NOT met" }
        );
    }
}
