//! What the app holds between commands: the store, the folder beside it where the app keeps
//! experiment files and templates, the runs going on, and the last summary computed (opening
//! a verdict must not recompute every metric).

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
    /// The last summary, by (experiment, bootstrap resamples, verdicts stored).
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

#[derive(Debug, Clone, PartialEq)]
pub struct SummaryKey {
    pub experiment: String,
    pub resamples: u32,
    pub n_verdicts: usize,
    /// A new load ramp changes the summary as a new verdict does.
    pub n_ramps: usize,
    /// So does the experiment's file (its `[trust]`, its `[[panels]]`) and an added panel.
    pub spec: String,
    pub panels: Vec<judgelab_core::experiment::PanelSpec>,
    /// The labels the metrics are against, and every label given in the queue.
    pub labels: judgelab_core::annotation::Labels,
    pub annotations: Vec<judgelab_core::annotation::Annotation>,
    /// The criterion the results are read on; none: the item's one label.
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
