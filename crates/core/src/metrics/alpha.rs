//! Krippendorff's alpha: agreement among any number of raters, with missing values, at the
//! nominal, ordinal or interval level of measurement.
//!
//! It follows the `krippendorff` Python package (Castro, 2017) exactly: a coincidence matrix
//! over pairable values, expected coincidences from their marginals, and
//! `alpha = 1 - sum(o * d) / sum(e * d)`. The ordinal distance between two values is built
//! from the counts of the values between them, so it depends on the data, not on the
//! numbers themselves.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Level {
    Nominal,
    Ordinal,
    Interval,
}

/// Alpha over `units`, each the values its raters gave (missing values simply absent).
/// `None` where the package raises or returns NaN: fewer than two distinct values, no unit
/// rated twice, or no disagreement to expect.
pub fn krippendorff_alpha<U: AsRef<[f64]>>(units: &[U], level: Level) -> Option<f64> {
    let counted: Vec<(&[f64], f64)> = units.iter().map(|u| (u.as_ref(), 1.0)).collect();
    krippendorff_alpha_counted(&counted, level)
}

/// Alpha over `(unit, count)`: `count` units that each received these values. Counts are
/// whole numbers, so it is exactly alpha over the units listed one by one.
pub fn krippendorff_alpha_counted<U: AsRef<[f64]>>(
    units: &[(U, f64)],
    level: Level,
) -> Option<f64> {
    let units: Vec<(&[f64], f64)> = units
        .iter()
        .filter(|(_, c)| *c > 0.0)
        .map(|(u, c)| (u.as_ref(), *c))
        .collect();
    let domain = distinct_sorted(units.iter().flat_map(|u| u.0.iter().copied()));
    if domain.len() < 2 {
        return None;
    }
    let k = domain.len();
    let index = |v: f64| domain.binary_search_by(|d| d.total_cmp(&v)).ok();
    let mut o = vec![vec![0.0; k]; k];
    let mut pairable = false;
    // One buffer for every unit: alpha is recomputed on each bootstrap resample.
    let mut idx: Vec<usize> = Vec::new();
    for &(unit, count) in &units {
        idx.clear();
        idx.extend(unit.iter().filter_map(|&v| index(v)));
        let m = idx.len();
        if m < 2 {
            continue;
        }
        pairable = true;
        let weight = count / (m as f64 - 1.0);
        for (i, &c) in idx.iter().enumerate() {
            for (j, &d) in idx.iter().enumerate() {
                if i != j {
                    o[c][d] += weight;
                }
            }
        }
    }
    if !pairable {
        return None;
    }
    let n_v: Vec<f64> = (0..k).map(|c| o.iter().map(|row| row[c]).sum()).collect();
    let n: f64 = n_v.iter().sum();
    let distance = |c: usize, d: usize| -> f64 {
        match level {
            Level::Nominal => f64::from(u8::from(c != d)),
            Level::Interval => (domain[c] - domain[d]).powi(2),
            Level::Ordinal => {
                let (lo, hi) = (c.min(d), c.max(d));
                let between: f64 = n_v[lo..=hi].iter().sum();
                (between - (n_v[lo] + n_v[hi]) / 2.0).powi(2)
            }
        }
    };
    let (mut observed, mut expected) = (0.0, 0.0);
    for c in 0..k {
        for d in 0..k {
            let delta = distance(c, d);
            let e = (n_v[c] * n_v[d] - if c == d { n_v[c] } else { 0.0 }) / (n - 1.0);
            observed += o[c][d] * delta;
            expected += e * delta;
        }
    }
    (expected.abs() > 1e-12).then(|| 1.0 - observed / expected)
}

/// The distinct finite values, sorted. Ratings and categories have few distinct values, so
/// they are gathered without sorting every value (this runs on each bootstrap resample);
/// past 64 of them, all values are sorted instead.
fn distinct_sorted(values: impl Iterator<Item = f64> + Clone) -> Vec<f64> {
    let mut domain: Vec<f64> = Vec::new();
    for v in values.clone().filter(|v| v.is_finite()) {
        if !domain.iter().any(|d| d.total_cmp(&v).is_eq()) {
            domain.push(v);
            if domain.len() > 64 {
                domain = values.filter(|v| v.is_finite()).collect();
                break;
            }
        }
    }
    domain.sort_by(f64::total_cmp);
    domain.dedup_by(|a, b| a.total_cmp(b).is_eq());
    domain
}

/// Units of two raters, the second possibly missing (a judge's parse failure).
pub fn two_raters(a: &[f64], b: &[Option<f64>]) -> Vec<Vec<f64>> {
    a.iter()
        .zip(b)
        .map(|(&x, y)| std::iter::once(x).chain(*y).collect())
        .collect()
}
