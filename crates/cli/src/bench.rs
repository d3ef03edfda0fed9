//! `judgelab bench`: prints the engine benchmark (or, with `--peer`, the comparison with a
//! one-call-per-cell peer) as a table, then its JSON summary.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use judgelab_engine::bench::peer::{PeerEvent, PeerOptions, PeerReport};
use judgelab_engine::bench::race::{RaceOptions, TRIALS};
use judgelab_engine::bench::saturation::{SaturationOptions, SaturationReport};
use judgelab_engine::bench::{BenchEvent, BenchOptions, BenchReport, Floors, Way, NEAR_TIE};

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
    out += &rows(&[("judgelab", r.judgelab), ("peer", r.peer)], &r.floors);
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
