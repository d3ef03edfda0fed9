//! One criterion of a rubric experiment read as an experiment of its own: the dataset
//! labelled with the humans' labels on that criterion, each trial's calls reduced to their
//! verdict on it (a rubric call's value for the criterion, a checklist call that asks it).
//! Every metric, interval, front and output then works on a criterion as it does on the
//! item's one label; [`scores`] keeps each trial's agreement per criterion for the
//! summary of the whole experiment.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{ExperimentSummary, StoredExperiment, StoredTrial, TrialSummary};
use crate::dataset::{Criterion, Dataset, Item};
use crate::metrics::{BootstrapSpec, SplitScore};
use crate::record::{Outcome, VerdictRecord};

/// A trial's agreement with the humans on one criterion.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CriterionScore {
    /// On the dev split: items whose call answered (`n`, an answer that gave no value for
    /// the criterion included), items whose call failed (`n_errors`), and every agreement
    /// metric of the criterion's scale with its interval.
    #[serde(flatten)]
    pub dev: SplitScore,
    /// Share of its calls whose answer gave no value for the criterion.
    pub parse_failure_rate: Option<f64>,
    /// The same on the test split, where the trial judged it.
    pub test: Option<SplitScore>,
}

impl CriterionScore {
    fn of(trial: &TrialSummary) -> CriterionScore {
        CriterionScore {
            dev: trial.split_scores.dev.clone(),
            parse_failure_rate: trial.metrics.parse_failure_rate,
            test: trial.split_scores.test.clone(),
        }
    }
}

/// Whether a record has a verdict on the criterion `name`.
fn asks(record: &VerdictRecord, name: &str) -> bool {
    record.criterion == name || record.criteria.contains_key(name)
}

/// The dataset's criteria that some trial's calls ask, in the dataset's order.
pub fn asked(dataset: &Dataset, trials: &[StoredTrial]) -> Vec<Criterion> {
    dataset
        .criteria
        .iter()
        .filter(|c| {
            trials
                .iter()
                .any(|t| t.verdicts.iter().any(|v| asks(v, &c.name)))
        })
        .cloned()
        .collect()
}

/// `dataset` with its labels on `criterion` as the items' labels (an item the humans did
/// not rate on it has none, and no metric counts it), and `trials` with their verdicts on
/// it. A trial that never asks it keeps no calls.
pub fn on(
    dataset: &Dataset,
    trials: &[StoredTrial],
    criterion: &Criterion,
) -> (Dataset, Vec<StoredTrial>) {
    let name = criterion.name.as_str();
    let (mut items, mut unlabelled) = (Vec::new(), dataset.unlabelled.clone());
    for item in &dataset.items {
        let mut item = item.clone();
        let label = item.human_labels.remove(name);
        item.human_labels.clear();
        match label {
            Some(label) => items.push(item.with_label(label)),
            None => unlabelled.push(item.with_label(())),
        }
    }
    let dataset = Dataset {
        task: criterion.task,
        items,
        unlabelled: unlabelled
            .into_iter()
            .map(|mut i: Item<()>| {
                i.human_labels.clear();
                i
            })
            .collect(),
        criteria: Vec::new(),
        ..dataset.clone()
    };
    let trials = trials
        .iter()
        .map(|t| {
            let asked = t.verdicts.iter().any(|v| asks(v, name));
            StoredTrial {
                verdicts: t
                    .verdicts
                    .iter()
                    .filter(|_| asked)
                    .filter_map(|v| on_record(v, name))
                    .collect(),
                ..t.clone()
            }
        })
        .collect();
    (dataset, trials)
}

/// A call of a trial that asks `name`, as a call on it: a checklist call asking it as it
/// is, a rubric call with its value for it, a rubric call that failed as a failed call; a
/// call asking another criterion, none.
fn on_record(record: &VerdictRecord, name: &str) -> Option<VerdictRecord> {
    if record.criterion == name {
        return Some(VerdictRecord {
            criterion: String::new(),
            ..record.clone()
        });
    }
    if !record.criterion.is_empty() {
        return None;
    }
    let outcome = match (&record.outcome, record.criteria.get(name)) {
        (Outcome::CallFailed(e), _) => Outcome::CallFailed(e.clone()),
        (Outcome::Judged(_), Some(verdict)) => Outcome::Judged(verdict.clone()),
        // A rubric call whose answer was never read per criterion has no verdict on it.
        (Outcome::Judged(_), None) => return None,
    };
    // The call's distribution and belief are its aggregate's, not the criterion's.
    Some(VerdictRecord {
        outcome,
        exact: false,
        distribution: None,
        belief: None,
        criteria: BTreeMap::new(),
        ..record.clone()
    })
}

/// Each trial's agreement on each criterion some trial asks, by criterion name, in
/// `trials`' order; a trial that asks none has an empty map.
pub fn scores(
    stored: &StoredExperiment,
    dataset: &Dataset,
    trials: &[StoredTrial],
    bootstrap: &BootstrapSpec,
) -> Vec<BTreeMap<String, CriterionScore>> {
    let mut scores = vec![BTreeMap::new(); trials.len()];
    for criterion in asked(dataset, trials) {
        let (d, t) = on(dataset, trials, &criterion);
        let asking: Vec<bool> = t.iter().map(|t| !t.verdicts.is_empty()).collect();
        let summary = ExperimentSummary::new(stored.clone(), d, t, bootstrap);
        for (i, trial) in summary.trials.iter().enumerate() {
            if asking[i] {
                scores[i].insert(criterion.name.clone(), CriterionScore::of(trial));
            }
        }
    }
    scores
}
