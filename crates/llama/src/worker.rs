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
    let info = ModelInfo {
        n_ctx: n_window,
        n_ctx_train,
        n_params: model.n_params(),
        gpu_layers: gpu_layers.min(model.n_layer()),
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
