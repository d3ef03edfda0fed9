//! The local judge: GGUF models through llama.cpp (`llama-cpp-2`, CPU, CUDA or Metal).
//!
//! One worker thread owns the backend's model and context; [`LlamaJudge`] sends it batches
//! of requests over a channel and streams each response back as soon as it is done. This
//! crate is the only one that links C++.
//!
//! Sampling follows llama.cpp's sampler chain: an optional grammar, then greedy at
//! temperature 0, or else top_p, then temperature, then a seeded draw (`dist`). A batch
//! shares its prompts' common prefix and decodes several sequences at once (`decode.rs`
//! says how, and what latency means for a call decoded with others).

pub mod bench;
pub mod compute;
mod decode;
pub mod draws;
mod logprobs;
pub mod quantize;
mod setup;
mod worker;

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;

use judgelab_core::judge::{CallError, ModelIdentity, Vocabulary};
use judgelab_core::{Judge, JudgeRequest, JudgeResponse, Message};
use sha2::{Digest, Sha256};

/// Whether this build offloads to a GPU (the `cuda` or `metal` feature).
pub const GPU_BUILD: bool = cfg!(any(feature = "cuda", feature = "metal"));

/// How to load a model.
#[derive(Debug, Clone)]
pub struct LlamaOptions {
    /// The name the user gave (`default`, a path).
    pub name: String,
    pub path: PathBuf,
    /// Layers to offload; default: all in a GPU build, none on CPU.
    pub gpu_layers: Option<u32>,
    /// Context window in tokens, capped at the model's training context.
    pub context_size: u32,
    /// CPU threads; default: all available cores.
    pub threads: Option<usize>,
    /// The file's sha256 when the caller has already checked it with [`check_and_hash`].
    pub sha256: Option<String>,
    /// Sequences decoded together in one batch.
    pub parallel: usize,
    /// Keep the prompts' common prefix in the cache and decode it once.
    pub share_prefix: bool,
}

impl LlamaOptions {
    /// The defaults for a model file: its whole window of 8,192 tokens (capped at the
    /// model's), all cores, 4 sequences at once, prefixes shared.
    pub fn new(name: impl Into<String>, path: impl Into<PathBuf>) -> LlamaOptions {
        LlamaOptions {
            name: name.into(),
            path: path.into(),
            gpu_layers: None,
            context_size: 8192,
            threads: None,
            sha256: None,
            parallel: 4,
            share_prefix: true,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum LlamaError {
    #[error("model file {path} does not exist (for the default model run `judgelab fetch-model`)")]
    Missing { path: String },
    #[error("model file {path} cannot be read")]
    Unreadable {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("model file {path} is not a GGUF file (it starts with {magic:?}, not \"GGUF\")")]
    NotGguf { path: String, magic: String },
    #[error(
        "model file {path} could not be loaded by llama.cpp: {message} (is the file complete?)"
    )]
    Load { path: String, message: String },
    #[error("llama.cpp worker: {0}")]
    Worker(String),
    #[error("cannot make {level} of {path}: {message}")]
    Quantize {
        path: String,
        level: &'static str,
        message: String,
    },
    #[error(transparent)]
    UnsupportedCpu(#[from] compute::UnsupportedCpu),
}

/// Facts about the loaded model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    pub n_ctx: u32,
    pub n_ctx_train: u32,
    pub n_params: u64,
    pub gpu_layers: u32,
    /// Where it computes: `CPU`, or the GPU and how many of the model's layers it holds.
    pub device: String,
    /// The model's own chat template, or `chatml` when the file has none.
    pub chat_template: String,
}

enum Command {
    Count {
        messages: Vec<Message>,
        reply: mpsc::Sender<Result<usize, String>>,
    },
    Starts {
        text: String,
        reply: mpsc::Sender<Vec<usize>>,
    },
    Batch {
        requests: Vec<JudgeRequest>,
        cancel: Arc<AtomicBool>,
        reply: mpsc::Sender<JudgeResponse>,
    },
}

/// A local GGUF model behind a worker thread.
pub struct LlamaJudge {
    identity: ModelIdentity,
    info: ModelInfo,
    vocabulary: Vocabulary,
    commands: Mutex<Option<mpsc::Sender<Command>>>,
    worker: Option<JoinHandle<()>>,
}

impl LlamaJudge {
    /// Checks the file, hashes it, then loads it on a new worker thread.
    pub fn load(options: LlamaOptions) -> Result<LlamaJudge, LlamaError> {
        compute::check()?;
        let sha256 = match &options.sha256 {
            Some(known) if options.path.is_file() => known.clone(),
            _ => check_and_hash(&options.path)?,
        };
        let (tx, rx) = mpsc::channel();
        let (ready_tx, ready_rx) = mpsc::channel();
        let worker_options = options.clone();
        let worker = std::thread::Builder::new()
            .name("llama-worker".into())
            .spawn(move || worker::run(worker_options, ready_tx, rx))
            .map_err(|e| LlamaError::Worker(format!("cannot start the worker thread: {e}")))?;
        let (info, vocabulary) = match ready_rx.recv() {
            Ok(Ok(loaded)) => loaded,
            Ok(Err(message)) => {
                let _ = worker.join();
                return Err(LlamaError::Load {
                    path: options.path.display().to_string(),
                    message,
                });
            }
            Err(_) => {
                let _ = worker.join();
                return Err(LlamaError::Worker(
                    "the worker stopped while loading".into(),
                ));
            }
        };
        Ok(LlamaJudge {
            identity: ModelIdentity {
                name: options.name,
                location: options.path.display().to_string(),
                sha256: Some(sha256),
            },
            info,
            vocabulary,
            commands: Mutex::new(Some(tx)),
            worker: Some(worker),
        })
    }

    pub fn info(&self) -> &ModelInfo {
        &self.info
    }

    fn send(&self, command: Command) -> Result<(), String> {
        let guard = self
            .commands
            .lock()
            .map_err(|_| "worker channel poisoned".to_string())?;
        guard
            .as_ref()
            .ok_or("the worker has stopped")?
            .send(command)
            .map_err(|_| "the llama.cpp worker has stopped".to_string())
    }
}

impl Judge for LlamaJudge {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    fn vocabulary(&self) -> Option<Vocabulary> {
        Some(Arc::clone(&self.vocabulary))
    }

    fn device(&self) -> Option<String> {
        Some(self.info.device.clone())
    }

    fn count_tokens(&self, messages: &[Message]) -> Result<usize, String> {
        let (reply, rx) = mpsc::channel();
        self.send(Command::Count {
            messages: messages.to_vec(),
            reply,
        })?;
        rx.recv()
            .map_err(|_| "the llama.cpp worker has stopped".to_string())?
    }

    fn token_starts(&self, text: &str) -> Result<Vec<usize>, String> {
        let (reply, rx) = mpsc::channel();
        self.send(Command::Starts {
            text: text.to_string(),
            reply,
        })?;
        rx.recv()
            .map_err(|_| "the llama.cpp worker has stopped".to_string())
    }

    fn judge_batch(
        &self,
        requests: Vec<JudgeRequest>,
        cancel: &Arc<AtomicBool>,
        on_response: &mut dyn FnMut(JudgeResponse),
    ) {
        let keys: Vec<usize> = requests.iter().map(|r| r.key).collect();
        let (reply, rx) = mpsc::channel();
        if let Err(message) = self.send(Command::Batch {
            requests,
            cancel: Arc::clone(cancel),
            reply,
        }) {
            for key in keys {
                on_response(JudgeResponse {
                    key,
                    result: Err(CallError::untried(message.clone())),
                });
            }
            return;
        }
        for response in rx {
            on_response(response);
        }
    }
}

impl Drop for LlamaJudge {
    fn drop(&mut self) {
        if let Ok(mut guard) = self.commands.lock() {
            guard.take();
        }
        if let Some(worker) = self.worker.take() {
            let _ = worker.join();
        }
    }
}

/// Checks that `path` is a readable GGUF file and returns its sha256.
pub fn check_and_hash(path: &Path) -> Result<String, LlamaError> {
    let shown = path.display().to_string();
    if !path.is_file() {
        return Err(LlamaError::Missing { path: shown });
    }
    let unreadable = |source| LlamaError::Unreadable {
        path: shown.clone(),
        source,
    };
    let mut file = File::open(path).map_err(unreadable)?;
    let mut magic = [0u8; 4];
    let n = file.read(&mut magic).map_err(unreadable)?;
    if &magic[..n] != b"GGUF" {
        return Err(LlamaError::NotGguf {
            path: shown.clone(),
            magic: String::from_utf8_lossy(&magic[..n]).into_owned(),
        });
    }
    let mut hasher = Sha256::new();
    hasher.update(&magic[..n]);
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(unreadable)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}
