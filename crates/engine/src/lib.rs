//! Runs Judgelab experiments: resolves an experiment file into validated parts, expands its
//! sweep, calls the judge in batches, persists every verdict as it arrives, and summarises
//! stored trials into metrics.
//!
//! This is the surface the CLI (and later the desktop shell) use. It calls judges only
//! through `core::Judge`; `judges::LocalModels` is where it loads GGUF files through llama.cpp.

pub mod align;
pub mod bench;
mod calls;
mod card;
pub mod default_model;
pub mod estimate;
mod exact;
mod inputs;
mod judges;
pub mod keys;
pub mod labels;
pub mod load;
pub mod panels;
mod plan;
mod progress;
mod prompt;
mod resolve;
mod run;
mod server;
mod summaries;
mod summary;
pub mod templates;
mod variants;

use std::path::{Path, PathBuf};

use judgelab_core::dataset::{self, DatasetError, ImportOptions};
use judgelab_core::experiment::ExperimentError;
use judgelab_core::split::SplitError;
use judgelab_core::template::TemplateError;
use judgelab_llama::LlamaError;
use judgelab_store::{DatasetInfo, Store, StoreError};

pub use card::export_judge;
pub use judgelab_llama::compute::{Compute, Device, UnsupportedCpu};
pub use judges::{
    check_model, local_compute, JudgeLoader, LocalModel, LocalModels, ModelSpec, RemoteModel,
};
pub use plan::{plan, Plan, RacePlan, TimingPlan};
pub use progress::Progress;
pub use prompt::{verdict_prompt, RenderedPrompt};
pub use run::{
    judge_unlabelled, run_experiment, FailureCause, RunEvent, RunOptions, RunSummary,
    UnlabelledRequest, UnlabelledRun, DEFAULT_TIMED_CALLS,
};
pub use summary::{open, summarize, summarize_against, Opened};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Dataset(#[from] DatasetError),
    #[error(transparent)]
    Experiment(#[from] ExperimentError),
    #[error(transparent)]
    Template(#[from] TemplateError),
    #[error("{path}: {message}")]
    Invalid { path: String, message: String },
    #[error("{0}")]
    Split(#[from] SplitError),
    #[error(transparent)]
    Results(#[from] judgelab_core::results::ResultsError),
    #[error("cannot read {path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Model(#[from] LlamaError),
    #[error("experiment {name:?} already exists with different content ({n_verdicts} verdicts stored); rename the experiment, or run with --replace to discard them")]
    Changed { name: String, n_verdicts: usize },
    #[error("the default model {path} has sha256 {sha256}, not {expected}: the file is damaged or another model; delete it and run `judgelab fetch-model` to fetch it again", expected = judgelab_core::DEFAULT_MODEL_SHA256)]
    DefaultModelChanged { path: String, sha256: String },
    #[error("cannot fetch the default model: {what}; or put {file} (sha256 {sha}) in {dir} by hand", file = judgelab_core::DEFAULT_MODEL_FILE, sha = judgelab_core::DEFAULT_MODEL_SHA256)]
    FetchModel { what: String, dir: String },
    #[error("no experiment named {0:?} in this database")]
    UnknownExperiment(String),
    #[error("experiment {experiment:?}: panel {panel:?}: {message}")]
    Panel {
        experiment: String,
        panel: String,
        message: String,
    },
    #[error(transparent)]
    Annotation(#[from] judgelab_core::annotation::AnnotationError),
    #[error("the judge failed: {0}")]
    Judge(String),
    /// The OS keychain could not be opened, read or written.
    #[error("{0}")]
    Keychain(String),
}

impl EngineError {
    /// A local model file that is not there (the default model: not fetched yet).
    pub fn is_missing_model(&self) -> bool {
        matches!(self, EngineError::Model(LlamaError::Missing { .. }))
    }

    /// The default model is not in the model cache yet: `default_model::fetch` puts it there.
    pub fn is_missing_default_model(&self) -> bool {
        matches!(self, EngineError::Model(LlamaError::Missing { path })
            if default_model::is_default_path(std::path::Path::new(path)))
    }

    /// This CPU lacks the instructions the local judge's kernels were built for.
    pub fn is_unsupported_cpu(&self) -> bool {
        matches!(self, EngineError::Model(LlamaError::UnsupportedCpu(_)))
    }

    /// A run of the experiment is already going, in this process or another.
    pub fn is_already_running(&self) -> bool {
        matches!(self, EngineError::Store(StoreError::Running { .. }))
    }

    /// True when the user's input is at fault (a bad file, key or value), or what they asked
    /// for waits on them (the experiment is already running), as opposed to the machine or
    /// the model: the CLI exits with code 2 for these.
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self,
            EngineError::Dataset(_)
                | EngineError::Experiment(_)
                | EngineError::Template(_)
                | EngineError::Invalid { .. }
                | EngineError::Split(_)
                | EngineError::Results(_)
                | EngineError::Changed { .. }
                | EngineError::UnknownExperiment(_)
                | EngineError::Panel { .. }
                | EngineError::Annotation(_)
        ) || matches!(
            self,
            EngineError::Store(StoreError::NameTaken { .. } | StoreError::Running { .. })
        ) || matches!(self, EngineError::Io { source, .. } if source.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Where the default model lives: `<user cache>/judgelab/models/<file>`.
pub fn default_model_path() -> PathBuf {
    dirs::cache_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("judgelab")
        .join("models")
        .join(judgelab_core::DEFAULT_MODEL_FILE)
}

/// The default database: `<user data>/judgelab/judgelab.sqlite`.
pub fn default_db_path() -> PathBuf {
    dirs::data_dir()
        .unwrap_or_else(std::env::temp_dir)
        .join("judgelab")
        .join("judgelab.sqlite")
}

/// The stored experiment `name` and its dataset's row.
pub(crate) async fn stored_experiment(
    store: &Store,
    name: &str,
) -> Result<(judgelab_store::ExperimentRow, DatasetInfo), EngineError> {
    let row = store
        .experiment_by_name(name)
        .await?
        .ok_or_else(|| EngineError::UnknownExperiment(name.to_string()))?;
    let info = store
        .datasets()
        .await?
        .into_iter()
        .find(|d| d.id == row.dataset_id)
        .ok_or_else(|| EngineError::UnknownExperiment(name.to_string()))?;
    Ok((row, info))
}

/// The result of an import.
#[derive(Debug, Clone)]
pub struct Imported {
    pub dataset: DatasetInfo,
    /// The same content was imported before: nothing was written.
    pub already: bool,
}

/// Imports a dataset file: read as a stream, each row validated and written as it is read
/// (the file is never held whole), all in one transaction kept only if every row is valid.
/// Importing the same content again is a no-op.
pub async fn import_file(
    store: &Store,
    path: &Path,
    options: &ImportOptions,
) -> Result<Imported, EngineError> {
    let shown = path.display().to_string();
    let path = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let io = |source| EngineError::Io {
        path: shown.clone(),
        source,
    };
    let file = std::fs::File::open(&path).map_err(io)?;
    let content_hash = dataset::content_hash_of(file, options.mapping.as_ref()).map_err(io)?;
    if let Some(dataset) = store.dataset_by_hash(&content_hash).await? {
        return Ok(Imported {
            dataset,
            already: true,
        });
    }
    let name = dataset::name(&shown, options)?;
    let source = path.display().to_string();
    let mapping = options.mapping.as_ref().map(|m| m.to_toml());
    let mut writer = store
        .begin_dataset(&name, &source, &content_hash, mapping.as_deref())
        .await?;
    // Read on a thread of its own, written here as it comes: parsing and SQLite overlap.
    let (send, mut items) = tokio::sync::mpsc::channel(1024);
    let options = options.clone();
    let reading = tokio::task::spawn_blocking(move || {
        dataset::read(&shown, dataset::Source::File(&path), &options, |item| {
            send.blocking_send(item).is_ok()
        })
    });
    let mut written = Ok(());
    while let Some(item) = items.recv().await {
        written = writer.push(item).await;
        if written.is_err() {
            break;
        }
    }
    drop(items);
    let read = reading.await.expect("the reading thread does not panic");
    written?;
    let dataset = writer.commit(&read?).await?;
    Ok(Imported {
        dataset,
        already: false,
    })
}
