//! How llama.cpp is set up for a judge, shared by the worker, the batch decoder, the
//! sampler check (`draws`) and the build's floor (`bench`): the backend (initialised once
//! per process), the model's chat template applied and tokenised, the sampler chain of a
//! call, and the parameters of a context.

use std::num::NonZeroU32;
use std::sync::OnceLock;

use judgelab_core::{Message, Sampling};
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

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
