//! The labelling queue: the items of an experiment's dataset, those the trials disagree on
//! most first, so that a person's labels go where they tell the configurations apart.
//!
//! Every trial's verdict on an item and repeat is a vote (both answer orders combined as
//! the metrics combine them; a parse failure or a failed call is no vote). Pairwise items
//! are ranked by vote entropy (in bits: 0 when every vote agrees, log2 3 when A, B and tie
//! split evenly), ratings by the spread of the votes (their standard deviation). An item
//! with fewer than two votes has no disagreement to rank by and comes after those that do;
//! ties keep the dataset's order.

use std::collections::{BTreeMap, HashMap, HashSet};

use serde::Serialize;

use super::{Annotation, Judged};
use crate::dataset::{Choice, Dataset, Label, Task};
use crate::metrics;
use crate::record::VerdictRecord;
use crate::sweep::Order;

/// One trial's verdicts on one item (a verdict per repeat; `None`: a parse failure or a
/// failed call).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrialVotes {
    pub trial_id: i64,
    pub verdicts: Vec<Option<Label>>,
}

/// An item's place in the queue.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Queued {
    pub item_id: String,
    /// Vote entropy in bits (pairwise) or the votes' standard deviation (ratings); none
    /// with fewer than two votes.
    pub disagreement: Option<f64>,
    pub n_votes: usize,
    /// The item has a label in the dataset.
    pub labelled: bool,
    /// Each trial's verdicts on it, shown once the label is given.
    pub votes: Vec<TrialVotes>,
}

/// Which items the queue holds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only items without a label in the dataset.
    pub unlabelled_only: bool,
}

/// How much `votes` disagree; none with fewer than two.
pub fn disagreement(task: Task, votes: &[Label]) -> Option<f64> {
    if votes.len() < 2 {
        return None;
    }
    let n = votes.len() as f64;
    Some(match task {
        Task::Pairwise => {
            let mut counts: BTreeMap<Choice, f64> = BTreeMap::new();
            for v in votes {
                if let Label::Choice(c) = v {
                    *counts.entry(*c).or_default() += 1.0;
                }
            }
            let h: f64 = counts
                .values()
                .map(|c| {
                    let p = c / n;
                    -p * p.log2()
                })
                .sum();
            h.max(0.0)
        }
        Task::Single { .. } => {
            let r: Vec<f64> = votes.iter().filter_map(Label::as_rating).collect();
            let mean = r.iter().sum::<f64>() / n;
            (r.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt()
        }
    })
}

/// A trial's verdicts by item: one per call, none where it failed.
type Votes = BTreeMap<String, Vec<Option<Label>>>;

/// A trial's verdicts per item and repeat, both orders combined.
fn trial_votes(task: Task, order: Order, records: &[&VerdictRecord]) -> Votes {
    // The human label does not enter a verdict; any label will do to group the calls.
    let placeholder = match task {
        Task::Pairwise => Label::Choice(Choice::A),
        Task::Single { scale_min, .. } => Label::Rating(scale_min as f64),
    };
    let mut ids: Vec<&str> = Vec::new();
    let mut unit_of: HashMap<&str, usize> = HashMap::new();
    let observations: Vec<metrics::Observation> = records
        .iter()
        .map(|r| {
            let unit = *unit_of.entry(r.item_id.as_str()).or_insert_with(|| {
                ids.push(r.item_id.as_str());
                ids.len() - 1
            });
            r.observation(task, order, placeholder, unit)
        })
        .collect();
    let mut out: BTreeMap<String, Vec<Option<Label>>> = BTreeMap::new();
    let mut groups = metrics::group(&observations);
    groups.sort_by_key(|g| (g.unit, g.calls[0].repeat));
    for g in groups {
        out.entry(ids[g.unit].to_string())
            .or_default()
            .push(g.verdict.and_then(|v| v.label()));
    }
    out
}

/// The queue of `dataset` for `annotator`: every item they have not labelled (with
/// `filter`, only those without a label in the dataset), ranked by the disagreement of
/// `trials`. `dataset` carries its own labels, so that it says which items have one.
pub fn queue(
    dataset: &Dataset,
    trials: &[Judged<'_>],
    annotations: &[Annotation],
    annotator: &str,
    filter: Filter,
) -> Vec<Queued> {
    let task = dataset.task;
    let done: HashSet<&str> = annotations
        .iter()
        .filter(|a| a.annotator == annotator)
        .map(|a| a.item_id.as_str())
        .collect();
    let per_trial: Vec<(i64, Votes)> = trials
        .iter()
        .map(|t| (t.trial_id, trial_votes(task, t.order, &t.records)))
        .collect();
    let mut queued: Vec<(usize, Queued)> = items(dataset)
        .filter(|(id, labelled)| !(done.contains(id) || filter.unlabelled_only && *labelled))
        .enumerate()
        .map(|(order, (id, labelled))| {
            let votes: Vec<TrialVotes> = per_trial
                .iter()
                .filter_map(|(trial_id, by_item)| {
                    Some(TrialVotes {
                        trial_id: *trial_id,
                        verdicts: by_item.get(id)?.clone(),
                    })
                })
                .collect();
            let given: Vec<Label> = votes
                .iter()
                .flat_map(|v| v.verdicts.iter().flatten().copied())
                .collect();
            (
                order,
                Queued {
                    item_id: id.to_string(),
                    disagreement: disagreement(task, &given),
                    n_votes: given.len(),
                    labelled,
                    votes,
                },
            )
        })
        .collect();
    queued.sort_by(|(oa, a), (ob, b)| {
        let key = |q: &Queued| q.disagreement.map_or(f64::NEG_INFINITY, |d| d);
        key(b)
            .total_cmp(&key(a))
            .then(b.n_votes.cmp(&a.n_votes))
            .then(oa.cmp(ob))
    });
    queued.into_iter().map(|(_, q)| q).collect()
}

/// Every item of `dataset` (labelled, then unlabelled) with whether it has a label.
fn items(dataset: &Dataset) -> impl Iterator<Item = (&str, bool)> {
    dataset
        .items
        .iter()
        .map(|i| (i.id.as_str(), true))
        .chain(dataset.unlabelled.iter().map(|i| (i.id.as_str(), false)))
}
