//! Order statistics for latency and time-to-first-token.

/// The `q` quantile of ascending `sorted` values with linear interpolation between order
/// statistics (numpy's default `linear` method); `None` for no values.
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let h = last as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(last);
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_numpy_linear() {
        // numpy.percentile([1, 2, 3, 4, 10], [50, 95, 99]) == [3.0, 8.8, 9.76]
        let xs = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(percentile(&xs, 0.5), Some(3.0));
        assert!((percentile(&xs, 0.95).unwrap() - 8.8).abs() < 1e-12);
        assert!((percentile(&xs, 0.99).unwrap() - 9.76).abs() < 1e-12);
        assert_eq!(percentile(&[7.0], 0.99), Some(7.0));
        assert_eq!(percentile(&[], 0.5), None);
    }
}
