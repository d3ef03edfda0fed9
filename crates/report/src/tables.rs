//! `trials.csv` (one row per trial: parameters, every metric with its interval, fronts) and
//! `verdicts.csv` (one row per call), for spreadsheets and scripts.

use judgelab_core::metrics::Quality;
use judgelab_core::results::EXPORT_SCHEMA_VERSION;
use judgelab_core::Label;

use crate::analysis::Analysis;
use crate::ReportError;
use judgelab_core::sweep::Axis;

fn opt(x: Option<f64>) -> String {
    x.map_or(String::new(), |v| v.to_string())
}

/// A trial's or a cascade's metrics, from `n` to `first_preferred`.
fn metric_cells(a: &Analysis<'_>, m: &judgelab_core::metrics::TrialMetrics) -> Vec<String> {
    let mut row = vec![m.n.to_string(), m.n_errors.to_string()];
    for &q in Quality::for_task(a.task) {
        let e = m.estimate(q);
        row.extend([opt(e.value), opt(e.ci.map(|c| c.0)), opt(e.ci.map(|c| c.1))]);
    }
    let position = m.position.as_ref();
    row.extend([
        opt(m.parse_failure_rate),
        opt(m.prompt_tokens_per_item),
        opt(m.completion_tokens_per_item),
        opt(m.usd_per_1k_items),
        opt(m.latency_ms.p50),
        opt(m.latency_ms.p95),
        opt(m.latency_ms.p99),
        opt(m.ttft_ms.p50),
        opt(m.ttft_ms.p95),
        opt(m.ttft_ms.p99),
        opt(m.latency_concurrency.map(f64::from)),
        m.latency_ms.n.to_string(),
        opt(m.latency_ms.p95_ci.map(|c| c[0])),
        opt(m.latency_ms.p95_ci.map(|c| c[1])),
        opt(position.and_then(|p| p.consistency)),
        opt(position.and_then(|p| p.first_preferred)),
    ]);
    row
}

pub fn trials_csv(a: &Analysis<'_>) -> Result<Vec<u8>, ReportError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let qualities = Quality::for_task(a.task);
    let mut header: Vec<String> = vec!["trial_id".into(), "trial_idx".into()];
    header.extend(Axis::ALL.iter().map(|p| p.export().to_string()));
    header.extend(["n".into(), "n_errors".into()]);
    for q in qualities {
        header.extend([
            q.name().to_string(),
            format!("{}_ci_low", q.name()),
            format!("{}_ci_high", q.name()),
        ]);
    }
    header.extend(
        [
            "parse_failure_rate",
            "prompt_tokens_per_item",
            "completion_tokens_per_item",
            "usd_per_1k_items",
            "latency_p50_ms",
            "latency_p95_ms",
            "latency_p99_ms",
            "ttft_p50_ms",
            "ttft_p95_ms",
            "ttft_p99_ms",
            "latency_concurrency",
            "latency_n",
            "latency_p95_ci_low_ms",
            "latency_p95_ci_high_ms",
            "position_consistency",
            "first_preferred",
            "front_quality_cost",
            "front_quality_latency",
            &format!("{}_minus_best", a.quality.name()),
            &format!("{}_minus_best_ci_low", a.quality.name()),
            &format!("{}_minus_best_ci_high", a.quality.name()),
            "mcnemar_p_vs_best",
            "confidence_kind",
            "ece",
            "brier",
            "selective_threshold",
            "selective_coverage",
            "selective_agreement",
            "selective_test_coverage",
            "selective_test_agreement",
            "cascade_cheap",
            "cascade_strong",
            "cascade_escalated",
            "panel",
            "panel_rule",
            "panel_members",
            "panel_members_alpha",
            "schema_version",
        ]
        .map(String::from),
    );
    w.write_record(&header)?;
    for (i, t) in a.summary.trials.iter().enumerate() {
        let m = &t.metrics;
        let mut row: Vec<String> = vec![t.id.to_string(), t.trial_idx.to_string()];
        row.extend(Axis::ALL.iter().map(|p| p.text(&t.params)));
        row.extend(metric_cells(a, m));
        let vs = a.versus_best[i].as_ref();
        let (calibration, selective) = (t.calibration.as_ref(), t.selective.as_ref());
        row.extend([
            a.front_cost[i].as_str().to_string(),
            a.front_latency[i].as_str().to_string(),
            opt(vs.and_then(|c| c.difference.value)),
            opt(vs.and_then(|c| c.difference.ci.map(|x| x.0))),
            opt(vs.and_then(|c| c.difference.ci.map(|x| x.1))),
            opt(vs.map(|c| c.mcnemar_p)),
            calibration.map_or(String::new(), |c| c.confidence_kind.name().to_string()),
            opt(calibration.and_then(|c| c.ece)),
            opt(calibration.and_then(|c| c.brier)),
            opt(selective.and_then(|s| s.threshold)),
            opt(selective.and_then(|s| s.dev).map(|d| d.coverage)),
            opt(selective.and_then(|s| s.dev?.agreement)),
            opt(selective.and_then(|s| s.test).map(|d| d.coverage)),
            opt(selective.and_then(|s| s.test?.agreement)),
            String::new(),
            String::new(),
            String::new(),
        ]);
        row.extend(vec![String::new(); 4]);
        row.push(EXPORT_SCHEMA_VERSION.to_string());
        w.write_record(&row)?;
    }
    // Cascades: composed rows, with no id or parameters of their own.
    for c in &a.summary.cascades {
        let m = &c.metrics;
        let mut row: Vec<String> = vec![String::new(); 2 + Axis::ALL.len()];
        row.extend(metric_cells(a, m));
        row.extend(["composed".to_string(), "composed".to_string()]);
        row.extend(vec![String::new(); 7]);
        row.push(opt(Some(c.threshold)));
        row.extend(vec![String::new(); 4]);
        row.extend([c.cheap.to_string(), c.strong.to_string(), opt(c.escalated)]);
        row.extend(vec![String::new(); 4]);
        row.push(EXPORT_SCHEMA_VERSION.to_string());
        w.write_record(&row)?;
    }
    // Panels: composed rows, named, with their members.
    for (i, p) in a.summary.panels.iter().enumerate() {
        let m = &p.metrics;
        let mut row: Vec<String> = vec![String::new(); 2 + Axis::ALL.len()];
        row.extend(metric_cells(a, m));
        row.extend(["composed".to_string(), "composed".to_string()]);
        let vs = a.panel_versus_best[i].as_ref();
        let calibration = p.calibration.as_ref();
        row.extend([
            opt(vs.and_then(|c| c.difference.value)),
            opt(vs.and_then(|c| c.difference.ci.map(|x| x.0))),
            opt(vs.and_then(|c| c.difference.ci.map(|x| x.1))),
            opt(vs.map(|c| c.mcnemar_p)),
            calibration.map_or(String::new(), |c| c.confidence_kind.name().to_string()),
            opt(calibration.and_then(|c| c.ece)),
            opt(calibration.and_then(|c| c.brier)),
        ]);
        row.extend(vec![String::new(); 5 + 3]);
        let members: Vec<String> = p.members.iter().map(i64::to_string).collect();
        row.extend([
            p.name.clone(),
            p.rule.name().to_string(),
            members.join(" "),
            opt(p.members_agreement.alpha.value),
            EXPORT_SCHEMA_VERSION.to_string(),
        ]);
        w.write_record(&row)?;
    }
    w.into_inner().map_err(|e| ReportError::Csv(e.to_string()))
}

pub fn verdicts_csv(a: &Analysis<'_>) -> Result<Vec<u8>, ReportError> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record([
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
        "raw_output",
        "schema_version",
    ])?;
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
            w.write_record([
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
                    .map_or(String::new(), |f| f.as_str().to_string()),
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
                v.raw_output.clone().unwrap_or_default(),
                EXPORT_SCHEMA_VERSION.to_string(),
            ])?;
        }
    }
    w.into_inner().map_err(|e| ReportError::Csv(e.to_string()))
}
