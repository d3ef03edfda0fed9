//! What the app holds between commands: the store, the folder beside it where the app keeps
//! experiment files and templates, the runs going on, the last experiment read and the last
//! summary computed from it (the view with intervals must not read a million verdicts
//! again, nor opening a verdict recompute every metric).

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use judgelab_core::results::ExperimentSummary;
use judgelab_core::Dataset;
use judgelab_store::Store;

use crate::error::{AppError, AppResult};

pub struct AppState {
    pub store: Store,
    /// The folder of the database: `experiments/`, `templates/` and `judges.json` live here.
    pub home: PathBuf,
    pub runs: Mutex<HashMap<String, Run>>,
    /// The last experiment read, by what it read.
    pub opened: tokio::sync::Mutex<Option<(OpenedKey, Arc<judgelab_engine::Opened>)>>,
    /// The last summary, by what it was read from and how it was computed.
    pub summary: tokio::sync::Mutex<Option<(SummaryKey, Arc<ExperimentSummary>)>>,
    /// Datasets loaded for browsing, by name.
    pub datasets: tokio::sync::Mutex<HashMap<String, Arc<Dataset>>>,
    /// Whose labels each experiment's results are against, as chosen in the Results view
    /// (an experiment not here: its dataset's own).
    pub labels: Mutex<HashMap<String, judgelab_core::annotation::Labels>>,
    /// The criterion each experiment's results are read on, as chosen in the Results view
    /// (an experiment not here: each verdict's aggregate, on the item's label).
    pub criteria: Mutex<HashMap<String, String>>,
    /// The model that counts a template preview's tokens, kept loaded between previews.
    pub tokens: Arc<judgelab_engine::templates::TokenCounter>,
}

/// What an experiment's reading holds: a new verdict, a failed call judged again, a load
/// ramp, a panel, a label given in the queue or an edit of its file makes it stale.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenedKey {
    pub experiment: String,
    /// Its verdict rows and, of those, its failed calls (a failed call judged again
    /// replaces its row).
    pub verdicts: (usize, usize),
    pub n_ramps: usize,
    /// Its file (its `[trust]`, its `[[panels]]`), and the panels added to it.
    pub spec: String,
    pub panels: Vec<judgelab_core::experiment::PanelSpec>,
    pub annotations: Vec<judgelab_core::annotation::Annotation>,
}

/// What a summary is of: a reading, the bootstrap resamples its intervals draw, the labels
/// the metrics are against, and the criterion the results are read on (none: the item's
/// one label).
#[derive(Debug, Clone, PartialEq)]
pub struct SummaryKey {
    pub opened: OpenedKey,
    pub resamples: u32,
    pub labels: judgelab_core::annotation::Labels,
    pub criterion: Option<String>,
}

/// A run in its own thread.
pub struct Run {
    pub cancel: Arc<AtomicBool>,
    pub thread: Option<JoinHandle<()>>,
}

impl AppState {
    pub fn experiments_dir(&self) -> PathBuf {
        self.home.join("experiments")
    }

    pub fn templates_dir(&self) -> PathBuf {
        self.home.join("templates")
    }

    pub fn judges_file(&self) -> PathBuf {
        self.home.join("judges.json")
    }

    pub fn is_running(&self, name: &str) -> bool {
        let runs = self.runs.lock().expect("runs lock");
        runs.get(name)
            .and_then(|r| r.thread.as_ref())
            .is_some_and(|t| !t.is_finished())
    }

    /// Registers a run; refused while another run of the same experiment goes on.
    pub fn begin_run(&self, name: &str, cancel: Arc<AtomicBool>) -> AppResult<()> {
        let mut runs = self.runs.lock().expect("runs lock");
        if runs
            .get(name)
            .and_then(|r| r.thread.as_ref())
            .is_some_and(|t| !t.is_finished())
        {
            return Err(AppError::new(
                crate::error::ErrorCode::AlreadyRunning,
                format!("{name:?} is already running"),
            ));
        }
        runs.insert(
            name.to_string(),
            Run {
                cancel,
                thread: None,
            },
        );
        Ok(())
    }

    pub fn attach_thread(&self, name: &str, thread: JoinHandle<()>) {
        if let Some(run) = self.runs.lock().expect("runs lock").get_mut(name) {
            run.thread = Some(thread);
        }
    }

    /// Asks a run to stop after the calls in flight; false when none is going.
    pub fn stop_run(&self, name: &str) -> bool {
        let runs = self.runs.lock().expect("runs lock");
        match runs.get(name) {
            Some(run) if run.thread.as_ref().is_some_and(|t| !t.is_finished()) => {
                run.cancel.store(true, Ordering::SeqCst);
                true
            }
            _ => false,
        }
    }

    /// Stops every run and waits (up to `patience`) for the calls in flight to be recorded:
    /// closing the window loses nothing, and a later run resumes where this one stopped.
    pub fn stop_all(&self, patience: Duration) {
        let threads: Vec<JoinHandle<()>> = {
            let mut runs = self.runs.lock().expect("runs lock");
            runs.values_mut()
                .filter_map(|r| {
                    r.cancel.store(true, Ordering::SeqCst);
                    r.thread.take()
                })
                .collect()
        };
        let deadline = Instant::now() + patience;
        for t in threads {
            while !t.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if t.is_finished() {
                let _ = t.join();
            }
        }
    }
}
