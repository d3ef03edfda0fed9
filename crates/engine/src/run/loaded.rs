//! The judges of one run, loaded on first use through the run's [`JudgeLoader`], one in
//! memory at a time: each trial names its judge, and its backend says how to load it.

use std::collections::HashMap;
use std::sync::Arc;

use judgelab_core::experiment::JudgeBackend;
use judgelab_core::Judge;

use super::interface::{RunEvent, RunOptions};
use crate::judges::{JudgeLoader, LocalModel, LocalModels, ModelSpec, RemoteModel};
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
        let spec = match &r.judge(name).backend {
            JudgeBackend::Llama(local) => {
                let (path, sha256) = r.model_file(name);
                on_event(RunEvent::Loading {
                    model: name.to_string(),
                    path: path.display().to_string(),
                    local: true,
                });
                ModelSpec::Local(LocalModel {
                    name: name.to_string(),
                    path: path.clone(),
                    sha256: sha256.clone(),
                    gpu_layers: local.gpu_layers,
                    context_size: local.context_size,
                    threads: self.options.threads,
                    parallel: if self.options.naive {
                        1
                    } else {
                        local.parallel
                    },
                    share_prefix: !self.options.naive,
                })
            }
            JudgeBackend::OpenAi(remote) => {
                on_event(RunEvent::Loading {
                    model: name.to_string(),
                    path: format!("{} at {}", remote.model, remote.endpoint.base_url),
                    local: false,
                });
                ModelSpec::Remote(RemoteModel {
                    name: name.to_string(),
                    judge: remote.clone(),
                    response_format: remote.endpoint.json_schema.then(|| {
                        serde_json::json!({
                            "type": "json_schema",
                            "json_schema": {
                                "name": "verdict",
                                "schema": judgelab_core::verdict::json_schema(r.dataset.task, r.allow_tie()),
                            },
                        })
                    }),
                })
            }
        };
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
