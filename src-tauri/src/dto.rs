//! Transport types: what the commands take and return, shaped for the UI and exported to
//! TypeScript (`ui/src/lib/bindings.ts`). They stay at this boundary; the engine's types
//! do not know about specta.

use serde::{Deserialize, Serialize};
use specta::Type;

#[derive(Debug, Clone, Serialize, Type)]
pub struct AppInfo {
    pub version: String,
    pub db_path: String,
    /// The default judge's GGUF file, where it has been fetched.
    pub default_model: Option<String>,
    /// The built-in datasets shipped with the app (file paths), for a first import.
    pub bundled_datasets: Vec<String>,
    /// What local models compute on.
    pub compute: ComputeInfo,
}

/// What local models compute on: this build's llama.cpp CPU kernels and the devices.
#[derive(Debug, Clone, Serialize, Type)]
pub struct ComputeInfo {
    /// One line: the kernels, the CPU, any GPU (or why local models cannot run here).
    pub summary: String,
    /// `x86-64-v3 (AVX2, FMA, F16C, BMI2)`.
    pub cpu_kernels: String,
    /// Why this CPU cannot run local models, when it cannot; remote judges still work.
    pub unsupported: Option<String>,
    /// The GPUs llama.cpp offloads to, as `CUDA NVIDIA H200 (140 GiB)`.
    pub gpus: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct Count {
    pub label: String,
    pub n: u32,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct DatasetSummary {
    pub name: String,
    /// `pairwise` or `single`.
    pub task: String,
    /// Items with a human label (what experiments judge), and those without (what
    /// estimates judge).
    pub n_items: u32,
    pub n_unlabelled: u32,
    /// Items with a reference answer: the builder then starts from the reference-guided
    /// template of its task.
    pub n_with_reference: u32,
    pub source: String,
    pub content_hash: String,
    /// The metrics its task supports (`core::metrics::Quality::for_task`), by name: what a
    /// selection may rank by.
    pub metrics: Vec<String>,
    /// The mapping its file was read through, in one line (`question=prompt,…; labels:
    /// …`); none: the file was in Judgelab's own fields.
    pub mapping: Option<String>,
}

/// Judgelab's field and where it is in a row of a file of another shape.
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
pub struct FieldMapping {
    pub target: String,
    pub path: String,
}

/// A label value as a file writes it, and as Judgelab reads it (`A`, `B`, `tie`, a number).
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
pub struct LabelMapping {
    pub value: String,
    pub label: String,
}

/// How a file of another shape reads: its fields, its label values, and ratings moved onto
/// another scale (`0-4:1-5`).
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
pub struct MappingInput {
    pub fields: Vec<FieldMapping>,
    pub labels: Vec<LabelMapping>,
    pub rescale: Option<String>,
}

/// A file's first rows as they are, and a first guess at its mapping.
#[derive(Debug, Clone, Serialize, Type)]
pub struct DatasetPeek {
    /// Its top-level fields, in order.
    pub columns: Vec<String>,
    /// Every path into its first rows (`conversation_a[-1].content`).
    pub paths: Vec<String>,
    /// Its first rows, each as indented JSON.
    pub rows: Vec<String>,
    /// Its fields are Judgelab's own: it imports as it is.
    pub canonical: bool,
    /// The fields guessed (Judgelab's order).
    pub guess: Vec<FieldMapping>,
    /// The fields Judgelab reads: what a mapping may fill (`human_labels.NAME` too).
    pub targets: Vec<String>,
}

/// The values a file's label takes, and a first guess at how they read.
#[derive(Debug, Clone, Serialize, Type)]
pub struct LabelValues {
    pub values: Vec<Count>,
    pub guess: Vec<LabelMapping>,
    /// Rows read for it (the first ones).
    pub rows_read: u32,
}

/// The whole file read through a mapping, nothing written: what would be imported.
#[derive(Debug, Clone, Serialize, Type)]
pub struct ImportPreview {
    pub task: String,
    pub n_items: u32,
    pub n_unlabelled: u32,
    /// Label counts over every item (ratings by rounded value).
    pub labels: Vec<Count>,
    pub criteria: Vec<String>,
    /// The first items as they would be stored.
    pub items: Vec<ItemRow>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct ImportResult {
    pub dataset: DatasetSummary,
    /// The same content was imported before: nothing was written.
    pub already: bool,
}

/// A histogram bin of answer lengths, in characters: `[lo, hi)`.
#[derive(Debug, Clone, Serialize, Type)]
pub struct Bin {
    pub lo: u32,
    pub hi: u32,
    pub n: u32,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct DatasetDetail {
    pub summary: DatasetSummary,
    pub labels: Vec<Count>,
    /// Lengths of every answer (both answers of a pair).
    pub lengths: Vec<Bin>,
    pub median_length: u32,
    /// Ratings: the scale.
    pub scale: Option<(i32, i32)>,
    /// The criteria its items carry labels on beside their label, with their scales:
    /// `coherence (1-3)`.
    pub criteria: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct ItemRow {
    pub idx: u32,
    pub id: String,
    pub question: String,
    pub answer_a: Option<String>,
    pub answer_b: Option<String>,
    pub answer: Option<String>,
    pub reference: Option<String>,
    pub label: String,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct ItemPage {
    pub total: u32,
    pub offset: u32,
    pub items: Vec<ItemRow>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct TemplateInfo {
    pub name: String,
    pub source: String,
    /// The first 12 hex digits of its content hash: its version.
    pub version: String,
    pub builtin: bool,
    /// What an experiment writes to use it: a built-in name or the file's path.
    pub reference: String,
}

#[derive(Debug, Clone, Deserialize, Type)]
pub struct PreviewRequest {
    pub source: String,
    pub dataset: String,
    pub item_idx: u32,
    pub few_shot: u32,
    /// A GGUF path or `default`; none: no token count.
    pub model: Option<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct ChatMessage {
    pub role: String,
    pub content: String,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct Preview {
    pub messages: Vec<ChatMessage>,
    /// Prompt tokens in the chosen model's chat template.
    pub n_tokens: Option<u32>,
    pub item_id: String,
    pub label: String,
}

#[derive(Debug, Clone, Serialize, Deserialize, Type)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum JudgeInfo {
    Local {
        /// What an experiment writes: `default` or the file's path.
        model: String,
        path: String,
        size_mb: f64,
        present: bool,
    },
    Remote {
        name: String,
        base_url: String,
        /// The model name the endpoint knows.
        model: String,
        api_key_env: Option<String>,
        /// Requests in flight at once; none: the engine's default. A local server with few
        /// slots (llama-cpp-python has one) wants 1.
        #[serde(default)]
        concurrency: Option<u32>,
    },
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct Plan {
    pub name: String,
    pub dataset: String,
    pub n_trials: u32,
    pub n_items: u32,
    pub n_calls: u32,
    /// Calls already stored by an earlier run of the same experiment.
    pub n_done: u32,
    pub prompt_tokens: Option<f64>,
    /// From the model's measured speed on this machine; none before its first run.
    pub est_seconds: Option<f64>,
    /// Whether an experiment of this name exists with other content.
    pub conflicts: bool,
    pub spec_path: String,
    /// Items of the test split (0: none), and the most calls one kept trial makes on it.
    pub n_test: u32,
    pub test_calls_per_trial: u32,
    /// A race's cost against the full grid's `n_calls` (the most it can make).
    pub race: Option<RacePlan>,
    /// Trials whose verdicts are exact, and the passes per item that serve them.
    pub n_exact_trials: u32,
    pub n_exact_passes: u32,
    /// Calls timed alone after judging (warm-ups included), and the request shapes they time.
    pub timed_calls: u32,
    pub timing_shapes: u32,
    /// What the plan says beside its figures, a sentence each: the quantisation variants
    /// it makes (or made), reference answers a template leaves out.
    pub notes: Vec<String>,
}

/// What a race costs at least: every trial judges the first `first_decision` dev items,
/// then only the cheapest trial the rest.
#[derive(Debug, Clone, Copy, Serialize, Type)]
pub struct RacePlan {
    pub n_rounds: u32,
    pub first_decision: u32,
    pub min_calls: u32,
}

/// One reason calls of a run failed, and how many calls.
#[derive(Debug, Clone, Serialize, Type)]
pub struct FailureCauseView {
    pub error: String,
    pub n_calls: u32,
}

/// What a run reports while it goes, streamed over a channel.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum RunUpdate {
    Loading {
        model: String,
    },
    Started {
        experiment: String,
        resumed: bool,
        n_trials: u32,
        /// Calls needed and answered: a call per verdict, or in a checklist a call per
        /// criterion of one.
        total: u32,
        done: u32,
        /// Verdicts the calls make (`total` where every call is a verdict).
        verdicts: u32,
    },
    Progress {
        trial_idx: u32,
        done: u32,
        total: u32,
        /// Calls of this run without a verdict (failed or unparsed).
        n_failed: u32,
        verdicts_per_second: f64,
        eta_seconds: Option<f64>,
    },
    /// Judging is done; calls are being timed for latency at a stated load: alone, for
    /// local trials at concurrency 1 (`concurrency` null), or with a remote trial's
    /// `concurrency` (the sweep's axis) in flight.
    Timing {
        done: u32,
        total: u32,
        concurrency: Option<u32>,
    },
    /// A race's round starts: `survivors` of `n_trials` trials judge the first `n_items`
    /// dev items.
    Round {
        round: u32,
        n_rounds: u32,
        n_items: u32,
        survivors: u32,
        n_trials: u32,
    },
    /// The race dropped these trials (store ids) after a round, clearly worse than its
    /// leader.
    Dropped {
        round: u32,
        trial_ids: Vec<u32>,
        survivors: u32,
    },
    /// What the run found of a judge and did about it, as the rest of a sentence that
    /// begins with its name (its one-token trials generate, and why; its server serves one
    /// request at a time).
    Note {
        judge: String,
        message: String,
    },
    /// The dev split is judged: these trials judge the test split, to confirm the pick.
    Selected {
        trial_ids: Vec<u32>,
        n_test_items: u32,
    },
    Finished {
        interrupted: bool,
        /// The budget that stopped the run (`limits.max_calls = …`), if one did.
        stopped_by: Option<String>,
        judged_now: u32,
        n_errors: u32,
        /// Calls made to the judge: with exact verdicts one per prompt, however many
        /// trials it served.
        model_calls: u32,
        prompt_tokens_decoded: u32,
        /// Calls timed alone, for each local trial's latency at concurrency 1.
        timed_now: u32,
        /// Calls timed at the load the sweep sets, for remote trials' latency at it.
        timed_at_load: u32,
        /// Why this run's calls failed, the most frequent cause first.
        failures: Vec<FailureCauseView>,
    },
    Failed {
        error: crate::error::AppError,
    },
}

/// What a load ramp reports while it goes, streamed over a channel.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum LoadUpdate {
    /// A level starts: its warm-up, then `requests` timed requests.
    Level {
        concurrency: u32,
        /// The level's place in the ramp (0-based) and how many levels there are.
        level_idx: u32,
        n_levels: u32,
        requests: u32,
    },
    /// One of the level's timed requests returned.
    Request {
        concurrency: u32,
        done: u32,
    },
    Finished {
        knee: Option<u32>,
        knee_reason: String,
    },
    Failed {
        error: crate::error::AppError,
    },
}

/// What "Improve this judge" (`judgelab align`) reports while it goes, streamed over a
/// channel: its plan, each generation, candidate and race round, the calls spent against
/// the budget, then its outcome in words.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum AlignUpdate {
    Planned {
        plan: String,
        generations: u32,
        budget: Option<u32>,
    },
    Generation {
        generation: u32,
        n_generations: u32,
    },
    /// A candidate made (`rejected`: its proposer's reply made none, and why).
    Candidate {
        id: u32,
        parent: Option<u32>,
        kind: String,
        rejected: Option<String>,
    },
    Round {
        generation: u32,
        round: u32,
        n_rounds: u32,
        n_items: u32,
        survivors: u32,
    },
    Spent {
        calls: u32,
        budget: Option<u32>,
    },
    /// The outcome as `judgelab align` prints it, and the test split's verdict.
    Finished {
        text: String,
        verdict: Option<String>,
        spent: u32,
    },
    Failed {
        error: crate::error::AppError,
    },
}

/// What an estimate on items without a label reports while it goes, streamed over a
/// channel: the judging (resumed where stopped), then the corrected figure.
#[derive(Debug, Clone, Serialize, Type)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum EstimateUpdate {
    Loading {
        model: String,
    },
    Progress {
        done: u32,
        total: u32,
        /// Calls of this estimate without a verdict (failed or unparsed).
        n_failed: u32,
    },
    Finished {
        estimate: EstimateView,
    },
    Failed {
        error: crate::error::AppError,
    },
}

/// A trial's estimate of the items without a label, corrected with its labelled items
/// (`judgelab estimate`, `core::trust::unlabelled::Population`).
#[derive(Debug, Clone, Serialize, Type)]
pub struct EstimateView {
    pub trial_id: u32,
    pub dataset: String,
    /// What is estimated, in the reader's words ("win rate of answer A (ties count half)").
    pub quantity: String,
    /// "PPI++" or "Rogan–Gladen".
    pub method: String,
    pub level: f64,
    pub corrected: Cell,
    /// The judge's own figure, as if it were never wrong.
    pub naive: Cell,
    pub n_labelled: u32,
    pub n_unlabelled: u32,
    /// PPI++'s weight of the judge; Rogan–Gladen's true positive and negative rates.
    pub lambda: Option<f64>,
    pub tpr: Option<f64>,
    pub tnr: Option<f64>,
    pub n_without_verdict: u32,
    pub n_parse_failures_labelled: u32,
    pub n_parse_failures_unlabelled: u32,
    pub fallback: f64,
    pub width: Option<f64>,
    pub labels_needed: Option<u32>,
    /// The estimate and the planner's answer in sentences, as the CLI prints them.
    pub reading: String,
    pub plan: Option<String>,
    /// How the items were judged by this call.
    pub judged_now: u32,
    pub already_done: u32,
    pub n_errors: u32,
    pub interrupted: bool,
    pub stopped_by: Option<String>,
}

/// The experiment's latest load ramp: one trial's judge at each level of requests in
/// flight, as `judgelab load` prints it and the report draws it.
#[derive(Debug, Clone, Serialize, Type)]
pub struct LoadView {
    pub trial_id: u32,
    pub trial_label: String,
    pub created_at: String,
    /// Timed requests per level.
    pub requests: u32,
    pub knee: Option<u32>,
    pub knee_reason: String,
    pub slo_ms: Option<f64>,
    pub levels: Vec<LoadLevelView>,
    /// The ramp's first request (the cold start), left out of every level.
    pub cold_ttft_ms: Option<f64>,
    pub cold_latency_ms: Option<f64>,
    /// TTFT and latency per request against requests in flight; throughput and the knee.
    pub latency_svg: String,
    pub throughput_svg: String,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct LoadLevelView {
    pub concurrency: u32,
    pub requests: u32,
    pub throughput_vps: f64,
    pub ttft_p50: Option<f64>,
    pub ttft_p95: Option<f64>,
    /// `None` below 100 requests.
    pub ttft_p99: Option<f64>,
    pub latency_p50: Option<f64>,
    pub latency_p95: Option<f64>,
    pub latency_p99: Option<f64>,
    pub stream_p95: Option<f64>,
    pub errors: u32,
    pub retried: u32,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct ExperimentListing {
    pub name: String,
    pub dataset: String,
    pub created_at: String,
    pub n_trials: u32,
    pub running: bool,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct Cell {
    pub value: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct Column {
    /// `kappa`, `accuracy`, …
    pub key: String,
    pub title: String,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct Param {
    pub name: String,
    pub value: String,
}

/// A trial as the app's pieces name it (the load card, the comparison, the drill-down):
/// its figures are its row of the results table ([`TableView`]).
#[derive(Debug, Clone, Serialize, Type)]
pub struct TrialView {
    pub id: u32,
    pub label: String,
    pub params: Vec<Param>,
    /// A local judge, which batches a sweep's calls: a verdict's own time is its batch's,
    /// and the trial's latency comes from calls timed alone.
    pub batched: bool,
}

/// The results table (`report::table`) as the app renders it: every column with its key,
/// and the rows of trials, cascades and panels, then the baselines.
#[derive(Debug, Clone, Serialize, Type)]
pub struct TableView {
    /// How the trials rank, in words.
    pub ranking: String,
    pub columns: Vec<TableColumn>,
    pub rows: Vec<TableRow>,
    pub baselines: Vec<TableRow>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct TableColumn {
    /// As exported: `kappa`, `parse_failure_rate`, `latency_p95_ms`, …
    pub key: String,
    pub title: String,
    pub unit: TableUnit,
    /// The app's results table shows it (the drill-down may read any column).
    pub shown: bool,
}

/// What a column's values are ([`judgelab_report::table::Unit`], by the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum TableUnit {
    Text,
    Param,
    Count,
    Estimate,
    Difference,
    Share,
    Tokens,
    Milliseconds,
    Usd,
    Number,
    Probability,
    Standing,
    Role,
}

/// One finding of the report ([`judgelab_report::findings::Finding`]): its kind, what it
/// is about, the figures it rests on and its sentence.
#[derive(Debug, Clone, Serialize, Type)]
pub struct FindingView {
    pub kind: FindingKind,
    /// `#3`, `vote3`, `ann and bob`, …
    pub subject: String,
    pub figures: Vec<FigureView>,
    pub text: String,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct FigureView {
    pub name: String,
    pub cell: Cell,
}

/// What a finding says ([`judgelab_report::findings::Kind`], by the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum FindingKind {
    Undecided,
    NotReady,
    Pick,
    Selection,
    Caveat,
    Confirmation,
    Race,
    Labels,
    Humans,
    Trust,
    Cascade,
    Panel,
    CriterionWeights,
    ItemWeights,
    Drift,
    Wording,
}

/// What a row is ([`judgelab_report::table::RowKind`], by the same names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum TableRowKind {
    Trial,
    Cascade,
    Panel,
    Baseline,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct TableRow {
    pub kind: TableRowKind,
    /// A trial's id.
    pub id: Option<u32>,
    pub name: String,
    pub label: String,
    /// What a composed row or a baseline is.
    pub description: Option<String>,
    pub best: bool,
    pub recommended: bool,
    /// One per column.
    pub cells: Vec<TableCell>,
}

/// A cell as the report writes it, with its number for sorting and its interval.
#[derive(Debug, Clone, Serialize, Type)]
pub struct TableCell {
    /// The figure without its interval (`0.412`, `12.5%`, `front`); `—` where missing,
    /// empty where it does not apply.
    pub text: String,
    /// Its interval, `[0.301, 0.520]`; empty without one.
    pub interval: String,
    pub value: Option<f64>,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

/// A point of a chart, where it was drawn (in the SVG's pixels).
#[derive(Debug, Clone, Serialize, Type)]
pub struct Hotspot {
    pub trial_id: u32,
    pub x: f64,
    pub y: f64,
    pub r: f64,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct ChartView {
    pub svg: String,
    pub width: u32,
    pub height: u32,
    pub hotspots: Vec<Hotspot>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct Results {
    pub name: String,
    pub dataset: String,
    pub task: String,
    pub n_items: u32,
    pub n_expected: u32,
    pub n_stored: u32,
    pub spec: String,
    /// The metric of the fronts and the recommendation.
    pub metric: String,
    /// The task's agreement metrics, for the charts' axes.
    pub columns: Vec<Column>,
    pub table: TableView,
    pub trials: Vec<TrialView>,
    /// Which configuration to pick: the recommendation (or why there is none yet), the
    /// selection-corrected estimate, and the caveats.
    pub findings: Vec<FindingView>,
    /// Quality against cost (tokens or $), and against p95 latency.
    pub pareto_cost: ChartView,
    pub pareto_latency: ChartView,
    pub cost_title: String,
    pub resamples: u32,
    /// The latest load ramp of one of its trials, if any was run.
    pub load: Option<LoadView>,
    pub selection: SelectionView,
    pub trust: TrustView,
    /// Its panels: the file's `[[panels]]`, then those added since.
    pub panels: Vec<PanelView>,
    /// Whose labels the metrics are against.
    pub labels: LabelsView,
    /// The people's agreement and the pick's with each of them, once the labelling queue
    /// has labels of the dataset.
    pub humans: Option<HumansView>,
}

/// Whose labels a results view's metrics are against.
#[derive(Debug, Clone, Serialize, Type)]
pub struct LabelsView {
    /// `original`, `annotations` or `both`.
    pub kind: String,
    /// Whose annotations (none: everyone's, combined).
    pub annotator: Option<String>,
    pub description: String,
    /// Everyone who has labelled the dataset in the queue.
    pub annotators: Vec<String>,
    pub n_labelled: u32,
    /// The criteria the experiment's trials rate, each as `name (scale)`, by name: what the
    /// results can be read on besides each verdict's aggregate.
    pub criteria: Vec<CriterionChoice>,
    /// The criterion the metrics are read on; none: the item's one label.
    pub criterion: Option<String>,
}

/// A criterion the results can be read on.
#[derive(Debug, Clone, Serialize, Type)]
pub struct CriterionChoice {
    pub name: String,
    /// `coherence (1-3)`.
    pub title: String,
}

/// Whose labels to compute the metrics against.
#[derive(Debug, Clone, Deserialize, Type)]
pub struct LabelsInput {
    pub kind: String,
    pub annotator: Option<String>,
}

/// How much the raters (the dataset's labels, each annotator) agree, in the view's metric.
#[derive(Debug, Clone, Serialize, Type)]
pub struct HumansView {
    pub raters: Vec<RaterView>,
    pub pairs: Vec<RaterPairView>,
    /// Krippendorff's alpha over every rater (`alpha_raters` of them: the people alone
    /// where the dataset's label combines the labels its file keeps, `combined`), and the
    /// items labelled by two or more.
    pub alpha: Cell,
    pub alpha_raters: u32,
    pub combined: bool,
    pub level: String,
    pub n_shared: u32,
    /// The pick's agreement with each rater.
    pub judge: Vec<JudgeWithRaterView>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct RaterView {
    pub name: String,
    pub n_items: u32,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct RaterPairView {
    pub first: String,
    pub second: String,
    pub n_items: u32,
    pub quality: Cell,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct JudgeWithRaterView {
    pub rater: String,
    pub trial_id: u32,
    pub n_items: u32,
    pub quality: Cell,
}

/// An annotator's labelling queue.
#[derive(Debug, Clone, Serialize, Type)]
pub struct QueueView {
    pub experiment: String,
    pub dataset: String,
    /// `pairwise` or `single`.
    pub task: String,
    pub annotator: String,
    /// The keys that give a label, in order.
    pub keys: Vec<LabelKey>,
    /// The items still to label, the most disputed first.
    pub items: Vec<QueuedItem>,
    pub n_done: u32,
    pub n_items: u32,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct LabelKey {
    /// What to press: `a`, `4`.
    pub key: String,
    /// The label it gives: `A`, `tie`, `4`.
    pub label: String,
    pub title: String,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct QueuedItem {
    pub id: String,
    pub question: String,
    pub answer_a: Option<String>,
    pub answer_b: Option<String>,
    pub answer: Option<String>,
    pub reference: Option<String>,
    /// Its label in the dataset, shown after the person's own.
    pub original: Option<String>,
    /// Vote entropy in bits (pairwise) or the votes' standard deviation (ratings).
    pub disagreement: Option<f64>,
    pub n_votes: u32,
    /// Each trial's verdicts (one per repeat; none for a failure).
    pub votes: Vec<TrialVotesView>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct TrialVotesView {
    pub trial_id: u32,
    pub verdicts: Vec<Option<String>>,
}

/// What a labels export wrote.
#[derive(Debug, Clone, Serialize, Type)]
pub struct LabelsExported {
    pub path: String,
    pub n_items: u32,
    pub n_labelled: u32,
}

/// A panel: its members' stored verdicts on each item combined by a rule, not run. Its
/// cost is its members' sum, its latency per request the slowest member's.
#[derive(Debug, Clone, Serialize, Type)]
pub struct PanelView {
    pub name: String,
    /// As the charts name it: "vote3 panel".
    pub label: String,
    /// Trial ids, in the order ties read them.
    pub members: Vec<u32>,
    /// `majority`, `mean` or `distribution`.
    pub rule: String,
    /// What a split vote gives (`tie`, `first`), for majority panels.
    pub ties: Option<String>,
    /// Declared in the experiment's file (`[[panels]]`): changed there, not here.
    pub from_file: bool,
    /// Krippendorff's alpha over its members, and the verdicts two or more of them gave.
    pub members_alpha: Cell,
    pub members_n: u32,
    pub contributions: Vec<ContributionView>,
    pub reading: String,
}

/// What one member adds to its panel, by the experiment's selection metric.
#[derive(Debug, Clone, Serialize, Type)]
pub struct ContributionView {
    pub member: u32,
    /// The panel's metric without this member.
    pub without: Cell,
    /// The panel's metric minus `without`, with its paired interval.
    pub difference: Cell,
}

/// A panel to compose, as the results view's form gives it.
#[derive(Debug, Clone, Deserialize, Type)]
pub struct PanelInput {
    pub name: String,
    pub members: Vec<u32>,
    /// `majority`, `mean` or `distribution`.
    pub rule: String,
    /// `tie` or `first`; none: the task's default.
    pub ties: Option<String>,
}

/// How far to trust the judges (the report's "How far to trust it" section): each trusted
/// trial's calibration and what it decides alone at the `[trust]` target, the cascades, and
/// the reliability diagram and coverage–agreement curves.
#[derive(Debug, Clone, Serialize, Type)]
pub struct TrustView {
    /// The `[trust]` target: accepted verdicts agree this often, with probability 1 − risk.
    pub agreement: f64,
    pub risk: f64,
    /// Each trusted trial's calibration and what it decides alone, in a sentence.
    pub readings: Vec<String>,
    /// The same as a table: confidence, ECE and Brier with their intervals, threshold,
    /// what it decides and how often those agree (dev, and test where judged).
    pub table: SectionTableView,
    pub cascades: Vec<CascadeView>,
    /// Both none where no trial's verdicts carry a confidence.
    pub reliability_svg: Option<String>,
    pub coverage_svg: Option<String>,
}

/// A table a section shows beside the results table
/// ([`judgelab_report::table::SectionTable`]): its rows' names under `subject`, then a
/// cell per column, written as the report writes it.
#[derive(Debug, Clone, Serialize, Type)]
pub struct SectionTableView {
    pub subject: String,
    pub columns: Vec<TableColumn>,
    pub rows: Vec<SectionRowView>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct SectionRowView {
    pub name: String,
    pub cells: Vec<TableCell>,
}

/// A cascade: composed from two trials' stored verdicts, not run.
#[derive(Debug, Clone, Serialize, Type)]
pub struct CascadeView {
    pub label: String,
    pub cheap: u32,
    pub strong: u32,
    pub threshold: f64,
    pub escalated: Option<f64>,
    /// The fronts' metric, on the dev split.
    pub quality: Cell,
    /// Tokens per item, or dollars per 1,000 items where every trial has a price.
    pub cost: Option<f64>,
    pub reading: String,
}

/// Whether the pick is confirmed on items that did not choose it, how much choosing
/// inflates its score, and a race's drops: the report's findings of those kinds and its
/// tables, as "Is the pick confirmed?" shows them.
#[derive(Debug, Clone, Serialize, Type)]
pub struct SelectionView {
    /// Confirmation (or why there is none yet), the selection-corrected estimate, the race.
    pub findings: Vec<FindingView>,
    /// The trials kept for the test split: dev and test scores and their gap; no rows
    /// before the test split is judged.
    pub kept: SectionTableView,
    /// The trials a race dropped, and when.
    pub dropped: SectionTableView,
    /// Survivors' differences from the leader by round (the report's race chart).
    pub race_svg: Option<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct ConfusionView {
    pub rows: Vec<String>,
    pub columns: Vec<String>,
    pub counts: Vec<Vec<u32>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum VerdictFilter {
    All,
    Wrong,
    ParseFailures,
    Errors,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct VerdictListing {
    pub item_id: String,
    pub repeat: u32,
    pub swapped: bool,
    pub human: String,
    /// The parsed verdict; none on a parse failure or failed call.
    pub verdict: Option<String>,
    pub outcome: OutcomeKind,
    /// What went wrong, for display: the parse failure's kind, or "call failed".
    pub failure: Option<String>,
    pub correct: bool,
    pub latency_ms: Option<f64>,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
}

/// One axis of the sweep, as the builder shows and checks it (`core::sweep`).
#[derive(Debug, Clone, Serialize, Type)]
pub struct AxisView {
    /// The key in the experiment file; the builder's field.
    pub key: String,
    /// `judge` or `sweep`: the table it is written in.
    pub section: String,
    pub title: String,
    pub help: String,
    /// What an experiment without it sweeps; empty: nothing (no limit).
    pub default: String,
    /// `real`, `count`, `choice` or `name`.
    pub kind: String,
    /// Real and count axes: their range; `above_min` excludes `min`.
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub above_min: bool,
    pub choices: Vec<String>,
    /// `all`, `pairwise` (pairwise data only) or `local` (local judges only).
    pub applies: String,
    /// A column of every trials table; an axis that is not is left out of an experiment
    /// file while it is at its default.
    pub always_shown: bool,
}

/// What a call came to, as the verdict list filters it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum OutcomeKind {
    Verdict,
    ParseFailure,
    CallFailed,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct TrialDetail {
    pub trial: TrialView,
    /// The trial's figures: the results table's columns and its row.
    pub figures: TableView,
    pub confusion: ConfusionView,
    pub total: u32,
    pub offset: u32,
    /// The verdicts that pass the filter, this page of them.
    pub verdicts: Vec<VerdictListing>,
    /// The labels (human or judge) to filter by.
    pub labels: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Type)]
pub struct VerdictDetail {
    pub listing: VerdictListing,
    pub question: String,
    pub messages: Vec<ChatMessage>,
    /// The rendered prompt hashes to the one stored with the verdict.
    pub prompt_verified: bool,
    pub raw_output: Option<String>,
    pub error: Option<String>,
    pub seed: u32,
    pub ttft_ms: Option<f64>,
    pub attempts: u32,
    pub cost_usd: Option<f64>,
}

/// Two judges to compare: a trial of one experiment and a trial of it or of another on the
/// same dataset (a section of an exported report).
#[derive(Debug, Clone, Serialize, Deserialize, Type)]
pub struct ComparedPair {
    pub first_experiment: String,
    pub first: u32,
    pub second_experiment: String,
    pub second: u32,
}

/// Two trials compared on the items both judged (`core::results::comparison`): the
/// paired test, and how the verdicts drifted.
#[derive(Debug, Clone, Serialize, Type)]
pub struct Comparison {
    pub first: u32,
    pub second: u32,
    /// The experiments they belong to (the same one, or two on the same dataset).
    pub first_experiment: String,
    pub second_experiment: String,
    pub metric: String,
    pub n_pairs: u32,
    pub first_only: u32,
    pub second_only: u32,
    pub mcnemar_p: f64,
    pub difference: Cell,
    pub drift: DriftView,
}

/// Verdict drift from the first trial to the second, call by call.
#[derive(Debug, Clone, Serialize, Type)]
pub struct DriftView {
    /// Calls both made with an output, and their items.
    pub n_calls: u32,
    pub n_items: u32,
    /// Calls only one made, and calls where either failed: left out.
    pub only_first: u32,
    pub only_second: u32,
    pub failed_calls: u32,
    /// The flip matrix's row and column labels, and `matrix[first][second]` counts.
    pub categories: Vec<String>,
    pub matrix: Vec<Vec<u32>>,
    pub flips: u32,
    pub flip_rate: Cell,
    pub toward_humans: u32,
    pub away_from_humans: u32,
    /// Cohen's kappa between the two trials' verdicts.
    pub kappa: Option<f64>,
    /// Where both carry beliefs (exact trials): mean KL(first ‖ second) and mean
    /// Jensen–Shannon divergence, and the calls that moved most.
    pub kl_mean: Option<Cell>,
    pub js_mean: Option<f64>,
    pub moved: Vec<MovedView>,
}

/// One call whose belief moved: its item, answer order and repeat (the drill-down opens
/// both trials' verdicts on it), the human label and each trial's verdict.
#[derive(Debug, Clone, Serialize, Type)]
pub struct MovedView {
    pub item_id: String,
    pub swapped: bool,
    pub repeat: u32,
    pub human: String,
    pub first: String,
    pub second: String,
    pub kl: Option<f64>,
    pub js: f64,
}

/// A chart to export.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Type)]
#[serde(rename_all = "snake_case")]
pub enum ChartKind {
    ParetoCost,
    ParetoLatency,
    Parameter,
    LatencyCdf,
}
