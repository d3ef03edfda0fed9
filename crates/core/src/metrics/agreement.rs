//! Agreement between two raters (the humans and the judge): Cohen's kappa, weighted kappa
//! for ordinal scales, and the rank and linear correlations (Spearman, Kendall tau-b,
//! Pearson). Each returns `None` where the statistic is undefined (no data, or no
//! variation), as scipy and scikit-learn return NaN.

use std::collections::BTreeMap;

/// Cohen's kappa over nominal categories.
pub fn cohen_kappa<T: Ord>(a: &[T], b: &[T]) -> Option<f64> {
    assert_eq!(a.len(), b.len(), "raters must rate the same items");
    cohen_kappa_counted(a.iter().zip(b).map(|(x, y)| (x, y, 1.0)))
}

/// Cohen's kappa over `(a, b, count)`: `count` items rated `a` by one rater and `b` by the
/// other. Counts are whole numbers, so the result is exactly that of the items listed one
/// by one (a bootstrap resample is a recount, see `quality::Tally`).
pub fn cohen_kappa_counted<T: Ord>(pairs: impl IntoIterator<Item = (T, T, f64)>) -> Option<f64> {
    let mut count_a: BTreeMap<T, f64> = BTreeMap::new();
    let mut count_b: BTreeMap<T, f64> = BTreeMap::new();
    let (mut agree, mut n) = (0.0, 0.0);
    for (x, y, c) in pairs {
        if x == y {
            agree += c;
        }
        *count_a.entry(x).or_default() += c;
        *count_b.entry(y).or_default() += c;
        n += c;
    }
    if n == 0.0 {
        return None;
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
    let pairs = a.iter().zip(b).map(|(&x, &y)| (x, y, 1.0));
    weighted_kappa_counted(pairs, lo, hi, weights)
}

/// [`weighted_kappa`] over `(a, b, count)`, as [`cohen_kappa_counted`].
pub fn weighted_kappa_counted(
    pairs: impl IntoIterator<Item = (i64, i64, f64)>,
    lo: i64,
    hi: i64,
    weights: Weights,
) -> Option<f64> {
    if hi < lo {
        return None;
    }
    let k = (hi - lo + 1) as usize;
    let idx = |x: i64| (x.clamp(lo, hi) - lo) as usize;
    let mut observed = vec![vec![0.0; k]; k];
    let mut n = 0.0;
    for (x, y, c) in pairs {
        observed[idx(x)][idx(y)] += c;
        n += c;
    }
    if n == 0.0 {
        return None;
    }
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
    let ones = vec![1.0; xs.len()];
    average_ranks_counted(xs, &ones)
}

/// The average rank of each value `xs[i]` occurring `counts[i]` times, as if every
/// occurrence were listed: ties (equal values, or one value counted more than once) share
/// their average rank.
pub fn average_ranks_counted(xs: &[f64], counts: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..xs.len()).collect();
    order.sort_by(|&i, &j| xs[i].total_cmp(&xs[j]));
    let mut ranks = vec![0.0; xs.len()];
    let (mut first, mut below) = (0, 0.0);
    while first < order.len() {
        let mut last = first + 1;
        let mut tied = counts[order[first]];
        while last < order.len() && xs[order[last]] == xs[order[first]] {
            tied += counts[order[last]];
            last += 1;
        }
        // The occurrences hold ranks below + 1 ..= below + tied.
        let rank = (below + (below + tied) + 1.0) / 2.0;
        for &i in &order[first..last] {
            ranks[i] = rank;
        }
        below += tied;
        first = last;
    }
    ranks
}

/// Pearson's correlation coefficient.
pub fn pearson(a: &[f64], b: &[f64]) -> Option<f64> {
    assert_eq!(a.len(), b.len(), "raters must rate the same items");
    pearson_counted(&counted(a, b))
}

/// Pearson's correlation over `(a, b, count)`.
pub fn pearson_counted(pairs: &[(f64, f64, f64)]) -> Option<f64> {
    let n: f64 = pairs.iter().map(|p| p.2).sum();
    if n < 2.0 {
        return None;
    }
    let ma = pairs.iter().map(|p| p.0 * p.2).sum::<f64>() / n;
    let mb = pairs.iter().map(|p| p.1 * p.2).sum::<f64>() / n;
    let (mut sab, mut saa, mut sbb) = (0.0, 0.0, 0.0);
    for &(x, y, c) in pairs {
        sab += c * (x - ma) * (y - mb);
        saa += c * (x - ma) * (x - ma);
        sbb += c * (y - mb) * (y - mb);
    }
    let den = (saa * sbb).sqrt();
    (den > 1e-12).then(|| (sab / den).clamp(-1.0, 1.0))
}

/// Spearman's rank correlation (Pearson over average ranks, as `scipy.stats.spearmanr`).
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    assert_eq!(a.len(), b.len(), "raters must rate the same items");
    spearman_counted(&counted(a, b))
}

/// Spearman's rank correlation over `(a, b, count)`.
pub fn spearman_counted(pairs: &[(f64, f64, f64)]) -> Option<f64> {
    let counts: Vec<f64> = pairs.iter().map(|p| p.2).collect();
    let ranks = |side: fn(&(f64, f64, f64)) -> f64| {
        average_ranks_counted(&pairs.iter().map(side).collect::<Vec<_>>(), &counts)
    };
    let (ra, rb) = (ranks(|p| p.0), ranks(|p| p.1));
    let ranked: Vec<(f64, f64, f64)> = (0..pairs.len())
        .map(|i| (ra[i], rb[i], counts[i]))
        .collect();
    pearson_counted(&ranked)
}

/// Kendall's tau-b (`scipy.stats.kendalltau`, its default variant), which corrects for ties
/// in either rater.
pub fn kendall_tau_b(a: &[f64], b: &[f64]) -> Option<f64> {
    assert_eq!(a.len(), b.len(), "raters must rate the same items");
    kendall_tau_b_counted(&counted(a, b))
}

/// Kendall's tau-b over `(a, b, count)`.
///
/// Ratings take few distinct values, so the pairs are counted between groups of equal
/// `(a, b)` values rather than between items: the cost grows with the square of the number
/// of distinct pairs, not of items, which keeps bootstrap resampling cheap.
pub fn kendall_tau_b_counted(pairs: &[(f64, f64, f64)]) -> Option<f64> {
    let mut sorted: Vec<(f64, f64, f64)> = pairs.iter().copied().filter(|p| p.2 > 0.0).collect();
    sorted.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.total_cmp(&y.1)));
    let mut groups: Vec<((f64, f64), f64)> = Vec::new();
    for (x, y, c) in sorted {
        match groups.last_mut() {
            Some((q, count)) if *q == (x, y) => *count += c,
            _ => groups.push(((x, y), c)),
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
    let n: f64 = groups.iter().map(|g| g.1).sum();
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

/// Each item's pair of ratings, counted once.
fn counted(a: &[f64], b: &[f64]) -> Vec<(f64, f64, f64)> {
    a.iter().zip(b).map(|(&x, &y)| (x, y, 1.0)).collect()
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
