//! The judges of one run, loaded on first use through the run's [`JudgeLoader`], one in
//! memory at a time: each trial names its judge, and its backend says how to load it. A
//! remote judge may also be loaded with another `concurrency`, to time calls at a load.

use std::collections::HashMap;
use std::sync::Arc;

use judgelab_core::Judge;

use super::interface::{RunEvent, RunOptions};
use crate::judges::{JudgeLoader, LocalModels, ModelSpec};
use crate::resolve::{Resolved, ResolvedJudge};
use crate::EngineError;

/// The judges of one run, loaded on first use; one model is held in memory at a time.
pub(crate) struct Judges<'r> {
    r: &'r Resolved,
    options: &'r RunOptions,
    /// By name, quantisation level and the `concurrency` it was loaded with, where not
    /// its own.
    loaded: HashMap<(String, &'static str, Option<usize>), Arc<dyn Judge>>,
    /// Remote judges whose server an earlier run found to serve one request at a time
    /// ([`Judges::learn`]): loaded with one call in flight.
    serial: std::collections::HashSet<String>,
    /// Those of them the run has said so of.
    told: std::collections::HashSet<String>,
}

impl<'r> Judges<'r> {
    pub(crate) fn new(r: &'r Resolved, options: &'r RunOptions) -> Self {
        Judges {
            r,
            options,
            loaded: HashMap::new(),
            serial: Default::default(),
            told: Default::default(),
        }
    }

    /// The experiment the judges are of.
    pub(crate) fn resolved(&self) -> &'r Resolved {
        self.r
    }

    /// The run's cancel flag.
    pub(crate) fn cancel(&self) -> &'r Arc<std::sync::atomic::AtomicBool> {
        &self.options.cancel
    }

    /// Reads what earlier runs found of the remote judges' servers: those that serve one
    /// request at a time are loaded at one.
    pub(crate) async fn learn(&mut self, store: &judgelab_store::Store) -> Result<(), EngineError> {
        for judge in &self.r.judges {
            if let Some(remote) = judge.remote().filter(|r| r.endpoint.calls.concurrency > 1) {
                if crate::server::one_at_a_time(store, remote).await? {
                    self.serial.insert(judge.name().to_string());
                }
            }
        }
        Ok(())
    }

    /// `judge`, loaded if it is not the one in memory.
    pub(crate) async fn get(
        &mut self,
        judge: &ResolvedJudge,
        on_event: &mut (dyn FnMut(RunEvent) + Send),
    ) -> Result<Arc<dyn Judge>, EngineError> {
        self.load(judge, None, on_event).await
    }

    /// Forgets the judges loaded: the next `get` loads afresh (a remote judge that a
    /// refused request has stopped calls again).
    pub(crate) fn unload(&mut self) {
        self.loaded.clear();
    }

    /// The remote `judge` keeping `concurrency` requests in flight.
    pub(crate) async fn at_load(
        &mut self,
        judge: &ResolvedJudge,
        concurrency: usize,
        on_event: &mut (dyn FnMut(RunEvent) + Send),
    ) -> Result<Arc<dyn Judge>, EngineError> {
        self.load(judge, Some(concurrency), on_event).await
    }

    async fn load(
        &mut self,
        resolved: &ResolvedJudge,
        concurrency: Option<usize>,
        on_event: &mut (dyn FnMut(RunEvent) + Send),
    ) -> Result<Arc<dyn Judge>, EngineError> {
        let key = (
            resolved.name().to_string(),
            resolved.level.name(),
            concurrency,
        );
        if let Some(judge) = self.loaded.get(&key) {
            return Ok(Arc::clone(judge));
        }
        self.loaded.clear();
        let r = self.r;
        let judge = &resolved.judge;
        // The same endpoint at another load is not news.
        if concurrency.is_none() {
            on_event(RunEvent::Loading {
                model: resolved.name().to_string(),
                path: match judge.remote() {
                    Some(remote) => match remote.endpoint.calls.pool.len() {
                        0 => format!("{} at {}", remote.model, remote.endpoint.base_url),
                        n => format!(
                            "{} at {} and {n} more endpoints",
                            remote.model, remote.endpoint.base_url
                        ),
                    },
                    None => resolved.path.display().to_string(),
                },
                local: judge.local().is_some(),
            });
        }
        let mut spec = ModelSpec::of(
            judge,
            &resolved.path,
            &resolved.sha256,
            r.dataset.task,
            r.allow_tie(),
            self.options.threads,
            self.options.naive,
        );
        if let (Some(concurrency), ModelSpec::Remote(remote)) = (concurrency, &mut spec) {
            remote.judge.endpoint.calls.concurrency = concurrency;
        }
        if let (None, ModelSpec::Remote(remote)) = (concurrency, &mut spec) {
            if self.serial.contains(resolved.name()) {
                remote.judge.endpoint.calls.concurrency = 1;
                // Said once a run, however often the judge is loaded again.
                if self.told.insert(resolved.name().to_string()) {
                    on_event(RunEvent::Note {
                        judge: resolved.name().to_string(),
                        message: "is served one request at a time (an earlier run found that a new request ends the stream in flight): its calls go one at a time".into(),
                    });
                }
            }
        }
        let loader: Arc<dyn JudgeLoader> = self
            .options
            .judges
            .clone()
            .unwrap_or_else(|| Arc::new(LocalModels));
        let judge = tokio::task::spawn_blocking(move || loader.load(&spec))
            .await
            .map_err(|e| EngineError::Judge(format!("loading panicked: {e}")))??;
        self.loaded.insert(key, Arc::clone(&judge));
        Ok(judge)
    }
}
