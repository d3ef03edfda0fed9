//! Many draws from one forward pass, through the same sampler chain as a judge call: the
//! ground truth that `judgelab_core::sampling`'s exact distributions are checked against.

use std::collections::HashMap;
use std::num::NonZeroU32;
use std::path::Path;

use judgelab_core::{Message, Sampling};
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;

use crate::setup::{backend, chat_template, chat_tokens, sampler};

/// The next-token logits of a prompt, and how often each token was drawn per setting.
pub struct Draws {
    pub logits: Vec<f32>,
    /// Per sampling setting, in order: token id → draws.
    pub counts: Vec<HashMap<i32, usize>>,
}

/// Decodes `messages` (in the model's chat template) once with the model at `path`, then
/// draws `n` tokens for each setting from the same logits, through a grammar first when
/// one is given.
pub fn draw(
    path: &Path,
    messages: &[Message],
    settings: &[Sampling],
    grammar: Option<&str>,
    n: usize,
) -> Result<Draws, String> {
    let backend = backend()?;
    let model = LlamaModel::load_from_file(backend, path, &LlamaModelParams::default())
        .map_err(|e| e.to_string())?;
    let params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(2048))
        .with_n_batch(2048);
    let mut ctx = model
        .new_context(backend, params)
        .map_err(|e| e.to_string())?;
    let (template, _) = chat_template(&model);
    let tokens = chat_tokens(&model, &template, messages)?;
    let mut batch = LlamaBatch::new(2048, 1);
    for (pos, &token) in tokens.iter().enumerate() {
        batch
            .add(token, pos as i32, &[0], pos + 1 == tokens.len())
            .map_err(|e| e.to_string())?;
    }
    ctx.decode(&mut batch).map_err(|e| e.to_string())?;
    let last = batch.n_tokens() - 1;
    let logits = ctx.get_logits_ith(last).to_vec();
    let counts = settings
        .iter()
        .map(|s| {
            let mut counts = HashMap::new();
            for i in 0..n {
                // A fresh chain per draw, since a grammar advances on the token it accepts;
                // each with its own seed.
                let seeded = Sampling {
                    seed: s.seed.wrapping_add(i as u32),
                    ..*s
                };
                let mut chain = sampler(&model, &seeded, grammar)?;
                *counts.entry(chain.sample(&ctx, last).0).or_default() += 1;
            }
            Ok(counts)
        })
        .collect::<Result<_, String>>()?;
    Ok(Draws { logits, counts })
}
