//! Timing calls alone. A local judge batches a sweep's calls, so the time a batched call
//! took is its batch's, not its configuration's. Once a run has judged what was missing,
//! a seeded sample of each local trial's calls is made again, one request at a time with
//! nothing of an earlier call reused (`JudgeRequest::uncached`): the trial's latency and TTFT
//! figures are those of one request at concurrency 1 (`core::metrics::latency`). The
//! sample is the same items for every trial, so that trials compare call for call. Each
//! judge's first timed call of a run is its warm-up, stored apart and left out. What was
//! timed is stored as it arrives; a resumed run times only what is missing. Remote judges'
//! calls are requests of their own and are timed as they are made.
//!
//! Where the sweep sets a remote trial's load (`concurrency`), the trial shares its
//! verdicts with the other levels, and its figures come from the same sample made again
//! with that many requests in flight ([`time_at_load`]): as many calls from further along
//! the sample before it (a warm-up) and one fewer after it keep the load up from the
//! first timed request to the last, and are stored as warm-ups. Each asks the server not
//! to answer from a cached prompt where it can be asked (`JudgeRequest::uncached`): the
//! sweep sent these prompts already.

use std::collections::HashSet;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use judgelab_core::judge::Judge;
use judgelab_core::metrics::TimedRequest;
use judgelab_core::results::TimedCall;
use judgelab_core::rng::{mix, SplitMix64};
use judgelab_core::JudgeResponse;
use judgelab_store::{ExperimentRow, TrialRow};

use super::group::Run;
use super::interface::RunEvent;
use super::loaded::Judges;
use crate::calls::{prepare, Call, Group};
use crate::EngineError;

/// Times what each local trial's sample is missing; returns how many calls it timed.
pub(super) async fn time_alone(
    run: &Run<'_>,
    judges: &mut Judges<'_>,
    row: &ExperimentRow,
    trials: &[TrialRow],
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<usize, EngineError> {
    let n = run.options.timed_calls;
    let mut todo: Vec<(&TrialRow, Vec<Call<'_>>)> = Vec::new();
    for trial in trials {
        if n == 0 || run.r.judge(&trial.params.judge).local().is_none() {
            continue;
        }
        let done = timed_keys(run, trial, 1).await?;
        let missing: Vec<Call<'_>> = sample(run, row, trial, n)
            .into_iter()
            .filter(|c| !done.contains(&(c.item.id.to_string(), c.swapped)))
            .collect();
        if !missing.is_empty() {
            todo.push((trial, missing));
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
    for (trial, calls) in todo {
        let judge = judges.get(&trial.params.judge, on_event).await?;
        if warmed.insert(trial.params.judge.as_str()) {
            time_one(run, &judge, trial, &calls[0], true).await?;
        }
        for call in &calls {
            if run.options.cancel.load(Ordering::SeqCst) {
                return Ok(done);
            }
            time_one(run, &judge, trial, call, false).await?;
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

/// Times what the sample of each remote trial whose load the sweep sets is missing, at
/// that load; returns how many timed calls it made.
pub(super) async fn time_at_load(
    run: &Run<'_>,
    judges: &mut Judges<'_>,
    row: &ExperimentRow,
    trials: &[TrialRow],
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<usize, EngineError> {
    let n = run.options.timed_calls;
    let mut todo: Vec<(&TrialRow, u32, Vec<Call<'_>>, Vec<Call<'_>>)> = Vec::new();
    for trial in trials {
        let Some(level) = trial.params.concurrency else {
            continue;
        };
        if n == 0 || run.r.judge(&trial.params.judge).remote().is_none() {
            continue;
        }
        let done = timed_keys(run, trial, level).await?;
        let width = level as usize;
        // The sample, then the calls after it in the same order (round again where the
        // judged items are fewer) that load the endpoint around it.
        let around: Vec<Call<'_>> = sample(run, row, trial, usize::MAX);
        let timed: Vec<Call<'_>> = around
            .iter()
            .take(n)
            .filter(|c| !done.contains(&(c.item.id.to_string(), c.swapped)))
            .copied()
            .collect();
        if timed.is_empty() {
            continue;
        }
        let load: Vec<Call<'_>> = around
            .iter()
            .cycle()
            .skip(n.min(around.len()))
            .take(2 * width - 1)
            .copied()
            .collect();
        todo.push((trial, level, timed, load));
    }
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
            .at_load(&trial.params.judge, level as usize, on_event)
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

/// The (item, answer order) of a trial's calls timed successfully at `level`.
async fn timed_keys(
    run: &Run<'_>,
    trial: &TrialRow,
    level: u32,
) -> Result<HashSet<(String, bool)>, EngineError> {
    Ok(run
        .store
        .timed_calls(trial.id)
        .await?
        .into_iter()
        .filter(|t| t.request.timed().is_some() && t.concurrency == level)
        .map(|t| (t.request.item_id, t.request.swapped))
        .collect())
}

/// The request of one of a trial's calls, made on its own (not answered from the cache).
fn request_of(
    run: &Run<'_>,
    trial: &TrialRow,
    call: &Call<'_>,
) -> Result<judgelab_core::JudgeRequest, EngineError> {
    let group = Group {
        trials: vec![(trial, vec![*call])],
        exact: false,
    };
    let (_, mut requests) = prepare(run.r, &group, run.index)?;
    Ok(requests.remove(0))
}

/// The first `n` calls of a trial in the sample's order: the judged items in an order
/// seeded by the experiment's seed (the same for every trial), each with its answer
/// orders, repeat 0.
fn sample<'a>(run: &Run<'a>, row: &ExperimentRow, trial: &TrialRow, n: usize) -> Vec<Call<'a>> {
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
            trial.params.order.calls().iter().map(move |&swapped| Call {
                item: run.index[id].text(),
                repeat: 0,
                swapped,
            })
        })
        .take(n)
        .collect()
}

/// Makes one call alone and records what it took.
async fn time_one(
    run: &Run<'_>,
    judge: &Arc<dyn Judge>,
    trial: &TrialRow,
    call: &Call<'_>,
    warmup: bool,
) -> Result<(), EngineError> {
    let mut request = request_of(run, trial, call)?;
    request.uncached = true;
    let judge = Arc::clone(judge);
    let cancel = Arc::clone(&run.options.cancel);
    let response = tokio::task::spawn_blocking(move || {
        let mut response: Option<JudgeResponse> = None;
        judge.judge_batch(vec![request], &cancel, &mut |r| response = Some(r));
        response
    })
    .await
    .map_err(|e| EngineError::Judge(format!("the judge thread panicked: {e}")))?;
    let timed = TimedCall {
        trial_id: trial.id,
        concurrency: 1,
        request: TimedRequest::new(
            call.item.id,
            call.swapped,
            warmup,
            response.map(|r| r.result),
        ),
    };
    run.store.record_timed_call(&timed).await?;
    Ok(())
}
