//! Choosing among trials in a run: a race's rounds over the dev split, and the trials that
//! judge the test split.
//!
//! A race (`[selection] strategy = "race"`) judges the dev items in rounds of
//! `selection.round`, every surviving trial on the same items, and after each round from
//! `selection.min_items` on drops the trials that `core::race::decide` finds clearly worse
//! than the leader. Each round's standings are stored with the round as decided, in one
//! transaction: a resumed race judges what its round is missing and decides it then, from
//! the same verdicts, so it drops the same trials at the same rounds. A round is decided
//! only once every survivor has a verdict on each of its items; a failed call stops the
//! race until a later run retries it.
//!
//! Once the dev split is judged, the trials that judge the test split are chosen
//! (`core::selection::kept`) and stored with why; the choice is made once.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::Ordering;

use judgelab_core::metrics::{BootstrapSpec, Observation};
use judgelab_core::race::{self, RoundStanding};
use judgelab_core::results::criteria;
use judgelab_core::selection::{self, Ties};
use judgelab_core::{Item, Order};
use judgelab_store::{ExperimentRow, Store, TrialRow};

use crate::resolve::{Resolved, Trial};

use super::group::{Run, Tally};
use super::interface::RunEvent;
use super::loaded::Judges;
use super::{judge_all, missing};
use crate::EngineError;

/// The trials a race has dropped (store ids), from its stored standings.
pub(super) async fn dropped(
    run: &Run<'_>,
    row: &ExperimentRow,
) -> Result<HashSet<i64>, EngineError> {
    Ok(run
        .store
        .race_standings(row.id)
        .await?
        .into_iter()
        .filter(|s| s.dropped)
        .map(|s| s.trial_id)
        .collect())
}

/// How a race stands at the end of a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RaceState {
    pub rounds: u32,
    pub n_rounds: u32,
    pub survivors: usize,
    /// Trials this run dropped.
    pub dropped_now: usize,
    /// Stopped at a round whose calls failed (a later run retries them).
    pub blocked: bool,
}

/// Runs the race's rounds over the dev split from where the store says it stands.
pub(super) async fn race<'a>(
    run: &Run<'a>,
    judges: &mut Judges<'_>,
    row: &ExperimentRow,
    trials: &'a [Trial<'a>],
    tally: &mut Tally,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<RaceState, EngineError> {
    let selection = run.r.experiment.selection;
    let schedule: Vec<race::Round> = race::rounds(row.judged.len(), &selection).collect();
    let mut out_of_race = dropped(run, row).await?;
    let mut state = RaceState {
        rounds: row.race_rounds,
        n_rounds: schedule.len() as u32,
        ..RaceState::default()
    };
    let groups_of = race_groups(run, trials);
    for r in &schedule[(row.race_rounds as usize).min(schedule.len())..] {
        if run.options.cancel.load(Ordering::SeqCst) {
            break;
        }
        let (round, upto) = (r.round, r.n_items);
        let survivors: Vec<&'a Trial<'a>> = trials
            .iter()
            .filter(|t| !out_of_race.contains(&t.id))
            .collect();
        let items = &row.judged[..upto];
        let todo = missing(run, &survivors, items).await?;
        on_event(RunEvent::Round {
            round,
            n_rounds: r.n_rounds,
            n_items: upto,
            survivors: survivors.len(),
            n_trials: trials.len(),
        });
        judge_all(run, judges, todo, tally, on_event).await?;
        if run.options.cancel.load(Ordering::SeqCst) {
            break;
        }
        // Decided only on complete verdicts: a failed call is retried by a later run.
        let left = missing(run, &survivors, items).await?;
        if left.iter().any(|(_, calls)| !calls.is_empty()) {
            state.blocked = true;
            break;
        }
        let observed = observations(run, &survivors, items).await?;
        let views: Vec<&[Observation]> = observed.iter().map(Vec::as_slice).collect();
        let ties: Vec<Ties> = observed.iter().map(|o| Ties::of_calls(o)).collect();
        let groups: Vec<usize> = survivors.iter().map(|t| groups_of[&t.id]).collect();
        let decision = r.decision(run.r.dataset.task, &selection, &views, &ties, &groups);
        let standings: Vec<RoundStanding> = decision
            .standings
            .iter()
            .map(|s| {
                let leader = decision.leader == Some(s.trial);
                RoundStanding::new(survivors[s.trial].id, round, upto, leader, s)
            })
            .collect();
        run.store.record_round(row.id, round, &standings).await?;
        let now_dropped: Vec<&RoundStanding> = standings.iter().filter(|s| s.dropped).collect();
        state.dropped_now += now_dropped.len();
        out_of_race.extend(now_dropped.iter().map(|s| s.trial_id));
        state.rounds = round;
        if !now_dropped.is_empty() {
            let remaining = trials.len() - out_of_race.len();
            on_event(RunEvent::Dropped {
                round,
                trial_ids: now_dropped.iter().map(|s| s.trial_id).collect(),
                survivors: remaining,
            });
        }
    }
    state.survivors = trials.len() - out_of_race.len();
    Ok(state)
}

/// Each trial's exact group for the race: trials whose verdicts come from the same calls
/// (an exact judge's trials that differ only in sampling, a remote judge's that differ
/// only in the load their latency is measured at) race together. Keyed by store id,
/// valued by the first such trial's id.
fn race_groups(run: &Run<'_>, trials: &[Trial<'_>]) -> HashMap<i64, usize> {
    let mut out = HashMap::new();
    for (i, t) in trials.iter().enumerate() {
        let shares = |o: &TrialRow| {
            if run.r.experiment.exact(&t.params) && !run.options.naive {
                judgelab_core::sweep::same_prompts(&o.params, &t.params) && o.examples == t.examples
            } else if t.judge.remote().is_some() {
                let (mut a, mut b) = (o.params.clone(), t.params.clone());
                (a.concurrency, b.concurrency) = (None, None);
                a == b
            } else {
                false
            }
        };
        let first = trials[..i]
            .iter()
            .position(|o| o.params.judge == t.params.judge && shares(o))
            .unwrap_or(i);
        out.insert(t.id, first);
    }
    out
}

/// Each trial's stored calls on `items`, units numbered by their place in `items`.
pub(crate) async fn observations(
    run: &Run<'_>,
    trials: &[&Trial<'_>],
    items: &[String],
) -> Result<Vec<Vec<Observation>>, EngineError> {
    let keyed: Vec<(i64, Order)> = trials.iter().map(|t| (t.id, t.params.order)).collect();
    stored_observations(run.store, run.r, run.index, &keyed, items).await
}

/// The stored calls of each trial (its id, and its answer order, which says how its
/// orders combine) on `items`, units numbered by their place in `items`.
pub(crate) async fn stored_observations(
    store: &Store,
    r: &Resolved,
    index: &HashMap<&str, &Item>,
    trials: &[(i64, Order)],
    items: &[String],
) -> Result<Vec<Vec<Observation>>, EngineError> {
    let units: HashMap<&str, usize> = items
        .iter()
        .enumerate()
        .map(|(u, id)| (id.as_str(), u))
        .collect();
    let task = r.dataset.task;
    let mut out = Vec::with_capacity(trials.len());
    for &(id, order) in trials {
        let verdicts = match task.scale() {
            // A checklist's calls on one verdict are one observation.
            Some(scale) => criteria::gather(&r.dataset.criteria, scale, store.verdicts(id).await?),
            None => store.verdicts(id).await?,
        };
        out.push(
            verdicts
                .iter()
                .filter_map(|v| {
                    let unit = *units.get(v.item_id.as_str())?;
                    let item: &Item = index.get(v.item_id.as_str())?;
                    Some(v.observation(task, order, item.human_label, unit))
                })
                .collect(),
        );
    }
    Ok(out)
}

/// Chooses the trials that judge the test split, among those the race kept (all of them
/// for a grid), and stores the choice; the roles of the trials chosen.
pub(super) async fn select(
    run: &Run<'_>,
    row: &ExperimentRow,
    trials: &[Trial<'_>],
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<(), EngineError> {
    let out_of_race = dropped(run, row).await?;
    let candidates: Vec<&Trial> = trials
        .iter()
        .filter(|t| !out_of_race.contains(&t.id))
        .collect();
    let observed = observations(run, &candidates, &row.judged).await?;
    let views: Vec<&[Observation]> = observed.iter().map(Vec::as_slice).collect();
    let ties: Vec<Ties> = observed.iter().map(|o| Ties::of_calls(o)).collect();
    let selection = run.r.experiment.selection;
    let kept = selection::kept(
        run.r.dataset.task,
        &views,
        &ties,
        selection.metric,
        selection.confirm,
        &BootstrapSpec::default(),
    );
    let roles: Vec<(i64, String)> = kept
        .iter()
        .map(|&(i, role)| (candidates[i].id, role.name()))
        .collect();
    run.store.record_selection(row.id, &roles).await?;
    on_event(RunEvent::Selected {
        trial_ids: roles.iter().map(|(id, _)| *id).collect(),
        n_test_items: row.test.len(),
    });
    Ok(())
}
