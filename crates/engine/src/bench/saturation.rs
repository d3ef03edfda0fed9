//! Does a sweep keep a remote server busy? `judgelab bench --saturation URL` judges a sweep
//! against an OpenAI-compatible server (two trials of LLMBar Natural, `concurrency` calls
//! in flight, into a scratch database), then ramps the first trial through levels of
//! requests in flight against the same server, in the same process (`judgelab load`'s
//! ramp). The sweep's verdicts per second, from its first call to its last verdict, are
//! set against the best level's, and against the level at the sweep's own concurrency: a
//! ratio near 1 says the engine hands the server as much as a closed loop at that load
//! would, trial after trial, with nothing idle between them.
//!
//! Both must meet the server in the same state. A server's prompt cache (llama-server
//! keeps prompts in RAM) answers a prompt it has seen far faster, and the ramp's requests
//! are the sweep's own calls; so the same sweep is first judged untimed, as experiments of
//! their own, until a pass is no faster than the one before (within 10%, at most four
//! passes): the timed sweep and the ramp then meet the server in its steady state.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use judgelab_core::load::LoadRamp;
use judgelab_store::Store;
use serde::Serialize;

use crate::load::{load_ramp, LoadOptions};
use crate::run::{run_experiment, RunEvent, RunOptions};
use crate::EngineError;

/// What to judge, and where.
#[derive(Debug, Clone)]
pub struct SaturationOptions {
    /// The LLMBar Natural file.
    pub dataset: PathBuf,
    pub items: usize,
    /// The server, up to `/v1`, and the model name it knows.
    pub base_url: String,
    pub model: String,
    /// Calls in flight during the sweep (the judge's `concurrency`).
    pub concurrency: usize,
    /// The ramp's levels and timed requests per level.
    pub levels: Vec<u32>,
    pub requests: usize,
    /// Where the sweep's experiment file is written.
    pub scratch: PathBuf,
}

/// When a sweep's work was known, when its last verdict came, and how many verdicts.
type Marks = (Option<Instant>, Option<Instant>, usize);

/// The sweep against the ramp; its JSON is `judgelab bench --saturation URL --json`.
#[derive(Debug, Clone, Serialize)]
pub struct SaturationReport {
    pub concurrency: usize,
    pub sweep_verdicts: usize,
    /// From the sweep's first call to its last verdict.
    pub sweep_s: f64,
    pub sweep_vps: f64,
    pub ramp: LoadRamp,
    /// The ramp's level with the most verdicts per second, and that rate.
    pub best_concurrency: u32,
    pub best_vps: f64,
    /// `sweep_vps / best_vps`.
    pub ratio: f64,
    /// `sweep_vps` over the ramp's level at the sweep's concurrency, where it has one.
    pub ratio_same_load: Option<f64>,
}

/// The experiment the sweep runs: two trials (top_p 1 and 0.9, both greedy, so that both
/// generate what the ramp's requests, the first trial's, generate), repeated so that the
/// sweep makes about 96 calls, one-token verdicts over the pairwise template (16 items
/// by default: more prompts than the server has slots, fewer than its prompt cache
/// holds). Which prompts a server's cache holds depends on the order of the requests, so
/// the sweep's order (item by item, in rounds, with prompt affinity) and the ramp's
/// (seeded) meet different caches; the ratio measures that as well as the scheduling.
pub fn repeats(items: usize) -> usize {
    48usize.div_ceil(items.max(1)).clamp(1, 12)
}
fn experiment_toml(name: &str, o: &SaturationOptions) -> String {
    format!(
        "name = {name:?}\ndataset = {:?}\n[judge]\nbackend = \"openai\"\nbase_url = {:?}\nmodel = {:?}\nconcurrency = {}\ntemplate = \"pairwise\"\n[sweep]\nmax_tokens = 4\ntemperature = 0.0\ntop_p = [1.0, 0.9]\nrepeats = {}\n[limits]\nitems = {}\n",
        o.dataset.display().to_string(),
        o.base_url,
        o.model,
        o.concurrency,
        repeats(o.items),
        o.items
    )
}

/// Runs the sweep, then the ramp, into a database in `options.scratch`.
pub async fn saturation(options: &SaturationOptions) -> Result<SaturationReport, EngineError> {
    let store = Store::open(&options.scratch.join("saturation.sqlite")).await?;
    let report = sweep_then_ramp(&store, options).await;
    store.close().await;
    report
}

async fn sweep_then_ramp(
    store: &Store,
    options: &SaturationOptions,
) -> Result<SaturationReport, EngineError> {
    let sweep = |name: &str| {
        let file = options.scratch.join(format!("{name}.toml"));
        let written = std::fs::write(&file, experiment_toml(name, options));
        async move {
            written.map_err(|e| EngineError::Io {
                path: file.display().to_string(),
                source: e,
            })?;
            // The clock starts as the work is known (the dataset imported, the judge made)
            // and stops at the last verdict.
            let marks: Arc<Mutex<Marks>> = Arc::default();
            let seen = Arc::clone(&marks);
            let run = run_experiment(
                store,
                &file,
                RunOptions {
                    no_cache: true,
                    timed_calls: 0,
                    ..RunOptions::default()
                },
                &mut move |event| {
                    let mut m = seen.lock().expect("never poisoned");
                    match event {
                        RunEvent::Started { .. } => m.0 = Some(Instant::now()),
                        RunEvent::Verdict { .. } => {
                            m.1 = Some(Instant::now());
                            m.2 += 1;
                        }
                        _ => {}
                    }
                },
            )
            .await?;
            let marks = *marks.lock().expect("never poisoned");
            Ok::<_, EngineError>((run, marks))
        }
    };
    let rate = |(start, end, n): Marks| match (start, end) {
        (Some(s), Some(e)) => n as f64 / e.duration_since(s).as_secs_f64().max(1e-9),
        _ => 0.0,
    };
    let mut last = 0.0;
    for pass in 1..=4 {
        let (_, marks) = sweep(&format!("saturation-warmup-{pass}")).await?;
        let now = rate(marks);
        if now <= last * 1.1 {
            break;
        }
        last = now;
    }
    let (run, marks) = sweep("saturation").await?;
    let (start, end, verdicts) = marks;
    let (Some(start), Some(end)) = (start, end) else {
        return Err(EngineError::Judge(
            "the sweep judged nothing: is the server up?".into(),
        ));
    };
    if run.n_errors > 0 {
        return Err(EngineError::Judge(format!(
            "{} of the sweep's calls failed; the throughput would not be the server's",
            run.n_errors
        )));
    }
    let sweep_s = end.duration_since(start).as_secs_f64();
    let trial_id = store
        .trials(run.experiment_id)
        .await?
        .first()
        .map(|t| t.id)
        .ok_or_else(|| EngineError::Judge("the sweep has no trial".into()))?;
    let stored = load_ramp(
        store,
        &run.experiment,
        LoadOptions {
            trial_id,
            levels: options.levels.clone(),
            requests: options.requests,
            warmup: 2,
            slo_ms: None,
            prompt_cache: false,
            threads: None,
            judges: None,
            cancel: Arc::default(),
        },
        &mut |_| {},
    )
    .await?;
    let ramp = stored.ramp;
    let best = ramp
        .levels
        .iter()
        .max_by(|a, b| a.throughput_vps.total_cmp(&b.throughput_vps))
        .ok_or_else(|| EngineError::Judge("the ramp has no level".into()))?;
    let (best_concurrency, best_vps) = (best.concurrency, best.throughput_vps);
    let sweep_vps = verdicts as f64 / sweep_s;
    Ok(SaturationReport {
        concurrency: options.concurrency,
        sweep_verdicts: verdicts,
        sweep_s,
        sweep_vps,
        best_concurrency,
        best_vps,
        ratio: sweep_vps / best_vps,
        ratio_same_load: ramp
            .levels
            .iter()
            .find(|l| l.concurrency as usize == options.concurrency)
            .map(|l| sweep_vps / l.throughput_vps),
        ramp,
    })
}
