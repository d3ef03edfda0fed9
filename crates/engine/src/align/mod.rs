//! `judgelab align`: a search for a judge that agrees better with the humans than one
//! trial's, within a budget, confirmed on the test split.
//!
//! The search is an experiment of its own (the alignment, `<experiment>-align-<id>` for
//! trial #id), with its source's few-shot pool, dev and test splits; each candidate is one
//! of its trials, so that its verdicts are stored, resumed and summarised as a run's
//! are ([`setup`]). The start is the source trial, its verdicts copied. Each generation
//! makes children of the best survivors by moves ([`moves`]: a proposer's rewrite of the
//! instruction from the parent's dev mistakes ([`propose`]), another example set, the
//! debiased answer order, and beside each new child of an exact judge its other
//! temperatures and top_p, read from its passes), and races them with their parents on the dev split in rounds
//! (`core::race`: a child clearly behind the leader stops early) ([`search`]). Only dev
//! items reach the proposer or any choice. At the end the start and the best judge the
//! test split ([`confirm`]).
//!
//! The budget, in calls or dollars ([`price`]: each call at its most), is planned up front
//! (`core::align::plan`): every round and proposer call is checked against what is left
//! before it is made, so the search never spends more than its budget. A proposer call is stored before it is sent, and every verdict as it
//! arrives: a run killed at any point and run again spends nothing twice that it stored.
//! Each run's outcome is stored as the alignment's latest, for its report.

mod confirm;
mod moves;
mod price;
mod propose;
mod race;
mod search;
mod setup;

use std::path::PathBuf;

pub use judgelab_core::align::outcome::{AlignOutcome, Confirmation, Scored};
use judgelab_core::align::plan::{Budget, Plan};
use judgelab_core::align::Candidate;
use judgelab_store::Store;

use crate::{EngineError, RunEvent, RunOptions};

/// What `judgelab align` asks.
#[derive(Clone)]
pub struct AlignRequest {
    /// The stored experiment and its trial (its id, as `show` prints it).
    pub experiment: String,
    pub trial: i64,
    /// The judge of the experiment that proposes rewrites; default: the trial's own.
    pub proposer: Option<String>,
    /// A proposer template of the user's: its file; default: the built-in one.
    pub proposer_template: Option<PathBuf>,
    pub budget: Budget,
    /// The most generations to run, whatever the budget leaves.
    pub max_generations: u32,
    /// The survivors that parent each generation.
    pub parents: usize,
    /// Dev mistakes shown to the proposer per call.
    pub mistakes: usize,
    pub options: RunOptions,
}

impl AlignRequest {
    /// A request with the defaults: 3 generations at most, one parent, 4 mistakes.
    pub fn new(experiment: &str, trial: i64, budget: Budget) -> Self {
        AlignRequest {
            experiment: experiment.to_string(),
            trial,
            proposer: None,
            proposer_template: None,
            budget,
            max_generations: 3,
            parents: 1,
            mistakes: 4,
            options: RunOptions::default(),
        }
    }
}

/// What an alignment reports while it goes.
#[derive(Debug, Clone, PartialEq)]
pub enum AlignEvent {
    Run(RunEvent),
    Planned(Plan),
    Generation {
        generation: u32,
        n_generations: u32,
    },
    /// A candidate made (`rejected`: its proposer's reply made none).
    Candidate {
        candidate: Candidate,
    },
    Round {
        generation: u32,
        round: u32,
        n_rounds: u32,
        n_items: usize,
        survivors: usize,
    },
    /// Calls spent so far, against the budget's.
    Spent {
        calls: u64,
        budget: Option<u64>,
    },
}

/// The plan of `request`: what it may spend, without spending anything.
pub async fn plan(store: &Store, request: &AlignRequest) -> Result<Plan, EngineError> {
    let s = setup::Source::open(store, request).await?;
    s.plan(request)
}

/// Runs (or resumes) the alignment `request` asks for.
pub async fn align(
    store: &Store,
    request: &AlignRequest,
    on_event: &mut (dyn FnMut(AlignEvent) + Send),
) -> Result<AlignOutcome, EngineError> {
    let source = setup::Source::open(store, request).await?;
    let plan = source.plan(request)?;
    on_event(AlignEvent::Planned(plan.clone()));
    let _lock = store.lock_run(&source.alignment_name())?;
    let alignment = source.alignment(store).await?;
    let mut state = search::State::new(&source, &alignment, request, plan.clone());
    let stopped = state.run(store, on_event).await?;
    let outcome =
        confirm::finish(store, &source, &alignment, &mut state, stopped, on_event).await?;
    // What the report's "Alignment" section reads.
    store.set_align_outcome(alignment.id, &outcome).await?;
    Ok(outcome)
}
