//! `judgelab load`: a concurrency ramp against one judge configuration, a trial of a stored
//! experiment. Its requests are the trial's own calls (their prompts, sampling and seeds),
//! in a seeded order and repeated as needed. Each level (requests in flight) first sends a
//! warm-up that its figures leave out (the first level's is the cold start), then a fixed
//! number of timed requests; `core::load` turns what they took into the level's figures and
//! finds the knee. The ramp and every call are stored (`load_ramps`, `load_levels`,
//! `load_calls`).
//!
//! No request may be answered from a prompt cache, or a level measures cache hits, not
//! what distinct traffic costs. A remote judge's server has seen every prompt of the trial
//! (the sweep sent them), so each ramp request goes out `uncached` (a llama.cpp server is
//! asked not to reuse its cache; one that cannot be asked, llama-cpp-python or vLLM, may
//! still answer from it). A local judge is loaded afresh for each level: a prompt's first
//! sight in the level goes out as it is, and only where a level sends more requests than
//! the trial has calls is a repeat sent uncached, decoded whole. An uncached request reuses no
//! shared prefix either, which distinct traffic would: its TTFT is its whole prompt's
//! prefill. The stored ramp says how many distinct prompts it drew from. `prompt_cache`
//! (`judgelab load --prompt-cache`) sends every request as it is instead.
//!
//! Requests in flight: a remote judge gets `concurrency = level`, a closed loop in which a
//! request goes out as soon as one returns; a local judge decodes `level` sequences
//! together (`parallel = level`), each chunk of `level` requests after the one before.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use judgelab_core::judge::CallError;
use judgelab_core::load::{LevelRun, LoadRamp, StoredRamp};
use judgelab_core::metrics::{BootstrapSpec, TimedRequest};
use judgelab_core::rng::{mix, SplitMix64};
use judgelab_core::{Constraint, Judge, JudgeRequest, JudgeResponse, Sampling};
use judgelab_store::Store;

use crate::judges::{JudgeLoader, LocalModels, ModelSpec};
use crate::prompt::verdict_prompt;
use crate::resolve::{resolve_stored, Trial};
use crate::summary::summarize;
use crate::EngineError;

/// What to ramp.
#[derive(Clone)]
pub struct LoadOptions {
    /// The trial, by its store id (`judgelab show` lists them).
    pub trial_id: i64,
    /// Requests in flight, one level each, e.g. 1, 2, 4, 8.
    pub levels: Vec<u32>,
    /// Timed requests per level.
    pub requests: usize,
    /// Warm-up requests before each level's timed ones.
    pub warmup: usize,
    /// A bound on p99 TTFT that the knee must keep.
    pub slo_ms: Option<f64>,
    /// Let a prompt cache answer what it holds (the sweep's traffic as the server saw
    /// it); by default no request is answered from one.
    pub prompt_cache: bool,
    /// CPU threads for a local model; default: all cores.
    pub threads: Option<usize>,
    /// Where the judge comes from; default: [`LocalModels`].
    pub judges: Option<Arc<dyn JudgeLoader>>,
    pub cancel: Arc<AtomicBool>,
}

impl LoadOptions {
    /// What is wrong with the options, as a user reads it.
    fn check(&self) -> Result<(), String> {
        if self.levels.is_empty() || self.levels.contains(&0) {
            return Err(format!(
                "--concurrency: levels must be 1 or more, got {:?}",
                self.levels
            ));
        }
        if self.requests == 0 {
            return Err("--requests must be 1 or more".into());
        }
        Ok(())
    }
}

/// What a ramp reports while it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadEvent {
    /// A level starts: its judge is loaded and warmed up.
    Level { concurrency: u32, requests: usize },
    /// One of its timed requests returned.
    Request { concurrency: u32, done: usize },
}

/// Runs the ramp of `options` against a trial of the stored experiment `experiment`.
pub async fn load_ramp(
    store: &Store,
    experiment: &str,
    options: LoadOptions,
    on_event: &mut (dyn FnMut(LoadEvent) + Send),
) -> Result<StoredRamp, EngineError> {
    let invalid = |message: String| EngineError::Invalid {
        path: experiment.to_string(),
        message,
    };
    options.check().map_err(invalid)?;
    let no_ci = BootstrapSpec {
        resamples: 0,
        ..BootstrapSpec::default()
    };
    let summary = summarize(store, experiment, &no_ci).await?;
    // A ramp is a run of its experiment: requests of a run going on would share its load.
    let _lock = store.lock_run(experiment)?;
    let trial = summary.trial(options.trial_id)?;
    let row = store
        .experiment_by_name(experiment)
        .await?
        .ok_or_else(|| EngineError::UnknownExperiment(experiment.to_string()))?;
    // The trial's judge and model file as its run resolved them.
    let r = resolve_stored(store, &row).await?;
    let trials = r.trials(store.trials(row.id).await?)?;
    let resolved = trials
        .iter()
        .find(|t| t.id == trial.id)
        .ok_or_else(|| invalid(format!("trial {} is not stored", trial.id)))?;
    let p = &trial.params;
    let loader: Arc<dyn JudgeLoader> = options
        .judges
        .clone()
        .unwrap_or_else(|| Arc::new(LocalModels));
    // A local trial with an input budget cut its items in its model's tokens.
    let tokenizer = match p.input_max_tokens.is_some() && resolved.judge.remote().is_none() {
        true => Some(load(&loader, level_spec(resolved, &summary, &options, 1)).await?),
        false => None,
    };
    let prompts = ramp_prompts(store, &summary, trial, tokenizer.as_deref()).await?;
    drop(tokenizer);
    let requests = Requests::of(&summary, p, &prompts, options.prompt_cache);
    let mut runs = Vec::new();
    let mut next = 0;
    for &concurrency in &options.levels {
        on_event(LoadEvent::Level {
            concurrency,
            requests: options.requests,
        });
        let model = load(
            &loader,
            level_spec(resolved, &summary, &options, concurrency),
        )
        .await?;
        runs.push(
            level(
                &model,
                &requests,
                &options,
                concurrency,
                &mut next,
                on_event,
            )
            .await?,
        );
        if options.cancel.load(std::sync::atomic::Ordering::SeqCst) {
            break;
        }
    }
    save(store, trial.id, &options, &runs).await
}

/// The judge `spec` names, loaded off the runtime's threads.
async fn load(
    loader: &Arc<dyn JudgeLoader>,
    spec: ModelSpec,
) -> Result<Arc<dyn Judge>, EngineError> {
    let loader = Arc::clone(loader);
    tokio::task::spawn_blocking(move || loader.load(&spec))
        .await
        .map_err(|e| EngineError::Judge(format!("loading panicked: {e}")))?
}

/// Stores the levels run against trial `trial_id` as a ramp, and reads them as one.
async fn save(
    store: &Store,
    trial_id: i64,
    options: &LoadOptions,
    runs: &[LevelRun],
) -> Result<StoredRamp, EngineError> {
    let ramp = LoadRamp::new(runs, options.slo_ms, &BootstrapSpec::default());
    let (id, created_at) = store
        .save_load_ramp(
            trial_id,
            options.requests,
            options.warmup,
            options.slo_ms,
            runs,
        )
        .await?;
    Ok(StoredRamp {
        id,
        trial_id,
        created_at,
        requests: options.requests,
        ramp,
    })
}

/// How a ramp's requests are made: its prompts, cycled through by key, at the trial's
/// sampling.
struct Requests<'a> {
    prompts: &'a [Prompt],
    grammar: Option<String>,
    /// A remote ramp's requests all go out uncached (unless `prompt_cache`).
    uncached_all: bool,
    prompt_cache: bool,
    params: &'a judgelab_core::TrialParams,
}

impl<'a> Requests<'a> {
    /// A ramp's requests of `params` over `prompts`. No request may be answered from a
    /// prompt cache (unless `prompt_cache`): a server's holds every prompt the sweep sent,
    /// so a remote ramp's requests all go out uncached; a local judge is loaded afresh, so
    /// its first sight of each prompt goes out as it is (sharing a prefix with the others,
    /// as distinct traffic does) and only a repeat uncached.
    fn of(
        summary: &judgelab_core::results::ExperimentSummary,
        params: &'a judgelab_core::TrialParams,
        prompts: &'a [Prompt],
        prompt_cache: bool,
    ) -> Requests<'a> {
        let task = summary.dataset.task;
        let output = summary
            .experiment
            .parsed
            .judge
            .output
            .unwrap_or(judgelab_core::OutputKind::default_for(task));
        let grammar = (params.constraint == Constraint::Grammar).then(|| {
            judgelab_core::verdict::grammar(
                output,
                task,
                summary.experiment.parsed.allow_tie(&summary.dataset),
            )
        });
        let remote = summary
            .experiment
            .parsed
            .judge_named(&params.judge)
            .is_some_and(|j| j.remote().is_some());
        Requests {
            prompts,
            grammar,
            uncached_all: remote && !prompt_cache,
            prompt_cache,
            params,
        }
    }

    /// The request of `key`, in the level that started at `level_start`: a local judge's
    /// cache holds only what its level sent, so only a repeat within the level goes out
    /// uncached.
    fn request(&self, key: usize, level_start: usize) -> JudgeRequest {
        let (_, _, seed, messages) = &self.prompts[key % self.prompts.len()];
        let p = self.params;
        JudgeRequest {
            grammar: self.grammar.clone(),
            uncached: self.uncached_all
                || (!self.prompt_cache && key - level_start >= self.prompts.len()),
            ..JudgeRequest::new(
                key,
                messages.clone(),
                Sampling {
                    temperature: p.temperature,
                    top_p: p.top_p,
                    max_tokens: p.max_tokens,
                    seed: *seed,
                },
            )
        }
    }
}

/// One level of the ramp on `model`: its warm-up, then its timed requests, keys from
/// `next` on.
async fn level(
    model: &Arc<dyn judgelab_core::Judge>,
    requests: &Requests<'_>,
    options: &LoadOptions,
    concurrency: u32,
    next: &mut usize,
    on_event: &mut (dyn FnMut(LoadEvent) + Send),
) -> Result<LevelRun, EngineError> {
    let mut calls = Vec::new();
    let level_start = *next;
    let warm: Vec<JudgeRequest> = (*next..*next + options.warmup)
        .map(|key| requests.request(key, level_start))
        .collect();
    *next += options.warmup;
    let (warmed, _) = send(model, warm, &options.cancel, &mut |_| {}).await?;
    calls.extend(warmed.into_iter().map(|r| call(requests.prompts, r, true)));
    let timed: Vec<JudgeRequest> = (*next..*next + options.requests)
        .map(|key| requests.request(key, level_start))
        .collect();
    *next += options.requests;
    let mut done = 0;
    let (answered, wall_s) = send(model, timed, &options.cancel, &mut |_| {
        done += 1;
        on_event(LoadEvent::Request { concurrency, done });
    })
    .await?;
    calls.extend(
        answered
            .into_iter()
            .map(|r| call(requests.prompts, r, false)),
    );
    Ok(LevelRun {
        concurrency,
        wall_s,
        calls,
    })
}

/// The requests of a ramp: each of the trial's calls of the first repeat, with its
/// messages rendered again, in a seeded order, so that two ramps of the same trial send
/// the same requests.
async fn ramp_prompts(
    store: &Store,
    summary: &judgelab_core::results::ExperimentSummary,
    trial: &judgelab_core::results::TrialSummary,
    tokenizer: Option<&dyn Judge>,
) -> Result<Vec<Prompt>, EngineError> {
    let mut calls: Vec<_> = trial.verdicts.iter().filter(|v| v.repeat == 0).collect();
    if calls.is_empty() {
        return Err(EngineError::Invalid {
            path: summary.experiment.name.clone(),
            message: format!(
                "trial {} has no verdicts yet: run the experiment first",
                trial.id
            ),
        });
    }
    // A seeded order, so that two ramps of the same trial send the same requests.
    let mut rng = SplitMix64::new(mix(&[
        summary.experiment.parsed.sweep.seed,
        judgelab_core::hash::stable_u64("load"),
    ]));
    for i in (1..calls.len()).rev() {
        calls.swap(i, rng.below(i as u64 + 1) as usize);
    }
    let mut prompts = Vec::with_capacity(calls.len());
    for v in &calls {
        let messages = verdict_prompt(store, summary, (trial, v), tokenizer)
            .await?
            .messages;
        prompts.push((v.item_id.clone(), v.swapped, v.seed, messages));
    }
    Ok(prompts)
}

/// The judge of one level: the trial's, with `concurrency` requests in flight (a remote
/// judge's `concurrency`, a local one's `parallel`).
fn level_spec(
    trial: &Trial<'_>,
    summary: &judgelab_core::results::ExperimentSummary,
    options: &LoadOptions,
    concurrency: u32,
) -> ModelSpec {
    let mut spec = ModelSpec::of(
        &trial.judge.judge,
        Path::new(&trial.model_path),
        trial.model_sha256.as_deref().unwrap_or(""),
        summary.dataset.task,
        summary.experiment.parsed.allow_tie(&summary.dataset),
        options.threads,
        false,
    );
    match &mut spec {
        ModelSpec::Local(local) => local.parallel = concurrency as usize,
        ModelSpec::Remote(remote) => remote.judge.endpoint.calls.concurrency = concurrency as usize,
    }
    spec
}

/// A ramp's request: its item, answer order, seed and messages.
type Prompt = (String, bool, u32, Vec<judgelab_core::Message>);

/// Sends `requests` as one batch on a worker thread, calling `on_response` as each returns;
/// the responses, and the wall time from the first sent to the last returned.
async fn send(
    judge: &Arc<dyn judgelab_core::Judge>,
    requests: Vec<JudgeRequest>,
    cancel: &Arc<AtomicBool>,
    on_response: &mut (dyn FnMut(&JudgeResponse) + Send),
) -> Result<(Vec<JudgeResponse>, f64), EngineError> {
    let keys: Vec<usize> = requests.iter().map(|r| r.key).collect();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let (judge, cancel) = (Arc::clone(judge), Arc::clone(cancel));
    let worker = tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        judge.judge_batch(requests, &cancel, &mut |r| {
            let _ = tx.send(r);
        });
        start.elapsed().as_secs_f64()
    });
    let mut responses = Vec::new();
    while let Some(r) = rx.recv().await {
        on_response(&r);
        responses.push(r);
    }
    let wall_s = worker
        .await
        .map_err(|e| EngineError::Judge(format!("the judge thread panicked: {e}")))?;
    // A request the judge left unanswered is a failed one, not one that was never sent.
    let answered: std::collections::HashSet<usize> = responses.iter().map(|r| r.key).collect();
    for key in keys.into_iter().filter(|k| !answered.contains(k)) {
        responses.push(JudgeResponse {
            key,
            result: Err(CallError::untried(
                "the judge returned no response for this request",
            )),
        });
    }
    Ok((responses, wall_s))
}

/// A response as the ramp stores it.
fn call(prompts: &[Prompt], r: JudgeResponse, warmup: bool) -> TimedRequest {
    let (item_id, swapped, _, _) = &prompts[r.key % prompts.len()];
    TimedRequest::new(item_id, *swapped, warmup, Some(r.result))
}
