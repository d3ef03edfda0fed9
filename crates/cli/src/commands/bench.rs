//! `judgelab bench`: prints the engine benchmark (or, with `--peer`, the comparison with a
//! one-call-per-cell peer) as a table, then its JSON summary.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use judgelab_engine::bench::peer::{PeerEvent, PeerOptions, PeerReport};
use judgelab_engine::bench::race::{RaceOptions, TRIALS};
use judgelab_engine::bench::saturation::{SaturationOptions, SaturationReport};
use judgelab_engine::bench::{BenchEvent, BenchOptions, BenchReport, Floors, Way, NEAR_TIE};
use judgelab_store::Store;

/// `judgelab bench`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// Items of LLMBar Natural to judge, at most 98 [default: 12; 24 with --peer; 16
    /// with --saturation]; with --race, simulated items [default: 400]
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    items: Option<u16>,
    /// Print the JSON summary only
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    threads: crate::args::ThreadsArgs,
    /// The LLMBar Natural file [default: datasets/llmbar_natural.jsonl of this checkout]
    #[arg(long, value_name = "FILE")]
    dataset: Option<PathBuf>,
    /// `judgelab-floor`, llama.cpp built for this machine, for the hardware's floor
    /// (`cargo xtask bench` and `cargo xtask bench peer` build it and pass it)
    #[arg(long, value_name = "FILE")]
    floor_tool: Option<PathBuf>,
    /// An OpenAI-compatible server of the default model, up to /v1, to compare with
    /// (`cargo xtask bench peer` starts one)
    #[arg(long, value_name = "URL")]
    peer: Option<String>,
    /// The model name the peer (or --saturation) server knows
    #[arg(long, default_value = "smollm2")]
    peer_model: String,
    /// Requests in flight to the peer (promptfoo's default)
    #[arg(long, default_value_t = 4, requires = "peer", value_parser = clap::value_parser!(u16).range(1..=64))]
    peer_concurrency: u16,
    /// Run this experiment file with its calls timed alone, then decode the same prompts
    /// with a plain llama.cpp loop: each local trial's latency at concurrency 1 against
    /// a lone decode (`cargo xtask bench latency` runs the demo's)
    #[arg(long, value_name = "FILE", conflicts_with = "peer")]
    latency: Option<PathBuf>,
    /// With --latency: calls of each trial timed alone
    #[arg(long, default_value_t = judgelab_engine::DEFAULT_TIMED_CALLS, requires = "latency")]
    timed_calls: usize,
    /// Judge a two-trial sweep against this OpenAI-compatible server (up to /v1), then
    /// ramp its first trial through 1, 2, 4, 8 requests in flight: does the sweep keep
    /// the server as busy as the ramp's best level? (`cargo xtask bench saturation`
    /// starts a llama-server with four slots)
    #[arg(long, value_name = "URL", conflicts_with_all = ["peer", "latency"])]
    saturation: Option<String>,
    /// With --saturation: the sweep's calls in flight
    #[arg(long, default_value_t = 4, requires = "saturation", value_parser = clap::value_parser!(u16).range(1..=256))]
    sweep_concurrency: u16,
    /// With --saturation: timed requests per level of the ramp
    #[arg(long, default_value_t = 80, requires = "saturation")]
    ramp_requests: usize,
    /// Race a simulated 48-configuration grid of scripted judges of known accuracy
    /// against the full grid, over many seeds: how often the race's pick is within 0.02
    /// of the truly best, for what share of the grid's calls; and the bias of the pick's
    /// naive and selection-corrected scores (`cargo xtask bench race`)
    #[arg(long, conflicts_with_all = ["peer", "latency", "saturation"])]
    race: bool,
    /// With --race: simulated sweeps
    #[arg(long, default_value_t = 1000, requires = "race", value_parser = clap::value_parser!(u64).range(1..))]
    seeds: u64,
    /// With --race: the latent correlation between two configurations' correctness on
    /// an item (0: independent; 1: the same items are wrong for all)
    #[arg(long, default_value_t = 0.8, requires = "race")]
    correlation: f64,
}

/// Runs the benchmark `args` asks for: a race of simulated grids, a saturation ramp, the
/// latency of an experiment's trials, the peer comparison, or the engine benchmark.
pub async fn command(store: &Store, args: Args) -> Result<ExitCode> {
    let Args {
        items,
        json,
        threads,
        dataset,
        floor_tool,
        peer: peer_url,
        peer_model,
        peer_concurrency,
        latency: latency_file,
        timed_calls,
        saturation: saturation_url,
        sweep_concurrency,
        ramp_requests,
        race: raced,
        seeds,
        correlation,
    } = args;
    if raced {
        if !(0.0..=1.0).contains(&correlation) {
            anyhow::bail!("--correlation {correlation}: must be between 0 and 1");
        }
        let options = judgelab_engine::bench::race::RaceOptions {
            seeds,
            items: items.map_or(400, usize::from),
            correlation,
            ..Default::default()
        };
        return Ok(race(options, json));
    }
    if let Some(n) = items.filter(|&n| n > 98) {
        anyhow::bail!("--items {n}: LLMBar Natural has 98 items to judge beside its few-shot pool");
    }
    let dataset = dataset.unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/llmbar_natural.jsonl")
    });
    if let Some(base_url) = saturation_url {
        let options = judgelab_engine::bench::saturation::SaturationOptions {
            dataset,
            items: items.map_or(16, usize::from),
            base_url,
            model: peer_model,
            concurrency: usize::from(sweep_concurrency),
            levels: vec![1, 2, 4, 8],
            requests: ramp_requests,
            scratch: PathBuf::new(),
        };
        return saturation(options, json).await;
    }
    let threads = threads.get();
    if let Some(file) = latency_file {
        return latency(store, &file, timed_calls, threads, json).await;
    }
    match peer_url {
        Some(base_url) => {
            let options = judgelab_engine::bench::peer::PeerOptions {
                dataset,
                items: items.map_or(24, usize::from),
                base_url,
                model: peer_model,
                threads,
                concurrency: usize::from(peer_concurrency),
                floor_tool,
            };
            peer(&options, json).await
        }
        None => {
            let options = judgelab_engine::bench::BenchOptions {
                dataset,
                items: items.map_or(12, usize::from),
                model: None,
                threads,
                floor_tool,
            };
            bench(&options, json).await
        }
    }
}

/// `judgelab bench --latency FILE`: each local trial's latency at concurrency 1 against a
/// plain llama.cpp loop's decode of the same prompts.
async fn latency(
    store: &Store,
    file: &Path,
    timed_calls: usize,
    threads: Option<usize>,
    json: bool,
) -> Result<ExitCode> {
    let rows = judgelab_engine::bench::latency::latency(store, file, timed_calls, threads)
        .await
        .with_context(|| format!("while timing {}", file.display()))?;
    println!("trial  shots  temp   n  tok_in  latency_ms  ttft_ms  plain_loop_ms  ratio");
    for r in &rows {
        println!(
            "{:>5}  {:>5}  {:>4}  {:>2}  {:>6.0}  {:>10.0}  {:>7.0}  {:>13.0}  {:>5.2}",
            r.trial_id,
            r.few_shot,
            r.temperature,
            r.n,
            r.prompt_tokens,
            r.latency_ms,
            r.ttft_ms,
            r.plain_ms,
            r.ratio
        );
    }
    println!("latency_ms, ttft_ms: means of each trial's calls timed alone (concurrency 1); plain_loop_ms: the mean decode of the same prompts by a plain llama.cpp loop (whole prompt, cleared cache), in the same process");
    if json {
        println!("{}", serde_json::to_string(&rows)?);
    }
    Ok(ExitCode::SUCCESS)
}

pub async fn bench(options: &BenchOptions, json: bool) -> Result<ExitCode> {
    let dir = tempfile::tempdir().context("while creating a scratch folder")?;
    let bar = ProgressBar::hidden();
    let mut on_event = |event: BenchEvent| match event {
        BenchEvent::Phase(phase) => {
            bar.finish_and_clear();
            eprintln!("{}", phase_line(phase));
        }
        BenchEvent::Naive { done, total } => advance(&bar, done, total),
    };
    let report = judgelab_engine::bench::bench(options, dir.path(), &mut on_event)
        .await
        .context("while benchmarking")?;
    bar.finish_and_clear();
    if !json {
        print!("{}", table(&report));
    }
    println!(
        "{}",
        serde_json::to_string(&report).expect("the report serialises")
    );
    Ok(ExitCode::SUCCESS)
}

/// What a benchmark phase does, for the line that announces it.
fn phase_line(phase: &str) -> &'static str {
    match phase {
        "planned" => "planned: the engine, exact verdicts, shared prefix, batched",
        "naive" => "naive: every (trial, item) decoded from scratch, one at a time",
        "judgelab" => "judgelab: the planned run, exact verdicts on the local model",
        "peer" => "peer: one request per (trial, item) to the server",
        "floor" => "floor: a plain llama.cpp loop over the same prompts, this build",
        "hardware floor" => "hardware floor: the same loop, llama.cpp built for this machine",
        _ => "next phase",
    }
}

/// Shows `done` of `total` calls on the bar, drawing it on the first call.
fn advance(bar: &ProgressBar, done: usize, total: usize) {
    if bar.is_hidden() {
        bar.set_length(total as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} calls  ETA {eta}")
                .expect("static template"),
        );
        bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
        bar.enable_steady_tick(Duration::from_millis(500));
    }
    bar.set_position(done as u64);
}

pub async fn peer(options: &PeerOptions, json: bool) -> Result<ExitCode> {
    let dir = tempfile::tempdir().context("while creating a scratch folder")?;
    let bar = ProgressBar::hidden();
    let mut on_event = |event: PeerEvent| match event {
        PeerEvent::Phase(phase) => {
            bar.finish_and_clear();
            eprintln!("{}", phase_line(phase));
        }
        PeerEvent::Peer { done, total } => advance(&bar, done, total),
    };
    let report = judgelab_engine::bench::peer::peer(options, dir.path(), &mut on_event)
        .await
        .context("while benchmarking against the peer")?;
    bar.finish_and_clear();
    if !json {
        print!("{}", peer_table(&report, &options.base_url));
    }
    println!(
        "{}",
        serde_json::to_string(&report).expect("the report serialises")
    );
    Ok(ExitCode::SUCCESS)
}

/// `--saturation URL`: the sweep, then the ramp, in a scratch folder.
pub async fn saturation(mut options: SaturationOptions, json: bool) -> Result<ExitCode> {
    let dir = tempfile::tempdir().context("while creating a scratch folder")?;
    options.scratch = dir.path().to_path_buf();
    eprintln!(
        "judging a two-trial sweep of {} items ({} repeats) at {} calls in flight against {} (untimed until steady, then timed), then ramping its first trial through {:?} requests in flight ({} timed requests each)…",
        options.items,
        judgelab_engine::bench::saturation::repeats(options.items),
        options.concurrency,
        options.base_url,
        options.levels,
        options.requests
    );
    let report = judgelab_engine::bench::saturation::saturation(&options)
        .await
        .context("while benchmarking the sweep against the ramp")?;
    if !json {
        print!("{}", saturation_table(&report));
    }
    println!(
        "{}",
        serde_json::to_string(&report).expect("the report serialises")
    );
    Ok(ExitCode::SUCCESS)
}

fn saturation_table(r: &SaturationReport) -> String {
    let mut out =
        String::from("                         in flight  verdicts  seconds  verdicts/s\n");
    out.push_str(&format!(
        "sweep (2 trials)         {:>9}  {:>8}  {:>7.1}  {:>10.2}\n",
        r.concurrency, r.sweep_verdicts, r.sweep_s, r.sweep_vps
    ));
    for l in &r.ramp.levels {
        out.push_str(&format!(
            "ramp level              {:>10}  {:>8}  {:>7.1}  {:>10.2}\n",
            l.concurrency, l.requests, l.wall_s, l.throughput_vps
        ));
    }
    out.push_str(&format!(
        "the sweep reached {:.2}x the ramp's best throughput ({:.2} verdicts/s at {} in flight)",
        r.ratio, r.best_vps, r.best_concurrency
    ));
    if let Some(same) = r.ratio_same_load {
        out.push_str(&format!(
            " and {same:.2}x its throughput at {} in flight",
            r.concurrency
        ));
    }
    out.push_str("\n(both after untimed passes of the same sweep until one was no faster than the one before: the server's prompt cache in its steady state for both)\n");
    out
}

fn row(name: &str, w: Way) -> String {
    format!(
        "{name:<8} {:>8.1} {:>12} {:>14} {:>9.0}\n",
        w.wall_s,
        w.model_calls,
        w.prompt_tokens_decoded,
        w.prompt_tokens_decoded as f64 / w.wall_s.max(1e-9)
    )
}

fn peer_table(r: &PeerReport, base_url: &str) -> String {
    let mut out = format!(
        "{} items × {} trials (temperature 4 × top_p 3), pairwise, zero-shot; peer {base_url}, {} requests in flight\n",
        r.n_items, r.n_trials, r.peer_concurrency
    );
    out += &rows(
        &[
            ("judgelab", r.judgelab),
            ("peer", r.peer),
            ("remote", r.remote_exact),
        ],
        &r.floors,
    );
    let f = &r.floors;
    out += &format!(
        "judgelab wall time {:.2}× the peer's; judgelab {:.2}× and the peer {:.2}× the {} floor\n",
        r.ratio,
        r.judgelab.wall_s / f.floor_wall_s.max(1e-9),
        r.peer.wall_s / f.floor_wall_s.max(1e-9),
        f.floor
    );
    out += &hardware_kernels(f);
    out += &format!(
        "greedy verdicts: {} of {} agree\n",
        r.greedy_agree, r.greedy_compared
    );
    out += &format!(
        "remote: judgelab's grid through the peer's server, exact from its top_logprobs: {} calls for {} items and {} trials, where the peer made {}; {:.2}× the peer's wall time\n",
        r.remote_exact.model_calls,
        r.n_items,
        r.n_trials,
        r.peer.model_calls,
        r.remote_exact.wall_s / r.peer.wall_s.max(1e-9)
    );
    out
}

/// A table's header, its ways' rows, then the two floors' rows: the least work at each
/// floor's speed.
fn rows(ways: &[(&str, Way)], f: &Floors) -> String {
    let mut out = "way        wall_s  model_calls  prompt_tokens  tokens/s\n".to_string();
    for &(name, way) in ways {
        out += &row(name, way);
    }
    let floor = |name: &str, wall_s: f64, tokens_per_s: f64, what: &str| {
        format!(
            "{name:<8} {wall_s:>8.1} {:>12} {:>14} {tokens_per_s:>9.0}   ({what})\n",
            "-", f.min_prompt_tokens
        )
    };
    out += &floor(
        "build",
        f.build_floor_wall_s,
        f.build_floor_tokens_per_s,
        &format!("floor of this build: {}", f.build_kernels),
    );
    match (f.hardware_floor_wall_s, f.hardware_floor_tokens_per_s) {
        (Some(wall_s), Some(tokens_per_s)) => {
            out += &floor(
                "hardware",
                wall_s,
                tokens_per_s,
                "floor of llama.cpp built for this machine",
            );
        }
        _ => {
            out += "hardware        -            -              -         -   (not measured: `cargo xtask bench` builds llama.cpp for this machine and passes --floor-tool)\n";
        }
    }
    out
}

fn hardware_kernels(f: &Floors) -> String {
    f.hardware_kernels
        .as_ref()
        .map(|kernels| format!("hardware floor's llama.cpp: {kernels}\n"))
        .unwrap_or_default()
}

fn table(r: &BenchReport) -> String {
    let mut out = format!(
        "{} items × {} trials (temperature 4 × top_p 3), pairwise, 2 few-shot examples\n",
        r.n_items, r.n_trials
    );
    out += &rows(&[("naive", r.naive), ("planned", r.planned)], &r.floors);
    let f = &r.floors;
    out += &format!(
        "speed-up {:.1}×; planned wall time {:.2}× the {} floor ({:.2}× this build's); planned prompt tokens {:.3}× the least\n",
        r.speedup,
        r.planned.wall_s / f.floor_wall_s.max(1e-9),
        f.floor,
        r.planned.wall_s / f.build_floor_wall_s.max(1e-9),
        r.planned.prompt_tokens_decoded as f64 / f.min_prompt_tokens.max(1) as f64
    );
    out += &hardware_kernels(f);
    out += &format!(
        "greedy verdicts: {} compared, {} flipped ({} outside a near tie); {} near ties (two leading logits within {NEAR_TIE})\n",
        r.greedy_compared, r.greedy_flips, r.greedy_flips_not_near_tie, r.near_ties
    );
    out
}

/// `judgelab bench --race`: the simulation's figures, then its JSON summary as the last line
/// (with `--json`, the summary alone).
pub fn race(options: RaceOptions, json: bool) -> ExitCode {
    let started = std::time::Instant::now();
    if !json {
        eprintln!(
            "racing {} simulated sweeps of {TRIALS} configurations on {} items (correlation {})",
            options.seeds, options.items, options.correlation
        );
    }
    let report = judgelab_engine::bench::race::bench(options);
    let b = &report.bench;
    if !json {
        let s = &report.selection;
        println!(
            "race (rounds of {} items, no drop before {}, Holm at {}, on accuracy):",
            s.round, s.min_items, s.alpha
        );
        println!(
            "  pick within 0.02 of the best: race {:.1}% of seeds, full grid {:.1}%",
            100.0 * b.pick_within_0_02,
            100.0 * report.grid_pick_within_0_02
        );
        println!(
            "  mean regret (best's true accuracy minus the pick's): race {:.4}, full grid {:.4}",
            report.race_regret, report.grid_regret
        );
        println!(
            "  calls: {:.1}% of the full grid's; {:.1} configurations survive to the end",
            100.0 * b.calls_fraction,
            report.survivors
        );
        println!(
            "selection-corrected score of the full grid's pick (BBC, {} resamples a seed): naive bias {:+.4}, corrected {:+.4}",
            options.resamples, b.naive_bias, b.corrected_bias
        );
        println!("({:.1} s)", started.elapsed().as_secs_f64());
    }
    println!(
        "{}",
        serde_json::to_string(b).expect("the figures serialise")
    );
    ExitCode::SUCCESS
}
