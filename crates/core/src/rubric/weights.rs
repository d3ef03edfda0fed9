//! Criterion weights learned from the labels: how much each criterion's score says about the
//! humans' overall label, fitted by least squares with weights that cannot be negative
//! (non-negative least squares, Lawson and Hanson 1974, as `scipy.optimize.nnls`) and a free
//! intercept. A criterion that carries nothing the others do not gets weight zero rather
//! than a negative weight no one could read.
//!
//! The intercept is free: centring the scores and the labels removes it exactly (for any
//! weights, the best intercept is the labels' mean less the weighted scores' mean), so the
//! weights are the non-negative least squares of the centred problem.

/// Weights fitted to a label: `label ≈ intercept + Σ weight × score`.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// One per criterion, in the order of the scores' columns; none below zero.
    pub weights: Vec<f64>,
    pub intercept: f64,
}

impl Fit {
    /// The label the fit predicts from one item's scores.
    pub fn predict(&self, scores: &[f64]) -> f64 {
        self.intercept
            + self
                .weights
                .iter()
                .zip(scores)
                .map(|(w, x)| w * x)
                .sum::<f64>()
    }
}

/// Fits `labels` from `scores` (one row per item, one column per criterion); none without
/// an item, or where the rows are not all as long as the first.
pub fn fit(scores: &[Vec<f64>], labels: &[f64]) -> Option<Fit> {
    let n = scores.len();
    let k = scores.first()?.len();
    if n != labels.len() || scores.iter().any(|row| row.len() != k) {
        return None;
    }
    let mean = |f: &dyn Fn(usize) -> f64| (0..n).map(f).sum::<f64>() / n as f64;
    let score_means: Vec<f64> = (0..k).map(|j| mean(&|i| scores[i][j])).collect();
    let label_mean = mean(&|i| labels[i]);
    let a: Vec<Vec<f64>> = scores
        .iter()
        .map(|row| row.iter().zip(&score_means).map(|(x, m)| x - m).collect())
        .collect();
    let b: Vec<f64> = labels.iter().map(|y| y - label_mean).collect();
    let weights = nnls(&a, &b);
    let intercept = label_mean
        - weights
            .iter()
            .zip(&score_means)
            .map(|(w, m)| w * m)
            .sum::<f64>();
    Some(Fit { weights, intercept })
}

/// The `x ≥ 0` that minimises `‖a x − b‖` (`a` by rows), by Lawson and Hanson's active set
/// method: variables enter the passive set by the largest gradient and leave it when an
/// unconstrained step would take them below zero.
pub fn nnls(a: &[Vec<f64>], b: &[f64]) -> Vec<f64> {
    let k = a.first().map_or(0, Vec::len);
    let scale: f64 = a
        .iter()
        .flat_map(|row| row.iter())
        .map(|x| x.abs())
        .fold(0.0, f64::max);
    let tol = 10.0 * f64::EPSILON * scale * (a.len().max(k) as f64).max(1.0);
    let mut x = vec![0.0; k];
    let mut passive = vec![false; k];
    for _ in 0..3 * k.max(1) {
        let gradient = gradient(a, b, &x);
        let entering = (0..k)
            .filter(|&j| !passive[j] && gradient[j] > tol)
            .max_by(|&i, &j| gradient[i].total_cmp(&gradient[j]));
        let Some(j) = entering else {
            break;
        };
        passive[j] = true;
        loop {
            let s = least_squares(a, b, &passive);
            if (0..k).all(|i| !passive[i] || s[i] > tol) {
                x = s;
                break;
            }
            // Step towards s as far as every passive variable stays non-negative.
            let alpha = (0..k)
                .filter(|&i| passive[i] && s[i] <= tol)
                .map(|i| x[i] / (x[i] - s[i]))
                .fold(f64::INFINITY, f64::min);
            for i in 0..k {
                x[i] += alpha * (s[i] - x[i]);
                if passive[i] && x[i] <= tol {
                    passive[i] = false;
                    x[i] = 0.0;
                }
            }
        }
    }
    x
}

/// `aᵀ (b − a x)`: where the residual would fall fastest.
fn gradient(a: &[Vec<f64>], b: &[f64], x: &[f64]) -> Vec<f64> {
    let mut g = vec![0.0; x.len()];
    for (row, &y) in a.iter().zip(b) {
        let r = y - row.iter().zip(x).map(|(v, w)| v * w).sum::<f64>();
        for (gj, v) in g.iter_mut().zip(row) {
            *gj += v * r;
        }
    }
    g
}

/// The unconstrained least squares on the columns in `passive` (the others zero), from the
/// normal equations by Gaussian elimination with partial pivoting.
fn least_squares(a: &[Vec<f64>], b: &[f64], passive: &[bool]) -> Vec<f64> {
    let cols: Vec<usize> = (0..passive.len()).filter(|&j| passive[j]).collect();
    let m = cols.len();
    // [aᵀa | aᵀb] on the passive columns.
    let mut system = vec![vec![0.0; m + 1]; m];
    for (row, &y) in a.iter().zip(b) {
        for (p, &i) in cols.iter().enumerate() {
            for (q, &j) in cols.iter().enumerate() {
                system[p][q] += row[i] * row[j];
            }
            system[p][m] += row[i] * y;
        }
    }
    for p in 0..m {
        let pivot = (p..m)
            .max_by(|&r, &s| system[r][p].abs().total_cmp(&system[s][p].abs()))
            .unwrap_or(p);
        system.swap(p, pivot);
        let d = system[p][p];
        if d.abs() < f64::MIN_POSITIVE {
            continue;
        }
        let pivot_row = system[p].clone();
        for (r, row) in system.iter_mut().enumerate() {
            if r != p {
                let f = row[p] / d;
                for (x, y) in row[p..].iter_mut().zip(&pivot_row[p..]) {
                    *x -= f * y;
                }
            }
        }
    }
    let mut out = vec![0.0; passive.len()];
    for (p, &j) in cols.iter().enumerate() {
        let d = system[p][p];
        out[j] = if d.abs() < f64::MIN_POSITIVE {
            0.0
        } else {
            system[p][m] / d
        };
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::reference::{close, floats};

    /// Fixed scores and labels, and what `scipy.optimize.nnls` gives on them
    /// (`tools/reference_rubric.py`).
    const REFERENCE: &str = include_str!("testdata/reference.json");

    fn matrix(v: &Value) -> Vec<Vec<f64>> {
        v.as_array().unwrap().iter().map(floats).collect()
    }

    #[test]
    fn weights_match_scipy() {
        let reference: Value = serde_json::from_str(REFERENCE).unwrap();
        for case in reference["cases"].as_array().unwrap() {
            let name = case["name"].as_str().unwrap();
            let (a, b) = (matrix(&case["a"]), floats(&case["b"]));
            for (j, got) in nnls(&a, &b).into_iter().enumerate() {
                close(&format!("{name}: nnls {j}"), Some(got), &case["nnls"][j]);
            }
            let fitted = fit(&a, &b).unwrap();
            for (j, &got) in fitted.weights.iter().enumerate() {
                close(
                    &format!("{name}: weight {j}"),
                    Some(got),
                    &case["weights"][j],
                );
            }
            close(
                &format!("{name}: intercept"),
                Some(fitted.intercept),
                &case["intercept"],
            );
        }
    }

    #[test]
    fn a_criterion_that_only_hurts_gets_no_weight() {
        // The label is the first score; the second runs against it.
        let scores: Vec<Vec<f64>> = (0..20)
            .map(|i| {
                let x = f64::from(i % 5);
                vec![x, 4.0 - x + f64::from(i % 2) * 0.1]
            })
            .collect();
        let labels: Vec<f64> = scores.iter().map(|s| 1.0 + 2.0 * s[0]).collect();
        let fitted = fit(&scores, &labels).unwrap();
        assert!(fitted.weights.iter().all(|&w| w >= 0.0), "{fitted:?}");
        assert!((fitted.predict(&scores[3]) - labels[3]).abs() < 1e-9);
        assert_eq!(fit(&[], &[]), None);
        assert_eq!(fit(&[vec![1.0], vec![1.0, 2.0]], &[1.0, 2.0]), None);
    }
}
