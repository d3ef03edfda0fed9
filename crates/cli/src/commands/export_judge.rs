//! `judgelab export-judge`: a trial's judge card, `judge.json` (to run it again) and
//! `judge.md` (to read or cite).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use judgelab_store::Store;

use crate::args::experiment_name;

/// `judgelab export-judge`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// An experiment name, or its .toml file
    experiment: String,
    /// The trial's id (as `show` lists it)
    #[arg(long)]
    trial: i64,
    /// The folder to write into (created if missing) [default: the working directory]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

pub async fn command(store: &Store, args: Args) -> Result<ExitCode> {
    let name = experiment_name(&args.experiment)?;
    let trial = args.trial;
    let card = judgelab_engine::export_judge(store, &name, trial).await?;
    let out = args.out.unwrap_or_else(|| PathBuf::from("."));
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
