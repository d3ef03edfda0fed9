//! The summaries the report's tests read, built in code: 200 pairwise items, trials that
//! are right on the items a rule says, and the fixed summary the renderers' snapshots show.

use std::collections::BTreeMap;

use judgelab_core::annotation::Labels;
use judgelab_core::metrics::baseline;
use judgelab_core::metrics::Quality;
use judgelab_core::metrics::{self, BootstrapSpec, Estimate, Observation};
use judgelab_core::results::robustness::{ItemWording, WordingGroup};
use judgelab_core::results::{ExperimentInfo, ExperimentSummary, TrialSummary};
use judgelab_core::verdict::FailureKind;
use judgelab_core::{Choice, Dataset, Item, Label, Task, TrialParams, Verdict};

pub const N: usize = 200;

pub fn item(i: usize) -> Item {
    Item {
        id: format!("i{i}"),
        question: "q".into(),
        // Answer A is always the longer, so "the longer answer wins" says A every time.
        answer_a: Some("a longer answer".into()),
        answer_b: Some("short".into()),
        answer: None,
        reference: None,
        human_label: Label::Choice(if i.is_multiple_of(2) {
            Choice::A
        } else {
            Choice::B
        }),
        human_labels: Default::default(),
        meta: serde_json::Value::Null,
    }
}

/// A trial whose judge is right on the items `right` says, at `tokens` prompt tokens a call.
pub fn trial(
    id: i64,
    temperature: f64,
    tokens: u32,
    right: impl Fn(usize) -> bool,
) -> TrialSummary {
    let observations: Vec<Observation> = (0..N)
        .map(|i| {
            let human = item(i).human_label;
            let wrong = Label::Choice(if human == Label::Choice(Choice::A) {
                Choice::B
            } else {
                Choice::A
            });
            Observation {
                unit: i,
                repeat: 0,
                swapped: false,
                human,
                verdict: Some(Verdict::Parsed(if right(i) { human } else { wrong })),
                prompt_tokens: tokens,
                completion_tokens: 1,
                latency_ms: 100.0,
                ttft_ms: Some(50.0),
                cost_usd: None,
                distribution: None,
                belief: None,
                order: judgelab_core::Order::Ab,
            }
        })
        .collect();
    TrialSummary {
        id,
        trial_idx: id as usize - 1,
        params: TrialParams {
            judge: "default".into(),
            template: "pairwise".into(),
            temperature,
            top_p: 1.0,
            max_tokens: 4,
            few_shot: 0,
            few_shot_max_tokens: None,
            few_shot_set: 0,
            order: Default::default(),
            constraint: Default::default(),
            concurrency: None,
            exact: false,
            style: Default::default(),
            quantization: None,
            input_max_tokens: None,
            input_strategy: Default::default(),
        },
        model_sha256: None,
        model_bytes: None,
        template_hash: String::new(),
        judge_identity: None,
        device: None,
        examples: vec![],
        metrics: metrics::compute(
            Task::Pairwise,
            &observations,
            metrics::Timing::Calls { concurrency: 1 },
            &BootstrapSpec::default(),
        ),
        split_scores: Default::default(),
        test_role: None,
        dropped: None,
        calibration: None,
        selective: None,
        verdicts: Default::default(),
        unlabelled_verdicts: vec![],
        latencies: observations.iter().map(|o| o.latency_ms).collect(),
        observations,
        test_observations: vec![],
        criteria: Default::default(),
        coverage: None,
        inputs_cut: None,
        weights: None,
        item_weights: None,
        drift: None,
    }
}

const SPEC: &str = "name = \"e\"\ndataset = \"d\"\n[judge]\ntemplate = \"pairwise\"\n";

pub fn summary(trials: Vec<TrialSummary>) -> ExperimentSummary {
    let items: Vec<Item> = (0..N).map(item).collect();
    let refs: Vec<&Item> = items.iter().collect();
    let spec = BootstrapSpec::default();
    let baselines: BTreeMap<&'static str, baseline::Baseline> =
        baseline::baselines(Task::Pairwise, &refs, &spec)
            .into_iter()
            .map(|b| (b.name, b))
            .collect();
    ExperimentSummary {
        schema_version: judgelab_core::results::EXPORT_SCHEMA_VERSION,
        experiment: ExperimentInfo {
            name: "e".into(),
            dataset: "d".into(),
            task: "pairwise",
            task_kind: Task::Pairwise,
            created_at: String::new(),
            n_items: N,
            n_test_items: 0,
            selected: false,
            strategy: Default::default(),
            repeats: 1,
            few_shot_pool: vec![],
            judged: items.iter().map(|i| i.id.clone()).collect(),
            test: vec![],
            n_expected: N * trials.len(),
            n_stored: N * trials.len(),
            spec: SPEC.into(),
            parsed: judgelab_core::Experiment::from_toml("e.toml", SPEC).unwrap(),
        },
        bootstrap: spec,
        baselines,
        trials,
        cascades: vec![],
        panels: vec![],
        load_ramps: vec![],
        race: vec![],
        dataset: Dataset {
            name: "d".into(),
            task: Task::Pairwise,
            items,
            unlabelled: vec![],
            criteria: vec![],
            content_hash: String::new(),
            source: String::new(),
        },
        labels: Default::default(),
        humans: None,
        robustness: Vec::new(),
    }
}

/// `trial` with the judge's belief in each verdict: sure (0.97) where right, unsure (0.6)
/// where wrong, and the calibration and selective reading that follow from it.
pub fn believed(mut t: TrialSummary) -> TrialSummary {
    use judgelab_core::trust::{calibration, confidence, selective, Belief, ConfidenceKind};
    for o in &mut t.observations {
        let verdict = o.verdict.and_then(|v| v.label()).unwrap();
        let other = Label::Choice(if verdict == Label::Choice(Choice::A) {
            Choice::B
        } else {
            Choice::A
        });
        let p = if verdict == o.human { 0.97 } else { 0.6 };
        o.belief = Some(Belief {
            kind: ConfidenceKind::Exact,
            labels: vec![(verdict, p), (other, 1.0 - p)],
            failed: 0.0,
        });
    }
    let (_, judged) = confidence::judged(Task::Pairwise, &t.observations);
    let spec = BootstrapSpec::default();
    t.calibration = calibration::calibration(ConfidenceKind::Exact, &judged, &spec);
    t.selective = selective::selective(&judged, None, Default::default());
    t
}

/// `t` with the verdicts on the items `failed` says turned into parse failures (no label
/// in the output), and its metrics computed again.
pub fn failing(mut t: TrialSummary, failed: impl Fn(usize) -> bool) -> TrialSummary {
    for o in t.observations.iter_mut().filter(|o| failed(o.unit)) {
        o.verdict = Some(Verdict::Failed(FailureKind::NoLabel));
    }
    t.metrics = metrics::compute(
        Task::Pairwise,
        &t.observations,
        metrics::Timing::Calls { concurrency: 1 },
        &BootstrapSpec::default(),
    );
    t
}

/// The summary the renderers' snapshots show: four trials, a cascade and a panel.
/// - #1 is right on 95% of the items at 400 tokens a call, with no parse failure;
/// - #2 on 80% at 100 tokens, sure of exactly its right verdicts (so it cascades to the
///   pick);
/// - #3 on 70% at 100 tokens;
/// - #4 on 95% at 200 tokens, every item it gets wrong a parse failure: it ties with #1 in
///   accuracy as shown, so the pick is #1 (fewer parse failures), and #4, which the data
///   cannot tell from it at half the cost, is the recommendation;
/// - the cascade #2→#1 and the majority panel `vote3` of #1, #2 and #3;
/// - #4 held against #1 as its reference: its parse failures are its flips.
pub fn renderers() -> ExperimentSummary {
    let mut four = failing(trial(4, 0.0, 200, |i| i % 20 != 0), |i| i % 20 == 0);
    four.params.few_shot = 1;
    four.drift = Some(judgelab_core::results::comparison::AgainstReference {
        reference: 1,
        n_pairs: N,
        flip_rate: Estimate {
            value: Some(0.05),
            ci: Some((0.0, 0.125)),
        },
        kl_mean: Estimate::default(),
        js_mean: None,
    });
    let mut s = summary(vec![
        trial(1, 0.0, 400, |i| i % 20 != 0),
        believed(trial(2, 0.7, 100, |i| i % 5 != 0)),
        trial(3, 1.0, 100, |i| i % 10 >= 3),
        four,
    ]);
    let spec = BootstrapSpec::default();
    s.cascades =
        judgelab_core::results::cascades(Task::Pairwise, &s.trials, Quality::Accuracy, None, &spec);
    with_vote3(&mut s);
    s
}

/// `s` with the majority panel `vote3` of trials 1, 2 and 3 composed.
pub fn with_vote3(s: &mut ExperimentSummary) {
    let panel = judgelab_core::experiment::PanelSpec {
        name: "vote3".into(),
        members: vec![1, 2, 3],
        rule: Default::default(),
        ties: None,
    };
    s.panels = judgelab_core::results::panels(
        Task::Pairwise,
        &s.experiment.parsed,
        &s.trials,
        &[panel],
        &BootstrapSpec::default(),
    );
}

/// Two judges no better than chance (right on 55% and 50%): not ready; against ann's
/// labels; a paraphrase group; both kept for a test split, scored on the dev items' first
/// half (a fixture's test split need only be fixed).
pub fn chance() -> ExperimentSummary {
    let mut chance = summary(vec![
        trial(1, 0.0, 400, |i| i % 20 < 11),
        trial(2, 0.7, 100, |i| i % 20 < 10),
    ]);
    chance.labels.labels = Labels::Annotations {
        annotator: Some("ann".into()),
    };
    chance.labels.description = "ann's labels".into();
    chance.labels.n_labelled = 40;
    chance.robustness = vec![WordingGroup {
        trials: vec![1, 2],
        templates: vec!["pairwise".into(), "pairwise_paraphrase_1".into()],
        params: String::new(),
        n_items: 40,
        stable: Estimate {
            value: Some(0.875),
            ci: Some((0.75, 0.975)),
        },
        least_stable: vec![ItemWording {
            item_id: "item-7".into(),
            human: "A".into(),
            changed: 0.5,
            verdicts: vec!["A B".into()],
        }],
    }];
    chance.experiment.n_test_items = 20;
    chance.experiment.selected = true;
    for (t, role) in chance.trials.iter_mut().zip(["pick", "indistinguishable"]) {
        let half: Vec<Observation> = t
            .observations
            .iter()
            .filter(|o| o.unit < 20)
            .cloned()
            .collect();
        t.test_role = Some(role.into());
        t.split_scores.dev.quality = t.metrics.quality.clone();
        t.split_scores.test = Some(metrics::SplitScore::of(
            Task::Pairwise,
            &half,
            &BootstrapSpec::default(),
        ));
    }
    chance
}
