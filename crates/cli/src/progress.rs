//! What a long command shows as it goes: a line per step of a run and a bar of its
//! verdicts and timed calls (`run`, `estimate`), Ctrl-C stopping after the calls in flight,
//! and why calls failed.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use judgelab_engine::RunEvent;

/// Stops a run after the calls in flight on the first Ctrl-C, and quits on the second.
pub fn stop_on_ctrl_c(cancel: Arc<AtomicBool>) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("\nstopping after the call in flight (Ctrl-C again to quit now; nothing judged is lost)");
            cancel.store(true, Ordering::SeqCst);
            if tokio::signal::ctrl_c().await.is_ok() {
                std::process::exit(130);
            }
        }
    });
}

/// What a run shows as it goes: a line per step, and a bar of the verdicts and the calls
/// timed.
pub struct RunBar {
    bar: ProgressBar,
    progress: judgelab_engine::Progress,
    /// The load of the calls being timed, as the bar says.
    timing: Option<u32>,
}

impl RunBar {
    pub fn new() -> RunBar {
        RunBar {
            bar: ProgressBar::hidden(),
            progress: judgelab_engine::Progress::new(),
            timing: None,
        }
    }

    /// Clears the bar once the run returns.
    pub fn finish(&self) {
        self.bar.finish_and_clear();
    }

    pub fn show(&mut self, event: RunEvent) {
        self.progress.update(&event);
        let bar = &self.bar;
        // A line printed while the bar is drawn goes above it.
        let say = |line: String| bar.suspend(|| eprintln!("{line}"));
        match event {
            RunEvent::Imported { dataset, n_items } => {
                eprintln!("imported dataset {dataset:?} ({n_items} items)");
            }
            RunEvent::Quantizing {
                judge,
                level,
                source,
            } => say(format!("making {level} of judge {judge:?} from {source} with llama.cpp's quantiser (once: it is kept in the model cache)")),
            RunEvent::Quantized {
                level,
                path,
                bytes,
                seconds,
                tensors,
                ..
            } => say(format!(
                "made {level}: {path}, {:.1} MB in {seconds:.1} s (tensors: {tensors})",
                bytes as f64 / 1e6
            )),
            RunEvent::Loading { model, path, local } => {
                say(format!("loading model {model} ({path})"));
                if local {
                    say(judgelab_engine::local_compute().summary());
                }
            }
            RunEvent::Note { judge, message } => say(format!("judge {judge:?} {message}")),
            started @ RunEvent::Started { .. } => self.started(started),
            RunEvent::Verdict { done, total, .. } => {
                // A race's drops lower the total as it goes.
                bar.set_length(total as u64);
                bar.set_position(done as u64);
                bar.set_message(self.progress.message());
            }
            RunEvent::Round {
                round,
                n_rounds,
                n_items,
                survivors,
                n_trials,
            } => say(format!(
                "race round {round}/{n_rounds}: {survivors} of {n_trials} trials on the first {n_items} dev items"
            )),
            RunEvent::Dropped {
                round,
                trial_ids,
                survivors,
            } => say(format!(
                "  dropped after round {round}, clearly worse than the leader: {} ({survivors} left)",
                ids(&trial_ids)
            )),
            RunEvent::Selected {
                trial_ids,
                n_test_items,
            } => say(format!(
                "dev split judged: {} judge the {n_test_items} test items, to confirm the pick",
                ids(&trial_ids)
            )),
            RunEvent::Timed {
                done,
                total,
                concurrency,
            } => self.timed(done, total, concurrency),
            RunEvent::Summarising {
                judge,
                level,
                done,
                total,
            } => self.summarising(&judge, level, done, total),
        }
    }

    /// A run starts: what it will judge, the few-shot pool, and the bar.
    fn started(&self, event: RunEvent) {
        let RunEvent::Started {
            experiment,
            resumed,
            n_trials,
            total,
            done,
            verdicts,
            pool,
            n_judged_items,
        } = event
        else {
            return;
        };
        let verb = if resumed { "resuming" } else { "running" };
        let work = if verdicts == total {
            format!("{total} verdicts, {done} already stored")
        } else {
            format!("{verdicts} verdicts in {total} calls (a checklist's call per criterion), {done} calls already stored")
        };
        eprintln!("{verb} {experiment:?}: {n_trials} trials × {n_judged_items} items: {work}");
        if !pool.is_empty() {
            eprintln!(
                "few-shot pool ({} items, never judged): {}",
                pool.len(),
                pool.join(", ")
            );
        }
        if done < total {
            let template = format!(
                "{{bar:30}} {{pos}}/{{len}} {}  {{per_sec}}  ETA {{eta}}  {{msg}}",
                unit(total, verdicts)
            );
            start_bar(&self.bar, total, done, &template);
        }
    }

    /// Calls timed after judging: a bar of its own for each load.
    fn timed(&mut self, done: usize, total: usize, concurrency: Option<u32>) {
        let what = match concurrency {
            None => "calls timed alone, for latency at concurrency 1".to_string(),
            Some(c) => format!("calls timed at concurrency {c}, for latency at that load"),
        };
        if done == 0 || self.timing != concurrency {
            self.timing = concurrency;
            let template = format!("{{bar:30}} {{pos}}/{{len}} {what}  ETA {{eta}}");
            start_bar(&self.bar, total, done, &template);
        } else {
            self.bar.set_position(done as u64);
        }
    }
}

impl RunBar {
    /// Summaries being written: a bar of their own.
    fn summarising(&mut self, judge: &str, level: u32, done: usize, total: usize) {
        if done == 0 {
            self.timing = None;
            let what = format!(
                "summaries by {judge:?} of the inputs over {level} tokens (each stored as it is written)"
            );
            self.bar.suspend(|| eprintln!("writing {total} {what}"));
            let template = format!("{{bar:30}} {{pos}}/{{len}} {what}  ETA {{eta}}");
            start_bar(&self.bar, total, done, &template);
        } else {
            self.bar.set_position(done as u64);
        }
    }
}

/// Trial ids as `show` prints them: `#3, #4`.
fn ids(trial_ids: &[i64]) -> String {
    let ids: Vec<String> = trial_ids.iter().map(|id| format!("#{id}")).collect();
    ids.join(", ")
}

/// What a run's counts count: verdicts, or calls where a checklist asks a call per
/// criterion of a verdict (`total` calls make `verdicts` verdicts).
pub fn unit(total: usize, verdicts: usize) -> &'static str {
    if total == verdicts {
        "verdicts"
    } else {
        "calls"
    }
}

/// Shows `bar` on stderr at `done` of `total`, drawn by `template`, its ETA from now.
pub fn start_bar(bar: &ProgressBar, total: usize, done: usize, template: &str) {
    bar.set_length(total as u64);
    bar.set_position(done as u64);
    bar.reset_eta();
    bar.set_style(ProgressStyle::with_template(template).expect("a valid template"));
    bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
    bar.enable_steady_tick(Duration::from_millis(500));
}

/// Why calls failed, each distinct error once with its count: a user sees the cause (a 401
/// and where the key came from, a refused connection) without opening the database.
pub fn print_failures(failures: &[judgelab_engine::FailureCause]) {
    const SHOWN: usize = 5;
    if failures.is_empty() {
        return;
    }
    eprintln!("failed calls, by cause:");
    for f in failures.iter().take(SHOWN) {
        eprintln!("  {} × {}", f.n_calls, f.error);
    }
    if failures.len() > SHOWN {
        let rest: usize = failures[SHOWN..].iter().map(|f| f.n_calls).sum();
        eprintln!(
            "  and {rest} calls of {} other causes (verdicts.csv of `judgelab report` has each call's error)",
            failures.len() - SHOWN
        );
    }
}
