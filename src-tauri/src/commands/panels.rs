//! Panels, from the Results screen: compose one from the experiment's trials, or remove
//! one, over `engine::panels` (no model call; the experiment stays the same). The results
//! view comes back recomputed with it.

use judgelab_core::experiment::{PanelRule, PanelSpec, Ties};
use tauri::State;

use super::results::{quality, summary};
use crate::dto::{PanelInput, Results};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// The panel `input` describes, checked for what the form may get wrong.
fn spec(input: PanelInput) -> AppResult<PanelSpec> {
    let rule: PanelRule = input
        .rule
        .parse()
        .map_err(|e| AppError::invalid(format!("rule: {e}")))?;
    let ties = match input.ties.as_deref() {
        None | Some("") => None,
        Some(name) => Some(
            name.parse::<Ties>()
                .map_err(|e| AppError::invalid(format!("ties: {e}")))?,
        ),
    };
    Ok(PanelSpec {
        name: input.name,
        members: input.members.into_iter().map(i64::from).collect(),
        rule,
        ties,
    })
}

/// Adds `panel` to experiment `name` (or replaces the added one of its name).
#[tauri::command]
#[specta::specta]
pub async fn add_panel(
    state: State<'_, AppState>,
    name: String,
    panel: PanelInput,
    metric: Option<String>,
    resamples: u32,
) -> AppResult<Results> {
    judgelab_engine::panels::add(&state.store, &name, spec(panel)?).await?;
    let summary = summary(&state, &name, resamples.min(10_000)).await?;
    let q = quality(&summary, metric.as_deref())?;
    crate::view::results(&summary, q)
}

/// Removes the added panel `panel` from experiment `name`.
#[tauri::command]
#[specta::specta]
pub async fn remove_panel(
    state: State<'_, AppState>,
    name: String,
    panel: String,
    metric: Option<String>,
    resamples: u32,
) -> AppResult<Results> {
    judgelab_engine::panels::remove(&state.store, &name, &panel).await?;
    let summary = summary(&state, &name, resamples.min(10_000)).await?;
    let q = quality(&summary, metric.as_deref())?;
    crate::view::results(&summary, q)
}
