//! The search's generations: the children of the best survivors, made by each move that
//! applies, then a race of parents and children on the dev split in rounds, where a
//! candidate clearly behind the leader stops (`core::race`). Every step reads what the
//! store has first, so a resumed search makes the same candidates and the same drops.

use std::collections::{HashMap, HashSet};

use judgelab_core::align::plan::Plan;
use judgelab_core::align::{Candidate, Move};
use judgelab_core::metrics::Observation;
use judgelab_core::selection::{self, Ties};
use judgelab_core::Item;
use judgelab_store::{ExperimentRow, Store, TrialRow};

use super::moves::Step;
use super::propose::{self, Rewrite};
use super::setup::{self, Source};
use super::{AlignEvent, AlignRequest};
use crate::inputs::Inputs;
use crate::resolve::{Resolved, Trial};
use crate::run::group::{Budget, Run};
use crate::run::loaded::Judges;
use crate::EngineError;
use crate::RunOptions;

/// Where a search stands.
pub(super) struct State<'a> {
    pub source: &'a Source,
    pub alignment: &'a ExperimentRow,
    pub request: &'a AlignRequest,
    pub plan: Plan,
    pub candidates: Vec<Candidate>,
    /// Candidates dropped by a race, with the dev items judged by then.
    pub dropped: HashMap<u32, usize>,
}

impl<'a> State<'a> {
    pub fn new(
        source: &'a Source,
        alignment: &'a ExperimentRow,
        request: &'a AlignRequest,
        plan: Plan,
    ) -> Self {
        State {
            source,
            alignment,
            request,
            plan,
            candidates: Vec::new(),
            dropped: HashMap::new(),
        }
    }

    /// Runs the planned generations; why it stopped early, where it did.
    pub async fn run(
        &mut self,
        store: &Store,
        on_event: &mut (dyn FnMut(AlignEvent) + Send),
    ) -> Result<Option<String>, EngineError> {
        self.candidates = store.candidates(self.alignment.id).await?;
        let mut parents = vec![0];
        for generation in 0..=self.plan.generations {
            if generation > 0 {
                on_event(AlignEvent::Generation {
                    generation,
                    n_generations: self.plan.generations,
                });
                if let Some(stop) = self.children(store, &parents, generation, on_event).await? {
                    return Ok(Some(stop));
                }
            }
            let racing: Vec<u32> = parents
                .iter()
                .copied()
                .chain(self.of_generation(generation).filter(|c| *c != 0))
                .collect();
            let (survivors, stop) = self.race(store, &racing, generation, on_event).await?;
            if stop.is_some() {
                return Ok(stop);
            }
            parents = self.best(store, &survivors).await?;
            parents.truncate(self.request.parents.max(1));
        }
        Ok(None)
    }

    /// The candidates of `generation` that have a trial.
    fn of_generation(&self, generation: u32) -> impl Iterator<Item = u32> + '_ {
        self.candidates
            .iter()
            .filter(move |c| c.generation == generation && c.trial_id.is_some())
            .map(|c| c.id)
    }

    pub(super) fn trial_of(&self, id: u32) -> i64 {
        self.candidates[id as usize]
            .trial_id
            .expect("a racing candidate has a trial")
    }

    /// Calls spent so far: the alignment's judge calls (failed ones sent again counted
    /// again) and its proposer calls.
    pub async fn spent(&self, store: &Store) -> Result<u64, EngineError> {
        let (judge, proposer) = self.spent_apart(store).await?;
        Ok(judge + proposer)
    }

    /// The judge calls spent so far, and the proposer calls.
    async fn spent_apart(&self, store: &Store) -> Result<(u64, u64), EngineError> {
        let calls =
            store.calls_made(self.alignment.id).await? + store.retried(self.alignment.id).await?;
        let sent: u64 = self
            .candidates
            .iter()
            .filter_map(|c| c.proposal.as_ref())
            .map(|p| u64::from(p.sends))
            .sum();
        Ok((calls, sent))
    }

    /// Counts the failed calls of `trials` as sent again: they are about to be, and their
    /// new rows will replace the failed ones.
    pub async fn retrying(&self, store: &Store, trials: &[&Trial<'_>]) -> Result<(), EngineError> {
        let ids: Vec<i64> = trials.iter().map(|t| t.id).collect();
        let n = store.failed_calls(&ids).await?;
        if n > 0 {
            store.add_retried(self.alignment.id, n).await?;
        }
        Ok(())
    }

    /// Whether `judge` more judge calls and `proposer` more proposer calls fit the budget;
    /// what stops the search where they do not. In dollars, every call counts at its most.
    pub async fn afford(
        &self,
        store: &Store,
        judge: u64,
        proposer: u64,
    ) -> Result<Option<String>, EngineError> {
        let (spent_judge, spent_proposer) = self.spent_apart(store).await?;
        let (spent, calls) = (spent_judge + spent_proposer, judge + proposer);
        let budget = self.request.budget;
        if let Some(b) = budget.calls.filter(|&b| spent + calls > b) {
            return Ok(Some(format!(
                "the budget of {b} calls: {spent} spent, the next step needs {calls}"
            )));
        }
        let at_most = |j, p| self.plan.usd_at_most(j, p).unwrap_or(0.0);
        let (spent, needed) = (
            at_most(spent_judge, spent_proposer),
            at_most(judge, proposer),
        );
        Ok(budget
            .usd
            .filter(|&b| spent + needed > b + 1e-12)
            .map(|b| {
                format!("the budget of ${b}: up to ${spent:.4} spent, the next step may take up to ${needed:.4}")
            }))
    }

    /// The alignment's trials and the experiment resolved with their templates.
    pub(super) async fn resolve(
        &self,
        store: &Store,
    ) -> Result<(Vec<TrialRow>, Resolved), EngineError> {
        let rows = store.trials(self.alignment.id).await?;
        let r = setup::resolved(store, self.alignment).await?;
        Ok((rows, r))
    }

    /// The survivors ranked by their dev score, best first.
    async fn best(&self, store: &Store, survivors: &[u32]) -> Result<Vec<u32>, EngineError> {
        let (rows, r) = self.resolve(store).await?;
        let observed = self.observed(store, &r, &rows, survivors).await?;
        let metric = r.experiment.selection.metric;
        let task = r.dataset.task;
        let qualities: Vec<Option<f64>> = observed
            .iter()
            .map(|o| judgelab_core::metrics::value_of(task, o, metric))
            .collect();
        let ties: Vec<Ties> = observed.iter().map(|o| Ties::of_calls(o)).collect();
        Ok(selection::rank(&qualities, &ties)
            .into_iter()
            .map(|i| survivors[i])
            .collect())
    }

    /// Each candidate's dev calls, units numbered in the dev split.
    pub async fn observed(
        &self,
        store: &Store,
        r: &Resolved,
        rows: &[TrialRow],
        ids: &[u32],
    ) -> Result<Vec<Vec<Observation>>, EngineError> {
        observations(
            store,
            r,
            rows,
            ids.iter().map(|&c| self.trial_of(c)),
            &self.alignment.judged,
        )
        .await
    }
}

/// The alignment's trials `ids` (of its `rows`), resolved, in that order.
pub(super) fn trials_of<'r>(
    r: &'r Resolved,
    rows: &[TrialRow],
    ids: &[i64],
) -> Result<Vec<Trial<'r>>, EngineError> {
    r.trials(
        ids.iter()
            .filter_map(|id| rows.iter().find(|t| t.id == *id).cloned())
            .collect(),
    )
}

/// The alignment's items as `trials` show them (cut to an input budget a candidate keeps
/// from the experiment).
pub(super) async fn inputs(
    store: &Store,
    alignment: &ExperimentRow,
    index: &HashMap<&str, &Item>,
    trials: &[Trial<'_>],
    judges: &mut Judges<'_>,
    on_event: &mut (dyn FnMut(AlignEvent) + Send),
) -> Result<Inputs, EngineError> {
    let shown: Vec<&Item> = alignment
        .judged
        .iter()
        .chain(&alignment.test)
        .filter_map(|id| index.get(id.as_str()).copied())
        .collect();
    let mut forward = |e| on_event(AlignEvent::Run(e));
    crate::run::inputs(store, trials, &shown, judges, &mut forward).await
}

/// What judging the alignment's calls in one step shares.
pub(super) async fn run<'x>(
    store: &'x Store,
    (r, index, inputs): (&'x Resolved, &'x HashMap<&'x str, &'x Item>, &'x Inputs),
    options: &'x RunOptions,
    alignment: &ExperimentRow,
) -> Result<Run<'x>, EngineError> {
    Ok(Run {
        store,
        r,
        options,
        index,
        inputs,
        total: 0.into(),
        verdicts: 0.into(),
        budget: Budget::start(store, r, alignment).await?,
        noted: Default::default(),
    })
}

/// The calls of trials `ids` (the alignment's `rows`) on `items`, units numbered by their
/// place in `items`.
pub(super) async fn observations(
    store: &Store,
    r: &Resolved,
    rows: &[TrialRow],
    ids: impl Iterator<Item = i64>,
    items: &[String],
) -> Result<Vec<Vec<Observation>>, EngineError> {
    let keyed: Vec<(i64, judgelab_core::Order)> = ids
        .map(|id| {
            let order = rows.iter().find(|t| t.id == id).map(|t| t.params.order);
            (id, order.unwrap_or_default())
        })
        .collect();
    crate::run::choose::stored_observations(store, r, &r.item_index(), &keyed, items).await
}

impl State<'_> {
    /// Makes the children of `parents` in `generation` that are not made yet; what stops
    /// the search, where the budget leaves no room for a proposer call.
    async fn children(
        &mut self,
        store: &Store,
        parents: &[u32],
        generation: u32,
        on_event: &mut (dyn FnMut(AlignEvent) + Send),
    ) -> Result<Option<String>, EngineError> {
        for &parent in parents {
            for kind in self.moves_of(parent) {
                let made = self.candidates.iter().find(|c| {
                    c.generation == generation && c.parent == Some(parent) && c.kind == kind
                });
                match made {
                    // Made, or a proposer call stored and answered (or failed).
                    Some(c)
                        if c.proposal
                            .as_ref()
                            .is_none_or(|p| p.reply.is_some() || p.error.is_some()) =>
                    {
                        continue
                    }
                    _ => {}
                }
                if kind == Move::Rewrite {
                    if let Some(stop) = self.afford(store, 0, 1).await? {
                        return Ok(Some(stop));
                    }
                }
                let candidate = self.make(store, parent, kind, generation, on_event).await?;
                if let Some(c) = candidate {
                    on_event(AlignEvent::Candidate {
                        candidate: c.clone(),
                    });
                    match self.candidates.iter().position(|x| x.id == c.id) {
                        Some(i) => self.candidates[i] = c,
                        None => self.candidates.push(c),
                    }
                }
            }
            let made: Vec<u32> = self
                .of_generation(generation)
                .filter(|&c| {
                    let c = &self.candidates[c as usize];
                    c.parent == Some(parent) && c.kind != Move::Sampling
                })
                .collect();
            for child in made {
                self.samplings(store, child, generation, on_event).await?;
            }
        }
        Ok(None)
    }

    /// Makes the sampling moves of `child`, a new candidate of `generation`, that are not
    /// made yet (where its verdicts are exact): each shows the child's prompts, so the
    /// race judges it from the child's passes, in the same calls.
    async fn samplings(
        &mut self,
        store: &Store,
        child: u32,
        generation: u32,
        on_event: &mut (dyn FnMut(AlignEvent) + Send),
    ) -> Result<(), EngineError> {
        let (rows, r) = self.resolve(store).await?;
        let parent = row_of(&rows, self.trial_of(child));
        if !super::moves::sampling(&r, &parent.params, self.request.options.naive) {
            return Ok(());
        }
        let mut known = identities(&rows);
        let (t, p) = (parent.params.temperature, parent.params.top_p);
        for (temperature, top_p) in judgelab_core::align::sampling_moves(t, p) {
            let step = Step::Sampling { temperature, top_p };
            let made = super::moves::child(&r, &self.source.row, parent, step)?;
            let Some((trial, _)) = made else { continue };
            if !known.insert(trial.judge_identity.clone()) {
                continue;
            }
            let c = Candidate {
                id: self.candidates.len() as u32,
                parent: Some(child),
                generation,
                kind: Move::Sampling,
                trial_id: None,
                proposal: None,
                rejected: None,
            };
            let row = store
                .add_candidate(self.alignment.id, &c, Some(&trial))
                .await?;
            let c = Candidate {
                trial_id: row.map(|t| t.id),
                ..c
            };
            on_event(AlignEvent::Candidate {
                candidate: c.clone(),
            });
            self.candidates.push(c);
        }
        Ok(())
    }

    /// The moves that apply to `parent` and that its lineage has not made already (the
    /// debiased order once).
    fn moves_of(&self, parent: u32) -> Vec<Move> {
        let mut lineage = HashSet::new();
        let mut at = Some(parent);
        while let Some(id) = at {
            let c = &self.candidates[id as usize];
            lineage.insert(c.kind);
            at = c.parent;
        }
        let row = &self.source.row;
        let params = &self.source.trial.params;
        super::moves::kinds(&self.source.r, row, params)
            .into_iter()
            .filter(|k| *k != Move::Order || !lineage.contains(&Move::Order))
            .collect()
    }
}

/// The trial `id` of the alignment's `rows`.
fn row_of(rows: &[TrialRow], id: i64) -> &TrialRow {
    rows.iter()
        .find(|t| t.id == id)
        .expect("a candidate's trial is the alignment's")
}

/// The judge identities of the alignment's `rows`: a move that makes one again makes no
/// candidate.
fn identities(rows: &[TrialRow]) -> HashSet<String> {
    rows.iter()
        .filter_map(|t| t.judge_identity.clone())
        .collect()
}

/// What making one child needs, read once.
struct Making<'x> {
    store: &'x Store,
    r: &'x Resolved,
    rows: &'x [TrialRow],
    parent: &'x TrialRow,
    /// The judge identities of the candidates so far.
    known: &'x HashSet<String>,
    /// The child's id, its parent's and its generation.
    at: (u32, u32, u32),
    seed: u64,
}

impl State<'_> {
    /// Makes `parent`'s child by `kind` in `generation` (or sends a stored proposer call
    /// again); none where the move changes nothing or repeats a candidate.
    async fn make(
        &self,
        store: &Store,
        parent: u32,
        kind: Move,
        generation: u32,
        on_event: &mut (dyn FnMut(AlignEvent) + Send),
    ) -> Result<Option<Candidate>, EngineError> {
        let (rows, r) = self.resolve(store).await?;
        let parent_row = row_of(&rows, self.trial_of(parent));
        let known = identities(&rows);
        let pending = self
            .candidates
            .iter()
            .find(|c| c.generation == generation && c.parent == Some(parent) && c.kind == kind);
        let id = pending.map_or(self.candidates.len() as u32, |c| c.id);
        let making = Making {
            store,
            r: &r,
            rows: &rows,
            parent: parent_row,
            known: &known,
            at: (id, parent, generation),
            seed: judgelab_core::rng::mix(&[r.experiment.sweep.seed, u64::from(id)]),
        };
        match kind {
            Move::Rewrite => self.rewrite(&making, pending, on_event).await.map(Some),
            _ => self.moved(&making, kind).await,
        }
    }

    /// A rewrite: its proposer call, made (or made again where a run stopped before its
    /// reply), and the candidate its reply makes or not.
    async fn rewrite(
        &self,
        m: &Making<'_>,
        pending: Option<&Candidate>,
        on_event: &mut (dyn FnMut(AlignEvent) + Send),
    ) -> Result<Candidate, EngineError> {
        let (id, parent, generation) = m.at;
        let candidate = match pending {
            Some(c) => c.clone(),
            None => {
                let observed = self.observed(m.store, m.r, m.rows, &[parent]).await?;
                let index = m.r.item_index();
                let dev: Vec<&Item> = self
                    .alignment
                    .judged
                    .iter()
                    .map(|i| index[i.as_str()])
                    .collect();
                let n = self.request.mistakes;
                let mistakes = propose::mistakes(m.r.dataset.task, &dev, &observed[0], n, m.seed);
                let parent_template = m.r.parts(&m.parent.params)?.template;
                let at = (id, parent, generation);
                propose::candidate(self.source, parent_template, at, &mistakes)?
            }
        };
        let prompt = candidate.proposal.as_ref().map(|p| p.prompt.as_slice());
        let tokens = judgelab_core::align::plan::prompt_tokens_at_most(prompt.unwrap_or(&[]));
        if let Some(cap) = self.plan.proposer_prompt_cap.filter(|&cap| tokens > cap) {
            // Not reached where the caps hold; refused rather than spent past the plan.
            return Err(EngineError::Invalid {
                path: self.alignment.name.clone(),
                message: format!("the proposer's prompt takes up to {tokens} tokens, more than the {cap} the budget in dollars is planned for"),
            });
        }
        let mut judges = Judges::new(m.r, &self.request.options);
        let rewrite = Rewrite {
            store: m.store,
            alignment: self.alignment,
            source: self.source,
            r: m.r,
            known: m.known,
            plan: &self.plan,
        };
        let mut forward = |e| on_event(AlignEvent::Run(e));
        let seed = m.seed as u32;
        let (c, _) = rewrite
            .propose(&mut judges, candidate, m.parent, seed, &mut forward)
            .await?;
        Ok(c)
    }

    /// Another example set or the debiased order: the candidate, stored with its trial;
    /// none where it changes nothing or makes a judge the search has.
    async fn moved(&self, m: &Making<'_>, kind: Move) -> Result<Option<Candidate>, EngineError> {
        let set = 1 + m
            .rows
            .iter()
            .map(|t| t.params.few_shot_set)
            .max()
            .unwrap_or(0);
        let step = match kind {
            Move::Examples => Step::Examples { set },
            _ => Step::Order,
        };
        let made = super::moves::child(m.r, &self.source.row, m.parent, step)?;
        let Some((trial, template)) = made else {
            return Ok(None);
        };
        if m.known.contains(&trial.judge_identity) {
            return Ok(None);
        }
        let (id, parent, generation) = m.at;
        let rejected =
            super::price::over_cap(m.r, &self.plan, &self.source.row, &trial, &template)?;
        let c = Candidate {
            id,
            parent: Some(parent),
            generation,
            kind,
            trial_id: None,
            proposal: None,
            rejected: rejected.clone(),
        };
        let judged = rejected.is_none().then_some(&trial);
        let row = m.store.add_candidate(self.alignment.id, &c, judged).await?;
        Ok(Some(Candidate {
            trial_id: row.map(|t| t.id),
            ..c
        }))
    }
}
