//! The import wizard: a file's first rows with a guessed mapping, the values its label
//! takes, the whole file read through the mapping with nothing written (what would be
//! imported), and the import itself, all or nothing.

use std::path::Path;

use judgelab_core::dataset::mapping::{Mapping, Rescale};
use judgelab_core::dataset::{self, guess, ImportOptions, Source};
use judgelab_core::{Item, Label};
use judgelab_engine::EngineError;
use tauri::State;

use crate::commands::datasets::summary;
use crate::dto::{
    Count, DatasetPeek, FieldMapping, ImportPreview, ImportResult, ItemRow, LabelMapping,
    LabelValues, MappingInput,
};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

/// Rows a label's values are counted over: enough to see every value a set uses.
const LABEL_ROWS: usize = 10_000;

/// Runs file reading off the async runtime.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, EngineError> + Send + 'static,
) -> AppResult<T> {
    tauri::async_runtime::spawn_blocking(f)
        .await
        .map_err(|e| AppError::internal(format!("reading the file panicked: {e}")))?
        .map_err(AppError::from)
}

fn checked_path(path: &str) -> AppResult<String> {
    let path = path.trim().to_string();
    if path.is_empty() {
        return Err(AppError::invalid(
            "Give the path of a .jsonl, .json, .csv, .tsv or .parquet file (each may be .gz).",
        ));
    }
    if !Path::new(&path).is_file() {
        return Err(AppError::invalid(format!("{path}: no such file")));
    }
    Ok(path)
}

#[tauri::command]
#[specta::specta]
pub async fn peek_dataset(path: String) -> AppResult<DatasetPeek> {
    let path = checked_path(&path)?;
    let peek = blocking(move || {
        guess::peek(&path, Source::File(Path::new(&path)), 5).map_err(EngineError::from)
    })
    .await?;
    Ok(DatasetPeek {
        columns: peek.columns.clone(),
        paths: peek.paths.clone(),
        rows: peek
            .rows
            .iter()
            .map(|r| serde_json::to_string_pretty(r).expect("a row serialises"))
            .collect(),
        canonical: peek.canonical,
        guess: guess::guess(&peek)
            .into_iter()
            .map(|(target, path)| FieldMapping { target, path })
            .collect(),
        targets: Mapping::targets().map(str::to_string).collect(),
    })
}

#[tauri::command]
#[specta::specta]
pub async fn label_values(path: String, label_path: String) -> AppResult<LabelValues> {
    let path = checked_path(&path)?;
    let (values, rows_read) = blocking(move || {
        guess::label_values(
            &path,
            Source::File(Path::new(&path)),
            &label_path,
            LABEL_ROWS,
        )
        .map_err(EngineError::from)
    })
    .await?;
    Ok(LabelValues {
        guess: guess::guess_labels(&values)
            .into_iter()
            .map(|(value, label)| LabelMapping { value, label })
            .collect(),
        values: values
            .into_iter()
            .map(|(label, n)| Count { label, n: n as u32 })
            .collect(),
        rows_read: rows_read as u32,
    })
}

/// The import's options: its name, the rating scale `MIN-MAX` and the mapping, checked.
fn options(
    name: Option<String>,
    scale: Option<String>,
    mapping: Option<MappingInput>,
) -> AppResult<ImportOptions> {
    let scale = match scale.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(text) => {
            let bad =
                || AppError::invalid(format!("rating scale {text:?}: expected MIN-MAX, e.g. 1-5"));
            let (lo, hi) = text.split_once('-').ok_or_else(bad)?;
            Some((
                lo.trim().parse().map_err(|_| bad())?,
                hi.trim().parse().map_err(|_| bad())?,
            ))
        }
    };
    let mapping = mapping
        .map(|m| {
            let rescale = m
                .rescale
                .as_deref()
                .map(str::trim)
                .filter(|r| !r.is_empty())
                .map(Rescale::parse)
                .transpose()?;
            Mapping::new(
                m.fields
                    .into_iter()
                    .filter(|f| !f.path.trim().is_empty())
                    .map(|f| (f.target, f.path.trim().to_string()))
                    .collect(),
                m.labels
                    .into_iter()
                    .filter(|l| !l.label.trim().is_empty())
                    .map(|l| (l.value, l.label.trim().to_string()))
                    .collect(),
                rescale,
            )
        })
        .transpose()
        .map_err(|e| AppError::invalid(format!("the mapping: {e}")))?;
    Ok(ImportOptions {
        name: name.filter(|n| !n.trim().is_empty()),
        scale,
        mapping,
    })
}

fn row(idx: usize, item: &Item<Option<Label>>) -> ItemRow {
    ItemRow {
        idx: idx as u32,
        id: item.id.clone(),
        question: item.question.clone(),
        answer_a: item.answer_a.clone(),
        answer_b: item.answer_b.clone(),
        answer: item.answer.clone(),
        reference: item.reference.clone(),
        label: item.human_label.map_or("—".into(), |l| l.category()),
    }
}

#[tauri::command]
#[specta::specta]
pub async fn preview_import(
    path: String,
    mapping: Option<MappingInput>,
    scale: Option<String>,
) -> AppResult<ImportPreview> {
    let path = checked_path(&path)?;
    let options = options(None, scale, mapping)?;
    blocking(move || {
        let (mut items, mut counts) = (Vec::new(), std::collections::BTreeMap::new());
        let (mut n_items, mut n_unlabelled) = (0u32, 0u32);
        let header = dataset::read(&path, Source::File(Path::new(&path)), &options, |item| {
            match item.human_label {
                Some(l) => {
                    n_items += 1;
                    *counts.entry(l.category()).or_insert(0u32) += 1;
                }
                None => n_unlabelled += 1,
            }
            if items.len() < 5 {
                items.push(row(items.len(), &item));
            }
            true
        })?;
        Ok(ImportPreview {
            task: header.task.describe(),
            n_items,
            n_unlabelled,
            labels: counts
                .into_iter()
                .map(|(label, n)| Count { label, n })
                .collect(),
            criteria: header.criteria.iter().map(|c| c.describe()).collect(),
            items,
        })
    })
    .await
}

#[tauri::command]
#[specta::specta]
pub async fn import_dataset(
    state: State<'_, AppState>,
    path: String,
    name: Option<String>,
    mapping: Option<MappingInput>,
    scale: Option<String>,
) -> AppResult<ImportResult> {
    let options = options(name, scale, mapping)?;
    let imported = judgelab_engine::import_file(&state.store, Path::new(&path), &options).await?;
    Ok(ImportResult {
        dataset: summary(&imported.dataset),
        already: imported.already,
    })
}
