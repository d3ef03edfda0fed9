//! Judging items without a human label with one trial of a stored experiment, as
//! `judgelab estimate` does: the experiment's own unlabelled items, or those of another
//! dataset of the same task. Their verdicts are stored as more verdicts of the trial, the
//! same way and with the same guarantees as a run's (each recorded as it arrives, a failed
//! call recorded and retried next time, nothing judged twice); no metric of the trial
//! counts them, because their items have no label ([`judgelab_core::results`] keeps them
//! apart).

use std::collections::HashMap;
use std::path::Path;

use judgelab_core::{Dataset, Item};
use judgelab_store::Store;

use super::group::{Budget, Run, Tally};
use super::interface::{FailureCause, RunEvent, RunOptions};
use super::judge_all;
use super::loaded::Judges;
use crate::calls::Call;
use crate::prompt::{Asking, PromptInput};
use crate::resolve::{locate, resolve_stored, Resolved, Trial};
use crate::{import_file, EngineError};

/// What to judge: the trial (its store id) and where the items come from (a dataset's
/// name or file; none: the experiment's own dataset).
#[derive(Debug, Clone, PartialEq)]
pub struct UnlabelledRequest {
    pub trial_id: i64,
    pub dataset: Option<String>,
}

/// How judging the unlabelled items ended.
#[derive(Debug, Clone, PartialEq)]
pub struct UnlabelledRun {
    pub experiment: String,
    pub trial_id: i64,
    /// The dataset the items are from, and their ids.
    pub dataset: String,
    pub item_ids: Vec<String>,
    /// The dataset was imported from a file by this call.
    pub imported: bool,
    /// Calls the items need (a call per verdict, or in a checklist per criterion of
    /// one), the verdicts they make, and how many calls were answered before.
    pub total: usize,
    pub verdicts: usize,
    pub already_done: usize,
    pub judged_now: usize,
    pub n_errors: usize,
    pub interrupted: bool,
    pub stopped_by: Option<String>,
    pub failures: Vec<FailureCause>,
}

/// Judges the items without a human label that `request` names with its trial of the
/// stored experiment `experiment`, as its run judged: the templates, examples and model
/// files its trials record.
pub async fn judge_unlabelled(
    store: &Store,
    experiment: &str,
    request: &UnlabelledRequest,
    options: RunOptions,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<UnlabelledRun, EngineError> {
    let invalid = |message: String| EngineError::Invalid {
        path: experiment.to_string(),
        message,
    };
    // Judging counts as a run of the experiment: never two at once.
    let _lock = store.lock_run(experiment)?;
    let row = store
        .experiment_by_name(experiment)
        .await?
        .ok_or_else(|| EngineError::UnknownExperiment(experiment.to_string()))?;
    let r = resolve_stored(store, &row).await?;
    let trials = r.trials(store.trials(row.id).await?)?;
    let trial = trials
        .iter()
        .find(|t| t.id == request.trial_id)
        .ok_or_else(|| {
            let ids: Vec<String> = trials.iter().map(|t| t.id.to_string()).collect();
            invalid(format!(
                "no trial {} in experiment {:?} (its trials are {})",
                request.trial_id,
                row.name,
                ids.join(", ")
            ))
        })?;
    let (dataset, imported) = match &request.dataset {
        None => (r.dataset.clone(), false),
        Some(name) => other_dataset(store, &r, name, &invalid).await?,
    };
    if dataset.unlabelled.is_empty() {
        return Err(invalid(format!(
            "dataset {:?} has no item without a human label ({} items, all labelled): there is nothing to estimate on",
            dataset.name,
            dataset.items.len()
        )));
    }
    let mut judges = Judges::new(&r, &options);
    let index: HashMap<&str, &Item> = r.item_index();
    let unlabelled: Vec<&Item<()>> = dataset.unlabelled.iter().collect();
    let shown = super::inputs(
        store,
        std::slice::from_ref(trial),
        &unlabelled,
        &mut judges,
        on_event,
    );
    let shown = shown.await?;
    check_ids(store, &r, (&index, &shown), trial, &dataset, &invalid).await?;
    let budget = Budget::start(store, &r, &row).await?;
    // Its calls are on unlabelled items, shown as `shown` has them.
    let no_cut = crate::inputs::Inputs::default();
    let repeats = r.experiment.sweep.repeats;
    let orders = trial.params.order.calls();
    let verdicts = dataset.unlabelled.len() * repeats as usize * orders.len();
    let total = verdicts * r.asked_apart(&trial.params).len();
    let run = Run {
        store,
        r: &r,
        options: &options,
        index: &index,
        inputs: &no_cut,
        total: total.into(),
        verdicts: verdicts.into(),
        budget,
        noted: Default::default(),
    };
    let done = store.done_keys(trial.id).await?;
    let todo: Vec<Call> = dataset
        .unlabelled
        .iter()
        .flat_map(|item| crate::calls::calls_of(&r, trial, shown.shown(&trial.params, item), &done))
        .collect();
    let already_done = total - todo.len();
    on_event(RunEvent::Started {
        experiment: row.name.clone(),
        resumed: already_done > 0,
        n_trials: 1,
        total,
        done: already_done,
        verdicts,
        pool: row.pool.clone(),
        n_judged_items: dataset.unlabelled.len(),
    });
    let mut tally = Tally {
        done: already_done,
        ..Tally::default()
    };
    judge_all(&run, &mut judges, vec![(trial, todo)], &mut tally, on_event).await?;
    Ok(UnlabelledRun {
        experiment: row.name.clone(),
        trial_id: trial.id,
        dataset: dataset.name.clone(),
        item_ids: dataset.unlabelled.iter().map(|i| i.id.clone()).collect(),
        imported,
        total,
        verdicts,
        already_done,
        judged_now: tally.judged_now,
        n_errors: tally.n_errors,
        interrupted: options.cancel.load(std::sync::atomic::Ordering::SeqCst),
        stopped_by: run.budget.reached(),
        failures: FailureCause::ranked(tally.errors),
    })
}

/// Another dataset, by name or file (imported if it is a file), of the experiment's task.
async fn other_dataset(
    store: &Store,
    r: &Resolved,
    name: &str,
    invalid: &dyn Fn(String) -> EngineError,
) -> Result<(Dataset, bool), EngineError> {
    let (info, imported) = match locate(Path::new("."), name) {
        Some(file) => {
            let imported = import_file(store, &file, &Default::default()).await?;
            (imported.dataset, !imported.already)
        }
        None => match store.dataset_by_name(name).await? {
            Some(info) => (info, false),
            None => {
                return Err(invalid(format!(
                    "dataset {name:?} is neither a file nor an imported dataset"
                )))
            }
        },
    };
    if info.task != r.dataset.task {
        return Err(invalid(format!(
            "dataset {:?} is {}, the experiment's dataset {:?} is {}: a trial's verdicts estimate only items of its own task",
            info.name,
            info.task.describe(),
            r.dataset.name,
            r.dataset.task.describe()
        )));
    }
    Ok((store.load_dataset(&info).await?, imported))
}

/// Refuses items whose id is that of another item the trial judged: a labelled item of the
/// experiment's dataset, or an item judged before under the same id with other text (from
/// another dataset). Their verdicts would be taken for each other's.
async fn check_ids(
    store: &Store,
    r: &Resolved,
    (index, shown): (&HashMap<&str, &Item>, &crate::inputs::Inputs<()>),
    trial: &Trial<'_>,
    dataset: &Dataset,
    invalid: &dyn Fn(String) -> EngineError,
) -> Result<(), EngineError> {
    if let Some(item) = dataset
        .unlabelled
        .iter()
        .find(|i| index.contains_key(i.id.as_str()))
    {
        return Err(invalid(format!(
            "dataset {:?}: item {:?} has the id of a labelled item of the experiment's dataset {:?}; give the items ids of their own",
            dataset.name, item.id, r.dataset.name
        )));
    }
    let stored: HashMap<(String, u32, bool), String> = store
        .verdicts(trial.id)
        .await?
        .into_iter()
        .map(|v| ((v.item_id, v.repeat, v.swapped), v.prompt_hash))
        .collect();
    let examples: Vec<&Item> = trial.examples.iter().map(|id| index[id.as_str()]).collect();
    let input = PromptInput {
        task: r.dataset.task,
        output: r.output,
        allow_tie: r.allow_tie(),
        template: trial.template,
        examples: &examples,
        rubric: Asking::of(trial.params.style, &r.rubric),
    };
    for item in &dataset.unlabelled {
        for &swapped in trial.params.order.calls() {
            let Some(hash) = stored.get(&(item.id.clone(), 0, swapped)) else {
                continue;
            };
            let messages = input.render(shown.shown(&trial.params, item).0, swapped)?;
            if judgelab_core::hash::prompt_hash(&messages) != *hash {
                return Err(invalid(format!(
                    "dataset {:?}: item {:?} has the id of an item this trial judged before with other text (from another dataset?); give the items ids of their own",
                    dataset.name, item.id
                )));
            }
        }
    }
    Ok(())
}
