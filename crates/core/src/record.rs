//! What a run leaves of each call: a verdict's record ([`VerdictRecord`], its
//! [`Outcome`]) and a call timed alone ([`TimedCall`]). The store maps its rows to these,
//! the summary (`results`) and the labelling queue (`annotation`) read them; this module
//! reads neither, so that both can depend on it.

use std::collections::BTreeMap;

use crate::metrics::{Observation, TimedRequest};
use crate::sampling::VerdictDistribution;
use crate::sweep::Order;
use crate::trust::Belief;
use crate::verdict::{FailureKind, Verdict};
use crate::{Label, Task};

/// What one call came to.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// The judge answered: a verdict in the dataset's frame, or a parse failure of a stated
    /// kind (the raw text is the record's `raw_output`).
    Judged(Verdict),
    /// The call itself failed, with this error; a later run judges it again.
    CallFailed(String),
}

impl Outcome {
    /// The verdict's label, if the call succeeded and its output parsed.
    pub fn label(&self) -> Option<Label> {
        match self {
            Outcome::Judged(v) => v.label(),
            Outcome::CallFailed(_) => None,
        }
    }

    /// The parse failure's kind, if the judge answered something that is no verdict.
    pub fn failure(&self) -> Option<FailureKind> {
        match self {
            Outcome::Judged(v) => v.failure(),
            Outcome::CallFailed(_) => None,
        }
    }

    /// The call's error, if it failed.
    pub fn error(&self) -> Option<&str> {
        match self {
            Outcome::CallFailed(e) => Some(e),
            Outcome::Judged(_) => None,
        }
    }

    /// The judge's verdict (parsed or failed), `None` if the call failed.
    pub fn verdict(&self) -> Option<Verdict> {
        match self {
            Outcome::Judged(v) => Some(*v),
            Outcome::CallFailed(_) => None,
        }
    }

    pub fn is_call_failure(&self) -> bool {
        matches!(self, Outcome::CallFailed(_))
    }
}

/// What writing the summaries an item's inputs show cost: the summariser's calls, tokens
/// and dollars (where it has a price). The first call of each (trial, item) carries it, so
/// that each item counts it once in its trial's tokens and cost, however many trials,
/// repeats or runs share the stored summaries.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Written {
    pub calls: u32,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub cost_usd: Option<f64>,
}

impl Written {
    /// The two together; a cost only where both have one.
    pub fn add(self, other: Written) -> Written {
        Written {
            calls: self.calls + other.calls,
            prompt_tokens: self.prompt_tokens + other.prompt_tokens,
            completion_tokens: self.completion_tokens + other.completion_tokens,
            cost_usd: match (self.calls, other.calls) {
                (0, _) => other.cost_usd,
                (_, 0) => self.cost_usd,
                _ => self.cost_usd.zip(other.cost_usd).map(|(a, b)| a + b),
            },
        }
    }
}

/// One verdict: everything needed to reproduce and audit it.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictRecord {
    pub trial_id: i64,
    pub item_id: String,
    pub repeat: u32,
    /// Answer B was shown first; the outcome is in the dataset's frame all the same.
    pub swapped: bool,
    /// The criterion the call asks ([`crate::rubric`]): empty for a call that asks every
    /// criterion of its rubric, or the item's one label.
    pub criterion: String,
    pub seed: u32,
    pub prompt_hash: String,
    /// What the judge said, as it said it (`None` when the call failed).
    pub raw_output: Option<String>,
    pub outcome: Outcome,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub latency_ms: Option<f64>,
    pub ttft_ms: Option<f64>,
    /// What the call cost, where the model has a price.
    pub cost_usd: Option<f64>,
    pub cached_tokens: Option<u32>,
    pub attempts: u32,
    /// Per-token log-probabilities (JSON), where asked for.
    pub logprobs: Option<String>,
    /// Answered from the response cache: no call was made.
    pub cache_hit: bool,
    /// The endpoint that answered a remote call (one of the judge's pool).
    pub endpoint: Option<String>,
    /// Drawn from the exact first-token distribution below, not sampled by generating.
    pub exact: bool,
    /// Exact verdicts: the distribution the verdict was drawn from, in the dataset's frame.
    pub distribution: Option<VerdictDistribution>,
    /// Exact verdicts: the model's own distribution over the verdicts (temperature 1, no
    /// top_p), in the dataset's frame: what its confidence is read from
    /// ([`crate::trust::confidence`]). None in rows written before it was kept.
    pub belief: Option<VerdictDistribution>,
    /// A rubric call's verdict on each criterion it asks, in that criterion's frame; empty
    /// for a call on the item's one label.
    pub criteria: BTreeMap<String, Verdict>,
    /// A remote judge's exact pass: the probability at temperature 1 of the first tokens
    /// its server did not return, which bounds the error of `distribution` and `belief`
    /// (at temperatures up to 1). None for generated verdicts and a local judge's.
    pub uncovered: Option<f64>,
    /// A trial with an input budget ([`crate::cut`]): the tokens cut from the inputs
    /// this call showed (0: none was cut). None for a trial without one.
    pub input_cut: Option<u32>,
    /// A trial whose inputs are summaries: what writing this item's cost, on the first
    /// call of each (trial, item) only ([`Written`]); None on the others.
    pub summaries: Option<Written>,
}

impl VerdictRecord {
    /// A record of the call of (`trial_id`, `item_id`, `repeat`, `swapped`) with nothing
    /// measured yet and the given outcome.
    pub fn new(
        trial_id: i64,
        item_id: &str,
        repeat: u32,
        swapped: bool,
        seed: u32,
        prompt_hash: &str,
        outcome: Outcome,
    ) -> VerdictRecord {
        VerdictRecord {
            trial_id,
            item_id: item_id.to_string(),
            repeat,
            swapped,
            criterion: String::new(),
            seed,
            prompt_hash: prompt_hash.to_string(),
            raw_output: None,
            outcome,
            prompt_tokens: 0,
            completion_tokens: 0,
            latency_ms: None,
            ttft_ms: None,
            cost_usd: None,
            cached_tokens: None,
            attempts: 1,
            logprobs: None,
            cache_hit: false,
            endpoint: None,
            exact: false,
            distribution: None,
            belief: None,
            uncovered: None,
            input_cut: None,
            summaries: None,
            criteria: BTreeMap::new(),
        }
    }

    /// The record as the metrics see it, with `human` the item's label, `unit` its index
    /// among the judged items and `order` its trial's answer order.
    pub fn observation(&self, task: Task, order: Order, human: Label, unit: usize) -> Observation {
        Observation {
            order,
            unit,
            repeat: self.repeat,
            swapped: self.swapped,
            human,
            verdict: self.outcome.verdict(),
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            latency_ms: self.latency_ms.unwrap_or(f64::NAN),
            ttft_ms: self.ttft_ms,
            cost_usd: self.cost_usd,
            distribution: self.distribution.clone(),
            belief: self.belief(task),
        }
    }

    /// What the judge believed of the verdicts on this call: an exact verdict's
    /// distribution, or the returned log-probabilities at the verdict's token.
    pub fn belief(&self, task: Task) -> Option<Belief> {
        if let Some(d) = &self.belief {
            return Belief::exact(d);
        }
        let label = self.outcome.label()?;
        Belief::from_logprobs(self.logprobs.as_deref()?, task, self.swapped, label)
    }
}

/// One call of a trial timed alone (see [`crate::metrics::latency`]): what the request took, not
/// a verdict. A judge's first timed call in a run is its warm-up, kept apart.
#[derive(Debug, Clone, PartialEq)]
pub struct TimedCall {
    pub trial_id: i64,
    /// Requests in flight while it ran: 1, alone.
    pub concurrency: u32,
    pub request: TimedRequest,
}
