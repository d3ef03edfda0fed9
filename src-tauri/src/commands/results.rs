//! Results: the trials table with intervals and baselines, the Pareto charts (the report's
//! own SVG, with where each trial was drawn), a trial's confusion matrix and verdicts, one
//! verdict's prompt and output, and the paired comparison of two trials.

use std::sync::Arc;

use judgelab_core::metrics::{paired, BootstrapSpec, Estimate, Quality, Scored};
use judgelab_core::Label;
use judgelab_engine::{ExperimentSummary, TrialSummary};
use judgelab_report::analysis::{baseline_title, Analysis};
use judgelab_report::params::Param as ReportParam;
use judgelab_report::{Chart, ParetoChart};
use judgelab_store::VerdictRow;
use tauri::State;

use crate::dto::{
    BaselineView, Cell, ChartView, ChatMessage, Column, Comparison, ConfusionView, Hotspot, Param,
    Results, TrialDetail, TrialView, VerdictDetail, VerdictFilter, VerdictListing,
};
use crate::error::{AppError, AppResult};
use crate::state::{AppState, SummaryKey};

/// The chart size the app shows (the reports' SVG size).
const CHART: (u32, u32) = judgelab_report::SVG_SIZE;

/// The experiment's summary, computed once per (resamples, verdicts stored).
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
    let key = SummaryKey {
        experiment: name.to_string(),
        resamples,
        n_verdicts: state.store.count_verdicts(row.id).await?,
    };
    let mut cached = state.summary.lock().await;
    if let Some((k, s)) = cached.as_ref() {
        if *k == key {
            return Ok(Arc::clone(s));
        }
    }
    let spec = BootstrapSpec {
        resamples,
        ..BootstrapSpec::default()
    };
    let s = Arc::new(judgelab_engine::summarize(&state.store, name, &spec).await?);
    *cached = Some((key, Arc::clone(&s)));
    Ok(s)
}

/// The metric asked for, or the task's usual one (Cohen's kappa; quadratic-weighted for
/// ratings).
pub(crate) fn quality(summary: &ExperimentSummary, metric: Option<&str>) -> AppResult<Quality> {
    let task = summary.experiment.task_kind;
    let Some(metric) = metric else {
        return Ok(Quality::Kappa);
    };
    Quality::from_name(metric)
        .filter(|q| Quality::for_task(task).contains(q))
        .ok_or_else(|| {
            AppError::invalid(format!(
                "{metric:?} is not a metric of {} data",
                task.name()
            ))
        })
}

fn cell(e: Estimate) -> Cell {
    Cell {
        value: e.value,
        low: e.ci.map(|c| c.0),
        high: e.ci.map(|c| c.1),
    }
}

fn trial_view(a: &Analysis<'_>, i: usize) -> TrialView {
    let t = &a.summary.trials[i];
    let m = &t.metrics;
    let task = a.task;
    TrialView {
        id: t.id as u32,
        label: a.labels[i].clone(),
        params: ReportParam::ALL
            .into_iter()
            .map(|p| Param {
                name: p.name().to_string(),
                value: p.text(&t.params),
            })
            .collect(),
        quality: Quality::for_task(task)
            .iter()
            .map(|&q| cell(m.estimate(q)))
            .collect(),
        n: m.n as u32,
        n_errors: m.n_errors as u32,
        parse_failure_rate: m.parse_failure_rate,
        prompt_tokens_per_item: m.prompt_tokens_per_item,
        completion_tokens_per_item: m.completion_tokens_per_item,
        usd_per_1k_items: m.usd_per_1k_items,
        latency_p50: m.latency_ms.p50,
        latency_p95: m.latency_ms.p95,
        ttft_p95: m.ttft_ms.p95,
        front: a.front_cost[i].as_str().to_string(),
        best: a.best == Some(i),
        recommended: a.recommended == Some(i),
        vs_best: a.versus_best[i].as_ref().map(|c| cell(c.difference)),
        consistency: m.position.as_ref().and_then(|p| p.consistency),
        first_preferred: m.position.as_ref().and_then(|p| p.first_preferred),
    }
}

fn chart_view(summary: &ExperimentSummary, chart: ParetoChart) -> AppResult<ChartView> {
    let (svg, spots) = judgelab_report::svg_with_hotspots(&Chart::Pareto(chart), CHART.0, CHART.1)?;
    Ok(ChartView {
        svg,
        width: CHART.0,
        height: CHART.1,
        hotspots: spots
            .into_iter()
            .map(|s| Hotspot {
                trial_id: summary.trials[s.index].id as u32,
                x: s.x,
                y: s.y,
                r: s.r,
            })
            .collect(),
    })
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
    let a = Analysis::new(&summary, q);
    let task = a.task;
    let qualities = Quality::for_task(task);
    let e = &summary.experiment;
    Ok(Results {
        name: e.name.clone(),
        dataset: e.dataset.clone(),
        task: e.task.to_string(),
        n_items: e.n_items as u32,
        n_expected: e.n_expected as u32,
        n_stored: e.n_stored as u32,
        spec: e.spec.clone(),
        metric: q.name().to_string(),
        columns: qualities
            .iter()
            .map(|q| Column {
                key: q.name().to_string(),
                title: q.title(task).to_string(),
            })
            .collect(),
        baselines: summary
            .baselines
            .values()
            .map(|b| BaselineView {
                title: baseline_title(b),
                quality: qualities.iter().map(|&q| cell(b.quality.get(q))).collect(),
            })
            .collect(),
        trials: (0..summary.trials.len())
            .map(|i| trial_view(&a, i))
            .collect(),
        findings: a.findings.clone(),
        pareto_cost: chart_view(&summary, a.pareto_chart(a.cost))?,
        pareto_latency: chart_view(&summary, a.pareto_chart(a.latency))?,
        cost_title: a.cost.title(task),
        resamples: summary.bootstrap.resamples,
    })
}

fn find_trial(summary: &ExperimentSummary, trial_id: u32) -> AppResult<usize> {
    summary
        .trials
        .iter()
        .position(|t| t.id == i64::from(trial_id))
        .ok_or_else(|| AppError::not_found(format!("no trial #{trial_id} in this experiment")))
}

fn listing(summary: &ExperimentSummary, v: &VerdictRow) -> VerdictListing {
    let task = summary.experiment.task_kind;
    let human = summary
        .dataset
        .items
        .iter()
        .find(|i| i.id == v.item_id)
        .map(|i| i.human_label);
    let parsed = v.verdict.as_deref().and_then(Label::from_text);
    VerdictListing {
        item_id: v.item_id.clone(),
        repeat: v.repeat,
        swapped: v.swapped,
        human: human.map(|h| h.category()).unwrap_or_default(),
        verdict: parsed.map(|l| l.category()),
        failure: v
            .error
            .as_ref()
            .map(|_| "call failed".to_string())
            .or_else(|| v.failure_kind.clone()),
        correct: v.error.is_none() && human.is_some_and(|h| Scored::new(task, h, parsed).correct()),
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
    resamples: u32,
    filter: VerdictFilter,
    label: Option<String>,
    offset: u32,
    limit: u32,
) -> AppResult<TrialDetail> {
    let summary = summary(&state, &name, resamples.min(10_000)).await?;
    let i = find_trial(&summary, trial_id)?;
    let a = Analysis::new(&summary, Quality::Kappa);
    let t: &TrialSummary = &summary.trials[i];
    let all: Vec<VerdictListing> = t.verdicts.iter().map(|v| listing(&summary, v)).collect();
    let mut labels: Vec<String> = all.iter().map(|v| v.human.clone()).collect();
    labels.sort();
    labels.dedup();
    let kept: Vec<VerdictListing> = all
        .into_iter()
        .filter(|v| match filter {
            VerdictFilter::All => true,
            VerdictFilter::Wrong => !v.correct,
            VerdictFilter::ParseFailures => {
                v.verdict.is_none() && v.failure.as_deref() != Some("call failed")
            }
            VerdictFilter::Errors => v.failure.as_deref() == Some("call failed"),
        })
        .filter(|v| label.as_ref().is_none_or(|l| v.human == *l))
        .collect();
    let c = &t.metrics.confusion;
    let start = (offset as usize).min(kept.len());
    let end = (start + limit.min(1000) as usize).min(kept.len());
    Ok(TrialDetail {
        trial: trial_view(&a, i),
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
    let prompt = judgelab_engine::verdict_prompt(&state.store, &summary, t, v).await?;
    let question = summary
        .dataset
        .items
        .iter()
        .find(|i| i.id == item_id)
        .map(|i| i.question.clone())
        .unwrap_or_default();
    Ok(VerdictDetail {
        listing: listing(&summary, v),
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
        error: v.error.clone(),
        seed: v.seed,
        ttft_ms: v.ttft_ms,
        attempts: v.attempts,
        cost_usd: v.cost_usd,
    })
}

#[tauri::command]
#[specta::specta]
pub async fn compare_trials(
    state: State<'_, AppState>,
    name: String,
    first: u32,
    second: u32,
    metric: Option<String>,
    resamples: u32,
) -> AppResult<Comparison> {
    let summary = summary(&state, &name, resamples.min(10_000)).await?;
    let q = quality(&summary, metric.as_deref())?;
    let (a, b) = (find_trial(&summary, first)?, find_trial(&summary, second)?);
    let c = paired::compare(
        summary.experiment.task_kind,
        &summary.trials[a].observations,
        &summary.trials[b].observations,
        q,
        &summary.bootstrap,
    );
    Ok(Comparison {
        first,
        second,
        metric: q.name().to_string(),
        n_pairs: c.n_pairs as u32,
        first_only: c.first_only as u32,
        second_only: c.second_only as u32,
        mcnemar_p: c.mcnemar_p,
        difference: cell(c.difference),
    })
}
