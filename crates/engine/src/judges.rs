//! Which judge serves a model. By default local GGUF files load through llama.cpp and
//! remote models are called over an OpenAI-compatible API; tests plug in their own
//! [`JudgeLoader`]. The run itself only ever sees `core::Judge`.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use judgelab_core::experiment::{JudgeBackend, NamedJudge, RemoteJudge};
use judgelab_core::{Judge, Task};
use judgelab_llama::{LlamaJudge, LlamaOptions};
use judgelab_openai::{ApiKey, Endpoint, OpenAiJudge};

use crate::EngineError;

/// What local models compute on here: this build's CPU kernels, whether this CPU runs
/// them, and the devices llama.cpp sees (a GPU in a `cuda` or `metal` build).
pub fn local_compute() -> judgelab_llama::compute::Compute {
    judgelab_llama::compute::compute()
}

/// Checks that `path` is a readable GGUF file and returns its sha256.
pub fn check_model(path: &std::path::Path) -> Result<String, EngineError> {
    Ok(judgelab_llama::check_and_hash(path)?)
}

/// A judge of an experiment, resolved and checked, as its loader needs it.
#[derive(Debug, Clone, PartialEq)]
pub enum ModelSpec {
    Local(LocalModel),
    Remote(RemoteModel),
}

/// A GGUF file to load through llama.cpp.
#[derive(Debug, Clone, PartialEq)]
pub struct LocalModel {
    /// The judge's name.
    pub name: String,
    pub path: PathBuf,
    /// Empty when not known yet: the loader checks and hashes the file itself.
    pub sha256: String,
    pub gpu_layers: Option<u32>,
    pub context_size: u32,
    pub threads: Option<usize>,
    /// Sequences decoded together.
    pub parallel: usize,
    /// Whether the judge keeps its prompts' common prefix and decodes it once.
    pub share_prefix: bool,
}

/// A model served by an OpenAI-compatible endpoint.
#[derive(Debug, Clone, PartialEq)]
pub struct RemoteModel {
    /// The judge's name.
    pub name: String,
    pub judge: RemoteJudge,
    /// What the model's output must match (`response_format`), where asked for.
    pub response_format: Option<serde_json::Value>,
}

impl ModelSpec {
    /// What loads `judge`, a local one from the model file at `path` (whose sha256 is
    /// `sha256`, or empty when not known yet). `naive`: one sequence at a time, no shared
    /// prefix (the benchmark's baseline), as a `reproducible` judge always decodes.
    pub(crate) fn of(
        judge: &NamedJudge,
        path: &Path,
        sha256: &str,
        task: Task,
        allow_tie: bool,
        threads: Option<usize>,
        naive: bool,
    ) -> ModelSpec {
        match &judge.backend {
            JudgeBackend::Llama(local) => ModelSpec::Local(LocalModel {
                name: judge.name.clone(),
                path: path.to_path_buf(),
                sha256: sha256.to_string(),
                gpu_layers: local.gpu_layers,
                context_size: local.context_size,
                threads,
                parallel: if naive || local.reproducible {
                    1
                } else {
                    local.parallel
                },
                share_prefix: !(naive || local.reproducible),
            }),
            JudgeBackend::OpenAi(remote) => ModelSpec::Remote(RemoteModel {
                name: judge.name.clone(),
                judge: remote.clone(),
                response_format: remote.endpoint.json_schema.then(|| {
                    serde_json::json!({
                        "type": "json_schema",
                        "json_schema": {
                            "name": "verdict",
                            "schema": judgelab_core::verdict::json_schema(task, allow_tie),
                        },
                    })
                }),
            }),
        }
    }

    /// The judge's name.
    pub fn name(&self) -> &str {
        match self {
            ModelSpec::Local(m) => &m.name,
            ModelSpec::Remote(m) => &m.name,
        }
    }
}

/// Loads the judge for a model.
pub trait JudgeLoader: Send + Sync {
    fn load(&self, spec: &ModelSpec) -> Result<Arc<dyn Judge>, EngineError>;
}

/// GGUF files through llama.cpp, and remote models over HTTP.
#[derive(Debug, Clone, Copy, Default)]
pub struct LocalModels;

impl JudgeLoader for LocalModels {
    fn load(&self, spec: &ModelSpec) -> Result<Arc<dyn Judge>, EngineError> {
        let spec = match spec {
            ModelSpec::Remote(remote) => return Ok(Arc::new(openai_judge(remote)?)),
            ModelSpec::Local(spec) => spec,
        };
        let judge = LlamaJudge::load(LlamaOptions {
            name: spec.name.clone(),
            path: spec.path.clone(),
            gpu_layers: spec.gpu_layers,
            context_size: spec.context_size,
            threads: spec.threads,
            // Unknown (empty): the loader checks and hashes the file itself.
            sha256: (!spec.sha256.is_empty()).then(|| spec.sha256.clone()),
            parallel: spec.parallel,
            share_prefix: spec.share_prefix,
        })?;
        Ok(Arc::new(judge))
    }
}

/// The judge of a remote model, its key read from the environment or the keychain.
fn openai_judge(spec: &RemoteModel) -> Result<OpenAiJudge, EngineError> {
    let remote = &spec.judge.endpoint;
    let calls = &remote.calls;
    let mut endpoint = Endpoint::new(&spec.name, &remote.base_url, &spec.judge.model);
    endpoint.response_format = spec.response_format.clone();
    if let Some(env) = &calls.api_key_env {
        let key = std::env::var(env).map_err(|_| EngineError::Invalid {
            path: "judge.api_key_env".into(),
            message: format!("the environment variable {env} is not set"),
        })?;
        endpoint.api_key = Some(ApiKey::new(key));
        endpoint.key_source = format!("${env}");
    }
    if let Some(name) = &calls.api_key_keyring {
        endpoint.api_key = Some(ApiKey::new(crate::keys::read(name)?));
        endpoint.key_source = format!("the OS keychain's key {name:?}");
    }
    endpoint.pool = calls.pool.clone();
    endpoint.stream = calls.stream;
    endpoint.concurrency = calls.concurrency;
    endpoint.requests_per_minute = calls.requests_per_minute;
    endpoint.tokens_per_minute = calls.tokens_per_minute;
    endpoint.timeout = Duration::from_secs_f64(calls.timeout_s);
    endpoint.max_attempts = calls.max_attempts;
    endpoint.top_logprobs = remote.top_logprobs;
    endpoint.stop = remote.stop.clone();
    OpenAiJudge::new(endpoint).map_err(|e| EngineError::Judge(e.to_string()))
}
