//! The messages a judge is shown for one call: the template rendered on an item (its answers
//! swapped where the call shows B first) with the trial's few-shot examples. Runs render them
//! before calling the judge; [`verdict_prompt`] renders a stored verdict's prompt again and
//! checks it against the hash recorded with the verdict.

use judgelab_core::experiment::Style;
use judgelab_core::results::{ExperimentSummary, TrialSummary, VerdictRecord};
use judgelab_core::rubric::Asked;
use judgelab_core::template::RenderContext;
use judgelab_core::{Item, ItemText, Message, OutputKind, Task, Template};
use judgelab_store::Store;

use crate::EngineError;

/// What every prompt of a trial shares.
pub(crate) struct PromptInput<'a> {
    pub task: Task,
    pub output: OutputKind,
    pub allow_tie: bool,
    pub template: &'a Template,
    pub examples: &'a [&'a Item],
    /// The criteria a rubric template's call asks, in the trial's style; none for other
    /// templates.
    pub rubric: Asking<'a>,
}

/// The criteria a call asks of a rubric template, and how.
#[derive(Clone, Copy, Default)]
pub(crate) struct Asking<'a> {
    pub style: Style,
    pub criteria: &'a [Asked],
}

impl<'a> Asking<'a> {
    /// What a trial in `style` (none: the default) asks of `rubric` in one call.
    pub fn of(style: Option<Style>, rubric: &'a [Asked]) -> Self {
        Asking {
            style: style.unwrap_or_default(),
            criteria: rubric,
        }
    }
}

impl PromptInput<'_> {
    /// The messages for `item`, with its answers swapped when `swapped`.
    pub fn render(&self, item: ItemText<'_>, swapped: bool) -> Result<Vec<Message>, EngineError> {
        let shown = if swapped { item.swapped() } else { item };
        let mut ctx =
            RenderContext::new(self.task, self.output, self.allow_tie, shown, self.examples);
        if !self.rubric.criteria.is_empty() {
            ctx = ctx.asking(self.rubric.style, self.rubric.criteria);
        }
        Ok(self.template.render(&ctx)?)
    }
}

/// A stored verdict's prompt, rendered again.
#[derive(Debug, Clone)]
pub struct RenderedPrompt {
    pub messages: Vec<Message>,
    /// The rendering hashes to the prompt hash stored with the verdict: these are the very
    /// messages the judge saw.
    pub matches_record: bool,
}

/// Renders the prompt of `verdict`, one of `trial`'s verdicts in `summary`. A trial with an
/// input budget showed its item cut: in `tokenizer`'s tokens (its local judge, loaded), or
/// without one at about four characters a token, as a remote judge cuts; its inputs over
/// the budget replaced by their stored summaries where its strategy is `summary`.
pub async fn verdict_prompt(
    store: &Store,
    summary: &ExperimentSummary,
    (trial, verdict): (&TrialSummary, &VerdictRecord),
    tokenizer: Option<&dyn judgelab_core::Judge>,
) -> Result<RenderedPrompt, EngineError> {
    let dataset = &summary.dataset;
    let find = |id: &str| {
        dataset
            .items
            .iter()
            .find(|i| i.id == id)
            .ok_or_else(|| EngineError::Invalid {
                path: summary.experiment.name.clone(),
                message: format!("item {id:?} is not in dataset {:?}", dataset.name),
            })
    };
    let item = find(&verdict.item_id)?;
    // A card's examples are the card's (stored as `card:ID`).
    let card = summary.experiment.parsed.card_definition();
    let example = |id: &str| match (card, judgelab_core::card::JudgeCard::own_id(id)) {
        (Some(d), Some(id)) => {
            d.examples
                .iter()
                .find(|e| e.id == id)
                .ok_or_else(|| EngineError::Invalid {
                    path: summary.experiment.name.clone(),
                    message: format!("few-shot example {id:?} is not in the judge card"),
                })
        }
        _ => find(id),
    };
    let examples = trial
        .examples
        .iter()
        .map(|id| example(id))
        .collect::<Result<Vec<_>, _>>()?;
    let template =
        store
            .template(&trial.template_hash)
            .await?
            .ok_or_else(|| EngineError::Invalid {
                path: summary.experiment.name.clone(),
                message: format!("template {} is not stored", trial.template_hash),
            })?;
    let rubric = judgelab_core::rubric::ask(&template.criteria()?, &dataset.criteria).map_err(
        |message| EngineError::Invalid {
            path: summary.experiment.name.clone(),
            message,
        },
    )?;
    // A checklist's call asked one criterion, or one of its yes/no items.
    let checklist = judgelab_core::rubric::items::calls(&rubric);
    let asked = match checklist.iter().position(|a| a.name == verdict.criterion) {
        Some(i) => &checklist[i..=i],
        None => &rubric[..],
    };
    let input = PromptInput {
        task: dataset.task,
        output: summary
            .experiment
            .parsed
            .judge
            .output
            .unwrap_or(OutputKind::default_for(dataset.task)),
        allow_tie: summary.experiment.parsed.allow_tie(dataset),
        template: &template,
        examples: &examples,
        rubric: Asking::of(trial.params.style, asked),
    };
    let summaries = shown_summaries(store, summary, trial, item, tokenizer).await?;
    let shown = crate::inputs::shown_by(&trial.params, item, tokenizer, summaries.as_ref())?;
    let messages = input.render(shown.text(), verdict.swapped)?;
    let hash = judgelab_core::hash::prompt_hash(&messages);
    Ok(RenderedPrompt {
        matches_record: hash == verdict.prompt_hash,
        messages,
    })
}

/// The stored summaries a trial whose strategy is `summary` showed of `item`'s inputs over
/// its budget (counted in `tokenizer`'s tokens, or estimated); none for other trials.
async fn shown_summaries(
    store: &Store,
    summary: &ExperimentSummary,
    trial: &TrialSummary,
    item: &judgelab_core::Item,
    tokenizer: Option<&dyn judgelab_core::Judge>,
) -> Result<Option<judgelab_core::cut::Summaries>, EngineError> {
    let (Some(level), judgelab_core::experiment::Shortening::Summary) =
        (trial.params.input_max_tokens, trial.params.input_strategy)
    else {
        return Ok(None);
    };
    let mut starts = |text: &str| crate::inputs::starts_in(tokenizer, text);
    let texts =
        judgelab_core::cut::over(item, level as usize, &mut starts).map_err(EngineError::Judge)?;
    let summariser = crate::summaries::Summariser::of_stored(
        &summary.experiment.parsed,
        &trial.params,
        trial.model_sha256.as_deref(),
    )?;
    let (mut found, missing) = crate::summaries::stored(store, &summariser, &texts, level).await?;
    // Counted otherwise than the run counted (a local judge's tokens estimated here): an
    // input with no summary is shown cut head and tail, as an empty summary leaves it, and
    // the rendering does not match the record.
    for text in missing {
        found.texts.insert(text, String::new());
    }
    Ok(Some(found.texts))
}
