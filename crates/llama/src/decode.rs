//! Decoding a batch of requests on one context: a shared prefix decoded once, several
//! sequences decoded together, then each sequence's generation.
//!
//! **Shared prefix.** Sequence 0 of the KV cache holds a prefix of tokens that persists
//! across batches. For a batch, the prefix is the longest common prefix of its requests'
//! *whole* tokenised prompts (for one request: what it shares with the cached prefix), so
//! the tokens decoded for a request are always exactly its whole prompt's tokens — prefix
//! plus suffix equals the whole by construction, and a request that shares nothing is
//! decoded in full. What the cached prefix has in common with the new one is kept; the
//! rest is decoded once. Each request's sequence starts from a copy of sequence 0
//! (`kv_unified`, `seq_cp`), which shares the cells rather than duplicating them.
//!
//! **Batching.** Up to `parallel` requests (and as many as the cache's largest size holds)
//! are decoded in one `llama_decode` call, one sequence each, and then generate together, one
//! token per active sequence per step. A chunk takes no more suffixes than fill one
//! physical batch ([`CHUNK_SUFFIX_TOKENS`]): past that the matrix products gain nothing,
//! while in a unified cache each of the chunk's tokens attends over every sequence's
//! cells (on the benchmark's prompts, 165-token suffixes after a 460-token prefix, four at
//! once took about 7% longer than two). The summation order of a multi-sequence batch
//! differs from a lone decode, which moves logits by a few hundredths; the benchmark
//! counts what that does to verdicts.
//!
//! **Seeded samples alone.** A generation at a temperature above 0 is decoded by itself
//! from an empty cache, after the batch's other requests ([`Live::seeded`]): a draw near
//! the boundary of two tokens follows the logits' last bits, which depend on what was
//! decoded beside it. Alone, a seeded verdict depends on its prompt, parameters and seed
//! only, so a resumed run stores what an uninterrupted one would. It costs the shared
//! prefix and the batching for those calls; greedy and exact requests keep both, and
//! their logits move by as much with the batch (a greedy generation whose two best tokens
//! are that close may go either way). A session with `parallel` 1 and no shared prefix
//! (the engine's `[judge] reproducible` judges) decodes every request so.
//!
//! **The cache's size.** A context starts with a few thousand cells and is made anew,
//! twice as large or as large as needed, when a batch's chunks need more (`fit`): making
//! a context allocates and clears every cell, which for the model's whole window (two,
//! with parallel sequences) took longer than decoding a short prompt, and judge prompts
//! are mostly far shorter than the window.
//!
//! **What a batched call's numbers mean.** `latency_ms` runs from the start of its chunk
//! (the requests decoded together) to its own last token, and `ttft_ms` to its first
//! token: what a caller waiting for that one verdict would have waited, not a share of
//! the work. `decoded_tokens` is the prompt tokens decoded for the call itself (its
//! suffix); the prefix tokens a batch had to decode are counted on its first call, so the
//! sum over calls is the work done.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Instant;

use judgelab_core::judge::{CallError, Completion, StopReason};
use judgelab_core::{JudgeRequest, JudgeResponse, Message};
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_backend::LlamaBackend;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::model::{LlamaChatTemplate, LlamaModel};
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::LlamaToken;

/// Suffix tokens a chunk fills before it takes no other request: llama.cpp's default
/// physical batch (`n_ubatch`).
const CHUNK_SUFFIX_TOKENS: usize = 512;

use crate::logprobs::Logprobs;
use crate::setup::{chat_tokens, context_params, sampler};

/// A prefix shorter than this is not worth a sequence of its own.
const MIN_PREFIX: usize = 16;

pub(crate) struct Session<'m> {
    pub model: &'m LlamaModel,
    pub backend: &'static LlamaBackend,
    pub threads: i32,
    pub ctx: LlamaContext<'m>,
    pub template: LlamaChatTemplate,
    pub batch: LlamaBatch<'static>,
    /// The window of one request (prompt and output), in tokens.
    pub n_window: u32,
    /// Cells of the whole (unified) KV cache, shared by all sequences.
    pub n_cells: u32,
    /// The most cells the cache may grow to (`fit`); chunks are cut to fit in it.
    pub max_cells: u32,
    /// Sequences decoded together.
    pub parallel: usize,
    /// Keep a prefix in sequence 0 and start every request from it.
    pub share_prefix: bool,
    /// The tokens sequence 0 holds.
    pub prefix: Vec<LlamaToken>,
}

/// A request, tokenised, on its way through a chunk.
struct Live {
    request: JudgeRequest,
    /// The prompt's tokens, then the generated ones.
    tokens: Vec<LlamaToken>,
    n_prompt: usize,
    /// Tokens it may generate: its max_tokens, cut to what its window leaves.
    budget: u32,
    seq: i32,
    sampler: Option<LlamaSampler>,
    text: Vec<u8>,
    generated: u32,
    ttft_ms: Option<f64>,
    /// When it stopped, from the start of its chunk.
    latency_ms: f64,
    logits: Option<Arc<Vec<f32>>>,
    /// Its first output tokens' log-probabilities ([`Logprobs`]).
    logprobs: Logprobs,
    decoded: u32,
    /// Where this sequence's next logits are in the last decoded batch.
    logits_idx: i32,
    stop: Option<StopReason>,
}

impl Live {
    fn new(request: JudgeRequest, tokens: Vec<LlamaToken>, n_window: u32) -> Live {
        let budget = request
            .sampling
            .max_tokens
            .min(n_window - tokens.len() as u32);
        Live {
            request,
            n_prompt: tokens.len(),
            tokens,
            budget,
            seq: 0,
            sampler: None,
            text: Vec::new(),
            generated: 0,
            ttft_ms: None,
            latency_ms: 0.0,
            logits: None,
            logprobs: Logprobs::default(),
            decoded: 0,
            logits_idx: -1,
            stop: None,
        }
    }

    /// A seeded sample: a generation at a temperature above 0. Its tokens depend on the
    /// logits to the last bit (a draw near the boundary of two tokens takes either), and
    /// the logits of a sequence decoded beside others, or after a prefix another batch
    /// left, differ in the last bits from those of the same prompt decoded alone (other
    /// cells, other summation orders). Decoded alone from an empty cache, it depends on
    /// its prompt, parameters and seed only: not on the batch it came in, the cache's
    /// state or where a run resumed. Greedy and exact requests are decoded together.
    fn seeded(&self) -> bool {
        self.budget > 0 && !self.request.logits && self.request.sampling.temperature > 0.0
    }

    /// Sends its completion; false once the receiver is gone.
    fn answer(self, reply: &mpsc::Sender<JudgeResponse>) -> bool {
        let completion = Completion {
            text: String::from_utf8_lossy(&self.text).into_owned(),
            prompt_tokens: self.n_prompt as u32,
            completion_tokens: self.generated,
            latency_ms: self.latency_ms,
            ttft_ms: self.ttft_ms,
            stop: self.stop.unwrap_or(StopReason::MaxTokens),
            cached_tokens: None,
            attempts: 1,
            logprobs: self.logprobs.json(),
            decoded_tokens: Some(self.decoded),
            endpoint: None,
            logits: self.logits,
            top_logprobs: None,
        };
        let key = self.request.key;
        reply
            .send(JudgeResponse {
                key,
                result: Ok(completion),
            })
            .is_ok()
    }
}

impl Session<'_> {
    /// The messages wrapped in the chat template, tokenised.
    pub fn tokens(&self, messages: &[Message]) -> Result<Vec<LlamaToken>, String> {
        chat_tokens(self.model, &self.template, messages)
    }

    /// Runs a batch, sending each response as soon as its request is done. Returns false
    /// once the receiver is gone. Seeded samples are decoded alone, after the rest
    /// ([`Live::seeded`]).
    pub fn run(
        &mut self,
        requests: Vec<JudgeRequest>,
        cancel: &AtomicBool,
        reply: &mpsc::Sender<JudgeResponse>,
    ) -> bool {
        let start = Instant::now();
        let Some(live) = self.tokenised(requests, start, reply) else {
            return false;
        };
        let (alone, together): (Vec<Live>, Vec<Live>) = live.into_iter().partition(Live::seeded);
        if !together.is_empty() && !self.together(together, start, cancel, reply) {
            return false;
        }
        for l in alone {
            if cancel.load(Ordering::SeqCst) {
                return true;
            }
            if !self.alone(l, reply) {
                return false;
            }
        }
        true
    }

    /// The requests tokenised; those that cannot be decoded are answered here. `None`
    /// once the receiver is gone.
    fn tokenised(
        &self,
        requests: Vec<JudgeRequest>,
        start: Instant,
        reply: &mpsc::Sender<JudgeResponse>,
    ) -> Option<Vec<Live>> {
        let mut live = Vec::new();
        for request in requests {
            let key = request.key;
            let result = match self.tokens(&request.messages) {
                Err(message) => Err(CallError::untried(message)),
                Ok(tokens) if tokens.is_empty() => Err(CallError::untried("the prompt is empty")),
                Ok(tokens) if tokens.len() >= self.n_window as usize => {
                    Ok(too_long(tokens.len(), start))
                }
                Ok(tokens) => {
                    live.push(Live::new(request, tokens, self.n_window));
                    continue;
                }
            };
            reply.send(JudgeResponse { key, result }).ok()?;
        }
        Some(live)
    }

    /// Decodes `live` with a shared prefix, in chunks of sequences decoded together.
    fn together(
        &mut self,
        live: Vec<Live>,
        start: Instant,
        cancel: &AtomicBool,
        reply: &mpsc::Sender<JudgeResponse>,
    ) -> bool {
        if cancel.load(Ordering::SeqCst) {
            return true;
        }
        let (shared, prefix_decoded) = match self.share(&live) {
            Ok(p) => p,
            Err(message) => return fail_all(live, &message, reply),
        };
        let mut prefix_cost = prefix_decoded;
        // The first chunk's calls also waited for the shared prefix.
        let mut chunk_start = start;
        let sizes = self.chunk_sizes(&live, shared);
        let mut rest = live.into_iter();
        for size in sizes {
            if cancel.load(Ordering::SeqCst) {
                return true;
            }
            let mut chunk: Vec<Live> = rest.by_ref().take(size).collect();
            chunk[0].decoded += std::mem::take(&mut prefix_cost) as u32;
            let outcome = self.chunk(&mut chunk, shared, chunk_start);
            for seq in 1..=self.parallel as i32 {
                let _ = self.ctx.clear_kv_cache_seq(Some(seq as u32), None, None);
            }
            if let Err(message) = outcome {
                // The cache may hold half a decode: start over from nothing.
                self.ctx.clear_kv_cache();
                self.prefix.clear();
                let unfinished: Vec<Live> = chunk.into_iter().chain(rest).collect();
                return fail_all(unfinished, &message, reply);
            }
            if !chunk.into_iter().all(|l| l.answer(reply)) {
                return false;
            }
            chunk_start = Instant::now();
        }
        true
    }

    /// Decodes one seeded sample alone, from an empty cache: its prompt decoded in full in
    /// one sequence, in the same cells and batches whatever ran before it, so that its
    /// logits, and with its seed its tokens, are the same in every run.
    fn alone(&mut self, l: Live, reply: &mpsc::Sender<JudgeResponse>) -> bool {
        self.ctx.clear_kv_cache();
        self.prefix.clear();
        let start = Instant::now();
        let mut chunk = vec![l];
        let outcome = self
            .fit(&chunk, 0)
            .and_then(|()| self.chunk(&mut chunk, 0, start));
        self.ctx.clear_kv_cache();
        match outcome {
            Ok(()) => chunk.pop().expect("one request").answer(reply),
            Err(message) => fail_all(chunk, &message, reply),
        }
    }

    /// Puts the batch's shared prefix into sequence 0 and returns its length and how many
    /// of its tokens had to be decoded now; first grows the cache to what the batch's chunks
    /// after that prefix need (`fit`), since growing drops the cached prefix.
    fn share(&mut self, live: &[Live]) -> Result<(usize, usize), String> {
        if !self.share_prefix {
            self.ctx.clear_kv_cache();
            self.prefix.clear();
            self.fit(live, 0)?;
            return Ok((0, 0));
        }
        if live.iter().any(|l| l.request.uncached) {
            // Nothing an earlier batch left is reused; the batch's own requests (a checklist's
            // calls on one item) still share what they have in common.
            self.ctx.clear_kv_cache();
            self.prefix.clear();
        }
        let first = &live[0].tokens;
        let mut target = if live.len() >= 2 {
            live[1..]
                .iter()
                .fold(first.len(), |n, l| n.min(common(first, &l.tokens)))
        } else {
            common(first, &self.prefix)
        };
        // Every request keeps at least its last token, whose logits it needs.
        let shortest = live.iter().map(|l| l.tokens.len()).min().unwrap_or(0);
        target = target.min(shortest.saturating_sub(1));
        if target < MIN_PREFIX {
            // Nothing worth sharing: the cached prefix would only take cells the batch needs.
            if !self.prefix.is_empty() {
                let _ = self.ctx.clear_kv_cache_seq(Some(0), None, None);
                self.prefix.clear();
            }
            self.fit(live, 0)?;
            return Ok((0, 0));
        }
        self.fit(live, target)?;
        let keep = common(&first[..target], &self.prefix);
        if keep < self.prefix.len() {
            self.ctx
                .clear_kv_cache_seq(Some(0), Some(keep as u32), None)
                .map_err(|e| format!("cannot trim the shared prefix: {e}"))?;
            self.prefix.truncate(keep);
        }
        if keep < target {
            self.batch.clear();
            for (pos, &token) in first.iter().enumerate().take(target).skip(keep) {
                self.batch
                    .add(token, pos as i32, &[0], false)
                    .map_err(|e| format!("cannot fill the batch: {e}"))?;
            }
            if let Err(e) = self.ctx.decode(&mut self.batch) {
                self.ctx.clear_kv_cache();
                self.prefix.clear();
                return Err(format!("decoding the shared prefix failed: {e}"));
            }
            self.prefix.extend_from_slice(&first[keep..target]);
        }
        Ok((target, target - keep))
    }

    /// How many requests each chunk of `live` takes, in order, after a shared prefix of
    /// `shared` tokens: as many as `parallel` allows, the cache's largest size holds and
    /// one physical batch of suffixes fills (a chunk takes at least one request).
    fn chunk_sizes(&self, live: &[Live], shared: usize) -> Vec<usize> {
        let mut sizes = Vec::new();
        let (mut n, mut cells, mut suffixes) = (0, shared, 0);
        for l in live {
            let suffix = l.tokens.len() - shared;
            let need = suffix + l.budget as usize;
            if n == self.parallel
                || (n > 0
                    && (cells + need > self.max_cells as usize
                        || suffixes + suffix > CHUNK_SUFFIX_TOKENS))
            {
                sizes.push(n);
                (n, cells, suffixes) = (0, shared, 0);
            }
            n += 1;
            cells += need;
            suffixes += suffix;
        }
        if n > 0 {
            sizes.push(n);
        }
        sizes
    }

    /// Grows the cache, when its chunks after a prefix of `shared` tokens need more cells
    /// than it has, to at least twice its size (and at most `max_cells`), so that a run
    /// grows it a few times at most. A new context holds nothing: the cached prefix goes.
    fn fit(&mut self, live: &[Live], shared: usize) -> Result<(), String> {
        let mut need = shared;
        let mut from = 0;
        for size in self.chunk_sizes(live, shared) {
            let chunk = &live[from..from + size];
            let cells: usize = chunk
                .iter()
                .map(|l| l.tokens.len() - shared + l.budget as usize)
                .sum();
            need = need.max(shared + cells);
            from += size;
        }
        if need <= self.n_cells as usize {
            return Ok(());
        }
        let n_cells = (need as u32)
            .max(2 * self.n_cells)
            .next_multiple_of(256)
            .min(self.max_cells);
        let params = context_params(n_cells, self.parallel, self.threads);
        self.ctx = self
            .model
            .new_context(self.backend, params)
            .map_err(|e| format!("cannot grow the context to {n_cells} tokens: {e}"))?;
        self.n_cells = n_cells;
        self.prefix.clear();
        Ok(())
    }

    /// Decodes a chunk's suffixes together, then generates for every sequence until each
    /// stops.
    fn chunk(&mut self, chunk: &mut [Live], shared: usize, start: Instant) -> Result<(), String> {
        self.batch.clear();
        for (i, l) in chunk.iter_mut().enumerate() {
            l.seq = i as i32 + 1;
            if shared > 0 {
                self.ctx
                    .copy_kv_cache_seq(0, l.seq, None, Some(shared as u32))
                    .map_err(|e| format!("cannot copy the shared prefix: {e}"))?;
            }
            let n = l.tokens.len();
            for pos in shared..n {
                self.batch
                    .add(l.tokens[pos], pos as i32, &[l.seq], pos + 1 == n)
                    .map_err(|e| format!("cannot fill the batch: {e}"))?;
            }
            l.logits_idx = self.batch.n_tokens() - 1;
            l.decoded += (n - shared) as u32;
            if l.budget > 0 {
                l.sampler = Some(sampler(
                    self.model,
                    &l.request.sampling,
                    l.request.grammar.as_deref(),
                )?);
            }
        }
        self.ctx
            .decode(&mut self.batch)
            .map_err(|e| format!("prefill failed: {e}"))?;
        let vocab = self.model.vocab();
        loop {
            // Sample every active sequence from the last decode.
            for l in chunk.iter_mut().filter(|l| l.stop.is_none()) {
                if l.generated == 0 && l.ttft_ms.is_none() {
                    if l.request.logits {
                        l.logits = Some(Arc::new(self.ctx.get_logits_ith(l.logits_idx).to_vec()));
                    }
                    if l.budget == 0 {
                        l.ttft_ms = Some(elapsed_ms(start));
                        l.stop = Some(StopReason::MaxTokens);
                        continue;
                    }
                }
                let sampler = l.sampler.as_mut().expect("set before decoding");
                let token = sampler.sample(&self.ctx, l.logits_idx);
                l.ttft_ms.get_or_insert_with(|| elapsed_ms(start));
                if l.logprobs.open() {
                    let logits = self.ctx.get_logits_ith(l.logits_idx);
                    l.logprobs.record(&vocab, logits, token);
                }
                if vocab.is_eog(token) {
                    l.stop = Some(StopReason::EndOfTurn);
                    continue;
                }
                l.generated += 1;
                l.text.extend(vocab.token_to_piece(token, false, None));
                if l.generated == l.budget {
                    l.stop = Some(StopReason::MaxTokens);
                    continue;
                }
                l.tokens.push(token);
            }
            for l in chunk
                .iter_mut()
                .filter(|l| l.stop.is_some() && l.latency_ms == 0.0)
            {
                l.latency_ms = elapsed_ms(start);
            }
            self.batch.clear();
            for l in chunk.iter_mut().filter(|l| l.stop.is_none()) {
                let pos = l.tokens.len() - 1;
                self.batch
                    .add(l.tokens[pos], pos as i32, &[l.seq], true)
                    .map_err(|e| format!("cannot fill the batch: {e}"))?;
                l.logits_idx = self.batch.n_tokens() - 1;
            }
            if self.batch.n_tokens() == 0 {
                return Ok(());
            }
            self.ctx
                .decode(&mut self.batch)
                .map_err(|e| format!("decode failed: {e}"))?;
        }
    }
}

/// The length of the longest common prefix.
fn common(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

fn elapsed_ms(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1e3
}

fn too_long(n_prompt: usize, start: Instant) -> Completion {
    Completion {
        text: String::new(),
        prompt_tokens: n_prompt as u32,
        completion_tokens: 0,
        latency_ms: elapsed_ms(start),
        ttft_ms: None,
        stop: StopReason::PromptTooLong,
        cached_tokens: None,
        attempts: 1,
        logprobs: None,
        decoded_tokens: Some(0),
        endpoint: None,
        logits: None,
        top_logprobs: None,
    }
}

fn fail_all(live: Vec<Live>, message: &str, reply: &mpsc::Sender<JudgeResponse>) -> bool {
    for l in live {
        let response = JudgeResponse {
            key: l.request.key,
            result: Err(CallError::after(1, message)),
        };
        if reply.send(response).is_err() {
            return false;
        }
    }
    true
}
