//! `judgelab load`: a concurrency ramp against one trial's judge configuration, per level
//! its throughput, TTFT and latency percentiles with intervals, errors and retries, then
//! the knee.

use std::process::ExitCode;
use std::sync::atomic::Ordering;

use anyhow::{Context, Result};
use indicatif::ProgressBar;
use judgelab_engine::load::{LoadEvent, LoadOptions};
use judgelab_store::Store;

use crate::args::experiment_name;
use crate::progress::start_bar;
use crate::table;

/// `judgelab load`'s arguments.
#[derive(clap::Args)]
pub struct Args {
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
    #[command(flatten)]
    threads: crate::args::ThreadsArgs,
    /// Let the server's prompt cache answer what it holds, as it did the sweep's
    /// requests [default: no request is answered from a prompt cache]
    #[arg(long)]
    prompt_cache: bool,
    /// Print the ramp as JSON, on its last line
    #[arg(long)]
    json: bool,
}

pub async fn command(store: &Store, args: Args) -> Result<ExitCode> {
    let name = experiment_name(&args.experiment)?;
    let json = args.json;
    let options = LoadOptions {
        trial_id: args.trial,
        levels: args.concurrency,
        requests: args.requests,
        warmup: args.warmup,
        slo_ms: args.slo_ms,
        prompt_cache: args.prompt_cache,
        threads: args.threads.get(),
        judges: None,
        cancel: Default::default(),
    };
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
