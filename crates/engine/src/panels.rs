//! A stored experiment's panels: checked against its trials before a run judges anything
//! and before a summary composes them, and added or removed after the fact (`judgelab
//! panel`, the app's results view) without a model call or a change to its identity.

use judgelab_core::experiment::PanelSpec;
use judgelab_core::panel;
use judgelab_core::results::panel_specs;
use judgelab_core::Experiment;
use judgelab_store::{ExperimentRow, Store};

use crate::EngineError;

/// Every panel of `row` (its file's, then those added) composes from its trials: their
/// members are its trials, their rules fit its task.
pub async fn check(store: &Store, row: &ExperimentRow) -> Result<(), EngineError> {
    check_file(store, row, &row.experiment).await
}

/// As [`check`], with the panels of `experiment`, a file of the same experiment as `row`
/// about to replace its stored one.
pub async fn check_file(
    store: &Store,
    row: &ExperimentRow,
    experiment: &Experiment,
) -> Result<(), EngineError> {
    let specs = panel_specs(experiment, store.panels(row.id).await?);
    if specs.is_empty() {
        return Ok(());
    }
    check_specs(store, row, experiment, &specs).await
}

async fn check_specs(
    store: &Store,
    row: &ExperimentRow,
    experiment: &Experiment,
    specs: &[PanelSpec],
) -> Result<(), EngineError> {
    let task = task(store, row).await?;
    let trials = store.trials(row.id).await?;
    let ids: Vec<(i64, &judgelab_core::TrialParams)> =
        trials.iter().map(|t| (t.id, &t.params)).collect();
    for spec in specs {
        panel::check(spec, experiment, task, &ids).map_err(|message| EngineError::Panel {
            experiment: row.name.clone(),
            panel: spec.name.clone(),
            message,
        })?;
    }
    Ok(())
}

async fn task(store: &Store, row: &ExperimentRow) -> Result<judgelab_core::Task, EngineError> {
    store
        .datasets()
        .await?
        .into_iter()
        .find(|d| d.id == row.dataset_id)
        .map(|d| d.task)
        .ok_or_else(|| EngineError::UnknownExperiment(row.name.clone()))
}

async fn experiment(store: &Store, name: &str) -> Result<ExperimentRow, EngineError> {
    store
        .experiment_by_name(name)
        .await?
        .ok_or_else(|| EngineError::UnknownExperiment(name.to_string()))
}

/// Adds `spec` to the stored experiment `name` (or replaces the added panel of its name),
/// once it composes from the experiment's trials. A panel of the experiment's file is
/// changed in the file, not here.
pub async fn add(store: &Store, name: &str, spec: PanelSpec) -> Result<(), EngineError> {
    let row = experiment(store, name).await?;
    let invalid = |panel: &str, message: String| EngineError::Panel {
        experiment: row.name.clone(),
        panel: panel.to_string(),
        message,
    };
    let shown = spec.name.clone();
    let spec = spec
        .checked()
        .map_err(|(field, message)| invalid(&shown, format!("{field}: {message}")))?;
    if row.experiment.panels.iter().any(|p| p.name == spec.name) {
        return Err(invalid(
            &spec.name,
            "is declared in the experiment's file ([[panels]]): change it there, or add this one under another name".into(),
        ));
    }
    check_specs(store, &row, &row.experiment, std::slice::from_ref(&spec)).await?;
    store.save_panel(row.id, &spec).await?;
    Ok(())
}

/// Removes the added panel `panel` from the stored experiment `name`.
pub async fn remove(store: &Store, name: &str, panel: &str) -> Result<(), EngineError> {
    let row = experiment(store, name).await?;
    let invalid = |message: &str| EngineError::Panel {
        experiment: row.name.clone(),
        panel: panel.to_string(),
        message: message.to_string(),
    };
    if row.experiment.panels.iter().any(|p| p.name == panel) {
        return Err(invalid(
            "is declared in the experiment's file ([[panels]]): remove it there and run the file again",
        ));
    }
    if !store.delete_panel(row.id, panel).await? {
        return Err(invalid("is not a panel of this experiment"));
    }
    Ok(())
}
