//! Summaries of stored experiments: reads an experiment's trials, verdicts and calls timed
//! alone from the store and hands them to `core::results`, which computes each trial's
//! metrics (with bootstrap intervals) and the baselines every trial is shown beside,
//! against the labels asked for (the dataset's, or the labelling queue's), with the
//! human ceiling where people have labelled its dataset in the queue. A rubric's trials
//! are also scored on each criterion they ask, and can be read on one of them.

use std::collections::BTreeMap;

use judgelab_core::annotation::{self, humans, Annotation, Labels};
use judgelab_core::load::{LevelRun, LoadRamp, StoredRamp};
use judgelab_core::metrics::latency::Timed;
use judgelab_core::metrics::BootstrapSpec;
use judgelab_core::record::VerdictRecord;
use judgelab_core::results::{
    criteria, weighted, ExperimentSummary, LabelsUsed, ResultsError, StoredExperiment, StoredTrial,
};
use judgelab_core::Dataset;
use judgelab_store::{ExperimentRow, RampRow, Store, TrialRow};

use crate::EngineError;

/// Summarises the stored experiment `name` against its dataset's labels, with intervals
/// drawn as `bootstrap` says.
pub async fn summarize(
    store: &Store,
    name: &str,
    bootstrap: &BootstrapSpec,
) -> Result<ExperimentSummary, EngineError> {
    summarize_against(store, name, bootstrap, &Labels::Original, None).await
}

/// As [`summarize`], against the labels `labels` names, on the item's one label or on
/// `criterion` of the dataset's (a rubric's trials' verdicts on it, against the dataset's
/// labels on it).
pub async fn summarize_against(
    store: &Store,
    name: &str,
    bootstrap: &BootstrapSpec,
    labels: &Labels,
    criterion: Option<&str>,
) -> Result<ExperimentSummary, EngineError> {
    open(store, name)
        .await?
        .summarize(bootstrap, labels, criterion)
}

/// A stored experiment as read, before any figure is computed from it: what its summaries
/// need, read once, so that the app's view without intervals and the view with them (or
/// on other labels) share one reading.
#[derive(Clone)]
pub struct Opened {
    /// The experiment, its load ramps not yet measured (`ramps`).
    stored: StoredExperiment,
    ramps: Vec<(RampRow, Vec<LevelRun>)>,
    /// The dataset as imported, and every label given in the labelling queue.
    original: Dataset,
    annotations: Vec<Annotation>,
    trials: Vec<StoredTrial>,
    /// The yes/no questions of each trial's checklist items, by template hash.
    questions: BTreeMap<String, BTreeMap<String, String>>,
}

/// Reads the stored experiment `name`: its trials' verdicts, each on a thread of its own,
/// while the dataset loads (opening a million verdicts is mostly reading).
pub async fn open(store: &Store, name: &str) -> Result<Opened, EngineError> {
    let (row, info) = crate::stored_experiment(store, name).await?;
    crate::panels::check(store, &row).await?;
    let trial_rows = store.trials(row.id).await?;
    let reads: Vec<_> = trial_rows
        .iter()
        .map(|t| {
            let (store, id) = (store.clone(), t.id);
            tokio::spawn(async move { store.verdicts(id).await })
        })
        .collect();
    let timed = timed_at_own_load(store, &trial_rows).await?;
    let original = store.load_dataset(&info).await?;
    let annotations = store.annotations(info.id).await?;
    let mut questions = BTreeMap::new();
    for t in &trial_rows {
        if !questions.contains_key(&t.template_hash) {
            let asked = item_questions(store, &t.template_hash).await?;
            questions.insert(t.template_hash.clone(), asked);
        }
    }
    let mut trials = Vec::with_capacity(reads.len());
    for ((t, read), timed) in trial_rows.into_iter().zip(reads).zip(timed) {
        let verdicts = read.await.expect("reading verdicts does not panic")?;
        trials.push(stored_trial(t, verdicts, timed));
    }
    let ramps = store.load_ramps(row.id).await?;
    Ok(Opened {
        stored: stored_experiment(store, row).await?,
        ramps,
        original,
        annotations,
        trials,
        questions,
    })
}

impl Opened {
    /// Its summary against `labels`, on `criterion` or the item's one label, with
    /// intervals drawn as `bootstrap` says; what it read stays as it was (the verdicts are
    /// shared, the dataset is copied once, to be relabelled).
    pub fn summarize(
        &self,
        bootstrap: &BootstrapSpec,
        labels: &Labels,
        criterion: Option<&str>,
    ) -> Result<ExperimentSummary, EngineError> {
        let Opened {
            stored,
            ramps,
            original,
            annotations,
            trials,
            questions,
        } = self;
        let (mut stored, trials) = (stored.clone(), trials.clone());
        stored.load_ramps = measured_ramps(ramps.clone(), bootstrap);
        let dataset = annotation::relabel(original.clone(), annotations, labels)?;
        if let Some(criterion) = criterion {
            return on_criterion(stored, dataset, trials, bootstrap, labels, criterion);
        }
        let n_labelled = dataset.items.len();
        let metric = stored.experiment.selection.metric;
        let asked = criteria::asked(&dataset, &trials);
        let scores = criteria::scores(&stored, &dataset, &trials, bootstrap);
        // A checklist's calls on one verdict are read as one call on the item's label.
        let trials = criteria::gathered(&dataset, trials);
        let mut summary = ExperimentSummary::new(stored, dataset, trials, bootstrap);
        for (trial, scores) in summary.trials.iter_mut().zip(scores) {
            trial.criteria = scores;
        }
        learn_weights(&mut summary, questions);
        // The pick with each rater: the trial a researcher would take, against each person.
        let pick = summary.pick(metric).map(|i| summary.trials[i].judged());
        let from_file = humans::from_file(original, None);
        summary.humans =
            humans::human_agreement(original, annotations, &from_file, pick.as_ref(), bootstrap);
        summary.labels = LabelsUsed {
            labels: labels.clone(),
            description: labels.describe(),
            annotators: annotation::annotators(annotations),
            n_labelled,
            criterion: None,
            criteria: asked,
        };
        Ok(summary)
    }
}

/// Each trial's calls timed at its own load: alone, or at the level the sweep sets.
async fn timed_at_own_load(
    store: &Store,
    trial_rows: &[TrialRow],
) -> Result<Vec<Vec<Timed>>, EngineError> {
    let mut timed = Vec::with_capacity(trial_rows.len());
    for t in trial_rows {
        let level = t.params.concurrency.unwrap_or(1);
        let calls = store.timed_calls(t.id).await?;
        timed.push(
            calls
                .iter()
                .filter(|c| c.concurrency == level)
                .filter_map(|c| c.request.timed())
                .collect(),
        );
    }
    Ok(timed)
}

/// A stored trial with its verdicts and timed calls, as `core::results` reads it.
fn stored_trial(t: TrialRow, verdicts: Vec<VerdictRecord>, timed: Vec<Timed>) -> StoredTrial {
    StoredTrial {
        id: t.id,
        trial_idx: t.trial_idx,
        params: t.params,
        model_bytes: t
            .model_sha256
            .is_some()
            .then(|| std::fs::metadata(&t.model_path).ok().map(|m| m.len()))
            .flatten(),
        model_sha256: t.model_sha256,
        template_hash: t.template_hash,
        examples: t.examples,
        judge_identity: t.judge_identity,
        device: t.device,
        verdicts: std::sync::Arc::new(verdicts),
        timed,
        test_role: t.test_role,
    }
}

/// The experiment's row with what the store keeps beside it: its race and panels (its
/// load ramps are measured when it is summarised: [`measured_ramps`]).
async fn stored_experiment(
    store: &Store,
    row: ExperimentRow,
) -> Result<StoredExperiment, EngineError> {
    Ok(StoredExperiment {
        race: store.race_standings(row.id).await?,
        panels: store.panels(row.id).await?,
        name: row.name,
        experiment: row.experiment,
        spec: row.spec,
        created_at: row.created_at,
        pool: row.pool,
        judged: row.judged,
        test: row.test,
        selected: row.selected,
        load_ramps: Vec::new(),
    })
}

/// Each load ramp as stored, measured (its levels' figures, with intervals as `bootstrap`
/// says).
fn measured_ramps(
    ramps: Vec<(RampRow, Vec<LevelRun>)>,
    bootstrap: &BootstrapSpec,
) -> Vec<StoredRamp> {
    ramps
        .into_iter()
        .map(|(ramp, runs)| StoredRamp {
            id: ramp.id,
            trial_id: ramp.trial_id,
            created_at: ramp.created_at,
            requests: ramp.requests,
            ramp: LoadRamp::new(&runs, ramp.slo_ms, bootstrap),
        })
        .collect()
}

/// Each trial's criterion weights (and a checklist's item weights, with their questions)
/// learnt on the dev split.
fn learn_weights(
    summary: &mut ExperimentSummary,
    questions: &BTreeMap<String, BTreeMap<String, String>>,
) {
    let weights: Vec<_> = summary
        .trials
        .iter()
        .map(|t| {
            (
                weighted::learn(summary, t),
                weighted::learn_items(summary, t),
            )
        })
        .collect();
    for (trial, (weights, items)) in summary.trials.iter_mut().zip(weights) {
        trial.weights = weights;
        trial.item_weights = items;
        if let Some(items) = &mut trial.item_weights {
            items.questions = questions
                .get(&trial.template_hash)
                .cloned()
                .unwrap_or_default();
        }
    }
}

/// The yes/no questions of the checklist items the template stored as `hash` declares, by
/// call name (`NAME/k`).
async fn item_questions(
    store: &Store,
    hash: &str,
) -> Result<BTreeMap<String, String>, EngineError> {
    let Some(template) = store.template(hash).await? else {
        return Ok(Default::default());
    };
    Ok(judgelab_core::rubric::items::questions(&template.criteria()?).collect())
}

/// The experiment read on one criterion of its rubric: against the dataset's labels on it,
/// each trial by its verdicts on it ([`criteria::on`]).
fn on_criterion(
    stored: StoredExperiment,
    dataset: Dataset,
    trials: Vec<StoredTrial>,
    bootstrap: &BootstrapSpec,
    labels: &Labels,
    name: &str,
) -> Result<ExperimentSummary, EngineError> {
    let asked = criteria::asked(&dataset, &trials);
    let criterion = asked
        .iter()
        .find(|c| c.name == name)
        .ok_or_else(|| ResultsError::NoCriterion {
            name: name.to_string(),
            asked: if asked.is_empty() {
                "none does".to_string()
            } else {
                asked
                    .iter()
                    .map(|c| c.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            },
        })?
        .clone();
    if *labels != Labels::Original {
        return Err(ResultsError::CriterionLabels(name.to_string()).into());
    }
    let (dataset, trials) = criteria::on(&dataset, &trials, &criterion);
    let metric = stored.experiment.selection.metric;
    let mut summary = ExperimentSummary::new(stored, dataset, trials, bootstrap);
    // The people whose labels on the criterion the file keeps, and the pick with each.
    let from_file = humans::from_file(&summary.dataset, Some(name));
    let pick = summary.pick(metric).map(|i| summary.trials[i].judged());
    summary.humans =
        humans::human_agreement(&summary.dataset, &[], &from_file, pick.as_ref(), bootstrap);
    summary.labels.description = format!("the dataset's labels on {}", criterion.describe());
    summary.labels.criterion = Some(criterion);
    summary.labels.criteria = asked;
    Ok(summary)
}
