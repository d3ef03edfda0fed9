//! Criterion weights learned from the humans' overall label: for each trial that rates an
//! item on several criteria, how much each criterion's value says about the item's own
//! label, fitted on the dev split by non-negative least squares with a free intercept
//! ([`crate::rubric::weights`]), and the weighted aggregate's agreement confirmed on the
//! test split, beside the unweighted aggregate (the trial's own verdicts). Each criterion
//! also says how often the trial's value for it varies: one that never varies carries no
//! information, whatever its weight.
//!
//! A checklist's yes/no items ([`crate::rubric::items`]) are fitted the same way, each
//! item a column ([`learn_items`]): their weights, how often each varies and how its
//! answers rank with the humans' labels on its criterion say which items carry
//! information.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use super::{ExperimentSummary, TrialSummary};
use crate::dataset::Label;
use crate::metrics::agreement::spearman;
use crate::metrics::SplitScore;
use crate::record::{Outcome, VerdictRecord};
use crate::rubric::{items, weights};
use crate::verdict::Verdict;

/// A trial's criterion weights and the weighted aggregate's agreement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LearnedWeights {
    /// How they were fitted, in the reader's words.
    pub method: &'static str,
    /// Each criterion's weight (none below zero), by name.
    pub weights: BTreeMap<String, f64>,
    pub intercept: f64,
    /// Each criterion's share of the dev verdicts whose value is not its most common one.
    pub varies: BTreeMap<String, f64>,
    /// Each column's Spearman correlation with the humans' labels on what it rates (a
    /// criterion's own; an item's criterion's), over the dev verdicts of the fit; none
    /// where it does not vary or the humans did not rate it.
    pub spearman: BTreeMap<String, Option<f64>>,
    /// Dev verdicts the fit was made on: those with a value for every criterion.
    pub n_fit: usize,
    /// The weighted aggregate on the dev split it was fitted on (in-sample: optimistic).
    pub dev: SplitScore,
    /// The weighted aggregate on the test split, where the trial judged it: the figure to
    /// compare with the unweighted aggregate's (the trial's own test score).
    pub test: Option<SplitScore>,
}

const METHOD: &str = "non-negative least squares with a free intercept, fitted on the dev split";

/// The criterion weights of `trial`, one of `summary`'s: none where its verdicts rate no
/// criterion, the item's label is not a rating, or the dev split has no more complete
/// verdicts than there are criteria.
pub fn learn(summary: &ExperimentSummary, trial: &TrialSummary) -> Option<LearnedWeights> {
    let names: Vec<&str> = summary
        .dataset
        .criteria
        .iter()
        .map(|c| c.name.as_str())
        .filter(|name| {
            trial
                .verdicts
                .iter()
                .any(|v| v.criteria.contains_key(*name))
        })
        .collect();
    learn_on(summary, trial, &names)
}

/// The weights of a checklist's yes/no items in `trial`, as [`learn`] fits criteria's: none
/// where it asks no items.
pub fn learn_items(summary: &ExperimentSummary, trial: &TrialSummary) -> Option<LearnedWeights> {
    let mut names: Vec<&str> = trial
        .verdicts
        .iter()
        .flat_map(|v| v.criteria.keys())
        .map(String::as_str)
        .filter(|name| items::of(name).is_some())
        .collect();
    names.sort_by_key(|name| items::of(name));
    names.dedup();
    learn_on(summary, trial, &names)
}

/// Weights of the columns `names` of `trial`'s verdicts' values (criteria, or items),
/// fitted to the item's label on the dev split.
fn learn_on(
    summary: &ExperimentSummary,
    trial: &TrialSummary,
    names: &[&str],
) -> Option<LearnedWeights> {
    let e = &summary.experiment;
    let scale = e.task_kind.scale()?;
    if names.is_empty() {
        return None;
    }
    // Each item's label by id, looked up once per verdict.
    let labels: HashMap<&str, Label> = summary
        .dataset
        .items
        .iter()
        .map(|i| (i.id.as_str(), i.human_label))
        .collect();
    let (dev_units, test_units) = (units(&e.judged), units(&e.test));
    let on = |units: &HashMap<&str, usize>| -> Vec<&VerdictRecord> {
        trial
            .verdicts
            .iter()
            .filter(|v| units.contains_key(v.item_id.as_str()))
            .collect()
    };
    let (dev, test) = (on(&dev_units), on(&test_units));
    let mut rows = Vec::new();
    let mut targets = Vec::new();
    let mut fitted = Vec::new();
    for v in &dev {
        let y = labels.get(v.item_id.as_str()).and_then(Label::as_rating);
        if let (Some(row), Some(y)) = (values(v, names), y) {
            rows.push(row);
            targets.push(y);
            fitted.push(v.item_id.as_str());
        }
    }
    if rows.len() <= names.len() {
        return None;
    }
    let fit = weights::fit(&rows, &targets)?;
    let score = |records: &[&VerdictRecord], units: &HashMap<&str, usize>| {
        let observations: Vec<_> = records
            .iter()
            .filter_map(|v| {
                let &human = labels.get(v.item_id.as_str())?;
                let weighted = weighted(v, names, &fit, scale);
                Some(weighted.observation(e.task_kind, human, units[v.item_id.as_str()]))
            })
            .collect();
        SplitScore::of(e.task_kind, &observations, &summary.bootstrap)
    };
    Some(LearnedWeights {
        method: METHOD,
        weights: names
            .iter()
            .zip(&fit.weights)
            .map(|(n, w)| (n.to_string(), *w))
            .collect(),
        intercept: fit.intercept,
        varies: names
            .iter()
            .enumerate()
            .map(|(column, n)| (n.to_string(), varies(&rows, column)))
            .collect(),
        spearman: names
            .iter()
            .enumerate()
            .map(|(column, n)| {
                let rated = items::criterion(n);
                let pairs: (Vec<f64>, Vec<f64>) = fitted
                    .iter()
                    .zip(&rows)
                    .filter_map(|(id, row)| {
                        let item = summary.dataset.items.iter().find(|i| i.id == *id)?;
                        Some((row[column], item.human_labels.get(rated)?.as_rating()?))
                    })
                    .unzip();
                (n.to_string(), spearman(&pairs.0, &pairs.1))
            })
            .collect(),
        n_fit: rows.len(),
        dev: score(&dev, &dev_units),
        test: (!test.is_empty()).then(|| score(&test, &test_units)),
    })
}

/// A verdict's value on each of `names`, where it has all of them.
fn values(v: &VerdictRecord, names: &[&str]) -> Option<Vec<f64>> {
    if !matches!(v.outcome, Outcome::Judged(Verdict::Parsed(_))) {
        return None;
    }
    names
        .iter()
        .map(|n| match v.criteria.get(*n)? {
            Verdict::Parsed(Label::Rating(x)) => Some(*x),
            _ => None,
        })
        .collect()
}

/// `v` with the weighted aggregate of its criteria as its verdict, kept on `scale`; a
/// verdict without every value keeps its failure (or its failed call).
fn weighted(
    v: &VerdictRecord,
    names: &[&str],
    fit: &weights::Fit,
    scale: (i64, i64),
) -> VerdictRecord {
    let outcome = match values(v, names) {
        Some(row) => {
            let x = fit.predict(&row).clamp(scale.0 as f64, scale.1 as f64);
            Outcome::Judged(Verdict::Parsed(Label::Rating(x)))
        }
        None => v.outcome.clone(),
    };
    VerdictRecord {
        outcome,
        distribution: None,
        belief: None,
        logprobs: None,
        ..v.clone()
    }
}

/// The share of `rows` whose value in `column` is not the column's most common value.
fn varies(rows: &[Vec<f64>], column: usize) -> f64 {
    let mut counts: HashMap<u64, usize> = HashMap::new();
    for row in rows {
        *counts.entry(row[column].to_bits()).or_default() += 1;
    }
    let most = counts.values().copied().max().unwrap_or(0);
    if rows.is_empty() {
        0.0
    } else {
        (rows.len() - most) as f64 / rows.len() as f64
    }
}

/// Each item's unit: its place in `ids`.
fn units(ids: &[String]) -> HashMap<&str, usize> {
    ids.iter()
        .enumerate()
        .map(|(u, id)| (id.as_str(), u))
        .collect()
}
