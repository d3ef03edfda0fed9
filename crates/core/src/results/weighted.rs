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
use crate::dataset::{Label, Task};
use crate::metrics::agreement::spearman;
use crate::metrics::SplitScore;
use crate::record::{Outcome, VerdictRecord};
use crate::rubric::{items, weights};
use crate::sweep::Order;
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
    /// A checklist item's yes/no question, by its name (`NAME/k`), where the template that
    /// asked it is stored.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub questions: BTreeMap<String, String>,
    /// Dev verdicts the fit was made on: those with a value for every criterion.
    pub n_fit: usize,
    /// The weighted aggregate on the dev split it was fitted on (in-sample: optimistic).
    pub dev: SplitScore,
    /// The weighted aggregate on the test split, where the trial judged it: the figure to
    /// compare with the unweighted aggregate's (the trial's own test score).
    pub test: Option<SplitScore>,
    /// Criteria only: the minimum aggregate — each verdict's lowest criterion, as a share
    /// of its scale, put on the item's — on the dev split and on the test split: a
    /// verdict is as good as its worst criterion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub minimum: Option<(SplitScore, Option<SplitScore>)>,
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
    // Nothing to weigh: no need to index the verdicts (a million of them took a second).
    if names.is_empty() || summary.experiment.task_kind.scale().is_none() {
        return None;
    }
    let scoring = Scoring::new(summary, trial);
    let mut learned = learn_on(&scoring, &names)?;
    let tasks: Vec<Task> = names
        .iter()
        .filter_map(|n| summary.dataset.criteria.iter().find(|c| c.name == *n))
        .map(|c| c.task)
        .collect();
    let lowest = |row: &[f64]| -> Option<f64> {
        row.iter()
            .zip(&tasks)
            .map(|(x, task)| {
                let (lo, hi) = task.scale()?;
                Some((x - lo as f64) / (hi - lo) as f64)
            })
            .try_fold(f64::INFINITY, |low, share| Some(low.min(share?)))
    };
    let scale = summary.experiment.task_kind.scale()?;
    let minimum = |v: &VerdictRecord| {
        let share = lowest(&values(v, &names)?)?;
        Some(scale.0 as f64 + share * (scale.1 - scale.0) as f64)
    };
    learned.minimum = Some((scoring.dev(&minimum), scoring.test(&minimum)));
    Some(learned)
}

/// A trial's verdicts with another aggregate of their values as their verdict, scored on
/// the dev split and the test split against the item's label.
struct Scoring<'a> {
    summary: &'a ExperimentSummary,
    labels: HashMap<&'a str, Label>,
    dev: (Vec<&'a VerdictRecord>, HashMap<&'a str, usize>),
    test: (Vec<&'a VerdictRecord>, HashMap<&'a str, usize>),
}

impl<'a> Scoring<'a> {
    fn new(summary: &'a ExperimentSummary, trial: &'a TrialSummary) -> Scoring<'a> {
        let e = &summary.experiment;
        let on = |ids: &'a [String]| {
            let units = units(ids);
            let records = trial
                .verdicts
                .iter()
                .filter(|v| units.contains_key(v.item_id.as_str()))
                .collect();
            (records, units)
        };
        Scoring {
            summary,
            // Each item's label by id, looked up once per verdict.
            labels: summary
                .dataset
                .items
                .iter()
                .map(|i| (i.id.as_str(), i.human_label))
                .collect(),
            dev: on(&e.judged),
            test: on(&e.test),
        }
    }

    /// The verdicts of `split` with `aggregate`'s value as their verdict, kept on the
    /// item's scale; a verdict without one keeps its failure (or its failed call).
    fn score(
        &self,
        (records, units): &(Vec<&VerdictRecord>, HashMap<&str, usize>),
        aggregate: &dyn Fn(&VerdictRecord) -> Option<f64>,
    ) -> SplitScore {
        let e = &self.summary.experiment;
        let scale = e.task_kind.scale().unwrap_or((0, 1));
        let observations: Vec<_> = records
            .iter()
            .filter_map(|v| {
                let &human = self.labels.get(v.item_id.as_str())?;
                let outcome = match aggregate(v) {
                    Some(x) => Outcome::Judged(Verdict::Parsed(Label::Rating(
                        x.clamp(scale.0 as f64, scale.1 as f64),
                    ))),
                    None => v.outcome.clone(),
                };
                let record = VerdictRecord {
                    outcome,
                    distribution: None,
                    belief: None,
                    logprobs: None,
                    ..(*v).clone()
                };
                Some(record.observation(e.task_kind, Order::Ab, human, units[v.item_id.as_str()]))
            })
            .collect();
        SplitScore::of(e.task_kind, &observations, &self.summary.bootstrap)
    }

    fn dev(&self, aggregate: &dyn Fn(&VerdictRecord) -> Option<f64>) -> SplitScore {
        self.score(&self.dev, aggregate)
    }

    /// None where the trial judged no test item.
    fn test(&self, aggregate: &dyn Fn(&VerdictRecord) -> Option<f64>) -> Option<SplitScore> {
        (!self.test.0.is_empty()).then(|| self.score(&self.test, aggregate))
    }
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
    if names.is_empty() || summary.experiment.task_kind.scale().is_none() {
        return None;
    }
    learn_on(&Scoring::new(summary, trial), &names)
}

/// Weights of the columns `names` of a trial's verdicts' values (criteria, or items),
/// fitted to the item's label on the dev split.
fn learn_on(scoring: &Scoring<'_>, names: &[&str]) -> Option<LearnedWeights> {
    let summary = scoring.summary;
    summary.experiment.task_kind.scale()?;
    if names.is_empty() {
        return None;
    }
    let mut rows = Vec::new();
    let mut targets = Vec::new();
    let mut fitted = Vec::new();
    for v in &scoring.dev.0 {
        let y = scoring
            .labels
            .get(v.item_id.as_str())
            .and_then(Label::as_rating);
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
    let weighted = |v: &VerdictRecord| Some(fit.predict(&values(v, names)?));
    let by_id: HashMap<&str, &crate::dataset::Item> = summary
        .dataset
        .items
        .iter()
        .map(|i| (i.id.as_str(), i))
        .collect();
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
                // Against the humans' label on what it rates, where they rated it.
                let rated = items::criterion(n);
                let (x, y): (Vec<f64>, Vec<f64>) = rows
                    .iter()
                    .zip(&fitted)
                    .filter_map(|(row, id)| {
                        let human = by_id.get(id)?.human_labels.get(rated)?.as_rating()?;
                        Some((row[column], human))
                    })
                    .unzip();
                (n.to_string(), spearman(&x, &y))
            })
            .collect(),
        n_fit: rows.len(),
        questions: BTreeMap::new(),
        dev: scoring.dev(&weighted),
        test: scoring.test(&weighted),
        minimum: None,
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
