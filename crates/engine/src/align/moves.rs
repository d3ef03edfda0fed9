//! The moves that make a candidate from its parent, as trials: which apply to a judge,
//! and the trial each makes (its parameters, examples, template and identity).
//!
//! A sampling move is not among a generation's moves ([`kinds`]): it is made beside each
//! new child of another move ([`sampling`]), shows that child's prompts, and so is judged
//! from the same exact passes, in the same calls.

use judgelab_core::align::Move;
use judgelab_core::template::Template;
use judgelab_core::{split, Order, Task, TrialParams};
use judgelab_store::{ExperimentRow, NewTrial, TrialRow};

use crate::resolve::{Parts, Resolved};
use crate::EngineError;

/// The moves that apply to a judge with `params`: a rewrite always; another example set
/// where the experiment has a few-shot pool (and no limit on an example's length, which
/// would need the judge's tokens); the debiased answer order for a pairwise judge not
/// judged so yet.
pub(super) fn kinds(r: &Resolved, row: &ExperimentRow, params: &TrialParams) -> Vec<Move> {
    let mut out = vec![Move::Rewrite];
    if !row.pool.is_empty() && params.few_shot_max_tokens.is_none() {
        out.push(Move::Examples);
    }
    if r.dataset.task == Task::Pairwise && params.order != Order::Debiased {
        out.push(Move::Order);
    }
    out
}

/// Whether a judge with `params` gets sampling moves: where its verdicts are exact, each
/// temperature and top_p is read from the pass its other candidates share.
pub(super) fn sampling(r: &Resolved, params: &TrialParams, naive: bool) -> bool {
    r.experiment.exact(params) && !naive
}

/// What a move changes of its parent.
#[derive(Clone, Copy)]
pub(super) enum Step<'t> {
    /// The template, rewritten.
    Rewrite(&'t Template),
    /// The example set drawn (at least one example).
    Examples {
        set: u32,
    },
    Order,
    Sampling {
        temperature: f64,
        top_p: f64,
    },
}

/// The template name a candidate's template is known by in the alignment.
pub(super) fn template_name(t: &Template) -> String {
    format!("align-{}", &t.hash[..12])
}

/// The trial `step` makes of `parent`; `None` where it changes nothing.
pub(super) fn child(
    r: &Resolved,
    row: &ExperimentRow,
    parent: &TrialRow,
    step: Step<'_>,
) -> Result<Option<(NewTrial, Template)>, EngineError> {
    let parent_parts = r.parts(&parent.params)?;
    let mut params = parent.params.clone();
    let mut examples = parent.examples.clone();
    let mut template = parent_parts.template.clone();
    match step {
        Step::Rewrite(t) => {
            template = t.clone();
            params.template = template_name(&template);
        }
        Step::Order => params.order = Order::Debiased,
        Step::Sampling { temperature, top_p } => {
            params.temperature = temperature;
            params.top_p = top_p;
        }
        Step::Examples { set } => {
            // At least one example, from the pool; a parent without any gets one.
            params.few_shot = params.few_shot.max(1);
            params.few_shot_set = set;
            let pool: Vec<usize> = row
                .pool
                .iter()
                .filter_map(|id| r.dataset.items.iter().position(|i| i.id == *id))
                .collect();
            let picked = split::examples(
                &r.dataset.items,
                &pool,
                params.few_shot as usize,
                None,
                set,
                r.experiment.sweep.seed,
                &|_| 0,
            );
            examples = picked
                .iter()
                .map(|&i| r.dataset.items[i].id.clone())
                .collect();
            if examples == parent.examples {
                return Ok(None);
            }
        }
    }
    if params == parent.params && template.hash == parent_parts.template.hash {
        return Ok(None);
    }
    let parts = Parts {
        judge: parent_parts.judge,
        template: &template,
    };
    let judge_identity = crate::card::definition(r, parts, &params, &examples)?.identity();
    let trial = NewTrial {
        params,
        template_hash: template.hash.clone(),
        model_path: parent.model_path.clone(),
        model_sha256: parent.model_sha256.clone(),
        examples,
        judge_identity,
    };
    Ok(Some((trial, template)))
}
