//! `judgelab panel`: a panel added to a stored experiment, its trials voting on each item
//! from the verdicts already stored (no model call), or removed; then shown as the
//! summary composes it.

use std::process::ExitCode;

use anyhow::{Context, Result};
use judgelab_core::experiment::{PanelRule, PanelSpec, Ties};
use judgelab_store::Store;

use crate::args::{experiment_name, one_of, BootstrapArgs};

/// `judgelab panel`'s arguments.
#[derive(clap::Args)]
pub struct Args {
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
    #[arg(long, default_value = "majority", value_parser = one_of(PanelRule::ALL.map(PanelRule::name)))]
    rule: String,
    /// A split vote: tie (pairwise) or first (the first member among the most given)
    /// [default: tie for pairwise data, first for ratings]
    #[arg(long, value_parser = one_of(Ties::ALL.map(Ties::name)))]
    ties: Option<String>,
    /// Remove the panel instead
    #[arg(long, conflicts_with_all = ["members", "ties"])]
    remove: bool,
    /// Print the panel as `show --json` lists it
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    bootstrap: BootstrapArgs,
}

pub async fn command(store: &Store, args: Args) -> Result<ExitCode> {
    let name = experiment_name(&args.experiment)?;
    if args.remove {
        judgelab_engine::panels::remove(store, &name, &args.name).await?;
        println!("removed panel {:?} from experiment {name:?}", args.name);
        return Ok(ExitCode::SUCCESS);
    }
    let spec = PanelSpec {
        name: args.name.clone(),
        members: args.members,
        rule: args.rule.parse().expect("clap checks the rule"),
        ties: args.ties.map(|t| t.parse().expect("clap checks the ties")),
    };
    judgelab_engine::panels::add(store, &name, spec).await?;
    let summary = judgelab_engine::summarize(store, &name, &args.bootstrap.spec()).await?;
    let p = summary
        .panels
        .iter()
        .find(|p| p.name == args.name)
        .context("the panel just added is in the summary")?;
    if args.json {
        let mut v = serde_json::to_value(p)?;
        v["kind"] = "panel".into();
        println!("{}", serde_json::to_string(&v)?);
        return Ok(ExitCode::SUCCESS);
    }
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
    // The panel as the report reads it: its score, against the best, its members' agreement.
    let a = judgelab_report::analysis::Analysis::new(
        &summary,
        summary.experiment.parsed.selection.metric,
    );
    let findings = judgelab_report::findings::Findings::new(&a);
    let panel = judgelab_report::findings::Subject::Panel(p.name.clone());
    for f in findings.list.iter().filter(|f| f.subject == panel) {
        println!("panel {}", f.line());
    }
    Ok(ExitCode::SUCCESS)
}
