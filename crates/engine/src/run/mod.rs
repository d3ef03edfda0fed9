//! One run of an experiment: create it (split, trials) or resume it, find every (trial,
//! item, repeat, answer order) that has no successful verdict yet, and judge those group by
//! group ([`group`]), recording each verdict the moment it arrives; then time a sample of
//! each local trial's calls alone, and of each remote trial's at the load its sweep sets
//! ([`timing`]). A cancelled run keeps everything judged so far; running
//! it again judges only what is missing.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;

use judgelab_core::split;
use judgelab_core::template::ExampleContext;
use judgelab_core::{Item, Message};
use judgelab_store::{ExperimentRow, NewExperiment, NewTrial, Store, TrialRow};

mod group;
pub(crate) mod interface;
mod loaded;
mod timing;

use group::{judge_group, Run, Tally};
pub use interface::{FailureCause, RunEvent, RunOptions, RunSummary, DEFAULT_TIMED_CALLS};
use loaded::Judges;

use crate::calls::{groups, Call};
use crate::resolve::{resolve, Resolved};
use crate::EngineError;

/// Runs (or resumes) the experiment in the file at `path`.
pub async fn run_experiment(
    store: &Store,
    path: &Path,
    options: RunOptions,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<RunSummary, EngineError> {
    let r = resolve(store, path).await?;
    if r.imported {
        on_event(RunEvent::Imported {
            dataset: r.dataset.name.clone(),
            n_items: r.dataset.items.len(),
        });
    }
    let mut judges = Judges::new(&r, &options);
    let (row, resumed) = open(store, &r, options.replace, &mut judges, on_event).await?;
    let trials = store.trials(row.id).await?;
    let index: HashMap<&str, &Item> = r.dataset.items.iter().map(|i| (i.id.as_str(), i)).collect();
    let total: usize = trials.iter().map(|t| n_calls(&r, &row, t)).sum();
    let missing = missing(store, &r, &row, &trials, &index).await?;
    let n_missing: usize = missing.iter().map(|(_, todo)| todo.len()).sum();
    let already_done = total - n_missing;
    on_event(RunEvent::Started {
        experiment: row.name.clone(),
        resumed,
        n_trials: trials.len(),
        total,
        done: already_done,
        pool: row.pool.clone(),
        n_judged_items: row.judged.len(),
    });

    let run = Run {
        store,
        r: &r,
        options: &options,
        index: &index,
        total,
    };
    let mut tally = Tally {
        done: already_done,
        ..Tally::default()
    };
    let exact = |t: &TrialRow| r.judge(&t.params.judge).exact() && !options.naive;
    let remote = |t: &TrialRow| r.judge(&t.params.judge).remote().is_some();
    for group in groups(missing, exact, remote) {
        if options.cancel.load(Ordering::SeqCst) {
            break;
        }
        judge_group(&run, &mut judges, &group, &mut tally, on_event).await?;
    }
    let (timed_now, timed_at_load) = if options.cancel.load(Ordering::SeqCst) {
        (0, 0)
    } else {
        (
            timing::time_alone(&run, &mut judges, &row, &trials, on_event).await?,
            timing::time_at_load(&run, &mut judges, &row, &trials, on_event).await?,
        )
    };
    Ok(RunSummary {
        experiment: row.name.clone(),
        experiment_id: row.id,
        resumed,
        n_trials: trials.len(),
        total,
        already_done,
        judged_now: tally.judged_now,
        n_errors: tally.n_errors,
        cache_hits: tally.cache_hits,
        model_calls: tally.model_calls,
        prompt_tokens_decoded: tally.prompt_tokens_decoded,
        timed_now,
        timed_at_load,
        // Cancelled before every verdict was judged or every sampled call timed: the next
        // run does the rest.
        interrupted: options.cancel.load(Ordering::SeqCst),
        failures: FailureCause::ranked(tally.errors),
    })
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
        Some(e) if e.content_hash == r.content_hash => return Ok((e, true)),
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

/// The calls of a trial: one per judged item, repeat and answer order.
fn n_calls(r: &Resolved, row: &ExperimentRow, trial: &TrialRow) -> usize {
    row.judged.len() * r.experiment.sweep.repeats as usize * trial.params.order.calls().len()
}

/// What has no successful verdict yet, per trial, in trial order.
async fn missing<'a>(
    store: &Store,
    r: &Resolved,
    row: &ExperimentRow,
    trials: &'a [TrialRow],
    index: &HashMap<&str, &'a Item>,
) -> Result<Vec<(&'a TrialRow, Vec<Call<'a>>)>, EngineError> {
    let mut missing = Vec::new();
    for trial in trials {
        let done = store.done_keys(trial.id).await?;
        let mut todo = Vec::new();
        for id in &row.judged {
            for repeat in 0..r.experiment.sweep.repeats {
                for &swapped in trial.params.order.calls() {
                    if !done.contains(&(id.clone(), repeat, swapped)) {
                        todo.push(Call {
                            item: index[id.as_str()],
                            repeat,
                            swapped,
                        });
                    }
                }
            }
        }
        missing.push((trial, todo));
    }
    Ok(missing)
}

/// The length of an item shown as a few-shot example, in the judge's tokens: its question,
/// answers and label.
fn example_text(item: &Item) -> Message {
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
    let lengths: Vec<usize> = if e.max_few_shot() > 0 && limits.iter().any(Option::is_some) {
        // Lengths in the first judge's tokens.
        let judge = judges.get(&e.judges[0].name, on_event).await?;
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
        e.max_few_shot(),
        limits,
        &length,
        e.limits.items,
    )?;
    let ids =
        |idxs: &[usize]| -> Vec<String> { idxs.iter().map(|&i| items[i].id.clone()).collect() };
    let mut trials = Vec::new();
    for params in e.trials() {
        let (_, template) = r
            .templates
            .iter()
            .find(|(n, _)| *n == params.template)
            .expect("resolved");
        let (path, sha256) = r.model_file(&params.judge);
        let examples = split::examples(
            &s.pool,
            params.few_shot as usize,
            params.few_shot_max_tokens,
            &length,
        );
        let (model_path, model_sha256) = match r.judge(&params.judge).remote() {
            Some(remote) => (
                format!("{}#{}", remote.endpoint.base_url, remote.model),
                None,
            ),
            None => (path.display().to_string(), Some(sha256.clone())),
        };
        trials.push(NewTrial {
            template_hash: template.hash.clone(),
            model_path,
            model_sha256,
            examples: ids(&examples),
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
            },
            &trials,
            replacing,
        )
        .await?;
    Ok(row)
}
