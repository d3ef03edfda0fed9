//! Experiments and runs: plan an experiment file, run it in its own thread with progress
//! over a channel, stop it (every verdict so far is stored; running it again resumes).

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use judgelab_core::Experiment;
use judgelab_engine::{LocalModels, RunEvent, RunOptions};
use judgelab_store::Store;
use tauri::ipc::Channel;
use tauri::State;

use crate::dto::{ExperimentListing, Plan, RacePlan, RunUpdate};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// Calls of each local trial timed alone after judging: `JUDGELAB_TIMED_CALLS` where it is
/// a number, as for the CLI, else the engine's default.
fn timed_calls() -> usize {
    std::env::var("JUDGELAB_TIMED_CALLS")
        .ok()
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(judgelab_engine::DEFAULT_TIMED_CALLS)
}

/// Validates the experiment text and writes it to `experiments/<name>.toml`, where its
/// relative paths resolve as they would beside the database.
fn write_spec(state: &AppState, spec: &str) -> AppResult<(String, PathBuf)> {
    let experiment = Experiment::from_toml("experiment", spec)
        .map_err(|e| AppError::from(judgelab_engine::EngineError::from(e)))?;
    let name = experiment.name;
    if name.contains(['/', '\\']) || name.starts_with('.') {
        return Err(AppError::invalid(format!(
            "experiment name {name:?}: no slashes, and not starting with a dot"
        )));
    }
    let dir = state.experiments_dir();
    let path = dir.join(format!("{name}.toml"));
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(&path, spec))
        .map_err(|e| AppError::internal(format!("cannot write {}: {e}", path.display())))?;
    Ok((name, path))
}

#[tauri::command]
#[specta::specta]
pub async fn plan_experiment(state: State<'_, AppState>, spec: String) -> AppResult<Plan> {
    let (_, path) = write_spec(&state, &spec)?;
    let plan =
        judgelab_engine::plan(&state.store, &path, Some(&LocalModels), timed_calls()).await?;
    Ok(Plan {
        name: plan.experiment,
        dataset: plan.dataset,
        n_trials: plan.n_trials as u32,
        n_items: plan.n_items as u32,
        n_calls: plan.n_calls as u32,
        n_done: plan.n_done as u32,
        prompt_tokens: Some(plan.prompt_tokens),
        est_seconds: plan.est_seconds,
        conflicts: plan.conflicts,
        spec_path: path.display().to_string(),
        n_test: plan.n_test as u32,
        test_calls_per_trial: plan.test_calls_per_trial as u32,
        race: plan.race.map(|r| RacePlan {
            n_rounds: r.n_rounds,
            first_decision: r.first_decision as u32,
            min_calls: r.min_calls as u32,
        }),
        n_exact_trials: plan.n_exact_trials as u32,
        n_exact_passes: plan.n_exact_passes as u32,
        timed_calls: plan.timing.n_calls as u32,
        timing_shapes: plan.timing.n_shapes as u32,
        notes: plan
            .quantization
            .into_iter()
            .chain(plan.reference)
            .chain(plan.remote_exact)
            .chain(plan.input_budget)
            .collect(),
    })
}

#[tauri::command]
#[specta::specta]
pub async fn start_run(
    state: State<'_, AppState>,
    spec: String,
    replace: bool,
    on_event: Channel<RunUpdate>,
) -> AppResult<String> {
    let (name, path) = write_spec(&state, &spec)?;
    let cancel = Arc::new(AtomicBool::new(false));
    state.begin_run(&name, Arc::clone(&cancel))?;
    let db = state.store.path().to_path_buf();
    let options = RunOptions {
        replace,
        cancel,
        timed_calls: timed_calls(),
        ..RunOptions::default()
    };
    spawn_run(
        &state,
        &name,
        on_event,
        |error| RunUpdate::Failed { error },
        move |channel| async move { run(&db, &path, options, &channel).await },
    )?;
    Ok(name)
}

/// Runs `work` as the run of experiment `name` (registered with `begin_run` before), in a
/// thread and runtime of its own: a run or a ramp holds a model for minutes and must not
/// starve the commands the UI keeps calling meanwhile. What `work` returns, or its error
/// as `failed`, is the channel's last update.
pub(crate) fn spawn_run<U, Fut>(
    state: &AppState,
    name: &str,
    channel: Channel<U>,
    failed: fn(AppError) -> U,
    work: impl FnOnce(Channel<U>) -> Fut + Send + 'static,
) -> AppResult<()>
where
    U: tauri::ipc::IpcResponse + Send + 'static,
    Fut: std::future::Future<Output = AppResult<U>>,
{
    let thread = std::thread::Builder::new()
        .name(format!("run {name}"))
        .spawn(move || {
            let update = match tokio::runtime::Runtime::new() {
                Ok(rt) => rt.block_on(work(channel.clone())),
                Err(e) => Err(AppError::internal(format!(
                    "cannot start the run's runtime: {e}"
                ))),
            };
            let _ = channel.send(update.unwrap_or_else(failed));
        })
        .map_err(|e| AppError::internal(format!("cannot start the run's thread: {e}")))?;
    state.attach_thread(name, thread);
    Ok(())
}

async fn run(
    db: &std::path::Path,
    path: &std::path::Path,
    options: RunOptions,
    channel: &Channel<RunUpdate>,
) -> AppResult<RunUpdate> {
    let store = Store::open(db).await?;
    let mut progress = judgelab_engine::Progress::new();
    let mut last_sent = Instant::now() - Duration::from_secs(1);
    let mut on_event = |event: RunEvent| {
        progress.update(&event);
        let soon = last_sent.elapsed() < Duration::from_millis(100);
        let Some(update) = update_of(event, &progress, soon) else {
            return;
        };
        last_sent = Instant::now();
        let _ = channel.send(update);
    };
    let summary = judgelab_engine::run_experiment(&store, path, options, &mut on_event).await;
    store.close().await;
    let summary = summary?;
    Ok(RunUpdate::Finished {
        interrupted: summary.interrupted,
        judged_now: summary.judged_now as u32,
        n_errors: summary.n_errors as u32,
        model_calls: summary.model_calls as u32,
        prompt_tokens_decoded: summary.prompt_tokens_decoded.min(u64::from(u32::MAX)) as u32,
        timed_now: summary.timed_now as u32,
        timed_at_load: summary.timed_at_load as u32,
        stopped_by: summary.stopped_by,
        failures: summary
            .failures
            .into_iter()
            .map(|f| crate::dto::FailureCauseView {
                error: f.error,
                n_calls: f.n_calls as u32,
            })
            .collect(),
    })
}

/// What the app is told of a run's `event` (`progress` updated with it); none where it
/// says nothing new, or where it came `soon` after the last update and more will follow.
fn update_of(
    event: RunEvent,
    progress: &judgelab_engine::Progress,
    soon: bool,
) -> Option<RunUpdate> {
    let update = match event {
        RunEvent::Imported { .. } => return None,
        RunEvent::Loading { model, .. } => RunUpdate::Loading { model },
        // Making a quantisation of a local judge's file is a step of loading it.
        RunEvent::Quantizing { judge, level, .. } => RunUpdate::Loading {
            model: format!("{judge}, made in {level} by llama.cpp's quantiser"),
        },
        RunEvent::Quantized { .. } => return None,
        // Writing the summaries a trial shows is a step of getting its inputs ready.
        RunEvent::Summarising {
            judge,
            level,
            done,
            total,
        } => {
            if done > 0 && done < total && soon {
                return None;
            }
            RunUpdate::Loading {
                model: format!(
                    "{judge} (writing summaries of the inputs over {level} tokens: {done} of {total})"
                ),
            }
        }
        RunEvent::Started {
            experiment,
            resumed,
            ..
        } => RunUpdate::Started {
            experiment,
            resumed,
            n_trials: progress.n_trials as u32,
            total: progress.total as u32,
            done: progress.done as u32,
            verdicts: progress.verdicts as u32,
        },
        RunEvent::Verdict { .. } => {
            // At most ten updates a second: a fast remote judge must not flood the UI.
            let (done, total) = (progress.done, progress.total);
            if done < total && soon {
                return None;
            }
            RunUpdate::Progress {
                trial_idx: progress.trial_idx as u32,
                done: done as u32,
                total: total as u32,
                n_failed: progress.n_failed as u32,
                verdicts_per_second: progress.verdicts_per_second(),
                eta_seconds: progress.eta_seconds(),
            }
        }
        RunEvent::Timed {
            done,
            total,
            concurrency,
        } => RunUpdate::Timing {
            done: done as u32,
            total: total as u32,
            concurrency,
        },
        RunEvent::Round {
            round,
            n_rounds,
            n_items,
            survivors,
            n_trials,
        } => RunUpdate::Round {
            round,
            n_rounds,
            n_items: n_items as u32,
            survivors: survivors as u32,
            n_trials: n_trials as u32,
        },
        RunEvent::Dropped {
            round,
            trial_ids,
            survivors,
        } => RunUpdate::Dropped {
            round,
            trial_ids: trial_ids.into_iter().map(|id| id as u32).collect(),
            survivors: survivors as u32,
        },
        RunEvent::Note { judge, message } => RunUpdate::Note { judge, message },
        RunEvent::Selected {
            trial_ids,
            n_test_items,
        } => RunUpdate::Selected {
            trial_ids: trial_ids.into_iter().map(|id| id as u32).collect(),
            n_test_items: n_test_items as u32,
        },
    };
    Some(update)
}

#[tauri::command]
#[specta::specta]
pub fn stop_run(state: State<'_, AppState>, name: String) -> bool {
    state.stop_run(&name)
}

#[tauri::command]
#[specta::specta]
pub async fn list_experiments(state: State<'_, AppState>) -> AppResult<Vec<ExperimentListing>> {
    let datasets = state.store.datasets().await?;
    let mut out = Vec::new();
    for e in state.store.experiments().await? {
        let dataset = datasets
            .iter()
            .find(|d| d.id == e.dataset_id)
            .map(|d| d.name.clone())
            .unwrap_or_default();
        out.push(ExperimentListing {
            running: state.is_running(&e.name),
            n_trials: state.store.trials(e.id).await?.len() as u32,
            name: e.name,
            dataset,
            created_at: e.created_at,
        });
    }
    Ok(out)
}
