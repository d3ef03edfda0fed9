//! What several commands take: whose labels the metrics are against, how many threads a
//! local model computes with, how intervals are drawn, an experiment named or given as its
//! file, and the parsers of metric names.

use std::path::Path;

use anyhow::{Context, Result};
use judgelab_core::annotation::Labels;
use judgelab_core::metrics::{BootstrapSpec, Quality};
use judgelab_core::pareto::Objective;
use judgelab_engine::EngineError;

/// Whose labels the metrics are against.
#[derive(clap::Args, Clone)]
pub struct LabelsArgs {
    /// The labels the metrics are against: original (the dataset's), annotations (the
    /// labelling queue's), both (an item's annotation where it has one, else the dataset's)
    #[arg(long, default_value = "original", value_parser = ["original", "annotations", "both"])]
    pub labels: String,
    /// With --labels annotations or both: whose [default: every annotator's, combined: a
    /// majority (a split vote a tie) or the mean rating]
    #[arg(long, value_name = "NAME")]
    pub annotator: Option<String>,
    /// Read a rubric's trials on one criterion: their verdicts on it against the dataset's
    /// labels on it [default: the item's one label, with every criterion's agreement beside]
    #[arg(long, value_name = "NAME")]
    pub criterion: Option<String>,
}

impl LabelsArgs {
    pub fn labels(&self) -> Result<Labels> {
        Labels::parse(&self.labels, self.annotator.clone()).map_err(|e| EngineError::from(e).into())
    }

    /// Experiment `name` summarised against these labels, on the criterion read (none:
    /// each item's one label).
    pub async fn summarize(
        &self,
        store: &judgelab_store::Store,
        name: &str,
        bootstrap: &BootstrapSpec,
    ) -> Result<judgelab_core::results::ExperimentSummary> {
        let labels = self.labels()?;
        let criterion = self.criterion.as_deref();
        Ok(judgelab_engine::summarize_against(store, name, bootstrap, &labels, criterion).await?)
    }
}

/// The CPU threads a local model computes with.
#[derive(clap::Args, Clone, Copy)]
pub struct ThreadsArgs {
    /// CPU threads for local models [default: all cores]
    #[arg(long, env = "JUDGELAB_THREADS", value_parser = clap::value_parser!(u16).range(1..=1024))]
    threads: Option<u16>,
}

impl ThreadsArgs {
    pub fn get(self) -> Option<usize> {
        self.threads.map(usize::from)
    }
}

/// How confidence intervals are drawn.
#[derive(clap::Args, Clone, Copy)]
pub struct BootstrapArgs {
    /// Bootstrap resamples for the 95% confidence intervals (0: none)
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(0..=100_000))]
    resamples: u32,
    /// Seed of the bootstrap resamples
    #[arg(long, default_value_t = 0)]
    bootstrap_seed: u64,
}

impl BootstrapArgs {
    pub fn spec(self) -> BootstrapSpec {
        BootstrapSpec {
            resamples: self.resamples,
            seed: self.bootstrap_seed,
            ..BootstrapSpec::default()
        }
    }
}

pub fn parse_objective(text: &str) -> Result<Objective, String> {
    text.trim().parse::<Objective>().map_err(|_| {
        format!("{text:?} is not an objective (a metric that ranks trials, such as kappa or spearman, not an error such as mae; or tokens, usd, latency_p95, ttft_p95)")
    })
}

pub fn parse_quality(text: &str) -> Result<Quality, String> {
    text.parse::<Quality>().map_err(|_| {
        let names: Vec<&str> = Quality::ALL.iter().map(|q| q.name()).collect();
        format!(
            "{text:?} is not a metric (expected one of {})",
            names.join(", ")
        )
    })
}

pub fn parse_scale(text: &str) -> Result<(i64, i64), String> {
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

/// An experiment's name, given the name or its .toml file.
pub fn experiment_name(experiment: &str) -> Result<String> {
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

/// A parser of one of `names` (an enum's, as [`judgelab_core::names`] declares them), which
/// `--help` lists.
pub fn one_of<const N: usize>(names: [&'static str; N]) -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(names)
}
