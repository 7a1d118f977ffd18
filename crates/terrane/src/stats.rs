//! The one definition of a percentile that terrane's reports use: nearest rank.

/// The `q`-quantile (0..=1) of `values` by nearest rank: the smallest value with at least
/// `q` of the values at or below it (p50 of 1..=100 is 50, p99 is 99). `None` for no values.
/// Sorts `values`.
///
/// ```
/// let mut ms = vec![3.0, 1.0, 2.0, 100.0];
/// assert_eq!(terrane::stats::percentile(&mut ms, 0.5), Some(2.0));
/// assert_eq!(terrane::stats::percentile(&mut ms, 0.99), Some(100.0));
/// ```
pub fn percentile<T: Copy + PartialOrd>(values: &mut [T], q: f64) -> Option<T> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let rank = ((q.clamp(0.0, 1.0) * values.len() as f64).ceil() as usize).clamp(1, values.len());
    Some(values[rank - 1])
}

#[cfg(test)]
mod tests {
    use super::percentile;

    #[test]
    fn nearest_rank() {
        let mut v: Vec<u64> = (1..=100).rev().collect();
        assert_eq!(percentile(&mut v, 0.5), Some(50));
        assert_eq!(percentile(&mut v, 0.99), Some(99));
        assert_eq!(percentile(&mut v, 1.0), Some(100));
        assert_eq!(percentile(&mut v, 0.0), Some(1));
        assert_eq!(percentile(&mut [7u64], 0.99), Some(7));
        assert_eq!(percentile::<u64>(&mut [], 0.5), None);
    }
}
