//! A first look at a file of another shape, for the app's import wizard: its first rows,
//! the paths into them, the values its label takes, and a first guess at the mapping
//! ([`super::mapping`]) that the researcher then corrects.

use std::collections::BTreeMap;

use serde_json::Value;

use super::formats::{self, Source};
use super::{DatasetError, FIELDS};

/// The first rows of a file as they are.
#[derive(Debug, Clone, PartialEq)]
pub struct Peek {
    /// The top-level fields of the first rows, in order of appearance.
    pub columns: Vec<String>,
    /// Every path to a value in the first rows (`conversation_a[0].content`, and `[-1]`
    /// for the last element of a list), in order, as a mapping writes it.
    pub paths: Vec<String>,
    pub rows: Vec<Value>,
    /// Its fields are Judgelab's own: it imports without a mapping.
    pub canonical: bool,
}

/// The first `n` rows of `source` (the content of `path`).
pub fn peek(path: &str, source: Source<'_>, n: usize) -> Result<Peek, DatasetError> {
    let format = formats::format(path).map_err(|problem| DatasetError::File {
        path: path.to_string(),
        problem,
    })?;
    let mut rows = Vec::new();
    formats::records(path, source, format, true, &mut |(_, record)| {
        if let Ok(obj) = record {
            rows.push(Value::Object(obj));
        }
        rows.len() < n
    })?;
    let mut columns: Vec<String> = Vec::new();
    let mut paths: Vec<String> = Vec::new();
    for row in &rows {
        for key in row.as_object().into_iter().flat_map(|o| o.keys()) {
            if !columns.contains(key) {
                columns.push(key.clone());
            }
        }
        leaves(row, String::new(), &mut paths);
    }
    let canonical = columns.iter().any(|c| c == "question")
        && columns.iter().all(|c| FIELDS.contains(&c.as_str()));
    Ok(Peek {
        columns,
        paths,
        rows,
        canonical,
    })
}

/// A key as a path step: bare where it can be, quoted otherwise.
fn step(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '-' || c == ' ');
    match bare {
        true => key.to_string(),
        false => format!("[{key:?}]"),
    }
}

/// The paths to `value`'s leaves under `prefix`, each once, at most 200.
fn leaves(value: &Value, prefix: String, out: &mut Vec<String>) {
    if out.len() >= 200 {
        return;
    }
    match value {
        Value::Object(obj) if !obj.is_empty() => {
            for (k, v) in obj {
                let s = step(k);
                let next = match (prefix.is_empty(), s.starts_with('[')) {
                    (true, _) => s,
                    (false, true) => format!("{prefix}{s}"),
                    (false, false) => format!("{prefix}.{s}"),
                };
                leaves(v, next, out);
            }
        }
        Value::Array(items) if !items.is_empty() => {
            leaves(&items[0], format!("{prefix}[0]"), out);
            if items.len() > 1 {
                leaves(&items[items.len() - 1], format!("{prefix}[-1]"), out);
            }
        }
        _ => {
            if !prefix.is_empty() && !out.contains(&prefix) {
                out.push(prefix);
            }
        }
    }
}

/// Names a field often has in published sets, by Judgelab's field, most likely first.
const NAMES: [(&str, &[&str]); 7] = [
    ("id", &["id", "uid", "item_id", "sample_id", "example_id"]),
    (
        "question",
        &[
            "question",
            "prompt",
            "instruction",
            "input",
            "query",
            "context",
        ],
    ),
    (
        "answer_a",
        &[
            "answer_a",
            "response_a",
            "output_a",
            "output_1",
            "response_1",
            "completion_a",
            "model_a_response",
        ],
    ),
    (
        "answer_b",
        &[
            "answer_b",
            "response_b",
            "output_b",
            "output_2",
            "response_2",
            "completion_b",
            "model_b_response",
        ],
    ),
    (
        "answer",
        &["answer", "response", "output", "completion", "summary"],
    ),
    (
        "reference",
        &[
            "reference",
            "reference_answer",
            "ref_answer",
            "gold",
            "target",
        ],
    ),
    (
        "human_label",
        &[
            "human_label",
            "label",
            "winner",
            "preference",
            "choice",
            "score",
            "rating",
            "overall",
            "helpfulness",
        ],
    ),
];

/// A first guess at the mapping of the file `peek` saw: Judgelab's field and a path, for
/// the fields a common name or a conversation's turns give away. Attribute columns of
/// numbers beside a numeric label become criteria (`human_labels.NAME`).
pub fn guess(peek: &Peek) -> Vec<(String, String)> {
    let find = |names: &[&str]| -> Option<String> {
        names.iter().find_map(|n| {
            peek.columns
                .iter()
                .find(|c| c.eq_ignore_ascii_case(n))
                .map(|c| step(c))
        })
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for (target, names) in NAMES {
        if let Some(path) = find(names) {
            out.push((target.to_string(), path));
        }
    }
    let has = |t: &str, out: &[(String, String)]| out.iter().any(|(f, _)| f == t);
    // Conversations: the first turn asks, the last answers.
    for (side, conv) in [("a", "conversation_a"), ("b", "conversation_b")] {
        let target = format!("answer_{side}");
        let first = format!("{conv}[0].content");
        if peek.paths.contains(&first) && !has(&target, &out) {
            out.push((target, format!("{conv}[-1].content")));
            if !has("question", &out) {
                out.push(("question".into(), first));
            }
        }
    }
    if has("answer_a", &out) && has("answer_b", &out) {
        out.retain(|(t, _)| t != "answer");
    }
    let numeric = |column: &str| {
        !peek.rows.is_empty()
            && peek.rows.iter().all(|r| match &r[column] {
                Value::Number(_) => true,
                Value::String(s) => s.trim().parse::<f64>().is_ok(),
                _ => false,
            })
    };
    let label = out
        .iter()
        .find(|(t, _)| t == "human_label")
        .map(|(_, p)| p.clone());
    if let Some(label) = label.filter(|l| numeric(l)) {
        let used: Vec<String> = out.iter().map(|(_, p)| p.clone()).collect();
        for c in &peek.columns {
            if !used.contains(&step(c)) && *c != label && numeric(c) && !c.ends_with("id") {
                out.push((format!("human_labels.{c}"), step(c)));
            }
        }
    }
    // In Judgelab's order.
    let order = |t: &str| {
        NAMES
            .iter()
            .position(|(n, _)| *n == t)
            .unwrap_or(NAMES.len())
    };
    out.sort_by_key(|(t, _)| order(t));
    out
}

/// How often each value the label path reads takes in the first `limit` rows (as text;
/// an empty cell or a missing value left out), most frequent first; and the rows read.
pub fn label_values(
    path: &str,
    source: Source<'_>,
    label_path: &str,
    limit: usize,
) -> Result<(Vec<(String, usize)>, usize), DatasetError> {
    let at =
        super::mapping::FieldPath::parse(label_path).map_err(|problem| DatasetError::File {
            path: path.to_string(),
            problem,
        })?;
    let format = formats::format(path).map_err(|problem| DatasetError::File {
        path: path.to_string(),
        problem,
    })?;
    let mut counts = BTreeMap::<String, usize>::new();
    let mut n = 0;
    formats::records(path, source, format, true, &mut |(_, record)| {
        n += 1;
        if let Ok(obj) = record {
            match at.get(&Value::Object(obj)) {
                Ok(Value::Null) | Err(_) => {}
                Ok(Value::String(s)) if s.is_empty() => {}
                Ok(Value::String(s)) => *counts.entry(s.clone()).or_default() += 1,
                Ok(v) => *counts.entry(v.to_string()).or_default() += 1,
            }
        }
        n < limit
    })?;
    let mut out: Vec<(String, usize)> = counts.into_iter().collect();
    out.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    Ok((out, n))
}

/// A first guess at how label values read: words naming the first or second answer, or
/// a tie; numbers (ratings) read as they are, so none is guessed for them.
pub fn guess_labels(values: &[(String, usize)]) -> Vec<(String, String)> {
    if values.iter().all(|(v, _)| v.trim().parse::<f64>().is_ok()) {
        return Vec::new();
    }
    values
        .iter()
        .filter_map(|(v, _)| {
            let l = v.trim().to_ascii_lowercase();
            let label = if l.contains("tie") || l == "equal" || l == "same" {
                "tie"
            } else if [
                "a",
                "model_a",
                "response_a",
                "output_a",
                "answer_a",
                "1",
                "first",
                "left",
            ]
            .contains(&l.as_str())
            {
                "A"
            } else if [
                "b",
                "model_b",
                "response_b",
                "output_b",
                "answer_b",
                "2",
                "second",
                "right",
            ]
            .contains(&l.as_str())
            {
                "B"
            } else {
                return None;
            };
            Some((v.clone(), label.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MT-Bench's shape: the question and answers in conversations, the label in
    /// `winner`; HelpSteer2's: attribute columns of numbers.
    #[test]
    fn common_shapes_are_guessed() {
        let row = r#"{"question_id": 81, "model_a": "x", "model_b": "y", "conversation_a": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], "conversation_b": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "b"}], "winner": "model_a", "judge": "author_1"}"#;
        let file = format!(
            "{row}\n{}\n",
            row.replace("model_a\", \"judge", "tie (bothbad)\", \"judge")
        );
        let p = peek("mt.jsonl", Source::Bytes(file.as_bytes()), 5).unwrap();
        assert!(!p.canonical);
        assert!(
            p.paths.contains(&"conversation_a[-1].content".to_string()),
            "{:?}",
            p.paths
        );
        let g = guess(&p);
        assert_eq!(
            g,
            [
                ("question", "conversation_a[0].content"),
                ("answer_a", "conversation_a[-1].content"),
                ("answer_b", "conversation_b[-1].content"),
                ("human_label", "winner"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        let (values, n) =
            label_values("mt.jsonl", Source::Bytes(file.as_bytes()), "winner", 100).unwrap();
        assert_eq!(n, 2);
        assert_eq!(
            values,
            [("model_a".to_string(), 1), ("tie (bothbad)".to_string(), 1)]
        );
        assert_eq!(
            guess_labels(&values),
            [("model_a", "A"), ("tie (bothbad)", "tie")]
                .map(|(a, b)| (a.to_string(), b.to_string()))
        );

        let csv = "prompt,response,helpfulness,coherence,verbosity\np,r,3,4,1\nq,s,1,2,0\n";
        let p = peek("h.csv", Source::Bytes(csv.as_bytes()), 5).unwrap();
        let g = guess(&p);
        assert_eq!(
            g,
            [
                ("question", "prompt"),
                ("answer", "response"),
                ("human_label", "helpfulness"),
                ("human_labels.coherence", "coherence"),
                ("human_labels.verbosity", "verbosity"),
            ]
            .map(|(a, b)| (a.to_string(), b.to_string()))
        );
        let (values, _) =
            label_values("h.csv", Source::Bytes(csv.as_bytes()), "helpfulness", 100).unwrap();
        assert!(guess_labels(&values).is_empty());

        let canonical = r#"{"id":"1","task":"pairwise","question":"q","answer_a":"a","answer_b":"b","human_label":"A"}"#;
        assert!(
            peek("c.jsonl", Source::Bytes(canonical.as_bytes()), 5)
                .unwrap()
                .canonical
        );
    }
}
