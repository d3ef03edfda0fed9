//! Remote judges over OpenAI-compatible chat completion APIs (OpenAI, vLLM, llama.cpp
//! server, Ollama, LM Studio…): `POST {base_url}/chat/completions`, streamed by default so
//! that time to first token is measured from the first content delta.
//!
//! A sweep of thousands of calls must survive a flaky network: each call waits for the
//! endpoint's concurrency, requests-per-minute and tokens-per-minute limits, and is retried
//! with exponential backoff and jitter on 429, 5xx, timeouts, resets, cut streams and
//! malformed bodies, honouring `Retry-After`. A 400, 401, 403 or 404 is never retried: the
//! judge stops calling and every remaining call fails with the same clear message. The API
//! key never appears in an error message.

mod call;
mod limits;
mod pool;
pub mod sse;
pub mod wire;

use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use judgelab_core::judge::ModelIdentity;
use judgelab_core::{Judge, JudgeRequest, JudgeResponse, Message};
use serde_json::Value;
use tokio::task::JoinSet;

use crate::limits::Bucket;
use crate::pool::Pool;

/// A secret: shown as `<redacted>` by `Debug`, and scrubbed from every error message.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> ApiKey {
        ApiKey(key.into())
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// An endpoint and how to call it.
#[derive(Debug, Clone)]
pub struct Endpoint {
    /// As the user named the model.
    pub name: String,
    /// Up to `/v1`, e.g. `https://api.openai.com/v1` or `http://127.0.0.1:8080/v1`.
    pub base_url: String,
    /// Further endpoints serving the same model: each attempt goes to the least-loaded
    /// one of them and `base_url` that is in service (see `pool.rs`).
    pub pool: Vec<String>,
    pub model: String,
    pub api_key: Option<ApiKey>,
    /// Where the key came from, for messages (e.g. `$OPENAI_API_KEY`); never the key.
    pub key_source: String,
    pub stream: bool,
    /// For a whole call, the streamed body included.
    pub timeout: Duration,
    pub concurrency: usize,
    pub requests_per_minute: Option<u32>,
    pub tokens_per_minute: Option<u32>,
    /// Attempts per call, the first included.
    pub max_attempts: u32,
    /// The first retry waits about this long; each further one twice as long.
    pub backoff: Duration,
    pub max_backoff: Duration,
    pub top_logprobs: Option<u32>,
    pub response_format: Option<Value>,
    pub stop: Vec<String>,
}

impl Endpoint {
    /// An endpoint with the defaults: streaming, 60 s timeout, 4 calls at once, 5 attempts.
    pub fn new(name: &str, base_url: &str, model: &str) -> Endpoint {
        Endpoint {
            name: name.to_string(),
            base_url: base_url.trim_end_matches('/').to_string(),
            pool: Vec::new(),
            model: model.to_string(),
            api_key: None,
            key_source: "no key".into(),
            stream: true,
            timeout: Duration::from_secs(60),
            concurrency: 4,
            requests_per_minute: None,
            tokens_per_minute: None,
            max_attempts: 5,
            backoff: Duration::from_millis(500),
            max_backoff: Duration::from_secs(30),
            top_logprobs: None,
            response_format: None,
            stop: Vec::new(),
        }
    }

    pub fn url(&self) -> String {
        format!("{}/chat/completions", self.base_url)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum OpenAiError {
    #[error("cannot start the HTTP client: {0}")]
    Client(String),
}

/// What the calls of a judge share.
pub(crate) struct Inner {
    pub endpoint: Endpoint,
    pub pool: Pool,
    pub client: reqwest::Client,
    pub requests: Option<Bucket>,
    pub tokens: Option<Bucket>,
    /// Set by a response no retry can fix (bad key, unknown model): every later call fails
    /// with it, without reaching the server.
    pub fatal: Mutex<Option<String>>,
    /// Prompt tokens by prompt hash, for servers that do not stream usage.
    pub prompt_tokens: Mutex<std::collections::HashMap<String, u32>>,
    /// A reply said the server is llama.cpp's `llama-server`: an uncached request may ask
    /// it not to reuse a cached prompt.
    pub llama_cpp: std::sync::atomic::AtomicBool,
    /// A streamed reply reported usage: the server is not llama-cpp-python, whose cut
    /// stream may mean a prompt too long.
    pub usage_streamed: std::sync::atomic::AtomicBool,
    /// A stream ended when another request arrived: the server serves one request at a
    /// time (llama-cpp-python's does), and calls go on one at a time, each attempt
    /// holding `serial`.
    pub one_at_a_time: std::sync::atomic::AtomicBool,
    pub serial: tokio::sync::Mutex<()>,
}

/// What a judge says once it has found that its server serves one request at a time.
pub const ONE_AT_A_TIME: &str = "is served one request at a time: a new request ends the \
    stream in flight (llama-cpp-python's server does), so its calls went on one at a time. \
    Set the judge's own concurrency = 1 (in its [judge] or [[judges]] table; [sweep] \
    concurrency is the load latency is measured at, and changes nothing here) to start so";

impl Inner {
    /// `text` with the API key, wherever it appears, replaced.
    pub fn redact(&self, text: &str) -> String {
        match &self.endpoint.api_key {
            Some(ApiKey(key)) if !key.is_empty() => text.replace(key.as_str(), "<redacted>"),
            _ => text.to_string(),
        }
    }
}

/// A judge behind an OpenAI-compatible endpoint.
pub struct OpenAiJudge {
    identity: ModelIdentity,
    inner: Arc<Inner>,
    /// The judge's own runtime: `Judge` is a blocking API, called from the engine's blocking
    /// threads, and the HTTP client's connections must live on one runtime.
    runtime: Option<tokio::runtime::Runtime>,
}

impl OpenAiJudge {
    pub fn new(endpoint: Endpoint) -> Result<OpenAiJudge, OpenAiError> {
        let client = reqwest::Client::builder()
            .connect_timeout(endpoint.timeout.min(Duration::from_secs(10)))
            .build()
            .map_err(|e| OpenAiError::Client(e.to_string()))?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("judgelab-openai")
            .enable_all()
            .build()
            .map_err(|e| OpenAiError::Client(e.to_string()))?;
        let identity = ModelIdentity {
            name: endpoint.name.clone(),
            location: match endpoint.pool.len() {
                0 => format!("{} ({})", endpoint.url(), endpoint.model),
                n => format!("{} and {n} more ({})", endpoint.url(), endpoint.model),
            },
            sha256: None,
        };
        Ok(OpenAiJudge {
            identity,
            inner: Arc::new(Inner {
                requests: endpoint.requests_per_minute.map(Bucket::per_minute),
                tokens: endpoint.tokens_per_minute.map(Bucket::per_minute),
                pool: Pool::new(
                    std::iter::once(endpoint.base_url.clone()).chain(
                        endpoint
                            .pool
                            .iter()
                            .map(|u| u.trim_end_matches('/').to_string()),
                    ),
                ),
                endpoint,
                client,
                fatal: Mutex::new(None),
                prompt_tokens: Mutex::new(Default::default()),
                llama_cpp: Default::default(),
                usage_streamed: Default::default(),
                one_at_a_time: Default::default(),
                serial: tokio::sync::Mutex::new(()),
            }),
            runtime: Some(runtime),
        })
    }
}

impl Drop for OpenAiJudge {
    fn drop(&mut self) {
        // The judge may be dropped inside the engine's async code, where a runtime must not
        // block while shutting down.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// A rough token count (`cut::CHARS_PER_TOKEN` characters a token, as a remote judge cuts
/// its inputs): remote endpoints offer no tokenizer, and the count only ranks few-shot
/// examples by length and paces tokens-per-minute limits.
pub fn estimate_tokens(messages: &[Message]) -> usize {
    messages
        .iter()
        .map(|m| {
            m.content
                .chars()
                .count()
                .div_ceil(judgelab_core::cut::CHARS_PER_TOKEN)
                + 4
        })
        .sum()
}

impl Judge for OpenAiJudge {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    fn count_tokens(&self, messages: &[Message]) -> Result<usize, String> {
        Ok(estimate_tokens(messages))
    }

    fn notes(&self) -> Vec<String> {
        match self.inner.one_at_a_time.load(Ordering::SeqCst) {
            true => vec![ONE_AT_A_TIME.to_string()],
            false => Vec::new(),
        }
    }

    fn judge_batch(
        &self,
        requests: Vec<JudgeRequest>,
        cancel: &Arc<AtomicBool>,
        on_response: &mut dyn FnMut(JudgeResponse),
    ) {
        let runtime = self
            .runtime
            .as_ref()
            .expect("the runtime lives as long as the judge");
        let inner = Arc::clone(&self.inner);
        runtime.block_on(async move {
            let width = inner.endpoint.concurrency.max(1);
            let mut waiting: std::collections::VecDeque<(u64, JudgeRequest)> = requests
                .into_iter()
                .map(|r| (prompt_key(&r.messages), r))
                .collect();
            let mut calls = JoinSet::new();
            // The prompt of the call that returned last: a call of the same prompt goes
            // out next, so that the server slot it just left, which holds that prompt,
            // takes it (prompt affinity; a server's prompt cache then answers it).
            let mut freed: Option<u64> = None;
            // Uncached requests ask a llama.cpp server not to reuse a cached prompt, once a
            // reply has said the server is one: until then, one call at a time.
            let mut learning =
                waiting.iter().any(|(_, r)| r.uncached) && !inner.llama_cpp.load(Ordering::SeqCst);
            loop {
                let serial = inner.one_at_a_time.load(Ordering::SeqCst);
                let width = if learning || serial { 1 } else { width };
                while calls.len() < width && !cancel.load(Ordering::SeqCst) {
                    let next = freed
                        .take()
                        .and_then(|key| waiting.iter().position(|(k, _)| *k == key))
                        .and_then(|i| waiting.remove(i))
                        .or_else(|| waiting.pop_front());
                    let Some((key, request)) = next else {
                        break;
                    };
                    let inner = Arc::clone(&inner);
                    calls.spawn(async move {
                        let id = request.key;
                        let response = JudgeResponse {
                            key: id,
                            result: call::call(&inner, request).await,
                        };
                        (key, response)
                    });
                }
                let Some(done) = calls.join_next().await else {
                    break;
                };
                learning = false;
                if let Ok((key, _)) = &done {
                    freed = Some(*key);
                }
                deliver(done.map(|(_, response)| response), on_response);
            }
        });
    }
}

/// Which prompt a request sends, as a key: calls of one prompt share it.
fn prompt_key(messages: &[Message]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for m in messages {
        m.role.hash(&mut h);
        m.content.hash(&mut h);
    }
    h.finish()
}

fn deliver(
    done: Result<JudgeResponse, tokio::task::JoinError>,
    on_response: &mut dyn FnMut(JudgeResponse),
) {
    // A call task that panicked has no key to answer with; the engine records every
    // unanswered call as failed, so nothing is lost.
    if let Ok(response) = done {
        on_response(response);
    }
}
