//! Agreement between two raters (the humans and the judge): Cohen's kappa, weighted kappa
//! for ordinal scales, and the rank and linear correlations (Spearman, Kendall tau-b,
//! Pearson). Each returns `None` where the statistic is undefined (no data, or no
//! variation), as scipy and scikit-learn return NaN.

use std::collections::BTreeMap;

/// Cohen's kappa over nominal categories.
pub fn cohen_kappa<T: Ord>(a: &[T], b: &[T]) -> Option<f64> {
    assert_eq!(a.len(), b.len(), "raters must rate the same items");
    let n = a.len() as f64;
    if a.is_empty() {
        return None;
    }
    let mut count_a: BTreeMap<&T, f64> = BTreeMap::new();
    let mut count_b: BTreeMap<&T, f64> = BTreeMap::new();
    let mut agree = 0.0;
    for (x, y) in a.iter().zip(b) {
        *count_a.entry(x).or_default() += 1.0;
        *count_b.entry(y).or_default() += 1.0;
        if x == y {
            agree += 1.0;
        }
    }
    let po = agree / n;
    let pe: f64 = count_a
        .iter()
        .map(|(k, ca)| ca / n * count_b.get(k).copied().unwrap_or(0.0) / n)
        .sum();
    let denominator = 1.0 - pe;
    (denominator.abs() > 1e-12).then(|| (po - pe) / denominator)
}

/// Disagreement weights of an ordinal kappa.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Weights {
    Linear,
    Quadratic,
}

/// Weighted kappa over the integer scale `lo..=hi` (scikit-learn's `cohen_kappa_score`
/// with `weights="linear"` or `"quadratic"` and `labels=range(lo, hi + 1)`).
pub fn weighted_kappa(a: &[i64], b: &[i64], lo: i64, hi: i64, weights: Weights) -> Option<f64> {
    assert_eq!(a.len(), b.len(), "raters must rate the same items");
    if a.is_empty() || hi < lo {
        return None;
    }
    let k = (hi - lo + 1) as usize;
    let idx = |x: i64| (x.clamp(lo, hi) - lo) as usize;
    let mut observed = vec![vec![0.0; k]; k];
    for (&x, &y) in a.iter().zip(b) {
        observed[idx(x)][idx(y)] += 1.0;
    }
    let n = a.len() as f64;
    let rows: Vec<f64> = observed.iter().map(|r| r.iter().sum()).collect();
    let cols: Vec<f64> = (0..k)
        .map(|j| observed.iter().map(|r| r[j]).sum())
        .collect();
    let (mut num, mut den) = (0.0, 0.0);
    for i in 0..k {
        for j in 0..k {
            let d = i.abs_diff(j) as f64;
            let w = match weights {
                Weights::Linear => d,
                Weights::Quadratic => d * d,
            };
            num += w * observed[i][j];
            den += w * rows[i] * cols[j] / n;
        }
    }
    (den.abs() > 1e-12).then(|| 1.0 - num / den)
}

/// Ranks starting at 1, ties given their average rank.
pub fn average_ranks(xs: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&i, &j| xs[i].total_cmp(&xs[j]));
    let mut ranks = vec![0.0; xs.len()];
    let mut start = 0;
    while start < order.len() {
        let mut end = start + 1;
        while end < order.len() && xs[order[end]] == xs[order[start]] {
            end += 1;
        }
        let rank = (start + end + 1) as f64 / 2.0;
        for &i in &order[start..end] {
            ranks[i] = rank;
        }
        start = end;
    }
    ranks
}

/// Pearson's correlation coefficient.
pub fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    assert_eq!(a.len(), b.len(), "raters must rate the same items");
    if a.len() < 2 {
        return None;
    }
    let n = a.len() as f64;
    let ma = a.iter().sum::<f64>() / n;
    let mb = b.iter().sum::<f64>() / n;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(b) {
        sab += (x - ma) * (y - mb);
        saa += (x - ma) * (x - ma);
        sbb += (y - mb) * (y - mb);
    }
    let den = (saa * sbb).sqrt();
    (den > 1e-12).then(|| (sab / den).clamp(-1.0, 1.0))
}

/// Spearman's rank correlation (Pearson over average ranks, as `scipy.stats.spearmanr`).
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    pearson(&average_ranks(a), &average_ranks(b))
}

/// Kendall's tau-b (`scipy.stats.kendalltau`, its default variant), which corrects for ties
/// in either rater.
///
/// Ratings take few distinct values, so the pairs are counted between groups of equal
/// `(a, b)` values rather than between items: the cost grows with the square of the number
/// of distinct pairs, not of items, which keeps bootstrap resampling cheap.
pub fn kendall_tau_b(a: &[f64], b: &[f64]) -> Option<f64> {
    assert_eq!(a.len(), b.len(), "raters must rate the same items");
    let mut pairs: Vec<(f64, f64)> = a.iter().copied().zip(b.iter().copied()).collect();
    pairs.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)));
    let mut groups: Vec<((f64, f64), f64)> = Vec::new();
    for p in pairs {
        match groups.last_mut() {
            Some((q, count)) if *q == p => *count += 1.0,
            _ => groups.push((p, 1.0)),
        }
    }
    let tied =
        |counts: &mut dyn Iterator<Item = f64>| counts.map(|c| c * (c - 1.0) / 2.0).sum::<f64>();
    let count_by = |key: fn(&(f64, f64)) -> f64| {
        let mut by: BTreeMap<u64, f64> = BTreeMap::new();
        for (p, c) in &groups {
            *by.entry((key(p) + 0.0).to_bits()).or_default() += c;
        }
        tied(&mut by.into_values())
    };
    let n = a.len() as f64;
    let total = n * (n - 1.0) / 2.0;
    let (ties_a, ties_b) = (count_by(|p| p.0), count_by(|p| p.1));
    let mut score = 0.0;
    for (i, ((x1, y1), c1)) in groups.iter().enumerate() {
        for ((x2, y2), c2) in &groups[i + 1..] {
            let sign = ((x1 - x2) * (y1 - y2)).signum();
            if x1 != x2 && y1 != y2 {
                score += sign * c1 * c2;
            }
        }
    }
    let den = ((total - ties_a) * (total - ties_b)).sqrt();
    (den > 0.0).then(|| (score / den).clamp(-1.0, 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: Option<f64>, b: f64) {
        let a = a.expect("defined");
        assert!((a - b).abs() < 1e-9, "{a} != {b}");
    }

    // Reference values from scikit-learn 1.x `cohen_kappa_score` and scipy `spearmanr`
    // on the same data (see the comments for the calls).
    #[test]
    fn cohen_kappa_matches_sklearn() {
        // cohen_kappa_score(list("AABBAtBA"), list("ABBBAAtA"))
        let a: Vec<char> = "AABBAtBA".chars().collect();
        let b: Vec<char> = "ABBBAAtA".chars().collect();
        close(cohen_kappa(&a, &b), SK_KAPPA);
        assert_eq!(cohen_kappa(&['A', 'A'], &['A', 'A']), None);
        close(cohen_kappa(&['A', 'B'], &['A', 'B']), 1.0);
    }

    #[test]
    fn weighted_kappa_matches_sklearn() {
        let a = [1, 2, 3, 4, 5, 3, 2, 4, 5, 1];
        let b = [1, 3, 3, 5, 4, 2, 2, 4, 5, 2];
        close(weighted_kappa(&a, &b, 1, 5, Weights::Quadratic), SK_QWK);
        close(weighted_kappa(&a, &b, 1, 5, Weights::Linear), SK_LWK);
        assert_eq!(
            weighted_kappa(&[3, 3], &[3, 3], 1, 5, Weights::Quadratic),
            None
        );
    }

    #[test]
    fn spearman_matches_scipy() {
        let a = [4.6667, 3.0, 2.3333, 5.0, 1.0, 3.0];
        let b = [5.0, 3.0, 3.0, 4.0, 2.0, 1.0];
        close(spearman(&a, &b), SP_RHO);
        assert_eq!(average_ranks(&[2.0, 1.0, 2.0]), vec![2.5, 1.0, 2.5]);
        assert_eq!(spearman(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), None);
        assert_eq!(spearman(&[1.0], &[1.0]), None);
    }

    const SK_KAPPA: f64 = 0.368421052631579;
    const SK_QWK: f64 = 0.8648648648648649;
    const SK_LWK: f64 = 0.6753246753246753;
    const SP_RHO: f64 = 0.6617647058823529;
}
