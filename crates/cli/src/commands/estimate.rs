//! `judgelab estimate`: items without a human label judged with one trial's configuration,
//! and their win rate, mean rating or pass rate estimated with the labelled items' help
//! (PPI++, Rogan–Gladen) beside the judge's own figure; resumable, as a run is.

use std::process::ExitCode;

use anyhow::{Context, Result};
use judgelab_engine::estimate::EstimateRequest;
use judgelab_engine::{RunEvent, RunOptions, UnlabelledRequest};
use judgelab_store::Store;

use crate::args::experiment_name;
use crate::progress::{print_failures, stop_on_ctrl_c, unit, RunBar};
use crate::table;

/// `judgelab estimate`'s arguments.
#[derive(clap::Args)]
pub struct Args {
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
    #[command(flatten)]
    threads: crate::args::ThreadsArgs,
    /// Call remote judges even where the response cache already has the answer
    #[arg(long)]
    no_cache: bool,
    /// Print the estimate as JSON, on its last line
    #[arg(long)]
    json: bool,
}

pub async fn command(store: &Store, args: Args) -> Result<ExitCode> {
    let experiment = &args.experiment;
    let name = experiment_name(experiment)?;
    let request = EstimateRequest {
        items: UnlabelledRequest {
            trial_id: args.trial,
            dataset: args.dataset,
        },
        width: args.width,
    };
    let options = RunOptions {
        threads: args.threads.get(),
        no_cache: args.no_cache,
        ..RunOptions::default()
    };
    stop_on_ctrl_c(options.cancel.clone());
    let mut shown_bar = RunBar::new();
    let mut on_event = |event: RunEvent| shown_bar.show(event);
    let estimated =
        judgelab_engine::estimate::estimate(store, &name, &request, options, &mut on_event)
            .await
            .with_context(|| format!("while estimating with trial {} of {name:?}", args.trial))?;
    shown_bar.finish();
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
    if args.json {
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
