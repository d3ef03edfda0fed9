//! Rubrics: a template that declares criteria has the judge rate each item on several of
//! the dataset's criteria ([`crate::dataset::criteria`]), each scored against its own human
//! labels.
//!
//! A rubric template declares its criteria at its top, each with a short definition (and,
//! if it likes, the scale it expects, which must be the dataset's):
//!
//! ```jinja
//! {% set criteria = [
//!   {"name": "coherence", "definition": "Does the response follow from the context?"},
//!   {"name": "groundedness", "definition": "Does it use the facts given?", "scale": [0, 1]},
//! ] %}
//! ```
//!
//! The `style` axis ([`crate::sweep::Style`]) says how they are asked: all in one call
//! answered with a value per criterion (`rubric`), or a call per criterion answered with one
//! value (`checklist`). The template sees the criteria a call asks as `rubric` (each with
//! `name`, `definition`, `scale_min`, `scale_max`) and the style as `style`.
//!
//! A rubric answer is read by one tolerant scanner ([`parse`]): for each criterion, its name
//! followed by `:`, `=` or `-` and a value, in a JSON object (`{"coherence": 2}`, also when
//! cut off), in labelled lines (`coherence: 2`) or in Markdown (`**Coherence**: 2`). A
//! criterion the answer leaves out is a parse failure of that criterion alone, never a
//! silent zero; the others keep their values.
//!
//! A checklist's one-token answers can be read exactly, from one pass per (item,
//! criterion), each on its criterion's scale (the engine's `exact` module).
//!
//! A checklist may ask a criterion as yes/no items the template declares
//! (`"items": ["Does it …?", …]`), a call each, combined into the criterion's value by a
//! stated rule ([`items`]).
//!
//! [`weights`] learns how much each criterion says about the humans' overall label.

pub mod items;
pub mod weights;

use std::collections::BTreeMap;

use serde::Serialize;

use crate::dataset::{Criterion, Label, Task};
use crate::verdict::{self, FailureKind, OutputKind, Verdict};

/// A criterion as a template declares it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Declared {
    pub name: String,
    pub definition: String,
    /// The scale the template expects; none: whatever the dataset's is.
    pub scale: Option<(i64, i64)>,
    /// Yes/no questions a checklist asks of it instead of its value ([`items`]).
    pub items: Vec<String>,
}

/// A criterion as the judge is asked it: its definition and what its labels are (the
/// dataset's). A checklist's yes/no item is asked as one too ([`items::calls`]).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Asked {
    pub name: String,
    pub definition: String,
    pub task: Task,
    /// The yes/no questions a checklist asks of it, if the template declares some.
    pub items: Vec<String>,
    /// Asked as one of a criterion's yes/no items: its question.
    pub item: Option<String>,
}

/// The criteria `declared` as asked of a dataset with `criteria`, or why they cannot be: a
/// criterion the dataset's humans did not rate, or a scale that is not theirs.
pub fn ask(declared: &[Declared], criteria: &[Criterion]) -> Result<Vec<Asked>, String> {
    declared
        .iter()
        .map(|c| {
            let rated = criteria.iter().find(|d| d.name == c.name).ok_or_else(|| {
                if criteria.is_empty() {
                    format!(
                        "criterion {:?} is not one of the dataset's, which has none (human_labels)",
                        c.name
                    )
                } else {
                    let names: Vec<String> =
                        criteria.iter().map(|d| format!("{:?}", d.name)).collect();
                    format!(
                        "criterion {:?} is not one of the dataset's ({})",
                        c.name,
                        names.join(", ")
                    )
                }
            })?;
            if let (Some((lo, hi)), Task::Single {
                scale_min,
                scale_max,
            }) = (c.scale, rated.task)
            {
                if (lo, hi) != (scale_min, scale_max) {
                    return Err(format!(
                        "criterion {:?} is declared on {lo}-{hi}; the dataset rates it {scale_min}-{scale_max}",
                        c.name
                    ));
                }
            }
            Ok(Asked {
                name: c.name.clone(),
                definition: c.definition.clone(),
                task: rated.task,
                items: c.items.clone(),
                item: None,
            })
        })
        .collect()
}

/// Each criterion's verdict in a rubric answer `raw` (see the module doc). `truncated`
/// says the output stopped at `max_tokens`: a criterion it never reached failed as
/// truncated.
pub fn parse(asked: &[Asked], raw: &str, truncated: bool) -> BTreeMap<String, Verdict> {
    asked
        .iter()
        .map(|a| (a.name.clone(), parse_criterion(a, raw, truncated)))
        .collect()
}

fn parse_criterion(asked: &Asked, raw: &str, truncated: bool) -> Verdict {
    if raw.trim().is_empty() {
        return Verdict::Failed(if truncated {
            FailureKind::Truncated
        } else {
            FailureKind::Empty
        });
    }
    let lower = raw.to_ascii_lowercase();
    let mut out_of_range = false;
    for spelling in spellings(&asked.name) {
        for (at, _) in lower.match_indices(&spelling) {
            let before = lower[..at].chars().next_back();
            let after = lower[at + spelling.len()..].chars().next();
            let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
            if word(before) || word(after) {
                continue;
            }
            let Some(segment) = value_after(&raw[at + spelling.len()..]) else {
                continue;
            };
            match value(asked.task, segment) {
                Some(Verdict::Parsed(label)) => return Verdict::Parsed(label),
                Some(Verdict::Failed(_)) => out_of_range = true,
                None => {}
            }
        }
    }
    Verdict::Failed(if out_of_range {
        FailureKind::OutOfRange
    } else if truncated {
        FailureKind::Truncated
    } else {
        FailureKind::NoLabel
    })
}

/// The ways a criterion's name may be written: `engaging_ness`, `engaging ness`,
/// `engaging-ness` (lowercase).
fn spellings(name: &str) -> Vec<String> {
    let name = name.to_ascii_lowercase();
    let mut all = vec![name.clone()];
    for sep in [" ", "-"] {
        let s = name.replace('_', sep);
        if !all.contains(&s) {
            all.push(s);
        }
    }
    all
}

/// The value written after a criterion's name: past closing quotes or `*`, a separator
/// (`:`, `=`, `-`) and opening quotes, up to the end of its line, a `,` or a `}`.
fn value_after(rest: &str) -> Option<&str> {
    let decoration = |c: char| c == '"' || c == '\'' || c == '*' || c.is_whitespace();
    let rest = rest.trim_start_matches(decoration);
    let rest = rest.strip_prefix([':', '=', '-'])?;
    let rest = rest.trim_start_matches(|c: char| decoration(c) && c != '\n');
    let end = rest.find(['\n', ',', '}']).unwrap_or(rest.len());
    Some(&rest[..end])
}

/// A value of `task` in `segment`: `None` where it holds none, an out-of-range failure
/// where its number is off the scale.
fn value(task: Task, segment: &str) -> Option<Verdict> {
    match task {
        Task::Pairwise => verdict::find_choice(segment).map(|c| Verdict::Parsed(Label::Choice(c))),
        Task::Single {
            scale_min,
            scale_max,
        } => {
            if let Some(x) = verdict::find_number(segment) {
                return Some(verdict::rating(x, scale_min, scale_max));
            }
            if (scale_min, scale_max) == (0, 1) {
                return yes_no(segment).map(|x| Verdict::Parsed(Label::Rating(x)));
            }
            None
        }
    }
}

/// `yes`/`true` as 1, `no`/`false` as 0, where the text starts with one of them.
fn yes_no(text: &str) -> Option<f64> {
    let word: String = text
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .chars()
        .take_while(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_ascii_lowercase();
    match word.as_str() {
        "yes" | "true" => Some(1.0),
        "no" | "false" => Some(0.0),
        _ => None,
    }
}

/// A rubric call's verdict on the item's own label (a rating on `scale`): the mean of its
/// criteria's values, each as a share of its own scale, put on `scale` — the unweighted
/// aggregate. Where a criterion failed, the call's verdict is that failure (the first in
/// `asked`'s order): the answer was not complete.
pub fn aggregate(
    asked: &[Asked],
    criteria: &BTreeMap<String, Verdict>,
    scale: (i64, i64),
) -> Verdict {
    let mut shares = Vec::with_capacity(asked.len());
    for a in asked {
        let share = match (criteria.get(&a.name), a.task) {
            (Some(Verdict::Failed(kind)), _) => return Verdict::Failed(*kind),
            (
                Some(Verdict::Parsed(Label::Rating(x))),
                Task::Single {
                    scale_min,
                    scale_max,
                },
            ) => (x - scale_min as f64) / (scale_max - scale_min) as f64,
            _ => return Verdict::Failed(FailureKind::NoLabel),
        };
        shares.push(share);
    }
    if shares.is_empty() {
        return Verdict::Failed(FailureKind::NoLabel);
    }
    let mean = shares.iter().sum::<f64>() / shares.len() as f64;
    let (lo, hi) = scale;
    Verdict::Parsed(Label::Rating(lo as f64 + mean * (hi - lo) as f64))
}

/// A checklist answer: one criterion's value alone (`2`, `{"score": 2}`, `yes` on a 0-1
/// scale, or `coherence: 2`).
pub fn parse_one(kind: OutputKind, asked: &Asked, raw: &str, truncated: bool) -> Verdict {
    let parsed = verdict::parse(kind, asked.task, raw, truncated);
    if let (
        Verdict::Failed(FailureKind::NoLabel | FailureKind::Truncated),
        Task::Single {
            scale_min: 0,
            scale_max: 1,
        },
    ) = (&parsed, asked.task)
    {
        let text = raw.trim_start_matches(|c: char| c == '{' || c.is_whitespace());
        let text = text.strip_prefix("\"score\":").unwrap_or(text);
        if let Some(x) = yes_no(text) {
            return Verdict::Parsed(Label::Rating(x));
        }
    }
    parsed
}

/// A GBNF grammar admitting only a complete rubric answer: a JSON object with every
/// criterion in order (`output = "json"`), else a labelled line per criterion.
pub fn grammar(kind: OutputKind, asked: &[Asked], allow_tie: bool) -> String {
    let quoted = |text: &str| {
        let escaped = text
            .replace('\\', "\\\\")
            .replace('"', "\\\"")
            .replace('\n', "\\n");
        format!("\"{escaped}\"")
    };
    let json = kind == OutputKind::Json;
    let mut rules = Vec::new();
    let mut parts = Vec::new();
    for (i, a) in asked.iter().enumerate() {
        let values: Vec<String> = verdict::spellings(a.task, allow_tie)
            .iter()
            .map(|(s, _)| match (json, a.task) {
                (true, Task::Pairwise) => quoted(&format!("\"{s}\"")),
                _ => quoted(s),
            })
            .collect();
        rules.push(format!("v{i} ::= {}", values.join(" | ")));
        let key = if json {
            format!("\"{}\": ", a.name)
        } else {
            format!("{}: ", a.name)
        };
        let separator = match (i, json) {
            (0, _) => "",
            (_, true) => ", ",
            (_, false) => "\n",
        };
        parts.push(format!("{} v{i}", quoted(&format!("{separator}{key}"))));
    }
    let (open, close) = if json {
        (quoted("{"), quoted("}"))
    } else {
        (String::new(), String::new())
    };
    format!(
        "root ::= {open} {} {close}\n{}\n",
        parts.join(" "),
        rules.join("\n")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asked(name: &str, lo: i64, hi: i64) -> Asked {
        Asked {
            name: name.into(),
            definition: String::new(),
            task: Task::Single {
                scale_min: lo,
                scale_max: hi,
            },
            items: Vec::new(),
            item: None,
        }
    }

    fn usr() -> Vec<Asked> {
        vec![
            asked("naturalness", 1, 3),
            asked("coherence", 1, 3),
            asked("groundedness", 0, 1),
        ]
    }

    fn rating(x: f64) -> Verdict {
        Verdict::Parsed(Label::Rating(x))
    }

    fn failed(k: FailureKind) -> Verdict {
        Verdict::Failed(k)
    }

    #[test]
    fn a_json_answer_gives_each_criterion_its_value() {
        let v = parse(
            &usr(),
            r#"{"naturalness": 3, "coherence": "2", "groundedness": true}"#,
            false,
        );
        assert_eq!(v["naturalness"], rating(3.0));
        assert_eq!(v["coherence"], rating(2.0));
        assert_eq!(v["groundedness"], rating(1.0));
    }

    #[test]
    fn a_missing_criterion_fails_alone() {
        let v = parse(&usr(), r#"{"coherence": 2}"#, false);
        assert_eq!(v["coherence"], rating(2.0));
        assert_eq!(v["naturalness"], failed(FailureKind::NoLabel));
        assert_eq!(v["groundedness"], failed(FailureKind::NoLabel));
        // Cut off by max_tokens: what it never reached is truncated.
        let v = parse(&usr(), r#"{"naturalness": 2, "coher"#, true);
        assert_eq!(v["naturalness"], rating(2.0));
        assert_eq!(v["coherence"], failed(FailureKind::Truncated));
        let v = parse(&usr(), "  ", false);
        assert_eq!(v["coherence"], failed(FailureKind::Empty));
    }

    #[test]
    fn labelled_lines_and_markdown_are_read() {
        let v = parse(
            &usr(),
            "Naturalness: 2/3\n**Coherence**: 3 (it follows)\n- Groundedness = no\n",
            false,
        );
        assert_eq!(v["naturalness"], rating(2.0));
        assert_eq!(v["coherence"], rating(3.0));
        assert_eq!(v["groundedness"], rating(0.0));
    }

    #[test]
    fn an_echoed_question_is_skipped_and_off_scale_values_are_named() {
        let v = parse(
            &usr(),
            "coherence: does it make sense?\ncoherence: 2\nnaturalness: 7",
            false,
        );
        assert_eq!(v["coherence"], rating(2.0));
        assert_eq!(v["naturalness"], failed(FailureKind::OutOfRange));
        // A name inside a longer word is not the criterion.
        let v = parse(&[asked("coherence", 1, 3)], "incoherence: 1", false);
        assert_eq!(v["coherence"], failed(FailureKind::NoLabel));
        let v = parse(&[asked("engaging_ness", 1, 3)], "Engaging ness - 3", false);
        assert_eq!(v["engaging_ness"], rating(3.0));
    }

    #[test]
    fn a_checklist_answer_is_one_value() {
        let g = asked("groundedness", 0, 1);
        assert_eq!(parse_one(OutputKind::Digit, &g, "Yes.", false), rating(1.0));
        assert_eq!(parse_one(OutputKind::Digit, &g, "0", false), rating(0.0));
        assert_eq!(
            parse_one(OutputKind::Json, &g, r#"{"score": "no"}"#, false),
            rating(0.0)
        );
        let c = asked("coherence", 1, 3);
        assert_eq!(
            parse_one(OutputKind::Digit, &c, "maybe", false),
            failed(FailureKind::NoLabel)
        );
    }

    #[test]
    fn the_aggregate_is_the_mean_share_on_the_items_scale() {
        let v = parse(
            &usr(),
            r#"{"naturalness": 3, "coherence": 2, "groundedness": 0}"#,
            false,
        );
        // Shares 1, 0.5 and 0: a mean of 0.5, 3 on a 1-5 scale.
        assert_eq!(aggregate(&usr(), &v, (1, 5)), rating(3.0));
        let v = parse(&usr(), r#"{"naturalness": 3, "coherence": 9}"#, false);
        assert_eq!(
            aggregate(&usr(), &v, (1, 5)),
            failed(FailureKind::OutOfRange)
        );
    }

    #[test]
    fn the_grammar_admits_a_complete_answer() {
        let g = grammar(OutputKind::Json, &usr(), false);
        assert!(g.starts_with(r#"root ::= "{" "\"naturalness\": " v0 ", \"coherence\": " v1"#));
        assert!(g.contains(r#"v2 ::= "0" | "1""#));
        let lines = grammar(OutputKind::Digit, &usr(), false);
        assert!(lines.contains(r#""\ncoherence: " v1"#));
    }

    #[test]
    fn ask_names_the_datasets_criteria_and_scales() {
        let declared = |name: &str, scale| Declared {
            name: name.into(),
            definition: "d".into(),
            scale,
            items: Vec::new(),
        };
        let criteria = vec![Criterion {
            name: "coherence".into(),
            task: Task::Single {
                scale_min: 1,
                scale_max: 3,
            },
        }];
        assert_eq!(
            ask(&[declared("fluency", None)], &criteria).unwrap_err(),
            "criterion \"fluency\" is not one of the dataset's (\"coherence\")"
        );
        assert!(ask(&[declared("fluency", None)], &[])
            .unwrap_err()
            .contains("which has none"));
        assert_eq!(
            ask(&[declared("coherence", Some((1, 5)))], &criteria).unwrap_err(),
            "criterion \"coherence\" is declared on 1-5; the dataset rates it 1-3"
        );
        let asked = ask(&[declared("coherence", Some((1, 3)))], &criteria).unwrap();
        assert_eq!(asked[0].task, criteria[0].task);
    }
}
