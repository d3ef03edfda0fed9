//! Timing calls alone. A local judge batches a sweep's calls, so the time a batched call
//! took is its batch's, not its configuration's. Once a run has judged what was missing,
//! a seeded sample of each local trial's calls is made again, one request at a time with
//! nothing of an earlier call reused (`JudgeRequest::uncached`): the trial's latency and TTFT
//! figures are those of one request at concurrency 1 (`core::metrics::latency`). The
//! sample is the same items for every trial, so that trials compare call for call. Each
//! judge's first timed call of a run is its warm-up, stored apart and left out. What was
//! timed is stored as it arrives; a resumed run times only what is missing. Trials whose
//! timed requests are the same (the same prompt, max_tokens and constraint, and an output
//! length that sampling cannot change: a temperature × top_p grid of one-token verdicts)
//! share one sample, timed once and stored for each. A checklist trial's verdict is a call
//! per criterion: it is timed as those calls in one batch of their own, which share the
//! item's prefix and nothing an earlier batch left. Remote judges' calls are requests of
//! their own and are timed as they are made.
//!
//! Where the sweep sets a remote trial's load (`concurrency`), the trial shares its
//! verdicts with the other levels, and its figures come from the same sample made again
//! with that many requests in flight ([`time_at_load`]): as many calls from further along
//! the sample before it (a warm-up) and one fewer after it keep the load up from the
//! first timed request to the last, and are stored as warm-ups. Each asks the server not
//! to answer from a cached prompt where it can be asked (`JudgeRequest::uncached`): the
//! sweep sent these prompts already.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use judgelab_core::judge::Judge;
use judgelab_core::metrics::TimedRequest;
use judgelab_core::results::TimedCall;
use judgelab_core::rng::{mix, SplitMix64};
use judgelab_core::sweep::same_request_shape;
use judgelab_core::JudgeResponse;
use judgelab_store::ExperimentRow;

use super::group::Run;
use super::interface::RunEvent;
use super::loaded::Judges;
use crate::calls::{prepare, Call, Group};
use crate::resolve::Trial;
use crate::EngineError;

/// Times what each local trial's sample is missing; returns how many calls it timed.
/// Trials whose timed requests are the same ([`shapes`]) share one sample: a call is
/// timed once and recorded for each of them, and one already timed for one of them is
/// copied to the others (a run stopped between the two).
pub(super) async fn time_alone(
    run: &Run<'_>,
    judges: &mut Judges<'_>,
    row: &ExperimentRow,
    trials: &[Trial<'_>],
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<usize, EngineError> {
    let n = run.options.timed_calls;
    if n == 0 {
        return Ok(0);
    }
    let local: Vec<&Trial> = trials
        .iter()
        .filter(|t| t.judge.local().is_some())
        .collect();
    let mut todo: Vec<(Vec<&Trial>, Vec<Call<'_>>)> = Vec::new();
    for shape in shapes(&local) {
        let mut stored: Vec<HashMap<(String, bool), TimedCall>> = Vec::new();
        for trial in &shape {
            stored.push(timed_at(run, trial, 1).await?);
        }
        let mut missing = Vec::new();
        for call in sample(run, row, shape[0], n) {
            let key = (call.item.id.to_string(), call.swapped);
            match stored.iter().find_map(|s| s.get(&key)) {
                // Timed for a trial of the shape already: the others take the same.
                Some(timed) => {
                    for (trial, s) in shape.iter().zip(&stored) {
                        if !s.contains_key(&key) {
                            let copy = TimedCall {
                                trial_id: trial.id,
                                ..timed.clone()
                            };
                            run.store.record_timed_call(&copy).await?;
                        }
                    }
                }
                None => missing.push(call),
            }
        }
        if !missing.is_empty() {
            todo.push((shape, missing));
        }
    }
    let total: usize = todo.iter().map(|(_, calls)| calls.len()).sum();
    if total == 0 {
        return Ok(0);
    }
    on_event(RunEvent::Timed {
        done: 0,
        total,
        concurrency: None,
    });
    let mut warmed: HashSet<&str> = HashSet::new();
    let mut done = 0;
    for (shape, calls) in todo {
        let judge = judges.get(shape[0].judge, on_event).await?;
        if warmed.insert(shape[0].params.judge.as_str()) {
            time_one(run, &judge, &shape[..1], &calls[0], true).await?;
        }
        for call in &calls {
            if run.options.cancel.load(Ordering::SeqCst) {
                return Ok(done);
            }
            time_one(run, &judge, &shape, call, false).await?;
            done += 1;
            on_event(RunEvent::Timed {
                done,
                total,
                concurrency: None,
            });
        }
    }
    Ok(done)
}

/// The trials, in groups whose timed requests are the same: the same judge, template
/// and examples, and [`same_request_shape`] (the prompt, max_tokens and constraint, and
/// an output whose length sampling cannot change), in trial order.
fn shapes<'t, 'r>(trials: &[&'t Trial<'r>]) -> Vec<Vec<&'t Trial<'r>>> {
    let mut shapes: Vec<Vec<&Trial>> = Vec::new();
    for &trial in trials {
        let same = |o: &&Trial| {
            same_request_shape(&o.params, &trial.params)
                && o.examples == trial.examples
                && o.template_hash == trial.template_hash
        };
        match shapes.iter_mut().find(|s| same(&s[0])) {
            Some(shape) => shape.push(trial),
            None => shapes.push(vec![trial]),
        }
    }
    shapes
}

/// Times what the sample of each remote trial whose load the sweep sets is missing, at
/// that load; returns how many timed calls it made.
pub(super) async fn time_at_load(
    run: &Run<'_>,
    judges: &mut Judges<'_>,
    row: &ExperimentRow,
    trials: &[Trial<'_>],
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<usize, EngineError> {
    let todo = at_load_missing(run, row, trials).await?;
    let total: usize = todo.iter().map(|(_, _, timed, _)| timed.len()).sum();
    if total == 0 {
        return Ok(0);
    }
    let mut done = 0;
    for (trial, level, timed, load) in todo {
        if run.options.cancel.load(Ordering::SeqCst) {
            break;
        }
        on_event(RunEvent::Timed {
            done,
            total,
            concurrency: Some(level),
        });
        let judge = judges
            .at_load(trial.judge, level as usize, on_event)
            .await?;
        // A warm-up of `level`, the timed calls, then `level - 1` more.
        let (warm, tail) = load.split_at(level as usize);
        let calls: Vec<(&Call<'_>, bool)> = warm
            .iter()
            .map(|c| (c, true))
            .chain(timed.iter().map(|c| (c, false)))
            .chain(tail.iter().map(|c| (c, true)))
            .collect();
        let mut requests = Vec::with_capacity(calls.len());
        for (key, (call, _)) in calls.iter().enumerate() {
            let mut request = request_of(run, trial, call)?;
            request.key = key;
            // Each decodes its whole prompt, as a local trial's timed calls do, where the
            // server can be asked to.
            request.uncached = true;
            requests.push(request);
        }
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<JudgeResponse>();
        let cancel = Arc::clone(&run.options.cancel);
        let worker = tokio::task::spawn_blocking(move || {
            judge.judge_batch(requests, &cancel, &mut |r| {
                let _ = tx.send(r);
            });
        });
        while let Some(response) = rx.recv().await {
            let (call, warmup) = calls[response.key];
            let timed = TimedCall {
                trial_id: trial.id,
                concurrency: level,
                request: TimedRequest::new(
                    call.item.id,
                    call.swapped,
                    warmup,
                    Some(response.result),
                ),
            };
            run.store.record_timed_call(&timed).await?;
            if !warmup {
                done += 1;
                on_event(RunEvent::Timed {
                    done,
                    total,
                    concurrency: Some(level),
                });
            }
        }
        worker
            .await
            .map_err(|e| EngineError::Judge(format!("the judge thread panicked: {e}")))?;
    }
    Ok(done)
}

/// What each remote trial whose load the sweep sets is missing of its timed sample: the
/// trial, its load, the calls to time, and the calls that load the endpoint around them.
#[allow(clippy::type_complexity)]
async fn at_load_missing<'a, 't, 'j>(
    run: &Run<'a>,
    row: &ExperimentRow,
    trials: &'t [Trial<'j>],
) -> Result<Vec<(&'t Trial<'j>, u32, Vec<Call<'a>>, Vec<Call<'a>>)>, EngineError> {
    let n = run.options.timed_calls;
    let mut todo = Vec::new();
    for trial in trials {
        let Some(level) = trial.params.concurrency else {
            continue;
        };
        if n == 0 || trial.judge.remote().is_none() {
            continue;
        }
        let done = timed_keys(run, trial, level).await?;
        let width = level as usize;
        // The sample, then the calls after it in the same order (round again where the
        // judged items are fewer) that load the endpoint around it.
        let around: Vec<Call<'a>> = sample(run, row, trial, usize::MAX);
        let timed: Vec<Call<'a>> = around
            .iter()
            .take(n)
            .filter(|c| !done.contains(&(c.item.id.to_string(), c.swapped)))
            .copied()
            .collect();
        if timed.is_empty() {
            continue;
        }
        let load: Vec<Call<'a>> = around
            .iter()
            .cycle()
            .skip(n.min(around.len()))
            .take(2 * width - 1)
            .copied()
            .collect();
        todo.push((trial, level, timed, load));
    }
    Ok(todo)
}

/// A trial's calls timed successfully at `level`, by (item, answer order).
async fn timed_at(
    run: &Run<'_>,
    trial: &Trial<'_>,
    level: u32,
) -> Result<HashMap<(String, bool), TimedCall>, EngineError> {
    Ok(run
        .store
        .timed_calls(trial.id)
        .await?
        .into_iter()
        .filter(|t| t.request.timed().is_some() && t.concurrency == level)
        .map(|t| ((t.request.item_id.clone(), t.request.swapped), t))
        .collect())
}

/// The (item, answer order) of a trial's calls timed successfully at `level`.
async fn timed_keys(
    run: &Run<'_>,
    trial: &Trial<'_>,
    level: u32,
) -> Result<HashSet<(String, bool)>, EngineError> {
    Ok(timed_at(run, trial, level).await?.into_keys().collect())
}

/// The request of one of a trial's calls, made on its own (not answered from the cache).
fn request_of(
    run: &Run<'_>,
    trial: &Trial<'_>,
    call: &Call<'_>,
) -> Result<judgelab_core::JudgeRequest, EngineError> {
    Ok(requests_of(run, trial, call)?.remove(0))
}

/// The requests that make one verdict of a trial: its call, or a checklist's call per
/// criterion.
fn requests_of(
    run: &Run<'_>,
    trial: &Trial<'_>,
    call: &Call<'_>,
) -> Result<Vec<judgelab_core::JudgeRequest>, EngineError> {
    let calls = run
        .r
        .asked_apart(&trial.params)
        .into_iter()
        .map(|criterion| Call { criterion, ..*call })
        .collect();
    let group = Group {
        trials: vec![(trial, calls)],
        exact: false,
    };
    let (_, mut requests) = prepare(run.r, &group, run.index)?;
    for (key, request) in requests.iter_mut().enumerate() {
        request.key = key;
        request.uncached = true;
    }
    Ok(requests)
}

/// The first `n` calls of a trial in the sample's order: the judged items in an order
/// seeded by the experiment's seed (the same for every trial), each with its answer
/// orders, repeat 0.
fn sample<'a>(run: &Run<'a>, row: &ExperimentRow, trial: &Trial<'_>, n: usize) -> Vec<Call<'a>> {
    let mut items: Vec<&str> = row.judged.iter().map(String::as_str).collect();
    let seed = mix(&[
        run.r.experiment.sweep.seed,
        judgelab_core::hash::stable_u64("timed alone"),
    ]);
    let mut rng = SplitMix64::new(seed);
    for i in (1..items.len()).rev() {
        items.swap(i, rng.below(i as u64 + 1) as usize);
    }
    items
        .into_iter()
        .flat_map(|id| {
            let (item, shortened) = run.inputs.shown(&trial.params, run.index[id]);
            trial.params.order.calls().iter().map(move |&swapped| Call {
                item,
                repeat: 0,
                swapped,
                criterion: None,
                shortened,
            })
        })
        .take(n)
        .collect()
}

/// What the calls of one verdict took: a lone call's completion as it is; a checklist's
/// calls, made together in one batch, as one request from the batch's start to its last
/// token (`wall_ms`), with their tokens summed and the first token of the first call to
/// answer (timed from the batch's start; a later chunk's calls are timed from their own).
/// The first failed call fails it.
fn one_verdict(
    mut responses: Vec<JudgeResponse>,
    wall_ms: f64,
) -> Result<judgelab_core::judge::Completion, judgelab_core::judge::CallError> {
    if responses.len() == 1 {
        return responses.remove(0).result;
    }
    let mut completions = Vec::with_capacity(responses.len());
    for r in responses {
        completions.push(r.result?);
    }
    let mut whole = completions[0].clone();
    for c in &completions[1..] {
        whole.prompt_tokens += c.prompt_tokens;
        whole.completion_tokens += c.completion_tokens;
        whole.attempts = whole.attempts.max(c.attempts);
    }
    whole.latency_ms = wall_ms;
    Ok(whole)
}

/// Makes one verdict's call alone (a checklist's calls in one batch of their own) and
/// records what it took for each trial of `shape`, whose requests are the same.
async fn time_one(
    run: &Run<'_>,
    judge: &Arc<dyn Judge>,
    shape: &[&Trial<'_>],
    call: &Call<'_>,
    warmup: bool,
) -> Result<(), EngineError> {
    let requests = requests_of(run, shape[0], call)?;
    let judge = Arc::clone(judge);
    let cancel = Arc::clone(&run.options.cancel);
    let answer = tokio::task::spawn_blocking(move || {
        let n = requests.len();
        let start = std::time::Instant::now();
        let mut responses: Vec<JudgeResponse> = Vec::with_capacity(n);
        judge.judge_batch(requests, &cancel, &mut |r| responses.push(r));
        let wall_ms = start.elapsed().as_secs_f64() * 1e3;
        (responses.len() == n).then(|| one_verdict(responses, wall_ms))
    })
    .await
    .map_err(|e| EngineError::Judge(format!("the judge thread panicked: {e}")))?;
    let request = TimedRequest::new(call.item.id, call.swapped, warmup, answer);
    for trial in shape {
        let timed = TimedCall {
            trial_id: trial.id,
            concurrency: 1,
            request: request.clone(),
        };
        run.store.record_timed_call(&timed).await?;
    }
    Ok(())
}
