//! The labelling queue over the store (`judgelab label`, the app's Label screen): the items
//! of an experiment's dataset ranked by how much its trials disagree on them
//! ([`judgelab_core::annotation::queue`]), labels given and taken back, and the labels
//! exported as a dataset file. Labels belong to the dataset, so an experiment's queue sees
//! those given in another experiment's on the same data.

use std::path::Path;

use judgelab_core::annotation::queue::{self, Filter, Queued};
use judgelab_core::annotation::{self, Annotation, AnnotationError, Labels};
use judgelab_core::results::criteria;
use judgelab_core::{Dataset, Item, Label, Task};
use judgelab_store::Store;

use crate::EngineError;

/// One item of the queue: what the person is shown, and what is shown after they label it.
#[derive(Debug, Clone)]
pub struct QueueEntry {
    pub item: Item<()>,
    /// Its label in the dataset, if it has one.
    pub original: Option<Label>,
    pub queued: Queued,
}

/// An annotator's queue for one experiment.
#[derive(Debug, Clone)]
pub struct Queue {
    pub experiment: String,
    pub dataset: String,
    pub task: Task,
    pub annotator: String,
    /// The items still to label, the most disputed first.
    pub items: Vec<QueueEntry>,
    /// Items the annotator has labelled in this dataset, and the dataset's items.
    pub n_done: usize,
    pub n_items: usize,
}

/// The annotator's name when none is given: the user's login.
pub fn default_annotator() -> String {
    std::env::var("USER")
        .or_else(|_| std::env::var("USERNAME"))
        .ok()
        .filter(|u| !u.trim().is_empty() && u != annotation::humans::DATASET)
        .unwrap_or_else(|| "me".to_string())
}

/// `annotator`'s queue for the stored experiment `name`.
pub async fn queue(
    store: &Store,
    name: &str,
    annotator: &str,
    filter: Filter,
) -> Result<Queue, EngineError> {
    let annotator = annotation::check_annotator(annotator)?;
    let (row, info) = crate::stored_experiment(store, name).await?;
    let dataset = store.load_dataset(&info).await?;
    let annotations = store.annotations(info.id).await?;
    let mut records = Vec::new();
    for t in store.trials(row.id).await? {
        let verdicts = store.verdicts(t.id).await?;
        // A checklist's calls on one verdict are one verdict.
        let verdicts = match dataset.task.scale() {
            Some(scale) => criteria::gather(&dataset.criteria, scale, verdicts),
            None => verdicts,
        };
        records.push((t.id, t.params.order, verdicts));
    }
    let trials: Vec<annotation::Judged<'_>> = records
        .iter()
        .map(|(id, order, r)| annotation::Judged {
            trial_id: *id,
            order: *order,
            records: r.iter().collect(),
        })
        .collect();
    let queued = queue::queue(&dataset, &trials, &annotations, annotator, filter);
    let mut by_id = annotation::items_by_id(&dataset);
    let items = queued
        .into_iter()
        .filter_map(|q| {
            let (item, original) = by_id.remove(q.item_id.as_str())?;
            Some(QueueEntry {
                item,
                original,
                queued: q,
            })
        })
        .collect();
    Ok(Queue {
        experiment: row.name,
        dataset: info.name,
        task: dataset.task,
        annotator: annotator.to_string(),
        items,
        n_done: annotations
            .iter()
            .filter(|a| a.annotator == annotator)
            .count(),
        n_items: dataset.items.len() + dataset.unlabelled.len(),
    })
}

/// Stores `annotator`'s label of `item_id` (a key such as `a` or `4`, or the label's text)
/// in the experiment's dataset; the label as stored.
pub async fn annotate(
    store: &Store,
    name: &str,
    annotator: &str,
    item_id: &str,
    label: &str,
) -> Result<Label, EngineError> {
    let annotator = annotation::check_annotator(annotator)?;
    let (_, info) = crate::stored_experiment(store, name).await?;
    let label = annotation::parse_label(info.task, label)?;
    // One key press, one lookup: the item, not the whole dataset, is read.
    if !store.has_item(info.id, item_id).await? {
        return Err(AnnotationError::UnknownItem(item_id.to_string()).into());
    }
    store.annotate(info.id, item_id, annotator, label).await?;
    Ok(label)
}

/// Takes `annotator`'s label of `item_id` back; whether there was one.
pub async fn unannotate(
    store: &Store,
    name: &str,
    annotator: &str,
    item_id: &str,
) -> Result<bool, EngineError> {
    let annotator = annotation::check_annotator(annotator)?;
    let (_, info) = crate::stored_experiment(store, name).await?;
    Ok(store.unannotate(info.id, item_id, annotator).await?)
}

/// The experiment's dataset and every label given of it.
pub async fn labelled(
    store: &Store,
    name: &str,
) -> Result<(Dataset, Vec<Annotation>), EngineError> {
    let (_, info) = crate::stored_experiment(store, name).await?;
    Ok((
        store.load_dataset(&info).await?,
        store.annotations(info.id).await?,
    ))
}

/// What an export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exported {
    pub n_items: usize,
    pub n_labelled: usize,
    pub task: Task,
}

/// Writes the experiment's dataset with the labels `labels` gives as JSONL in the dataset
/// schema (every item; `null` where it has none of that kind) to `path`.
pub async fn export(
    store: &Store,
    name: &str,
    labels: &Labels,
    path: &Path,
) -> Result<Exported, EngineError> {
    let (dataset, annotations) = labelled(store, name).await?;
    let text = annotation::export_jsonl(&dataset, &annotations, labels)?;
    let n_labelled = annotation::relabel(dataset.clone(), &annotations, labels)?
        .items
        .len();
    std::fs::write(path, text).map_err(|source| EngineError::Io {
        path: path.display().to_string(),
        source,
    })?;
    Ok(Exported {
        n_items: dataset.items.len() + dataset.unlabelled.len(),
        n_labelled,
        task: dataset.task,
    })
}
