//! What an experiment will cost before it runs: its trials, calls and prompt tokens, and how
//! long the calls still missing should take, from the speed this machine measured for the
//! same model in earlier runs.

use std::collections::HashMap;
use std::path::Path;

use judgelab_core::experiment::Reproduces;
use judgelab_core::judge::Judge;
use judgelab_core::sweep::same_request_shape;
use judgelab_core::{race, split};
use judgelab_core::{Experiment, Item, Task, Template, TrialParams};
use judgelab_store::Store;

use crate::inputs;
use crate::prompt::{Asking, PromptInput};
use crate::resolve::{resolve, Resolved};
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
    /// Seconds for the calls not yet stored, the timing phase's included, from this
    /// model's measured milliseconds per prompt token; `None` before its first run.
    pub est_seconds: Option<f64>,
    /// Trials whose verdicts are exact, and the passes per item that serve them (trials
    /// with the same prompts share one).
    pub n_exact_trials: usize,
    pub n_exact_passes: usize,
    /// The calls timed alone after judging, for local trials' latency.
    pub timing: TimingPlan,
    /// Local trials whose verdicts reproduce bit for bit (seeded samples, and every call of
    /// a `reproducible` judge: decoded alone), and up to near-ties (greedy generations and
    /// exact passes, decoded in batches).
    pub n_bit_for_bit: usize,
    pub n_up_to_near_ties: usize,
    /// A stored experiment of this name has other content (a run needs `replace`).
    pub conflicts: bool,
    /// Items of the test split (0: none), and the most calls one trial makes on it: each
    /// trial the selection keeps makes them, beside `n_calls`.
    pub n_test: usize,
    pub test_calls_per_trial: usize,
    /// What a race saves, for `[selection] strategy = "race"`.
    pub race: Option<RacePlan>,
    /// Each variant the quantisation axis makes, in a sentence: made already, or made on
    /// the first run, and what llama.cpp does with it ([`crate::variants::plan_lines`]).
    pub quantization: Vec<String>,
    /// Where the judged items carry reference answers that a template does not show, a
    /// sentence naming the built-in template that grades against them.
    pub reference: Option<String>,
    /// For each remote judge with one-token trials, whether their verdicts are exact from
    /// its server's log-probabilities, in a sentence ([`crate::server::plan_lines`]).
    pub remote_exact: Vec<String>,
    /// For each level of `input_max_tokens`, how many judged items it cuts, in a sentence
    /// ([`crate::inputs::plan_lines`]).
    pub input_budget: Vec<String>,
}

/// The timing phase: a sample of calls made again alone, one per request shape (trials
/// whose timed requests are the same share it; `run::timing`), and a warm-up per judge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TimingPlan {
    /// Distinct request shapes timed, and the local trials they serve.
    pub n_shapes: usize,
    pub n_trials: usize,
    /// Calls it makes in all (warm-ups included), whether stored or not.
    pub n_calls: usize,
    /// Seconds for those not yet stored; `None` before the model's first run.
    pub est_seconds: Option<f64>,
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
    timed_calls: usize,
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
    let mut trials = e.trials();
    let remote_exact = crate::server::plan_lines(store, e, &mut trials).await?;
    let judged: Vec<&Item> = s.judged.iter().map(|&i| &items[i]).collect();
    let judge = tokenizer_judge(&r, tokenizer)?;
    let sampled = Sampled {
        r: &r,
        judged: &judged,
        pool: &s.pool,
        judge: judge.as_deref(),
    };
    let mut call_tokens = HashMap::new();
    let counted = count_calls(&sampled, &trials, timed_calls, &mut call_tokens)?;
    let (timing, timing_tokens, timed_rows) =
        timed_phase(&sampled, &trials, timed_calls, &mut call_tokens)?;

    let known = stored(store, &r).await?;
    // Measured for the first local model; remote judges' time is not estimated.
    let speed = match r.judges.iter().find(|j| !j.sha256.is_empty()) {
        Some(j) => store.ms_per_prompt_token(&j.sha256).await?,
        None => None,
    };
    let Counted {
        n_calls,
        n_verdicts,
        prompt_tokens,
        passes,
        per_item,
    } = counted;
    let missing = n_verdicts.saturating_sub(known.n_done) as f64 / n_verdicts.max(1) as f64;
    let timing_missing = timed_rows.saturating_sub(known.n_timed) as f64 / timed_rows.max(1) as f64;
    let timing = TimingPlan {
        est_seconds: speed.map(|ms| ms * timing_tokens * timing_missing / 1000.0),
        ..timing
    };
    let race = race_plan(e, judged.len(), &per_item);
    Ok(Plan {
        experiment: e.name.clone(),
        dataset: r.dataset.name.clone(),
        n_trials: trials.len(),
        n_items: judged.len(),
        n_calls,
        n_verdicts,
        n_done: known.n_done,
        prompt_tokens,
        est_seconds: speed
            .map(|ms| ms * prompt_tokens * missing / 1000.0 + timing.est_seconds.unwrap_or(0.0)),
        n_bit_for_bit: reproducing(e, &trials, Reproduces::BitForBit),
        n_up_to_near_ties: reproducing(e, &trials, Reproduces::UpToNearTies),
        n_exact_trials: passes.iter().map(|(_, served)| served).sum(),
        n_exact_passes: passes.len(),
        timing,
        conflicts: known.conflicts,
        n_test: s.test.len(),
        test_calls_per_trial: s.test.len() * per_item.iter().copied().max().unwrap_or(0),
        race,
        quantization: crate::variants::plan_lines(&r),
        reference: reference_line(&r, &judged),
        remote_exact,
        input_budget: inputs::plan_lines(store, &r, &judged, sampled.judge).await?,
    })
}

/// What the store holds of the experiment already.
struct Stored {
    /// A stored experiment of the name has other content.
    conflicts: bool,
    /// Verdicts and timed calls stored (none where it conflicts).
    n_done: usize,
    n_timed: usize,
}

async fn stored(store: &Store, r: &Resolved) -> Result<Stored, EngineError> {
    let existing = store.experiment_by_name(&r.experiment.name).await?;
    let conflicts = existing
        .as_ref()
        .is_some_and(|x| x.content_hash != r.content_hash);
    Ok(match existing.filter(|_| !conflicts) {
        Some(x) => Stored {
            conflicts,
            n_done: store.count_verdicts(x.id).await?,
            n_timed: store.count_timed_calls(x.id).await?,
        },
        None => Stored {
            conflicts,
            n_done: 0,
            n_timed: 0,
        },
    })
}

/// Says so where `judged` items carry reference answers and a template does not grade
/// against them: it leaves them out, or it is a built-in that shows them as context only.
fn reference_line(r: &Resolved, judged: &[&Item]) -> Option<String> {
    let given = judged
        .iter()
        .filter(|i| i.reference.as_deref().is_some_and(|x| !x.trim().is_empty()))
        .count();
    let guided = |name: &str, t: &Template| {
        let plain_builtin = Template::builtin(name).is_some_and(|b| b.source == t.source)
            && !name.ends_with("_reference");
        t.uses("reference") && !plain_builtin
    };
    let unguided: Vec<&str> = r
        .templates
        .iter()
        .filter(|(name, t)| !guided(name, t))
        .map(|(name, _)| name.as_str())
        .collect();
    if given == 0 || unguided.is_empty() {
        return None;
    }
    let builtin = match r.dataset.task {
        Task::Pairwise => "pairwise_reference",
        Task::Single { .. } => "single_reference",
    };
    Some(format!(
        "{given} of the {} items judged carry a reference answer, which {} {} not grade against: the built-in `{builtin}` checks each answer against it",
        judged.len(),
        unguided.join(", "),
        if unguided.len() == 1 { "does" } else { "do" }
    ))
}

/// The first local judge, loaded to count prompt tokens; none without a loader or a
/// local judge.
fn tokenizer_judge(
    r: &Resolved,
    tokenizer: Option<&dyn JudgeLoader>,
) -> Result<Option<std::sync::Arc<dyn Judge>>, EngineError> {
    let local = r.judges.iter().find_map(|j| Some((j, j.local()?)));
    let (Some(loader), Some((j, local))) = (tokenizer, local) else {
        return Ok(None);
    };
    // A quantisation not made yet counts tokens as its source does: the same vocabulary.
    let (path, sha256) = match &j.made_from {
        Some((source, sha256)) if !j.path.is_file() => (source.clone(), sha256.clone()),
        _ => (j.path.clone(), j.sha256.clone()),
    };
    Ok(Some(loader.load(&ModelSpec::Local(LocalModel {
        name: j.name().to_string(),
        path,
        sha256,
        gpu_layers: Some(0),
        context_size: local.context_size,
        threads: Some(1),
        parallel: 1,
        share_prefix: false,
    }))?))
}

/// What the trials' own calls come to.
struct Counted {
    n_calls: usize,
    n_verdicts: usize,
    prompt_tokens: f64,
    /// Exact verdicts: trials showing the same prompts share their calls; the trials each
    /// pass serves, by the prompts' key.
    passes: Vec<(Prompts, usize)>,
    /// Calls per dev item of each trial that makes its own.
    per_item: Vec<usize>,
}

/// Counts the calls, verdicts and prompt tokens of `trials`: an exact group's pass once,
/// a remote trial swept over loads once, plus each timed sample at a load.
fn count_calls<'t>(
    sampled: &Sampled<'_>,
    trials: &'t [TrialParams],
    timed_calls: usize,
    call_tokens: &mut HashMap<Prompts, f64>,
) -> Result<Counted, EngineError> {
    let (r, judged) = (sampled.r, sampled.judged);
    let e = &r.experiment;
    let repeats = e.sweep.repeats as usize;
    let mut counted = Counted {
        n_calls: 0,
        n_verdicts: 0,
        prompt_tokens: 0.0,
        passes: Vec::new(),
        per_item: Vec::new(),
    };
    // Remote trials at several loads: the same requests, made once.
    let mut requests_seen = std::collections::HashSet::new();
    for params in trials {
        counted.n_verdicts += judged.len() * repeats * params.order.calls().len();
        let exact = e.exact(params);
        // The sample timed at the trial's load: the timed calls, a warm-up and a tail.
        let at_load = match params.concurrency {
            Some(c) if r.parts(params)?.judge.remote().is_some() => {
                (judged.len() * params.order.calls().len()).min(timed_calls) + 2 * c as usize - 1
            }
            _ => 0,
        };
        let requests = TrialParams {
            concurrency: None,
            ..params.clone()
        };
        let shared = at_load > 0
            && !requests_seen.insert(serde_json::to_string(&requests).expect("params serialise"));
        let prompts = prompts_of(params);
        if exact {
            match counted.passes.iter_mut().find(|(p, _)| *p == prompts) {
                Some((_, served)) => {
                    *served += 1;
                    continue;
                }
                None => counted.passes.push((prompts, 1)),
            }
        }
        let calls_per_item = if exact { 1 } else { repeats }
            * params.order.calls().len()
            * r.asked_apart(params).len();
        if !shared {
            counted.per_item.push(calls_per_item);
        }
        let n = if shared {
            0
        } else {
            judged.len() * calls_per_item
        } + at_load;
        counted.n_calls += n;
        counted.prompt_tokens += sampled.tokens(params, call_tokens)? * n as f64;
    }
    Ok(counted)
}

/// The calls timed alone: one sample per request shape of the local trials, and a warm-up
/// per local judge; with the prompt tokens they decode and the rows they store.
fn timed_phase<'t>(
    sampled: &Sampled<'_>,
    trials: &'t [TrialParams],
    timed_calls: usize,
    call_tokens: &mut HashMap<Prompts, f64>,
) -> Result<(TimingPlan, f64, usize), EngineError> {
    let judged = sampled.judged;
    let shapes = timing_shapes(sampled.r, trials)?;
    let sample_calls = |p: &TrialParams| (judged.len() * p.order.calls().len()).min(timed_calls);
    // A checklist's timed verdict is a call per criterion.
    let per_verdict = |p: &TrialParams| sampled.r.asked_apart(p).len();
    let mut timing_tokens = 0.0;
    let mut timed_rows = 0;
    let mut timed_judges = std::collections::HashSet::new();
    for shape in &shapes {
        let calls = sample_calls(shape[0]);
        let warmup = usize::from(calls > 0 && timed_judges.insert(&shape[0].judge));
        timing_tokens += sampled.tokens(shape[0], call_tokens)?
            * ((calls + warmup) * per_verdict(shape[0])) as f64;
        timed_rows += calls * shape.len();
    }
    let timing = TimingPlan {
        n_shapes: shapes.iter().filter(|s| sample_calls(s[0]) > 0).count(),
        n_trials: shapes.iter().map(Vec::len).sum(),
        n_calls: shapes.iter().map(|s| sample_calls(s[0])).sum::<usize>() + timed_judges.len(),
        est_seconds: None,
    };
    Ok((timing, timing_tokens, timed_rows))
}

/// A race's rounds, and its floor against the full grid: every trial to the first deciding
/// round, then the cheapest alone; none for a grid.
fn race_plan(e: &Experiment, n_judged: usize, per_item: &[usize]) -> Option<RacePlan> {
    e.selection.is_race().then(|| {
        let rounds: Vec<race::Round> = race::rounds(n_judged, &e.selection).collect();
        let first_decision = rounds
            .iter()
            .find(|r| r.decides)
            .map_or(n_judged, |r| r.n_items);
        let cheapest = per_item.iter().copied().min().unwrap_or(0);
        RacePlan {
            n_rounds: rounds.len() as u32,
            first_decision,
            min_calls: per_item.iter().sum::<usize>() * first_decision
                + cheapest * (n_judged - first_decision),
        }
    })
}

/// What makes two trials' prompts the same: their values on the axes that change the
/// prompt (`sweep::same_prompts`'s).
type Prompts = Vec<String>;

fn prompts_of(p: &TrialParams) -> Prompts {
    judgelab_core::sweep::Axis::ALL
        .into_iter()
        .filter(|a| a.info().changes_prompt)
        .map(|a| a.text(p))
        .collect()
}

/// The local trials in groups whose timed requests are the same
/// (`sweep::same_request_shape`), as the run times them.
fn timing_shapes<'t>(
    r: &Resolved,
    trials: &'t [TrialParams],
) -> Result<Vec<Vec<&'t TrialParams>>, EngineError> {
    let mut shapes: Vec<Vec<&TrialParams>> = Vec::new();
    for t in trials {
        if r.parts(t)?.judge.local().is_none() {
            continue;
        }
        match shapes.iter_mut().find(|s| same_request_shape(s[0], t)) {
            Some(shape) => shape.push(t),
            None => shapes.push(vec![t]),
        }
    }
    Ok(shapes)
}

/// Renders a trial's prompts on a sample of the judged items to count their tokens.
struct Sampled<'a> {
    r: &'a Resolved,
    judged: &'a [&'a Item],
    pool: &'a [usize],
    /// The first local judge, to count tokens; none: about four characters a token.
    judge: Option<&'a dyn Judge>,
}

impl Sampled<'_> {
    /// The mean prompt tokens of one of the trial's calls, once per distinct prompts.
    fn tokens(
        &self,
        params: &TrialParams,
        seen: &mut HashMap<Prompts, f64>,
    ) -> Result<f64, EngineError> {
        let key = prompts_of(params);
        if let Some(&tokens) = seen.get(&key) {
            return Ok(tokens);
        }
        let (r, e, items) = (self.r, &self.r.experiment, &self.r.dataset.items);
        // Lengths are not counted here: the examples as if every one fits (a card's, as
        // it holds them).
        let examples: Vec<&Item> = match e.card_definition() {
            Some(_) => r.card_examples.iter().collect(),
            None => split::examples(
                items,
                self.pool,
                params.few_shot as usize,
                None,
                params.few_shot_set,
                e.sweep.seed,
                &|_| 0,
            )
            .into_iter()
            .map(|i| &items[i])
            .collect(),
        };
        let input = PromptInput {
            task: r.dataset.task,
            output: r.output,
            allow_tie: r.allow_tie(),
            template: r.parts(params)?.template,
            examples: &examples,
            rubric: Asking::of(params.style, &r.rubric),
        };
        let sample: Vec<&Item> = self.judged.iter().copied().take(SAMPLE).collect();
        let mut total = 0.0;
        for item in &sample {
            // A summary is no longer than the budget either: its prompt, cut head and
            // tail, is as long.
            let cut = inputs::shown_by(params, item, self.judge, None)?;
            let messages = input.render(cut.text(), false)?;
            total += match self.judge {
                Some(j) => j.count_tokens(&messages).map_err(EngineError::Judge)? as f64,
                None => {
                    let chars: usize = messages.iter().map(|m| m.content.len()).sum();
                    chars as f64 / judgelab_core::cut::CHARS_PER_TOKEN as f64
                }
            };
        }
        let tokens = total / sample.len().max(1) as f64;
        seen.insert(key, tokens);
        Ok(tokens)
    }
}

/// How many of the trials reproduce as `how`.
fn reproducing(e: &Experiment, trials: &[TrialParams], how: Reproduces) -> usize {
    trials.iter().filter(|t| e.reproduces(t) == how).count()
}
