//! One criterion of a rubric experiment read as an experiment of its own: the dataset
//! labelled with the humans' labels on that criterion, each trial's calls reduced to their
//! verdict on it (a rubric call's value for the criterion, a checklist call that asks it).
//! Every metric, interval, front and output then works on a criterion as it does on the
//! item's one label; [`scores`] keeps each trial's agreement per criterion for the
//! summary of the whole experiment.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use super::{ExperimentSummary, StoredExperiment, StoredTrial, TrialSummary};
use crate::dataset::{Criterion, Dataset, Item};
use crate::metrics::{BootstrapSpec, SplitScore};
use crate::record::{Outcome, VerdictRecord};
use crate::rubric::{items, Asked};
use crate::verdict::Verdict;

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
    /// Where the criterion's calls were read exactly (a checklist's): its agreement
    /// expected from their distributions, G-Eval's correlations among them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expected: Option<crate::metrics::Expected>,
    /// The same on the test split, where the trial judged it.
    pub test: Option<SplitScore>,
}

impl CriterionScore {
    fn of(trial: &TrialSummary) -> CriterionScore {
        CriterionScore {
            dev: trial.split_scores.dev.clone(),
            parse_failure_rate: trial.metrics.parse_failure_rate,
            expected: trial.metrics.expected.clone(),
            test: trial.split_scores.test.clone(),
        }
    }
}

/// Whether a record has a verdict on the criterion `name` (a checklist's yes/no item of
/// it counts).
fn asks(record: &VerdictRecord, name: &str) -> bool {
    items::criterion(&record.criterion) == name || record.criteria.contains_key(name)
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
    let all = dataset.criteria.clone();
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
            let verdicts = match asked {
                true => combined(&all, Vec::clone(&t.verdicts)),
                false => Vec::new(),
            };
            StoredTrial {
                verdicts: Arc::new(verdicts.iter().filter_map(|v| on_record(v, name)).collect()),
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
        (Outcome::Judged(_), Some(verdict)) => Outcome::Judged(*verdict),
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

/// `trials` with their checklists' calls gathered per verdict ([`gather`]), on the scale
/// of `dataset`'s item labels.
pub fn gathered(dataset: &Dataset, trials: Vec<StoredTrial>) -> Vec<StoredTrial> {
    let Some(scale) = dataset.task.scale() else {
        return trials;
    };
    trials
        .into_iter()
        .map(|t| StoredTrial {
            verdicts: Arc::new(gather(
                &dataset.criteria,
                scale,
                Arc::unwrap_or_clone(t.verdicts),
            )),
            ..t
        })
        .collect()
}

/// A trial's calls with a checklist's calls gathered per verdict: the calls of one (item,
/// repeat, answer order), one per criterion, become one call as a rubric's would be — its
/// value per criterion, the unweighted aggregate of those as its verdict on the item's
/// `scale` ([`crate::rubric::aggregate`]), and what its calls took together (tokens, cost
/// and latency summed, as calls made one after another; the most attempts). A verdict one
/// of whose calls failed is a failed call; one whose checklist is not complete yet is left
/// out, as a call not made. Calls that ask every criterion at once are kept as they are.
/// `criteria` are the dataset's, whose order the aggregate follows.
pub fn gather(
    criteria: &[Criterion],
    scale: (i64, i64),
    verdicts: Vec<VerdictRecord>,
) -> Vec<VerdictRecord> {
    if verdicts.iter().all(|v| v.criterion.is_empty()) {
        return verdicts;
    }
    let verdicts = combined(criteria, verdicts);
    let asked: Vec<Asked> = criteria
        .iter()
        .filter(|c| verdicts.iter().any(|v| v.criterion == c.name))
        .map(|c| Asked {
            name: c.name.clone(),
            definition: String::new(),
            task: c.task,
            items: Vec::new(),
            item: None,
        })
        .collect();
    let mut calls: BTreeMap<(String, u32, bool), Vec<VerdictRecord>> = BTreeMap::new();
    let mut out = Vec::new();
    for v in verdicts {
        if v.criterion.is_empty() {
            out.push(v);
        } else {
            let key = (v.item_id.clone(), v.repeat, v.swapped);
            calls.entry(key).or_default().push(v);
        }
    }
    for (_, mut checklist) in calls {
        if !asked
            .iter()
            .all(|a| checklist.iter().any(|v| v.criterion == a.name))
        {
            continue;
        }
        checklist.sort_by_key(|v| asked.iter().position(|a| a.name == v.criterion));
        out.push(one_call(&asked, scale, checklist));
    }
    out.sort_by(|a, b| (&a.item_id, a.repeat, a.swapped).cmp(&(&b.item_id, b.repeat, b.swapped)));
    out
}

/// A complete checklist's calls, in `asked`'s order, as one call ([`gather`]).
fn one_call(asked: &[Asked], scale: (i64, i64), calls: Vec<VerdictRecord>) -> VerdictRecord {
    // Each criterion's value, and a checklist item's answer where its criterion has items.
    let criteria: BTreeMap<String, Verdict> = calls
        .iter()
        .filter_map(|v| Some((v.criterion.clone(), v.outcome.verdict()?)))
        .chain(calls.iter().flat_map(|v| v.criteria.clone()))
        .collect();
    let outcome = match calls.iter().find_map(|v| v.outcome.error()) {
        Some(e) => Outcome::CallFailed(e.to_string()),
        None => Outcome::Judged(crate::rubric::aggregate(asked, &criteria, scale)),
    };
    VerdictRecord {
        criterion: String::new(),
        outcome,
        criteria,
        ..summed(&calls)
    }
}

/// Calls made one after another for one verdict, as one: the first's identity, what they
/// took together (tokens, cost and latency summed; the most attempts) and their outputs a
/// line each, `NAME: output`.
fn summed(calls: &[VerdictRecord]) -> VerdictRecord {
    let raw_output = calls
        .iter()
        .map(|v| Some(format!("{}: {}", v.criterion, v.raw_output.as_deref()?)))
        .collect::<Option<Vec<String>>>()
        .map(|lines| lines.join("\n"));
    let sum = |f: fn(&VerdictRecord) -> Option<f64>| -> Option<f64> { calls.iter().map(f).sum() };
    let first = &calls[0];
    VerdictRecord {
        raw_output,
        prompt_tokens: calls.iter().map(|v| v.prompt_tokens).sum(),
        completion_tokens: calls.iter().map(|v| v.completion_tokens).sum(),
        latency_ms: sum(|v| v.latency_ms),
        cost_usd: sum(|v| v.cost_usd),
        cached_tokens: calls.iter().map(|v| v.cached_tokens).sum(),
        attempts: calls.iter().map(|v| v.attempts).max().unwrap_or(1),
        logprobs: None,
        cache_hit: calls.iter().all(|v| v.cache_hit),
        exact: false,
        distribution: None,
        belief: None,
        ..first.clone()
    }
}

/// A trial's calls with each checklist criterion's yes/no item calls combined into one
/// call on the criterion ([`items::combine`]'s rule; what the calls took, summed). A
/// criterion's calls on one (item, repeat, answer order) are complete when they answer
/// every item the trial asks of it; an incomplete set is left out, as calls not made. An
/// item call that failed fails the criterion's call.
fn combined(criteria: &[Criterion], verdicts: Vec<VerdictRecord>) -> Vec<VerdictRecord> {
    let item_of = |v: &VerdictRecord| {
        let (name, k) = items::of(&v.criterion)?;
        let c = criteria.iter().find(|c| c.name == name)?;
        Some((c, k))
    };
    if !verdicts.iter().any(|v| item_of(v).is_some()) {
        return verdicts;
    }
    // Every item the trial asks of each criterion.
    let mut asked: BTreeMap<&str, std::collections::BTreeSet<usize>> = BTreeMap::new();
    for (c, k) in verdicts.iter().filter_map(item_of) {
        asked.entry(c.name.as_str()).or_default().insert(k);
    }
    // By (item, repeat, answer order, criterion): each item call with its number.
    type Set<'a> = BTreeMap<(String, u32, bool, &'a str), Vec<(usize, VerdictRecord)>>;
    let mut sets: Set = BTreeMap::new();
    let mut out = Vec::new();
    for v in &verdicts {
        match item_of(v) {
            Some((c, k)) => sets
                .entry((v.item_id.clone(), v.repeat, v.swapped, c.name.as_str()))
                .or_default()
                .push((k, v.clone())),
            None => out.push(v.clone()),
        }
    }
    for ((_, _, _, name), mut calls) in sets {
        if calls.len() != asked[name].len() {
            continue;
        }
        calls.sort_by_key(|(k, _)| *k);
        let calls: Vec<VerdictRecord> = calls.into_iter().map(|(_, v)| v).collect();
        let task = criteria
            .iter()
            .find(|c| c.name == name)
            .expect("found")
            .task;
        let answers: Vec<Verdict> = calls.iter().filter_map(|v| v.outcome.verdict()).collect();
        let outcome = match calls.iter().find_map(|v| v.outcome.error()) {
            Some(e) => Outcome::CallFailed(e.to_string()),
            None => Outcome::Judged(items::combine(task, &answers)),
        };
        // Its items' answers stay with it, for their weights ([`super::weighted`]).
        let answers = calls
            .iter()
            .filter_map(|v| Some((v.criterion.clone(), v.outcome.verdict()?)))
            .collect();
        out.push(VerdictRecord {
            criterion: name.to_string(),
            outcome,
            criteria: answers,
            ..summed(&calls)
        });
    }
    out
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{Label, Task};
    use crate::verdict::FailureKind;

    fn criterion(name: &str, lo: i64, hi: i64) -> Criterion {
        Criterion {
            name: name.into(),
            task: Task::Single {
                scale_min: lo,
                scale_max: hi,
            },
        }
    }

    fn call(item: &str, criterion: &str, outcome: Outcome) -> VerdictRecord {
        VerdictRecord {
            criterion: criterion.into(),
            raw_output: Some("x".into()),
            prompt_tokens: 100,
            completion_tokens: 2,
            latency_ms: Some(50.0),
            ..VerdictRecord::new(1, item, 0, false, 7, "h", outcome)
        }
    }

    fn rated(x: f64) -> Outcome {
        Outcome::Judged(Verdict::Parsed(Label::Rating(x)))
    }

    #[test]
    fn a_checklist_is_one_call_per_verdict() {
        let criteria = [criterion("coherence", 1, 3), criterion("grounded", 0, 1)];
        let verdicts = vec![
            call("a", "coherence", rated(3.0)),
            call("a", "grounded", rated(0.0)),
            // Half a checklist: not judged yet.
            call("b", "coherence", rated(2.0)),
            call(
                "c",
                "coherence",
                Outcome::Judged(Verdict::Failed(FailureKind::NoLabel)),
            ),
            call("c", "grounded", rated(1.0)),
            call("d", "coherence", rated(1.0)),
            call("d", "grounded", Outcome::CallFailed("timeout".into())),
        ];
        let calls = gather(&criteria, (1, 5), verdicts);
        let ids: Vec<&str> = calls.iter().map(|v| v.item_id.as_str()).collect();
        assert_eq!(ids, ["a", "c", "d"]);
        let a = &calls[0];
        // The mean of 100% and 0% of each scale, on 1-5.
        assert_eq!(a.outcome, rated(3.0));
        assert_eq!(a.criteria["coherence"], Verdict::Parsed(Label::Rating(3.0)));
        assert_eq!((a.prompt_tokens, a.completion_tokens), (200, 4));
        assert_eq!(a.latency_ms, Some(100.0));
        assert_eq!(a.raw_output.as_deref(), Some("coherence: x\ngrounded: x"));
        assert!(a.criterion.is_empty());
        // A criterion that did not parse fails the verdict, the other keeps its value.
        assert_eq!(
            calls[1].outcome,
            Outcome::Judged(Verdict::Failed(FailureKind::NoLabel))
        );
        assert_eq!(
            calls[1].criteria["grounded"],
            Verdict::Parsed(Label::Rating(1.0))
        );
        assert_eq!(calls[2].outcome, Outcome::CallFailed("timeout".into()));
        // Calls that ask every criterion at once are as they were.
        let rubric = vec![call("a", "", rated(2.0))];
        assert_eq!(gather(&criteria, (1, 5), rubric.clone()), rubric);
    }
}
