//! The worker thread: loads the llama.cpp model and context, then serves commands until
//! the channel closes (`decode` does the work). Nothing here panics on bad input; every
//! failure becomes a message.

use std::num::NonZeroU32;
use std::sync::{mpsc, Arc, OnceLock};

use judgelab_core::judge::Vocabulary;
use judgelab_core::{Message, Sampling};
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

use crate::decode::Session;
use crate::{Command, LlamaOptions, ModelInfo, GPU_BUILD};

/// The sampler chain of a call: greedy at temperature 0, else top_p, then temperature,
/// then a seeded draw (the order `judgelab_core::sampling` computes exactly). A grammar,
/// when given, comes first: it removes the tokens it does not admit before the rest sees
/// them.
pub(crate) fn sampler(
    model: &LlamaModel,
    s: &Sampling,
    grammar: Option<&str>,
) -> Result<LlamaSampler, String> {
    let mut chain = Vec::new();
    if let Some(grammar) = grammar {
        chain.push(
            LlamaSampler::grammar(model, grammar, "root")
                .map_err(|e| format!("llama.cpp rejects the grammar: {e}"))?,
        );
    }
    if s.temperature <= 0.0 {
        chain.push(LlamaSampler::greedy());
    } else {
        chain.extend([
            LlamaSampler::top_p(s.top_p as f32, 1),
            LlamaSampler::temp(s.temperature as f32),
            LlamaSampler::dist(s.seed),
        ]);
    }
    Ok(LlamaSampler::chain_simple(chain))
}

/// The model's own chat template, or `chatml` when the file has none, and its name.
pub(crate) fn chat_template(model: &LlamaModel) -> (LlamaChatTemplate, String) {
    match model.chat_template(None) {
        Ok(t) => {
            let name = t.to_string().unwrap_or_else(|_| "model".into());
            (t, name)
        }
        Err(_) => (
            LlamaChatTemplate::new("chatml").expect("static template name"),
            "chatml".to_string(),
        ),
    }
}

/// The messages wrapped in the chat template, tokenised.
pub(crate) fn chat_tokens(
    model: &LlamaModel,
    template: &LlamaChatTemplate,
    messages: &[Message],
) -> Result<Vec<LlamaToken>, String> {
    let chat = messages
        .iter()
        .map(|m| LlamaChatMessage::new(m.role.clone(), m.content.clone()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("invalid message: {e}"))?;
    let prompt = model
        .apply_chat_template(template, &chat, true)
        .map_err(|e| format!("cannot apply the chat template: {e}"))?;
    Ok(model.vocab().tokenize(prompt.as_bytes(), true, true))
}

/// llama.cpp's backend may be initialised once per process; every worker shares it. On a
/// CPU without this build's instructions it is never initialised (`compute::check`).
pub(crate) fn backend() -> Result<&'static LlamaBackend, String> {
    crate::compute::check().map_err(|e| e.to_string())?;
    static BACKEND: OnceLock<Result<LlamaBackend, String>> = OnceLock::new();
    BACKEND
        .get_or_init(|| {
            llama_cpp_2::send_logs_to_tracing(
                llama_cpp_2::LogOptions::default().with_logs_enabled(false),
            );
            LlamaBackend::init().map_err(|e| format!("cannot initialise llama.cpp: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

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

/// A context of `n_cells` cells (also the most tokens one decode takes) for `parallel`
/// sequences and the shared prefix's.
pub(crate) fn context_params(n_cells: u32, parallel: usize, threads: i32) -> LlamaContextParams {
    LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_cells))
        .with_n_batch(n_cells)
        .with_n_seq_max(parallel as u32 + 1)
        .with_kv_unified(true)
        .with_n_threads(threads)
        .with_n_threads_batch(threads)
}

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
