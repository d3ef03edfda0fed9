//! What a run is asked ([`RunOptions`]), what it reports while it goes ([`RunEvent`]) and
//! how it ended ([`RunSummary`]): the run's interface, apart from the run itself, so that
//! the judges it loads and the progress its callers show can name it.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use crate::judges::JudgeLoader;

/// Calls of each local trial timed alone by default, for its latency at concurrency 1.
pub const DEFAULT_TIMED_CALLS: usize = 20;

/// How to run.
#[derive(Clone)]
pub struct RunOptions {
    /// Discard a stored experiment of the same name whose content differs.
    pub replace: bool,
    /// Set it to stop after the calls in flight; everything judged is kept.
    pub cancel: Arc<AtomicBool>,
    /// CPU threads for a local model; default: all cores.
    pub threads: Option<usize>,
    /// Where judges come from; default: [`LocalModels`](crate::LocalModels).
    pub judges: Option<Arc<dyn JudgeLoader>>,
    /// Call remote judges even where the response cache has the answer.
    pub no_cache: bool,
    /// Decode every call in full and alone: no shared prefix, one sequence at a time and
    /// no verdicts from exact distributions. The baseline `judgelab bench` compares with.
    pub naive: bool,
    /// Calls of each local trial timed alone after judging ([`DEFAULT_TIMED_CALLS`]); 0
    /// times none, and local trials then have no latency figures.
    pub timed_calls: usize,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            replace: false,
            cancel: Arc::default(),
            threads: None,
            judges: None,
            no_cache: false,
            naive: false,
            timed_calls: DEFAULT_TIMED_CALLS,
        }
    }
}

/// What a run reports while it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum RunEvent {
    /// The dataset file was imported on the fly.
    Imported { dataset: String, n_items: usize },
    /// A model is being loaded: a local GGUF file (`local`) or a remote endpoint.
    Loading {
        model: String,
        path: String,
        local: bool,
    },
    /// A local judge's model file is being made in another type (the quantisation axis).
    Quantizing {
        judge: String,
        level: String,
        source: String,
    },
    /// It is made: its file, size, how long it took, and what its tensors are.
    Quantized {
        judge: String,
        level: String,
        path: String,
        bytes: u64,
        seconds: f64,
        tensors: String,
    },
    /// What the run found of a judge and did about it, as the rest of a sentence that
    /// begins with the judge's name: its one-token trials generate instead of reading
    /// exact verdicts, and why (its server returns no log-probabilities; a verdict is not
    /// one token of its model); its server serves one request at a time, and its calls
    /// went on one at a time.
    Note { judge: String, message: String },
    /// The work is known.
    Started {
        experiment: String,
        resumed: bool,
        n_trials: usize,
        /// Calls the experiment needs in all, and how many it already has: a call per
        /// verdict, or in a checklist a call per criterion of one.
        total: usize,
        done: usize,
        /// Verdicts those calls make (`total` where every call is a verdict).
        verdicts: usize,
        /// Few-shot pool, reserved and never judged.
        pool: Vec<String>,
        n_judged_items: usize,
    },
    /// One verdict was recorded.
    Verdict {
        trial_idx: usize,
        done: usize,
        total: usize,
        /// The call failed or the output did not parse.
        failed: bool,
    },
    /// A race's round starts: `survivors` of `n_trials` judge its items, up to `n_items`
    /// of the dev split.
    Round {
        round: u32,
        n_rounds: u32,
        n_items: usize,
        survivors: usize,
        n_trials: usize,
    },
    /// Trials a race dropped after a round (their store ids), and how many are left.
    Dropped {
        round: u32,
        trial_ids: Vec<i64>,
        survivors: usize,
    },
    /// The trials that judge the test split are chosen (their store ids).
    Selected {
        trial_ids: Vec<i64>,
        n_test_items: usize,
    },
    /// Calls timed for latency at a stated load: `done` of `total` (0 as it starts). A
    /// local judge's alone, one request at a time (`concurrency: None`); a remote trial's
    /// with the `concurrency` its sweep sets in flight.
    Timed {
        done: usize,
        total: usize,
        concurrency: Option<u32>,
    },
    /// Summaries for `input_strategy = "summary"` are being written by `judge` (the
    /// summariser), at most `level` tokens each: `done` of `total` (0 as it starts).
    Summarising {
        judge: String,
        level: u32,
        done: usize,
        total: usize,
    },
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    pub experiment: String,
    pub experiment_id: i64,
    pub resumed: bool,
    pub n_trials: usize,
    /// Calls the experiment needs: a call per verdict, or in a checklist a call per
    /// criterion of one.
    pub total: usize,
    /// Verdicts those calls make (`total` where every call is a verdict).
    pub verdicts: usize,
    /// Calls answered before this run.
    pub already_done: usize,
    /// Calls answered by this run (calls that failed included).
    pub judged_now: usize,
    /// Calls of this run that failed (recorded with their error; retried by the next run).
    pub n_errors: usize,
    /// Calls answered from the response cache, without calling the judge.
    pub cache_hits: usize,
    /// Calls this run made to judges: with exact verdicts, one forward pass per prompt
    /// however many trials and repeats it answers.
    pub model_calls: usize,
    /// Prompt tokens the judges actually decoded (a shared prefix counted once), or the
    /// prompt tokens they were sent where they do not say.
    pub prompt_tokens_decoded: u64,
    /// Calls timed alone by this run, for local trials' latency at concurrency 1.
    pub timed_now: usize,
    /// Calls timed by this run at the load the sweep sets for remote trials.
    pub timed_at_load: usize,
    /// Cancelled before everything was judged and timed.
    pub interrupted: bool,
    /// The budget that stopped it (`limits.max_calls = 5000 (calls made: 5000)`).
    pub stopped_by: Option<String>,
    /// How a race stands (none for a grid).
    pub race: Option<super::RaceState>,
    /// The test split waits for the dev split to be complete (failed calls to retry, or an
    /// interrupted run).
    pub test_waits: bool,
    /// Why this run's calls failed: each distinct error with how many calls it failed,
    /// the most frequent first.
    pub failures: Vec<FailureCause>,
}

/// One reason calls failed, and how many.
#[derive(Debug, Clone, PartialEq)]
pub struct FailureCause {
    pub error: String,
    pub n_calls: usize,
}

impl FailureCause {
    /// Errors counted by their text, as causes, the most frequent first (ties in the order
    /// of their error).
    pub fn ranked(counts: std::collections::BTreeMap<String, usize>) -> Vec<FailureCause> {
        let mut causes: Vec<FailureCause> = counts
            .into_iter()
            .map(|(error, n_calls)| FailureCause { error, n_calls })
            .collect();
        causes.sort_by_key(|c| std::cmp::Reverse(c.n_calls));
        causes
    }
}

#[cfg(test)]
mod tests {
    use super::FailureCause;

    #[test]
    fn failure_causes_are_counted_most_frequent_first() {
        let counts = [("b", 1), ("a", 2), ("c", 3), ("d", 2)]
            .map(|(e, n)| (e.to_string(), n))
            .into();
        let causes = FailureCause::ranked(counts);
        let got: Vec<(&str, usize)> = causes
            .iter()
            .map(|c| (c.error.as_str(), c.n_calls))
            .collect();
        assert_eq!(got, [("c", 3), ("a", 2), ("d", 2), ("b", 1)]);
        assert!(FailureCause::ranked(Default::default()).is_empty());
    }
}
