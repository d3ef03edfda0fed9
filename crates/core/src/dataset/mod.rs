//! Datasets of items with human labels, parsed from JSONL, a JSON array, CSV or Parquet
//! (each optionally gzipped) in the canonical schema (`datasets/README.md`), or in another
//! shape through a [`mapping`].
//!
//! Parsing validates everything before anything is returned: a dataset either comes back
//! whole or not at all, with every problem reported as `path:line: field: problem`.

pub mod annotations;
pub mod criteria;
mod formats;
pub mod guess;
pub mod mapping;

pub use formats::Source;

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

pub use criteria::Criterion;

/// What the humans (and the judge) label.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Task {
    /// Two answers; the label says which is better, or a tie.
    Pairwise,
    /// One answer rated on an integer scale `min..=max` (human labels may be means).
    Single { scale_min: i64, scale_max: i64 },
}

impl Task {
    pub fn name(&self) -> &'static str {
        match self {
            Task::Pairwise => "pairwise",
            Task::Single { .. } => "single",
        }
    }

    /// A rating's scale `(min, max)`; none for pairwise data.
    pub fn scale(&self) -> Option<(i64, i64)> {
        match *self {
            Task::Pairwise => None,
            Task::Single {
                scale_min,
                scale_max,
            } => Some((scale_min, scale_max)),
        }
    }

    /// The task with its scale, for messages: `pairwise`, `single (1-5)`.
    pub fn describe(&self) -> String {
        match self {
            Task::Pairwise => "pairwise".into(),
            Task::Single {
                scale_min,
                scale_max,
            } => format!("single ({scale_min}-{scale_max})"),
        }
    }
}

/// A pairwise preference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Choice {
    A,
    B,
    #[serde(rename = "tie")]
    Tie,
}

crate::names!(Choice {
    A => "A",
    B => "B",
    Tie => "tie",
});

/// A human label or a judge's parsed verdict.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Label {
    Choice(Choice),
    Rating(f64),
}

impl Label {
    /// The canonical text stored in the database: `A`, `B`, `tie`, or the number.
    pub fn to_text(&self) -> String {
        match self {
            Label::Choice(c) => c.name().to_string(),
            Label::Rating(r) => format_number(*r),
        }
    }

    /// Parses the canonical text back; `None` if it is neither a choice nor a number.
    pub fn from_text(text: &str) -> Option<Label> {
        match text {
            "A" => Some(Label::Choice(Choice::A)),
            "B" => Some(Label::Choice(Choice::B)),
            "tie" => Some(Label::Choice(Choice::Tie)),
            _ => text
                .parse::<f64>()
                .ok()
                .filter(|r| r.is_finite())
                .map(Label::Rating),
        }
    }

    /// The category this label falls in for agreement statistics: a choice, or a rating
    /// rounded to the nearest integer on the scale (human means such as 4.67 become 5).
    pub fn category(&self) -> String {
        match self {
            Label::Choice(c) => c.name().to_string(),
            Label::Rating(r) => format!("{}", r.round() as i64),
        }
    }

    pub fn as_rating(&self) -> Option<f64> {
        match self {
            Label::Rating(r) => Some(*r),
            Label::Choice(_) => None,
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

fn format_number(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// One item to judge, with its human label (`L = ()`: an item without one).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item<L = Label> {
    pub id: String,
    pub question: String,
    /// Pairwise only (guaranteed present for pairwise datasets).
    pub answer_a: Option<String>,
    pub answer_b: Option<String>,
    /// Single only (guaranteed present for single datasets).
    pub answer: Option<String>,
    pub reference: Option<String>,
    pub human_label: L,
    /// Its labels on the dataset's criteria, where humans rated it on several
    /// ([`criteria`]); empty for most datasets.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub human_labels: BTreeMap<String, Label>,
    pub meta: Value,
}

impl<L> Item<L> {
    /// What a judge is shown of it.
    pub fn text(&self) -> ItemText<'_> {
        ItemText {
            id: &self.id,
            question: &self.question,
            answer_a: self.answer_a.as_deref(),
            answer_b: self.answer_b.as_deref(),
            answer: self.answer.as_deref(),
            reference: self.reference.as_deref(),
        }
    }

    /// The same item with `label` as its human label.
    pub fn with_label<M>(self, label: M) -> Item<M> {
        Item {
            id: self.id,
            question: self.question,
            answer_a: self.answer_a,
            answer_b: self.answer_b,
            answer: self.answer,
            reference: self.reference,
            human_label: label,
            human_labels: self.human_labels,
            meta: self.meta,
        }
    }
}

/// What a judge is shown of an item: its text, never its human label, so that items with a
/// label and items without one are judged alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ItemText<'a> {
    pub id: &'a str,
    pub question: &'a str,
    pub answer_a: Option<&'a str>,
    pub answer_b: Option<&'a str>,
    pub answer: Option<&'a str>,
    pub reference: Option<&'a str>,
}

impl ItemText<'_> {
    /// The same text with its two answers in the other order.
    pub fn swapped(self) -> Self {
        ItemText {
            answer_a: self.answer_b,
            answer_b: self.answer_a,
            ..self
        }
    }
}

/// A validated dataset: every item has the fields its task needs, and a label in its label
/// set or none.
#[derive(Debug, Clone, PartialEq)]
pub struct Dataset {
    pub name: String,
    pub task: Task,
    /// The items with a human label: what experiments judge and score.
    pub items: Vec<Item>,
    /// The items without one (`human_label` null or absent): no metric sees them; an
    /// estimate judges them and corrects the judge with the labelled items.
    pub unlabelled: Vec<Item<()>>,
    /// The criteria its items carry labels on beside their label (`human_labels`), in name
    /// order; empty for most datasets.
    pub criteria: Vec<Criterion>,
    /// sha256 of the imported file's bytes.
    pub content_hash: String,
    /// Where it was imported from, as given.
    pub source: String,
}

impl Dataset {
    /// Whether a judge's pairwise verdict may be a tie: only where the humans used ties.
    pub fn allows_tie(&self) -> bool {
        self.task == Task::Pairwise
            && self
                .items
                .iter()
                .any(|i| i.human_label == Label::Choice(Choice::Tie))
    }

    /// Label counts, in label order (`A`, `B`, `tie`; ratings by rounded value).
    pub fn label_counts(&self) -> Vec<(String, usize)> {
        let mut counts = std::collections::BTreeMap::<String, usize>::new();
        for item in &self.items {
            *counts.entry(item.human_label.category()).or_default() += 1;
        }
        counts.into_iter().collect()
    }
}

/// Options of an import.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// The dataset's name; default: the file stem.
    pub name: Option<String>,
    /// Rating scale of single-answer datasets; default 1..=5.
    pub scale: Option<(i64, i64)>,
    /// Where Judgelab's fields are in a file of another shape, and how its label values
    /// read ([`mapping`]); none: the file is in Judgelab's own fields.
    pub mapping: Option<mapping::Mapping>,
}

/// One problem at one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineError {
    pub line: usize,
    pub field: String,
    pub problem: String,
}

/// Why a file could not be imported. Nothing of it was kept.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DatasetError {
    #[error("{path}: {problem}")]
    File { path: String, problem: String },
    #[error("{}", render_line_errors(path, errors, *n_more))]
    Lines {
        path: String,
        errors: Vec<LineError>,
        /// Further errors not listed.
        n_more: usize,
    },
}

fn render_line_errors(path: &str, errors: &[LineError], n_more: usize) -> String {
    let mut out: Vec<String> = errors
        .iter()
        .map(|e| format!("{path}:{}: {}: {}", e.line, e.field, e.problem))
        .collect();
    if n_more > 0 {
        out.push(format!("{path}: … and {n_more} more errors"));
    }
    out.join("\n")
}

const MAX_REPORTED: usize = 20;
const FIELDS: [&str; 11] = [
    "id",
    "task",
    "question",
    "answer_a",
    "answer_b",
    "answer",
    "reference",
    "human_label",
    "human_labels",
    "label_scales",
    "meta",
];

/// The fields whose value is JSON even in a CSV cell.
const JSON_FIELDS: [&str; 3] = ["human_labels", "label_scales", "meta"];

/// What a dataset read from a file is, beside its items.
#[derive(Debug, Clone, PartialEq)]
pub struct Header {
    pub task: Task,
    /// Its criteria, in name order ([`Dataset::criteria`]).
    pub criteria: Vec<Criterion>,
}

/// The name of the dataset an import of `path` makes: the one given, or the file's stem.
pub fn name(path: &str, options: &ImportOptions) -> Result<String, DatasetError> {
    let name = match &options.name {
        Some(n) => n.clone(),
        None => {
            let file = std::path::Path::new(path);
            let file = match path.to_ascii_lowercase().ends_with(".gz") {
                true => std::path::Path::new(file.file_stem().unwrap_or_default()),
                false => file,
            };
            file.file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_else(|| "dataset".into())
        }
    };
    if name.is_empty() || name.contains(['/', '\\']) {
        return Err(DatasetError::File {
            path: path.to_string(),
            problem: format!("invalid dataset name {name:?}"),
        });
    }
    Ok(name)
}

/// Parses `bytes` (the content of `path`, its format named by its extension) whole.
pub fn parse(path: &str, bytes: &[u8], options: &ImportOptions) -> Result<Dataset, DatasetError> {
    let name = name(path, options)?;
    let (mut items, mut unlabelled) = (Vec::new(), Vec::new());
    let header = read(path, Source::Bytes(bytes), options, |item| {
        match item.human_label {
            Some(label) => items.push(item.with_label(label)),
            None => unlabelled.push(item.with_label(())),
        }
        true
    })?;
    Ok(Dataset {
        name,
        task: header.task,
        items,
        unlabelled,
        criteria: header.criteria,
        content_hash: content_hash(bytes, options.mapping.as_ref()),
        source: path.to_string(),
    })
}

/// Reads the dataset in `source` (the content of `path`, its format named by its
/// extension), validating each row as it is read, and hands each valid item to `keep`, in
/// file order, while no row has failed (`keep` returns whether it wants more). Every row is
/// read, so that every problem is reported, unless `keep` stops it; nothing but the item
/// being read is held, so a file of any size reads in little memory.
pub fn read(
    path: &str,
    source: Source<'_>,
    options: &ImportOptions,
    mut keep: impl FnMut(Item<Option<Label>>) -> bool,
) -> Result<Header, DatasetError> {
    let file_error = |problem: String| DatasetError::File {
        path: path.to_string(),
        problem,
    };
    let format = formats::format(path).map_err(file_error)?;
    let (scale_min, scale_max) =
        criteria::check_scale(options.scale.unwrap_or((1, 5))).map_err(file_error)?;
    let mapping = options.mapping.as_ref();
    let mut validator = Validator {
        task: None,
        scale: (scale_min, scale_max),
        scales: criteria::Scales::new(),
        seen: std::collections::HashMap::new(),
        errors: Vec::new(),
        n_more: 0,
    };
    // A criterion's scale, declared on any line, holds on every line: where a line may
    // declare one (a mapping names none), they are read first.
    if mapping.is_none()
        && source
            .contains(format.1, b"label_scales")
            .map_err(file_error)?
    {
        formats::records(path, source, format, false, &mut |(line, record)| {
            if let Ok(obj) = record {
                criteria::declare(line, &obj, &mut validator.scales, &mut validator.errors);
            }
            true
        })?;
    }
    let (mut n_records, mut stopped) = (0, false);
    let mut rated = std::collections::BTreeSet::new();
    formats::records(path, source, format, mapping.is_some(), &mut |(
        line,
        record,
    )| {
        n_records += 1;
        let record = match mapping {
            Some(m) => record.and_then(|obj| {
                m.apply(line, &Value::Object(obj)).map_err(|mut problems| {
                    let first = problems.remove(0);
                    validator.errors.extend(problems);
                    first
                })
            }),
            None => record,
        };
        let item = validator.item(line, record);
        validator.bound();
        let Some((item, label)) = item else {
            return true;
        };
        for name in item.human_labels.keys() {
            if !rated.contains(name) {
                rated.insert(name.clone());
            }
        }
        if !validator.errors.is_empty() {
            return true;
        }
        stopped = !keep(item.with_label(label));
        !stopped
    })?;
    if stopped {
        return Err(file_error(
            "the import stopped before the end of the file".into(),
        ));
    }
    if n_records == 0 {
        return Err(file_error("the file has no items".into()));
    }
    if !validator.errors.is_empty() {
        validator.errors.sort_by_key(|e| e.line);
        let n_more = validator.n_more + validator.errors.len().saturating_sub(MAX_REPORTED);
        validator.errors.truncate(MAX_REPORTED);
        return Err(DatasetError::Lines {
            path: path.to_string(),
            errors: validator.errors,
            n_more,
        });
    }
    let task = match validator.task.expect("at least one valid item") {
        TaskName::Pairwise => Task::Pairwise,
        TaskName::Single => Task::Single {
            scale_min,
            scale_max,
        },
    };
    let criteria = criteria::criteria(task, &validator.scales, rated.iter());
    Ok(Header { task, criteria })
}

/// What identifies a dataset's content: its file's bytes, and the mapping they are read
/// through (the same file through another mapping is other data).
pub fn content_hash(bytes: &[u8], mapping: Option<&mapping::Mapping>) -> String {
    content_hash_of(bytes, mapping).expect("bytes in memory read")
}

/// [`content_hash`] of what `reader` reads (a file, read as a stream).
pub fn content_hash_of(
    mut reader: impl std::io::Read,
    mapping: Option<&mapping::Mapping>,
) -> std::io::Result<String> {
    use sha2::Digest;
    let mut hasher = sha2::Sha256::new();
    std::io::copy(&mut reader, &mut hasher)?;
    if let Some(m) = mapping {
        hasher.update(format!("\0mapped: {m}").as_bytes());
    }
    Ok(hex::encode(hasher.finalize()))
}

fn non_utf8(line: usize, e: std::str::Utf8Error) -> LineError {
    LineError {
        line,
        field: "line".into(),
        problem: format!(
            "not valid UTF-8 (bad byte at column {})",
            e.valid_up_to() + 1
        ),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum TaskName {
    Pairwise,
    Single,
}

struct Validator {
    task: Option<TaskName>,
    scale: (i64, i64),
    /// The criteria scales the file declares (`label_scales`).
    scales: criteria::Scales,
    seen: std::collections::HashMap<String, usize>,
    errors: Vec<LineError>,
    /// Errors found past the first few, not kept.
    n_more: usize,
}

impl Validator {
    /// Keeps the errors of the earliest lines only, so that a file wrong on every line
    /// reads in little memory too (rows are read in order).
    fn bound(&mut self) {
        if self.errors.len() > 4 * MAX_REPORTED {
            self.errors.sort_by_key(|e| e.line);
            self.n_more += self.errors.len() - MAX_REPORTED;
            self.errors.truncate(MAX_REPORTED);
        }
    }

    fn err(&mut self, line: usize, field: &str, problem: impl Into<String>) {
        self.errors.push(LineError {
            line,
            field: field.into(),
            problem: problem.into(),
        });
    }

    /// One line's item, and its label where it has one; none where the line is invalid.
    fn item(
        &mut self,
        line: usize,
        record: Result<Map<String, Value>, LineError>,
    ) -> Option<(Item<()>, Option<Label>)> {
        let obj = match record {
            Ok(obj) => obj,
            Err(e) => {
                self.errors.push(e);
                return None;
            }
        };
        let n_errors = self.errors.len();
        for key in obj.keys() {
            if !FIELDS.contains(&key.as_str()) {
                self.err(
                    line,
                    key,
                    "unknown field (put source fields under \"meta\", or map the file's fields: import --map)",
                );
            }
        }
        let id = self.string(line, &obj, "id", true);
        if let Some(id) = &id {
            if id.trim().is_empty() {
                self.err(line, "id", "is empty");
            } else if let Some(first) = self.seen.insert(id.clone(), line) {
                self.err(
                    line,
                    "id",
                    format!("duplicate id {id:?} (first at line {first})"),
                );
            }
        }
        let task = match self.string(line, &obj, "task", true).as_deref() {
            Some("pairwise") => Some(TaskName::Pairwise),
            Some("single") => Some(TaskName::Single),
            Some(other) => {
                self.err(
                    line,
                    "task",
                    format!("{other:?} is not a task (expected \"pairwise\" or \"single\")"),
                );
                None
            }
            None => None,
        };
        if let Some(task) = task {
            match self.task {
                None => self.task = Some(task),
                Some(t) if t != task => self.err(
                    line,
                    "task",
                    "differs from the task of the first item (a dataset has one task)",
                ),
                Some(_) => {}
            }
        }
        let question = self.string(line, &obj, "question", true);
        let reference = self.string(line, &obj, "reference", false);
        let (answer_a, answer_b, answer) = match task {
            Some(TaskName::Pairwise) => (
                self.string(line, &obj, "answer_a", true),
                self.string(line, &obj, "answer_b", true),
                None,
            ),
            Some(TaskName::Single) => (None, None, self.string(line, &obj, "answer", true)),
            None => (None, None, None),
        };
        // No label (null, absent, or an empty CSV cell): an unlabelled item.
        let human_label = match (task, obj.get("human_label").filter(|v| !v.is_null())) {
            (_, None) => Some(None),
            (Some(t), Some(value)) => self.label(line, t, value).map(Some),
            (None, Some(_)) => None,
        };
        let human_labels = task.and_then(|t| {
            criteria::labels(
                line,
                t,
                "human_labels",
                obj.get("human_labels"),
                &self.scales,
                self.scale,
                &mut self.errors,
            )
        });
        let meta = obj
            .get("meta")
            .cloned()
            .unwrap_or(Value::Object(Map::new()));
        if let Some(t) = task {
            annotations::check(line, t, &meta, self.scale, &self.scales, &mut self.errors);
        }
        if self.errors.len() > n_errors {
            return None;
        }
        let item = Item {
            id: id?,
            question: question?,
            answer_a,
            answer_b,
            answer,
            reference,
            human_label: (),
            human_labels: human_labels?,
            meta,
        };
        Some((item, human_label?))
    }

    fn string(
        &mut self,
        line: usize,
        obj: &Map<String, Value>,
        field: &str,
        required: bool,
    ) -> Option<String> {
        match obj.get(field) {
            Some(Value::String(s)) => Some(s.clone()),
            None | Some(Value::Null) => {
                if required {
                    self.err(line, field, "is missing");
                }
                None
            }
            Some(other) => {
                self.err(
                    line,
                    field,
                    format!("expected a string, found {}", kind(other)),
                );
                None
            }
        }
    }

    fn label(&mut self, line: usize, task: TaskName, value: &Value) -> Option<Label> {
        label(task, value, self.scale)
            .map_err(|problem| self.err(line, "human_label", problem))
            .ok()
    }
}

/// A label as a line gives it: `A`, `B` or `tie`, or a rating on `scale` (a number, or a
/// CSV cell's text of one).
fn label(task: TaskName, value: &Value, (lo, hi): (i64, i64)) -> Result<Label, String> {
    match task {
        TaskName::Pairwise => match value.as_str() {
            Some("A") => Ok(Label::Choice(Choice::A)),
            Some("B") => Ok(Label::Choice(Choice::B)),
            Some("tie") => Ok(Label::Choice(Choice::Tie)),
            _ => Err(format!(
                "{value} is not a pairwise label (expected \"A\", \"B\" or \"tie\")"
            )),
        },
        TaskName::Single => {
            let number = match value {
                Value::Number(n) => n.as_f64(),
                Value::String(s) => s.trim().parse::<f64>().ok(),
                _ => None,
            }
            .filter(|x| x.is_finite());
            match number {
                Some(x) if x >= lo as f64 && x <= hi as f64 => Ok(Label::Rating(x)),
                Some(x) => Err(format!("{x} is outside the rating scale {lo}..{hi}")),
                None => Err(format!(
                    "{value} is not a number on the rating scale {lo}..{hi}"
                )),
            }
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::sha256_hex;

    const PAIR: &str = r#"{"id":"p1","task":"pairwise","question":"q","answer_a":"a","answer_b":"b","human_label":"A"}"#;

    fn jsonl(lines: &[&str]) -> Result<Dataset, DatasetError> {
        parse(
            "d.jsonl",
            lines.join("\n").as_bytes(),
            &ImportOptions::default(),
        )
    }

    /// Checks that parsing fails with exactly the expected rendered message.
    fn check_err(lines: &[&str], expect: &str) {
        let err = jsonl(lines).expect_err("must fail").to_string();
        assert_eq!(err, expect);
    }

    /// MT-Bench-style rows (answers inside conversations, the label in `winner`) and
    /// HelpSteer-style columns read through mappings into the items a canonical file
    /// gives; a value the label mapping does not name is an error at its row, and nothing
    /// is kept.
    #[test]
    fn a_mapped_file_gives_the_canonical_items() {
        let canonical = jsonl(&[
            r#"{"id":"1","task":"pairwise","question":"2+2?","answer_a":"4","answer_b":"5","human_label":"A"}"#,
            r#"{"id":"2","task":"pairwise","question":"3+3?","answer_a":"7","answer_b":"6","human_label":"tie"}"#,
        ])
        .unwrap();
        let row = |q: &str, a: &str, b: &str, winner: &str| {
            format!(
                r#"{{"question_id": 81, "conversation_a": [{{"role": "user", "content": "{q}"}}, {{"role": "assistant", "content": "{a}"}}], "conversation_b": [{{"role": "user", "content": "{q}"}}, {{"role": "assistant", "content": "{b}"}}], "winner": "{winner}"}}"#
            )
        };
        let mapping = mapping::Mapping::parse(
            "question=conversation_a[0].content,answer_a=conversation_a[-1].content,answer_b=conversation_b[-1].content,human_label=winner",
            Some("model_a=A,model_b=B,tie=tie,\"tie (bothbad)\"=tie"),
        )
        .unwrap();
        let options = ImportOptions {
            name: Some("d".into()),
            mapping: Some(mapping),
            ..ImportOptions::default()
        };
        let file = [
            row("2+2?", "4", "5", "model_a"),
            row("3+3?", "7", "6", "tie (bothbad)"),
        ]
        .join("\n");
        let mapped = parse("mt.jsonl", file.as_bytes(), &options).unwrap();
        assert_eq!(mapped.items, canonical.items);
        assert_eq!(mapped.task, Task::Pairwise);
        assert_ne!(mapped.content_hash, sha256_hex(file.as_bytes()));
        let bad = format!("{file}\n{}", row("1+1?", "2", "3", "model_c"));
        let err = parse("mt.jsonl", bad.as_bytes(), &options)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("mt.jsonl:3: human_label (mapped from winner): value \"model_c\" is not in the label mapping"),
            "{err}"
        );
        // Attribute columns of a CSV: a rating and a criterion.
        let csv = "prompt,response,helpfulness,coherence\np,r,3,4\nq,s,1,2\n";
        let options = ImportOptions {
            scale: Some((0, 4)),
            mapping: Some(
                mapping::Mapping::parse(
                    "question=prompt,answer=response,human_label=helpfulness,human_labels.coherence=coherence",
                    None,
                )
                .unwrap(),
            ),
            ..ImportOptions::default()
        };
        let rated = parse("hs.csv", csv.as_bytes(), &options).unwrap();
        assert_eq!(
            rated.task,
            Task::Single {
                scale_min: 0,
                scale_max: 4
            }
        );
        let ids: Vec<&str> = rated.items.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["2", "3"]);
        assert_eq!(rated.items[0].human_label, Label::Rating(3.0));
        assert_eq!(rated.items[1].human_labels["coherence"], Label::Rating(2.0));
        // The same as tab-separated values.
        let tsv = csv.replace(',', "\t");
        let tabbed = parse("hs.tsv", tsv.as_bytes(), &options).unwrap();
        assert_eq!(tabbed.items, rated.items);
    }

    #[test]
    fn items_without_a_label_are_kept_apart() {
        let d = jsonl(&[
            PAIR,
            &PAIR.replace("p1", "p2").replace("\"A\"", "null"),
            &PAIR
                .replace("p1", "p3")
                .replace(",\"human_label\":\"A\"", ""),
        ])
        .unwrap();
        assert_eq!(d.items.len(), 1);
        let ids: Vec<&str> = d.unlabelled.iter().map(|i| i.id.as_str()).collect();
        assert_eq!(ids, ["p2", "p3"]);
        assert_eq!(d.label_counts(), vec![("A".to_string(), 1)]);
        // A CSV's empty cell is no label; a bad label is still an error, as is a duplicate id
        // among the unlabelled.
        let csv = "id,task,question,answer_a,answer_b,human_label\nc1,pairwise,q,a,b,B\nc2,pairwise,q,a,b,\n";
        let d = parse("d.csv", csv.as_bytes(), &ImportOptions::default()).unwrap();
        assert_eq!((d.items.len(), d.unlabelled.len()), (1, 1));
        check_err(
            &[PAIR, &PAIR.replace("\"A\"", "null")],
            "d.jsonl:2: id: duplicate id \"p1\" (first at line 1)",
        );
        check_err(
            &[&PAIR.replace("\"A\"", "\"C\"")],
            "d.jsonl:1: human_label: \"C\" is not a pairwise label (expected \"A\", \"B\" or \"tie\")",
        );
    }

    #[test]
    fn parses_pairwise_and_single() {
        let d = jsonl(&[PAIR, &PAIR.replace("p1", "p2").replace("\"A\"", "\"tie\"")]).unwrap();
        assert_eq!(d.task, Task::Pairwise);
        assert_eq!(d.name, "d");
        assert_eq!(d.items[1].human_label, Label::Choice(Choice::Tie));
        let s = jsonl(&[
            r#"{"id":"s1","task":"single","question":"q","answer":"x","human_label":4.6667,"meta":{"k":1}}"#,
        ])
        .unwrap();
        assert_eq!(
            s.task,
            Task::Single {
                scale_min: 1,
                scale_max: 5
            }
        );
        assert_eq!(s.items[0].human_label.category(), "5");
        assert_eq!(s.items[0].meta["k"], 1);
    }

    #[test]
    fn bad_lines_name_line_field_and_problem() {
        check_err(
            &[PAIR, "{not json", &PAIR.replace("p1", "p3")],
            "d.jsonl:2: line: invalid JSON: key must be a string at line 1 column 2",
        );
        check_err(
            &[PAIR, PAIR],
            "d.jsonl:2: id: duplicate id \"p1\" (first at line 1)",
        );
        check_err(
            &[&PAIR.replace(r#""answer_b":"b","#, "")],
            "d.jsonl:1: answer_b: is missing",
        );
        check_err(
            &[&PAIR.replace(r#""A""#, r#""C""#)],
            "d.jsonl:1: human_label: \"C\" is not a pairwise label (expected \"A\", \"B\" or \"tie\")",
        );
        check_err(
            &[r#"{"id":"s","task":"single","question":"q","answer":"x","human_label":7}"#],
            "d.jsonl:1: human_label: 7 is outside the rating scale 1..5",
        );
        check_err(
            &[&PAIR.replace("\"question\"", "\"prompt\"")],
            "d.jsonl:1: prompt: unknown field (put source fields under \"meta\", or map the file's fields: import --map)\nd.jsonl:1: question: is missing",
        );
        check_err(
            &[PAIR, &PAIR.replace("p1", "p2").replace("pairwise", "single")],
            "d.jsonl:2: task: differs from the task of the first item (a dataset has one task)\nd.jsonl:2: answer: is missing\nd.jsonl:2: human_label: \"A\" is not a number on the rating scale 1..5",
        );
    }

    #[test]
    fn non_utf8_and_empty_files() {
        let mut bytes = PAIR.as_bytes().to_vec();
        bytes.extend_from_slice(b"\n{\"id\": \"\xff\"}\n");
        let err = parse("d.jsonl", &bytes, &ImportOptions::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "d.jsonl:2: line: not valid UTF-8 (bad byte at column 9)"
        );
        let err = parse("d.jsonl", b"\n\n", &ImportOptions::default()).unwrap_err();
        assert_eq!(err.to_string(), "d.jsonl: the file has no items");
        let err = parse("d.txt", b"x", &ImportOptions::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "d.txt: unknown format: expected .jsonl, .json (an array of objects), .csv, .tsv or .parquet, each optionally .gz"
        );
    }

    #[test]
    fn csv_uses_the_same_schema() {
        let csv = "id,task,question,answer_a,answer_b,human_label,meta\n\
                   c1,pairwise,\"q, with comma\",a,b,B,\"{\"\"x\"\": 1}\"\n\
                   c2,pairwise,q,a,,A,\n";
        let err = parse("d.csv", csv.as_bytes(), &ImportOptions::default()).unwrap_err();
        assert_eq!(err.to_string(), "d.csv:3: answer_b: is missing");
        let ok = csv.replace("a,,A", "a,b,A");
        let d = parse("d.csv", ok.as_bytes(), &ImportOptions::default()).unwrap();
        assert_eq!(d.items[0].question, "q, with comma");
        assert_eq!(d.items[0].meta["x"], 1);
        assert_eq!(d.label_counts(), vec![("A".into(), 1), ("B".into(), 1)]);
    }

    #[test]
    fn bundled_datasets_parse() {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../datasets/");
        for (file, n, task) in [
            ("llmbar_natural.jsonl", 100, "pairwise"),
            ("pandalm_test.jsonl", 999, "pairwise"),
            ("topical_chat_usr.jsonl", 360, "single"),
        ] {
            let bytes = std::fs::read(format!("{root}{file}")).unwrap();
            let d = parse(file, &bytes, &ImportOptions::default()).unwrap();
            assert_eq!((d.items.len(), d.task.name()), (n, task), "{file}");
        }
        // Topical-Chat USR rates each response on six criteria, each on its USR scale.
        let bytes = std::fs::read(format!("{root}topical_chat_usr.jsonl")).unwrap();
        let d = parse("usr.jsonl", &bytes, &ImportOptions::default()).unwrap();
        let criteria: Vec<(String, Task)> = d
            .criteria
            .iter()
            .map(|c| (c.name.clone(), c.task))
            .collect();
        let on = |lo, hi| Task::Single {
            scale_min: lo,
            scale_max: hi,
        };
        assert_eq!(
            criteria,
            vec![
                ("coherence".into(), on(1, 3)),
                ("engagingness".into(), on(1, 3)),
                ("groundedness".into(), on(0, 1)),
                ("naturalness".into(), on(1, 3)),
                ("overall".into(), on(1, 5)),
                ("understandability".into(), on(0, 1)),
            ]
        );
        assert!(d.items.iter().all(|i| i.human_labels.len() == 6));
        assert_eq!(d.items[0].human_labels["overall"], d.items[0].human_label);
    }

    const RATED: &str = r#"{"id":"s1","task":"single","question":"q","answer":"x","human_label":4,"human_labels":{"coherence":2.5,"overall":4},"label_scales":{"coherence":[1,3]}}"#;

    #[test]
    fn items_carry_labels_on_criteria_each_on_its_own_scale() {
        let d = jsonl(&[
            RATED,
            &RATED
                .replace("s1", "s2")
                .replace(r#""coherence":2.5"#, r#""coherence":null"#)
                .replace(r#","label_scales":{"coherence":[1,3]}"#, ""),
            r#"{"id":"s3","task":"single","question":"q","answer":"x","human_label":null,"human_labels":{"fluency":5}}"#,
        ])
        .unwrap();
        let names: Vec<&str> = d.criteria.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["coherence", "fluency", "overall"]);
        assert_eq!(
            d.criteria[0].task,
            Task::Single {
                scale_min: 1,
                scale_max: 3
            }
        );
        assert_eq!(
            d.criteria[1].task, d.task,
            "undeclared: the dataset's scale"
        );
        assert_eq!(d.items[0].human_labels["coherence"], Label::Rating(2.5));
        // Not rated on a criterion (null) is not a zero: the criterion is absent.
        assert!(!d.items[1].human_labels.contains_key("coherence"));
        assert_eq!(d.unlabelled[0].human_labels["fluency"], Label::Rating(5.0));
        // Pairwise criteria take A, B or tie.
        let p = jsonl(&[&PAIR.replace(
            r#""human_label":"A""#,
            r#""human_label":"A","human_labels":{"factuality":"tie"}"#,
        )])
        .unwrap();
        assert_eq!(p.criteria[0].task, Task::Pairwise);
        assert_eq!(
            p.items[0].human_labels["factuality"],
            Label::Choice(Choice::Tie)
        );
        // A CSV cell holds them as JSON.
        let csv = "id,task,question,answer,human_label,human_labels,label_scales\n\
                   c1,single,q,x,3,\"{\"\"coherence\"\": 3}\",\"{\"\"coherence\"\": [1, 3]}\"\n";
        let c = parse("d.csv", csv.as_bytes(), &ImportOptions::default()).unwrap();
        assert_eq!(c.items[0].human_labels["coherence"], Label::Rating(3.0));
    }

    #[test]
    fn bad_criteria_name_line_field_and_problem() {
        check_err(
            &[&RATED.replace(r#""coherence":2.5"#, r#""coherence":4"#)],
            "d.jsonl:1: human_labels.coherence: 4 is outside its scale 1..3",
        );
        check_err(
            &[RATED, &RATED.replace("s1", "s2").replace("[1,3]", "[1,5]")],
            "d.jsonl:2: label_scales.coherence: [1, 5] differs from [1, 3] at line 1",
        );
        check_err(
            &[&RATED.replace("[1,3]", "[3,1]")],
            "d.jsonl:1: label_scales.coherence: invalid scale 3-1: the minimum must be below the maximum, by at most 100",
        );
        check_err(
            &[&RATED.replace("[1,3]", "\"1-3\"")],
            "d.jsonl:1: label_scales.coherence: \"1-3\" is not [min, max] (two whole numbers)",
        );
        check_err(
            &[&RATED.replace(r#"{"coherence":2.5,"overall":4}"#, "[2, 4]")],
            "d.jsonl:1: human_labels: expected an object of criteria and their labels, found an array",
        );
        check_err(
            &[&RATED.replace(r#""overall":4"#, r#""overall":"good""#)],
            "d.jsonl:1: human_labels.overall: \"good\" is not a number on its scale 1..5",
        );
        check_err(
            &[&PAIR.replace(
                r#""human_label":"A""#,
                r#""human_label":"A","human_labels":{"factuality":"C"}"#,
            )],
            "d.jsonl:1: human_labels.factuality: \"C\" is not a pairwise label (expected \"A\", \"B\" or \"tie\")",
        );
    }
}
