//! The labelling queue (the Label screen) over `engine::labels`: the queue of an
//! experiment's dataset, the most disputed items first; a label given or taken back; the
//! labels exported as a dataset file. And which labels the Results view's metrics are
//! against (`set_labels`), kept per experiment for every command that reads its summary.

use judgelab_core::annotation::queue::Filter;
use judgelab_core::annotation::Labels;
use judgelab_core::{Label, Task};
use judgelab_engine::labels;
use tauri::State;

use super::results::{quality, summary};
use crate::dto::{
    LabelKey, LabelsExported, LabelsInput, QueueView, QueuedItem, Results, TrialVotesView,
};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// The keys of a task and the labels they give.
fn keys(task: Task) -> Vec<LabelKey> {
    match task {
        Task::Pairwise => [
            ("a", "A", "A is better"),
            ("b", "B", "B is better"),
            ("t", "tie", "a tie"),
        ]
        .into_iter()
        .map(|(key, label, title)| LabelKey {
            key: key.into(),
            label: label.into(),
            title: title.into(),
        })
        .collect(),
        Task::Single {
            scale_min,
            scale_max,
        } => (scale_min..=scale_max)
            .map(|r| LabelKey {
                key: r.to_string(),
                label: r.to_string(),
                title: format!("rated {r}"),
            })
            .collect(),
    }
}

/// `annotator`'s queue for experiment `name` (an empty name: the user's login).
#[tauri::command]
#[specta::specta]
pub async fn label_queue(
    state: State<'_, AppState>,
    name: String,
    annotator: String,
    unlabelled_only: bool,
) -> AppResult<QueueView> {
    let annotator = match annotator.trim() {
        "" => labels::default_annotator(),
        a => a.to_string(),
    };
    let filter = Filter { unlabelled_only };
    let q = labels::queue(&state.store, &name, &annotator, filter).await?;
    let text = |l: Option<Label>| l.map(|l| l.to_text());
    Ok(QueueView {
        experiment: q.experiment,
        dataset: q.dataset,
        task: q.task.name().to_string(),
        annotator: q.annotator,
        keys: keys(q.task),
        items: q
            .items
            .into_iter()
            .map(|e| QueuedItem {
                id: e.item.id,
                question: e.item.question,
                answer_a: e.item.answer_a,
                answer_b: e.item.answer_b,
                answer: e.item.answer,
                reference: e.item.reference,
                original: text(e.original),
                disagreement: e.queued.disagreement,
                n_votes: e.queued.n_votes as u32,
                votes: e
                    .queued
                    .votes
                    .into_iter()
                    .map(|v| TrialVotesView {
                        trial_id: v.trial_id as u32,
                        verdicts: v.verdicts.into_iter().map(text).collect(),
                    })
                    .collect(),
            })
            .collect(),
        n_done: q.n_done as u32,
        n_items: q.n_items as u32,
    })
}

/// Stores `annotator`'s `label` (a key or the label's text) of `item_id`; the label stored.
#[tauri::command]
#[specta::specta]
pub async fn annotate_item(
    state: State<'_, AppState>,
    name: String,
    annotator: String,
    item_id: String,
    label: String,
) -> AppResult<String> {
    let given = labels::annotate(&state.store, &name, &annotator, &item_id, &label).await?;
    Ok(given.to_text())
}

/// Takes `annotator`'s label of `item_id` back; whether there was one.
#[tauri::command]
#[specta::specta]
pub async fn unannotate_item(
    state: State<'_, AppState>,
    name: String,
    annotator: String,
    item_id: String,
) -> AppResult<bool> {
    Ok(labels::unannotate(&state.store, &name, &annotator, &item_id).await?)
}

fn parse(labels: LabelsInput) -> AppResult<Labels> {
    Labels::parse(&labels.kind, labels.annotator).map_err(|e| AppError::invalid(e.to_string()))
}

/// Writes experiment `name`'s dataset with `labels` as JSONL in the dataset schema.
#[tauri::command]
#[specta::specta]
pub async fn export_labels(
    state: State<'_, AppState>,
    name: String,
    labels: LabelsInput,
    path: String,
) -> AppResult<LabelsExported> {
    let path = path.trim();
    if path.is_empty() {
        return Err(AppError::invalid(
            "say where to write the labels (a .jsonl file)",
        ));
    }
    let done = labels::export(&state.store, &name, &parse(labels)?, path.as_ref()).await?;
    Ok(LabelsExported {
        path: path.to_string(),
        n_items: done.n_items as u32,
        n_labelled: done.n_labelled as u32,
    })
}

/// Computes experiment `name`'s results against `labels` from now on.
#[tauri::command]
#[specta::specta]
pub async fn set_labels(
    state: State<'_, AppState>,
    name: String,
    labels: LabelsInput,
    metric: Option<String>,
    resamples: u32,
) -> AppResult<Results> {
    let labels = parse(labels)?;
    let previous = state
        .labels
        .lock()
        .expect("labels lock")
        .insert(name.clone(), labels);
    match summary(&state, &name, resamples.min(10_000)).await {
        Ok(s) => {
            let q = quality(&s, metric.as_deref())?;
            crate::view::results(&s, q)
        }
        Err(e) => {
            // Labels that cannot be used (nobody of that name) leave the view as it was.
            let mut chosen = state.labels.lock().expect("labels lock");
            match previous {
                Some(p) => chosen.insert(name, p),
                None => chosen.remove(&name),
            };
            Err(e)
        }
    }
}
