//! A run's progress as its callers show it (the CLI's bar, the app's progress channel),
//! folded from its [`RunEvent`]s in one place: verdicts done of the total, those without a
//! verdict, the trial being judged, the rate since the start and the time left.

use std::time::Instant;

use crate::run::interface::RunEvent;

#[derive(Debug, Clone)]
pub struct Progress {
    started: Instant,
    pub n_trials: usize,
    /// Calls needed and answered: a call per verdict, or in a checklist a call per
    /// criterion of one.
    pub total: usize,
    pub done: usize,
    /// Verdicts the calls make (`total` where every call is a verdict).
    pub verdicts: usize,
    /// Calls answered before this run began: the rate counts only this run's.
    done_before: usize,
    /// Calls of this run that left no verdict (failed, or unparsable output).
    pub n_failed: usize,
    /// The trial of the latest verdict (0-based).
    pub trial_idx: usize,
    /// Once judging is done: calls timed, done of total, and the load they are timed at
    /// (none: alone).
    pub timed: Option<(usize, usize, Option<u32>)>,
    /// A race's round, of how many, and the trials still in it.
    pub round: Option<(u32, u32, usize)>,
    /// Judging the test split: the trials chosen for it.
    pub confirming: Option<usize>,
}

impl Default for Progress {
    fn default() -> Self {
        Progress {
            started: Instant::now(),
            n_trials: 0,
            total: 0,
            done: 0,
            verdicts: 0,
            done_before: 0,
            n_failed: 0,
            trial_idx: 0,
            timed: None,
            round: None,
            confirming: None,
        }
    }
}

impl Progress {
    pub fn new() -> Progress {
        Progress::default()
    }

    /// Takes in one event.
    pub fn update(&mut self, event: &RunEvent) {
        match *event {
            RunEvent::Started {
                n_trials,
                total,
                done,
                verdicts,
                ..
            } => {
                self.started = Instant::now();
                self.verdicts = verdicts;
                (self.n_trials, self.total, self.done, self.done_before) =
                    (n_trials, total, done, done);
            }
            RunEvent::Verdict {
                trial_idx,
                done,
                total,
                failed,
            } => {
                (self.trial_idx, self.done, self.total) = (trial_idx, done, total);
                self.n_failed += usize::from(failed);
            }
            RunEvent::Timed {
                done,
                total,
                concurrency,
            } => self.timed = Some((done, total, concurrency)),
            RunEvent::Round {
                round,
                n_rounds,
                survivors,
                ..
            } => self.round = Some((round, n_rounds, survivors)),
            RunEvent::Dropped { survivors, .. } => {
                if let Some((_, _, left)) = &mut self.round {
                    *left = survivors;
                }
            }
            RunEvent::Selected { ref trial_ids, .. } => {
                self.round = None;
                self.confirming = Some(trial_ids.len());
            }
            RunEvent::Imported { .. }
            | RunEvent::Loading { .. }
            | RunEvent::Quantizing { .. }
            | RunEvent::Quantized { .. }
            | RunEvent::Note { .. }
            | RunEvent::Summarising { .. } => {}
        }
    }

    /// Verdicts per second since the run started.
    pub fn verdicts_per_second(&self) -> f64 {
        (self.done - self.done_before) as f64 / self.started.elapsed().as_secs_f64().max(1e-3)
    }

    /// Seconds left at the rate so far; none before the first verdict.
    pub fn eta_seconds(&self) -> Option<f64> {
        let rate = self.verdicts_per_second();
        (rate > 0.0).then(|| (self.total - self.done) as f64 / rate)
    }

    /// What the CLI's bar says beside the count: "trial 3/12, 1 without a verdict".
    pub fn message(&self) -> String {
        match self.timed {
            Some((done, total, None)) => {
                return format!("timing calls alone for latency at concurrency 1: {done}/{total}")
            }
            Some((done, total, Some(c))) => {
                return format!(
                    "timing calls at concurrency {c} for latency at that load: {done}/{total}"
                )
            }
            None => {}
        }
        let stage = match (self.round, self.confirming) {
            (Some((round, n_rounds, left)), _) => {
                format!(
                    "race round {round}/{n_rounds}, {left} of {} trials left, ",
                    self.n_trials
                )
            }
            (None, Some(n)) => format!("test split, {n} kept trials: "),
            (None, None) => String::new(),
        };
        format!(
            "{stage}trial {}/{}, {} without a verdict",
            self.trial_idx + 1,
            self.n_trials,
            self.n_failed
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_this_runs_verdicts_and_failures() {
        let mut p = Progress::new();
        p.update(&RunEvent::Started {
            experiment: "e".into(),
            resumed: true,
            n_trials: 2,
            total: 10,
            done: 4,
            verdicts: 10,
            pool: vec![],
            n_judged_items: 5,
        });
        for (done, failed) in [(5, false), (6, true)] {
            p.update(&RunEvent::Verdict {
                trial_idx: 1,
                done,
                total: 10,
                failed,
            });
        }
        assert_eq!((p.done, p.total, p.n_failed), (6, 10, 1));
        assert_eq!(p.message(), "trial 2/2, 1 without a verdict");
        assert!(p.verdicts_per_second() > 0.0 && p.eta_seconds().is_some());
        p.update(&RunEvent::Timed {
            done: 3,
            total: 8,
            concurrency: None,
        });
        assert_eq!(
            p.message(),
            "timing calls alone for latency at concurrency 1: 3/8"
        );
        p.update(&RunEvent::Timed {
            done: 4,
            total: 8,
            concurrency: Some(4),
        });
        assert_eq!(
            p.message(),
            "timing calls at concurrency 4 for latency at that load: 4/8"
        );
    }
}
