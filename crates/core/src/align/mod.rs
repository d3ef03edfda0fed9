//! The judge optimiser's pure parts (`judgelab align`): the moves that make a candidate
//! judge from its parent, the proposer of instruction rewrites ([`proposer`]), what a
//! search may spend ([`plan`]) and a candidate's template against its parent's
//! ([`diff`]).
//!
//! A search starts from a trial's judge and makes candidates by moves: an instruction
//! rewrite by a proposer model from the parent's mistakes on the dev split, a new few-shot
//! example set from the pool, or the debiased answer order (temperature and top_p moves
//! are not made yet).
//! Candidates race on the dev split; only the dev split's items ever reach a proposer, and
//! the test split confirms the best at the end.

pub mod diff;
pub mod outcome;
pub mod plan;
pub mod proposer;

use serde::{Deserialize, Serialize};

use crate::judge::Message;

/// What made a candidate from its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Move {
    /// The trial the search starts from.
    Start,
    /// Its instruction rewritten by the proposer.
    Rewrite,
    /// Another few-shot example set drawn from the pool.
    Examples,
    /// Both answer orders, their probabilities averaged (`order = "debiased"`).
    Order,
}

crate::names!(Move {
    Start => "start",
    Rewrite => "rewrite",
    Examples => "examples",
    Order => "order",
});

/// A candidate of a search, as stored: how it was made, and the trial that judges as it
/// (none where its proposer's reply was rejected, or not answered yet).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// From 0, the start.
    pub id: u32,
    pub parent: Option<u32>,
    pub generation: u32,
    #[serde(rename = "move")]
    pub kind: Move,
    pub trial_id: Option<i64>,
    /// A rewrite's call of the proposer.
    pub proposal: Option<Proposal>,
    /// Why its reply made no candidate.
    pub rejected: Option<String>,
}

/// A call of the proposer: what it was sent, and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Proposal {
    pub prompt: Vec<Message>,
    /// None while unanswered: sent before a run stopped, or failed.
    pub reply: Option<String>,
    pub error: Option<String>,
    pub cost_usd: Option<f64>,
    /// Times the call was sent: more than once where a run stopped while it was in
    /// flight, and the next run sent it again. Each counts against the budget.
    pub sends: u32,
}

#[cfg(test)]
mod tests;
