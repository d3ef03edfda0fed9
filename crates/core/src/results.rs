//! What a run leaves behind, as types: each call's [`VerdictRecord`] with its typed
//! [`Outcome`], and the [`ExperimentSummary`] every output reads (the CLI's table,
//! `show --json`, the report, the app). The store maps its rows to these types and back, so
//! no caller parses a verdict's text or matches an error message.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use serde::ser::{SerializeSeq, SerializeStruct};
use serde::{Serialize, Serializer};

use crate::annotation::humans::HumanAgreement;
use crate::annotation::{Judged, Labels};
use crate::composed::Part;
use crate::dataset::Criterion;
use crate::experiment::{PanelSpec, Strategy};
use crate::load::StoredRamp;
use crate::metrics::baseline::{self, Baseline};
use crate::metrics::{
    self, BootstrapSpec, Estimate, Observation, Quality, Timed, Timing, TrialMetrics,
};
pub use crate::metrics::{SplitScore, SplitScores};
use crate::panel::{self, Panel};
use crate::parallel;
use crate::pareto::{self, Cost, FrontStatus, Objective};
use crate::race::RoundStanding;
pub use crate::record::{Outcome, TimedCall, VerdictRecord, Written};
use crate::selection::{self, Corrected, Ties};
use crate::sweep::Order;
use crate::trust::cascade::Cascade;
use crate::trust::estimate::EstimateError;
use crate::trust::unlabelled::{self, Population};
use crate::trust::{self, confidence, Calibration, Selective};
use crate::{Dataset, Experiment, Item, Label, Task, TrialParams};

pub mod comparison;
pub mod coverage;
pub mod criteria;
pub mod robustness;
pub mod weighted;
pub use criteria::CriterionScore;

/// The version of the exported formats (`show --json`, `trials.csv`, `verdicts.csv`).
/// Raised when a field changes meaning or goes away; new fields keep it. Version 1 is the
/// first versioned one; exports without a version came before it and read the same.
/// Version 2: `show --json`'s `trials` hold the panels too, after the stored trials, each
/// entry with its `kind` (`trial` or `panel`). Version 3: `trials.csv` is the results
/// table's export (`report::table`): a cascade's threshold is in `cascade_threshold`
/// (version 2 wrote it in `selective_threshold`), and `show --json` has the table too.
pub const EXPORT_SCHEMA_VERSION: u32 = 3;

/// A question a summary cannot answer as asked.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ResultsError {
    #[error("{metric:?} is not a metric (expected one of {expected})")]
    UnknownMetric { metric: String, expected: String },
    #[error("{metric} is not defined for {task} data")]
    MetricNotForTask { metric: Quality, task: &'static str },
    #[error("{metric} is an error, lower is better: it is shown beside the agreement metrics but does not rank trials (choose spearman, kendall, alpha_interval, …)")]
    NotRanking { metric: Quality },
    #[error("no trial {id} in experiment {experiment:?} (its trials are {ids})")]
    NoTrial {
        id: i64,
        experiment: String,
        ids: String,
    },
    #[error("{name:?} is not a criterion a trial of this experiment asks ({asked})")]
    NoCriterion { name: String, asked: String },
    #[error("criterion {0:?} is scored against the dataset's labels only: the labelling queue labels the item's one label")]
    CriterionLabels(String),
    #[error("experiment {first:?} judges dataset {first_dataset:?} and {second:?} judges {second_dataset:?}: judges are compared on the same items")]
    OtherDataset {
        first: String,
        first_dataset: String,
        second: String,
        second_dataset: String,
    },
    #[error("trial {trial}: {source}")]
    Estimate {
        trial: i64,
        #[source]
        source: EstimateError,
    },
}

/// A stored experiment, its trials' metrics with intervals, and the baselines beside them.
/// As `show --json` it is one object whose `trials` are the stored trials (`"kind":
/// "trial"`) and then the panels (`"kind": "panel"`).
#[derive(Debug, Clone)]
pub struct ExperimentSummary {
    /// [`EXPORT_SCHEMA_VERSION`], at the top level of `show --json`.
    pub schema_version: u32,
    pub experiment: ExperimentInfo,
    /// How the confidence intervals were drawn.
    pub bootstrap: BootstrapSpec,
    /// `majority`, and `longer_answer` for pairwise data, over the judged items.
    pub baselines: BTreeMap<&'static str, Baseline>,
    pub trials: Vec<TrialSummary>,
    /// Concurrency ramps of its trials (`judgelab load`), oldest first.
    pub load_ramps: Vec<StoredRamp>,
    /// A race's standings after each of its rounds (empty for a grid), by round, then
    /// trial order.
    pub race: Vec<RoundStanding>,
    /// Cheap trials on the front cascading to the pick ([`ExperimentSummary::cascades`]).
    pub cascades: Vec<Cascade>,
    /// Its panels: the experiment file's `[[panels]]`, then those added since
    /// ([`StoredExperiment::panels`]).
    pub panels: Vec<Panel>,
    /// The dataset, for reports that show items and their labels: relabelled as
    /// `labels` says.
    pub dataset: Dataset,
    /// Whose labels its metrics are against.
    pub labels: LabelsUsed,
    /// How much the dataset's raters (its labels, the queue's annotators) agree, and the
    /// pick with each of them; none while nobody has labelled it in the queue.
    pub humans: Option<HumanAgreement>,
    /// How often verdicts change with the template's wording alone, per group of trials
    /// that differ only in their paraphrase (`[robustness]`); empty without paraphrases.
    pub robustness: Vec<robustness::WordingGroup>,
}

/// The labels a summary's metrics are against, and who has labelled its dataset.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LabelsUsed {
    #[serde(flatten)]
    pub labels: Labels,
    /// The same, in the reader's words.
    pub description: String,
    /// Everyone who has labelled the dataset in the queue, by name.
    pub annotators: Vec<String>,
    /// Items with a label of this kind (those the metrics can count).
    pub n_labelled: usize,
    /// The criterion whose labels they are ([`criteria`]); none: the item's one label.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub criterion: Option<Criterion>,
    /// The criteria the experiment's trials rate, which it can be read on.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub criteria: Vec<Criterion>,
}

impl Serialize for ExperimentSummary {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        /// An entry of `trials`, tagged with its kind.
        #[derive(Serialize)]
        struct Kinded<'a, T: Serialize> {
            kind: &'static str,
            #[serde(flatten)]
            entry: &'a T,
        }
        struct Trials<'a>(&'a [TrialSummary], &'a [Panel]);
        impl Serialize for Trials<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut seq = serializer.serialize_seq(Some(self.0.len() + self.1.len()))?;
                for t in self.0 {
                    seq.serialize_element(&Kinded {
                        kind: "trial",
                        entry: t,
                    })?;
                }
                for p in self.1 {
                    seq.serialize_element(&Kinded {
                        kind: "panel",
                        entry: p,
                    })?;
                }
                seq.end()
            }
        }
        let mut s = serializer.serialize_struct("ExperimentSummary", 11)?;
        s.serialize_field("schema_version", &self.schema_version)?;
        s.serialize_field("experiment", &self.experiment)?;
        s.serialize_field("bootstrap", &self.bootstrap)?;
        s.serialize_field("baselines", &self.baselines)?;
        s.serialize_field("trials", &Trials(&self.trials, &self.panels))?;
        s.serialize_field("load_ramps", &self.load_ramps)?;
        s.serialize_field("race", &self.race)?;
        s.serialize_field("cascades", &self.cascades)?;
        s.serialize_field("labels", &self.labels)?;
        s.serialize_field("humans", &self.humans)?;
        s.serialize_field("robustness", &self.robustness)?;
        s.end()
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ExperimentInfo {
    pub name: String,
    pub dataset: String,
    pub task: &'static str,
    #[serde(skip)]
    pub task_kind: Task,
    pub created_at: String,
    /// Items judged by every trial (the dev split, where there is a test split), and the
    /// few-shot pool kept apart from them.
    pub n_items: usize,
    /// The test split's size: items judged only by the trials the selection keeps (0:
    /// none, and the pick is not confirmed).
    pub n_test_items: usize,
    /// The trials that judge the test split are chosen.
    pub selected: bool,
    pub strategy: Strategy,
    pub repeats: u32,
    pub few_shot_pool: Vec<String>,
    /// Judged item ids, in the order units are numbered.
    #[serde(skip)]
    pub judged: Vec<String>,
    /// The test split's item ids.
    #[serde(skip)]
    pub test: Vec<String>,
    /// Calls expected and calls stored (calls that failed not counted as stored).
    pub n_expected: usize,
    pub n_stored: usize,
    /// The experiment file as written.
    pub spec: String,
    /// The same, parsed.
    #[serde(skip)]
    pub parsed: Experiment,
}

#[derive(Debug, Clone, Serialize)]
pub struct TrialSummary {
    pub id: i64,
    pub trial_idx: usize,
    pub params: TrialParams,
    pub model_sha256: Option<String>,
    /// A local judge's model file's size: with llama.cpp's memory map, also what its weights
    /// take in memory (the context's cache and buffers come on top, the same at every
    /// quantisation). None for a remote judge, or a file no longer there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_bytes: Option<u64>,
    /// The content hash of the trial's template, as stored.
    pub template_hash: String,
    pub examples: Vec<String>,
    /// Its judge's identity: the same for every trial of the same judge, in any
    /// experiment, and a judge card's ([`crate::card`]). None for trials stored before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge_identity: Option<String>,
    /// Where a local judge computed its calls (`CPU`, `CUDA0 NVIDIA H200: 30 of 30
    /// layers`; `; `-joined where a resumed run computed elsewhere). Not part of the
    /// identity: the same judge on another device is the same judge, whose verdicts differ
    /// only by floating-point rounding (`judgelab compare` measures how much).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// Its metrics on the dev split (every judged item, without a test split).
    #[serde(flatten)]
    pub metrics: TrialMetrics,
    /// Its agreement on each split: `test` is none where it did not judge the test split.
    pub split_scores: SplitScores,
    /// Why it judges the test split (`pick`, `indistinguishable`, `best 3`).
    pub test_role: Option<String>,
    /// The race's standing that dropped it: the round, the items judged by then, and the
    /// test against that round's leader.
    pub dropped: Option<RoundStanding>,
    /// How well its confidences are calibrated on the dev split; none where its verdicts
    /// have no confidence ([`crate::trust`]).
    pub calibration: Option<Calibration>,
    /// What it decides alone at the experiment's `[trust]` target, and the coverage–
    /// agreement curve; none where its verdicts have no confidence.
    pub selective: Option<Selective>,
    /// The stored records, one per call, on the items humans labelled (shared with the
    /// reading they came from and the summaries with other intervals).
    #[serde(skip)]
    pub verdicts: Arc<Vec<VerdictRecord>>,
    /// Its calls on items without a human label (`judgelab estimate`'s), which no metric
    /// reads.
    #[serde(skip)]
    pub unlabelled_verdicts: Vec<VerdictRecord>,
    /// The same calls as the metrics see them (for paired comparisons).
    #[serde(skip)]
    pub observations: Vec<Observation>,
    /// Its calls on the test split (units numbered within it), where it judged it.
    #[serde(skip)]
    pub test_observations: Vec<Observation>,
    /// The per-request latencies its latency figures come from (see
    /// [`metrics::latency`]), for the latency chart.
    #[serde(skip)]
    pub latencies: Vec<f64>,
    /// Its agreement on each criterion of its rubric ([`criteria`]), by name; empty for a
    /// trial that judges the item's one label.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub criteria: BTreeMap<String, CriterionScore>,
    /// Its criteria's weights learned from the item's label, with the weighted aggregate's
    /// agreement ([`weighted`]); none for a trial that rates no criterion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub weights: Option<weighted::LearnedWeights>,
    /// A checklist's yes/no items' weights, fitted the same way ([`weighted::learn_items`]);
    /// none where it asks no items.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub item_weights: Option<weighted::LearnedWeights>,
    /// Its verdicts against the experiment's reference trial (`[reference]`); none for
    /// the reference itself, and where no reference is named or was run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drift: Option<comparison::AgainstReference>,
    /// A remote judge's exact passes: the mass of the first-token distribution its server
    /// left out ([`coverage`]); none for other trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coverage: Option<coverage::Coverage>,
    /// A trial with an input budget: how much of its inputs it cut
    /// ([`crate::cut::Cuts`]); none for other trials.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs_cut: Option<crate::cut::Cuts>,
}

impl TrialSummary {
    /// Each stored call's own confidence in its verdict, in `verdicts`' order (for
    /// `verdicts.csv`): its belief's probability of the verdict, or where the trial's
    /// confidence comes from repeats, the share of the item's calls in the same answer
    /// order that gave the same verdict; none for a failure or without a confidence.
    pub fn call_confidences(&self, task: Task) -> Vec<Option<f64>> {
        let repeats = self.calibration.as_ref().map(|c| c.confidence_kind)
            == Some(trust::ConfidenceKind::Repeats);
        let mut same_call: HashMap<(&str, bool), Vec<Option<Label>>> = HashMap::new();
        if repeats {
            for v in self
                .verdicts
                .iter()
                .filter(|v| !v.outcome.is_call_failure())
            {
                same_call
                    .entry((v.item_id.as_str(), v.swapped))
                    .or_default()
                    .push(v.outcome.label());
            }
        }
        self.verdicts
            .iter()
            .map(|v| {
                let label = v.outcome.label()?;
                if repeats {
                    let all = &same_call[&(v.item_id.as_str(), v.swapped)];
                    let agree = all
                        .iter()
                        .filter(|l| l.is_some_and(|l| trust::belief::same(task, l, label)))
                        .count();
                    return Some(agree as f64 / all.len() as f64);
                }
                Some(v.belief(task)?.p(task, label))
            })
            .collect()
    }

    /// Its stored calls on items with a label and without, for the labelling queue.
    pub fn judged(&self) -> Judged<'_> {
        Judged {
            trial_id: self.id,
            order: self.params.order,
            records: self
                .verdicts
                .iter()
                .chain(&self.unlabelled_verdicts)
                .collect(),
        }
    }

    /// What a composed trial (a cascade, a panel) takes of it.
    pub fn part(&self) -> Part<'_> {
        Part {
            id: self.id,
            dev: &self.observations,
            test: &self.test_observations,
            latencies: &self.latencies,
            metrics: &self.metrics,
        }
    }

    /// Its `q` on the test split, where it judged it.
    pub fn test_score(&self, q: Quality) -> Option<Estimate> {
        self.split_scores.test.as_ref().map(|s| s.quality.get(q))
    }

    /// Why it judged the test split (`pick`, `indistinguishable`, `best 3`), or where the
    /// race dropped it (`dropped after round 3 (60 items)`); none otherwise.
    pub fn selection(&self) -> Option<String> {
        match (&self.test_role, &self.dropped) {
            (Some(role), _) => Some(role.clone()),
            (None, Some(d)) => Some(format!(
                "dropped after round {} ({} items)",
                d.round, d.n_items
            )),
            (None, None) => None,
        }
    }
}

/// A stored experiment as read: what [`summarize`] needs besides the dataset.
#[derive(Clone)]
pub struct StoredExperiment {
    pub name: String,
    pub experiment: Experiment,
    pub spec: String,
    pub created_at: String,
    pub pool: Vec<String>,
    pub judged: Vec<String>,
    pub test: Vec<String>,
    pub selected: bool,
    /// Its race's standings, by round, then trial order.
    pub race: Vec<RoundStanding>,
    /// Its load ramps (`judgelab load`), oldest first.
    pub load_ramps: Vec<StoredRamp>,
    /// Panels added to it after its file was written (`judgelab panel`, the app's results
    /// view); a panel of its file's of the same name comes first.
    pub panels: Vec<PanelSpec>,
}

/// A stored trial and its records.
#[derive(Clone)]
pub struct StoredTrial {
    pub id: i64,
    pub trial_idx: usize,
    pub params: TrialParams,
    pub model_sha256: Option<String>,
    /// Its local model file's size, where the file is there.
    pub model_bytes: Option<u64>,
    pub template_hash: String,
    pub examples: Vec<String>,
    /// Its judge's identity ([`crate::card::Definition::identity`]); none for trials
    /// stored before identities were.
    pub judge_identity: Option<String>,
    /// Where its calls were computed, as stored; none for a remote judge.
    pub device: Option<String>,
    /// Its records, shared by every summary of one reading (a million are not copied).
    pub verdicts: Arc<Vec<VerdictRecord>>,
    /// Its calls timed at its load, warm-ups left out: alone for a local judge, with the
    /// trial's `concurrency` in flight for a remote one where the sweep sets it.
    pub timed: Vec<Timed>,
    pub test_role: Option<String>,
}

/// The calls of `verdicts` on items without a human label (those without a place),
/// taken out of them, and their places with them.
fn take_unlabelled(
    verdicts: &mut Arc<Vec<VerdictRecord>>,
    places: &mut Vec<Option<&Place<'_>>>,
) -> Vec<VerdictRecord> {
    if places.iter().all(Option::is_some) {
        return Vec::new();
    }
    let mut labelled = places.iter().map(Option::is_some);
    let (kept, unlabelled) = Arc::unwrap_or_clone(std::mem::take(verdicts))
        .into_iter()
        .partition(|_| labelled.next().unwrap_or(false));
    *verdicts = Arc::new(kept);
    places.retain(Option::is_some);
    unlabelled
}

/// What summarizing one stored trial needs of its experiment.
struct TrialFrame<'a> {
    stored: &'a StoredExperiment,
    task: Task,
    /// The dataset's labelled items by id, with their units: a million verdicts look
    /// their item up once each.
    items: HashMap<&'a str, Place<'a>, foldhash::fast::RandomState>,
    bootstrap: &'a BootstrapSpec,
}

/// A labelled item, and its unit on the dev split (a judged item) or the test split.
struct Place<'a> {
    item: &'a Item,
    unit: Option<usize>,
    test_unit: Option<usize>,
}

impl<'a> TrialFrame<'a> {
    fn new(
        stored: &'a StoredExperiment,
        dataset: &'a Dataset,
        bootstrap: &'a BootstrapSpec,
    ) -> TrialFrame<'a> {
        let mut items: HashMap<&str, Place<'_>, _> = dataset
            .items
            .iter()
            .map(|item| {
                let place = Place {
                    item,
                    unit: None,
                    test_unit: None,
                };
                (item.id.as_str(), place)
            })
            .collect();
        for (unit, id) in stored.judged.iter().enumerate() {
            if let Some(place) = items.get_mut(id.as_str()) {
                place.unit = Some(unit);
            }
        }
        for (unit, id) in stored.test.iter().enumerate() {
            if let Some(place) = items.get_mut(id.as_str()) {
                place.test_unit = Some(unit);
            }
        }
        TrialFrame {
            stored,
            task: dataset.task,
            items,
            bootstrap,
        }
    }

    /// A trial's summary, with the calls it should have and those it has.
    fn trial(&self, mut t: StoredTrial) -> (TrialSummary, usize, usize) {
        let (task, bootstrap) = (self.task, self.bootstrap);
        // Calls on items without a human label (an estimate's) are kept apart, so that no
        // figure of the trial counts them.
        // Each call's item, looked up once.
        let mut places: Vec<Option<&Place<'_>>> = t
            .verdicts
            .iter()
            .map(|v| self.items.get(v.item_id.as_str()))
            .collect();
        let unlabelled_verdicts = take_unlabelled(&mut t.verdicts, &mut places);
        let (observations, test_observations) = self.observed(&t.verdicts, &places, t.params.order);
        let dropped = self
            .stored
            .race
            .iter()
            .find(|s| s.trial_id == t.id && s.dropped)
            .copied();
        let n_expected = self.expected_calls(&t, dropped);
        let n_stored = t
            .verdicts
            .iter()
            .filter(|v| !v.outcome.is_call_failure())
            .count();
        let timing = self.timing(&t);
        let latencies = match timing {
            Timing::Sampled { timed, .. } => timed.iter().map(|t| t.latency_ms).collect(),
            Timing::Calls { .. } => t
                .verdicts
                .iter()
                .filter(|v| !v.outcome.is_call_failure())
                .filter_map(|v| v.latency_ms)
                .collect(),
        };
        let mut metrics = metrics::compute(task, &observations, timing, bootstrap);
        add_summaries(&mut metrics, &t.verdicts, &places);
        let (kind, dev_judged) = confidence::judged(task, &observations);
        let test_judged =
            (!test_observations.is_empty()).then(|| confidence::judged(task, &test_observations).1);
        let calibration =
            kind.and_then(|k| trust::calibration::calibration(k, &dev_judged, bootstrap));
        let selective = trust::selective::selective(
            &dev_judged,
            test_judged.as_deref(),
            self.stored.experiment.trust.target,
        );
        let split_scores = SplitScores {
            dev: SplitScore {
                n: metrics.n,
                n_errors: metrics.n_errors,
                quality: metrics.quality.clone(),
            },
            test: (!test_observations.is_empty())
                .then(|| SplitScore::of(task, &test_observations, bootstrap)),
        };
        let summary = TrialSummary {
            coverage: coverage::Coverage::of(task, &t.verdicts),
            inputs_cut: crate::cut::Cuts::of(&t.verdicts),
            id: t.id,
            trial_idx: t.trial_idx,
            metrics,
            split_scores,
            test_role: t.test_role,
            dropped,
            calibration,
            selective,
            params: t.params,
            model_sha256: t.model_sha256,
            model_bytes: t.model_bytes,
            template_hash: t.template_hash,
            judge_identity: t.judge_identity,
            device: t.device,
            examples: t.examples,
            verdicts: t.verdicts,
            unlabelled_verdicts,
            observations,
            test_observations,
            latencies,
            criteria: BTreeMap::new(),
            weights: None,
            item_weights: None,
            drift: None,
        };
        (summary, n_expected, n_stored)
    }

    /// `verdicts` as the metrics see them: on the dev split's items, and on the test
    /// split's.
    fn observed(
        &self,
        verdicts: &[VerdictRecord],
        places: &[Option<&Place<'_>>],
        order: Order,
    ) -> (Vec<Observation>, Vec<Observation>) {
        let (mut dev, mut test) = (Vec::with_capacity(verdicts.len()), Vec::new());
        for (v, place) in verdicts.iter().zip(places) {
            let Some(place) = place else {
                continue;
            };
            let label = place.item.human_label;
            if let Some(unit) = place.unit {
                dev.push(v.observation(self.task, order, label, unit));
            }
            if let Some(unit) = place.test_unit {
                test.push(v.observation(self.task, order, label, unit));
            }
        }
        (dev, test)
    }

    /// The calls a trial should have: a dropped trial the dev items it was judged on by
    /// then; a trial the selection keeps the test split too.
    fn expected_calls(&self, t: &StoredTrial, dropped: Option<RoundStanding>) -> usize {
        let dev_items = dropped.map_or(self.stored.judged.len(), |d| d.n_items);
        let test_items = if t.test_role.is_some() {
            self.stored.test.len()
        } else {
            0
        };
        let per_item = self.stored.experiment.sweep.repeats as usize * t.params.order.calls().len();
        (dev_items + test_items) * per_item
    }

    /// Where a trial's latency figures come from. A remote judge's calls are requests of
    /// their own, unless the sweep sets the load its latency is measured at; a local judge
    /// batches them, so its latency is that of the calls timed alone.
    fn timing<'t>(&self, t: &'t StoredTrial) -> Timing<'t> {
        let remote = self
            .stored
            .experiment
            .judge_named(&t.params.judge)
            .and_then(|j| j.remote());
        match (remote, t.params.concurrency) {
            (Some(_), Some(concurrency)) => Timing::Sampled {
                concurrency,
                timed: &t.timed,
            },
            (Some(remote), None) => Timing::Calls {
                concurrency: remote.endpoint.calls.concurrency as u32,
            },
            (None, _) => Timing::Sampled {
                concurrency: 1,
                timed: &t.timed,
            },
        }
    }
}

/// Counts what writing the summaries a trial's `verdicts` showed cost (on the dev split's
/// items, as its calls' figures are) in its tokens and dollars per verdict, spread as its
/// calls' are. A summariser without a price adds no dollars; a judge without one keeps
/// none.
fn add_summaries(m: &mut TrialMetrics, verdicts: &[VerdictRecord], places: &[Option<&Place<'_>>]) {
    let w = verdicts
        .iter()
        .zip(places)
        .filter(|(_, place)| place.is_some_and(|p| p.unit.is_some()))
        .filter_map(|(v, _)| v.summaries)
        .fold(Written::default(), Written::add);
    if w.calls == 0 || m.n == 0 {
        return;
    }
    let n = m.n as f64;
    let add = |x: &mut Option<f64>, by: f64| *x = x.map(|x| x + by / n);
    add(&mut m.prompt_tokens_per_item, f64::from(w.prompt_tokens));
    add(
        &mut m.completion_tokens_per_item,
        f64::from(w.completion_tokens),
    );
    add(&mut m.usd_per_1k_items, w.cost_usd.unwrap_or(0.0) * 1000.0);
}

impl ExperimentSummary {
    /// Computes every trial's metrics (with intervals drawn as `bootstrap` says) and the
    /// baselines over the judged items.
    pub fn new(
        stored: StoredExperiment,
        dataset: Dataset,
        trials: Vec<StoredTrial>,
        bootstrap: &BootstrapSpec,
    ) -> ExperimentSummary {
        let repeats = stored.experiment.sweep.repeats;
        let (summarized, baselines) = {
            let frame = TrialFrame::new(&stored, &dataset, bootstrap);
            let judged: Vec<&Item> = stored
                .judged
                .iter()
                .filter_map(|id| frame.items.get(id.as_str()).map(|p| p.item))
                .collect();
            // Each trial's metrics (its bootstrap intervals are most of the time) on a core
            // of its own, and the baselines beside them.
            std::thread::scope(|scope| {
                let baselines =
                    scope.spawn(|| baseline::baselines(dataset.task, &judged, bootstrap));
                let summarized: Vec<(TrialSummary, usize, usize)> =
                    parallel::map(trials, |t| frame.trial(t));
                (
                    summarized,
                    baselines.join().expect("the baselines do not panic"),
                )
            })
        };
        let n_expected = summarized.iter().map(|s| s.1).sum();
        let n_stored = summarized.iter().map(|s| s.2).sum();
        let trials: Vec<TrialSummary> = summarized.into_iter().map(|s| s.0).collect();
        let baselines = baselines.into_iter().map(|b| (b.name, b)).collect();
        let cascades = cascades(
            dataset.task,
            &trials,
            stored.experiment.selection.metric,
            stored.experiment.trust.cascade_threshold,
            bootstrap,
        );
        let specs = panel_specs(&stored.experiment, stored.panels);
        let panels = panels(dataset.task, &stored.experiment, &trials, &specs, bootstrap);
        let mut summary = ExperimentSummary {
            schema_version: EXPORT_SCHEMA_VERSION,
            experiment: ExperimentInfo {
                name: stored.name,
                dataset: dataset.name.clone(),
                task: dataset.task.name(),
                task_kind: dataset.task,
                created_at: stored.created_at,
                n_items: stored.judged.len(),
                n_test_items: stored.test.len(),
                selected: stored.selected,
                strategy: stored.experiment.selection.strategy,
                repeats,
                few_shot_pool: stored.pool,
                judged: stored.judged,
                test: stored.test,
                n_expected,
                n_stored,
                spec: stored.spec,
                parsed: stored.experiment,
            },
            bootstrap: *bootstrap,
            baselines,
            trials,
            load_ramps: stored.load_ramps,
            race: stored.race,
            cascades,
            panels,
            labels: LabelsUsed {
                labels: Labels::Original,
                description: Labels::Original.describe(),
                annotators: Vec::new(),
                n_labelled: dataset.items.len(),
                criterion: None,
                criteria: Vec::new(),
            },
            dataset,
            humans: None,
            robustness: Vec::new(),
        };
        summary.hold_to_reference();
        summary.robustness = summary.wording_groups();
        summary
    }

    /// The load its latency figures were measured at, for labels: "at concurrency 1", or
    /// "at concurrency 1 or 4" where trials differ (each trial says which); "" when no
    /// trial has a latency figure.
    pub fn latency_load(&self) -> String {
        let mut levels: Vec<u32> = self
            .trials
            .iter()
            .filter_map(|t| t.metrics.latency_concurrency)
            .collect();
        levels.sort_unstable();
        levels.dedup();
        match levels.as_slice() {
            [] => String::new(),
            [one] => format!("at concurrency {one}"),
            [rest @ .., last] => {
                let rest: Vec<String> = rest.iter().map(u32::to_string).collect();
                format!("at concurrency {} or {last}", rest.join(", "))
            }
        }
    }

    /// What a trial costs, for the cost–quality front and for breaking ties between
    /// equally good trials: dollars where every trial has a price, tokens otherwise.
    pub fn cost_objective(&self) -> Objective {
        cost_objective(&self.trials)
    }

    /// Where the best trial by `metric` stands in `trials` (a tie as shown: the fewer parse
    /// failures, then the cheaper, the faster, the earlier; see [`selection::pick`]).
    pub fn pick(&self, metric: Quality) -> Option<usize> {
        let cost = self.cost_objective();
        let metrics: Vec<&TrialMetrics> = self.trials.iter().map(|t| &t.metrics).collect();
        selection::pick_of(&metrics, metric, |m| cost.value(m))
    }

    /// The best trial's `metric` corrected for having been picked among all the trials on
    /// the same items ([`selection::corrected`]); `None` without intervals or trials.
    pub fn selection(&self, metric: Quality) -> Option<Corrected> {
        let cost = self.cost_objective();
        let trials: Vec<&[Observation]> = self
            .trials
            .iter()
            .map(|t| t.observations.as_slice())
            .collect();
        let ties: Vec<Ties> = self
            .trials
            .iter()
            .map(|t| Ties::of(&t.metrics, cost.value(&t.metrics)))
            .collect();
        selection::corrected(
            self.experiment.task_kind,
            &trials,
            &ties,
            metric,
            &self.bootstrap,
        )
    }

    /// A race's dev verdicts stored and those the full grid needs (every trial on every
    /// dev item); none for a grid.
    pub fn race_verdicts(&self) -> Option<(usize, usize)> {
        if self.experiment.strategy != Strategy::Race {
            return None;
        }
        let per_trial = |t: &TrialSummary| {
            self.experiment.n_items
                * self.experiment.repeats as usize
                * t.params.order.calls().len()
        };
        let grid = self.trials.iter().map(per_trial).sum();
        let stored = self.trials.iter().map(|t| t.observations.len()).sum();
        Some((stored, grid))
    }

    /// The trial with store id `trial_id`.
    pub fn trial(&self, trial_id: i64) -> Result<&TrialSummary, ResultsError> {
        Ok(&self.trials[self.trial_index(trial_id)?])
    }

    /// The dataset's criteria some trial is scored on ([`TrialSummary::criteria`]), in the
    /// dataset's order.
    pub fn rated_criteria(&self) -> Vec<&Criterion> {
        self.dataset
            .criteria
            .iter()
            .filter(|c| self.trials.iter().any(|t| t.criteria.contains_key(&c.name)))
            .collect()
    }

    /// Where the trial with store id `trial_id` stands in `trials`.
    pub fn trial_index(&self, trial_id: i64) -> Result<usize, ResultsError> {
        self.trials
            .iter()
            .position(|t| t.id == trial_id)
            .ok_or_else(|| ResultsError::NoTrial {
                id: trial_id,
                experiment: self.experiment.name.clone(),
                ids: self
                    .trials
                    .iter()
                    .map(|t| t.id.to_string())
                    .collect::<Vec<_>>()
                    .join(", "),
            })
    }

    /// The metric named `metric` if this task defines it; none named: the one that ranks
    /// its trials (`[selection] metric`: Cohen's kappa, quadratic-weighted for ratings,
    /// unless the experiment says otherwise).
    pub fn metric(&self, metric: Option<&str>) -> Result<Quality, ResultsError> {
        let Some(name) = metric else {
            return Ok(self.experiment.parsed.selection.metric);
        };
        let q = name
            .parse::<Quality>()
            .map_err(|_| ResultsError::UnknownMetric {
                metric: name.to_string(),
                expected: Quality::ALL
                    .iter()
                    .map(|q| q.name())
                    .collect::<Vec<_>>()
                    .join(", "),
            })?;
        self.check_metric(q)
    }

    /// `q` if it ranks this experiment's trials: its task defines it, and higher is
    /// better ([`Quality::ranks`]).
    pub fn check_metric(&self, q: Quality) -> Result<Quality, ResultsError> {
        let task = self.experiment.task_kind;
        if !q.ranks() {
            Err(ResultsError::NotRanking { metric: q })
        } else if Quality::for_task(task).contains(&q) {
            Ok(q)
        } else {
            Err(ResultsError::MetricNotForTask {
                metric: q,
                task: task.name(),
            })
        }
    }

    /// What trial `trial_id` says of the items `unlabelled` (ids of items without a human
    /// label that it judged), corrected with its verdicts on the labelled items of both
    /// splits ([`unlabelled::population`]); `width` asks for the labels an interval that
    /// wide needs.
    pub fn population(
        &self,
        trial_id: i64,
        unlabelled: &[String],
        width: Option<f64>,
        level: f64,
    ) -> Result<Population, ResultsError> {
        let trial = self.trial(trial_id)?;
        let order = trial.params.order;
        let call = |unit: usize, repeat: u32, swapped: bool, verdict, belief| unlabelled::Call {
            unit,
            repeat,
            swapped,
            verdict,
            belief,
            order,
        };
        // The test split's units follow the dev split's.
        let offset = self.experiment.judged.len();
        let labelled_observations = trial
            .observations
            .iter()
            .map(|o| (o.unit, o))
            .chain(trial.test_observations.iter().map(|o| (offset + o.unit, o)));
        let mut humans = BTreeMap::new();
        let mut labelled = Vec::new();
        for (unit, o) in labelled_observations {
            humans.insert(unit, o.human);
            labelled.push(call(unit, o.repeat, o.swapped, o.verdict, o.belief.clone()));
        }
        let units: HashMap<&str, usize> = unlabelled
            .iter()
            .enumerate()
            .map(|(unit, id)| (id.as_str(), unit))
            .collect();
        let calls: Vec<unlabelled::Call> = trial
            .unlabelled_verdicts
            .iter()
            .filter_map(|v| {
                let unit = *units.get(v.item_id.as_str())?;
                let belief = v.belief(self.experiment.task_kind);
                Some(call(unit, v.repeat, v.swapped, v.outcome.verdict(), belief))
            })
            .collect();
        unlabelled::population(
            self.experiment.task_kind,
            &labelled,
            &humans,
            &calls,
            unlabelled.len(),
            width,
            level,
        )
        .map_err(|source| ResultsError::Estimate {
            trial: trial_id,
            source,
        })
    }
}

/// An experiment's panels: its file's `[[panels]]`, then the `added` ones whose names the
/// file does not use.
pub fn panel_specs(experiment: &Experiment, added: Vec<PanelSpec>) -> Vec<PanelSpec> {
    let mut specs = experiment.panels.clone();
    for p in added {
        if !specs.iter().any(|s| s.name == p.name) {
            specs.push(p);
        }
    }
    specs
}

/// Each of `specs` composed from `trials`, those that [`panel::check`] accepts (the
/// engine refuses the others before a summary is made), with contributions measured by
/// the experiment's selection metric.
pub fn panels(
    task: Task,
    experiment: &Experiment,
    trials: &[TrialSummary],
    specs: &[PanelSpec],
    spec: &BootstrapSpec,
) -> Vec<Panel> {
    let ids: Vec<(i64, &TrialParams)> = trials.iter().map(|t| (t.id, &t.params)).collect();
    let metric = experiment.selection.metric;
    specs
        .iter()
        .filter(|p| panel::check(p, experiment, task, &ids).is_ok())
        .map(|p| {
            let members: Vec<Part<'_>> = p
                .members
                .iter()
                .filter_map(|&m| trials.iter().find(|t| t.id == m))
                .map(TrialSummary::part)
                .collect();
            Panel::new(task, p, &members, metric, spec)
        })
        .collect()
}

/// Most cascades composed for one experiment.
pub const MAX_CASCADES: usize = 3;

/// The cascades worth showing: each trial on the quality–cost front that is cheaper than
/// the pick by `metric` and has a threshold (`threshold`, `[trust] cascade_threshold`,
/// for every trial whose verdicts carry a confidence, or else its own selective threshold)
/// decides what it is confident of and sends the rest to the pick; up to
/// [`MAX_CASCADES`], the best first.
pub fn cascades(
    task: Task,
    trials: &[TrialSummary],
    metric: Quality,
    threshold: Option<f64>,
    spec: &BootstrapSpec,
) -> Vec<Cascade> {
    let cost = cost_objective(trials);
    let metrics: Vec<&TrialMetrics> = trials.iter().map(|t| &t.metrics).collect();
    let Some(pick) = selection::pick_of(&metrics, metric, |m| cost.value(m)) else {
        return Vec::new();
    };
    let strong = &trials[pick];
    let Some(strong_cost) = cost.value(&strong.metrics) else {
        return Vec::new();
    };
    let front = pareto::front(&metrics, &[Objective::Quality(metric), cost]);
    let mut cheap: Vec<(&TrialSummary, f64)> = trials
        .iter()
        .zip(&front)
        .enumerate()
        .filter(|&(i, (t, &status))| {
            i != pick
                && status == FrontStatus::Front
                && cost.value(&t.metrics).is_some_and(|c| c < strong_cost)
        })
        .filter_map(|(_, (t, _))| {
            let own = t.selective.as_ref()?.threshold;
            Some((t, threshold.or(own)?))
        })
        .collect();
    cheap.sort_by(|a, b| {
        let q = |t: &TrialSummary| t.metrics.value(metric).unwrap_or(f64::NEG_INFINITY);
        q(b.0).total_cmp(&q(a.0))
    });
    cheap
        .into_iter()
        .take(MAX_CASCADES)
        .map(|(t, threshold)| Cascade::new(task, t.part(), strong.part(), threshold, spec))
        .collect()
}

/// What [`ExperimentSummary::cost_objective`] says of `trials`.
fn cost_objective(trials: &[TrialSummary]) -> Objective {
    let priced = !trials.is_empty() && trials.iter().all(|t| t.metrics.usd_per_1k_items.is_some());
    Objective::Cost(if priced { Cost::Usd } else { Cost::Tokens })
}
