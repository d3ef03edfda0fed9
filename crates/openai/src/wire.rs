//! The chat completion API on the wire: the request body, and what is read back from a
//! whole response or from the chunks of a stream.

use judgelab_core::judge::TokenLogprob;
use judgelab_core::{Message, Sampling};
use serde_json::{json, Value};

use crate::Endpoint;

/// The JSON body of `POST /chat/completions`.
pub fn request_body(endpoint: &Endpoint, messages: &[Message], sampling: &Sampling) -> Value {
    let mut body = json!({
        "model": endpoint.model,
        "messages": messages,
        "temperature": sampling.temperature,
        "top_p": sampling.top_p,
        "max_tokens": sampling.max_tokens,
        "seed": sampling.seed,
        "stream": endpoint.stream,
    });
    if endpoint.stream {
        body["stream_options"] = json!({ "include_usage": true });
    }
    if !endpoint.stop.is_empty() {
        body["stop"] = json!(endpoint.stop);
    }
    if let Some(k) = endpoint.top_logprobs {
        body["logprobs"] = json!(true);
        body["top_logprobs"] = json!(k);
    }
    if let Some(format) = &endpoint.response_format {
        body["response_format"] = format.clone();
    }
    body
}

/// The most likely first tokens an exact pass asks for where the judge names no
/// `top_logprobs`: the most OpenAI's API and vLLM's default `max_logprobs` return.
pub const EXACT_TOP_LOGPROBS: u32 = 20;

/// The JSON body of an exact pass: one token, unstreamed, with the first token's most
/// likely alternatives and their log-probabilities. Asked at temperature 1 and top_p 1,
/// so that a server whose log-probabilities follow its sampler returns the model's own
/// distribution too; the judge's sampling is applied to it afterwards.
pub fn exact_body(endpoint: &Endpoint, messages: &[Message]) -> Value {
    let k = endpoint
        .top_logprobs
        .filter(|&k| k > 0)
        .unwrap_or(EXACT_TOP_LOGPROBS);
    json!({
        "model": endpoint.model,
        "messages": messages,
        "temperature": 1.0,
        "top_p": 1.0,
        "max_tokens": 1,
        "stream": false,
        "logprobs": true,
        "top_logprobs": k,
    })
}

/// What a call produced, whole or assembled from a stream.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    pub text: String,
    pub finish_reason: Option<String>,
    pub prompt_tokens: Option<u32>,
    pub completion_tokens: Option<u32>,
    pub cached_tokens: Option<u32>,
    /// The choice's `logprobs.content` entries, as the server sent them.
    pub logprobs: Vec<Value>,
    /// Streamed chunks that carried content: the completion's tokens on servers that send
    /// one token a chunk (the llama.cpp family), for when a stream reports no usage.
    pub deltas: u32,
    /// The reply carried llama.cpp's `timings`: the server is a `llama-server`, which takes
    /// `cache_prompt`.
    pub llama_cpp: bool,
}

impl Reply {
    fn usage(&mut self, usage: &Value) {
        let count = |v: &Value| v.as_u64().map(|n| n as u32);
        if let Some(n) = count(&usage["prompt_tokens"]) {
            self.prompt_tokens = Some(n);
        }
        if let Some(n) = count(&usage["completion_tokens"]) {
            self.completion_tokens = Some(n);
        }
        if let Some(n) = count(&usage["prompt_tokens_details"]["cached_tokens"]) {
            self.cached_tokens = Some(n);
        }
    }

    /// The first token's most likely tokens, where the server returned any: each token
    /// once (two ids that read as the same text add up; llama-cpp-python's server keys them
    /// by text and keeps one), most likely first (vLLM lists the sampled token first, and
    /// llama-cpp-python's appends it last when it ranks below the rest). `top_probs` with
    /// linear `prob`s, as llama-server returns them after its sampler when asked to, read
    /// as their logarithms.
    pub fn first_token_logprobs(&self) -> Option<Vec<TokenLogprob>> {
        let first = self.logprobs.first()?;
        let top = first["top_logprobs"]
            .as_array()
            .or_else(|| first["top_probs"].as_array())?;
        let mut tokens: Vec<TokenLogprob> = Vec::with_capacity(top.len());
        for t in top {
            let Some(token) = t["token"].as_str() else {
                continue;
            };
            let logprob = match (t["logprob"].as_f64(), t["prob"].as_f64()) {
                (Some(l), _) => l,
                (None, Some(p)) => p.ln(),
                (None, None) => continue,
            };
            // A token of probability 0 (OpenAI writes -9999 for it) says nothing.
            if !logprob.is_finite() || logprob < -1000.0 {
                continue;
            }
            match tokens.iter_mut().find(|known| known.token == token) {
                Some(known) => known.logprob = (known.logprob.exp() + logprob.exp()).ln(),
                None => tokens.push(TokenLogprob {
                    token: token.to_string(),
                    logprob,
                }),
            }
        }
        tokens.sort_by(|a, b| b.logprob.total_cmp(&a.logprob));
        (!tokens.is_empty()).then_some(tokens)
    }

    fn logprobs(&mut self, choice: &Value) {
        if let Some(entries) = choice["logprobs"]["content"].as_array() {
            self.logprobs.extend(entries.iter().cloned());
        }
    }

    /// Reads a whole (non-streamed) response.
    pub fn from_response(body: &Value) -> Result<Reply, String> {
        let choice = &body["choices"][0];
        if !choice.is_object() {
            return Err(format!(
                "the response has no choices: {}",
                shorten(&body.to_string())
            ));
        }
        let mut reply = Reply {
            text: choice["message"]["content"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            finish_reason: choice["finish_reason"].as_str().map(str::to_string),
            ..Reply::default()
        };
        reply.usage(&body["usage"]);
        reply.logprobs(choice);
        reply.llama_cpp = body["timings"].is_object();
        Ok(reply)
    }

    /// Folds one streamed chunk in; returns the content it added (empty for none).
    pub fn add_chunk(&mut self, chunk: &Value) -> String {
        if chunk["usage"].is_object() {
            self.usage(&chunk["usage"]);
        }
        self.llama_cpp |= chunk["timings"].is_object();
        let choice = &chunk["choices"][0];
        if !choice.is_object() {
            return String::new();
        }
        let delta = choice["delta"]["content"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        self.text.push_str(&delta);
        self.deltas += u32::from(!delta.is_empty());
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.finish_reason = Some(reason.to_string());
        }
        self.logprobs(choice);
        delta
    }
}

/// Whether an error body says the prompt does not fit the model's context, and the
/// prompt's tokens where the server counts them. The servers say it in their own words:
/// OpenAI and llama-cpp-python with the code `context_length_exceeded`, llama.cpp's
/// `llama-server` with the type `exceed_context_size_error` (and `n_prompt_tokens`), vLLM
/// with "maximum context length" in the message.
pub fn context_overflow(body: &str) -> Option<Option<u32>> {
    let value: Value = serde_json::from_str(body).ok()?;
    let error = if value["error"].is_object() {
        &value["error"]
    } else {
        &value
    };
    let message = error["message"].as_str().unwrap_or_default().to_lowercase();
    let said = error["code"] == "context_length_exceeded"
        || error["type"] == "exceed_context_size_error"
        || [
            "maximum context length",
            "context window",
            "context size",
            "context length",
        ]
        .iter()
        .any(|phrase| message.contains(phrase));
    said.then(|| {
        error["n_prompt_tokens"]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok())
    })
}

/// At most 200 characters of a server's text, for error messages.
pub fn shorten(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(200) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_token_logprobs_read_as_each_server_writes_them() {
        let read = |entry: Value| {
            let body = json!({"choices":[{"message":{"content":"A"},"finish_reason":"length","logprobs":{"content":[entry]}}]});
            let tokens = Reply::from_response(&body).unwrap().first_token_logprobs();
            tokens.map(|t| {
                t.iter()
                    .map(|t| (t.token.clone(), (t.logprob * 1000.0).round() / 1000.0))
                    .collect::<Vec<_>>()
            })
        };
        // vLLM: the sampled token first; llama-cpp-python: one text twice is one token.
        let ln = |p: f64| p.ln();
        let got = read(json!({"token":"B","logprob":ln(0.1),"top_logprobs":[
            {"token":"B","logprob":ln(0.1)},{"token":"A","logprob":ln(0.6)},{"token":" A","logprob":ln(0.2)},{"token":"B","logprob":ln(0.05)}]}));
        let want = |pairs: &[(&str, f64)]| {
            Some(
                pairs
                    .iter()
                    .map(|(t, p)| (t.to_string(), (ln(*p) * 1000.0).round() / 1000.0))
                    .collect::<Vec<_>>(),
            )
        };
        assert_eq!(got, want(&[("A", 0.6), (" A", 0.2), ("B", 0.15)]));
        // llama-server after its sampler: linear probabilities.
        let got = read(
            json!({"token":"A","prob":0.9,"top_probs":[{"token":"A","prob":0.9},{"token":"B","prob":0.1}]}),
        );
        assert_eq!(got, want(&[("A", 0.9), ("B", 0.1)]));
        // A token of probability 0 says nothing (OpenAI writes -9999 for it).
        let got = read(
            json!({"token":"A","logprob":-0.1,"top_logprobs":[{"token":"A","logprob":-0.1},{"token":"B","logprob":-9999.0},{"token":"C","prob":0.0}]}),
        );
        assert_eq!(got, Some(vec![("A".to_string(), -0.1)]));
        // None returned: none read.
        assert_eq!(read(json!({"token":"A","logprob":-0.1})), None);
        assert_eq!(
            read(json!({"token":"A","logprob":-0.1,"top_logprobs":[]})),
            None
        );
    }

    #[test]
    fn an_exact_pass_asks_for_one_token_and_its_alternatives_at_temperature_1() {
        let mut endpoint = Endpoint::new("m", "http://127.0.0.1:1/v1", "m");
        let body = exact_body(&endpoint, &[]);
        assert_eq!(
            (
                &body["max_tokens"],
                &body["top_logprobs"],
                &body["temperature"],
                &body["stream"]
            ),
            (&json!(1), &json!(20), &json!(1.0), &json!(false))
        );
        endpoint.top_logprobs = Some(5);
        assert_eq!(exact_body(&endpoint, &[])["top_logprobs"], json!(5));
    }

    #[test]
    fn a_stream_assembles_into_a_reply() {
        let mut reply = Reply::default();
        let chunks = [
            json!({"choices":[{"delta":{"role":"assistant"}}]}),
            json!({"choices":[{"delta":{"content":"A"}}]}),
            json!({"choices":[{"delta":{"content":" wins"},"finish_reason":"stop"}]}),
            json!({"choices":[],"usage":{"prompt_tokens":12,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":8}}}),
        ];
        let deltas: Vec<String> = chunks.iter().map(|c| reply.add_chunk(c)).collect();
        assert_eq!(deltas, ["", "A", " wins", ""]);
        assert_eq!(reply.text, "A wins");
        assert_eq!(reply.finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            (
                reply.prompt_tokens,
                reply.completion_tokens,
                reply.cached_tokens
            ),
            (Some(12), Some(2), Some(8))
        );
    }

    #[test]
    fn a_whole_response_and_a_bad_one() {
        let body = json!({"choices":[{"message":{"content":"B"},"finish_reason":"length","logprobs":{"content":[{"token":"B","logprob":-0.1}]}}],"usage":{"prompt_tokens":5,"completion_tokens":1}});
        let reply = Reply::from_response(&body).unwrap();
        assert_eq!(
            (reply.text.as_str(), reply.finish_reason.as_deref()),
            ("B", Some("length"))
        );
        assert_eq!(reply.logprobs.len(), 1);
        assert!(Reply::from_response(&json!({"error": "x"})).is_err());
    }

    #[test]
    fn each_servers_words_for_a_prompt_too_long() {
        let cases = [
            // llama-server
            (
                r#"{"error":{"code":400,"message":"request (700 tokens) exceeds the available context size (512 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":700,"n_ctx":512}}"#,
                Some(Some(700)),
            ),
            // OpenAI and llama-cpp-python
            (
                r#"{"error":{"message":"This model's maximum context length is 512 tokens. However, you requested 760 tokens (700 in the messages, 60 in the completion).","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
                Some(None),
            ),
            // vLLM
            (
                r#"{"object":"error","message":"This model's maximum context length is 2048 tokens. However, you requested 2100 tokens","type":"BadRequestError","code":400}"#,
                Some(None),
            ),
            (
                r#"{"error":{"message":"unknown field: top_k","type":"invalid_request_error"}}"#,
                None,
            ),
            ("<html>bad request</html>", None),
        ];
        for (body, expected) in cases {
            assert_eq!(context_overflow(body), expected, "{body}");
        }
    }
}
