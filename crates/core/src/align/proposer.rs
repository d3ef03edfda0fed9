//! The proposer of instruction rewrites: what it is shown, and how its reply becomes a
//! candidate's template or is rejected with a reason.
//!
//! It is shown the parent judge's instruction (its template's `system` block, or the whole
//! template where it has none) and a seeded sample of the dev items the parent got wrong,
//! each with the parent's verdict, its confidence and the human label ([`Mistake`]), through
//! a template of its own ([`BUILTIN`], which a user may replace). Nothing else of the
//! dataset reaches it: the caller hands it dev items only.
//!
//! Its reply is either new instructions in plain text, spliced into the parent's `system`
//! block, or a whole template (a reply that reads an item's variables). Either way the
//! candidate must compile, read every item variable the parent reads, and still ask for
//! the verdict in the parent's format ([`revise`]); a reply that does not is [`Rejected`]
//! and never judges anything.

use serde::Serialize;

use crate::dataset::{Choice, Item, Label, Task};
use crate::judge::Message;
use crate::rng::SplitMix64;
use crate::template::{RenderContext, Template, TemplateError};
use crate::verdict::{OutputKind, Verdict};

/// The built-in proposer template.
pub const BUILTIN: &str = include_str!("../templates/align_proposer.jinja");

/// The variables a proposer template can read.
pub const VARIABLES: [&str; 8] = [
    "instruction",
    "template",
    "mistakes",
    "task",
    "output",
    "allow_tie",
    "scale_min",
    "scale_max",
];

/// The item variables a judge template reads; a rewrite keeps each its parent reads.
const ITEM_VARIABLES: [&str; 6] = [
    "question",
    "answer_a",
    "answer_b",
    "answer",
    "reference",
    "examples",
];

/// The longest instruction a rewrite may be, in characters.
pub const MAX_INSTRUCTION_CHARS: usize = 4_000;

/// What a judge is: its task, output and whether a pairwise verdict may be a tie.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judging {
    pub task: Task,
    pub output: OutputKind,
    pub allow_tie: bool,
    /// Its items carry reference answers, so that a rewrite must keep showing them where
    /// its parent does.
    pub references: bool,
}

/// The longest an item's text is shown to the proposer, in characters.
pub const MISTAKE_CHARS: usize = 600;

/// A dev item the judge got wrong, as the proposer reads it: the item's texts (each cut to
/// a length), the judge's verdict and its confidence, and the human label.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Mistake {
    pub item_id: String,
    pub question: String,
    pub answer_a: Option<String>,
    pub answer_b: Option<String>,
    pub answer: Option<String>,
    /// `A`, `B`, `tie`, a rating, or `no verdict` for a parse failure.
    pub verdict: String,
    /// In percent, where the judge says how sure it was.
    pub confidence: Option<u32>,
    pub human: String,
}

impl Mistake {
    /// `item` as the proposer reads it, each text cut to `max_chars` characters.
    pub fn new(item: &Item, verdict: Verdict, confidence: Option<f64>, max_chars: usize) -> Self {
        let cut = |s: &str| cut(s, max_chars);
        Mistake {
            item_id: item.id.clone(),
            question: cut(&item.question),
            answer_a: item.answer_a.as_deref().map(cut),
            answer_b: item.answer_b.as_deref().map(cut),
            answer: item.answer.as_deref().map(cut),
            verdict: match verdict {
                Verdict::Parsed(label) => label.category(),
                Verdict::Failed(_) => "no verdict".to_string(),
            },
            confidence: confidence.map(|c| (c * 100.0).round() as u32),
            human: item.human_label.category(),
        }
    }
}

/// `text` cut to `max_chars` characters, with an ellipsis where it was cut.
fn cut(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((at, _)) => format!("{} …", text[..at].trim_end()),
        None => text.to_string(),
    }
}

/// `n` of `wrong` drawn without replacement, seeded by `seed` and kept in their order: the
/// mistakes one proposer call is shown.
pub fn sample<T>(wrong: &[T], n: usize, seed: u64) -> Vec<&T> {
    let mut rng = SplitMix64::new(seed);
    let mut idx: Vec<usize> = (0..wrong.len()).collect();
    // A partial Fisher–Yates shuffle draws the first n.
    let n = n.min(idx.len());
    for i in 0..n {
        let j = i + rng.below((idx.len() - i) as u64) as usize;
        idx.swap(i, j);
    }
    let mut chosen = idx[..n].to_vec();
    chosen.sort_unstable();
    chosen.into_iter().map(|i| &wrong[i]).collect()
}

/// What a proposer template sees.
#[derive(Debug, Clone, Serialize)]
struct Context<'a> {
    instruction: &'a str,
    template: &'a str,
    mistakes: &'a [Mistake],
    task: &'static str,
    output: &'static str,
    allow_tie: bool,
    scale_min: Option<i64>,
    scale_max: Option<i64>,
}

impl<'a> Context<'a> {
    fn new(parent: &'a Template, judging: Judging, mistakes: &'a [Mistake]) -> Self {
        let (scale_min, scale_max) = judging
            .task
            .scale()
            .map_or((None, None), |(lo, hi)| (Some(lo), Some(hi)));
        Context {
            instruction: instruction(&parent.source).map_or(parent.source.as_str(), |b| b.text),
            template: &parent.source,
            mistakes,
            task: judging.task.name(),
            output: judging.output.name(),
            allow_tie: judging.allow_tie,
            scale_min,
            scale_max,
        }
    }
}

/// The proposer's messages: `proposer` rendered with `parent`'s instruction and `mistakes`.
pub fn prompt(
    proposer: &Template,
    parent: &Template,
    judging: Judging,
    mistakes: &[Mistake],
) -> Result<Vec<Message>, TemplateError> {
    proposer.render(&Context::new(parent, judging, mistakes))
}

/// Checks a proposer template before anything runs: it renders for a sample judge and
/// mistake, and reads no variable but [`VARIABLES`].
pub fn check(proposer: &Template, judging: Judging) -> Result<(), TemplateError> {
    let item = Item {
        id: "sample".into(),
        question: "a question".into(),
        answer_a: Some("first answer".into()),
        answer_b: Some("second answer".into()),
        answer: Some("an answer".into()),
        reference: None,
        human_label: Label::Choice(Choice::A),
        human_labels: Default::default(),
        meta: serde_json::Value::Null,
    };
    let mistake = Mistake::new(
        &item,
        Verdict::Parsed(Label::Choice(Choice::B)),
        Some(0.7),
        80,
    );
    let parent = Template::new(
        "parent",
        "{% block system %}Judge.{% endblock %}{% block user %}{{ question }}{% endblock %}",
    );
    let messages = prompt(proposer, &parent, judging, std::slice::from_ref(&mistake))?;
    if messages.last().is_none_or(|m| m.content.trim().is_empty()) {
        return Err(TemplateError::Invalid {
            template: proposer.name.clone(),
            message: "renders an empty user message".into(),
        });
    }
    Ok(())
}

/// A template's `system` block: where its body lies in the source, and its text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SystemBlock<'a> {
    /// The byte range of the body, between the block's tags.
    pub start: usize,
    pub end: usize,
    pub text: &'a str,
}

/// The `system` block of a template's source, where it has one.
pub fn instruction(source: &str) -> Option<SystemBlock<'_>> {
    let mut tags = tags(source);
    let (_, start) = tags
        .find(|(_, _, tag)| {
            let mut words = tag.split_whitespace();
            words.next() == Some("block") && words.next() == Some("system")
        })
        .map(|(s, e, _)| (s, e))?;
    let (end, _) = tags
        .find(|(_, _, tag)| tag.split_whitespace().next() == Some("endblock"))
        .map(|(s, e, _)| (s, e))?;
    Some(SystemBlock {
        start,
        end,
        text: source[start..end].trim(),
    })
}

/// The `{% … %}` tags of a source: where each starts and ends, and its words.
fn tags(source: &str) -> impl Iterator<Item = (usize, usize, &str)> {
    let mut at = 0;
    std::iter::from_fn(move || {
        let start = at + source[at..].find("{%")?;
        let end = start + source[start..].find("%}")? + 2;
        at = end;
        let inner = source[start + 2..end - 2].trim_matches(|c: char| c == '-' || c == '+');
        Some((start, end, inner.trim()))
    })
}

/// Why a proposer's reply made no candidate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Rejected {
    #[error("the reply is empty")]
    Empty,
    #[error("the instruction is {0} characters long (at most {MAX_INSTRUCTION_CHARS})")]
    TooLong(usize),
    #[error("the reply is no template: {0}")]
    Invalid(String),
    #[error("the reply drops `{0}`, which the judge reads")]
    DropsVariable(String),
    #[error("the reply drops the verdict format: its prompt no longer names {0}")]
    DropsFormat(String),
}

impl Rejected {
    /// The reason's kind, as stored.
    pub fn kind(&self) -> &'static str {
        match self {
            Rejected::Empty => "empty",
            Rejected::TooLong(_) => "too_long",
            Rejected::Invalid(_) => "invalid",
            Rejected::DropsVariable(_) => "drops_variable",
            Rejected::DropsFormat(_) => "drops_format",
        }
    }
}

/// The candidate template a proposer's `reply` makes of `parent`, named `name`, or why it
/// makes none.
pub fn revise(
    parent: &Template,
    reply: &str,
    judging: Judging,
    name: &str,
) -> Result<Template, Rejected> {
    let reply = unwrap(reply);
    if reply.is_empty() {
        return Err(Rejected::Empty);
    }
    let whole = Template::new(name, reply);
    let reads_items = ["question", "answer_a", "answer_b", "answer"]
        .iter()
        .any(|v| whole.uses(v));
    let child = if reads_items {
        whole
    } else {
        if reply.chars().count() > MAX_INSTRUCTION_CHARS {
            return Err(Rejected::TooLong(reply.chars().count()));
        }
        Template::new(name, &splice(&parent.source, reply))
    };
    child
        .validate(judging.task, judging.output)
        .map_err(|e| Rejected::Invalid(e.to_string()))?;
    let needed = |v: &&&str| **v != "reference" || judging.references;
    if let Some(v) = ITEM_VARIABLES
        .iter()
        .filter(needed)
        .find(|v| parent.uses(v) && !child.uses(v))
    {
        return Err(Rejected::DropsVariable(v.to_string()));
    }
    let named = |t: &Template| format_names(t, judging);
    let (before, after) = (named(parent), named(&child));
    if let Some(lost) = before.iter().find(|m| !after.contains(m)) {
        return Err(Rejected::DropsFormat(format!("`{lost}`")));
    }
    Ok(child)
}

/// A reply without what models wrap around an answer: a code fence, the prompt's
/// `<instructions>` tags, surrounding whitespace.
fn unwrap(reply: &str) -> &str {
    let mut text = reply.trim();
    if let Some(start) = text.find("```") {
        let body = &text[start + 3..];
        // The fence's language tag, up to its line's end.
        let body = body.split_once('\n').map_or("", |(_, rest)| rest);
        text = body.split("```").next().unwrap_or(body).trim();
    }
    for (open, close) in [("<instructions>", "</instructions>")] {
        if let Some(rest) = text.strip_prefix(open) {
            text = rest.split(close).next().unwrap_or(rest).trim();
        }
    }
    text
}

/// `source` with its `system` block's body replaced by `instruction` (or, where it has no
/// such block, the instruction as a new system block and the rest as the user block).
fn splice(source: &str, text: &str) -> String {
    match instruction(source) {
        Some(block) => format!(
            "{}{}{}",
            &source[..block.start],
            text,
            &source[block.end..]
        ),
        None => format!(
            "{{% block system %}}{text}{{% endblock %}}\n{{% block user %}}\n{source}\n{{% endblock %}}\n"
        ),
    }
}

/// The verdict-format words that `t`'s prompt names for a sample item, without examples:
/// the labels for a pairwise judge, the scale's ends for ratings, `score` for JSON.
fn format_names(t: &Template, judging: Judging) -> Vec<String> {
    let wanted: Vec<String> = match (judging.output, judging.task) {
        (OutputKind::Json, _) => vec!["score".into()],
        (_, Task::Pairwise) => {
            let mut labels = vec!["A".to_string(), "B".to_string()];
            if judging.allow_tie {
                labels.push("tie".into());
            }
            labels
        }
        (
            _,
            Task::Single {
                scale_min,
                scale_max,
            },
        ) => {
            vec![scale_min.to_string(), scale_max.to_string()]
        }
    };
    let item = sample_item(judging.task);
    let ctx = RenderContext::new(
        judging.task,
        judging.output,
        judging.allow_tie,
        item.text(),
        &[],
    );
    let Ok(messages) = t.render(&ctx) else {
        return Vec::new();
    };
    let words: Vec<&str> = messages
        .iter()
        .flat_map(|m| m.content.split(|c: char| !c.is_alphanumeric()))
        .collect();
    // The letters must be capitals on their own ("a question" names no A); words are
    // matched in any case.
    let names = |w: &str, x: &str| match w {
        "A" | "B" => x == w,
        _ => x.eq_ignore_ascii_case(w),
    };
    wanted
        .into_iter()
        .filter(|w| words.iter().any(|x| names(w, x)))
        .collect()
}

/// An item of `task` whose texts name no label, to render a prompt's own words.
fn sample_item(task: Task) -> Item {
    let pairwise = task == Task::Pairwise;
    Item {
        id: "sample".into(),
        question: "a question".into(),
        answer_a: pairwise.then(|| "first output".into()),
        answer_b: pairwise.then(|| "second output".into()),
        answer: (!pairwise).then(|| "a response".into()),
        reference: Some("a reference".into()),
        human_label: match task.scale() {
            Some((lo, _)) => Label::Rating(lo as f64),
            None => Label::Choice(Choice::A),
        },
        human_labels: Default::default(),
        meta: serde_json::Value::Null,
    }
}
