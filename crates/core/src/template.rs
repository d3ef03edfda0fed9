//! Judge prompt templates in Jinja (minijinja), rendered into chat messages.
//!
//! A template may define a `system` block and a `user` block; without a `user` block the
//! whole template is the user message. The variables a template can use are listed in
//! [`VARIABLES`]; any other variable is a validation error before any model is loaded. A
//! template that sets `criteria` at its top is a rubric ([`crate::rubric`]).

use std::collections::{BTreeMap, BTreeSet};

use minijinja::{Environment, ErrorKind, UndefinedBehavior};
use serde::Serialize;
use serde_json::Value;

use crate::dataset::{Choice, Item, ItemText, Label, Task};
use crate::hash::sha256_hex;
use crate::judge::Message;
use crate::rubric::{Asked, Declared};
use crate::sweep::Style;
use crate::verdict::OutputKind;

/// The variables a template can reference.
pub const VARIABLES: [&str; 13] = [
    "question",
    "answer_a",
    "answer_b",
    "answer",
    "reference",
    "examples",
    "task",
    "output",
    "allow_tie",
    "scale_min",
    "scale_max",
    "rubric",
    "style",
];

const BUILTINS: [(&str, &str); 8] = [
    ("pairwise", include_str!("templates/pairwise.jinja")),
    // The built-in pairwise template reworded without changing its meaning: a paraphrase
    // set for measuring how much verdicts depend on the wording.
    (
        "pairwise_paraphrase_1",
        include_str!("templates/pairwise_paraphrase_1.jinja"),
    ),
    (
        "pairwise_paraphrase_2",
        include_str!("templates/pairwise_paraphrase_2.jinja"),
    ),
    ("single", include_str!("templates/single.jinja")),
    // Graded against the item's reference answer: what an output says that disagrees with
    // it is wrong, however it is written.
    (
        "pairwise_reference",
        include_str!("templates/pairwise_reference.jinja"),
    ),
    (
        "single_reference",
        include_str!("templates/single_reference.jinja"),
    ),
    (
        "dialogue_rubric",
        include_str!("templates/dialogue_rubric.jinja"),
    ),
    (
        "summary_rubric",
        include_str!("templates/summary_rubric.jinja"),
    ),
];

/// A judge prompt template, identified by the hash of its source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// A built-in name or the file it came from.
    pub name: String,
    pub source: String,
    /// sha256 of `source`.
    pub hash: String,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("template {template}: {message}")]
    Invalid { template: String, message: String },
    #[error("template {template}: unknown variable `{variable}` (known: {})", VARIABLES.join(", "))]
    UnknownVariable { template: String, variable: String },
}

/// Everything a template sees for one item. The answers a task does not have are left out
/// (not null), so that a template written for the other task fails validation.
#[derive(Debug, Clone, Serialize)]
pub struct RenderContext<'a> {
    pub question: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_a: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_b: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<&'a str>,
    pub reference: Option<&'a str>,
    pub examples: Vec<ExampleContext<'a>>,
    pub task: &'static str,
    pub output: &'static str,
    pub allow_tie: bool,
    pub scale_min: Option<i64>,
    pub scale_max: Option<i64>,
    /// The criteria a rubric template's call asks (all of them, or one for a checklist
    /// call); empty for other templates.
    pub rubric: Vec<AskedContext<'a>>,
    /// How a rubric's criteria are asked: `rubric` or `checklist`.
    pub style: &'static str,
}

/// A criterion as a template sees it.
#[derive(Debug, Clone, Serialize)]
pub struct AskedContext<'a> {
    /// The criterion's name (an item's criterion's, for a checklist's yes/no item).
    pub name: &'a str,
    pub definition: &'a str,
    pub scale_min: Option<i64>,
    pub scale_max: Option<i64>,
    /// A checklist's yes/no item: its question (`rubric[0].item`), answered yes or no.
    pub item: Option<&'a str>,
}

/// A few-shot example as a template sees it: the item and its human label.
#[derive(Debug, Clone, Serialize)]
pub struct ExampleContext<'a> {
    pub question: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_a: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer_b: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<&'a str>,
    pub reference: Option<&'a str>,
    /// `A`, `B`, `tie`, or the rating rounded to the scale.
    pub label: String,
    /// Its labels on the dataset's criteria, written as `label` is.
    pub labels: BTreeMap<&'a str, String>,
}

impl<'a> RenderContext<'a> {
    pub fn new(
        task: Task,
        output: OutputKind,
        allow_tie: bool,
        item: ItemText<'a>,
        examples: &[&'a Item],
    ) -> Self {
        let (scale_min, scale_max) = match task {
            Task::Single {
                scale_min,
                scale_max,
            } => (Some(scale_min), Some(scale_max)),
            Task::Pairwise => (None, None),
        };
        RenderContext {
            question: item.question,
            answer_a: item.answer_a,
            answer_b: item.answer_b,
            answer: item.answer,
            reference: item.reference,
            examples: examples.iter().map(|e| ExampleContext::new(e)).collect(),
            task: task.name(),
            output: output.name(),
            allow_tie,
            scale_min,
            scale_max,
            rubric: Vec::new(),
            style: Style::default().name(),
        }
    }

    /// The context of a rubric call: the criteria it asks, in `style`.
    pub fn asking(self, style: Style, asked: &'a [Asked]) -> Self {
        let rubric = asked
            .iter()
            .map(|a| {
                let (scale_min, scale_max) = match a.task {
                    Task::Single {
                        scale_min,
                        scale_max,
                    } => (Some(scale_min), Some(scale_max)),
                    Task::Pairwise => (None, None),
                };
                AskedContext {
                    name: crate::rubric::items::criterion(&a.name),
                    definition: &a.definition,
                    scale_min,
                    scale_max,
                    item: a.item.as_deref(),
                }
            })
            .collect();
        RenderContext {
            rubric,
            style: style.name(),
            ..self
        }
    }
}

impl<'a> ExampleContext<'a> {
    pub fn new(item: &'a Item) -> Self {
        ExampleContext {
            question: &item.question,
            answer_a: item.answer_a.as_deref(),
            answer_b: item.answer_b.as_deref(),
            answer: item.answer.as_deref(),
            reference: item.reference.as_deref(),
            label: item.human_label.category(),
            labels: item
                .human_labels
                .iter()
                .map(|(name, label)| (name.as_str(), label.category()))
                .collect(),
        }
    }
}

impl Template {
    /// Names of the built-in templates.
    pub fn builtin_names() -> impl Iterator<Item = &'static str> {
        BUILTINS.iter().map(|(n, _)| *n)
    }

    /// A built-in template by name.
    pub fn builtin(name: &str) -> Option<Template> {
        BUILTINS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, source)| Template::new(n, source))
    }

    /// A template from its source, not yet validated.
    pub fn new(name: &str, source: &str) -> Template {
        Template {
            name: name.to_string(),
            source: source.to_string(),
            hash: sha256_hex(source),
        }
    }

    /// The criteria a rubric template declares (`{% set criteria = [...] %}` at its top);
    /// none for other templates.
    pub fn criteria(&self) -> Result<Vec<Declared>, TemplateError> {
        // Evaluated with nothing in its context only to read what its top sets: whatever
        // else it references is undefined here and may stay so.
        let mut env = environment();
        env.set_undefined_behavior(UndefinedBehavior::Chainable);
        let compiled = self.compile(&env)?;
        #[allow(deprecated)]
        let state = compiled
            .eval_to_state(())
            .map_err(|e| self.invalid(describe(&e)))?;
        let Some(value) = state.lookup("criteria") else {
            return Ok(Vec::new());
        };
        let value = serde_json::to_value(&value).map_err(|e| self.invalid(e))?;
        declared(&value).map_err(|message| self.invalid(format!("criteria: {message}")))
    }

    /// Whether it reads the item's `variable` (`reference`, say); false where it does not
    /// compile.
    pub fn uses(&self, variable: &str) -> bool {
        let env = environment();
        self.compile(&env)
            .is_ok_and(|t| t.undeclared_variables(false).contains(variable))
    }

    /// Its source compiled in `env`. A line longer than minijinja counts columns (16 bits)
    /// is refused first: a syntax error past that column panics inside its lexer.
    fn compile<'e>(
        &'e self,
        env: &'e Environment<'e>,
    ) -> Result<minijinja::Template<'e, 'e>, TemplateError> {
        // Every render compiles: a source shorter than the limit (every real one) holds
        // no such line and is not walked.
        let long = (self.source.len() > MAX_LINE_CHARS)
            .then(|| {
                self.source
                    .lines()
                    .enumerate()
                    .find(|(_, l)| l.chars().count() > MAX_LINE_CHARS)
            })
            .flatten();
        if let Some((i, line)) = long {
            return Err(self.invalid(format!(
                "line {}: {} characters long; a template line may hold at most {MAX_LINE_CHARS} (break it, or move long text into the data)",
                i + 1,
                line.chars().count()
            )));
        }
        env.template_from_str(&self.source)
            .map_err(|e| self.invalid(describe(&e)))
    }

    fn invalid(&self, e: impl std::fmt::Display) -> TemplateError {
        TemplateError::Invalid {
            template: self.name.clone(),
            message: e.to_string(),
        }
    }

    /// Checks syntax and variables, then renders a sample of `task` to catch the rest.
    pub fn validate(&self, task: Task, output: OutputKind) -> Result<(), TemplateError> {
        let env = environment();
        let compiled = self.compile(&env)?;
        let known: BTreeSet<&str> = VARIABLES.into_iter().collect();
        let mut unknown: Vec<String> = compiled
            .undeclared_variables(false)
            .into_iter()
            .filter(|v| !known.contains(v.as_str()) && env.globals().all(|(g, _)| g != v))
            .collect();
        unknown.sort();
        if let Some(variable) = unknown.into_iter().next() {
            return Err(TemplateError::UnknownVariable {
                template: self.name.clone(),
                variable,
            });
        }
        // A rubric template is rendered as each style asks it: every criterion, and one.
        let asked: Vec<Asked> = self
            .criteria()?
            .into_iter()
            .map(|d| {
                let (scale_min, scale_max) = d.scale.unwrap_or((1, 5));
                Asked {
                    name: d.name,
                    definition: d.definition,
                    task: Task::Single {
                        scale_min,
                        scale_max,
                    },
                    items: d.items,
                    item: None,
                }
            })
            .collect();
        let mut sample = sample_item(task);
        sample.human_labels = asked
            .iter()
            .map(|a| (a.name.clone(), sample_item(a.task).human_label))
            .collect();
        let plain = RenderContext::new(task, output, true, sample.text(), &[&sample, &sample]);
        // And a checklist's yes/no item, where a criterion declares some.
        let checklist = crate::rubric::items::calls(&asked);
        let item = checklist.iter().position(|a| a.item.is_some());
        let contexts = match asked.first() {
            None => vec![plain],
            Some(_) => {
                let mut contexts = vec![
                    plain.clone().asking(Style::Rubric, &asked),
                    plain.clone().asking(Style::Checklist, &asked[..1]),
                ];
                if let Some(i) = item {
                    contexts.push(plain.asking(Style::Checklist, &checklist[i..=i]));
                }
                contexts
            }
        };
        for ctx in &contexts {
            self.check_renders(task, ctx)?;
        }
        Ok(())
    }

    /// Renders `ctx` and refuses an error or an empty user message, naming the fields a
    /// `task` item has where a variable is undefined.
    fn check_renders(&self, task: Task, ctx: &RenderContext<'_>) -> Result<(), TemplateError> {
        let fields = match task {
            Task::Pairwise => "question, answer_a, answer_b, reference",
            Task::Single { .. } => "question, answer, reference",
        };
        let messages = self.render(ctx).map_err(|e| match e {
            TemplateError::Invalid { template, message } if message.contains("undefined") => {
                TemplateError::Invalid {
                    template,
                    message: format!(
                        "{message} (is it written for this task? a {} item has {fields})",
                        task.name()
                    ),
                }
            }
            other => other,
        })?;
        if messages.last().is_none_or(|m| m.content.trim().is_empty()) {
            return Err(self.invalid("renders an empty user message"));
        }
        Ok(())
    }

    /// Renders the messages for one item: an optional system message, then the user message.
    pub fn render<C: Serialize>(&self, ctx: &C) -> Result<Vec<Message>, TemplateError> {
        let env = environment();
        let compiled = self.compile(&env)?;
        // `eval_to_state` is deprecated in favour of `render_captured`, but only a mutable
        // state can render single blocks, and that is what splits system from user.
        #[allow(deprecated)]
        let mut state = compiled
            .eval_to_state(ctx)
            .map_err(|e| self.invalid(describe(&e)))?;
        let mut block = |name: &str| match state.render_block(name) {
            Ok(text) => Ok(Some(text.trim().to_string())),
            Err(e) if e.kind() == ErrorKind::UnknownBlock => Ok(None),
            Err(e) => Err(self.invalid(describe(&e))),
        };
        let system = block("system")?;
        let user = match block("user")? {
            Some(user) => user,
            None if system.is_some() => {
                return Err(self.invalid("defines a system block but no user block"))
            }
            None => compiled
                .render(ctx)
                .map_err(|e| self.invalid(describe(&e)))?
                .trim()
                .to_string(),
        };
        let mut messages = Vec::with_capacity(2);
        if let Some(content) = system.filter(|s| !s.is_empty()) {
            messages.push(Message {
                role: "system".into(),
                content,
            });
        }
        messages.push(Message {
            role: "user".into(),
            content: user,
        });
        Ok(messages)
    }
}

/// The criteria a template's `criteria` value declares: a list of objects with a `name`, a
/// `definition` and optionally a `scale` of two integers.
fn declared(value: &Value) -> Result<Vec<Declared>, String> {
    let list = value
        .as_array()
        .filter(|l| !l.is_empty())
        .ok_or_else(|| format!("expected a non-empty list of criteria, found {value}"))?;
    let mut out: Vec<Declared> = Vec::with_capacity(list.len());
    for (i, c) in list.iter().enumerate() {
        let at = |m: String| format!("item {}: {m}", i + 1);
        let obj = c.as_object().ok_or_else(|| {
            at(format!(
                "expected {{\"name\": …, \"definition\": …}}, found {c}"
            ))
        })?;
        if let Some(key) = obj
            .keys()
            .find(|k| !["name", "definition", "scale", "items"].contains(&k.as_str()))
        {
            return Err(at(format!(
                "unknown key {key:?} (a criterion has name, definition, scale and items)"
            )));
        }
        let text = |key: &str| {
            obj.get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .ok_or_else(|| at(format!("{key} must be a non-empty string")))
        };
        let name = text("name")?;
        if out.iter().any(|d| d.name == name) {
            return Err(at(format!("{name:?} is declared twice")));
        }
        let scale = match obj.get("scale") {
            None => None,
            Some(s) => match s.as_array().map(|a| a.as_slice()) {
                Some([lo, hi]) => match (lo.as_i64(), hi.as_i64()) {
                    (Some(lo), Some(hi)) if lo < hi => Some((lo, hi)),
                    _ => {
                        return Err(at(format!(
                            "scale must be [min, max] integers with min < max, found {s}"
                        )))
                    }
                },
                _ => return Err(at(format!("scale must be [min, max], found {s}"))),
            },
        };
        let items = match obj.get("items") {
            None => Vec::new(),
            Some(list) => list
                .as_array()
                .filter(|l| !l.is_empty())
                .and_then(|l| {
                    l.iter()
                        .map(|q| q.as_str().map(str::trim).filter(|q| !q.is_empty()))
                        .map(|q| q.map(str::to_string))
                        .collect::<Option<Vec<String>>>()
                })
                .ok_or_else(|| {
                    at(format!(
                        "items must be a non-empty list of yes/no questions, found {list}"
                    ))
                })?,
        };
        out.push(Declared {
            name,
            definition: text("definition")?,
            scale,
            items,
        });
    }
    Ok(out)
}

/// The longest template line minijinja's lexer can place an error on (its columns are
/// 16-bit and saturate).
const MAX_LINE_CHARS: usize = u16::MAX as usize - 1;

fn environment() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    env.set_trim_blocks(true);
    env.set_lstrip_blocks(true);
    env
}

fn describe(e: &minijinja::Error) -> String {
    match e.line() {
        Some(line) => format!(
            "line {line}: {}",
            e.detail().unwrap_or(&e.kind().to_string())
        ),
        None => e.to_string(),
    }
}

fn sample_item(task: Task) -> Item {
    let (answer_a, answer_b, answer, human_label) = match task {
        Task::Pairwise => (
            Some("first answer".to_string()),
            Some("second answer".to_string()),
            None,
            Label::Choice(Choice::A),
        ),
        Task::Single { scale_min, .. } => (
            None,
            None,
            Some("an answer".to_string()),
            Label::Rating(scale_min as f64),
        ),
    };
    Item {
        id: "sample".into(),
        question: "a question".into(),
        answer_a,
        answer_b,
        answer,
        reference: Some("a reference".into()),
        human_label,
        human_labels: Default::default(),
        meta: Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{parse, ImportOptions};

    /// A dataset bundled with the project, by file name.
    fn bundled(file: &str) -> crate::Dataset {
        let path = format!("{}/../../datasets/{file}", env!("CARGO_MANIFEST_DIR"));
        parse(
            &path,
            &std::fs::read(&path).unwrap(),
            &ImportOptions::default(),
        )
        .unwrap()
    }

    fn llmbar() -> crate::Dataset {
        bundled("llmbar_natural.jsonl")
    }

    #[test]
    fn builtins_validate() {
        let single = Task::Single {
            scale_min: 1,
            scale_max: 5,
        };
        for output in [OutputKind::Label, OutputKind::Json] {
            for name in ["pairwise", "pairwise_reference"] {
                Template::builtin(name)
                    .unwrap()
                    .validate(Task::Pairwise, output)
                    .unwrap();
            }
        }
        for output in [OutputKind::Digit, OutputKind::Json] {
            for name in [
                "single",
                "single_reference",
                "dialogue_rubric",
                "summary_rubric",
            ] {
                Template::builtin(name)
                    .unwrap()
                    .validate(single, output)
                    .unwrap();
            }
        }
        assert!(Template::builtin("single")
            .unwrap()
            .criteria()
            .unwrap()
            .is_empty());
    }

    /// The built-ins that show a reference read it; a template that names none does not.
    #[test]
    fn a_template_says_which_variables_it_reads() {
        for name in ["pairwise", "pairwise_reference", "single_reference"] {
            assert!(Template::builtin(name).unwrap().uses("reference"), "{name}");
        }
        assert!(!Template::new("plain", "{{ question }} {{ answer }}").uses("reference"));
        assert!(!Template::new("broken", "{{ (").uses("question"));
        // Graded against it: a reference's disagreement makes an output wrong.
        let guided = Template::builtin("pairwise_reference").unwrap();
        let d = llmbar();
        let mut item = d.items[0].clone();
        item.reference = Some("The capital of France is Paris.".into());
        let ctx = RenderContext::new(d.task, OutputKind::Label, false, item.text(), &[]);
        let user = &guided.render(&ctx).unwrap()[1].content;
        assert!(
            user.contains("## Reference answer\nThe capital of France is Paris.\n"),
            "{user}"
        );
        assert!(user.contains("Check both outputs against the reference answer."));
    }

    /// A syntax error past column 65,535 of a line panicked inside minijinja's lexer (its
    /// 16-bit column saturates, then overflows); such a line is refused before it, saying
    /// where. A line just short of the limit still compiles.
    #[test]
    fn a_template_line_past_minijinja_columns_is_refused_not_a_panic() {
        let long = format!(
            "{{% block user %}}{}{{{{ question }}{{% endblock %}}",
            "x".repeat(70_000)
        );
        for source in [
            long.clone(),
            format!("{long} {{{{ ("),
            format!("{}{{{{ (", "y".repeat(65_536)),
        ] {
            let t = Template::new("long", &format!("# title\n{source}\n"));
            let e = t.validate(Task::Pairwise, OutputKind::Label).unwrap_err();
            let message = e.to_string();
            assert!(
                message.contains("line 2: ") && message.contains("characters long"),
                "{message}"
            );
            let d = llmbar();
            let ctx = RenderContext::new(d.task, OutputKind::Label, false, d.items[0].text(), &[]);
            assert!(t.criteria().is_err() && t.render(&ctx).is_err());
        }
        let fits = format!(
            "{{% block user %}}{{{{ question }}}}{}{{% endblock %}}",
            "z".repeat(60_000)
        );
        assert!(Template::new("fits", &fits).criteria().is_ok());
    }

    /// The dialogue rubric asks USR's criteria on their own scales: all in one call, or one
    /// per call; its examples show each criterion's label.
    #[test]
    fn a_rubric_template_asks_its_criteria_in_either_style() {
        let data = bundled("topical_chat_usr.jsonl");
        let template = Template::builtin("dialogue_rubric").unwrap();
        let declared = template.criteria().unwrap();
        let names: Vec<&str> = declared.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "understandability",
                "naturalness",
                "coherence",
                "engagingness",
                "groundedness"
            ]
        );
        let asked = crate::rubric::ask(&declared, &data.criteria).unwrap();
        let item = &data.items[0];
        let ctx = || {
            RenderContext::new(
                data.task,
                OutputKind::Digit,
                false,
                item.text(),
                &[&data.items[1]],
            )
        };
        let all = template
            .render(&ctx().asking(Style::Rubric, &asked))
            .unwrap();
        let user = &all.last().unwrap().content;
        assert!(user.contains("- naturalness (1 to 3): Is the response natural"));
        assert!(user.contains("- groundedness (0 to 1): "));
        assert!(user.contains("one line per criterion"));
        let shown = &data.items[1].human_labels["naturalness"];
        assert!(user.contains(&format!("naturalness: {}\n", shown.category())));
        let one = template
            .render(&ctx().asking(Style::Checklist, &asked[2..3]))
            .unwrap();
        let user = &one.last().unwrap().content;
        assert!(user.contains("Rate the response's coherence from 1 to 3."));
        assert!(!user.contains("naturalness"));
    }

    #[test]
    fn declared_criteria_are_checked() {
        let check = |set: &str, expected: &str| {
            let t = Template::new(
                "t.jinja",
                &format!("{set}\n{{{{ question }}}} {{{{ answer }}}}"),
            );
            assert_eq!(t.criteria().unwrap_err().to_string(), expected, "{set}");
        };
        check(
            "{% set criteria = [] %}",
            "template t.jinja: criteria: expected a non-empty list of criteria, found []",
        );
        check(
            r#"{% set criteria = [{"name": "a"}] %}"#,
            "template t.jinja: criteria: item 1: definition must be a non-empty string",
        );
        check(
            r#"{% set criteria = [{"name": "a", "definition": "x", "weight": 2}] %}"#,
            "template t.jinja: criteria: item 1: unknown key \"weight\" (a criterion has name, definition, scale and items)",
        );
        check(
            r#"{% set criteria = [{"name": "a", "definition": "x", "items": []}] %}"#,
            "template t.jinja: criteria: item 1: items must be a non-empty list of yes/no questions, found []",
        );
        check(
            r#"{% set criteria = [{"name": "a", "definition": "x"}, {"name": "a", "definition": "y"}] %}"#,
            "template t.jinja: criteria: item 2: \"a\" is declared twice",
        );
        check(
            r#"{% set criteria = [{"name": "a", "definition": "x", "scale": [3, 1]}] %}"#,
            "template t.jinja: criteria: item 1: scale must be [min, max] integers with min < max, found [3,1]",
        );
        let ok = Template::new(
            "t.jinja",
            r#"{% set criteria = [{"name": "a", "definition": " x ", "scale": [0, 1]}] %}{{ answer }}"#,
        );
        assert_eq!(
            ok.criteria().unwrap(),
            [Declared {
                name: "a".into(),
                definition: "x".into(),
                scale: Some((0, 1)),
                items: Vec::new(),
            }]
        );
    }

    #[test]
    fn pairwise_renders_examples_then_the_task() {
        let d = llmbar();
        let t = Template::builtin("pairwise").unwrap();
        let item = &d.items[0];
        let ctx = RenderContext::new(
            d.task,
            OutputKind::Label,
            false,
            item.text(),
            &[&d.items[1]],
        );
        let messages = t.render(&ctx).unwrap();
        assert_eq!(messages.len(), 2);
        assert_eq!(messages[0].role, "system");
        let user = &messages[1].content;
        assert!(user.starts_with("# Example 1\n## Instruction\n"), "{user}");
        assert!(user.contains(&format!(
            "## Better output\n{}\n\n# Task",
            d.items[1].human_label
        )));
        assert!(user.ends_with(
            "Which output is better? Answer with a single letter: A if Output (a) is better, B if Output (b) is better. Do not explain."
        ), "{user}");
        assert!(!user.contains("Reference"));
        let zero_shot = t
            .render(&RenderContext::new(
                d.task,
                OutputKind::Label,
                true,
                item.text(),
                &[],
            ))
            .unwrap();
        assert!(zero_shot[1].content.starts_with("# Task\n"));
        assert!(zero_shot[1]
            .content
            .contains("or tie if they are equally good"));
    }

    #[test]
    fn unknown_variables_and_syntax_errors_fail_validation() {
        let t = Template::new("mine.jinja", "Judge {{ question }} and {{ rubrik }}");
        assert_eq!(
            t.validate(Task::Pairwise, OutputKind::Label)
                .unwrap_err()
                .to_string(),
            format!(
                "template mine.jinja: unknown variable `rubrik` (known: {})",
                VARIABLES.join(", ")
            )
        );
        let t = Template::new("bad.jinja", "{% if question %}unclosed");
        let err = t
            .validate(Task::Pairwise, OutputKind::Label)
            .unwrap_err()
            .to_string();
        assert!(err.starts_with("template bad.jinja: line 1:"), "{err}");
        let t = Template::new(
            "attr.jinja",
            "{% for ex in examples %}{{ ex.score }}{% endfor %}{{ question }}",
        );
        let err = t
            .validate(Task::Pairwise, OutputKind::Label)
            .unwrap_err()
            .to_string();
        assert!(err.contains("undefined"), "{err}");
        let single = Task::Single {
            scale_min: 1,
            scale_max: 5,
        };
        let err = Template::builtin("pairwise")
            .unwrap()
            .validate(single, OutputKind::Digit)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(
                "is it written for this task? a single item has question, answer, reference"
            ),
            "{err}"
        );
        let err = Template::builtin("single")
            .unwrap()
            .validate(Task::Pairwise, OutputKind::Label)
            .unwrap_err()
            .to_string();
        assert!(err.contains("a pairwise item has"), "{err}");
        let t = Template::new(
            "sys.jinja",
            "{% block system %}x{% endblock %}{{ question }}",
        );
        let err = t
            .validate(Task::Pairwise, OutputKind::Label)
            .unwrap_err()
            .to_string();
        assert!(
            err.ends_with("defines a system block but no user block"),
            "{err}"
        );
        let plain = Template::new(
            "plain.jinja",
            "Is {{ answer_a }} better than {{ answer_b }}?",
        );
        plain.validate(Task::Pairwise, OutputKind::Label).unwrap();
    }
}
