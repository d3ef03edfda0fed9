//! Judge prompt templates in Jinja (minijinja), rendered into chat messages.
//!
//! A template may define a `system` block and a `user` block; without a `user` block the
//! whole template is the user message. The variables a template can use are listed in
//! [`VARIABLES`]; any other variable is a validation error before any model is loaded.

use std::collections::BTreeSet;

use minijinja::{Environment, ErrorKind, UndefinedBehavior};
use serde::Serialize;
use serde_json::Value;

use crate::dataset::{Choice, Item, ItemText, Label, Task};
use crate::hash::sha256_hex;
use crate::judge::Message;
use crate::verdict::OutputKind;

/// The variables a template can reference.
pub const VARIABLES: [&str; 11] = [
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
];

const BUILTINS: [(&str, &str); 2] = [
    ("pairwise", include_str!("templates/pairwise.jinja")),
    ("single", include_str!("templates/single.jinja")),
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
            output: output.as_str(),
            allow_tie,
            scale_min,
            scale_max,
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

    fn invalid(&self, e: impl std::fmt::Display) -> TemplateError {
        TemplateError::Invalid {
            template: self.name.clone(),
            message: e.to_string(),
        }
    }

    /// Checks syntax and variables, then renders a sample of `task` to catch the rest.
    pub fn validate(&self, task: Task, output: OutputKind) -> Result<(), TemplateError> {
        let env = environment();
        let compiled = env
            .template_from_str(&self.source)
            .map_err(|e| self.invalid(describe(&e)))?;
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
        let sample = sample_item(task);
        let fields = match task {
            Task::Pairwise => "question, answer_a, answer_b, reference",
            Task::Single { .. } => "question, answer, reference",
        };
        let messages = self
            .render(&RenderContext::new(
                task,
                output,
                true,
                sample.text(),
                &[&sample, &sample],
            ))
            .map_err(|e| match e {
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
    pub fn render(&self, ctx: &RenderContext<'_>) -> Result<Vec<Message>, TemplateError> {
        let env = environment();
        let compiled = env
            .template_from_str(&self.source)
            .map_err(|e| self.invalid(describe(&e)))?;
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

    fn llmbar() -> crate::Dataset {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../datasets/llmbar_natural.jsonl"
        );
        parse(
            path,
            &std::fs::read(path).unwrap(),
            &ImportOptions::default(),
        )
        .unwrap()
    }

    #[test]
    fn builtins_validate() {
        let single = Task::Single {
            scale_min: 1,
            scale_max: 5,
        };
        for output in [OutputKind::Label, OutputKind::Json] {
            Template::builtin("pairwise")
                .unwrap()
                .validate(Task::Pairwise, output)
                .unwrap();
        }
        for output in [OutputKind::Digit, OutputKind::Json] {
            Template::builtin("single")
                .unwrap()
                .validate(single, output)
                .unwrap();
        }
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
        let t = Template::new("mine.jinja", "Judge {{ question }} and {{ rubric }}");
        assert_eq!(
            t.validate(Task::Pairwise, OutputKind::Label)
                .unwrap_err()
                .to_string(),
            format!(
                "template mine.jinja: unknown variable `rubric` (known: {})",
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
