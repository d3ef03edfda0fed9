//! What a search leaves, as every output reads it: each candidate with its template, its
//! diff and its dev score; the best, its dev score naive and corrected for the choice; the
//! test split's confirmation; and the calls spent against the budget and against scoring
//! every candidate on the whole dev split.

use serde::{Deserialize, Serialize};

use super::plan::Plan;
use super::Candidate;
use crate::metrics::paired::PairedComparison;
use crate::metrics::{Estimate, Quality, SplitScore};

/// A candidate as the search left it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scored {
    #[serde(flatten)]
    pub candidate: Candidate,
    /// Its template's name and text, its parameters and few-shot examples (item ids):
    /// what defines it (none for a rejected reply).
    pub template: Option<(String, String)>,
    pub params: Option<crate::sweep::TrialParams>,
    pub examples: Vec<String>,
    /// Its template against its parent's (`core::align::diff`).
    pub diff: String,
    /// Its agreement on the dev items it judged, with its interval.
    pub dev: Option<SplitScore>,
    pub dev_items: usize,
    /// A race dropped it after this many dev items.
    pub dropped_after: Option<usize>,
    /// Judge calls made for it on the dev split and on the test split (a start's copied
    /// verdicts not counted).
    pub calls: u64,
    pub test_calls: u64,
}

/// How an alignment ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlignOutcome {
    /// The alignment's experiment.
    pub alignment: String,
    pub source: String,
    pub trial: i64,
    pub plan: Plan,
    /// What ranks the candidates: the experiment's `[selection] metric`.
    pub metric: Quality,
    pub candidates: Vec<Scored>,
    pub start: u32,
    pub best: u32,
    /// The best's dev score as picked, and corrected for the choice among the candidates
    /// that judged the whole dev split.
    pub dev_naive: Estimate,
    pub dev_corrected: Option<Estimate>,
    pub confirmation: Option<Confirmation>,
    pub dev_items: Vec<String>,
    pub test_items: Vec<String>,
    /// Calls spent (judge and proposer); of them, the judge's on the dev split; and what
    /// scoring every candidate on the whole dev split would have cost there.
    pub spent_calls: u64,
    pub dev_calls: u64,
    pub full_dev_calls: u64,
    /// Dollars spent, as the servers' usage priced them (judge and proposer), where calls
    /// have a price.
    #[serde(default)]
    pub spent_usd: Option<f64>,
    /// Stopped before its plan was done: cancelled, or the budget left no room.
    pub stopped: Option<String>,
}

/// The start and the best on the test split.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Confirmation {
    pub start: SplitScore,
    pub best: SplitScore,
    /// The best's metric minus the start's, paired by item, and McNemar's test.
    pub difference: PairedComparison,
    /// The difference's interval lies above 0 (and, for accuracy, McNemar's p is below
    /// 0.05).
    pub confirmed: bool,
    /// "confirmed", or "not confirmed" (the interval includes 0), or why there is nothing
    /// to confirm.
    pub verdict: String,
}
