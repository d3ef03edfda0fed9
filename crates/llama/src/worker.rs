//! The worker thread: owns the llama.cpp model and context, serves commands until the
//! channel closes. Nothing here panics on bad input; every failure becomes a message.

use std::num::NonZeroU32;
use std::sync::atomic::Ordering;
use std::sync::{mpsc, OnceLock};
use std::time::Instant;

use judgelab_core::judge::{Completion, StopReason};
use judgelab_core::{JudgeRequest, JudgeResponse, Message, Sampling};
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::{LlamaChatMessage, LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

use crate::{Command, LlamaOptions, ModelInfo, GPU_BUILD};

/// The sampler chain of a call: greedy at temperature 0, else top_p, then temperature,
/// then a seeded draw (the order `judgelab_core::sampling` computes exactly).
pub(crate) fn sampler(s: &Sampling) -> LlamaSampler {
    if s.temperature <= 0.0 {
        LlamaSampler::greedy()
    } else {
        LlamaSampler::chain_simple([
            LlamaSampler::top_p(s.top_p as f32, 1),
            LlamaSampler::temp(s.temperature as f32),
            LlamaSampler::dist(s.seed),
        ])
    }
}

/// llama.cpp's backend may be initialised once per process; every worker shares it.
pub(crate) fn backend() -> Result<&'static LlamaBackend, String> {
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
    ready: mpsc::Sender<Result<ModelInfo, String>>,
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
    let n_ctx = options.context_size.min(n_ctx_train.max(256));
    let threads = options
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()))
        as i32;
    let ctx_params = LlamaContextParams::default()
        .with_n_ctx(NonZeroU32::new(n_ctx))
        .with_n_batch(n_ctx)
        .with_n_threads(threads)
        .with_n_threads_batch(threads);
    let ctx = match model.new_context(backend, ctx_params) {
        Ok(c) => c,
        Err(e) => {
            let _ = ready.send(Err(format!(
                "cannot create a context of {n_ctx} tokens: {e}"
            )));
            return;
        }
    };
    let (template, template_name) = match model.chat_template(None) {
        Ok(t) => {
            let name = t.to_string().unwrap_or_else(|_| "model".into());
            (t, name)
        }
        Err(_) => (
            LlamaChatTemplate::new("chatml").expect("static template name"),
            "chatml".to_string(),
        ),
    };
    let info = ModelInfo {
        n_ctx,
        n_ctx_train,
        n_params: model.n_params(),
        gpu_layers: gpu_layers.min(model.n_layer()),
        chat_template: template_name,
    };
    if ready.send(Ok(info)).is_err() {
        return;
    }
    let mut session = Session {
        model: &model,
        ctx,
        template,
        batch: LlamaBatch::new(n_ctx as usize, 1),
        n_ctx,
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
                for request in requests {
                    if cancel.load(Ordering::SeqCst) {
                        break;
                    }
                    let result = session.complete(&request);
                    if reply
                        .send(JudgeResponse {
                            key: request.key,
                            result,
                        })
                        .is_err()
                    {
                        break;
                    }
                }
            }
        }
    }
}

struct Session<'m> {
    model: &'m LlamaModel,
    ctx: LlamaContext<'m>,
    template: LlamaChatTemplate,
    batch: LlamaBatch<'static>,
    n_ctx: u32,
}

impl Session<'_> {
    /// The messages wrapped in the chat template, tokenised.
    fn tokens(&self, messages: &[Message]) -> Result<Vec<LlamaToken>, String> {
        let chat = messages
            .iter()
            .map(|m| LlamaChatMessage::new(m.role.clone(), m.content.clone()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("invalid message: {e}"))?;
        let prompt = self
            .model
            .apply_chat_template(&self.template, &chat, true)
            .map_err(|e| format!("cannot apply the chat template: {e}"))?;
        Ok(self.model.vocab().tokenize(prompt.as_bytes(), true, true))
    }

    fn complete(&mut self, request: &JudgeRequest) -> Result<Completion, String> {
        let start = Instant::now();
        let tokens = self.tokens(&request.messages)?;
        let s = request.sampling;
        let n_prompt = tokens.len();
        if n_prompt == 0 {
            return Err("the prompt is empty".into());
        }
        if n_prompt >= self.n_ctx as usize {
            return Ok(Completion {
                cached_tokens: None,
                attempts: 1,
                logprobs: None,
                text: String::new(),
                prompt_tokens: n_prompt as u32,
                completion_tokens: 0,
                latency_ms: start.elapsed().as_secs_f64() * 1e3,
                ttft_ms: None,
                stop: StopReason::PromptTooLong,
            });
        }
        // Generation stops at max_tokens or when the context is full, whichever comes first.
        let max_tokens = s.max_tokens.min(self.n_ctx - n_prompt as u32);
        self.ctx.clear_kv_cache();
        self.batch.clear();
        for (pos, &token) in tokens.iter().enumerate() {
            self.batch
                .add(token, pos as i32, &[0], pos + 1 == n_prompt)
                .map_err(|e| format!("cannot fill the batch: {e}"))?;
        }
        self.ctx
            .decode(&mut self.batch)
            .map_err(|e| format!("prefill failed: {e}"))?;

        let mut sampler = sampler(&s);
        let vocab = self.model.vocab();
        let mut text = Vec::new();
        let mut ttft_ms = None;
        let mut n_generated = 0u32;
        let mut pos = n_prompt as i32;
        let mut logits_idx = self.batch.n_tokens() - 1;
        let stop = loop {
            if n_generated == max_tokens {
                break StopReason::MaxTokens;
            }
            let token = sampler.sample(&self.ctx, logits_idx);
            ttft_ms.get_or_insert_with(|| start.elapsed().as_secs_f64() * 1e3);
            if vocab.is_eog(token) {
                break StopReason::EndOfTurn;
            }
            n_generated += 1;
            text.extend(vocab.token_to_piece(token, false, None));
            if n_generated == max_tokens {
                break StopReason::MaxTokens;
            }
            self.batch.clear();
            self.batch
                .add(token, pos, &[0], true)
                .map_err(|e| format!("cannot fill the batch: {e}"))?;
            pos += 1;
            self.ctx
                .decode(&mut self.batch)
                .map_err(|e| format!("decode failed: {e}"))?;
            logits_idx = 0;
        };
        Ok(Completion {
            cached_tokens: None,
            attempts: 1,
            logprobs: None,
            text: String::from_utf8_lossy(&text).into_owned(),
            prompt_tokens: n_prompt as u32,
            completion_tokens: n_generated,
            latency_ms: start.elapsed().as_secs_f64() * 1e3,
            ttft_ms,
            stop,
        })
    }
}
