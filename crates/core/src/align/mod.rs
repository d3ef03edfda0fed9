//! The judge optimiser's pure parts (`judgelab align`): the moves that make a candidate
//! judge from its parent, the proposer of instruction rewrites ([`proposer`]), what a
//! search may spend ([`plan`]) and a candidate's template against its parent's
//! ([`diff`]).
//!
//! A search starts from a trial's judge and makes candidates by moves: an instruction
//! rewrite by a proposer model from the parent's mistakes on the dev split, a new few-shot
//! example set from the pool, the debiased answer order, or another temperature or top_p
//! ([`sampling_moves`]: for a judge with exact verdicts, made beside each new child of
//! another move, whose pass it shares: it costs no call).
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
    /// Another temperature or top_p, read from its parent's exact pass.
    Sampling,
}

crate::names!(Move {
    Start => "start",
    Rewrite => "rewrite",
    Examples => "examples",
    Order => "order",
    Sampling => "sampling",
});

/// The temperatures and top_p values a sampling move steps between.
pub const TEMPERATURES: [f64; 3] = [0.0, 0.5, 1.0];
pub const TOP_PS: [f64; 2] = [0.9, 1.0];

/// The (temperature, top_p) a sampling move makes of a judge at (`temperature`, `top_p`):
/// each other temperature of [`TEMPERATURES`] at its top_p, and where it samples
/// (temperature above 0) each other top_p of [`TOP_PS`]; at temperature 0 the verdict is
/// the most likely one whatever top_p is, so top_p moves nothing there.
pub fn sampling_moves(temperature: f64, top_p: f64) -> Vec<(f64, f64)> {
    let same = |a: f64, b: f64| (a - b).abs() < 1e-9;
    let mut out: Vec<(f64, f64)> = TEMPERATURES
        .iter()
        .filter(|&&t| !same(t, temperature))
        .map(|&t| (t, top_p))
        .collect();
    if temperature > 0.0 {
        out.extend(
            TOP_PS
                .iter()
                .filter(|&&p| !same(p, top_p))
                .map(|&p| (temperature, p)),
        );
    }
    out
}

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
