//! Expected agreement of an exact trial: computed from each verdict's exact distribution
//! (`sampling::VerdictDistribution`) rather than from its one seeded draw, so that it has
//! no sampling noise at all.
//!
//! - `accuracy`: the mean probability of the human's label (ratings by category, rounded
//!   to the scale as everywhere in `metrics`).
//! - `kappa`: Cohen's kappa of the expected confusion matrix: every (human label, outcome)
//!   pair weighted by its probability, a failure a category of its own (scikit-learn's
//!   `cohen_kappa_score` with `sample_weight` gives the same).
//! - `entropy_bits`: the mean entropy of the verdict distributions, a failure one outcome.
//! - `failed`: the mean probability of no verdict.
//! - Ratings: each item's G-Eval score, the probability-weighted mean of the scale values
//!   (renormalised over them), and its Spearman and Pearson correlation with the humans.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::dataset::{Label, Task};
use crate::metrics::agreement::{pearson, spearman};
use crate::sampling::VerdictDistribution;

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Expected {
    pub accuracy: Option<f64>,
    pub kappa: Option<f64>,
    pub entropy_bits: Option<f64>,
    pub failed: Option<f64>,
    pub geval_spearman: Option<f64>,
    pub geval_pearson: Option<f64>,
}

/// A human label's category: its text, a rating rounded to the scale.
fn category(task: Task, label: &Label) -> String {
    match (task, label) {
        (Task::Single { .. }, Label::Rating(x)) => format!("{}", (x + 0.5).floor() as i64),
        _ => label.to_text(),
    }
}

/// The expected metrics of verdicts given as (human label, distribution).
pub fn expected(task: Task, verdicts: &[(Label, &VerdictDistribution)]) -> Expected {
    let n = verdicts.len();
    if n == 0 {
        return Expected::default();
    }
    let mean = |f: &dyn Fn(&Label, &VerdictDistribution) -> f64| {
        Some(verdicts.iter().map(|(h, d)| f(h, d)).sum::<f64>() / n as f64)
    };
    // The expected confusion matrix, by category.
    let mut cells: BTreeMap<(String, String), f64> = BTreeMap::new();
    for (human, d) in verdicts {
        let h = category(task, human);
        for (label, p) in &d.labels {
            *cells.entry((h.clone(), category(task, label))).or_default() += p;
        }
        *cells.entry((h, "failed".into())).or_default() += d.failed;
    }
    let total: f64 = cells.values().sum();
    let mut rows: BTreeMap<&str, f64> = BTreeMap::new();
    let mut cols: BTreeMap<&str, f64> = BTreeMap::new();
    let mut agree = 0.0;
    for ((h, j), w) in &cells {
        *rows.entry(h).or_default() += w;
        *cols.entry(j).or_default() += w;
        if h == j {
            agree += w;
        }
    }
    let po = agree / total;
    let pe: f64 = rows
        .iter()
        .map(|(c, r)| r * cols.get(c).copied().unwrap_or(0.0))
        .sum::<f64>()
        / (total * total);
    let kappa = (total > 0.0 && pe < 1.0).then(|| (po - pe) / (1.0 - pe));
    let (geval_spearman, geval_pearson) = match task {
        Task::Pairwise => (None, None),
        Task::Single { .. } => {
            let (humans, scores): (Vec<f64>, Vec<f64>) = verdicts
                .iter()
                .filter_map(|(h, d)| {
                    let mass: f64 = d.labels.iter().map(|(_, p)| p).sum();
                    let weighted: f64 = d
                        .labels
                        .iter()
                        .map(|(l, p)| l.as_rating().unwrap_or(0.0) * p)
                        .sum();
                    Some((h.as_rating()?, (mass > 0.0).then(|| weighted / mass)?))
                })
                .unzip();
            (spearman(&humans, &scores), pearson(&humans, &scores))
        }
    };
    Expected {
        accuracy: mean(&|h, d| d.p_category(task, &category(task, h))),
        kappa,
        entropy_bits: mean(&|_, d| d.entropy()),
        failed: mean(&|_, d| d.failed),
        geval_spearman,
        geval_pearson,
    }
}

impl VerdictDistribution {
    /// The probability of the labels in a category.
    fn p_category(&self, task: Task, c: &str) -> f64 {
        self.labels
            .iter()
            .filter(|(l, _)| category(task, l) == c)
            .map(|(_, p)| p)
            .sum()
    }
}
