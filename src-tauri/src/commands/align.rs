//! "Improve this judge", from the Results screen: `judgelab align` from one trial, its plan
//! first, then the search in a thread of its own with its progress over a channel
//! (candidates, race rounds, calls against the budget) and its outcome in words.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use judgelab_core::align::plan::Budget;
use judgelab_engine::align::{AlignEvent, AlignRequest};
use judgelab_store::Store;
use tauri::ipc::Channel;
use tauri::State;

use super::runs::spawn_run;
use crate::dto::AlignUpdate;
use crate::error::{AppError, AppResult};
use crate::state::AppState;

fn request(
    name: &str,
    trial_id: u32,
    budget_calls: u32,
    budget_usd: Option<f64>,
) -> AppResult<AlignRequest> {
    if budget_calls == 0 {
        return Err(AppError::invalid("a budget of 1 or more calls"));
    }
    if budget_usd.is_some_and(|u| !(u > 0.0)) {
        return Err(AppError::invalid("a budget in dollars above 0, or none"));
    }
    let budget = Budget {
        calls: Some(u64::from(budget_calls)),
        usd: budget_usd,
    };
    let mut request = AlignRequest::new(name, i64::from(trial_id), budget);
    request.options.timed_calls = 0;
    Ok(request)
}

/// What a search from trial `trial_id` may spend within `budget_calls` (and
/// `budget_usd`, where calls have a price), in words.
#[tauri::command]
#[specta::specta]
pub async fn align_plan(
    state: State<'_, AppState>,
    name: String,
    trial_id: u32,
    budget_calls: u32,
    budget_usd: Option<f64>,
) -> AppResult<String> {
    let request = request(&name, trial_id, budget_calls, budget_usd)?;
    let plan = judgelab_engine::align::plan(&state.store, &request).await?;
    Ok(judgelab_report::alignment::plan_text(&plan))
}

/// Starts (or resumes) the search from trial `trial_id` of experiment `name`. It counts as a
/// run of the experiment: `stop_run` stops it, and the same call resumes it.
#[tauri::command]
#[specta::specta]
pub async fn start_align(
    state: State<'_, AppState>,
    name: String,
    trial_id: u32,
    budget_calls: u32,
    budget_usd: Option<f64>,
    on_event: Channel<AlignUpdate>,
) -> AppResult<()> {
    let mut request = request(&name, trial_id, budget_calls, budget_usd)?;
    let cancel = Arc::new(AtomicBool::new(false));
    state.begin_run(&name, Arc::clone(&cancel))?;
    request.options.cancel = cancel;
    let db = state.store.path().to_path_buf();
    spawn_run(
        &state,
        &name,
        on_event,
        |error| AlignUpdate::Failed { error },
        move |channel| async move { search(&db, &request, &channel).await },
    )
}

async fn search(
    db: &std::path::Path,
    request: &AlignRequest,
    channel: &Channel<AlignUpdate>,
) -> AppResult<AlignUpdate> {
    let store = Store::open(db).await?;
    let mut on_event = |event: AlignEvent| {
        let update = match event {
            AlignEvent::Planned(p) => AlignUpdate::Planned {
                plan: judgelab_report::alignment::plan_text(&p),
                generations: p.generations,
                budget: p.budget.calls.map(|b| b as u32),
            },
            AlignEvent::Generation {
                generation,
                n_generations,
            } => AlignUpdate::Generation {
                generation,
                n_generations,
            },
            AlignEvent::Candidate { candidate: c } => AlignUpdate::Candidate {
                id: c.id,
                parent: c.parent,
                kind: c.kind.name().to_string(),
                rejected: c.rejected,
            },
            AlignEvent::Round {
                generation,
                round,
                n_rounds,
                n_items,
                survivors,
            } => AlignUpdate::Round {
                generation,
                round,
                n_rounds,
                n_items: n_items as u32,
                survivors: survivors as u32,
            },
            AlignEvent::Spent { calls, budget } => AlignUpdate::Spent {
                calls: calls as u32,
                budget: budget.map(|b| b as u32),
            },
            AlignEvent::Run(_) => return,
        };
        let _ = channel.send(update);
    };
    let outcome = judgelab_engine::align::align(&store, request, &mut on_event).await;
    store.close().await;
    let outcome = outcome?;
    Ok(AlignUpdate::Finished {
        text: judgelab_report::alignment::text(&outcome),
        verdict: outcome.confirmation.as_ref().map(|c| c.verdict.clone()),
        spent: outcome.spent_calls as u32,
    })
}
