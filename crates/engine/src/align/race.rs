//! A generation's race: its parents and children judge the dev split in rounds
//! (`[selection] round`), and from `min_items` on each round drops the candidates that
//! `core::race` finds clearly behind the leader (Holm over the comparisons). A round's
//! calls are judged only where the budget has room for all of them.

use std::collections::HashSet;
use std::sync::atomic::Ordering;

use judgelab_core::metrics::Observation;
use judgelab_core::race;
use judgelab_core::selection::Ties;
use judgelab_store::Store;

use super::search::{inputs, observations, run, trials_of, State};
use super::AlignEvent;
use crate::calls::{groups, Group};
use crate::resolve::{Resolved, Trial};
use crate::run::group::{Run, Tally};
use crate::run::loaded::Judges;
use crate::run::{exact_in, judge_all, missing};
use crate::EngineError;

impl State<'_> {
    /// Races `racing` (candidate ids) in `generation`: the survivors, and what stopped
    /// the search, where something did.
    pub(super) async fn race(
        &mut self,
        store: &Store,
        racing: &[u32],
        generation: u32,
        on_event: &mut (dyn FnMut(AlignEvent) + Send),
    ) -> Result<(Vec<u32>, Option<String>), EngineError> {
        let (rows, r) = self.resolve(store).await?;
        let index = r.item_index();
        let options = &self.request.options;
        let ids: Vec<i64> = racing.iter().map(|&c| self.trial_of(c)).collect();
        let trials = trials_of(&r, &rows, &ids)?;
        let mut judges = Judges::new(&r, options);
        let alignment = self.alignment;
        let inputs = inputs(store, alignment, &index, &trials, &mut judges, on_event).await?;
        let run = run(store, (&r, &index, &inputs), options, alignment).await?;
        let trials: Vec<&Trial> = trials.iter().collect();
        let selection = r.experiment.selection;
        let dev = &self.alignment.judged;
        let mut out: HashSet<usize> = HashSet::new();
        for round in race::rounds(dev.len(), &selection) {
            let alive: Vec<usize> = (0..trials.len()).filter(|i| !out.contains(i)).collect();
            let survivors: Vec<&Trial> = alive.iter().map(|&i| trials[i]).collect();
            let items = &dev[..round.n_items];
            on_event(AlignEvent::Round {
                generation,
                round: round.round,
                n_rounds: round.n_rounds,
                n_items: round.n_items,
                survivors: survivors.len(),
            });
            let mut forward = |e| on_event(AlignEvent::Run(e));
            let judged = self.judge(&run, &mut judges, &survivors, items, &mut forward);
            if let Some(stop) = judged.await? {
                return Ok((Vec::new(), Some(stop)));
            }
            on_event(AlignEvent::Spent {
                calls: self.spent(store).await?,
                budget: self.request.budget.calls,
            });
            if !round.decides {
                continue;
            }
            let survivor_ids: Vec<i64> = alive.iter().map(|&i| ids[i]).collect();
            let observed = observations(store, &r, &rows, survivor_ids.into_iter(), items).await?;
            for d in self.behind(&r, &round, &observed) {
                out.insert(alive[d]);
                // A parent judged the whole dev split in its own generation: beaten here,
                // it only parents no more.
                let id = racing[alive[d]];
                if self.candidates[id as usize].generation == generation {
                    self.dropped.insert(id, round.n_items);
                }
            }
        }
        let survivors = (0..trials.len())
            .filter(|i| !out.contains(i))
            .map(|i| racing[i])
            .collect();
        Ok((survivors, None))
    }

    /// Judges what `survivors` miss of `items`, where the budget has room for all of it;
    /// what stops the search, where something does.
    async fn judge(
        &self,
        run: &Run<'_>,
        judges: &mut Judges<'_>,
        survivors: &[&Trial<'_>],
        items: &[String],
        on_event: &mut (dyn FnMut(crate::RunEvent) + Send),
    ) -> Result<Option<String>, EngineError> {
        let todo = missing(run, survivors, items).await?;
        // Candidates that show the same prompts (a child and its sampling moves) share
        // their exact passes.
        let exact = |t: &Trial| exact_in(run, t);
        let needed: usize = groups(todo.clone(), exact).iter().map(Group::n_calls).sum();
        if needed > 0 {
            if let Some(stop) = self.afford(run.store, needed as u64, 0).await? {
                return Ok(Some(stop));
            }
        }
        self.retrying(run.store, survivors).await?;
        judge_all(run, judges, todo, &mut Tally::default(), on_event).await?;
        if run.options.cancel.load(Ordering::SeqCst) {
            return Ok(Some("cancelled".into()));
        }
        let left = missing(run, survivors, items).await?;
        if left.iter().any(|(_, calls)| !calls.is_empty()) {
            let stop = "a call failed: run the same command again to retry it";
            return Ok(Some(stop.into()));
        }
        Ok(None)
    }

    /// Which of the candidates whose calls are `observed` the round drops (their indexes).
    fn behind(
        &self,
        r: &Resolved,
        round: &race::Round,
        observed: &[Vec<Observation>],
    ) -> Vec<usize> {
        let views: Vec<&[Observation]> = observed.iter().map(Vec::as_slice).collect();
        let ties: Vec<Ties> = observed.iter().map(|o| Ties::of_calls(o)).collect();
        let groups: Vec<usize> = (0..views.len()).collect();
        let selection = r.experiment.selection;
        let decision = round.decision(r.dataset.task, &selection, &views, &ties, &groups);
        decision.dropped().collect()
    }
}
