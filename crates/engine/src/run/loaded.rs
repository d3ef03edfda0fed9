//! The judges of one run, loaded on first use through the run's [`JudgeLoader`], one in
//! memory at a time: each trial names its judge, and its backend says how to load it. A
//! remote judge may also be loaded with another `concurrency`, to time calls at a load.

use std::collections::HashMap;
use std::sync::Arc;

use judgelab_core::Judge;

use super::interface::{RunEvent, RunOptions};
use crate::judges::{JudgeLoader, LocalModels, ModelSpec};
use crate::resolve::Resolved;
use crate::EngineError;

/// The judges of one run, loaded on first use; one model is held in memory at a time.
pub(crate) struct Judges<'r> {
    r: &'r Resolved,
    options: &'r RunOptions,
    /// By name and the `concurrency` it was loaded with, where not its own.
    loaded: HashMap<(String, Option<usize>), Arc<dyn Judge>>,
}

impl<'r> Judges<'r> {
    pub(crate) fn new(r: &'r Resolved, options: &'r RunOptions) -> Self {
        Judges {
            r,
            options,
            loaded: HashMap::new(),
        }
    }

    /// The judge named `name`, loaded if it is not the one in memory.
    pub(crate) async fn get(
        &mut self,
        name: &str,
        on_event: &mut (dyn FnMut(RunEvent) + Send),
    ) -> Result<Arc<dyn Judge>, EngineError> {
        self.load(name, None, on_event).await
    }

    /// The remote judge named `name` keeping `concurrency` requests in flight.
    pub(crate) async fn at_load(
        &mut self,
        name: &str,
        concurrency: usize,
        on_event: &mut (dyn FnMut(RunEvent) + Send),
    ) -> Result<Arc<dyn Judge>, EngineError> {
        self.load(name, Some(concurrency), on_event).await
    }

    async fn load(
        &mut self,
        name: &str,
        concurrency: Option<usize>,
        on_event: &mut (dyn FnMut(RunEvent) + Send),
    ) -> Result<Arc<dyn Judge>, EngineError> {
        let key = (name.to_string(), concurrency);
        if let Some(judge) = self.loaded.get(&key) {
            return Ok(Arc::clone(judge));
        }
        self.loaded.clear();
        let r = self.r;
        let judge = r.judge(name);
        let (path, sha256) = r.model_file(name);
        // The same endpoint at another load is not news.
        if concurrency.is_none() {
            on_event(RunEvent::Loading {
                model: name.to_string(),
                path: match judge.remote() {
                    Some(remote) => match remote.endpoint.calls.pool.len() {
                        0 => format!("{} at {}", remote.model, remote.endpoint.base_url),
                        n => format!(
                            "{} at {} and {n} more endpoints",
                            remote.model, remote.endpoint.base_url
                        ),
                    },
                    None => path.display().to_string(),
                },
                local: judge.local().is_some(),
            });
        }
        let mut spec = ModelSpec::of(
            judge,
            path,
            sha256,
            r.dataset.task,
            r.allow_tie(),
            self.options.threads,
            self.options.naive,
        );
        if let (Some(concurrency), ModelSpec::Remote(remote)) = (concurrency, &mut spec) {
            remote.judge.endpoint.calls.concurrency = concurrency;
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
