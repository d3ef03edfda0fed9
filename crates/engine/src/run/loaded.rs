//! The judges of one run, loaded on first use through the run's [`JudgeLoader`], one in
//! memory at a time: each trial names its judge, and its backend says how to load it.

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
    loaded: HashMap<String, Arc<dyn Judge>>,
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
        if let Some(judge) = self.loaded.get(name) {
            return Ok(Arc::clone(judge));
        }
        self.loaded.clear();
        let r = self.r;
        let judge = r.judge(name);
        let (path, sha256) = r.model_file(name);
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
        let spec = ModelSpec::of(
            judge,
            path,
            sha256,
            r.dataset.task,
            r.allow_tie(),
            self.options.threads,
            self.options.naive,
        );
        let loader: Arc<dyn JudgeLoader> = self
            .options
            .judges
            .clone()
            .unwrap_or_else(|| Arc::new(LocalModels));
        let judge = tokio::task::spawn_blocking(move || loader.load(&spec))
            .await
            .map_err(|e| EngineError::Judge(format!("loading panicked: {e}")))??;
        self.loaded.insert(name.to_string(), Arc::clone(&judge));
        Ok(judge)
    }
}
