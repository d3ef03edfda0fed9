//! What an experiment will cost before it runs: its trials, calls and prompt tokens, and how
//! long the calls still missing should take, from the speed this machine measured for the
//! same model in earlier runs.

use std::path::Path;

use judgelab_core::{race, split};
use judgelab_core::{Item, TrialParams};
use judgelab_store::Store;

use crate::prompt::PromptInput;
use crate::resolve::resolve;
use crate::run::DEFAULT_TIMED_CALLS;
use crate::{EngineError, JudgeLoader, LocalModel, ModelSpec};

/// Prompts rendered per trial to estimate its prompt tokens; the rest is extrapolated.
const SAMPLE: usize = 48;

#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub experiment: String,
    pub dataset: String,
    pub n_trials: usize,
    pub n_items: usize,
    /// Model calls: one per verdict, or with exact verdicts one per prompt however many
    /// trials and repeats it serves; remote trials that differ only in the load their
    /// latency is measured at (`concurrency`) share theirs, and each makes a sample of
    /// them again at its load.
    pub n_calls: usize,
    pub n_verdicts: usize,
    /// Verdicts stored by an earlier run of the same content.
    pub n_done: usize,
    /// Prompt tokens of all calls, estimated from a sample of rendered prompts (tokenised
    /// by the first local model; about four characters a token for remote models).
    pub prompt_tokens: f64,
    /// Seconds for the calls not yet stored, from this model's measured milliseconds per
    /// prompt token; `None` before its first run.
    pub est_seconds: Option<f64>,
    /// A stored experiment of this name has other content (a run needs `replace`).
    pub conflicts: bool,
    /// Items of the test split (0: none), and the most calls one trial makes on it: each
    /// trial the selection keeps makes them, beside `n_calls`.
    pub n_test: usize,
    pub test_calls_per_trial: usize,
    /// What a race saves, for `[selection] strategy = "race"`.
    pub race: Option<RacePlan>,
}

/// A race's cost against the full grid's `n_calls`, which is also the most it can make
/// (no trial dropped). How much less it makes depends on how far the trials are apart,
/// which is known only as they are judged: in simulation (`cargo xtask bench race`), 48
/// configurations of a grid-like sweep on 400 items made about a third of the calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RacePlan {
    pub n_rounds: u32,
    /// Dev items every trial judges before the first round that can drop any.
    pub first_decision: usize,
    /// The fewest dev calls: every trial on the first `first_decision` items, then only
    /// the cheapest trial (with its exact group) on the rest.
    pub min_calls: usize,
}

/// Plans the experiment file at `path`. `tokenizer` loads the first local model, to count
/// the tokens of sample prompts; `None` estimates from characters.
pub async fn plan(
    store: &Store,
    path: &Path,
    tokenizer: Option<&dyn JudgeLoader>,
) -> Result<Plan, EngineError> {
    let r = resolve(store, path).await?;
    let e = &r.experiment;
    let items = &r.dataset.items;
    let s = split::reserve(
        items,
        e.sweep.seed,
        e.pool_size(),
        &e.sweep.few_shot_max_tokens,
        &|_| 0,
        e.sizes(),
    )?;
    let trials = e.trials();
    let judged: Vec<&Item> = s.judged.iter().map(|&i| &items[i]).collect();
    let repeats = e.sweep.repeats as usize;

    // Prompt tokens as the first local judge counts them.
    let local = e.judges.iter().find_map(|j| Some((j, j.local()?)));
    let judge = match (tokenizer, local) {
        (Some(loader), Some((j, local))) => {
            let (path, sha256) = r.model_file(&j.name);
            Some(loader.load(&ModelSpec::Local(LocalModel {
                name: j.name.clone(),
                path: path.clone(),
                sha256: sha256.clone(),
                gpu_layers: Some(0),
                context_size: local.context_size,
                threads: Some(1),
                parallel: 1,
                share_prefix: false,
            }))?)
        }
        _ => None,
    };
    let mut n_calls = 0;
    let mut n_verdicts = 0;
    let mut prompt_tokens = 0.0;
    // Exact verdicts: trials showing the same prompts share their calls.
    let mut prompts_seen = std::collections::HashSet::new();
    // Remote trials at several loads: the same requests, made once.
    let mut requests_seen = std::collections::HashSet::new();
    // Calls per dev item of each trial that makes its own.
    let mut per_item: Vec<usize> = Vec::new();
    for params in &trials {
        n_verdicts += judged.len() * repeats * params.order.calls().len();
        let exact = r.judge(&params.judge).exact();
        // The sample timed at the trial's load: the timed calls, a warm-up and a tail.
        let at_load = match params.concurrency {
            Some(c) if r.judge(&params.judge).remote().is_some() => {
                (judged.len() * params.order.calls().len()).min(DEFAULT_TIMED_CALLS)
                    + 2 * c as usize
                    - 1
            }
            _ => 0,
        };
        let requests = TrialParams {
            concurrency: None,
            ..params.clone()
        };
        let shared = at_load > 0
            && !requests_seen.insert(serde_json::to_string(&requests).expect("params serialise"));
        let prompts = (
            &params.judge,
            &params.template,
            params.few_shot,
            params.few_shot_max_tokens,
            params.few_shot_set,
            params.order,
            params.constraint,
        );
        if exact && !prompts_seen.insert(prompts) {
            continue;
        }
        let template = r.template(&params.template);
        // Lengths are not counted here: the examples as if every one fits.
        let examples: Vec<&Item> = split::examples(
            items,
            &s.pool,
            params.few_shot as usize,
            None,
            params.few_shot_set,
            e.sweep.seed,
            &|_| 0,
        )
        .into_iter()
        .map(|i| &items[i])
        .collect();
        let input = PromptInput {
            task: r.dataset.task,
            output: r.output,
            allow_tie: r.allow_tie(),
            template,
            examples: &examples,
        };
        let calls_per_item = if exact { 1 } else { repeats } * params.order.calls().len();
        if !shared {
            per_item.push(calls_per_item);
        }
        let n = if shared {
            0
        } else {
            judged.len() * calls_per_item
        } + at_load;
        n_calls += n;
        let sample: Vec<&Item> = judged.iter().copied().take(SAMPLE).collect();
        if sample.is_empty() {
            continue;
        }
        let mut sample_tokens = 0.0;
        for item in &sample {
            let messages = input.render(item.text(), false)?;
            sample_tokens += match &judge {
                Some(j) => j.count_tokens(&messages).map_err(EngineError::Judge)? as f64,
                None => messages.iter().map(|m| m.content.len()).sum::<usize>() as f64 / 4.0,
            };
        }
        let per_item = sample_tokens / sample.len() as f64;
        prompt_tokens += per_item * n as f64;
    }

    let existing = store.experiment_by_name(&e.name).await?;
    let conflicts = existing
        .as_ref()
        .is_some_and(|x| x.content_hash != r.content_hash);
    let n_done = match existing.filter(|_| !conflicts) {
        Some(x) => store.count_verdicts(x.id).await?,
        None => 0,
    };
    // Measured for the first local model; remote judges' time is not estimated.
    let speed = match r.models.iter().find(|(_, _, sha256)| !sha256.is_empty()) {
        Some((_, _, sha256)) => store.ms_per_prompt_token(sha256).await?,
        None => None,
    };
    let missing = n_verdicts.saturating_sub(n_done) as f64 / n_verdicts.max(1) as f64;
    let race = e.selection.is_race().then(|| {
        let rounds: Vec<race::Round> = race::rounds(judged.len(), &e.selection).collect();
        let first_decision = rounds
            .iter()
            .find(|r| r.decides)
            .map_or(judged.len(), |r| r.n_items);
        let cheapest = per_item.iter().copied().min().unwrap_or(0);
        RacePlan {
            n_rounds: rounds.len() as u32,
            first_decision,
            min_calls: per_item.iter().sum::<usize>() * first_decision
                + cheapest * (judged.len() - first_decision),
        }
    });
    Ok(Plan {
        experiment: e.name.clone(),
        dataset: r.dataset.name.clone(),
        n_trials: trials.len(),
        n_items: judged.len(),
        n_calls,
        n_verdicts,
        n_done,
        prompt_tokens,
        est_seconds: speed.map(|ms| ms * prompt_tokens * missing / 1000.0),
        conflicts,
        n_test: s.test.len(),
        test_calls_per_trial: s.test.len() * per_item.iter().copied().max().unwrap_or(0),
        race,
    })
}
