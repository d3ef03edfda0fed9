//! The floor of prompt decoding in this build: a plain llama.cpp loop over whole prompts,
//! one sequence on a cleared cache (as llama-bench measures prompt processing), no engine
//! and no store. `judgelab bench` divides the least work a sweep needs by this speed, and
//! by the speed of the same loop over llama.cpp built for this machine's own instruction
//! set (`floor/floor.cpp`, the hardware's floor), which reads the token ids this loop
//! decoded.

use std::num::NonZeroU32;
use std::path::Path;
use std::time::Instant;

use judgelab_core::Message;
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;

use crate::setup::{backend, chat_template, chat_tokens};

/// Prompt tokens decoded and the seconds the decodes took (tokenising and the warm-up
/// excluded).
#[derive(Debug, Clone, PartialEq)]
pub struct Prefill {
    pub tokens: usize,
    pub seconds: f64,
    /// The tokens every prompt starts with (their longest common prefix).
    pub shared_prefix: usize,
    /// Each prompt's token ids, in the model's chat template.
    pub token_ids: Vec<Vec<i32>>,
}

impl Prefill {
    pub fn tokens_per_second(&self) -> f64 {
        self.tokens as f64 / self.seconds.max(1e-9)
    }
}

/// Decodes each prompt whole, on a cleared cache, with the model at `path` on `threads`
/// CPU threads (default: all cores). The first prompt is decoded once untimed first, so
/// that one-off costs (buffers, threads, weight repacking) are not counted.
pub fn plain_prefill(
    path: &Path,
    prompts: &[Vec<Message>],
    threads: Option<usize>,
) -> Result<Prefill, String> {
    let backend = backend()?;
    let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
        .map_err(|e| e.to_string())?;
    let (template, _) = chat_template(&model);
    let all = prompts
        .iter()
        .map(|messages| chat_tokens(&model, &template, messages))
        .collect::<Result<Vec<_>, _>>()?;
    let first = all.first().ok_or("no prompt to decode")?;
    let longest = all.iter().map(Vec::len).max().unwrap_or(1).max(1) as u32;
    let threads = threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        as i32;
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(longest + 16))
        .with_n_batch(longest + 16)
        .with_n_threads(threads)
        .with_n_threads_batch(threads);
    let mut ctx = model
        .new_context(backend, params)
        .map_err(|e| e.to_string())?;
    let mut batch = LlamaBatch::new(longest as usize + 16, 1);
    let mut seconds = 0.0;
    for (i, tokens) in std::iter::once(first).chain(&all).enumerate() {
        ctx.clear_kv_cache();
        batch.clear();
        for (pos, &token) in tokens.iter().enumerate() {
            batch
                .add(token, pos as i32, &[0], pos + 1 == tokens.len())
                .map_err(|e| e.to_string())?;
        }
        let start = Instant::now();
        ctx.decode(&mut batch).map_err(|e| e.to_string())?;
        // Reading the logits waits for the decode to finish on every backend.
        let _ = ctx.get_logits_ith(batch.n_tokens() - 1)[0];
        if i > 0 {
            seconds += start.elapsed().as_secs_f64();
        }
    }
    let shared_prefix = all.iter().skip(1).fold(first.len(), |n, t| {
        n.min(first.iter().zip(t).take_while(|(a, b)| a == b).count())
    });
    Ok(Prefill {
        tokens: all.iter().map(Vec::len).sum(),
        seconds,
        shared_prefix,
        token_ids: all
            .iter()
            .map(|tokens| tokens.iter().map(|t| t.0).collect())
            .collect(),
    })
}
