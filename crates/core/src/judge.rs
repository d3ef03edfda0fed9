//! The `Judge` trait: the one seam between the engine and a model. `llama` implements it
//! for local GGUF models; tests implement it with scripted outputs.
//!
//! The API takes **batches** so that an implementation can share prompt prefixes, decode
//! several sequences at once or derive exact distributions; each response is handed back
//! as soon as it is ready, so that the caller can persist it at once.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

/// One chat message; the judge wraps a list of them with the model's chat template.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Message {
    pub role: String,
    pub content: String,
}

/// How to sample one completion.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Sampling {
    /// 0 means greedy.
    pub temperature: f64,
    pub top_p: f64,
    /// 0 decodes the prompt and generates nothing (with `JudgeRequest::logits`).
    pub max_tokens: u32,
    pub seed: u32,
}

/// One call of a batch. `key` is the caller's, returned with the response.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeRequest {
    pub key: usize,
    pub messages: Vec<Message>,
    pub sampling: Sampling,
    /// An exact pass: return the first output token's distribution instead of generating.
    /// A judge with a [`Vocabulary`] returns its full-vocabulary logits
    /// (`Completion::logits`); a remote one asks its server for one token with its most
    /// likely alternatives (`Completion::top_logprobs`).
    pub logits: bool,
    /// A GBNF grammar the output must match (local judges).
    pub grammar: Option<String>,
    /// Timed: the judge decodes its whole prompt, reusing nothing an earlier call left in
    /// its cache. A local judge reuses nothing an earlier batch left (the caller sends it in
    /// a batch of its own, to time it alone: a lone request decodes its whole prompt; a
    /// checklist's calls share only their own common prefix); a remote one asks a llama.cpp server, whose replies say
    /// it is one, not to reuse a cached prompt (`cache_prompt: false`). Other servers
    /// cannot be asked, and may answer a repeated prompt from their prefix cache.
    pub uncached: bool,
}

impl JudgeRequest {
    /// A plain generation request.
    pub fn new(key: usize, messages: Vec<Message>, sampling: Sampling) -> JudgeRequest {
        JudgeRequest {
            key,
            messages,
            sampling,
            logits: false,
            grammar: None,
            uncached: false,
        }
    }
}

/// Why generation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// The model ended its turn.
    EndOfTurn,
    /// `max_tokens` was reached, or the context filled up.
    MaxTokens,
    /// The prompt alone does not fit the judge's context: nothing was generated. Trying
    /// again cannot help, so this is a verdict (a failure), not a failed call.
    PromptTooLong,
}

/// A finished call. It serialises so that remote responses can be cached and replayed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Completion {
    pub text: String,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// From the start of the call to its end.
    pub latency_ms: f64,
    /// From the start of the call to the first generated token.
    pub ttft_ms: Option<f64>,
    pub stop: StopReason,
    /// Prompt tokens the server served from its prompt cache, where it says.
    pub cached_tokens: Option<u32>,
    /// Attempts the call took, the successful one included (remote judges retry).
    pub attempts: u32,
    /// Per-token log-probabilities as JSON, where the judge was asked for them.
    pub logprobs: Option<String>,
    /// Prompt tokens this call actually decoded, where the judge knows: fewer than
    /// `prompt_tokens` when it continued from a shared prefix (the call that decoded the
    /// prefix counts it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decoded_tokens: Option<u32>,
    /// The endpoint that answered, for a remote judge (one of its pool).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<String>,
    /// The first output token's logits over the whole vocabulary, when asked for.
    #[serde(skip)]
    pub logits: Option<Arc<Vec<f32>>>,
    /// A remote judge's exact pass: the first output token's most likely tokens with their
    /// natural-log probabilities under the model's own distribution, as the server
    /// returned them; `None` where it returned none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<Vec<TokenLogprob>>,
}

/// One token of a first-token distribution a server returned, and its log-probability.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TokenLogprob {
    pub token: String,
    pub logprob: f64,
}

/// A call's outcome: a completion, or the error to record on the verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeResponse {
    pub key: usize,
    pub result: Result<Completion, CallError>,
}

/// Why a call has no completion, and how many requests it made before giving up: the
/// retried-call split of latency and the error rates read `attempts`, so it counts what
/// was really sent, not what the judge was allowed to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallError {
    pub message: String,
    /// Requests (remote) or decodes (local) the call made; 0 when it never reached the
    /// model (the judge had stopped, or was never loaded).
    pub attempts: u32,
}

impl CallError {
    /// A call that failed after `attempts` requests.
    pub fn after(attempts: u32, message: impl Into<String>) -> CallError {
        CallError {
            message: message.into(),
            attempts,
        }
    }

    /// A call that never reached the model.
    pub fn untried(message: impl Into<String>) -> CallError {
        CallError::after(0, message)
    }
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// What identifies the model behind a judge, recorded on every trial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelIdentity {
    /// As the user named it (`default`, a path, …).
    pub name: String,
    /// The resolved file path or endpoint.
    pub location: String,
    /// sha256 of the model file, where there is one.
    pub sha256: Option<String>,
}

/// The text of every token of a judge's vocabulary, by token id; end-of-generation tokens
/// read as "". With it, the engine reads verdicts from first-token logits.
pub type Vocabulary = Arc<Vec<String>>;

/// A model that judges.
pub trait Judge: Send + Sync {
    fn identity(&self) -> &ModelIdentity;

    /// The vocabulary, for judges that return first-token logits; `None` for the others.
    fn vocabulary(&self) -> Option<Vocabulary> {
        None
    }

    /// Where this judge computes, for the trials it judges to record (`CPU`, `CUDA0 NVIDIA
    /// H200: 30 of 30 layers`); `None` where it cannot say (a remote endpoint).
    fn device(&self) -> Option<String> {
        None
    }

    /// What the judge changed of how it calls, for the run to say (a remote judge whose
    /// server serves one request at a time goes on at one); empty for most.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }

    /// Prompt tokens the messages take once wrapped in the chat template.
    fn count_tokens(&self, messages: &[Message]) -> Result<usize, String>;

    /// Where each of the judge's tokens of `text` starts, in bytes (on char boundaries), to
    /// cut an input to a number of tokens ([`crate::cut`]). A judge without a tokeniser
    /// at hand (a remote one) estimates four characters a token, as it counts prompts.
    fn token_starts(&self, text: &str) -> Result<Vec<usize>, String> {
        Ok(crate::cut::estimated_starts(text))
    }

    /// Runs `requests`, calling `on_response` once per request as each finishes. Once
    /// `cancel` is set, requests not yet started are skipped (no response for them).
    fn judge_batch(
        &self,
        requests: Vec<JudgeRequest>,
        cancel: &Arc<AtomicBool>,
        on_response: &mut dyn FnMut(JudgeResponse),
    );
}
