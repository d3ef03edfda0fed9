//! `trials.csv` (one row per trial: parameters, every metric with its interval, fronts) and
//! `verdicts.csv` (one row per call), for spreadsheets and scripts.

use judgelab_core::results::EXPORT_SCHEMA_VERSION;
use judgelab_core::Label;

use crate::analysis::Analysis;
use crate::table::{Output, ResultsTable};
use crate::ReportError;

fn opt(x: Option<f64>) -> String {
    x.map_or(String::new(), |v| v.to_string())
}

/// `trials.csv`: the results table's rows (trials, then cascades, then panels), every
/// exported column, an interval as two more columns (`…_ci_low`, `…_ci_high`).
pub fn trials_csv(table: &ResultsTable) -> Result<Vec<u8>, ReportError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let columns = table.shown(Output::Export);
    let mut header: Vec<String> = Vec::new();
    for &c in &columns {
        let column = &table.columns[c];
        header.push(column.key.clone());
        if column.interval {
            let (low, high) = column.interval_keys();
            header.extend([low, high]);
        }
    }
    w.write_record(&header)?;
    for row in &table.rows {
        let fields: Vec<String> = columns
            .iter()
            .flat_map(|&c| row.cells[c].csv(&table.columns[c]))
            .collect();
        w.write_record(&fields)?;
    }
    w.into_inner().map_err(|e| ReportError::Csv(e.to_string()))
}

/// What writing an item's summaries cost, on the first call of each (trial, item) whose
/// inputs are summaries: calls, prompt and completion tokens, dollars; empty elsewhere.
fn summary_cells(w: Option<judgelab_core::results::Written>) -> [String; 4] {
    match w {
        None => Default::default(),
        Some(w) => [
            w.calls.to_string(),
            w.prompt_tokens.to_string(),
            w.completion_tokens.to_string(),
            opt(w.cost_usd),
        ],
    }
}

pub fn verdicts_csv(a: &Analysis<'_>) -> Result<Vec<u8>, ReportError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    // A rubric's criteria, each a verdict column and a failure column beside the call's.
    let criteria: std::collections::BTreeSet<&str> = a
        .summary
        .trials
        .iter()
        .flat_map(|t| t.verdicts.iter())
        .flat_map(|v| v.criteria.keys().map(String::as_str))
        .collect();
    let mut header: Vec<String> = [
        "trial_id",
        "item_id",
        "repeat",
        "swapped",
        "human_label",
        "verdict",
        "confidence",
        "failure_kind",
        "error",
        "prompt_tokens",
        "completion_tokens",
        "latency_ms",
        "ttft_ms",
        "seed",
        "prompt_hash",
        "cost_usd",
        "cached_tokens",
        "attempts",
        "cache_hit",
        "endpoint",
        "input_cut",
        "summary_calls",
        "summary_prompt_tokens",
        "summary_completion_tokens",
        "summary_cost_usd",
    ]
    .map(String::from)
    .to_vec();
    for c in &criteria {
        header.push(format!("criterion_{c}"));
        header.push(format!("criterion_{c}_failure"));
    }
    header.extend(["raw_output", "schema_version"].map(String::from));
    w.write_record(&header)?;
    let humans: std::collections::HashMap<&str, Label> = a
        .summary
        .dataset
        .items
        .iter()
        .map(|i| (i.id.as_str(), i.human_label))
        .collect();
    let task = a.summary.experiment.task_kind;
    for t in &a.summary.trials {
        for (v, confidence) in t.verdicts.iter().zip(t.call_confidences(task)) {
            let mut row: Vec<String> = vec![
                t.id.to_string(),
                v.item_id.clone(),
                v.repeat.to_string(),
                u8::from(v.swapped).to_string(),
                humans
                    .get(v.item_id.as_str())
                    .map_or(String::new(), Label::to_text),
                v.outcome.label().map_or(String::new(), |l| l.to_text()),
                opt(confidence),
                v.outcome
                    .failure()
                    .map_or(String::new(), |f| f.name().to_string()),
                v.outcome.error().unwrap_or_default().to_string(),
                v.prompt_tokens.to_string(),
                v.completion_tokens.to_string(),
                opt(v.latency_ms),
                opt(v.ttft_ms),
                v.seed.to_string(),
                v.prompt_hash.clone(),
                opt(v.cost_usd),
                v.cached_tokens.map_or(String::new(), |n| n.to_string()),
                v.attempts.to_string(),
                u8::from(v.cache_hit).to_string(),
                v.endpoint.clone().unwrap_or_default(),
                v.input_cut.map_or(String::new(), |n| n.to_string()),
            ];
            row.extend(summary_cells(v.summaries));
            for c in &criteria {
                let verdict = v.criteria.get(*c);
                row.push(
                    verdict
                        .and_then(|v| v.label())
                        .map_or(String::new(), |l| l.to_text()),
                );
                row.push(
                    verdict
                        .and_then(|v| v.failure())
                        .map_or(String::new(), |f| f.name().to_string()),
                );
            }
            row.push(v.raw_output.clone().unwrap_or_default());
            row.push(EXPORT_SCHEMA_VERSION.to_string());
            w.write_record(&row)?;
        }
    }
    w.into_inner().map_err(|e| ReportError::Csv(e.to_string()))
}
