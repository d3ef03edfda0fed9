//! An alignment's budget in dollars: what one call may cost at most, where the trial's
//! judge or the proposer has a price (`price = { input = …, output = … }`, dollars per
//! million tokens).
//!
//! A call's prompt tokens are bounded whatever the server's tokenizer
//! (`core::align::plan::prompt_tokens_at_most`) and its reply by its `max_tokens`. A judge
//! call's prompt is capped at the start's longest on the dev and test items, plus room for
//! a rewritten instruction ([`REWRITE_ROOM`]) and for another example set (the pool's
//! longest examples); a candidate whose prompts would be longer is not made, its reason
//! stored. A proposer call's prompt is capped at one that shows such a template and the
//! longest dev items as its mistakes. Every call is counted at its most against the
//! budget: the search never spends more than it, whatever the servers' usage says, and
//! reports what the usage priced.

use judgelab_core::align::plan::{prompt_tokens_at_most, Plan};
use judgelab_core::align::proposer::{self, Judging, Mistake, MISTAKE_CHARS};
use judgelab_core::experiment::Price;
use judgelab_core::template::Template;
use judgelab_core::verdict::{FailureKind, Verdict};
use judgelab_core::{Item, TrialParams};
use judgelab_store::{ExperimentRow, NewTrial, TrialRow};

use crate::prompt::{Asking, PromptInput};
use crate::resolve::Resolved;
use crate::run::example_text;
use crate::EngineError;

/// The most tokens a proposer's reply may take.
pub(super) const PROPOSER_MAX_TOKENS: u32 = 400;

/// Room in a judge's prompt for a rewritten instruction: a proposer's longest reply, at 4
/// bytes a token.
const REWRITE_ROOM: u64 = 4 * PROPOSER_MAX_TOKENS as u64;

/// Room around each example for the template's words (its heading, its label's line).
const EXAMPLE_WORDS: u64 = 256;

/// The prices of the judge of `params` and of the judge named `proposer`, where they
/// have one.
pub(super) fn prices(
    r: &Resolved,
    params: &TrialParams,
    proposer: &str,
) -> Result<(Option<Price>, Option<Price>), EngineError> {
    let judge = r.parts(params)?.judge.remote().and_then(|j| j.price);
    let proposer = r
        .judges
        .iter()
        .find(|j| j.name() == proposer)
        .and_then(|j| j.remote())
        .and_then(|j| j.price);
    Ok((judge, proposer))
}

/// The most prompt tokens the judge with `params`, `template` and `examples` (item ids)
/// takes on any of `items` (ids), in either answer order.
pub(super) fn longest_prompt(
    r: &Resolved,
    params: &TrialParams,
    template: &Template,
    examples: &[String],
    items: &[String],
) -> Result<u64, EngineError> {
    let index = r.item_index();
    let examples: Vec<&Item> = examples.iter().map(|id| index[id.as_str()]).collect();
    let input = PromptInput {
        task: r.dataset.task,
        output: r.output,
        allow_tie: r.allow_tie(),
        template,
        examples: &examples,
        rubric: Asking::of(params.style, &r.rubric),
    };
    let mut most = 0;
    for id in items {
        for &swapped in params.order.calls() {
            let messages = input.render(index[id.as_str()].text(), swapped)?;
            most = most.max(prompt_tokens_at_most(&messages));
        }
    }
    Ok(most)
}

/// What the caps are computed from: the source experiment resolved, its row and trial,
/// the proposer's template and what it is shown.
pub(super) struct Start<'a> {
    pub r: &'a Resolved,
    pub row: &'a ExperimentRow,
    pub trial: &'a TrialRow,
    pub proposer_template: &'a Template,
    pub judging: Judging,
    pub mistakes: usize,
}

/// The caps on a judge call's prompt and on a proposer call's, in tokens at most.
pub(super) fn caps(from: &Start<'_>) -> Result<(u64, u64), EngineError> {
    let (r, row, trial) = (from.r, from.row, from.trial);
    let items: Vec<String> = row.judged.iter().chain(&row.test).cloned().collect();
    let template = r.parts(&trial.params)?.template;
    let start = longest_prompt(r, &trial.params, template, &trial.examples, &items)?;
    let index = r.item_index();
    // An item shown as an example, and the template's words around it.
    let example =
        |id: &String| prompt_tokens_at_most(&[example_text(index[id.as_str()])]) + EXAMPLE_WORDS;
    let longest_example = row.pool.iter().map(example).max().unwrap_or(0);
    let shots = u64::from(trial.params.few_shot.max(1));
    let judge_cap = start + REWRITE_ROOM + shots * longest_example;
    // The proposer is shown the template and the mistakes: at most the judge's cap and
    // the longest dev items, each as a mistake without a verdict.
    let mut dev: Vec<&Item> = row.judged.iter().map(|id| index[id.as_str()]).collect();
    dev.sort_by_key(|i| std::cmp::Reverse(example(&i.id)));
    let shown: Vec<Mistake> = dev
        .iter()
        .take(from.mistakes)
        .map(|i| {
            let mut m = Mistake::new(
                i,
                Verdict::Failed(FailureKind::NoLabel),
                Some(1.0),
                MISTAKE_CHARS,
            );
            m.verdict = "no verdict".into();
            m
        })
        .collect();
    let messages = proposer::prompt(from.proposer_template, template, from.judging, &shown)?;
    let proposer_cap = prompt_tokens_at_most(&messages) + judge_cap;
    Ok((judge_cap, proposer_cap))
}

/// Why a candidate that would judge as `trial` with `template` is not made, where calls
/// have a price: its prompts take more tokens than the plan's cap.
pub(super) fn over_cap(
    r: &Resolved,
    plan: &Plan,
    row: &ExperimentRow,
    trial: &NewTrial,
    template: &Template,
) -> Result<Option<String>, EngineError> {
    let Some(cap) = plan.prompt_cap else {
        return Ok(None);
    };
    let items: Vec<String> = row.judged.iter().chain(&row.test).cloned().collect();
    let most = longest_prompt(r, &trial.params, template, &trial.examples, &items)?;
    Ok((most > cap).then(|| {
        format!("its prompts take up to {most} tokens, more than the {cap} the budget in dollars is planned for")
    }))
}
