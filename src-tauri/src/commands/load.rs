//! Load ramps, from the Results screen: one trial's judge configuration through levels of
//! requests in flight (`judgelab load`), in a thread of its own with progress over a
//! channel. The ramp is stored; the Results screen then shows it as the report draws it.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use judgelab_engine::load::{load_ramp, LoadEvent, LoadOptions};
use judgelab_store::Store;
use tauri::ipc::Channel;
use tauri::State;

use super::runs::spawn_run;
use crate::dto::LoadUpdate;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// Starts a ramp of trial `trial_id` of experiment `name`. It counts as a run of the
/// experiment: neither starts while the other goes on, and `stop_run` stops it.
#[tauri::command]
#[specta::specta]
#[allow(clippy::too_many_arguments)]
pub async fn start_load(
    state: State<'_, AppState>,
    name: String,
    trial_id: u32,
    levels: Vec<u32>,
    requests: u32,
    warmup: u32,
    slo_ms: Option<f64>,
    on_event: Channel<LoadUpdate>,
) -> AppResult<()> {
    if levels.is_empty() || levels.contains(&0) || requests == 0 {
        return Err(AppError::invalid(
            "a ramp needs levels of 1 or more requests in flight, and 1 or more requests per level",
        ));
    }
    if let Some(slo) = slo_ms.filter(|s| !(s.is_finite() && *s > 0.0)) {
        return Err(AppError::invalid(format!(
            "SLO {slo} ms: expected a positive number of milliseconds"
        )));
    }
    let cancel = Arc::new(AtomicBool::new(false));
    state.begin_run(&name, Arc::clone(&cancel))?;
    let db = state.store.path().to_path_buf();
    let options = LoadOptions {
        trial_id: i64::from(trial_id),
        levels,
        requests: requests as usize,
        warmup: warmup as usize,
        slo_ms,
        prompt_cache: false,
        threads: None,
        judges: None,
        cancel,
    };
    let experiment = name.clone();
    spawn_run(
        &state,
        &name,
        on_event,
        |error| LoadUpdate::Failed { error },
        move |channel| async move { ramp(&db, &experiment, options, &channel).await },
    )
}

async fn ramp(
    db: &std::path::Path,
    experiment: &str,
    options: LoadOptions,
    channel: &Channel<LoadUpdate>,
) -> AppResult<LoadUpdate> {
    let store = Store::open(db).await?;
    let levels = options.levels.clone();
    let mut last_sent = Instant::now() - Duration::from_secs(1);
    let mut on_event = |event: LoadEvent| {
        let update = match event {
            LoadEvent::Level {
                concurrency,
                requests,
            } => LoadUpdate::Level {
                concurrency,
                level_idx: levels.iter().position(|&l| l == concurrency).unwrap_or(0) as u32,
                n_levels: levels.len() as u32,
                requests: requests as u32,
            },
            LoadEvent::Request { concurrency, done } => {
                // At most ten updates a second.
                if last_sent.elapsed() < Duration::from_millis(100) {
                    return;
                }
                LoadUpdate::Request {
                    concurrency,
                    done: done as u32,
                }
            }
        };
        last_sent = Instant::now();
        let _ = channel.send(update);
    };
    let stored = load_ramp(&store, experiment, options, &mut on_event).await;
    store.close().await;
    let stored = stored?;
    Ok(LoadUpdate::Finished {
        knee: stored.ramp.knee,
        knee_reason: stored.ramp.knee_reason,
    })
}
