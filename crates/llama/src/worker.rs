//! The worker thread: loads the llama.cpp model and context, then serves commands until
//! the channel closes (`decode` does the work). Nothing here panics on bad input; every
//! failure becomes a message.

use std::sync::{mpsc, Arc};

use judgelab_core::judge::Vocabulary;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use crate::decode::Session;
use crate::setup::{backend, chat_template, context_params};
use crate::{Command, LlamaOptions, ModelInfo, GPU_BUILD};

pub(crate) fn run(
    options: LlamaOptions,
    ready: mpsc::Sender<Result<(ModelInfo, Vocabulary), String>>,
    commands: mpsc::Receiver<Command>,
) {
    let backend = match backend() {
        Ok(b) => b,
        Err(e) => {
            let _ = ready.send(Err(e));
            return;
        }
    };
    let gpu_layers = options
        .gpu_layers
        .unwrap_or(if GPU_BUILD { u32::MAX / 2 } else { 0 });
    let params = LlamaModelParams::default().with_n_gpu_layers(gpu_layers);
    let model = match LlamaModel::load_from_file(backend, &options.path, &params) {
        Ok(m) => m,
        Err(e) => {
            let _ = ready.send(Err(e.to_string()));
            return;
        }
    };
    let n_ctx_train = model.n_ctx_train();
    let n_window = options.context_size.min(n_ctx_train.max(256));
    // Sequences decoded together share one unified cache; beyond one window it may hold a
    // second for the other sequences of a chunk (a chunk is cut to what fits). The cache
    // starts small and grows to what a batch needs (`Session::fit`): every cell is
    // allocated and cleared when a context is made, and judge prompts are mostly far
    // shorter than the model's window.
    let parallel = options.parallel.max(1);
    let max_cells = if parallel > 1 { 2 * n_window } else { n_window };
    let n_cells = max_cells.min(INITIAL_CELLS);
    let threads = options
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        as i32;
    let ctx = match model.new_context(backend, context_params(n_cells, parallel, threads)) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(format!(
                "cannot create a context of {n_cells} tokens: {e}"
            )));
            return;
        }
    };
    let (template, template_name) = chat_template(&model);
    let offloaded = gpu_layers.min(model.n_layer());
    let info = ModelInfo {
        n_ctx: n_window,
        n_ctx_train,
        n_params: model.n_params(),
        gpu_layers: offloaded,
        device: device(offloaded, model.n_layer()),
        chat_template: template_name,
    };
    if ready.send(Ok((info, vocabulary(&model)))).is_err() {
        return;
    }
    let mut session = Session {
        model: &model,
        backend,
        threads,
        ctx,
        template,
        batch: LlamaBatch::new(max_cells as usize, 1),
        n_window,
        n_cells,
        max_cells,
        parallel,
        share_prefix: options.share_prefix,
        prefix: Vec::new(),
    };
    while let Ok(command) = commands.recv() {
        match command {
            Command::Count { messages, reply } => {
                let _ = reply.send(session.tokens(&messages).map(|t| t.len()));
            }
            Command::Starts { text, reply } => {
                let _ = reply.send(token_starts(&model, &text));
            }
            Command::Batch {
                requests,
                cancel,
                reply,
            } => {
                session.run(requests, &cancel, &reply);
            }
        }
    }
}

/// Where each token of `text` starts, in bytes on char boundaries: its tokens' pieces laid
/// end to end. A tokeniser that adds a leading space (SentencePiece) has its first piece
/// one byte longer than the text's start; pieces that add up otherwise are scaled to the
/// text.
fn token_starts(model: &LlamaModel, text: &str) -> Vec<usize> {
    let vocab = model.vocab();
    let tokens = vocab.tokenize(text.as_bytes(), false, false);
    let mut at = 0;
    let mut starts = Vec::with_capacity(tokens.len());
    for &t in &tokens {
        starts.push(at);
        at += vocab.token_to_piece(t, false, None).len();
    }
    let extra = at.saturating_sub(text.len());
    starts
        .into_iter()
        .map(|s| {
            let s = match (extra, at == text.len()) {
                (_, true) => s,
                (1, _) => s.saturating_sub(1),
                _ => s * text.len() / at.max(1),
            };
            let mut s = s.min(text.len());
            while !text.is_char_boundary(s) {
                s -= 1;
            }
            s
        })
        .collect()
}

/// The cells a context starts with: enough for the benchmarks' and most judges' batches
/// (a few prompts of some hundred tokens), a few megabytes of cache for small models.
const INITIAL_CELLS: u32 = 2048;

/// Every token's text; end-of-generation tokens read as "" (the output they end is
/// empty).
fn vocabulary(model: &LlamaModel) -> Vocabulary {
    let vocab = model.vocab();
    let pieces = (0..model.n_vocab())
        .map(|id| {
            let token = LlamaToken(id);
            if vocab.is_eog(token) {
                String::new()
            } else {
                String::from_utf8_lossy(&vocab.token_to_piece(token, false, None)).into_owned()
            }
        })
        .collect();
    Arc::new(pieces)
}

/// Where a model with `offloaded` of its `n_layer` layers on the GPU computes: llama.cpp
/// offloads to its first GPU device; with none (a CPU build, or a GPU build on a machine
/// without the GPU or its driver) everything stays on the CPU.
fn device(offloaded: u32, n_layer: u32) -> String {
    let gpu = llama_cpp_2::list_llama_ggml_backend_devices()
        .into_iter()
        .find(|d| {
            matches!(
                d.device_type,
                llama_cpp_2::LlamaBackendDeviceType::Gpu
                    | llama_cpp_2::LlamaBackendDeviceType::IntegratedGpu
            )
        });
    match gpu {
        Some(gpu) if offloaded > 0 => format!(
            "{} {}: {offloaded} of {n_layer} layers",
            gpu.name,
            gpu.description.trim()
        ),
        _ => "CPU".to_string(),
    }
}
