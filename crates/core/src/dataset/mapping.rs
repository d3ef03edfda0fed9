//! Mapped imports: a file as its authors published it, read into Judgelab's fields. A
//! mapping names, for each field, a path into a row (`question=turns[0].content`,
//! `answer_a=conversation_a[1].content`: keys and indices, `[-1]` the last element), and how
//! the file's label values read (`model_a=A,model_b=B,"tie (bothbad)"=tie`), and ratings
//! moved onto another scale (`0-4:1-5`, after the label mapping). A row mapped is
//! a canonical record, checked as any other: an unmapped label value or a path that leads
//! nowhere is an error at its row, and the import keeps nothing.
//!
//! Without `id`, a row is named by its number; without `task`, answers `a` and `b` make it
//! pairwise and a single `answer` a rating.

use serde_json::{Map, Value};

use super::LineError;

/// Where a field's value is in a row: keys and indices from its top.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldPath {
    steps: Vec<Step>,
    text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Key(String),
    /// From the start, or from the end where negative.
    Index(i64),
}

/// Judgelab's fields a mapping may fill: the canonical ones but those holding JSON
/// (`human_labels.NAME` fills one criterion).
fn targets() -> impl Iterator<Item = &'static str> {
    super::FIELDS
        .into_iter()
        .filter(|f| !super::JSON_FIELDS.contains(f))
}

/// A file's fields and label values, as Judgelab's.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mapping {
    /// Judgelab's field, and where it is in a row.
    pub fields: Vec<(String, FieldPath)>,
    /// A label value as the file writes it, and as Judgelab reads it (`A`, `B`, `tie`, a
    /// number); empty: the values are read as they are.
    pub labels: Vec<(String, String)>,
    /// Ratings moved linearly from the file's scale onto another (`0-4:1-5`); none: as
    /// they are.
    pub rescale: Option<Rescale>,
}

/// A linear map of ratings from one scale onto another: `from.0` to `to.0`, `from.1` to
/// `to.1`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rescale {
    pub from: (f64, f64),
    pub to: (f64, f64),
}

impl Eq for Rescale {}

impl Rescale {
    /// `0-4:1-5`: the file's scale, then Judgelab's.
    pub fn parse(text: &str) -> Result<Rescale, String> {
        let bad =
            || format!("rescale {text:?}: expected FROM_MIN-FROM_MAX:TO_MIN-TO_MAX, e.g. 0-4:1-5");
        let range = |part: &str| -> Result<(f64, f64), String> {
            let (lo, hi) = part.trim().split_once('-').ok_or_else(bad)?;
            let lo: f64 = lo.trim().parse().map_err(|_| bad())?;
            let hi: f64 = hi.trim().parse().map_err(|_| bad())?;
            if !(lo.is_finite() && hi.is_finite() && lo < hi) {
                return Err(format!(
                    "rescale {text:?}: {part} is not a range from low to high"
                ));
            }
            Ok((lo, hi))
        };
        let (from, to) = text.split_once(':').ok_or_else(bad)?;
        Ok(Rescale {
            from: range(from)?,
            to: range(to)?,
        })
    }

    /// `x` on the target scale; an error outside the file's scale.
    fn apply(&self, x: f64) -> Result<f64, String> {
        let ((a, b), (c, d)) = (self.from, self.to);
        if !(a..=b).contains(&x) {
            return Err(format!("{x} is outside the scale {self} rescales from"));
        }
        Ok(c + (x - a) * (d - c) / (b - a))
    }
}

impl std::fmt::Display for Rescale {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ((a, b), (c, d)) = (self.from, self.to);
        write!(f, "{a}-{b}:{c}-{d}")
    }
}

impl FieldPath {
    /// `a.b[2].c`, `turns[-1]`, `["key.with.dots"]`.
    pub fn parse(text: &str) -> Result<FieldPath, String> {
        let bad = |why: &str| Err(format!("path {text:?}: {why}"));
        let mut steps = Vec::new();
        let mut rest = text.trim();
        if rest.is_empty() {
            return bad("is empty");
        }
        let mut expect_key = true;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('[') {
                let Some(end) = after.find(']') else {
                    return bad("a `[` is not closed");
                };
                let inside = after[..end].trim();
                if let Some(quoted) = inside.strip_prefix('"').and_then(|q| q.strip_suffix('"')) {
                    steps.push(Step::Key(quoted.to_string()));
                } else {
                    match inside.parse::<i64>() {
                        Ok(i) => steps.push(Step::Index(i)),
                        Err(_) => return bad("`[...]` holds an index or a quoted key"),
                    }
                }
                rest = &after[end + 1..];
                expect_key = false;
            } else if let Some(after) = rest.strip_prefix('.') {
                if expect_key {
                    return bad("a `.` without a key before it");
                }
                rest = after;
                expect_key = true;
            } else {
                if !expect_key {
                    return bad("keys are separated by `.`");
                }
                let end = rest.find(['.', '[']).unwrap_or(rest.len());
                let key = rest[..end].trim();
                if key.is_empty() || key.contains(']') {
                    return bad("a key is empty");
                }
                steps.push(Step::Key(key.to_string()));
                rest = &rest[end..];
                expect_key = false;
            }
        }
        if expect_key {
            return bad("ends with `.`");
        }
        Ok(FieldPath {
            steps,
            text: text.trim().to_string(),
        })
    }

    /// The value at this path in `row`, or what is missing on the way.
    pub fn get<'v>(&self, row: &'v Value) -> Result<&'v Value, String> {
        let mut at = row;
        for (n, step) in self.steps.iter().enumerate() {
            let next = match step {
                Step::Key(k) => at.as_object().and_then(|o| o.get(k)),
                Step::Index(i) => at.as_array().and_then(|a| {
                    let i = if *i < 0 { a.len() as i64 + i } else { *i };
                    usize::try_from(i).ok().and_then(|i| a.get(i))
                }),
            };
            at = next.ok_or_else(|| {
                let what = match step {
                    Step::Key(k) => format!("no key {k:?}"),
                    Step::Index(i) => format!("no element [{i}]"),
                };
                let kind = match at {
                    Value::Object(_) => "an object",
                    Value::Array(a) if a.is_empty() => "an empty list",
                    Value::Array(_) => "a list",
                    Value::Null => "null",
                    Value::String(_) => "a string",
                    Value::Number(_) => "a number",
                    Value::Bool(_) => "true or false",
                };
                let place = if n == 0 {
                    "the row".to_string()
                } else {
                    format!("{} ({kind})", self.prefix(n))
                };
                format!("{what} in {place}")
            })?;
        }
        Ok(at)
    }

    /// The first `n` steps, written.
    fn prefix(&self, n: usize) -> String {
        let mut out = String::new();
        for step in &self.steps[..n] {
            match step {
                Step::Key(k) if out.is_empty() => out += k,
                Step::Key(k) => out += &format!(".{k}"),
                Step::Index(i) => out += &format!("[{i}]"),
            }
        }
        out
    }
}

impl std::fmt::Display for FieldPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// As `--map` and `--label-map` write it: `question=q,…; labels: model_a=A,…`.
impl std::fmt::Display for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let quote = |s: &str| {
            if s.contains([',', '=', '"']) || s.trim() != s {
                format!("{s:?}")
            } else {
                s.to_string()
            }
        };
        let fields: Vec<String> = self
            .fields
            .iter()
            .map(|(t, p)| format!("{t}={p}"))
            .collect();
        f.write_str(&fields.join(","))?;
        if !self.labels.is_empty() {
            let labels: Vec<String> = self
                .labels
                .iter()
                .map(|(a, b)| format!("{}={}", quote(a), quote(b)))
                .collect();
            write!(f, "; labels: {}", labels.join(","))?;
        }
        if let Some(r) = &self.rescale {
            write!(f, "; rescale: {r}")?;
        }
        Ok(())
    }
}

/// Splits `a=b,"c, d"=e` at its top-level commas into its pairs, quotes removed.
fn pairs(text: &str) -> Result<Vec<(String, String)>, String> {
    let mut parts = Vec::new();
    let (mut current, mut quoted, mut depth) = (String::new(), false, 0i32);
    for c in text.chars() {
        match c {
            '"' => {
                quoted = !quoted;
                current.push(c);
            }
            '[' if !quoted => {
                depth += 1;
                current.push(c);
            }
            ']' if !quoted => {
                depth -= 1;
                current.push(c);
            }
            ',' if !quoted && depth == 0 => parts.push(std::mem::take(&mut current)),
            _ => current.push(c),
        }
    }
    if quoted {
        return Err(format!("{text:?}: a quote is not closed"));
    }
    parts.push(current);
    let unquote = |s: &str| {
        let s = s.trim();
        s.strip_prefix('"')
            .and_then(|q| q.strip_suffix('"'))
            .unwrap_or(s)
            .to_string()
    };
    parts
        .iter()
        .filter(|p| !p.trim().is_empty())
        .map(|p| {
            // The first `=` outside quotes splits the pair.
            let mut inside = false;
            let at = p.char_indices().find(|&(_, c)| {
                if c == '"' {
                    inside = !inside;
                }
                c == '=' && !inside
            });
            match at {
                Some((i, _)) => Ok((unquote(&p[..i]), unquote(&p[i + 1..]))),
                None => Err(format!("{:?} is not NAME=VALUE", p.trim())),
            }
        })
        .collect()
}

impl Mapping {
    /// The fields a mapping may fill (and `human_labels.NAME`, a criterion).
    pub fn targets() -> impl Iterator<Item = &'static str> {
        targets()
    }

    /// `--map question=…,answer_a=…` and `--label-map model_a=A,…` as written.
    pub fn parse(fields: &str, labels: Option<&str>) -> Result<Mapping, String> {
        let labels = labels.map(pairs).transpose()?;
        if labels.as_ref().is_some_and(Vec::is_empty) {
            return Err("the label mapping names no value".into());
        }
        Mapping::new(pairs(fields)?, labels.unwrap_or_default(), None)
    }

    /// Judgelab's fields with their paths, label values with their labels, and a rescale,
    /// checked.
    pub fn new(
        fields: Vec<(String, String)>,
        labels: Vec<(String, String)>,
        rescale: Option<Rescale>,
    ) -> Result<Mapping, String> {
        let mut mapping = Mapping {
            fields: Vec::new(),
            labels,
            rescale,
        };
        for (target, path) in fields {
            let known = targets().any(|t| t == target)
                || target
                    .strip_prefix("human_labels.")
                    .is_some_and(|name| !name.is_empty());
            if !known {
                return Err(format!(
                    "{target:?} is not a field Judgelab reads (these are: {}, human_labels.NAME)",
                    targets().collect::<Vec<_>>().join(", ")
                ));
            }
            if mapping.fields.iter().any(|(t, _)| *t == target) {
                return Err(format!("{target} is mapped twice"));
            }
            mapping.fields.push((target, FieldPath::parse(&path)?));
        }
        if mapping.fields.is_empty() {
            return Err("the mapping names no field".into());
        }
        // In Judgelab's order of fields, however written: one mapping, one text.
        let order = |t: &str| {
            super::FIELDS
                .iter()
                .position(|f| *f == t)
                .unwrap_or(super::FIELDS.len())
        };
        mapping
            .fields
            .sort_by(|(a, _), (b, _)| order(a).cmp(&order(b)).then(a.cmp(b)));
        Ok(mapping)
    }

    /// A mapping file: `[fields]` (Judgelab's field = a path) and optional `[labels]` (a
    /// value as written = a label), reusable across files of one shape.
    pub fn from_toml(text: &str) -> Result<Mapping, String> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct File {
            fields: toml::Table,
            #[serde(default)]
            labels: toml::Table,
            rescale: Option<RescaleTable>,
        }
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct RescaleTable {
            from: (f64, f64),
            to: (f64, f64),
        }
        let file: File = toml::from_str(text).map_err(|e| e.message().trim().to_string())?;
        let pairs = |table: &toml::Table, what: &str| -> Result<Vec<(String, String)>, String> {
            table
                .iter()
                .map(|(k, v)| match v {
                    toml::Value::String(s) => Ok((k.clone(), s.clone())),
                    toml::Value::Integer(i) => Ok((k.clone(), i.to_string())),
                    toml::Value::Float(x) => Ok((k.clone(), x.to_string())),
                    _ => Err(format!("{what}.{k}: expected a string")),
                })
                .collect()
        };
        let rescale = file
            .rescale
            .map(|r| Rescale::parse(&format!("{}-{}:{}-{}", r.from.0, r.from.1, r.to.0, r.to.1)))
            .transpose()?;
        Mapping::new(
            pairs(&file.fields, "fields")?,
            pairs(&file.labels, "labels")?,
            rescale,
        )
    }

    /// The mapping as a mapping file ([`Mapping::from_toml`] reads it back): what is kept
    /// with a dataset imported through it, to show and to reuse.
    pub fn to_toml(&self) -> String {
        let mut file = toml::Table::new();
        let table = |pairs: Vec<(String, String)>| {
            toml::Value::Table(
                pairs
                    .into_iter()
                    .map(|(k, v)| (k, toml::Value::String(v)))
                    .collect(),
            )
        };
        file.insert(
            "fields".into(),
            table(
                self.fields
                    .iter()
                    .map(|(t, p)| (t.clone(), p.to_string()))
                    .collect(),
            ),
        );
        if !self.labels.is_empty() {
            file.insert("labels".into(), table(self.labels.clone()));
        }
        if let Some(r) = self.rescale {
            let pair = |(a, b): (f64, f64)| toml::Value::Array(vec![a.into(), b.into()]);
            let mut t = toml::Table::new();
            t.insert("from".into(), pair(r.from));
            t.insert("to".into(), pair(r.to));
            file.insert("rescale".into(), toml::Value::Table(t));
        }
        toml::to_string(&file).expect("a mapping serialises")
    }

    /// `row` (at `line`) as a canonical record, or every problem it has.
    pub fn apply(&self, line: usize, row: &Value) -> Result<Map<String, Value>, Vec<LineError>> {
        let mut out = Map::new();
        let mut criteria = Map::new();
        let mut errors = Vec::new();
        for (target, path) in &self.fields {
            let field = format!("{target} (mapped from {path})");
            match path.get(row) {
                Ok(value) => {
                    let value = if target == "human_label" || target.starts_with("human_labels.") {
                        match self.label(value) {
                            Ok(v) => v,
                            Err(problem) => {
                                errors.push(LineError {
                                    line,
                                    field,
                                    problem,
                                });
                                continue;
                            }
                        }
                    } else {
                        value.clone()
                    };
                    match target.strip_prefix("human_labels.") {
                        Some(name) => {
                            criteria.insert(name.to_string(), value);
                        }
                        None => {
                            out.insert(target.clone(), value);
                        }
                    }
                }
                Err(problem) => errors.push(LineError {
                    line,
                    field,
                    problem,
                }),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        if !criteria.is_empty() {
            out.insert("human_labels".into(), Value::Object(criteria));
        }
        out.entry("id")
            .or_insert_with(|| Value::String(line.to_string()));
        if !out.contains_key("task") {
            let task = if out.contains_key("answer_a") || out.contains_key("answer_b") {
                "pairwise"
            } else {
                "single"
            };
            out.insert("task".into(), Value::String(task.into()));
        }
        // A number as an id or an answer reads as its text.
        for key in [
            "id",
            "question",
            "answer_a",
            "answer_b",
            "answer",
            "reference",
        ] {
            if let Some(v @ (Value::Number(_) | Value::Bool(_))) = out.get(key) {
                let text = v.to_string();
                out.insert(key.into(), Value::String(text));
            }
        }
        Ok(out)
    }

    /// A label value read through the label mapping (as it is without one); a number
    /// written as text (a CSV cell) reads as the number.
    fn label(&self, value: &Value) -> Result<Value, String> {
        let label = self.mapped_label(value)?;
        match (self.rescale, label.as_f64()) {
            (Some(r), Some(x)) => {
                let y = r.apply(x).map_err(|why| format!("value {value}: {why}"))?;
                Ok(serde_json::Number::from_f64(y).map_or(label, Value::Number))
            }
            _ => Ok(label),
        }
    }

    /// A label value read through the label mapping, before any rescale.
    fn mapped_label(&self, value: &Value) -> Result<Value, String> {
        if self.labels.is_empty() || value.is_null() {
            return Ok(match value {
                Value::String(s) => number(s).unwrap_or_else(|| value.clone()),
                _ => value.clone(),
            });
        }
        let written = match value {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let Some((_, to)) = self.labels.iter().find(|(from, _)| *from == written) else {
            let known: Vec<&str> = self.labels.iter().map(|(f, _)| f.as_str()).collect();
            return Err(format!(
                "value {written:?} is not in the label mapping (it maps {})",
                known.join(", ")
            ));
        };
        Ok(number(to).unwrap_or_else(|| Value::String(to.clone())))
    }
}

/// `text` as a JSON number, where it is one.
fn number(text: &str) -> Option<Value> {
    let x = text.trim().parse::<f64>().ok()?;
    serde_json::Number::from_f64(x).map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_reach_into_nested_rows() {
        let row = json!({
            "conversation_a": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}],
            "scores": {"help.ful": 3},
            "winner": "model_a"
        });
        let at = |p: &str| FieldPath::parse(p).unwrap().get(&row).cloned();
        assert_eq!(at("conversation_a[1].content"), Ok(json!("a")));
        assert_eq!(at("conversation_a[-1].role"), Ok(json!("assistant")));
        assert_eq!(at("scores[\"help.ful\"]"), Ok(json!(3)));
        assert_eq!(at("winner"), Ok(json!("model_a")));
        assert_eq!(
            at("conversation_a[2].content"),
            Err("no element [2] in conversation_a (a list)".into())
        );
        assert_eq!(
            at("conversation_a[0].text"),
            Err("no key \"text\" in conversation_a[0] (an object)".into())
        );
        assert_eq!(at("turns"), Err("no key \"turns\" in the row".into()));
        for bad in ["", "a.", ".a", "a[", "a[x]", "a..b", "a[0]b"] {
            assert!(FieldPath::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_row_maps_to_a_canonical_record() {
        let m = Mapping::parse(
            "question=conversation_a[0].content, answer_a=conversation_a[1].content,answer_b=conversation_b[1].content,human_label=winner",
            Some("model_a=A,model_b=B,tie=tie,\"tie (bothbad)\"=tie"),
        )
        .unwrap();
        let row = |winner: &str| {
            json!({
                "conversation_a": [{"content": "2+2?"}, {"content": "4"}],
                "conversation_b": [{"content": "2+2?"}, {"content": "5"}],
                "winner": winner
            })
        };
        let record = m.apply(7, &row("tie (bothbad)")).unwrap();
        assert_eq!(
            Value::Object(record),
            json!({"question": "2+2?", "answer_a": "4", "answer_b": "5", "human_label": "tie", "id": "7", "task": "pairwise"})
        );
        let errors = m.apply(8, &row("model_c")).unwrap_err();
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].line, 8);
        assert_eq!(errors[0].field, "human_label (mapped from winner)");
        assert!(
            errors[0]
                .problem
                .contains("\"model_c\" is not in the label mapping"),
            "{}",
            errors[0].problem
        );
    }

    #[test]
    fn ratings_and_criteria_map_from_columns() {
        let m = Mapping::parse(
            "id=row,question=prompt,answer=response,human_label=helpfulness,human_labels.coherence=coherence",
            None,
        )
        .unwrap();
        let record = m
            .apply(
                2,
                &json!({"row": 12, "prompt": "p", "response": "r", "helpfulness": 3, "coherence": 4}),
            )
            .unwrap();
        assert_eq!(
            Value::Object(record),
            json!({"id": "12", "question": "p", "answer": "r", "human_label": 3, "human_labels": {"coherence": 4}, "task": "single"})
        );
    }

    #[test]
    fn a_bad_mapping_says_what_is_wrong() {
        let err = |f: &str, l: Option<&str>| Mapping::parse(f, l).unwrap_err();
        assert!(err("questoin=q", None).contains("\"questoin\" is not a field Judgelab reads"));
        assert!(err("question=q,question=r", None).contains("question is mapped twice"));
        assert!(err("question", None).contains("is not NAME=VALUE"));
        assert!(err("question=a.", None).contains("ends with `.`"));
        assert!(err("question=q", Some("\"a=A")).contains("a quote is not closed"));
    }

    /// Ratings on the file's 0-4 move onto 1-5 after the label mapping; a value off the
    /// file's scale is an error at its row; a mapping file says the same.
    #[test]
    fn ratings_rescale_linearly() {
        let m = Mapping::new(
            vec![
                ("question".into(), "q".into()),
                ("answer".into(), "a".into()),
                ("human_label".into(), "h".into()),
                ("human_labels.c".into(), "c".into()),
            ],
            Vec::new(),
            Some(Rescale::parse("0-4:1-5").unwrap()),
        )
        .unwrap();
        let out = m
            .apply(2, &json!({"q": "x", "a": "y", "h": "3", "c": 0}))
            .unwrap();
        assert_eq!(out["human_label"], json!(4.0));
        assert_eq!(out["human_labels"]["c"], json!(1.0));
        let err = m
            .apply(3, &json!({"q": "x", "a": "y", "h": 5, "c": 0}))
            .unwrap_err();
        assert_eq!(err[0].field, "human_label (mapped from h)");
        assert!(
            err[0].problem.contains("outside the scale 0-4:1-5"),
            "{:?}",
            err[0]
        );
        assert!(m.to_string().ends_with("; rescale: 0-4:1-5"), "{m}");
        let file = Mapping::from_toml(
            "[fields]\nquestion = \"q\"\nanswer = \"a\"\nhuman_label = \"h\"\n[rescale]\nfrom = [0, 4]\nto = [1, 5]\n",
        )
        .unwrap();
        assert_eq!(file.rescale, m.rescale);
        assert_eq!(Mapping::from_toml(&m.to_toml()).unwrap(), m);
        assert!(Rescale::parse("4-0:1-5").is_err());
        assert!(Rescale::parse("0-4").is_err());
    }
}
