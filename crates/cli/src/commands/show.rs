//! `judgelab show`: an experiment's trials and their metrics, as the terminal table or as
//! JSON (the summary, the pick and the results table), with the Pareto front of chosen
//! objectives marked.

use std::process::ExitCode;

use anyhow::Result;
use judgelab_core::pareto::Objective;
use judgelab_core::results::ExperimentSummary;
use judgelab_engine::EngineError;
use judgelab_report::analysis::Analysis;
use judgelab_report::table::{ResultsTable, RowKind};
use judgelab_store::Store;

use crate::args::{experiment_name, parse_objective, BootstrapArgs, LabelsArgs};
use crate::table;

/// `judgelab show`'s arguments.
#[derive(clap::Args)]
pub struct Args {
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
}

pub async fn command(store: &Store, args: Args) -> Result<ExitCode> {
    let name = experiment_name(&args.experiment)?;
    let objectives = args.front.unwrap_or_default();
    let bootstrap = args.bootstrap.spec();
    let summary = args.labels.summarize(store, &name, &bootstrap).await?;
    check_front(&summary, &objectives)?;
    if !args.json {
        print!("{}", table::trials(&summary, &objectives));
        return Ok(ExitCode::SUCCESS);
    }
    let mut value = serde_json::to_value(&summary)?;
    // The best trial by the metric that ranks them (`[selection] metric`), its score
    // corrected for having been picked among all of them, and the results table.
    let a = Analysis::new(&summary, summary.experiment.parsed.selection.metric);
    let results = ResultsTable::new(&a, &objectives);
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
