//! `judgelab run`: an experiment file run, or resumed where it stopped, with a bar as it
//! goes and its trials table at the end; `--plan` says what it will cost and calls nothing.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use judgelab_core::metrics::BootstrapSpec;
use judgelab_engine::{RunEvent, RunOptions, RunSummary};
use judgelab_store::Store;

use crate::progress::{print_failures, stop_on_ctrl_c, unit, RunBar};
use crate::table;

/// `judgelab run`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    experiment: PathBuf,
    /// Discard a stored experiment of the same name whose content differs
    #[arg(long)]
    replace: bool,
    #[command(flatten)]
    threads: crate::args::ThreadsArgs,
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
}

pub async fn command(store: &Store, args: Args) -> Result<ExitCode> {
    if args.plan {
        return plan(store, &args.experiment, args.timed_calls).await;
    }
    let options = RunOptions {
        replace: args.replace,
        threads: args.threads.get(),
        no_cache: args.no_cache,
        timed_calls: args.timed_calls,
        ..RunOptions::default()
    };
    run(store, &args.experiment, options).await
}

/// `run --plan`: what the run will cost, before any call.
async fn plan(store: &Store, experiment: &Path, timed_calls: usize) -> Result<ExitCode> {
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

async fn run(store: &Store, path: &Path, options: RunOptions) -> Result<ExitCode> {
    stop_on_ctrl_c(options.cancel.clone());
    let mut shown_bar = RunBar::new();
    let mut on_event = |event: RunEvent| shown_bar.show(event);
    let summary = judgelab_engine::run_experiment(store, path, options, &mut on_event)
        .await
        .with_context(|| format!("while running {}", path.display()))?;
    shown_bar.finish();
    say_race(&summary);
    let stored = summary.already_done + summary.judged_now - summary.n_errors;
    let unit = unit(summary.total, summary.verdicts);
    if let Some(why) = &summary.stopped_by {
        eprintln!(
            "stopped: {why} reached; {stored} of {} {unit} stored; raise it and run `judgelab run {}` again to go on",
            summary.total,
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
            "interrupted: {stored} of {} {unit} stored in {}; run `judgelab run {}` again to resume",
            summary.total,
            store.path().display(),
            path.display()
        );
        print_failures(&summary.failures);
        return Ok(ExitCode::from(130));
    }
    say_judged(&summary);
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

/// Where a race stands after this run.
fn say_race(summary: &RunSummary) {
    let Some(race) = &summary.race else {
        return;
    };
    eprintln!(
        "race: {} of {} rounds decided, {} of {} trials left ({} dropped by this run)",
        race.rounds, race.n_rounds, race.survivors, summary.n_trials, race.dropped_now
    );
    if race.blocked {
        eprintln!("  the race waits on failed calls of its current round: run again to retry them");
    }
}

/// What a run that went to its end did: judged, failed, timed, called, found in the cache.
fn say_judged(summary: &RunSummary) {
    let unit = unit(summary.total, summary.verdicts);
    if summary.judged_now == 0 && summary.n_errors == 0 {
        eprintln!("{:?} is complete: nothing to judge", summary.experiment);
    } else if summary.n_errors == 0 {
        eprintln!("judged {} {unit}", summary.judged_now);
    } else {
        eprintln!(
            "judged {} {unit}; {} failed and will be retried by the next run (their errors are recorded)",
            summary.judged_now, summary.n_errors
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
        let counted = match unit {
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
}
