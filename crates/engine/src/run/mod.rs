//! One run of an experiment: create it (split, trials) or resume it, find every (trial,
//! item, repeat, answer order) that has no successful verdict yet, and judge those group by
//! group ([`group`]), recording each verdict the moment it arrives; then time a sample of
//! each local trial's calls alone, and of each remote trial's at the load its sweep sets
//! ([`timing`]). A cancelled run keeps everything judged so far; running
//! it again judges only what is missing.

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::sync::atomic::Ordering;

use judgelab_core::experiment::Shortening;
use judgelab_core::split;
use judgelab_core::template::ExampleContext;
use judgelab_core::{Item, Message};
use judgelab_store::{ExperimentRow, NewExperiment, NewTrial, Store};

pub(crate) mod choose;
pub(crate) mod group;
pub(crate) mod interface;
pub(crate) mod loaded;
mod summarise;
mod timing;
mod unlabelled;

pub use choose::RaceState;
use group::{judge_group, Budget, Run, Tally};
pub use interface::{FailureCause, RunEvent, RunOptions, RunSummary, DEFAULT_TIMED_CALLS};
use loaded::Judges;
pub use unlabelled::{judge_unlabelled, UnlabelledRequest, UnlabelledRun};

use crate::calls::{self, groups, Call};
use crate::inputs::Inputs;
use crate::resolve::{resolve, Resolved, Trial};
use crate::EngineError;

/// What a run says of a judge whose one-token trials cannot read exact verdicts.
const GENERATES: &str =
    "generates its one-token verdicts, one call per trial, instead of reading them exact";

/// Runs (or resumes) the experiment in the file at `path`.
pub async fn run_experiment(
    store: &Store,
    path: &Path,
    options: RunOptions,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<RunSummary, EngineError> {
    let mut r = resolve(store, path).await?;
    // Held to the end of the run: a second run of this experiment (another process, or the
    // app) is refused rather than judging the same items alongside this one.
    let _lock = store.lock_run(&r.experiment.name)?;
    let threads = options.threads.unwrap_or_else(|| {
        std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
    });
    crate::variants::make(&mut r, threads, on_event).await?;
    let r = r;
    if r.imported {
        on_event(RunEvent::Imported {
            dataset: r.dataset.name.clone(),
            n_items: r.dataset.items.len(),
        });
    }
    let mut judges = Judges::new(&r, &options);
    judges.learn(store).await?;
    let (row, resumed) = open(store, &r, options.replace, &mut judges, on_event).await?;
    // Its panels name its trials, which exist from here on: refused before any call.
    crate::panels::check(store, &row).await?;
    let trials = r.trials(store.trials(row.id).await?)?;
    let index: HashMap<&str, &Item> = r.item_index();
    let inputs = inputs(store, &trials, &judged(&row, &index), &mut judges, on_event).await?;
    let budget = Budget::start(store, &r, &row).await?;
    let run = Run {
        store,
        r: &r,
        options: &options,
        index: &index,
        inputs: &inputs,
        total: 0.into(),
        verdicts: 0.into(),
        budget,
        noted: Default::default(),
    };
    let already_done = start(&run, &row, &trials, resumed, on_event).await?;
    let mut tally = Tally {
        done: already_done,
        ..Tally::default()
    };
    let cancelled = || options.cancel.load(Ordering::SeqCst);
    let race = dev_split(&run, &mut judges, &row, &trials, &mut tally, on_event).await?;
    // The test split, once the dev split is complete, by the trials chosen for it.
    let (trials, dev_complete) =
        test_split(&run, &mut judges, &row, trials, &mut tally, on_event).await?;
    let (timed_now, timed_at_load) = if cancelled() {
        (0, 0)
    } else {
        time_trials(&run, &mut judges, &row, &trials, on_event).await?
    };
    Ok(RunSummary {
        experiment: row.name.clone(),
        experiment_id: row.id,
        resumed,
        n_trials: trials.len(),
        total: run.total.load(Ordering::SeqCst),
        verdicts: run.verdicts.load(Ordering::SeqCst),
        already_done,
        judged_now: tally.judged_now,
        n_errors: tally.n_errors,
        cache_hits: tally.cache_hits,
        model_calls: tally.model_calls,
        prompt_tokens_decoded: tally.prompt_tokens_decoded,
        timed_now,
        timed_at_load,
        // Cancelled (or stopped by a budget) before every verdict was judged or every
        // sampled call timed: the next run does the rest.
        interrupted: cancelled(),
        stopped_by: run.budget.reached(),
        race,
        test_waits: !row.test.is_empty() && !dev_complete,
        failures: FailureCause::ranked(tally.errors),
    })
}

/// `items` as `trials` show them, each (judge, input budget, strategy) shortened in its
/// judge's tokens, the summaries a strategy needs read from `store` or written first.
pub(crate) async fn inputs<L: Clone + Send + Sync + 'static>(
    store: &Store,
    trials: &[Trial<'_>],
    items: &[&judgelab_core::Item<L>],
    judges: &mut Judges<'_>,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<Inputs<L>, EngineError> {
    let mut inputs = Inputs::default();
    // One judge in memory at a time; the first trial's last, so that judging starts with it.
    for t in Inputs::<L>::cutting(trials).into_iter().rev() {
        let summaries = match t.params.input_strategy {
            Shortening::Summary => {
                Some(summarise::summaries(store, t, items, judges, on_event).await?)
            }
            Shortening::HeadTail => None,
        };
        let judge = judges.get(t.judge, on_event).await?;
        inputs.cut(t, judge, items, summaries).await?;
    }
    Ok(inputs)
}

/// The items of the experiment's dev and test splits.
fn judged<'a>(row: &ExperimentRow, index: &HashMap<&str, &'a Item>) -> Vec<&'a Item> {
    let ids = row.judged.iter().chain(&row.test);
    ids.map(|id| index[id.as_str()]).collect()
}

/// Counts what the run has to judge and says it starts; the calls already stored.
async fn start(
    run: &Run<'_>,
    row: &ExperimentRow,
    trials: &[Trial<'_>],
    resumed: bool,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<usize, EngineError> {
    let out_of_race = choose::dropped(run, row).await?;
    let needed = needed(run, row, trials, &out_of_race).await?;
    run.restate(needed);
    let (total, n_missing, verdicts) = needed;
    let already_done = total - n_missing;
    on_event(RunEvent::Started {
        experiment: row.name.clone(),
        resumed,
        n_trials: trials.len(),
        total,
        done: already_done,
        verdicts,
        pool: row.pool.clone(),
        n_judged_items: row.judged.len(),
    });
    Ok(already_done)
}

/// Judges the dev split: in a race's rounds (the race's state), or every trial on every
/// item.
async fn dev_split<'a>(
    run: &Run<'a>,
    judges: &mut Judges<'_>,
    row: &ExperimentRow,
    trials: &'a [Trial<'a>],
    tally: &mut Tally,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<Option<RaceState>, EngineError> {
    if run.r.experiment.selection.is_race() {
        let state = choose::race(run, judges, row, trials, tally, on_event).await?;
        // Dropped trials no longer need the rest of the dev split.
        let out_of_race = choose::dropped(run, row).await?;
        run.restate(needed(run, row, trials, &out_of_race).await?);
        return Ok(Some(state));
    }
    let all: Vec<&Trial> = trials.iter().collect();
    let todo = missing(run, &all, &row.judged).await?;
    judge_all(run, judges, todo, tally, on_event).await?;
    Ok(None)
}

/// Times the calls of the trials still in the race: alone, then at the load the sweep
/// sets. How many of each were timed.
async fn time_trials(
    run: &Run<'_>,
    judges: &mut Judges<'_>,
    row: &ExperimentRow,
    trials: &[Trial<'_>],
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<(usize, usize), EngineError> {
    let out_of_race = choose::dropped(run, row).await?;
    let timed: Vec<Trial> = trials
        .iter()
        .filter(|t| !out_of_race.contains(&t.id))
        .cloned()
        .collect();
    Ok((
        timing::time_alone(run, judges, row, &timed, on_event).await?,
        timing::time_at_load(run, judges, row, &timed, on_event).await?,
    ))
}

/// Once the dev split is complete (and no cancel came first), chooses the trials that
/// judge the test split, if not chosen yet, and judges what they miss of it. The trials,
/// as stored after the choice, and whether the dev split is complete.
async fn test_split<'r>(
    run: &Run<'r>,
    judges: &mut Judges<'_>,
    row: &ExperimentRow,
    trials: Vec<Trial<'r>>,
    tally: &mut Tally,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<(Vec<Trial<'r>>, bool), EngineError> {
    let mut trials = trials;
    let mut dev_complete = false;
    if !run.options.cancel.load(Ordering::SeqCst) {
        let out_of_race = choose::dropped(run, row).await?;
        let survivors: Vec<&Trial> = trials
            .iter()
            .filter(|t| !out_of_race.contains(&t.id))
            .collect();
        dev_complete = missing(run, &survivors, &row.judged)
            .await?
            .iter()
            .all(|(_, calls)| calls.is_empty());
    }
    if dev_complete && !row.test.is_empty() {
        let current = run
            .store
            .experiment_by_name(&row.name)
            .await?
            .ok_or_else(|| EngineError::UnknownExperiment(row.name.clone()))?;
        if !current.selected {
            choose::select(run, &current, &trials, on_event).await?;
            trials = run.r.trials(run.store.trials(row.id).await?)?;
        }
        let out_of_race = choose::dropped(run, row).await?;
        run.restate(needed(run, row, &trials, &out_of_race).await?);
        let kept: Vec<&Trial> = trials.iter().filter(|t| t.test_role.is_some()).collect();
        let todo = missing(run, &kept, &row.test).await?;
        judge_all(run, judges, todo, tally, on_event).await?;
    }
    Ok((trials, dev_complete))
}

/// Judges `todo` group by group, until the run is cancelled.
pub(crate) async fn judge_all(
    run: &Run<'_>,
    judges: &mut Judges<'_>,
    todo: Vec<(&Trial<'_>, Vec<Call<'_>>)>,
    tally: &mut Tally,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<(), EngineError> {
    for group in groups(todo, |t| exact_in(run, t)) {
        if run.options.cancel.load(Ordering::SeqCst) {
            break;
        }
        judge_group(run, judges, &group, tally, on_event).await?;
    }
    Ok(())
}

/// Whether `t`'s verdicts are read from exact passes in `run` (one pass serving every
/// trial that shows the same prompts).
pub(crate) fn exact_in(run: &Run<'_>, t: &Trial<'_>) -> bool {
    run.r.experiment.exact(&t.params) && !run.options.naive
}

/// The calls the experiment needs as it stands, how many of them are missing, and the
/// verdicts they make: every trial on the dev split (a dropped trial, on what it was
/// judged on by its drop), and the trials chosen for the test split on that.
async fn needed(
    run: &Run<'_>,
    row: &ExperimentRow,
    trials: &[Trial<'_>],
    out_of_race: &HashSet<i64>,
) -> Result<(usize, usize, usize), EngineError> {
    let drops: HashMap<i64, usize> = run
        .store
        .race_standings(row.id)
        .await?
        .into_iter()
        .filter(|s| s.dropped)
        .map(|s| (s.trial_id, s.n_items))
        .collect();
    let (mut total, mut n_missing, mut verdicts) = (0, 0, 0);
    for t in trials {
        let dev = match drops.get(&t.id) {
            Some(&n) if out_of_race.contains(&t.id) => &row.judged[..n.min(row.judged.len())],
            _ => &row.judged[..],
        };
        let mut items: Vec<String> = dev.to_vec();
        if t.test_role.is_some() {
            items.extend(row.test.iter().cloned());
        }
        total += items.len() * n_per_item(run.r, t);
        verdicts += items.len() * n_per_item(run.r, t) / run.r.asked_apart(&t.params).len();
        n_missing += missing(run, &[t], &items)
            .await?
            .iter()
            .map(|(_, calls)| calls.len())
            .sum::<usize>();
    }
    Ok((total, n_missing, verdicts))
}

/// The stored experiment of this name and content, or a new one (replacing one of the
/// same name whose content differs only where `replace` says so); and whether it was
/// stored before.
async fn open(
    store: &Store,
    r: &Resolved,
    replace: bool,
    judges: &mut Judges<'_>,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<(ExperimentRow, bool), EngineError> {
    // A replaced experiment is deleted only in the transaction that stores its successor.
    let replacing = match store.experiment_by_name(&r.experiment.name).await? {
        Some(e) if e.content_hash == r.content_hash => {
            // The same experiment; what of the file is outside its identity may have
            // changed, and the report reads it from the latest file, once its panels
            // compose from the stored trials.
            if e.spec != r.spec {
                crate::panels::check_file(store, &e, &r.experiment).await?;
                store.update_spec(e.id, &r.spec).await?;
                let updated = store.experiment_by_name(&e.name).await?;
                return Ok((updated.unwrap_or(e), true));
            }
            return Ok((e, true));
        }
        Some(e) if replace => Some(e.id),
        Some(e) => {
            return Err(EngineError::Changed {
                name: e.name,
                n_verdicts: store.count_verdicts(e.id).await?,
            })
        }
        None => None,
    };
    let row = create(store, r, judges, replacing, on_event).await?;
    Ok((row, false))
}

/// The calls of a trial per item: one per repeat and answer order, and in a checklist one
/// per criterion of each.
fn n_per_item(r: &Resolved, trial: &Trial) -> usize {
    r.experiment.sweep.repeats as usize
        * trial.params.order.calls().len()
        * r.asked_apart(&trial.params).len()
}

/// What of `items` has no successful verdict yet, per trial of `trials`, in trial order.
pub(crate) async fn missing<'a>(
    run: &Run<'a>,
    trials: &[&'a Trial<'a>],
    items: &[String],
) -> Result<Vec<(&'a Trial<'a>, Vec<Call<'a>>)>, EngineError> {
    let mut missing = Vec::new();
    for &trial in trials {
        let done = run.store.done_keys(trial.id).await?;
        let todo = items
            .iter()
            .flat_map(|id| {
                let shown = run.inputs.shown(&trial.params, run.index[id.as_str()]);
                calls::calls_of(run.r, trial, shown, &done)
            })
            .collect();
        missing.push((trial, todo));
    }
    Ok(missing)
}

/// The length of an item shown as a few-shot example, in the judge's tokens: its question,
/// answers and label.
pub(crate) fn example_text(item: &Item) -> Message {
    let e = ExampleContext::new(item);
    let parts = [
        Some(e.question),
        e.answer_a,
        e.answer_b,
        e.answer,
        e.reference,
    ];
    let mut content: Vec<&str> = parts.into_iter().flatten().collect();
    content.push(&e.label);
    Message {
        role: "user".into(),
        content: content.join("\n"),
    }
}

/// The new trials, where a judge exact by default (no `exact` written) cannot read a
/// verdict from one token: a local judge where a valid verdict is not one token of its
/// model, a remote one whose server returns no log-probabilities ([`crate::server`]), or
/// a trial that asks a rubric's criteria in one call. Those trials generate instead, and
/// the run says so.
async fn readable(
    store: &Store,
    r: &Resolved,
    judges: &mut Judges<'_>,
    mut trials: Vec<judgelab_core::TrialParams>,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<Vec<judgelab_core::TrialParams>, EngineError> {
    // By judge and whether its calls ask one criterion each: why its trials generate.
    let mut checked: HashMap<(String, bool), Option<String>> = HashMap::new();
    for t in trials.iter_mut().filter(|t| t.exact) {
        let judge = r.parts(t)?.judge;
        if judge.judge.exact_as_written().is_some() {
            continue;
        }
        let key = (t.judge.clone(), r.asked_apart(t) != [None]);
        let generates = match checked.get(&key) {
            Some(why) => why.clone(),
            None => {
                let loaded = judges.get(judge, on_event).await?;
                let vocabulary = loaded.vocabulary();
                let why = match crate::exact::Readers::new(vocabulary.clone(), r, t) {
                    Err(why) => Some(why),
                    Ok(_) => match judge.remote() {
                        Some(remote) => match crate::server::ask(store, remote, loaded).await? {
                            crate::server::Logprobs::Returned => None,
                            crate::server::Logprobs::NotReturned(why) => {
                                // A refused request stops a remote judge's calls.
                                judges.unload();
                                Some(why)
                            }
                        },
                        None if vocabulary.is_none() => Some("it returns no logits".into()),
                        None => None,
                    },
                };
                if let Some(why) = &why {
                    on_event(RunEvent::Note {
                        judge: t.judge.clone(),
                        message: format!("{GENERATES}: {why}"),
                    });
                }
                checked.insert(key, why.clone());
                why
            }
        };
        t.exact = generates.is_none();
    }
    Ok(trials)
}

/// Reserves the few-shot pool, draws the items to judge, and stores the experiment with
/// its trials.
async fn create(
    store: &Store,
    r: &Resolved,
    judges: &mut Judges<'_>,
    replacing: Option<i64>,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<ExperimentRow, EngineError> {
    let e = &r.experiment;
    let items = &r.dataset.items;
    let limits = &e.sweep.few_shot_max_tokens;
    let lengths: Vec<usize> = if e.pool_size() > 0 && limits.iter().any(Option::is_some) {
        // Lengths in the first judge's tokens.
        let judge = judges.get(&r.judges[0], on_event).await?;
        let messages: Vec<Message> = items.iter().map(example_text).collect();
        tokio::task::spawn_blocking(move || {
            messages
                .iter()
                .map(|m| judge.count_tokens(std::slice::from_ref(m)))
                .collect::<Result<Vec<_>, _>>()
        })
        .await
        .map_err(|e| EngineError::Judge(format!("tokenising panicked: {e}")))?
        .map_err(EngineError::Judge)?
    } else {
        vec![0; items.len()]
    };
    let length = |idx: usize| lengths[idx];
    let s = split::reserve(
        items,
        e.sweep.seed,
        e.pool_size(),
        limits,
        &length,
        e.sizes(),
    )?;
    let ids =
        |idxs: &[usize]| -> Vec<String> { idxs.iter().map(|&i| items[i].id.clone()).collect() };
    let mut trials = Vec::new();
    for params in readable(store, r, judges, e.trials(), on_event).await? {
        let parts = r.parts(&params)?;
        // A card's judge shows the card's examples; another, those of the pool.
        let examples = match e.card_definition() {
            Some(_) => r.card_examples.iter().map(|i| i.id.clone()).collect(),
            None => ids(&split::examples(
                items,
                &s.pool,
                params.few_shot as usize,
                params.few_shot_max_tokens,
                params.few_shot_set,
                e.sweep.seed,
                &length,
            )),
        };
        let judge_identity = crate::card::definition(r, parts, &params, &examples)?.identity();
        let (model_path, model_sha256) = match parts.judge.remote() {
            Some(remote) => (
                format!("{}#{}", remote.endpoint.base_url, remote.model),
                None,
            ),
            None => (
                parts.judge.path.display().to_string(),
                Some(parts.judge.sha256.clone()),
            ),
        };
        trials.push(NewTrial {
            template_hash: parts.template.hash.clone(),
            model_path,
            model_sha256,
            examples,
            judge_identity,
            params,
        });
    }
    for (_, template) in &r.templates {
        store.save_template(template).await?;
    }
    let row = store
        .create_experiment(
            &NewExperiment {
                name: e.name.clone(),
                content_hash: r.content_hash.clone(),
                spec: r.spec.clone(),
                dataset_id: r.dataset_info.id,
                pool: ids(&s.pool),
                judged: ids(&s.judged),
                test: ids(&s.test),
                card: e.card_definition().cloned(),
            },
            &trials,
            replacing,
        )
        .await?;
    Ok(row)
}
