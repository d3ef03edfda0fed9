//! Judge outputs parsed into verdicts. Broken output is data, not an error: a verdict is
//! either a label or a classified failure, and the raw text is always kept beside it.

use serde::{Deserialize, Serialize};

use crate::dataset::{Choice, Label, Task};

/// What the template asks the judge to answer with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OutputKind {
    /// A bare label: `A`, `B` or `tie`.
    Label,
    /// A bare number on the rating scale.
    Digit,
    /// A JSON object `{"score": …, "reason": …}`.
    Json,
}

crate::names!(OutputKind {
    Label => "label",
    Digit => "digit",
    Json => "json",
});

impl OutputKind {
    /// The natural output for a task: a label for pairwise, a digit for ratings.
    pub fn default_for(task: Task) -> Self {
        match task {
            Task::Pairwise => Self::Label,
            Task::Single { .. } => Self::Digit,
        }
    }
}

/// Why an output has no verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The judge said nothing (only whitespace).
    Empty,
    /// The output holds no recognisable label.
    NoLabel,
    /// The output was cut by `max_tokens` before a label appeared.
    Truncated,
    /// A number was given, but outside the rating scale.
    OutOfRange,
    /// The prompt did not fit the judge's context, so there is no output.
    PromptTooLong,
}

crate::names!(FailureKind {
    Empty => "empty",
    NoLabel => "no_label",
    Truncated => "truncated",
    OutOfRange => "out_of_range",
    PromptTooLong => "prompt_too_long",
});

/// A parsed judge output.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Verdict {
    Parsed(Label),
    Failed(FailureKind),
}

impl Verdict {
    pub fn label(&self) -> Option<Label> {
        match self {
            Verdict::Parsed(l) => Some(*l),
            Verdict::Failed(_) => None,
        }
    }

    pub fn failure(&self) -> Option<FailureKind> {
        match self {
            Verdict::Parsed(_) => None,
            Verdict::Failed(f) => Some(*f),
        }
    }
}

/// The JSON schema of a `json` verdict, for endpoints that constrain their output to one
/// (`response_format: json_schema`): a `score` (a choice, or an integer on the scale) and an
/// optional `reason`.
pub fn json_schema(task: Task, allow_tie: bool) -> serde_json::Value {
    let score = match task {
        Task::Pairwise => {
            let mut choices = vec!["A", "B"];
            if allow_tie {
                choices.push("tie");
            }
            serde_json::json!({ "type": "string", "enum": choices })
        }
        Task::Single {
            scale_min,
            scale_max,
        } => serde_json::json!({ "type": "integer", "minimum": scale_min, "maximum": scale_max }),
    };
    serde_json::json!({
        "type": "object",
        "properties": { "score": score, "reason": { "type": "string" } },
        "required": ["score"],
        "additionalProperties": false,
    })
}

/// The exact spellings of every valid verdict: `A`, `B` (and `tie` where allowed) for
/// pairwise tasks, each integer of the scale for ratings.
pub fn spellings(task: Task, allow_tie: bool) -> Vec<(String, Label)> {
    match task {
        Task::Pairwise => {
            let mut out = vec![
                ("A".to_string(), Label::Choice(Choice::A)),
                ("B".to_string(), Label::Choice(Choice::B)),
            ];
            if allow_tie {
                out.push(("tie".to_string(), Label::Choice(Choice::Tie)));
            }
            out
        }
        Task::Single {
            scale_min,
            scale_max,
        } => (scale_min..=scale_max)
            .map(|x| (x.to_string(), Label::Rating(x as f64)))
            .collect(),
    }
}

/// A GBNF grammar (llama.cpp's grammar format) that admits only valid verdicts of `kind`:
/// one of the [`spellings`], or for `json` an object `{"score": …, "reason": "…"}` with a
/// valid score.
pub fn grammar(kind: OutputKind, task: Task, allow_tie: bool) -> String {
    let quoted = |text: &str| format!("\"{}\"", text.replace('\\', "\\\\").replace('"', "\\\""));
    let spellings = spellings(task, allow_tie);
    match kind {
        OutputKind::Label | OutputKind::Digit => {
            let alternatives: Vec<String> = spellings.iter().map(|(s, _)| quoted(s)).collect();
            format!("root ::= {}\n", alternatives.join(" | "))
        }
        OutputKind::Json => {
            let scores: Vec<String> = spellings
                .iter()
                .map(|(s, _)| match task {
                    Task::Pairwise => quoted(&format!("\"{s}\"")),
                    Task::Single { .. } => quoted(s),
                })
                .collect();
            format!(
                r#"root ::= "{{\"score\": " score reason? "}}"
score ::= {}
reason ::= ", \"reason\": \"" [^"\\\n]* "\""
"#,
                scores.join(" | ")
            )
        }
    }
}

/// The verdict of every vocabulary token read as a whole output: what a one-token answer
/// parses to. Variants such as `4` and ` 4` map to the same label because the one parser
/// reads them.
pub fn token_verdicts(kind: OutputKind, task: Task, vocabulary: &[String]) -> Vec<Verdict> {
    vocabulary
        .iter()
        .map(|piece| parse(kind, task, piece, false))
        .collect()
}

/// Parses `raw` as the `kind` of answer for `task`. `truncated` says the output stopped at
/// `max_tokens` rather than at end of generation.
pub fn parse(kind: OutputKind, task: Task, raw: &str, truncated: bool) -> Verdict {
    if raw.trim().is_empty() {
        return Verdict::Failed(if truncated {
            FailureKind::Truncated
        } else {
            FailureKind::Empty
        });
    }
    let missing = || {
        Verdict::Failed(if truncated {
            FailureKind::Truncated
        } else {
            FailureKind::NoLabel
        })
    };
    match kind {
        OutputKind::Label | OutputKind::Digit => match task {
            Task::Pairwise => {
                find_choice(raw).map_or_else(missing, |c| Verdict::Parsed(Label::Choice(c)))
            }
            Task::Single {
                scale_min,
                scale_max,
            } => find_number(raw).map_or_else(missing, |x| rating(x, scale_min, scale_max)),
        },
        OutputKind::Json => {
            let Some(start) = raw.find('{') else {
                return missing();
            };
            let mut stream =
                serde_json::Deserializer::from_str(&raw[start..]).into_iter::<serde_json::Value>();
            let value = match stream.next() {
                Some(Ok(v)) => v,
                Some(Err(e)) if e.is_eof() => return missing(),
                _ => return Verdict::Failed(FailureKind::NoLabel),
            };
            let score = value.get("score");
            match (task, score) {
                (Task::Pairwise, Some(serde_json::Value::String(s))) => find_choice(s)
                    .map_or(Verdict::Failed(FailureKind::NoLabel), |c| {
                        Verdict::Parsed(Label::Choice(c))
                    }),
                (
                    Task::Single {
                        scale_min,
                        scale_max,
                    },
                    Some(v),
                ) => {
                    let x = v
                        .as_f64()
                        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()));
                    x.map_or(Verdict::Failed(FailureKind::NoLabel), |x| {
                        rating(x, scale_min, scale_max)
                    })
                }
                _ => Verdict::Failed(FailureKind::NoLabel),
            }
        }
    }
}

pub(crate) fn rating(x: f64, lo: i64, hi: i64) -> Verdict {
    if x.is_finite() && x >= lo as f64 && x <= hi as f64 {
        Verdict::Parsed(Label::Rating(x))
    } else {
        Verdict::Failed(FailureKind::OutOfRange)
    }
}

/// The first standalone `A`, `B` (capitals), `tie` (any case), or `(a)` / `(b)`.
pub(crate) fn find_choice(text: &str) -> Option<Choice> {
    let bytes = text.as_bytes();
    let mut start = None;
    for (i, ch) in text
        .char_indices()
        .chain(std::iter::once((text.len(), ' ')))
    {
        if ch.is_alphanumeric() {
            start.get_or_insert(i);
            continue;
        }
        let Some(s) = start.take() else { continue };
        let word = &text[s..i];
        let parenthesised = s > 0 && bytes[s - 1] == b'(' && bytes.get(i) == Some(&b')');
        match word {
            "A" => return Some(Choice::A),
            "B" => return Some(Choice::B),
            "a" if parenthesised => return Some(Choice::A),
            "b" if parenthesised => return Some(Choice::B),
            w if w.eq_ignore_ascii_case("tie") => return Some(Choice::Tie),
            _ => {}
        }
    }
    None
}

/// The first number in the text (`4`, `-1`, `3.5`), not counting digits inside words.
pub(crate) fn find_number(text: &str) -> Option<f64> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts_number = bytes[i].is_ascii_digit()
            && (i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'.'));
        if starts_number {
            let negative = i > 0 && bytes[i - 1] == b'-';
            let mut j = i;
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            if j + 1 < bytes.len() && bytes[j] == b'.' && bytes[j + 1].is_ascii_digit() {
                j += 1;
                while j < bytes.len() && bytes[j].is_ascii_digit() {
                    j += 1;
                }
            }
            let x: f64 = text[i..j].parse().ok()?;
            return Some(if negative { -x } else { x });
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    const SINGLE: Task = Task::Single {
        scale_min: 1,
        scale_max: 5,
    };

    fn show(v: Verdict) -> String {
        match v {
            Verdict::Parsed(l) => l.to_text(),
            Verdict::Failed(f) => format!("<{}>", f.name()),
        }
    }

    #[test]
    fn table() {
        use OutputKind::*;
        let cases: &[(OutputKind, Task, &str, bool, &str)] = &[
            (Label, Task::Pairwise, "A", false, "A"),
            (Label, Task::Pairwise, " B\n", false, "B"),
            (Label, Task::Pairwise, "**B**", false, "B"),
            (Label, Task::Pairwise, "Output (b) is better", false, "B"),
            (Label, Task::Pairwise, "Tie.", false, "tie"),
            (Label, Task::Pairwise, "The answer is A", false, "A"),
            (Label, Task::Pairwise, "Both are good", false, "<no_label>"),
            (Label, Task::Pairwise, "Both are", true, "<truncated>"),
            (Label, Task::Pairwise, "   ", false, "<empty>"),
            (Label, Task::Pairwise, "", true, "<truncated>"),
            (Label, Task::Pairwise, "ABC", false, "<no_label>"),
            (Digit, SINGLE, "4", false, "4"),
            (Digit, SINGLE, "Rating: 3/5", false, "3"),
            (Digit, SINGLE, "3.5", false, "3.5"),
            (Digit, SINGLE, "7", false, "<out_of_range>"),
            (Digit, SINGLE, "0", false, "<out_of_range>"),
            (Digit, SINGLE, "-2", false, "<out_of_range>"),
            (Digit, SINGLE, "GPT4 says good", false, "<no_label>"),
            (Digit, SINGLE, "The rating", true, "<truncated>"),
            (Json, SINGLE, r#"{"score": 4, "reason": "ok"}"#, false, "4"),
            (Json, SINGLE, r#"Sure: {"score": "2"}"#, false, "2"),
            (Json, SINGLE, r#"{"score": 9}"#, false, "<out_of_range>"),
            (Json, SINGLE, r#"{"score": 4, "reas"#, true, "<truncated>"),
            (Json, SINGLE, r#"{"reason": "x"}"#, false, "<no_label>"),
            (Json, SINGLE, r#"{score: 4}"#, false, "<no_label>"),
            (
                Json,
                Task::Pairwise,
                r#"{"score": "B", "reason": "x"}"#,
                false,
                "B",
            ),
            (Json, Task::Pairwise, "no json here", false, "<no_label>"),
        ];
        for &(kind, task, raw, truncated, expect) in cases {
            assert_eq!(
                show(parse(kind, task, raw, truncated)),
                expect,
                "{kind:?} {raw:?}"
            );
        }
    }

    #[test]
    fn json_schemas_follow_the_task() {
        let pairwise = json_schema(Task::Pairwise, false);
        assert_eq!(
            pairwise["properties"]["score"]["enum"],
            serde_json::json!(["A", "B"])
        );
        let rating = json_schema(SINGLE, false);
        assert_eq!(rating["properties"]["score"]["maximum"], 5);
        assert_eq!(rating["required"], serde_json::json!(["score"]));
    }
}
