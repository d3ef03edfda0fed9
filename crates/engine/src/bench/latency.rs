//! Is a local trial's latency at concurrency 1 what one request of it costs? `judgelab bench
//! --latency FILE` runs the experiment into a scratch database, its calls timed alone as
//! every run times them, then decodes the same prompts with the plain llama.cpp loop of
//! `judgelab_llama::bench` (whole prompt, cleared cache, one sequence), in the same
//! process. Per trial: the timed calls' mean latency and TTFT against the loop's mean
//! decode of those prompts, and their ratio.

use std::path::Path;

use judgelab_core::metrics::BootstrapSpec;
use judgelab_store::Store;
use serde::Serialize;

use crate::prompt::verdict_prompt;
use crate::run::{run_experiment, RunOptions};
use crate::summary::summarize;
use crate::EngineError;

/// One local trial's timed calls against the plain loop.
#[derive(Debug, Clone, Serialize)]
pub struct TrialLatency {
    pub trial_id: i64,
    pub few_shot: u32,
    pub temperature: f64,
    /// Calls timed alone.
    pub n: usize,
    pub prompt_tokens: f64,
    /// Means over the timed calls.
    pub latency_ms: f64,
    pub ttft_ms: f64,
    /// The plain loop's mean decode of the same prompts.
    pub plain_ms: f64,
    /// `latency_ms / plain_ms`.
    pub ratio: f64,
}

/// Runs the experiment at `file` into `store` with `timed_calls` calls of each trial timed
/// alone, then the plain loop over the same prompts.
pub async fn latency(
    store: &Store,
    file: &Path,
    timed_calls: usize,
    threads: Option<usize>,
) -> Result<Vec<TrialLatency>, EngineError> {
    let options = RunOptions {
        timed_calls,
        threads,
        ..RunOptions::default()
    };
    let run = run_experiment(store, file, options, &mut |_| {}).await?;
    let name = run.experiment;
    let summary = summarize(store, &name, &BootstrapSpec::default()).await?;
    let row = store
        .experiment_by_name(&name)
        .await?
        .ok_or_else(|| EngineError::UnknownExperiment(name.clone()))?;
    let rows = store.trials(row.id).await?;
    let mut out = Vec::new();
    for (trial, stored) in summary.trials.iter().zip(&rows) {
        if stored.model_sha256.is_none() {
            continue; // remote: its calls are timed as they are made
        }
        let timed: Vec<_> = store
            .timed_calls(trial.id)
            .await?
            .into_iter()
            .map(|t| t.request)
            .filter(|t| t.timed().is_some())
            .collect();
        let mut prompts = Vec::new();
        for t in &timed {
            let verdict = trial
                .verdicts
                .iter()
                .find(|v| v.item_id == t.item_id && v.swapped == t.swapped && v.repeat == 0)
                .ok_or_else(|| {
                    EngineError::Judge(format!("no verdict for timed call {}", t.item_id))
                })?;
            prompts.push(
                verdict_prompt(store, &summary, (trial, verdict), None)
                    .await?
                    .messages,
            );
        }
        if prompts.is_empty() {
            continue;
        }
        let path = stored.model_path.clone();
        let plain = tokio::task::spawn_blocking(move || {
            judgelab_llama::bench::plain_prefill(Path::new(&path), &prompts, threads)
        })
        .await
        .map_err(|e| EngineError::Judge(format!("the plain loop panicked: {e}")))?
        .map_err(EngineError::Judge)?;
        let n = timed.len();
        let mean = |f: &dyn Fn(&judgelab_core::metrics::TimedRequest) -> f64| {
            timed.iter().map(f).sum::<f64>() / n as f64
        };
        let latency_ms = mean(&|t| t.latency_ms.unwrap_or(0.0));
        let plain_ms = plain.seconds * 1000.0 / n as f64;
        out.push(TrialLatency {
            trial_id: trial.id,
            few_shot: trial.params.few_shot,
            temperature: trial.params.temperature,
            n,
            prompt_tokens: mean(&|t| f64::from(t.prompt_tokens)),
            latency_ms,
            ttft_ms: mean(&|t| t.ttft_ms.unwrap_or(0.0)),
            plain_ms,
            ratio: latency_ms / plain_ms,
        });
    }
    Ok(out)
}
