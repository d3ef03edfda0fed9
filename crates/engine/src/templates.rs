//! Templates outside a run: a template checked against the task it is written for, a
//! preview rendered on one of a dataset's items, and its prompt tokens counted by a local
//! model (loaded through the [`JudgeLoader`] seam and kept for the next count).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use judgelab_core::template::{RenderContext, TemplateError};
use judgelab_core::{Dataset, Item, Judge, Message, OutputKind, Task, Template};

use crate::judges::{JudgeLoader, LocalModel, ModelSpec};
use crate::{default_model_path, EngineError};

/// Checks a template against the task it is written for: one that validates for pairwise
/// labels or for 1–5 ratings is fine; otherwise the error of the task it seems written for.
pub fn check(t: &Template) -> Result<(), TemplateError> {
    let pairwise = t.validate(Task::Pairwise, OutputKind::Label);
    let single = t.validate(
        Task::Single {
            scale_min: 1,
            scale_max: 5,
        },
        OutputKind::Digit,
    );
    match (pairwise, single) {
        (Ok(()), _) | (_, Ok(())) => Ok(()),
        (Err(e), Err(other)) => Err(if t.source.contains("answer_a") {
            e
        } else {
            other
        }),
    }
}

/// A template rendered on one item.
#[derive(Debug, Clone)]
pub struct Preview<'d> {
    pub messages: Vec<Message>,
    pub item: &'d Item,
}

/// Renders the template `source` on the dataset's item `item_idx` (the last one if out of
/// range), with `few_shot` of the other items as examples. A run draws its examples from
/// its seeded pool instead.
pub fn preview<'d>(
    dataset: &'d Dataset,
    source: &str,
    item_idx: usize,
    few_shot: usize,
) -> Result<Preview<'d>, EngineError> {
    let n = dataset.items.len();
    if n == 0 {
        return Err(EngineError::Invalid {
            path: dataset.name.clone(),
            message: "the dataset has no items".into(),
        });
    }
    let idx = item_idx.min(n - 1);
    let item = &dataset.items[idx];
    let examples: Vec<&Item> = dataset
        .items
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != idx)
        .take(few_shot)
        .map(|(_, e)| e)
        .collect();
    let template = Template::new("preview", source);
    let output = OutputKind::default_for(dataset.task);
    template.validate(dataset.task, output)?;
    let ctx = RenderContext::new(
        dataset.task,
        output,
        dataset.allows_tie(),
        item.text(),
        &examples,
    );
    Ok(Preview {
        messages: template.render(&ctx)?,
        item,
    })
}

/// Counts prompt tokens with a local model, keeping the last model loaded.
#[derive(Default)]
pub struct TokenCounter {
    loaded: Mutex<Option<(PathBuf, Arc<dyn Judge>)>>,
}

impl TokenCounter {
    /// Prompt tokens of `messages` in the chat template of `model` (`default` or a GGUF
    /// path). Blocks while a model loads.
    pub fn count(
        &self,
        model: &str,
        messages: &[Message],
        loader: &dyn JudgeLoader,
    ) -> Result<u32, EngineError> {
        let path = if model == "default" {
            default_model_path()
        } else {
            PathBuf::from(model)
        };
        let mut slot = self.loaded.lock().expect("never poisoned");
        let judge = match slot.as_ref() {
            Some((p, judge)) if *p == path => Arc::clone(judge),
            _ => {
                // Only the tokenizer is used: a small context on one thread, on the CPU.
                let judge = loader.load(&ModelSpec::Local(LocalModel {
                    name: model.to_string(),
                    path: path.clone(),
                    sha256: String::new(),
                    gpu_layers: Some(0),
                    context_size: 512,
                    threads: Some(1),
                    parallel: 1,
                    share_prefix: false,
                }))?;
                *slot = Some((path, Arc::clone(&judge)));
                judge
            }
        };
        judge
            .count_tokens(messages)
            .map(|n| n as u32)
            .map_err(EngineError::Judge)
    }
}
