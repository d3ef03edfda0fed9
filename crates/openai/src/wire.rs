//! The chat completion API on the wire: the request body, and what is read back from a
//! whole response or from the chunks of a stream.

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
