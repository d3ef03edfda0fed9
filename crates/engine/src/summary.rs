//! Summaries of stored experiments: each trial's parameters and metrics, computed from its
//! verdicts and the dataset's human labels.

use std::collections::HashMap;

use judgelab_core::metrics::{self, Observation, TrialMetrics};
use judgelab_core::verdict::{FailureKind, Verdict};
use judgelab_core::{Experiment, Label, TrialParams};
use judgelab_store::Store;
use serde::Serialize;

use crate::EngineError;

#[derive(Debug, Clone, Serialize)]
pub struct ExperimentSummary {
    pub experiment: ExperimentInfo,
    pub trials: Vec<TrialSummary>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExperimentInfo {
    pub name: String,
    pub dataset: String,
    pub task: &'static str,
    pub created_at: String,
    /// Items judged by every trial, and the few-shot pool kept apart from them.
    pub n_items: usize,
    pub repeats: u32,
    pub few_shot_pool: Vec<String>,
    /// Verdicts expected and stored (calls that failed not counted as stored).
    pub n_expected: usize,
    pub n_stored: usize,
    /// The experiment file as written.
    pub spec: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct TrialSummary {
    pub id: i64,
    pub trial_idx: usize,
    pub params: TrialParams,
    pub model_sha256: Option<String>,
    pub examples: Vec<String>,
    pub metrics: TrialMetrics,
}

/// Summarises the stored experiment `name`.
pub async fn summarize(store: &Store, name: &str) -> Result<ExperimentSummary, EngineError> {
    let row = store
        .experiment_by_name(name)
        .await?
        .ok_or_else(|| EngineError::UnknownExperiment(name.to_string()))?;
    let info = store
        .datasets()
        .await?
        .into_iter()
        .find(|d| d.id == row.dataset_id)
        .ok_or_else(|| EngineError::UnknownExperiment(name.to_string()))?;
    let dataset = store.load_dataset(&info).await?;
    let humans: HashMap<&str, Label> = dataset
        .items
        .iter()
        .map(|i| (i.id.as_str(), i.human_label))
        .collect();
    let repeats = Experiment::from_toml(name, &row.spec).map_or(1, |e| e.sweep.repeats);
    let mut trials = Vec::new();
    let mut n_stored = 0;
    for trial in store.trials(row.id).await? {
        let verdicts = store.verdicts(trial.id).await?;
        let observations: Vec<Observation> = verdicts
            .iter()
            .filter_map(|v| {
                let human = *humans.get(v.item_id.as_str())?;
                let verdict = if v.error.is_some() {
                    None
                } else if let Some(label) = v.verdict.as_deref().and_then(Label::from_text) {
                    Some(Verdict::Parsed(label))
                } else {
                    let kind = v.failure_kind.as_deref().and_then(FailureKind::from_name);
                    Some(Verdict::Failed(kind.unwrap_or(FailureKind::NoLabel)))
                };
                Some(Observation {
                    human,
                    verdict,
                    prompt_tokens: v.prompt_tokens,
                    completion_tokens: v.completion_tokens,
                    latency_ms: v.latency_ms.unwrap_or(f64::NAN),
                    ttft_ms: v.ttft_ms,
                })
            })
            .collect();
        let metrics = metrics::compute(dataset.task, &observations);
        n_stored += metrics.n;
        trials.push(TrialSummary {
            id: trial.id,
            trial_idx: trial.trial_idx,
            params: trial.params,
            model_sha256: trial.model_sha256,
            examples: trial.examples,
            metrics,
        });
    }
    Ok(ExperimentSummary {
        experiment: ExperimentInfo {
            name: row.name,
            dataset: dataset.name,
            task: dataset.task.name(),
            created_at: row.created_at,
            n_items: row.judged.len(),
            repeats,
            few_shot_pool: row.pool,
            n_expected: trials.len() * row.judged.len() * repeats as usize,
            n_stored,
            spec: row.spec,
        },
        trials,
    })
}
