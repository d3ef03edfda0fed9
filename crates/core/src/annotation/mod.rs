//! Labels that people give in the labelling queue, kept beside the dataset's own.
//!
//! An [`Annotation`] is one annotator's label of one item, stored apart from the dataset:
//! it never replaces an item's original label. The metrics are computed against the labels
//! that [`Labels`] names: the dataset's (the default), the annotations (one annotator's, or
//! every annotator's combined: a majority, a split vote a tie, for choices; the mean for
//! ratings), or both (an item's annotation where it has one, else its original label).
//! [`relabel`] makes the dataset the metrics see; an item without a label of the chosen
//! kind is an item without a label, which no metric counts.
//!
//! A label is given with one key ([`Key`]): `a`, `b` or `t` for a pairwise choice, a digit
//! on a rating scale whose ends are digits. [`queue`] ranks the items by how much the
//! trials disagree on them; [`humans`] says how much the people agree with each other and
//! with the judge (the human ceiling); [`export_jsonl`] writes the labels in the dataset
//! schema, so that they import as a dataset of their own.

pub mod humans;
pub mod queue;

use std::collections::{BTreeMap, BTreeSet, HashMap};

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::dataset::{Choice, Dataset, Item, Label, Task};
use crate::record::VerdictRecord;

/// A trial's stored calls, on items with a label and without: what the queue ranks by and
/// the human ceiling sets beside the people.
pub struct Judged<'a> {
    pub trial_id: i64,
    /// How its two answer orders' calls combine into a verdict.
    pub order: crate::sweep::Order,
    pub records: Vec<&'a VerdictRecord>,
}

/// One annotator's label of one item.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Annotation {
    pub item_id: String,
    pub annotator: String,
    pub label: Label,
    /// When it was given (RFC 3339, UTC).
    pub created_at: String,
}

/// Whose labels the metrics are computed against.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Labels {
    /// The dataset's own labels.
    #[default]
    Original,
    /// The annotations only: `annotator`'s, or every annotator's combined.
    Annotations { annotator: Option<String> },
    /// An item's annotation where it has one, else its original label.
    Both { annotator: Option<String> },
}

/// Why labels cannot be given or used as asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnnotationError {
    #[error("{0:?} is not a label of a {1} dataset (expected {2})")]
    NotALabel(String, String, String),
    #[error("no item {0:?} in the dataset")]
    UnknownItem(String),
    #[error("nobody named {0:?} has labelled this dataset (annotators: {1})")]
    UnknownAnnotator(String, String),
    #[error("the annotator's name must not be empty")]
    NoAnnotator,
    #[error("{0:?} names the dataset's own labels; label under another name")]
    ReservedAnnotator(String),
    #[error("{0:?} is not a kind of labels (expected original, annotations or both)")]
    NotAKind(String),
}

impl Labels {
    /// `original`, `annotations` or `both`, for `annotator` (none: everyone's).
    pub fn parse(kind: &str, annotator: Option<String>) -> Result<Labels, AnnotationError> {
        let annotator = annotator.filter(|a| !a.trim().is_empty());
        match kind {
            "original" => Ok(Labels::Original),
            "annotations" => Ok(Labels::Annotations { annotator }),
            "both" => Ok(Labels::Both { annotator }),
            other => Err(AnnotationError::NotAKind(other.to_string())),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Labels::Original => "original",
            Labels::Annotations { .. } => "annotations",
            Labels::Both { .. } => "both",
        }
    }

    pub fn annotator(&self) -> Option<&str> {
        match self {
            Labels::Original => None,
            Labels::Annotations { annotator } | Labels::Both { annotator } => annotator.as_deref(),
        }
    }

    /// What the metrics are against, in the reader's words.
    pub fn describe(&self) -> String {
        let whose = match self.annotator() {
            Some(a) => format!("{a}'s labels"),
            None => "the annotators' labels (combined)".to_string(),
        };
        match self {
            Labels::Original => "the dataset's labels".to_string(),
            Labels::Annotations { .. } => whose,
            Labels::Both { .. } => format!("{whose} where given, else the dataset's"),
        }
    }
}

/// What one key press means on a task: `a`, `b`, `t` for pairwise; a digit on the scale.
pub struct Key;

impl Key {
    /// The label `key` gives, if any (letters in either case).
    pub fn label(task: Task, key: char) -> Option<Label> {
        match task {
            Task::Pairwise => match key.to_ascii_lowercase() {
                'a' => Some(Label::Choice(Choice::A)),
                'b' => Some(Label::Choice(Choice::B)),
                't' => Some(Label::Choice(Choice::Tie)),
                _ => None,
            },
            Task::Single {
                scale_min,
                scale_max,
            } => {
                let digit = key.to_digit(10)? as i64;
                (scale_min..=scale_max)
                    .contains(&digit)
                    .then_some(Label::Rating(digit as f64))
            }
        }
    }

    /// The keys of a task, for help lines: `a / b / t`, `1–5`.
    pub fn help(task: Task) -> String {
        match task {
            Task::Pairwise => "a (A is better) / b (B is better) / t (a tie)".to_string(),
            Task::Single {
                scale_min,
                scale_max,
            } => format!("{scale_min}–{scale_max}"),
        }
    }
}

/// Reads a label given as text: a key (`a`, `t`, `4`) or the canonical text (`A`, `tie`, a
/// whole number on the scale).
pub fn parse_label(task: Task, text: &str) -> Result<Label, AnnotationError> {
    let text = text.trim();
    let mut chars = text.chars();
    let by_key = match (chars.next(), chars.next()) {
        (Some(c), None) => Key::label(task, c),
        _ => None,
    };
    let by_text = || match (task, Label::from_text(text)?) {
        (Task::Pairwise, l @ Label::Choice(_)) => Some(l),
        (
            Task::Single {
                scale_min,
                scale_max,
            },
            Label::Rating(r),
        ) if r.fract() == 0.0 && (scale_min as f64..=scale_max as f64).contains(&r) => {
            Some(Label::Rating(r))
        }
        _ => None,
    };
    by_key.or_else(by_text).ok_or_else(|| {
        let expected = match task {
            Task::Pairwise => "a, b or t (A, B or tie)".to_string(),
            Task::Single {
                scale_min,
                scale_max,
            } => format!("a whole number from {scale_min} to {scale_max}"),
        };
        AnnotationError::NotALabel(text.to_string(), task.describe(), expected)
    })
}

/// The annotators of `annotations`, in name order.
pub fn annotators(annotations: &[Annotation]) -> Vec<String> {
    let names: BTreeSet<&str> = annotations.iter().map(|a| a.annotator.as_str()).collect();
    names.into_iter().map(str::to_string).collect()
}

/// Each item's annotation as `labels` chooses: `annotator`'s, or every annotator's
/// combined ([`combine`]).
pub fn by_item(
    task: Task,
    annotations: &[Annotation],
    labels: &Labels,
) -> Result<BTreeMap<String, Label>, AnnotationError> {
    if let Some(a) = labels.annotator() {
        if !annotations.iter().any(|x| x.annotator == a) {
            let known = annotators(annotations);
            return Err(AnnotationError::UnknownAnnotator(
                a.to_string(),
                if known.is_empty() {
                    "none yet".to_string()
                } else {
                    known.join(", ")
                },
            ));
        }
    }
    let mut given: BTreeMap<&str, Vec<Label>> = BTreeMap::new();
    for x in annotations {
        if labels.annotator().is_none_or(|a| a == x.annotator) {
            given.entry(&x.item_id).or_default().push(x.label);
        }
    }
    Ok(given
        .into_iter()
        .map(|(id, ls)| (id.to_string(), combine(task, &ls)))
        .collect())
}

/// Several people's labels of one item as one: for choices the most given, a split vote a
/// tie; for ratings their mean (a dataset's human label may be a mean).
pub fn combine(task: Task, labels: &[Label]) -> Label {
    match task {
        Task::Pairwise => {
            let mut counts: BTreeMap<Choice, usize> = BTreeMap::new();
            for l in labels {
                if let Label::Choice(c) = l {
                    *counts.entry(*c).or_default() += 1;
                }
            }
            let most = counts.values().copied().max().unwrap_or(0);
            let top: Vec<Choice> = counts
                .into_iter()
                .filter(|(_, n)| *n == most)
                .map(|(c, _)| c)
                .collect();
            match top.as_slice() {
                [one] => Label::Choice(*one),
                _ => Label::Choice(Choice::Tie),
            }
        }
        Task::Single { .. } => {
            let ratings: Vec<f64> = labels.iter().filter_map(Label::as_rating).collect();
            Label::Rating(ratings.iter().sum::<f64>() / ratings.len() as f64)
        }
    }
}

/// The dataset as the metrics see it under `labels`: each item with the label of that kind,
/// or among the items without a label where it has none. Item order is kept: the items
/// with a label first, as they were, then those without.
pub fn relabel(
    dataset: Dataset,
    annotations: &[Annotation],
    labels: &Labels,
) -> Result<Dataset, AnnotationError> {
    if *labels == Labels::Original {
        return Ok(dataset);
    }
    let given = by_item(dataset.task, annotations, labels)?;
    let keep_original = matches!(labels, Labels::Both { .. });
    let Dataset {
        name,
        task,
        items,
        unlabelled,
        criteria,
        content_hash,
        source,
    } = dataset;
    let mut out = Dataset {
        name,
        task,
        items: Vec::new(),
        unlabelled: Vec::new(),
        criteria,
        content_hash,
        source,
    };
    let all = items
        .into_iter()
        .map(|i| {
            let original = i.human_label;
            i.with_label(Some(original))
        })
        .chain(unlabelled.into_iter().map(|i| i.with_label(None)));
    for item in all {
        let label = given
            .get(&item.id)
            .copied()
            .or(item.human_label.filter(|_| keep_original));
        match label {
            Some(l) => out.items.push(item.with_label(l)),
            None => out.unlabelled.push(item.with_label(())),
        }
    }
    Ok(out)
}

/// The items of `dataset` (labelled, then unlabelled) in the dataset schema, one JSON
/// object a line, each with the label `labels` gives it (`null` where none) and its `meta`
/// kept, with what the queue added under `meta.judgelab`: the original label and every
/// annotation of the item. The file imports as a dataset.
pub fn export_jsonl(
    dataset: &Dataset,
    annotations: &[Annotation],
    labels: &Labels,
) -> Result<String, AnnotationError> {
    let relabelled = relabel(dataset.clone(), annotations, labels)?;
    let chosen: BTreeMap<&str, Label> = relabelled
        .items
        .iter()
        .map(|i| (i.id.as_str(), i.human_label))
        .collect();
    let mut of_item: BTreeMap<&str, Vec<&Annotation>> = BTreeMap::new();
    for a in annotations {
        of_item.entry(&a.item_id).or_default().push(a);
    }
    let originals = dataset
        .items
        .iter()
        .map(|i| (i.clone().with_label(()), Some(i.human_label)))
        .chain(dataset.unlabelled.iter().map(|i| (i.clone(), None)));
    // Every line declares the criteria's scales, so that any of its lines imports alone.
    let scales: serde_json::Map<String, Value> = dataset
        .criteria
        .iter()
        .filter_map(|c| match c.task {
            Task::Single {
                scale_min,
                scale_max,
            } => Some((c.name.clone(), json!([scale_min, scale_max]))),
            Task::Pairwise => None,
        })
        .collect();
    let mut out = String::new();
    for (item, original) in originals {
        let label = |l: Label| match l {
            Label::Choice(c) => json!(c.name()),
            Label::Rating(r) => json!(r),
        };
        let mut meta = match &item.meta {
            Value::Object(m) => m.clone(),
            _ => serde_json::Map::new(),
        };
        let given: Vec<Value> = of_item
            .get(item.id.as_str())
            .map(|v| v.as_slice())
            .unwrap_or_default()
            .iter()
            .map(|a| {
                json!({"annotator": a.annotator, "label": label(a.label), "created_at": a.created_at})
            })
            .collect();
        meta.insert(
            "judgelab".to_string(),
            json!({
                "labels": labels.kind(),
                "original_label": original.map(label),
                "annotations": given,
            }),
        );
        let mut line = serde_json::Map::new();
        line.insert("id".into(), json!(item.id));
        line.insert("task".into(), json!(dataset.task.name()));
        line.insert("question".into(), json!(item.question));
        for (key, value) in [
            ("answer_a", &item.answer_a),
            ("answer_b", &item.answer_b),
            ("answer", &item.answer),
            ("reference", &item.reference),
        ] {
            if let Some(v) = value {
                line.insert(key.into(), json!(v));
            }
        }
        line.insert(
            "human_label".into(),
            chosen
                .get(item.id.as_str())
                .map_or(Value::Null, |l| label(*l)),
        );
        if !item.human_labels.is_empty() {
            let by_criterion: serde_json::Map<String, Value> = item
                .human_labels
                .iter()
                .map(|(c, l)| (c.clone(), label(*l)))
                .collect();
            line.insert("human_labels".into(), Value::Object(by_criterion));
        }
        if !scales.is_empty() {
            line.insert("label_scales".into(), Value::Object(scales.clone()));
        }
        line.insert("meta".into(), Value::Object(meta));
        out.push_str(&Value::Object(line).to_string());
        out.push('\n');
    }
    Ok(out)
}

/// A name people label under: not empty, and not the dataset's own ([`humans::DATASET`]).
pub fn check_annotator(annotator: &str) -> Result<&str, AnnotationError> {
    match annotator.trim() {
        "" => Err(AnnotationError::NoAnnotator),
        humans::DATASET => Err(AnnotationError::ReservedAnnotator(humans::DATASET.into())),
        name => Ok(name),
    }
}

/// Every item of `dataset` by id, with whatever label it has: what the queue shows.
pub fn items_by_id(dataset: &Dataset) -> HashMap<&str, (Item<()>, Option<Label>)> {
    dataset
        .items
        .iter()
        .map(|i| {
            (
                i.id.as_str(),
                (i.clone().with_label(()), Some(i.human_label)),
            )
        })
        .chain(
            dataset
                .unlabelled
                .iter()
                .map(|i| (i.id.as_str(), (i.clone(), None))),
        )
        .collect()
}

#[cfg(test)]
mod reference_tests;
#[cfg(test)]
mod tests;
