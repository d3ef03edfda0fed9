//! Summaries of stored experiments: each trial's parameters and metrics (with bootstrap
//! intervals), computed from its verdicts and the dataset's human labels, and the
//! baselines every trial is shown beside.

use std::collections::{BTreeMap, HashMap};

use judgelab_core::metrics::baseline::{self, Baseline};
use judgelab_core::metrics::{self, BootstrapSpec, Observation, TrialMetrics};
use judgelab_core::sampling::VerdictDistribution;
use judgelab_core::verdict::{FailureKind, Verdict};
use judgelab_core::{Dataset, Experiment, Item, Label, Task, TrialParams};
use judgelab_store::{Store, VerdictRow};
use serde::Serialize;

use crate::EngineError;

#[derive(Debug, Clone, Serialize)]
pub struct ExperimentSummary {
    pub experiment: ExperimentInfo,
    /// How the confidence intervals were drawn.
    pub bootstrap: BootstrapSpec,
    /// `majority`, and `longer_answer` for pairwise data, over the judged items.
    pub baselines: BTreeMap<&'static str, Baseline>,
    pub trials: Vec<TrialSummary>,
    /// The dataset, for reports that show items and their labels.
    #[serde(skip)]
    pub dataset: Dataset,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExperimentInfo {
    pub name: String,
    pub dataset: String,
    pub task: &'static str,
    #[serde(skip)]
    pub task_kind: Task,
    pub created_at: String,
    /// Items judged by every trial, and the few-shot pool kept apart from them.
    pub n_items: usize,
    pub repeats: u32,
    pub few_shot_pool: Vec<String>,
    /// Judged item ids, in the order units are numbered.
    #[serde(skip)]
    pub judged: Vec<String>,
    /// Calls expected and calls stored (calls that failed not counted as stored).
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
    /// The content hash of the trial's template, as stored.
    pub template_hash: String,
    pub examples: Vec<String>,
    #[serde(flatten)]
    pub metrics: TrialMetrics,
    /// The stored rows, one per call.
    #[serde(skip)]
    pub verdicts: Vec<VerdictRow>,
    /// The same calls as the metrics see them (for paired comparisons).
    #[serde(skip)]
    pub observations: Vec<Observation>,
}

/// Summarises the stored experiment `name`, with intervals drawn as `bootstrap` says.
pub async fn summarize(
    store: &Store,
    name: &str,
    bootstrap: &BootstrapSpec,
) -> Result<ExperimentSummary, EngineError> {
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
    // Every trial's verdicts are read on threads of their own while the dataset loads:
    // opening a 100,000-verdict experiment is mostly reading.
    let trial_rows = store.trials(row.id).await?;
    let reads: Vec<_> = trial_rows
        .iter()
        .map(|t| {
            let (store, id) = (store.clone(), t.id);
            tokio::spawn(async move { store.verdicts(id).await })
        })
        .collect();
    let dataset = store.load_dataset(&info).await?;
    let mut all_verdicts = Vec::with_capacity(reads.len());
    for read in reads {
        all_verdicts.push(read.await.expect("reading verdicts does not panic")?);
    }
    let items: HashMap<&str, &Item> = dataset.items.iter().map(|i| (i.id.as_str(), i)).collect();
    let units: HashMap<&str, usize> = row
        .judged
        .iter()
        .enumerate()
        .map(|(unit, id)| (id.as_str(), unit))
        .collect();
    let experiment = Experiment::from_toml(name, &row.spec).ok();
    let repeats = experiment.as_ref().map_or(1, |e| e.sweep.repeats);
    let mut trials = Vec::new();
    let (mut n_expected, mut n_stored) = (0, 0);
    for (trial, verdicts) in trial_rows.into_iter().zip(all_verdicts) {
        let observations: Vec<Observation> = verdicts
            .iter()
            .filter_map(|v| {
                observation(
                    v,
                    items.get(v.item_id.as_str())?,
                    units.get(v.item_id.as_str())?,
                )
            })
            .collect();
        let metrics = metrics::compute(dataset.task, &observations, bootstrap);
        n_expected += row.judged.len() * repeats as usize * trial.params.order.calls().len();
        n_stored += verdicts.iter().filter(|v| v.error.is_none()).count();
        trials.push(TrialSummary {
            id: trial.id,
            trial_idx: trial.trial_idx,
            params: trial.params,
            model_sha256: trial.model_sha256,
            template_hash: trial.template_hash,
            examples: trial.examples,
            metrics,
            verdicts,
            observations,
        });
    }
    let judged: Vec<&Item> = row
        .judged
        .iter()
        .filter_map(|id| items.get(id.as_str()).copied())
        .collect();
    let baselines = baseline::baselines(dataset.task, &judged, bootstrap)
        .into_iter()
        .map(|b| (b.name, b))
        .collect();
    Ok(ExperimentSummary {
        experiment: ExperimentInfo {
            name: row.name,
            dataset: dataset.name.clone(),
            task: dataset.task.name(),
            task_kind: dataset.task,
            created_at: row.created_at,
            n_items: row.judged.len(),
            repeats,
            few_shot_pool: row.pool,
            judged: row.judged.clone(),
            n_expected,
            n_stored,
            spec: row.spec,
        },
        bootstrap: *bootstrap,
        baselines,
        trials,
        dataset,
    })
}

/// A stored row as the metrics see it.
fn observation(v: &VerdictRow, item: &Item, &unit: &usize) -> Option<Observation> {
    let verdict = if v.error.is_some() {
        None
    } else if let Some(label) = v.verdict.as_deref().and_then(Label::from_text) {
        Some(Verdict::Parsed(label))
    } else {
        let kind = v.failure_kind.as_deref().and_then(FailureKind::from_name);
        Some(Verdict::Failed(kind.unwrap_or(FailureKind::NoLabel)))
    };
    Some(Observation {
        unit,
        repeat: v.repeat,
        swapped: v.swapped,
        human: item.human_label,
        verdict,
        prompt_tokens: v.prompt_tokens,
        completion_tokens: v.completion_tokens,
        latency_ms: v.latency_ms.unwrap_or(f64::NAN),
        ttft_ms: v.ttft_ms,
        cost_usd: v.cost_usd,
        distribution: v.distribution.as_deref().and_then(distribution),
    })
}

/// An exact row's distribution, `{label: p, …, "failed": p}` as the engine writes it.
fn distribution(json: &str) -> Option<VerdictDistribution> {
    let map: serde_json::Map<String, serde_json::Value> = serde_json::from_str(json).ok()?;
    let mut d = VerdictDistribution::default();
    for (key, p) in map {
        let p = p.as_f64()?;
        match key.as_str() {
            "failed" => d.failed = p,
            label => d.labels.push((Label::from_text(label)?, p)),
        }
    }
    Some(d)
}
