//! `judgelab report`: the report folder (HTML, Markdown, CSVs and charts) of an
//! experiment, with any comparisons of two judges asked for.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use judgelab_core::metrics::Quality;
use judgelab_store::Store;

use super::compare;
use crate::args::{experiment_name, parse_quality, BootstrapArgs, LabelsArgs};

/// `judgelab report`'s arguments.
#[derive(clap::Args)]
pub struct Args {
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
}

pub async fn command(store: &Store, args: Args) -> Result<ExitCode> {
    let name = experiment_name(&args.experiment)?;
    let bootstrap = args.bootstrap.spec();
    let summary = args.labels.summarize(store, &name, &bootstrap).await?;
    let (labels, criterion) = (args.labels.labels()?, args.labels.criterion.as_deref());
    let quality = args
        .metric
        .unwrap_or(summary.experiment.parsed.selection.metric);
    let mut comparisons = Vec::new();
    for pair in args.compare.chunks(2) {
        let side = |text: &str| compare::Side::parse(text, Some(&name));
        let sides = (&side(&pair[0])?, &side(&pair[1])?);
        let reading = (quality, (&labels, criterion));
        let (c, _) = compare::resolve(store, sides, reading, &bootstrap, &[&summary]).await?;
        comparisons.push(c);
    }
    let options = judgelab_report::ReportOptions {
        quality,
        comparisons,
        alignment: store.align_outcome(&name).await?,
    };
    let out = &args.out;
    let files = judgelab_report::write_report(&summary, out, &options)
        .with_context(|| format!("while writing the report into {}", out.display()))?;
    eprintln!("wrote {} files into {}", files.len(), out.display());
    println!("{}", out.join("report.html").display());
    Ok(ExitCode::SUCCESS)
}
