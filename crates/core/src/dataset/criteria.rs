//! Several human labels per item: named criteria (`human_labels` in the schema, e.g.
//! `{"coherence": 2.33, "groundedness": 1}`), each rated on a scale of its own, beside the
//! item's one `human_label`.
//!
//! A rating criterion's scale is declared by `label_scales` (`{"coherence": [1, 3]}`) on
//! any line of the file, every declaration of a name agreeing; a criterion no line declares
//! is on the dataset's scale. A pairwise criterion's labels are `A`, `B` or `tie`, as the
//! item's. A criterion an item was not rated on is absent (or null) there: it is not a
//! zero, and no metric of that criterion counts the item.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use serde_json::Map;

use super::{kind, LineError, TaskName};
use crate::dataset::{Label, Task};

/// A named dimension the humans rated items on, and what its labels are.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Criterion {
    pub name: String,
    /// Pairwise, or a rating on its own scale.
    pub task: Task,
}

impl Criterion {
    /// The criterion with what its labels are, for listings: `coherence (1-3)`,
    /// `factuality (A, B or tie)`.
    pub fn describe(&self) -> String {
        match self.task {
            Task::Pairwise => format!("{} (A, B or tie)", self.name),
            Task::Single {
                scale_min,
                scale_max,
            } => format!("{} ({scale_min}-{scale_max})", self.name),
        }
    }
}

/// The scales a file's lines declare, by criterion, with the line that first did.
pub(super) type Scales = BTreeMap<String, ((i64, i64), usize)>;

fn err(errors: &mut Vec<LineError>, line: usize, field: String, problem: String) {
    errors.push(LineError {
        line,
        field,
        problem,
    });
}

/// A scale as an import or a file gives it: the minimum below the maximum, by at most 100.
pub(super) fn check_scale((lo, hi): (i64, i64)) -> Result<(i64, i64), String> {
    if lo >= hi || hi - lo > 100 {
        return Err(format!(
            "invalid scale {lo}-{hi}: the minimum must be below the maximum, by at most 100"
        ));
    }
    Ok((lo, hi))
}

/// The `label_scales` a line declares, checked, into `scales`: each name's declarations
/// must agree.
pub(super) fn declare(
    line: usize,
    obj: &Map<String, Value>,
    scales: &mut Scales,
    errors: &mut Vec<LineError>,
) {
    let Some(value) = obj.get("label_scales").filter(|v| !v.is_null()) else {
        return;
    };
    let Some(map) = value.as_object() else {
        err(
            errors,
            line,
            "label_scales".into(),
            format!(
                "expected an object of criteria and their [min, max], found {}",
                kind(value)
            ),
        );
        return;
    };
    for (name, v) in map {
        let field = format!("label_scales.{name}");
        let scale = match v.as_array().map(|a| a.as_slice()) {
            Some([lo, hi]) => lo.as_i64().zip(hi.as_i64()),
            _ => None,
        };
        let Some(scale) = scale else {
            err(
                errors,
                line,
                field,
                format!("{v} is not [min, max] (two whole numbers)"),
            );
            continue;
        };
        if let Err(problem) = check_scale(scale) {
            err(errors, line, field, problem);
            continue;
        }
        match scales.get(name) {
            Some((first, at)) if *first != scale => err(
                errors,
                line,
                field,
                format!(
                    "[{}, {}] differs from [{}, {}] at line {at}",
                    scale.0, scale.1, first.0, first.1
                ),
            ),
            Some(_) => {}
            None => {
                scales.insert(name.clone(), (scale, line));
            }
        }
    }
}

/// One line's labels by criterion (none rated: empty), given in `field`; `None` where one
/// is invalid (the problem is in `errors`).
pub(super) fn labels(
    line: usize,
    task: TaskName,
    field: &str,
    value: Option<&Value>,
    scales: &Scales,
    default: (i64, i64),
    errors: &mut Vec<LineError>,
) -> Option<BTreeMap<String, Label>> {
    let Some(value) = value.filter(|v| !v.is_null()) else {
        return Some(BTreeMap::new());
    };
    let Some(map) = value.as_object() else {
        err(
            errors,
            line,
            field.into(),
            format!(
                "expected an object of criteria and their labels, found {}",
                kind(value)
            ),
        );
        return None;
    };
    let n_errors = errors.len();
    let mut out = BTreeMap::new();
    for (name, v) in map {
        let field = format!("{field}.{name}");
        if name.trim().is_empty() {
            err(errors, line, field, "a criterion needs a name".into());
            continue;
        }
        if v.is_null() {
            continue;
        }
        let label = match task {
            TaskName::Pairwise => match v.as_str() {
                Some("A") | Some("B") | Some("tie") => Label::from_text(v.as_str().unwrap()),
                _ => {
                    err(
                        errors,
                        line,
                        field,
                        format!("{v} is not a pairwise label (expected \"A\", \"B\" or \"tie\")"),
                    );
                    continue;
                }
            },
            TaskName::Single => {
                let (lo, hi) = scales.get(name).map_or(default, |s| s.0);
                match v.as_f64().filter(|x| x.is_finite()) {
                    Some(x) if x >= lo as f64 && x <= hi as f64 => Some(Label::Rating(x)),
                    Some(x) => {
                        err(
                            errors,
                            line,
                            field,
                            format!("{x} is outside its scale {lo}..{hi}"),
                        );
                        continue;
                    }
                    None => {
                        err(
                            errors,
                            line,
                            field,
                            format!("{v} is not a number on its scale {lo}..{hi}"),
                        );
                        continue;
                    }
                }
            }
        };
        out.insert(name.clone(), label.expect("a checked label"));
    }
    (errors.len() == n_errors).then_some(out)
}

/// The dataset's criteria: every name declared or rated, in name order, each with its task.
pub(super) fn criteria<'a>(
    task: Task,
    scales: &'a Scales,
    rated: impl Iterator<Item = &'a String>,
) -> Vec<Criterion> {
    let mut names: Vec<&String> = scales.keys().chain(rated).collect();
    names.sort();
    names.dedup();
    names
        .into_iter()
        .map(|name| Criterion {
            name: name.clone(),
            task: match task {
                Task::Pairwise => Task::Pairwise,
                Task::Single { .. } => match scales.get(name) {
                    Some(((scale_min, scale_max), _)) => Task::Single {
                        scale_min: *scale_min,
                        scale_max: *scale_max,
                    },
                    None => task,
                },
            },
        })
        .collect()
}
