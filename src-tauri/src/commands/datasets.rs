//! Datasets: the imported ones, browsed, with their distributions (importing is
//! `commands::import`).

use std::sync::Arc;

use judgelab_core::{Dataset, Task};
use judgelab_store::DatasetInfo;
use tauri::State;

use crate::dto::{Bin, Count, DatasetDetail, DatasetSummary, ItemPage, ItemRow};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

pub(crate) fn summary(d: &DatasetInfo) -> DatasetSummary {
    DatasetSummary {
        name: d.name.clone(),
        task: d.task.name().to_string(),
        n_items: d.n_items as u32,
        n_unlabelled: d.n_unlabelled as u32,
        n_with_reference: d.n_with_reference as u32,
        source: d.source.clone(),
        content_hash: d.content_hash.clone(),
        metrics: judgelab_core::metrics::Quality::ranking(d.task)
            .iter()
            .map(|q| q.name().to_string())
            .collect(),
        mapping: d
            .mapping
            .as_deref()
            .and_then(|m| judgelab_core::dataset::mapping::Mapping::from_toml(m).ok())
            .map(|m| m.to_string()),
    }
}

#[tauri::command]
#[specta::specta]
pub async fn list_datasets(state: State<'_, AppState>) -> AppResult<Vec<DatasetSummary>> {
    Ok(state.store.datasets().await?.iter().map(summary).collect())
}

/// The dataset, loaded once and kept for browsing.
pub(crate) async fn loaded(state: &AppState, name: &str) -> AppResult<Arc<Dataset>> {
    let mut cache = state.datasets.lock().await;
    if let Some(d) = cache.get(name) {
        return Ok(Arc::clone(d));
    }
    let info = state
        .store
        .dataset_by_name(name)
        .await?
        .ok_or_else(|| AppError::not_found(format!("no dataset named {name:?}")))?;
    let dataset = Arc::new(state.store.load_dataset(&info).await?);
    cache.insert(name.to_string(), Arc::clone(&dataset));
    Ok(dataset)
}

#[tauri::command]
#[specta::specta]
pub async fn dataset_detail(state: State<'_, AppState>, name: String) -> AppResult<DatasetDetail> {
    let info = state
        .store
        .dataset_by_name(&name)
        .await?
        .ok_or_else(|| AppError::not_found(format!("no dataset named {name:?}")))?;
    let dataset = loaded(&state, &name).await?;
    let labels = dataset
        .label_counts()
        .into_iter()
        .map(|(label, n)| Count { label, n: n as u32 })
        .collect();
    let mut lengths: Vec<u32> = dataset
        .items
        .iter()
        .flat_map(|i| [&i.answer_a, &i.answer_b, &i.answer])
        .filter_map(|a| a.as_ref().map(|a| a.chars().count() as u32))
        .collect();
    lengths.sort_unstable();
    let scale = match dataset.task {
        Task::Single {
            scale_min,
            scale_max,
        } => Some((scale_min as i32, scale_max as i32)),
        Task::Pairwise => None,
    };
    Ok(DatasetDetail {
        summary: summary(&info),
        labels,
        median_length: lengths.get(lengths.len() / 2).copied().unwrap_or(0),
        lengths: histogram(&lengths, 12),
        scale,
        criteria: dataset.criteria.iter().map(|c| c.describe()).collect(),
    })
}

/// `n_bins` bins of equal width over sorted `values`, widths rounded to a readable step.
fn histogram(sorted: &[u32], n_bins: u32) -> Vec<Bin> {
    let (Some(&lo), Some(&hi)) = (sorted.first(), sorted.last()) else {
        return Vec::new();
    };
    let raw = ((hi - lo) / n_bins).max(1);
    let magnitude = 10u32.pow(raw.ilog10());
    let width = [1, 2, 5, 10]
        .iter()
        .map(|m| m * magnitude)
        .find(|w| *w >= raw)
        .unwrap_or(raw);
    let start = lo / width * width;
    let mut bins: Vec<Bin> = Vec::new();
    let mut at = 0;
    let mut edge = start;
    while at < sorted.len() {
        let end = edge + width;
        let n = sorted[at..].iter().take_while(|&&v| v < end).count();
        bins.push(Bin {
            lo: edge,
            hi: end,
            n: n as u32,
        });
        at += n;
        edge = end;
    }
    bins
}

#[tauri::command]
#[specta::specta]
pub async fn dataset_items(
    state: State<'_, AppState>,
    name: String,
    offset: u32,
    limit: u32,
) -> AppResult<ItemPage> {
    let dataset = loaded(&state, &name).await?;
    let start = (offset as usize).min(dataset.items.len());
    let end = (start + limit.min(1000) as usize).min(dataset.items.len());
    let items = dataset.items[start..end]
        .iter()
        .enumerate()
        .map(|(k, i)| ItemRow {
            idx: (start + k) as u32,
            id: i.id.clone(),
            question: i.question.clone(),
            answer_a: i.answer_a.clone(),
            answer_b: i.answer_b.clone(),
            answer: i.answer.clone(),
            reference: i.reference.clone(),
            label: i.human_label.category(),
        })
        .collect();
    Ok(ItemPage {
        total: dataset.items.len() as u32,
        offset: start as u32,
        items,
    })
}

#[cfg(test)]
mod tests {
    use super::histogram;

    #[test]
    fn histogram_bins_cover_every_value_once() {
        let values: Vec<u32> = (0..1000).map(|i| (i * 37) % 2400).collect();
        let mut sorted = values.clone();
        sorted.sort_unstable();
        let bins = histogram(&sorted, 12);
        assert_eq!(bins.iter().map(|b| b.n).sum::<u32>(), 1000);
        assert!(bins.len() <= 13, "{} bins", bins.len());
        assert_eq!(bins[0].hi - bins[0].lo, 200);
        assert!(histogram(&[], 12).is_empty());
        assert_eq!(histogram(&[5, 5, 5], 12).len(), 1);
    }
}
