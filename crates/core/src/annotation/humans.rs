//! How much the people who labelled a dataset agree with each other, beside how much a
//! judge agrees with each of them: the human ceiling a judge is measured against.
//!
//! The raters are the dataset (its original labels, named [`DATASET`]), each annotator
//! of the queue, and each person whose own labels the dataset file keeps beside its
//! labels ([`crate::dataset::annotations`], named `NAME (file)`). Each pair of raters is
//! scored on the items both labelled, with every agreement metric of the task and its
//! bootstrap interval, the first rater taking the human's place; Krippendorff's alpha
//! (nominal for choices, interval for ratings, which may be means) runs over every rater
//! at once, missing labels simply absent. Where the file keeps its people's labels, the
//! dataset's label is theirs combined: it is not paired with them, and alpha runs over
//! the people alone. Beside them, a trial's agreement with each rater on the items that
//! rater labelled.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{Annotation, Judged};
use crate::dataset::{annotations, Dataset};
use crate::dataset::{Label, Task};
use crate::metrics::alpha::{self, Level};
use crate::metrics::{self, BootstrapSpec, Estimate, Qualities, Scored};

/// The name the dataset's own labels go by among the raters (no annotator may take it).
pub const DATASET: &str = "dataset";

/// One pair of raters on the items both labelled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RaterPair {
    pub first: String,
    pub second: String,
    pub n_items: usize,
    #[serde(flatten)]
    pub quality: Qualities,
}

/// A trial's agreement with one rater, on the items that rater labelled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct JudgeWithRater {
    pub rater: String,
    pub trial_id: i64,
    pub n_items: usize,
    #[serde(flatten)]
    pub quality: Qualities,
}

/// A rater and how many items they labelled.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Rater {
    pub name: String,
    pub n_items: usize,
}

/// The people's agreement and the judge's beside it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HumanAgreement {
    /// The dataset first, then the annotators by name.
    pub raters: Vec<Rater>,
    pub pairs: Vec<RaterPair>,
    /// Krippendorff's alpha over every rater (the people alone where the dataset's label
    /// combines theirs: `combined`), with its interval over items.
    pub level: Level,
    pub alpha: Estimate,
    /// How many raters alpha runs over.
    pub alpha_raters: usize,
    /// The dataset's label combines the labels its file keeps of each person: it is not
    /// paired with them, nor counted in alpha.
    pub combined: bool,
    /// Items labelled by two raters or more.
    pub n_shared: usize,
    pub judge: Vec<JudgeWithRater>,
}

/// Each rater's labels by item: the dataset's, then each annotator's (by name).
fn raters(dataset: &Dataset, annotations: &[Annotation]) -> Vec<(String, BTreeMap<String, Label>)> {
    let mut out = vec![(
        DATASET.to_string(),
        dataset
            .items
            .iter()
            .map(|i| (i.id.clone(), i.human_label))
            .collect(),
    )];
    let mut by_annotator: BTreeMap<&str, BTreeMap<String, Label>> = BTreeMap::new();
    for a in annotations {
        by_annotator
            .entry(&a.annotator)
            .or_default()
            .insert(a.item_id.clone(), a.label);
    }
    out.extend(by_annotator.into_iter().map(|(n, l)| (n.to_string(), l)));
    out
}

/// The labels the people of `dataset`'s file gave (on `criterion`, or the item's label),
/// as annotations of raters named `NAME (file)`.
pub fn from_file(dataset: &Dataset, criterion: Option<&str>) -> Vec<Annotation> {
    dataset
        .items
        .iter()
        .flat_map(|item| {
            annotations::of(item, criterion)
                .into_iter()
                .map(|raw| Annotation {
                    item_id: item.id.clone(),
                    annotator: format!("{} (file)", raw.annotator),
                    label: raw.label,
                    created_at: String::new(),
                })
        })
        .collect()
}

/// The raters' agreement and `judge`'s with each of them; none without annotations.
/// `dataset` carries its own labels; `annotations` are the queue's, `from_file` the labels
/// its file keeps of each person ([`from_file`]).
pub fn human_agreement(
    dataset: &Dataset,
    annotations: &[Annotation],
    from_file: &[Annotation],
    judge: Option<&Judged<'_>>,
    spec: &BootstrapSpec,
) -> Option<HumanAgreement> {
    if annotations.is_empty() && from_file.is_empty() {
        return None;
    }
    let task = dataset.task;
    let all: Vec<Annotation> = annotations.iter().chain(from_file).cloned().collect();
    let raters = raters(dataset, &all);
    // The dataset's label combines its file's people: neither paired with them nor
    // counted beside them.
    let combined = |name: &str| !from_file.is_empty() && name == DATASET;
    let of_file = |name: &str| from_file.iter().any(|a| a.annotator == name);
    let mut pairs = Vec::new();
    for (i, (first, a)) in raters.iter().enumerate() {
        for (second, b) in &raters[i + 1..] {
            if combined(first) && of_file(second) {
                continue;
            }
            let units: Vec<Vec<Scored>> = a
                .iter()
                .filter_map(|(id, la)| Some(vec![Scored::new(task, *la, Some(*b.get(id)?))]))
                .collect();
            if units.is_empty() {
                continue;
            }
            pairs.push(RaterPair {
                first: first.clone(),
                second: second.clone(),
                n_items: units.len(),
                quality: metrics::estimates(task, &units, spec),
            });
        }
    }
    let independent: Vec<(String, BTreeMap<String, Label>)> = raters
        .iter()
        .filter(|(name, _)| !combined(name))
        .cloned()
        .collect();
    let (level, alpha, n_shared) = alpha_over(task, &independent, spec);
    let judge = judge
        .map(|t| {
            raters
                .iter()
                .filter_map(|(name, labels)| judge_with(task, t, name, labels, spec))
                .collect()
        })
        .unwrap_or_default();
    Some(HumanAgreement {
        raters: raters
            .iter()
            .map(|(name, l)| Rater {
                name: name.clone(),
                n_items: l.len(),
            })
            .collect(),
        pairs,
        level,
        alpha,
        alpha_raters: independent.len(),
        combined: !from_file.is_empty(),
        n_shared,
        judge,
    })
}

/// Krippendorff's alpha over every rater, bootstrapped over the items.
fn alpha_over(
    task: Task,
    raters: &[(String, BTreeMap<String, Label>)],
    spec: &BootstrapSpec,
) -> (Level, Estimate, usize) {
    let (level, value): (Level, fn(Task, Label) -> f64) = match task {
        Task::Pairwise => (Level::Nominal, |t, l| {
            Scored::new(t, l, None).human.0 as f64
        }),
        Task::Single { .. } => (Level::Interval, |t, l| Scored::new(t, l, None).human.1),
    };
    let mut units: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (_, labels) in raters {
        for (id, l) in labels {
            units.entry(id).or_default().push(value(task, *l));
        }
    }
    let units: Vec<Vec<f64>> = units.into_values().filter(|u| u.len() >= 2).collect();
    let point = alpha::krippendorff_alpha(&units, level);
    let mut resampled = Vec::new();
    if spec.resamples > 0 && point.is_some() {
        spec.for_each_resample(units.len(), |idx| {
            let drawn: Vec<&Vec<f64>> = idx.iter().map(|&i| &units[i]).collect();
            resampled.push(alpha::krippendorff_alpha(&drawn, level));
        });
    }
    let ci = if resampled.is_empty() {
        None
    } else {
        spec.interval(resampled)
    };
    (level, Estimate { value: point, ci }, units.len())
}

/// A trial's agreement with one rater on the items the rater labelled (its calls on them,
/// of either split).
fn judge_with(
    task: Task,
    trial: &Judged<'_>,
    rater: &str,
    labels: &BTreeMap<String, Label>,
    spec: &BootstrapSpec,
) -> Option<JudgeWithRater> {
    let mut unit_of: BTreeMap<&str, usize> = BTreeMap::new();
    let observations: Vec<metrics::Observation> = trial
        .records
        .iter()
        .filter_map(|v| {
            let human = *labels.get(&v.item_id)?;
            let next = unit_of.len();
            let unit = *unit_of.entry(v.item_id.as_str()).or_insert(next);
            Some(v.observation(task, trial.order, human, unit))
        })
        .collect();
    let units = metrics::scored_units(task, &metrics::group(&observations));
    if units.is_empty() {
        return None;
    }
    Some(JudgeWithRater {
        rater: rater.to_string(),
        trial_id: trial.trial_id,
        n_items: units.len(),
        quality: metrics::estimates(task, &units, spec),
    })
}
