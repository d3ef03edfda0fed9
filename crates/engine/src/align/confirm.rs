//! The end of a search: the best candidate (by the dev metric, among those that judged the
//! whole dev split), its dev score naive and corrected for the choice, and the test split
//! judged by the start and the best: each one's agreement, their paired difference with
//! its interval and McNemar's test, and whether the gain is confirmed.

use std::collections::HashSet;

use judgelab_core::align::diff::diff;
use judgelab_core::align::Move;
use judgelab_core::metrics::paired;
use judgelab_core::metrics::{BootstrapSpec, Estimate, Observation, SplitScore};
use judgelab_core::selection::{self, Ties};
use judgelab_store::{ExperimentRow, Store, TrialRow};

use super::search::{inputs, observations, run, trials_of, State};
use super::setup::{calls_per_item, Source};
use super::{AlignEvent, AlignOutcome, Confirmation, Scored};
use crate::resolve::{Resolved, Trial};
use crate::run::group::Tally;
use crate::run::loaded::Judges;
use crate::run::{judge_all, missing};
use crate::EngineError;

/// Picks the best, judges the test split with the start and it (where the search was not
/// stopped), and gathers the outcome.
pub(super) async fn finish(
    store: &Store,
    source: &Source,
    alignment: &ExperimentRow,
    state: &mut State<'_>,
    stopped: Option<String>,
    on_event: &mut (dyn FnMut(AlignEvent) + Send),
) -> Result<AlignOutcome, EngineError> {
    let rows = store.trials(alignment.id).await?;
    let r = super::setup::resolved(store, alignment).await?;
    let spec = BootstrapSpec::default();
    let (complete, dev) = complete(store, state, &r, &rows).await?;
    let metric = r.experiment.selection.metric;
    let task = r.dataset.task;
    let qualities: Vec<Option<f64>> = dev
        .iter()
        .map(|o| judgelab_core::metrics::value_of(task, o, metric))
        .collect();
    let ties: Vec<Ties> = dev.iter().map(|o| Ties::of_calls(o)).collect();
    let best_at = selection::pick(&qualities, &ties).unwrap_or(0);
    let best = complete.get(best_at).copied().unwrap_or(0);
    let dev_naive = SplitScore::of(task, dev.get(best_at).map_or(&[][..], Vec::as_slice), &spec)
        .quality
        .get(metric);
    let views: Vec<&[Observation]> = dev.iter().map(Vec::as_slice).collect();
    let dev_corrected =
        selection::corrected(task, &views, &ties, metric, &spec).map(|c| Estimate {
            value: c.value,
            ci: c.ci,
        });
    let (confirmation, stopped) = match stopped {
        Some(why) => (None, Some(why)),
        None => match confirm(store, state, &r, &rows, best, on_event).await? {
            Ok(c) => (Some(c), None),
            Err(why) => (None, Some(why)),
        },
    };
    let candidates = scored(store, state, &r, &rows, &spec).await?;
    let spent_calls = state.spent(store).await?;
    let n_dev = alignment.judged.len() as u64;
    let full_dev_calls = candidates
        .iter()
        .filter(|c| c.candidate.trial_id.is_some() && (c.candidate.id != 0 || !source.start_judged))
        .map(|c| n_dev * per_item(&r, &rows, c.candidate.trial_id))
        .sum::<u64>();
    let dev_calls = candidates.iter().map(|c| c.calls).sum();
    let proposer_usd: f64 = candidates
        .iter()
        .filter_map(|c| c.candidate.proposal.as_ref()?.cost_usd)
        .sum();
    let priced = state.plan.usd_at_most(0, 0).is_some();
    let spent_usd = priced.then_some(store.spent(alignment.id).await?.1 + proposer_usd);
    Ok(AlignOutcome {
        alignment: alignment.name.clone(),
        source: source.row.name.clone(),
        trial: source.trial.id,
        plan: state.plan.clone(),
        metric,
        candidates,
        start: 0,
        best,
        dev_naive,
        dev_corrected,
        confirmation,
        dev_items: alignment.judged.clone(),
        test_items: alignment.test.clone(),
        spent_calls,
        dev_calls,
        full_dev_calls,
        spent_usd,
        stopped,
    })
}

/// The calls made for trial `t` (not copied), off the test split and on it. An exact pass
/// is counted once per family (`family`: the trial of the candidate whose sampling moves
/// share its passes, or `t`'s own), for the first of the family that showed its prompt
/// (`seen`: the family and prompt of each pass counted so far), as `Store::calls_made`
/// counts them: a sampling move's verdicts come from its family's passes.
async fn made(
    store: &Store,
    (t, family): (&TrialRow, i64),
    test: &[String],
    seen: &mut HashSet<String>,
) -> Result<(u64, u64), EngineError> {
    let (mut dev, mut on_test) = (0, 0);
    for v in store.verdicts(t.id).await?.iter().filter(|v| !v.cache_hit) {
        let new = !v.exact || seen.insert(format!("{family} {}", v.prompt_hash));
        match (new, test.contains(&v.item_id)) {
            (false, _) => {}
            (true, true) => on_test += 1,
            (true, false) => dev += 1,
        }
    }
    Ok((dev, on_test))
}

/// The candidates that judged every dev item (none of their calls missing or failed, as
/// the store has them: a race that stopped early, this run or an earlier one, left the
/// others short), with their dev calls.
async fn complete(
    store: &Store,
    state: &State<'_>,
    r: &Resolved,
    rows: &[TrialRow],
) -> Result<(Vec<u32>, Vec<Vec<Observation>>), EngineError> {
    let with_trial: Vec<u32> = state
        .candidates
        .iter()
        .filter(|c| c.trial_id.is_some())
        .map(|c| c.id)
        .collect();
    let observed = state.observed(store, r, rows, &with_trial).await?;
    let n_dev = state.alignment.judged.len() as u64;
    Ok(with_trial
        .into_iter()
        .zip(observed)
        .filter(|(c, o)| {
            let made = o.iter().filter(|x| x.verdict.is_some()).count() as u64;
            made == n_dev * per_item(r, rows, state.candidates[*c as usize].trial_id)
        })
        .unzip())
}

fn per_item(r: &Resolved, rows: &[TrialRow], trial: Option<i64>) -> u64 {
    rows.iter()
        .find(|t| Some(t.id) == trial)
        .map_or(0, |t| calls_per_item(r, t) as u64)
}

/// Judges the test split with the start and `best`, and compares them there.
async fn confirm(
    store: &Store,
    state: &State<'_>,
    r: &Resolved,
    rows: &[TrialRow],
    best: u32,
    on_event: &mut (dyn FnMut(AlignEvent) + Send),
) -> Result<Result<Confirmation, String>, EngineError> {
    let test = &state.alignment.test;
    let ids: Vec<i64> = [0, best]
        .iter()
        .map(|&c| state.candidates[c as usize].trial_id.expect("a trial"))
        .collect();
    // The start alone where it stayed the best: its calls are not made twice.
    let judged: Vec<i64> = if best == 0 {
        ids[..1].to_vec()
    } else {
        ids.clone()
    };
    let trials = trials_of(r, rows, &judged)?;
    let index = r.item_index();
    let options = &state.request.options;
    let mut judges = Judges::new(r, options);
    let alignment = state.alignment;
    let inputs = inputs(store, alignment, &index, &trials, &mut judges, on_event).await?;
    let run = run(store, (r, &index, &inputs), options, alignment).await?;
    let all: Vec<&Trial> = trials.iter().collect();
    let todo = missing(&run, &all, test).await?;
    let needed: usize = todo.iter().map(|(_, c)| c.len()).sum();
    if needed > 0 {
        if let Some(stop) = state.afford(store, needed as u64, 0).await? {
            return Ok(Err(stop));
        }
    }
    let mut forward = |e| on_event(AlignEvent::Run(e));
    state.retrying(store, &all).await?;
    judge_all(&run, &mut judges, todo, &mut Tally::default(), &mut forward).await?;
    if !missing(&run, &all, test)
        .await?
        .iter()
        .all(|(_, c)| c.is_empty())
    {
        let stop = match options.cancel.load(std::sync::atomic::Ordering::SeqCst) {
            true => "cancelled",
            false => "a call failed: run the same command again to retry it",
        };
        return Ok(Err(stop.into()));
    }
    let observed = observations(store, r, rows, ids.iter().copied(), test).await?;
    let spec = BootstrapSpec::default();
    let task = r.dataset.task;
    let metric = r.experiment.selection.metric;
    let difference = paired::compare(task, &observed[1], &observed[0], metric, &spec);
    // Above 0 by the paired interval, and for accuracy by McNemar's exact test too: where
    // the two disagree on a small split, the gain is not taken as shown.
    let mcnemar =
        metric != judgelab_core::metrics::Quality::Accuracy || difference.mcnemar_p < 0.05;
    let confirmed = difference.difference.ci.is_some_and(|(lo, _)| lo > 0.0) && mcnemar;
    let verdict = if best == 0 {
        "nothing to confirm: the start stayed the best".to_string()
    } else if confirmed {
        "confirmed".to_string()
    } else {
        "not confirmed".to_string()
    };
    Ok(Ok(Confirmation {
        start: SplitScore::of(task, &observed[0], &spec),
        best: SplitScore::of(task, &observed[1], &spec),
        difference,
        confirmed,
        verdict,
    }))
}

/// Every candidate with its template, its diff against its parent's, its dev score on
/// the items it judged and its calls.
async fn scored(
    store: &Store,
    state: &State<'_>,
    r: &Resolved,
    rows: &[TrialRow],
    spec: &BootstrapSpec,
) -> Result<Vec<Scored>, EngineError> {
    let mut out: Vec<Scored> = Vec::new();
    let mut seen = HashSet::new();
    for c in &state.candidates {
        let row = rows.iter().find(|t| Some(t.id) == c.trial_id);
        let template = match row {
            Some(t) => store.template(&t.template_hash).await?,
            None => None,
        };
        let parent_source = c
            .parent
            .and_then(|p| out.get(p as usize))
            .and_then(|p: &Scored| p.template.as_ref().map(|t| t.1.clone()));
        let diff = match (&template, parent_source) {
            (Some(t), Some(p)) => diff(&p, &t.source),
            _ => String::new(),
        };
        let (dev, dev_items, (calls, test_calls)) = match row {
            Some(t) => {
                let o = observations(store, r, rows, [t.id].into_iter(), &state.alignment.judged)
                    .await?;
                let items: std::collections::HashSet<usize> = o[0].iter().map(|x| x.unit).collect();
                let family = match (c.kind, c.parent) {
                    (Move::Sampling, Some(p)) => state.candidates[p as usize].trial_id,
                    _ => None,
                };
                let family = (t, family.unwrap_or(t.id));
                let calls = made(store, family, &state.alignment.test, &mut seen).await?;
                (
                    Some(SplitScore::of(r.dataset.task, &o[0], spec)),
                    items.len(),
                    calls,
                )
            }
            None => (None, 0, (0, 0)),
        };
        out.push(Scored {
            candidate: c.clone(),
            template: template.map(|t| (t.name.clone(), t.source)),
            params: row.map(|t| t.params.clone()),
            examples: row.map_or_else(Vec::new, |t| t.examples.clone()),
            diff,
            dev,
            dev_items,
            dropped_after: state.dropped.get(&c.id).copied(),
            calls,
            test_calls,
        });
    }
    Ok(out)
}
