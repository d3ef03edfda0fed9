//! What an alignment may spend, planned before its first call: the most each part can
//! cost, the number of generations that fit the budget, and the most the whole search can
//! spend (`judgelab align --plan`), which it never exceeds.
//!
//! A generation's children each judge at most every dev item (a race drops losers
//! earlier, which only spends less), and each rewrite costs one proposer call. A sampling
//! move shows its child's prompts and is judged in the same exact passes: whichever of a
//! family race on, they make at most the child's calls, so sampling moves add nothing. The start
//! judges the dev split unless its verdicts are stored already; at the end the start and
//! the best judge the test split. Calls are counted as the judge is asked: an item judged
//! in both answer orders is two calls.

use serde::{Deserialize, Serialize};

use super::Move;
use crate::judge::Message;

/// Tokens a chat template may add per message (its role and markers), and for the
/// reply's opening: more than ChatML's 5 and Llama 3's 5 per message.
pub const MESSAGE_OVERHEAD: u64 = 16;

/// The most prompt tokens `messages` can take, whatever the judge's tokenizer: a token is
/// at least one byte of the text (byte-level BPE and SentencePiece with byte fallback
/// alike), so one per byte, plus [`MESSAGE_OVERHEAD`] per message and for the reply.
pub fn prompt_tokens_at_most(messages: &[Message]) -> u64 {
    messages
        .iter()
        .map(|m| m.content.len() as u64 + MESSAGE_OVERHEAD)
        .sum::<u64>()
        + MESSAGE_OVERHEAD
}

/// What the search may spend: calls (judge and proposer together) and, where calls have a
/// price, dollars. Either, both, or neither (then its generations alone bound it).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Budget {
    pub calls: Option<u64>,
    pub usd: Option<f64>,
}

/// A child a generation makes from each parent: its move, and what it costs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Child {
    #[serde(rename = "move")]
    pub kind: Move,
    /// Judge calls per item: 2 where it judges both answer orders.
    pub calls_per_item: u32,
    /// Proposer calls it takes to make (1 for a rewrite).
    pub proposer_calls: u32,
}

/// The shape of a search, which its cost follows from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Shape {
    pub n_dev: usize,
    pub n_test: usize,
    /// Judge calls per item of the start.
    pub start_calls_per_item: u32,
    /// The start's dev verdicts are stored already: judging them costs nothing.
    pub start_judged: bool,
    /// Parents a generation makes children of (the best survivors of the last).
    pub parents: usize,
    /// The children each parent gets in a generation.
    pub children: Vec<Child>,
    /// The most generations to run, whatever the budget leaves.
    pub max_generations: u32,
    /// The most one judge call and one proposer call cost, where they have a price.
    pub usd_per_call: Option<f64>,
    pub usd_per_proposer_call: Option<f64>,
}

/// The most each part of the search spends, in calls (and dollars where priced).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub generations: u32,
    pub start_calls: u64,
    /// One generation's judge calls and proposer calls, at most.
    pub generation_calls: u64,
    pub generation_proposer_calls: u64,
    /// The start and the best on the test split, at most.
    pub confirmation_calls: u64,
    pub max_calls: u64,
    pub max_usd: Option<f64>,
    pub budget: Budget,
    /// Where calls have a price: the most prompt tokens a judge call and a proposer call
    /// may take ([`prompt_tokens_at_most`]), which each call's most in dollars is planned
    /// from; a candidate whose prompts would take more is not made.
    #[serde(default)]
    pub prompt_cap: Option<u64>,
    #[serde(default)]
    pub proposer_prompt_cap: Option<u64>,
    /// The most one judge call and one proposer call cost, where they have a price.
    #[serde(default)]
    pub usd_per_call: Option<f64>,
    #[serde(default)]
    pub usd_per_proposer_call: Option<f64>,
}

impl Plan {
    /// The most `judge` judge calls and `proposer` proposer calls cost, where calls have a
    /// price: what the search counts against a budget in dollars, so that it never spends
    /// more whatever the servers' usage says.
    pub fn usd_at_most(&self, judge: u64, proposer: u64) -> Option<f64> {
        usd(
            self.usd_per_call,
            self.usd_per_proposer_call,
            judge,
            proposer,
        )
    }
}

/// `judge` calls at `per_call` and `proposer` calls at `per_proposer_call`, where either
/// has a price.
fn usd(
    per_call: Option<f64>,
    per_proposer_call: Option<f64>,
    judge: u64,
    proposer: u64,
) -> Option<f64> {
    match (per_call, per_proposer_call) {
        (None, None) => None,
        (j, p) => Some(judge as f64 * j.unwrap_or(0.0) + proposer as f64 * p.unwrap_or(0.0)),
    }
}

/// Why a search cannot be planned.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PlanError {
    #[error("the dev split is empty: nothing to score candidates on")]
    NoDevItems,
    #[error("no move applies to this judge: nothing to search")]
    NoMoves,
    #[error("a budget of {budget} does not cover one generation: the start, one generation and the confirmation need up to {needed}")]
    TooSmall { budget: String, needed: String },
}

impl Shape {
    fn judge_calls(&self, calls_per_item: u32, n_items: usize) -> u64 {
        u64::from(calls_per_item) * n_items as u64
    }

    /// What the start, one generation and the confirmation cost at most: judge calls,
    /// proposer calls.
    fn parts(&self) -> (u64, u64, u64, u64) {
        let start = match self.start_judged {
            true => 0,
            false => self.judge_calls(self.start_calls_per_item, self.n_dev),
        };
        let parents = self.parents as u64;
        let generation: u64 = parents
            * self
                .children
                .iter()
                .map(|c| self.judge_calls(c.calls_per_item, self.n_dev))
                .sum::<u64>();
        let proposer: u64 = parents
            * self
                .children
                .iter()
                .map(|c| u64::from(c.proposer_calls))
                .sum::<u64>();
        let most_per_item = self
            .children
            .iter()
            .map(|c| c.calls_per_item)
            .chain([self.start_calls_per_item])
            .max()
            .unwrap_or(1);
        let confirmation = self.judge_calls(self.start_calls_per_item, self.n_test)
            + self.judge_calls(most_per_item, self.n_test);
        (start, generation, proposer, confirmation)
    }

    fn usd(&self, judge_calls: u64, proposer_calls: u64) -> Option<f64> {
        usd(
            self.usd_per_call,
            self.usd_per_proposer_call,
            judge_calls,
            proposer_calls,
        )
    }
}

/// The plan of `shape` within `budget`: as many generations as fit, up to its
/// `max_generations`.
pub fn plan(shape: &Shape, budget: Budget) -> Result<Plan, PlanError> {
    if shape.n_dev == 0 {
        return Err(PlanError::NoDevItems);
    }
    if shape.children.is_empty() || shape.parents == 0 {
        return Err(PlanError::NoMoves);
    }
    let (start, generation, proposer, confirmation) = shape.parts();
    let total = |g: u64| {
        let judge = start + g * generation + confirmation;
        let proposer = g * proposer;
        (judge + proposer, shape.usd(judge, proposer))
    };
    let fits = |g: u64| {
        let (calls, usd) = total(g);
        budget.calls.is_none_or(|b| calls <= b)
            && budget
                .usd
                .is_none_or(|b| usd.is_none_or(|usd| usd <= b + 1e-12))
    };
    let generations = (1..=u64::from(shape.max_generations))
        .take_while(|&g| fits(g))
        .last();
    let Some(generations) = generations else {
        let (calls, usd) = total(1);
        let needed = match usd {
            Some(usd) if budget.usd.is_some() => format!("{calls} calls (${usd:.4})"),
            _ => format!("{calls} calls"),
        };
        let budget = match (budget.calls, budget.usd) {
            (Some(c), Some(u)) => format!("{c} calls and ${u}"),
            (Some(c), None) => format!("{c} calls"),
            (None, Some(u)) => format!("${u}"),
            (None, None) => "nothing".into(),
        };
        return Err(PlanError::TooSmall { budget, needed });
    };
    let (max_calls, max_usd) = total(generations);
    Ok(Plan {
        generations: generations as u32,
        start_calls: start,
        generation_calls: generation,
        generation_proposer_calls: proposer,
        confirmation_calls: confirmation,
        max_calls,
        max_usd,
        budget,
        prompt_cap: None,
        proposer_prompt_cap: None,
        usd_per_call: shape.usd_per_call,
        usd_per_proposer_call: shape.usd_per_proposer_call,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape() -> Shape {
        Shape {
            n_dev: 40,
            n_test: 20,
            start_calls_per_item: 1,
            start_judged: false,
            parents: 1,
            children: vec![
                Child {
                    kind: Move::Rewrite,
                    calls_per_item: 1,
                    proposer_calls: 1,
                },
                Child {
                    kind: Move::Examples,
                    calls_per_item: 1,
                    proposer_calls: 0,
                },
                Child {
                    kind: Move::Order,
                    calls_per_item: 2,
                    proposer_calls: 0,
                },
            ],
            max_generations: 10,
            usd_per_call: None,
            usd_per_proposer_call: None,
        }
    }

    #[test]
    fn as_many_generations_as_the_budget_holds() {
        // Start 40, a generation 40 + 40 + 80 = 160 and 1 proposer call, confirmation
        // 20 + 20 × 2 = 60: 100 + 161 g.
        let p = plan(
            &shape(),
            Budget {
                calls: Some(500),
                usd: None,
            },
        )
        .unwrap();
        assert_eq!(
            (
                p.start_calls,
                p.generation_calls,
                p.generation_proposer_calls
            ),
            (40, 160, 1)
        );
        assert_eq!(
            (p.confirmation_calls, p.generations, p.max_calls),
            (60, 2, 422)
        );
        // Exactly enough for three.
        let p = plan(
            &shape(),
            Budget {
                calls: Some(583),
                usd: None,
            },
        )
        .unwrap();
        assert_eq!((p.generations, p.max_calls), (3, 583));
        // Without a budget, the most generations asked for.
        let p = plan(&shape(), Budget::default()).unwrap();
        assert_eq!((p.generations, p.max_calls), (10, 100 + 1610));
        // Stored start verdicts cost nothing; two parents double a generation.
        let s = Shape {
            start_judged: true,
            parents: 2,
            ..shape()
        };
        let p = plan(
            &s,
            Budget {
                calls: Some(500),
                usd: None,
            },
        )
        .unwrap();
        assert_eq!(
            (p.start_calls, p.generations, p.max_calls),
            (0, 1, 60 + 322)
        );
    }

    #[test]
    fn dollars_bound_it_too_and_a_budget_too_small_says_what_it_needs() {
        let s = Shape {
            usd_per_call: Some(0.001),
            usd_per_proposer_call: Some(0.01),
            ..shape()
        };
        let p = plan(
            &s,
            Budget {
                calls: None,
                usd: Some(0.5),
            },
        )
        .unwrap();
        // (100 + 160 g) × $0.001 + g × $0.01 ≤ $0.50: g = 2, $0.44.
        assert_eq!(p.generations, 2);
        assert!((p.max_usd.unwrap() - 0.44).abs() < 1e-9);
        let err = plan(
            &shape(),
            Budget {
                calls: Some(200),
                usd: None,
            },
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "a budget of 200 calls does not cover one generation: the start, one generation and the confirmation need up to 261 calls"
        );
        let empty = Shape {
            n_dev: 0,
            ..shape()
        };
        assert_eq!(plan(&empty, Budget::default()), Err(PlanError::NoDevItems));
    }
}
