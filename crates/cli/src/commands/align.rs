//! `judgelab align`: search for a judge that agrees better with the humans than one
//! trial's, within a budget, and confirm the best on the test split; `--plan` says what it
//! may spend, `--out` writes the best template and the lineage, `--json` the outcome.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::{Context, Result};
use judgelab_core::align::plan::Budget;
use judgelab_engine::align::{AlignEvent, AlignOutcome, AlignRequest};
use judgelab_store::Store;

use crate::args::experiment_name;

/// `judgelab align`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// An experiment name, or its .toml file (it needs a test split: `[limits] test`)
    experiment: String,
    /// The trial to start from, by its id as `show` prints it
    #[arg(long)]
    trial: i64,
    /// The most calls to spend, judge and proposer calls together
    #[arg(long, value_name = "N")]
    budget_calls: Option<u64>,
    /// The most dollars to spend, where the judge or the proposer has a price (each call
    /// counted at its most)
    #[arg(long, value_name = "USD")]
    budget_usd: Option<f64>,
    /// The most generations to run, whatever the budget leaves
    #[arg(long, value_name = "N", default_value_t = 3)]
    generations: u32,
    /// Survivors that parent each generation
    #[arg(long, value_name = "N", default_value_t = 1)]
    parents: usize,
    /// The judge of the experiment that proposes rewrites [default: the trial's own]
    #[arg(long, value_name = "NAME")]
    proposer: Option<String>,
    /// A proposer template of your own (Jinja, with `instruction`, `template`, `mistakes`…)
    /// [default: the built-in one]
    #[arg(long, value_name = "FILE")]
    proposer_template: Option<PathBuf>,
    /// Dev mistakes shown to the proposer per call
    #[arg(long, value_name = "N", default_value_t = 4)]
    mistakes: usize,
    /// Print the plan (the most it can spend) and stop
    #[arg(long)]
    plan: bool,
    /// Write best.jinja, the best judge's card (judge.json, judge.md) and lineage.json here
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    #[command(flatten)]
    threads: crate::args::ThreadsArgs,
    /// Print the outcome as JSON, on its last line
    #[arg(long)]
    json: bool,
}

pub async fn command(store: &Store, args: Args) -> Result<ExitCode> {
    let name = experiment_name(&args.experiment)?;
    let budget = Budget {
        calls: args.budget_calls,
        usd: args.budget_usd,
    };
    let mut request = AlignRequest::new(&name, args.trial, budget);
    request.max_generations = args.generations;
    request.parents = args.parents;
    request.proposer = args.proposer.clone();
    request.proposer_template = args.proposer_template.clone();
    request.mistakes = args.mistakes;
    request.options.threads = args.threads.get();
    request.options.timed_calls = 0;
    if args.plan {
        let plan = judgelab_engine::align::plan(store, &request).await?;
        println!("{}", judgelab_report::alignment::plan_text(&plan));
        if args.json {
            println!("{}", serde_json::to_string(&plan)?);
        }
        return Ok(ExitCode::SUCCESS);
    }
    let cancel = request.options.cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\nstopping after the calls in flight; run the same command to resume");
            cancel.store(true, Ordering::SeqCst);
        }
    });
    let outcome = judgelab_engine::align::align(store, &request, &mut progress)
        .await
        .with_context(|| format!("while aligning trial #{} of {name:?}", args.trial))?;
    print!("{}", judgelab_report::alignment::text(&outcome));
    if let Some(dir) = &args.out {
        write_out(store, &outcome, dir).await?;
    }
    if args.json {
        println!("{}", serde_json::to_string(&json_line(&outcome))?);
    }
    Ok(ExitCode::SUCCESS)
}

/// The search's progress, a line each on standard error.
fn progress(event: AlignEvent) {
    match event {
        AlignEvent::Planned(p) => eprintln!("{}", judgelab_report::alignment::plan_text(&p)),
        AlignEvent::Generation {
            generation,
            n_generations,
        } => eprintln!("generation {generation} of {n_generations}"),
        AlignEvent::Candidate { candidate: c } => {
            let from = c.parent.map_or(String::new(), |p| format!(" of candidate {p}"));
            match &c.rejected {
                Some(why) => eprintln!("  candidate {} ({}{from}): rejected: {why}", c.id, c.kind),
                None => eprintln!("  candidate {} ({}{from})", c.id, c.kind),
            }
        }
        AlignEvent::Round {
            generation,
            round,
            n_rounds,
            n_items,
            survivors,
        } => eprintln!(
            "  generation {generation}, round {round} of {n_rounds}: {survivors} candidates on {n_items} dev items"
        ),
        AlignEvent::Spent { calls, budget } => match budget {
            Some(b) => eprintln!("  {calls} of {b} calls spent"),
            None => eprintln!("  {calls} calls spent"),
        },
        AlignEvent::Run(_) => {}
    }
}

/// `--json`'s last line: the start's and the best's test agreement with intervals, their
/// paired difference, the calls spent and the budget.
fn json_line(o: &AlignOutcome) -> serde_json::Value {
    let c = o.confirmation.as_ref();
    let metric = o.metric;
    serde_json::json!({
        "alignment": o.alignment,
        "metric": metric.name(),
        "start": c.map(|c| c.start.quality.get(metric)),
        "best": c.map(|c| c.best.quality.get(metric)),
        "difference": c.map(|c| c.difference.difference),
        "mcnemar_p": c.map(|c| c.difference.mcnemar_p),
        "verdict": c.map(|c| c.verdict.clone()),
        "best_candidate": o.best,
        "candidates": o.candidates.iter().filter(|c| c.candidate.trial_id.is_some()).count(),
        "rewrites": o.candidates.iter().filter(|c| c.candidate.kind == judgelab_core::align::Move::Rewrite && c.candidate.trial_id.is_some()).count(),
        "spent_calls": o.spent_calls,
        "budget_calls": o.plan.budget.calls,
        "spent_usd": o.spent_usd,
        "budget_usd": o.plan.budget.usd,
        "full_dev_calls": o.full_dev_calls,
        "stopped": o.stopped,
    })
}

/// `--out`: best.jinja, the best judge's card and lineage.json.
async fn write_out(store: &Store, o: &AlignOutcome, dir: &std::path::Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("while creating {}", dir.display()))?;
    let best = &o.candidates[o.best as usize];
    if let Some((_, source)) = &best.template {
        std::fs::write(dir.join("best.jinja"), source)
            .with_context(|| format!("while writing {}", dir.join("best.jinja").display()))?;
    }
    if let Some(trial) = best.candidate.trial_id {
        let card = judgelab_engine::export_judge(store, &o.alignment, trial).await?;
        judgelab_report::card::write(&card, dir)
            .with_context(|| format!("while writing the card into {}", dir.display()))?;
    }
    let lineage = serde_json::to_string_pretty(o)?;
    std::fs::write(dir.join("lineage.json"), lineage)
        .with_context(|| format!("while writing {}", dir.join("lineage.json").display()))?;
    Ok(())
}
