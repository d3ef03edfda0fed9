//! Estimates on items without a label, from the Results screen: one trial judges them
//! (`judgelab estimate`) in a thread of its own with progress over a channel, and the
//! figure corrected with its labelled items comes back as the channel's last update.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use judgelab_engine::estimate::{estimate, EstimateRequest, Estimated};
use judgelab_engine::{RunEvent, RunOptions, UnlabelledRequest};
use judgelab_store::Store;
use tauri::ipc::Channel;
use tauri::State;

use super::runs::spawn_run;
use crate::dto::{Cell, EstimateUpdate, EstimateView};
use crate::error::AppResult;
use crate::state::AppState;

/// Starts judging the items without a label of `dataset` (an imported dataset's name; none:
/// the experiment's own) with trial `trial_id` of experiment `name`, planning the labels an
/// interval `width` wide needs. It counts as a run of the experiment: `stop_run` stops it,
/// and starting it again resumes.
#[tauri::command]
#[specta::specta]
pub async fn start_estimate(
    state: State<'_, AppState>,
    name: String,
    trial_id: u32,
    dataset: Option<String>,
    width: Option<f64>,
    on_event: Channel<EstimateUpdate>,
) -> AppResult<()> {
    let cancel = Arc::new(AtomicBool::new(false));
    state.begin_run(&name, Arc::clone(&cancel))?;
    let db = state.store.path().to_path_buf();
    let request = EstimateRequest {
        items: UnlabelledRequest {
            trial_id: i64::from(trial_id),
            dataset,
        },
        width,
    };
    let options = RunOptions {
        cancel,
        ..RunOptions::default()
    };
    let experiment = name.clone();
    spawn_run(
        &state,
        &name,
        on_event,
        |error| EstimateUpdate::Failed { error },
        move |channel| async move { judge(&db, &experiment, request, options, &channel).await },
    )
}

async fn judge(
    db: &std::path::Path,
    experiment: &str,
    request: EstimateRequest,
    options: RunOptions,
    channel: &Channel<EstimateUpdate>,
) -> AppResult<EstimateUpdate> {
    let store = Store::open(db).await?;
    let mut progress = judgelab_engine::Progress::new();
    let mut last_sent = Instant::now() - Duration::from_secs(1);
    let mut on_event = |event: RunEvent| {
        progress.update(&event);
        let update = match event {
            RunEvent::Loading { model, .. } => EstimateUpdate::Loading { model },
            RunEvent::Started { .. } | RunEvent::Verdict { .. } => {
                // At most ten updates a second.
                let (done, total) = (progress.done, progress.total);
                if done > 0 && done < total && last_sent.elapsed() < Duration::from_millis(100) {
                    return;
                }
                EstimateUpdate::Progress {
                    done: done as u32,
                    total: total as u32,
                    n_failed: progress.n_failed as u32,
                }
            }
            _ => return,
        };
        last_sent = Instant::now();
        let _ = channel.send(update);
    };
    let estimated = estimate(&store, experiment, &request, options, &mut on_event).await;
    store.close().await;
    Ok(EstimateUpdate::Finished {
        estimate: view(estimated?),
    })
}

fn view(e: Estimated) -> EstimateView {
    let (p, run) = (&e.population, &e.run);
    let c = &p.corrected;
    let cell = |value: f64, ci: [f64; 2]| Cell {
        value: Some(value),
        low: Some(ci[0]),
        high: Some(ci[1]),
    };
    EstimateView {
        trial_id: run.trial_id as u32,
        dataset: run.dataset.clone(),
        quantity: p.quantity.title().to_string(),
        method: p.method.to_string(),
        level: p.level,
        corrected: cell(c.value, c.ci),
        naive: cell(c.naive, c.naive_ci),
        n_labelled: c.n_labelled as u32,
        n_unlabelled: c.n_unlabelled as u32,
        lambda: c.lambda,
        tpr: c.tpr,
        tnr: c.tnr,
        n_without_verdict: p.n_without_verdict as u32,
        n_parse_failures_labelled: p.n_parse_failures_labelled as u32,
        n_parse_failures_unlabelled: p.n_parse_failures_unlabelled as u32,
        fallback: p.fallback,
        width: p.width,
        labels_needed: p.labels_needed.map(|n| n as u32),
        reading: p.reading(),
        plan: p.plan_reading(),
        judged_now: run.judged_now as u32,
        already_done: run.already_done as u32,
        n_errors: run.n_errors as u32,
        interrupted: run.interrupted,
        stopped_by: run.stopped_by.clone(),
    }
}
