//! `judgelab bench`: prints the engine benchmark as a table, then its JSON summary.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use judgelab_engine::bench::{BenchEvent, BenchOptions, BenchReport, NEAR_TIE};

pub async fn bench(options: &BenchOptions, json: bool) -> Result<ExitCode> {
    let dir = tempfile::tempdir().context("while creating a scratch folder")?;
    let bar = ProgressBar::hidden();
    let mut on_event = |event: BenchEvent| match event {
        BenchEvent::Phase(phase) => {
            bar.finish_and_clear();
            eprintln!(
                "{}",
                match phase {
                    "planned" => "planned: the engine, exact verdicts, shared prefix, batched",
                    "naive" => "naive: every (trial, item) decoded from scratch, one at a time",
                    _ => "floor: a plain llama.cpp loop over the same prompts",
                }
            );
        }
        BenchEvent::Naive { done, total } => {
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

fn table(r: &BenchReport) -> String {
    let rate = |tokens: u64, s: f64| tokens as f64 / s.max(1e-9);
    let mut out = format!(
        "{} items × {} trials (temperature 4 × top_p 3), pairwise, 2 few-shot examples\n",
        r.n_items, r.n_trials
    );
    out += "way        wall_s  model_calls  prompt_tokens  tokens/s\n";
    for (name, w) in [("naive", r.naive), ("planned", r.planned)] {
        out += &format!(
            "{name:<8} {:>8.1} {:>12} {:>14} {:>9.0}\n",
            w.wall_s,
            w.model_calls,
            w.prompt_tokens_decoded,
            rate(w.prompt_tokens_decoded, w.wall_s)
        );
    }
    out += &format!(
        "{:<8} {:>8.1} {:>12} {:>14} {:>9.0}   (plain llama.cpp loop: the least work at full speed)\n",
        "floor", r.floor_wall_s, "-", r.min_prompt_tokens, r.floor_tokens_per_s
    );
    out += &format!(
        "speed-up {:.1}×; planned wall time {:.2}× the floor; planned prompt tokens {:.3}× the least\n",
        r.speedup,
        r.planned.wall_s / r.floor_wall_s.max(1e-9),
        r.planned.prompt_tokens_decoded as f64 / r.min_prompt_tokens.max(1) as f64
    );
    out += &format!(
        "greedy verdicts: {} compared, {} flipped ({} outside a near tie); {} near ties (two leading logits within {NEAR_TIE})\n",
        r.greedy_compared, r.greedy_flips, r.greedy_flips_not_near_tie, r.near_ties
    );
    out
}
