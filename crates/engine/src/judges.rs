//! Which judge serves a model. By default local GGUF files load through llama.cpp; tests
//! (and later backends) plug in their own [`JudgeLoader`]. The run itself only ever sees
//! `core::Judge`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use judgelab_core::Judge;
use judgelab_llama::{LlamaJudge, LlamaOptions};

use crate::resolve::Resolved;
use crate::run::{RunEvent, RunOptions};
use crate::EngineError;

/// A model of an experiment, resolved and checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelSpec {
    /// As written in the experiment (`default`, a path).
    pub name: String,
    pub path: PathBuf,
    pub sha256: String,
    pub gpu_layers: Option<u32>,
    pub context_size: u32,
    pub threads: Option<usize>,
}

/// Loads the judge for a model.
pub trait JudgeLoader: Send + Sync {
    fn load(&self, spec: &ModelSpec) -> Result<Arc<dyn Judge>, EngineError>;
}

/// GGUF files through llama.cpp.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalModels;

impl JudgeLoader for LocalModels {
    fn load(&self, spec: &ModelSpec) -> Result<Arc<dyn Judge>, EngineError> {
        let judge = LlamaJudge::load(LlamaOptions {
            name: spec.name.clone(),
            path: spec.path.clone(),
            gpu_layers: spec.gpu_layers,
            context_size: spec.context_size,
            threads: spec.threads,
            sha256: Some(spec.sha256.clone()),
        })?;
        Ok(Arc::new(judge))
    }
}

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

    pub(crate) async fn get(
        &mut self,
        model: &str,
        on_event: &mut (dyn FnMut(RunEvent) + Send),
    ) -> Result<Arc<dyn Judge>, EngineError> {
        if let Some(judge) = self.loaded.get(model) {
            return Ok(Arc::clone(judge));
        }
        self.loaded.clear();
        let (_, path, sha256) = self
            .r
            .models
            .iter()
            .find(|(name, _, _)| name == model)
            .expect("trials only name models of the experiment");
        on_event(RunEvent::Loading {
            model: model.to_string(),
            path: path.display().to_string(),
        });
        let spec = ModelSpec {
            name: model.to_string(),
            path: path.clone(),
            sha256: sha256.clone(),
            gpu_layers: self.r.experiment.judge.gpu_layers,
            context_size: self.r.experiment.judge.context_size,
            threads: self.options.threads,
        };
        let loader: Arc<dyn JudgeLoader> = self
            .options
            .judges
            .clone()
            .unwrap_or_else(|| Arc::new(LocalModels));
        let judge = tokio::task::spawn_blocking(move || loader.load(&spec))
            .await
            .map_err(|e| EngineError::Judge(format!("loading panicked: {e}")))??;
        self.loaded.insert(model.to_string(), Arc::clone(&judge));
        Ok(judge)
    }
}
