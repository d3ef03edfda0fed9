//! The raw annotations a dataset may carry beside its labels: where an item's label is the
//! mean (or majority) of several people's, `meta.annotations` keeps what each of them gave,
//! so that the people's own agreement, the ceiling a judge is read against, can be
//! measured ([`crate::annotation::humans`]).
//!
//! ```json
//! "meta": {"annotations": [
//!   {"annotator": "a1", "label": 4, "labels": {"coherence": 3}},
//!   {"annotator": "a2", "label": 5},
//!   {"label": 3}
//! ]}
//! ```
//!
//! Each entry is one person's: `label` on the item's scale (or `A`, `B`, `tie`), `labels`
//! on the dataset's criteria as `human_labels` are, either one optional. `annotator` names
//! the person where the same people labelled every item (their agreement pair by pair is
//! then meaningful); without it, entries are told apart by their place on the item (`#1`,
//! `#2`, …), as lists of anonymous scores usually are. An import checks every entry and
//! refuses the file, saying where, if one is not a label.

use serde_json::Value;

use super::{criteria, kind, label, Item, Label, LineError, TaskName};

/// The field that holds them, inside `meta`.
pub const FIELD: &str = "annotations";

/// One person's label of an item, as the file gives it.
#[derive(Debug, Clone, PartialEq)]
pub struct Raw {
    /// As the file names them, or `#k` for the k-th entry of the item.
    pub annotator: String,
    pub label: Label,
}

fn err(errors: &mut Vec<LineError>, line: usize, field: String, problem: String) {
    errors.push(LineError {
        line,
        field,
        problem,
    });
}

/// Checks a line's `meta.annotations`, where it has them, into `errors`.
pub(super) fn check(
    line: usize,
    task: TaskName,
    meta: &Value,
    scale: (i64, i64),
    scales: &criteria::Scales,
    errors: &mut Vec<LineError>,
) {
    let Some(value) = meta.get(FIELD).filter(|v| !v.is_null()) else {
        return;
    };
    let Some(entries) = value.as_array() else {
        let found = kind(value);
        let problem = format!("expected a list of annotations, found {found}");
        return err(errors, line, format!("meta.{FIELD}"), problem);
    };
    for (i, entry) in entries.iter().enumerate() {
        let at = format!("meta.{FIELD}[{i}]");
        let Some(obj) = entry.as_object() else {
            let problem = format!(
                "expected an object such as {{\"annotator\": \"a1\", \"label\": …}}, found {}",
                kind(entry)
            );
            err(errors, line, at, problem);
            continue;
        };
        for key in obj.keys() {
            if !["annotator", "label", "labels"].contains(&key.as_str()) {
                let problem = "unknown field (expected annotator, label, labels)".to_string();
                err(errors, line, format!("{at}.{key}"), problem);
            }
        }
        match obj.get("annotator") {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) if !s.trim().is_empty() => {}
            Some(other) => {
                let problem = format!("expected a name, found {other}");
                err(errors, line, format!("{at}.annotator"), problem);
            }
        }
        if let Some(v) = obj.get("label").filter(|v| !v.is_null()) {
            if let Err(problem) = label(task, v, scale) {
                err(errors, line, format!("{at}.label"), problem);
            }
        }
        let labels = obj.get("labels");
        criteria::labels(
            line,
            task,
            &format!("{at}.labels"),
            labels,
            scales,
            scale,
            errors,
        );
    }
}

/// What each person gave `item`: its label, or with `criterion` their label on it; an
/// entry without one is left out. The import checked them.
pub fn of<L>(item: &Item<L>, criterion: Option<&str>) -> Vec<Raw> {
    let Some(entries) = item.meta.get(FIELD).and_then(Value::as_array) else {
        return Vec::new();
    };
    entries
        .iter()
        .enumerate()
        .filter_map(|(i, entry)| {
            let value = match criterion {
                Some(name) => entry.get("labels")?.get(name)?,
                None => entry.get("label")?,
            };
            let label = match value {
                Value::String(s) => Label::from_text(s)?,
                v => Label::Rating(v.as_f64()?),
            };
            let annotator = match entry.get("annotator").and_then(Value::as_str) {
                Some(name) => name.to_string(),
                None => format!("#{}", i + 1),
            };
            Some(Raw { annotator, label })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use crate::dataset::{parse, ImportOptions, Label};

    fn import(lines: &[&str]) -> Result<crate::dataset::Dataset, String> {
        parse(
            "d.jsonl",
            lines.join("\n").as_bytes(),
            &ImportOptions::default(),
        )
        .map_err(|e| e.to_string())
    }

    #[test]
    fn each_persons_label_is_kept_and_read_back() {
        let d = import(&[
            r#"{"id":"1","task":"single","question":"q","answer":"x","human_label":4.5,"human_labels":{"c":2},"label_scales":{"c":[1,3]},"meta":{"annotations":[{"annotator":"a","label":4,"labels":{"c":2}},{"annotator":"b","label":5}]}}"#,
            r#"{"id":"2","task":"single","question":"q","answer":"x","human_label":3,"meta":{"annotations":[{"label":3},{"label":2},{"label":4}]}}"#,
        ])
        .unwrap();
        let names = |i: usize, c: Option<&str>| -> Vec<(String, Label)> {
            super::of(&d.items[i], c)
                .into_iter()
                .map(|r| (r.annotator, r.label))
                .collect()
        };
        assert_eq!(
            names(0, None),
            [
                ("a".into(), Label::Rating(4.0)),
                ("b".into(), Label::Rating(5.0))
            ]
        );
        assert_eq!(names(0, Some("c")), [("a".into(), Label::Rating(2.0))]);
        assert_eq!(
            names(1, None)
                .iter()
                .map(|(n, _)| n.as_str())
                .collect::<Vec<_>>(),
            ["#1", "#2", "#3"]
        );
    }

    #[test]
    fn a_bad_annotation_says_where() {
        let err = import(&[
            r#"{"id":"1","task":"single","question":"q","answer":"x","human_label":4,"meta":{"annotations":[{"label":4},{"label":9},{"labels":{"c":"x"}},{"who":"a"}]}}"#,
            r#"{"id":"2","task":"pairwise","question":"q","answer_a":"a","answer_b":"b","human_label":"A","meta":{"annotations":{"a":"A"}}}"#,
        ])
        .unwrap_err();
        for said in [
            "d.jsonl:1: meta.annotations[1].label: 9 is outside the rating scale 1..5",
            "d.jsonl:1: meta.annotations[2].labels.c: \"x\" is not a number on its scale 1..5",
            "d.jsonl:1: meta.annotations[3].who: unknown field (expected annotator, label, labels)",
            "d.jsonl:2: meta.annotations: expected a list of annotations, found an object",
        ] {
            assert!(err.contains(said), "{said}\n{err}");
        }
    }
}
