//! Results: the trials table with intervals and baselines, the Pareto charts (the report's
//! own SVG, with where each trial was drawn), a trial's confusion matrix and verdicts, one
//! verdict's prompt and output, and the paired comparison of two trials.

use std::collections::HashMap;
use std::sync::Arc;

use judgelab_core::metrics::{BootstrapSpec, Quality, Scored};
use judgelab_core::results::{ExperimentSummary, Outcome, TrialSummary, VerdictRecord};
use judgelab_core::{Label, Task, Verdict};
use judgelab_report::analysis::Analysis;
use tauri::State;

use crate::dto::{
    ChatMessage, ComparedPair, Comparison, ConfusionView, DriftView, MovedView, OutcomeKind,
    Results, TrialDetail, VerdictDetail, VerdictFilter, VerdictListing,
};
use crate::error::{AppError, AppResult};
use crate::state::{AppState, OpenedKey, SummaryKey};
use crate::view::{cell, table_view, trial_view};
use judgelab_report::table::{ResultsTable, RowKind};

/// The experiment's summary against the labels chosen for it, computed once per
/// (resamples, verdicts stored, labels given, …), from a reading of it that the summaries
/// with other resamples or labels share.
pub(crate) async fn summary(
    state: &AppState,
    name: &str,
    resamples: u32,
) -> AppResult<Arc<ExperimentSummary>> {
    let row = state
        .store
        .experiment_by_name(name)
        .await?
        .ok_or_else(|| AppError::not_found(format!("no experiment named {name:?}")))?;
    let labels = state
        .labels
        .lock()
        .expect("labels lock")
        .get(name)
        .cloned()
        .unwrap_or_default();
    let criterion = state
        .criteria
        .lock()
        .expect("criteria lock")
        .get(name)
        .cloned();
    let key = SummaryKey {
        opened: OpenedKey {
            annotations: state.store.annotations(row.dataset_id).await?,
            experiment: name.to_string(),
            verdicts: state.store.verdicts_state(row.id).await?,
            n_ramps: state.store.count_load_ramps(row.id).await?,
            panels: state.store.panels(row.id).await?,
            spec: row.spec,
        },
        resamples,
        labels,
        criterion,
    };
    let mut cached = state.summary.lock().await;
    if let Some((k, s)) = cached.as_ref() {
        if *k == key {
            return Ok(Arc::clone(s));
        }
    }
    let opened = opened(state, &key.opened).await?;
    let spec = BootstrapSpec {
        resamples,
        ..BootstrapSpec::default()
    };
    let s = Arc::new(opened.summarize(&spec, &key.labels, key.criterion.as_deref())?);
    *cached = Some((key, Arc::clone(&s)));
    Ok(s)
}

/// The experiment `key` names as read, read again only where `key` has changed.
async fn opened(state: &AppState, key: &OpenedKey) -> AppResult<Arc<judgelab_engine::Opened>> {
    let mut cached = state.opened.lock().await;
    if let Some((k, o)) = cached.as_ref() {
        if k == key {
            return Ok(Arc::clone(o));
        }
    }
    // The last reading goes before the next is read, so that two are never held at once.
    *cached = None;
    let o = Arc::new(judgelab_engine::open(&state.store, &key.experiment).await?);
    *cached = Some((key.clone(), Arc::clone(&o)));
    Ok(o)
}

/// The metric asked for, or the task's usual one.
pub(crate) fn quality(summary: &ExperimentSummary, metric: Option<&str>) -> AppResult<Quality> {
    Ok(summary.metric(metric)?)
}

#[tauri::command]
#[specta::specta]
pub async fn experiment_results(
    state: State<'_, AppState>,
    name: String,
    metric: Option<String>,
    resamples: u32,
) -> AppResult<Results> {
    let summary = summary(&state, &name, resamples.min(10_000)).await?;
    let q = quality(&summary, metric.as_deref())?;
    crate::view::results(&summary, q)
}

/// Reads experiment `name`'s results on `criterion` of its rubric from now on (none: each
/// verdict's aggregate, on the item's label).
#[tauri::command]
#[specta::specta]
pub async fn set_criterion(
    state: State<'_, AppState>,
    name: String,
    criterion: Option<String>,
    metric: Option<String>,
    resamples: u32,
) -> AppResult<Results> {
    let set = |c: Option<String>| {
        let mut chosen = state.criteria.lock().expect("criteria lock");
        match c {
            Some(c) => chosen.insert(name.clone(), c),
            None => chosen.remove(&name),
        }
    };
    let previous = set(criterion);
    match summary(&state, &name, resamples.min(10_000)).await {
        Ok(s) => {
            let q = quality(&s, metric.as_deref())?;
            crate::view::results(&s, q)
        }
        Err(e) => {
            // A criterion no trial asks leaves the view as it was.
            set(previous);
            Err(e)
        }
    }
}

fn find_trial(summary: &ExperimentSummary, trial_id: u32) -> AppResult<usize> {
    Ok(summary.trial_index(i64::from(trial_id))?)
}

/// Each item's human label, by item id: a trial's verdict list looks one up per verdict.
fn human_labels(summary: &ExperimentSummary) -> HashMap<&str, Label> {
    summary
        .dataset
        .items
        .iter()
        .map(|i| (i.id.as_str(), i.human_label))
        .collect()
}

fn listing(task: Task, humans: &HashMap<&str, Label>, v: &VerdictRecord) -> VerdictListing {
    let human = humans.get(v.item_id.as_str()).copied();
    let parsed = v.outcome.label();
    let (outcome, failure) = match &v.outcome {
        Outcome::Judged(Verdict::Parsed(_)) => (OutcomeKind::Verdict, None),
        Outcome::Judged(Verdict::Failed(kind)) => {
            (OutcomeKind::ParseFailure, Some(kind.name().to_string()))
        }
        Outcome::CallFailed(_) => (OutcomeKind::CallFailed, Some("call failed".to_string())),
    };
    VerdictListing {
        item_id: v.item_id.clone(),
        repeat: v.repeat,
        swapped: v.swapped,
        human: human.map(|h| h.category()).unwrap_or_default(),
        verdict: parsed.map(|l| l.category()),
        outcome,
        failure,
        correct: outcome != OutcomeKind::CallFailed
            && human.is_some_and(|h| Scored::new(task, h, parsed).correct()),
        latency_ms: v.latency_ms,
        prompt_tokens: v.prompt_tokens,
        completion_tokens: v.completion_tokens,
    }
}

#[tauri::command]
#[specta::specta]
#[allow(clippy::too_many_arguments)]
pub async fn trial_detail(
    state: State<'_, AppState>,
    name: String,
    trial_id: u32,
    metric: Option<String>,
    resamples: u32,
    filter: VerdictFilter,
    label: Option<String>,
    offset: u32,
    limit: u32,
) -> AppResult<TrialDetail> {
    let summary = summary(&state, &name, resamples.min(10_000)).await?;
    let i = find_trial(&summary, trial_id)?;
    // The trial's front and "vs best" by the metric the Results screen shows.
    let a = Analysis::new(&summary, quality(&summary, metric.as_deref())?);
    let t: &TrialSummary = &summary.trials[i];
    let (task, humans) = (summary.experiment.task_kind, human_labels(&summary));
    let all: Vec<VerdictListing> = t
        .verdicts
        .iter()
        .map(|v| listing(task, &humans, v))
        .collect();
    let mut labels: Vec<String> = all.iter().map(|v| v.human.clone()).collect();
    labels.sort();
    labels.dedup();
    let kept: Vec<VerdictListing> = all
        .into_iter()
        .filter(|v| match filter {
            VerdictFilter::All => true,
            VerdictFilter::Wrong => !v.correct,
            VerdictFilter::ParseFailures => v.outcome == OutcomeKind::ParseFailure,
            VerdictFilter::Errors => v.outcome == OutcomeKind::CallFailed,
        })
        .filter(|v| label.as_ref().is_none_or(|l| v.human == *l))
        .collect();
    let c = &t.metrics.confusion;
    let start = (offset as usize).min(kept.len());
    let end = (start + limit.min(1000) as usize).min(kept.len());
    Ok(TrialDetail {
        trial: trial_view(&a, i),
        figures: table_view(&ResultsTable::new(&a, &[]), |r| {
            r.kind == RowKind::Trial && r.id == Some(t.id)
        }),
        confusion: ConfusionView {
            rows: c.labels.clone(),
            columns: c.columns.clone(),
            counts: c
                .counts
                .iter()
                .map(|r| r.iter().map(|&n| n as u32).collect())
                .collect(),
        },
        total: kept.len() as u32,
        offset: start as u32,
        verdicts: kept[start..end].to_vec(),
        labels,
    })
}

#[tauri::command]
#[specta::specta]
pub async fn verdict_detail(
    state: State<'_, AppState>,
    name: String,
    trial_id: u32,
    item_id: String,
    repeat: u32,
    swapped: bool,
    resamples: u32,
) -> AppResult<VerdictDetail> {
    let summary = summary(&state, &name, resamples.min(10_000)).await?;
    let t = &summary.trials[find_trial(&summary, trial_id)?];
    let v = t
        .verdicts
        .iter()
        .find(|v| v.item_id == item_id && v.repeat == repeat && v.swapped == swapped)
        .ok_or_else(|| {
            AppError::not_found(format!(
                "trial #{trial_id} has no verdict for item {item_id:?}"
            ))
        })?;
    // A local trial with an input budget cut its items in its model's tokens, which
    // are not loaded here: its prompt is shown as cut by the estimate, marked unverified.
    let prompt = judgelab_engine::verdict_prompt(&state.store, &summary, (t, v), None).await?;
    let question = summary
        .dataset
        .items
        .iter()
        .find(|i| i.id == item_id)
        .map(|i| i.question.clone())
        .unwrap_or_default();
    Ok(VerdictDetail {
        listing: listing(summary.experiment.task_kind, &human_labels(&summary), v),
        question,
        messages: prompt
            .messages
            .into_iter()
            .map(|m| ChatMessage {
                role: m.role,
                content: m.content,
            })
            .collect(),
        prompt_verified: prompt.matches_record,
        raw_output: v.raw_output.clone(),
        error: v.outcome.error().map(str::to_string),
        seed: v.seed,
        ttft_ms: v.ttft_ms,
        attempts: v.attempts,
        cost_usd: v.cost_usd,
    })
}

/// Trial `first` of experiment `name` against trial `second` of `other` (default: the
/// same experiment), on the items both judged.
#[tauri::command]
#[specta::specta]
pub async fn compare_trials(
    state: State<'_, AppState>,
    name: String,
    first: u32,
    second: u32,
    metric: Option<String>,
    resamples: u32,
    other: Option<String>,
) -> AppResult<Comparison> {
    let pair = ComparedPair {
        second_experiment: other.unwrap_or_else(|| name.clone()),
        first_experiment: name,
        first,
        second,
    };
    let c = compared(&state, &pair, metric.as_deref(), resamples).await?;
    let count = |n: usize| n as u32;
    let d = &c.drift;
    let divergence = d.divergence.as_ref();
    Ok(Comparison {
        first,
        second,
        first_experiment: c.first.experiment.clone(),
        second_experiment: c.second.experiment.clone(),
        metric: c.paired.metric.name().to_string(),
        n_pairs: count(c.paired.n_pairs),
        first_only: count(c.paired.first_only),
        second_only: count(c.paired.second_only),
        mcnemar_p: c.paired.mcnemar_p,
        difference: cell(c.paired.difference),
        drift: DriftView {
            n_calls: count(d.n_pairs),
            n_items: count(d.n_items),
            only_first: count(d.only_first),
            only_second: count(d.only_second),
            failed_calls: count(d.failed_calls),
            categories: d.categories.clone(),
            matrix: d
                .matrix
                .iter()
                .map(|r| r.iter().map(|&n| count(n)).collect())
                .collect(),
            flips: count(d.flips),
            flip_rate: cell(d.flip_rate),
            toward_humans: count(d.toward_humans),
            away_from_humans: count(d.away_from_humans),
            kappa: d.kappa,
            kl_mean: divergence.map(|v| cell(v.kl_mean)),
            js_mean: divergence.map(|v| v.js_mean),
            moved: divergence
                .map(|v| {
                    v.moved
                        .iter()
                        .map(|m| MovedView {
                            item_id: m.item_id.clone(),
                            swapped: m.swapped,
                            repeat: m.repeat,
                            human: m.human.clone(),
                            first: m.first.clone(),
                            second: m.second.clone(),
                            kl: m.kl,
                            js: m.js,
                        })
                        .collect()
                })
                .unwrap_or_default(),
        },
    })
}

/// The two judges of `pair` compared by `metric` (the first experiment's default: kappa).
pub(crate) async fn compared(
    state: &AppState,
    pair: &ComparedPair,
    metric: Option<&str>,
    resamples: u32,
) -> AppResult<judgelab_core::results::comparison::Comparison> {
    let resamples = resamples.min(10_000);
    let first = summary(state, &pair.first_experiment, resamples).await?;
    let other = if pair.second_experiment == pair.first_experiment {
        None
    } else {
        Some(summary(state, &pair.second_experiment, resamples).await?)
    };
    let q = quality(&first, metric)?;
    Ok(judgelab_core::results::comparison::compare(
        (&first, i64::from(pair.first)),
        (other.as_deref().unwrap_or(&first), i64::from(pair.second)),
        q,
    )?)
}
