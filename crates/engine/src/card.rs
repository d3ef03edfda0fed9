//! Judge cards out of stored trials ([`judgelab_core::card`]): what defines the trial's
//! judge, read from the store as it judged, and what was measured of it.

use judgelab_core::card::{measured, CardTemplate, Definition, JudgeCard, Measured, Model, FORMAT};
use judgelab_core::experiment::JudgeBackend;
use judgelab_core::metrics::BootstrapSpec;
use judgelab_core::results::TrialSummary;
use judgelab_core::{Item, TrialParams};

use crate::resolve::{resolve_stored, Parts, Resolved};
use crate::{EngineError, Store};

/// The card of trial `trial_id` of the stored experiment `name`, exported now.
pub async fn export_judge(
    store: &Store,
    name: &str,
    trial_id: i64,
) -> Result<JudgeCard, EngineError> {
    let (row, info) = crate::stored_experiment(store, name).await?;
    let r = resolve_stored(store, &row).await?;
    let rows = store.trials(row.id).await?;
    let ids: Vec<String> = rows.iter().map(|t| t.id.to_string()).collect();
    let Some(trial_row) = rows.into_iter().find(|t| t.id == trial_id) else {
        return Err(EngineError::Invalid {
            path: name.to_string(),
            message: format!(
                "no trial {trial_id} in experiment {name:?} (its trials: {})",
                ids.join(", ")
            ),
        });
    };
    let parts = r.parts(&trial_row.params)?;
    let mut judge = definition(&r, parts, &trial_row.params, &trial_row.examples)?;
    if let Model::Llama { quantization, .. } = &mut judge.model {
        *quantization = crate::variants::header(&parts.judge.path)
            .as_ref()
            .and_then(crate::variants::main_type);
    }
    // The card's examples as they were, not as the experiment knew them.
    for e in &mut judge.examples {
        if let Some(id) = JudgeCard::own_id(&e.id) {
            e.id = id.to_string();
        }
    }
    let summary = crate::summarize(store, name, &BootstrapSpec::default()).await?;
    let measured = summary
        .trials
        .iter()
        .find(|t| t.id == trial_id)
        .map(|t| measured(&summary, t, &info));
    Ok(JudgeCard {
        judgelab_card: FORMAT,
        identity: judge.identity(),
        judge,
        measured,
        exported_at: store.now().await?,
        judgelab_version: env!("CARGO_PKG_VERSION").to_string(),
    })
}

/// What defines the judge of a trial with `params`, its judge and template `parts` and its
/// examples `example_ids`, as it judges (the model file's main type is left to the card).
pub(crate) fn definition(
    r: &Resolved,
    parts: Parts<'_>,
    params: &TrialParams,
    example_ids: &[String],
) -> Result<Definition, EngineError> {
    let examples = r.example_items(example_ids)?;
    let model = match &parts.judge.judge.backend {
        JudgeBackend::Llama(local) => Model::Llama {
            file: parts
                .judge
                .path
                .file_name()
                .map_or(String::new(), |f| f.to_string_lossy().into_owned()),
            sha256: parts.judge.sha256.clone(),
            quantization: None,
            context_size: local.context_size,
            reproducible: local.reproducible,
        },
        JudgeBackend::OpenAi(remote) => Model::Openai {
            model: remote.model.clone(),
            endpoint: serde_json::to_value(&remote.endpoint).expect("an endpoint serialises"),
        },
    };
    Ok(Definition {
        name: parts.judge.name().to_string(),
        task: r.dataset.task,
        allow_tie: r.allow_tie(),
        output: r.output,
        template: CardTemplate {
            name: parts.template.name.clone(),
            source: parts.template.source.clone(),
        },
        params: params.clone(),
        examples: examples.into_iter().cloned().collect::<Vec<Item>>(),
        model,
    })
}

/// What was measured of the trial: where (the experiment, its dataset and split) and how
/// well (agreement with intervals on dev and test, parse failures, calibration, the
/// selective threshold, tokens, cost and latency).
fn measured(
    summary: &judgelab_core::results::ExperimentSummary,
    t: &TrialSummary,
    info: &judgelab_store::DatasetInfo,
) -> Measured {
    let metric = summary.experiment.parsed.selection.metric;
    let score = |n: usize, q: &judgelab_core::metrics::Qualities| {
        let e = q.get(metric);
        measured::Score {
            n,
            value: e.value,
            ci: e.ci.map(|(lo, hi)| [lo, hi]),
        }
    };
    let m = &t.metrics;
    let e = &summary.experiment;
    Measured {
        experiment: e.name.clone(),
        trial: t.id,
        dataset: measured::Data {
            name: info.name.clone(),
            content_hash: info.content_hash.clone(),
            n_items: info.n_items,
        },
        split: measured::Split {
            dev_items: e.n_items,
            test_items: e.n_test_items,
            few_shot_pool: e.few_shot_pool.len(),
            repeats: e.repeats,
        },
        metric,
        dev: score(t.split_scores.dev.n, &t.split_scores.dev.quality),
        test: t.split_scores.test.as_ref().map(|s| score(s.n, &s.quality)),
        parse_failure_rate: m.parse_failure_rate,
        failed_calls: m.n_errors,
        calibration: t.calibration.as_ref().map(|c| measured::Calibration {
            confidence: c.confidence_kind,
            ece: c.ece,
            ece_ci: c.ece_ci,
            brier: c.brier,
            brier_ci: c.brier_ci,
        }),
        selective: t.selective.as_ref().map(|s| measured::Selective {
            target: s.target,
            threshold: s.threshold,
            dev: s.dev,
            test: s.test,
        }),
        prompt_tokens_per_item: m.prompt_tokens_per_item,
        completion_tokens_per_item: m.completion_tokens_per_item,
        usd_per_1k_items: m.usd_per_1k_items,
        latency_ms: m.latency_ms.clone(),
        latency_concurrency: m.latency_concurrency,
        device: t.device.clone(),
        load_ramps: summary
            .load_ramps
            .iter()
            .filter(|r| r.trial_id == t.id)
            .map(|r| measured::Ramp {
                created_at: r.created_at.clone(),
                knee: r.ramp.knee,
                slo_ms: r.ramp.slo_ms,
                levels: r
                    .ramp
                    .levels
                    .iter()
                    .map(|l| measured::Level {
                        concurrency: l.concurrency,
                        throughput_vps: l.throughput_vps,
                        latency_ms: l.latency_ms.clone(),
                        error_rate: l.error_rate,
                    })
                    .collect(),
            })
            .collect(),
    }
}
