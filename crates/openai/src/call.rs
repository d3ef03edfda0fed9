//! One call: wait for the limits, send, read the whole or streamed reply, and retry what a
//! retry can fix.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use judgelab_core::judge::{CallError, Completion, StopReason};
use judgelab_core::rng::SplitMix64;
use judgelab_core::JudgeRequest;
use serde_json::Value;

use crate::pool::Attempt;
use crate::sse::{Event, SseParser};
use crate::wire::{context_overflow, exact_body, request_body, shorten, Reply};
use crate::{estimate_tokens, Endpoint, Inner};

/// Why an attempt failed.
enum Failure {
    /// Worth another attempt, after the server's `Retry-After` if it gave one.
    Retry {
        message: String,
        after: Option<Duration>,
        /// How it bears on the endpoint's health.
        health: Attempt,
    },
    /// No retry can fix it; the judge stops calling.
    Fatal(String),
}

fn retry(message: impl Into<String>) -> Failure {
    Failure::Retry {
        message: message.into(),
        after: None,
        health: Attempt::Failed,
    }
}

/// Runs a call to the end: a completion, or the message of its last failure with the
/// requests it made.
pub(crate) async fn call(inner: &Inner, request: JudgeRequest) -> Result<Completion, CallError> {
    let endpoint = &inner.endpoint;
    let mut body = match request.logits {
        true => exact_body(endpoint, &request.messages),
        false => request_body(endpoint, &request.messages, &request.sampling),
    };
    if request.uncached && inner.llama_cpp.load(std::sync::atomic::Ordering::SeqCst) {
        body["cache_prompt"] = Value::Bool(false);
    }
    let tokens = (estimate_tokens(&request.messages) + request.sampling.max_tokens as usize) as f64;
    let mut attempt = 0;
    // What the caller waited, from its first attempt (rate-limit waits before it aside):
    // a retried call's latency and TTFT include the attempts that failed and the backoff.
    let mut first_sent: Option<Instant> = None;
    loop {
        if let Some(fatal) = inner.fatal.lock().expect("never poisoned").clone() {
            return Err(CallError::after(attempt, fatal));
        }
        if let Some(bucket) = &inner.requests {
            bucket.take(1.0).await;
        }
        if let Some(bucket) = &inner.tokens {
            bucket.take(tokens).await;
        }
        attempt += 1;
        let sent = Instant::now();
        let waited_ms = first_sent.get_or_insert(sent).elapsed().as_secs_f64() * 1000.0;
        let lease = inner.pool.lease();
        let base_url = lease.base_url().to_string();
        let result = attempt_once(inner, &base_url, &body).await;
        lease.finish(match &result {
            Ok(_) | Err(Failure::Fatal(_)) => Attempt::Answered,
            Err(Failure::Retry { health, .. }) => *health,
        });
        match result {
            Ok(completion) => {
                // An attempt may have made a request of its own to learn why its stream
                // was cut (`probe`): counted, as every request a call made.
                return Ok(Completion {
                    attempts: attempt + completion.attempts - 1,
                    latency_ms: completion.latency_ms + waited_ms,
                    ttft_ms: completion.ttft_ms.map(|t| t + waited_ms),
                    endpoint: Some(base_url),
                    ..completion
                });
            }
            Err(Failure::Fatal(message)) => {
                let message = inner.redact(&message);
                *inner.fatal.lock().expect("never poisoned") = Some(message.clone());
                return Err(CallError::after(attempt, message));
            }
            Err(Failure::Retry { message, after, .. }) => {
                if attempt >= endpoint.max_attempts {
                    let message = inner.redact(&message);
                    return Err(CallError::after(
                        attempt,
                        format!("{message} (gave up after {attempt} attempts)"),
                    ));
                }
                // An endpoint of a pool just taken out of service: the others are up, so
                // the call moves to one of them now rather than waiting out a backoff
                // meant for an overloaded server.
                let elsewhere =
                    inner.pool.is_out(&base_url) && inner.pool.another_in_service(&base_url);
                if !elsewhere {
                    tokio::time::sleep(after.unwrap_or_else(|| backoff(inner, attempt))).await;
                }
            }
        }
    }
}

/// Exponential backoff with full jitter in its upper half: `base * 2^(attempt-1)`, capped,
/// times a random factor in [0.5, 1), so that parallel calls do not retry in step.
fn backoff(inner: &Inner, attempt: u32) -> Duration {
    let e = &inner.endpoint;
    let exp = e.backoff.as_secs_f64() * 2f64.powi(attempt.saturating_sub(1).min(20) as i32);
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let jitter = 0.5
        + 0.5
            * (SplitMix64::new(u64::from(nanos) ^ u64::from(attempt)).next_u64() as f64
                / u64::MAX as f64);
    Duration::from_secs_f64(exp.min(e.max_backoff.as_secs_f64()) * jitter)
}

fn from_reqwest(e: reqwest::Error) -> Failure {
    // A pooled connection that the server had closed (llama-server closes one after a few
    // requests) fails before the request is read: worth another attempt at once, not after
    // a backoff. It still counts as an attempt.
    let stale = {
        let mut source = std::error::Error::source(&e);
        let mut found = false;
        while let Some(cause) = source {
            found |= cause
                .downcast_ref::<hyper::Error>()
                .is_some_and(hyper::Error::is_incomplete_message);
            source = cause.source();
        }
        found && e.is_request()
    };
    // Timeouts, refused or reset connections and bodies cut short are all transient.
    let kind = if e.is_timeout() {
        "timed out"
    } else if e.is_connect() {
        "could not connect"
    } else {
        "failed"
    };
    let mut message = format!("the request {kind}: {e}");
    let mut source = std::error::Error::source(&e);
    while let Some(cause) = source {
        message.push_str(&format!(": {cause}"));
        source = cause.source();
    }
    Failure::Retry {
        message,
        after: stale.then_some(Duration::ZERO),
        // A connection closed before any answer is also what a dead server behind a proxy
        // gives: it counts against the endpoint, and a healthy one's next answer clears it.
        health: if e.is_connect() {
            Attempt::Refused
        } else {
            Attempt::Failed
        },
    }
}

/// `Retry-After` in seconds (the form APIs use), capped at two minutes.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let seconds: f64 = headers
        .get("retry-after")?
        .to_str()
        .ok()?
        .trim()
        .parse()
        .ok()?;
    (seconds.is_finite() && seconds >= 0.0).then(|| Duration::from_secs_f64(seconds.min(120.0)))
}

async fn attempt_once(inner: &Inner, base_url: &str, body: &Value) -> Result<Completion, Failure> {
    let endpoint = &inner.endpoint;
    // A server that serves one request at a time gets one.
    let _turn = match inner
        .one_at_a_time
        .load(std::sync::atomic::Ordering::SeqCst)
    {
        true => Some(inner.serial.lock().await),
        false => None,
    };
    let url = format!("{base_url}/chat/completions");
    let started = Instant::now();
    let mut request = inner.client.post(&url).json(body).timeout(endpoint.timeout);
    if let Some(key) = &endpoint.api_key {
        request = request.bearer_auth(&key.0);
    }
    let response = request.send().await.map_err(from_reqwest)?;
    let status = response.status();
    if !status.is_success() {
        return refused(endpoint, &url, response, started).await;
    }
    // An exact pass asks for one token, whole.
    let stream = body["stream"].as_bool().unwrap_or(false);
    let (reply, ttft) = if stream {
        match read_stream(inner, &url, body, response, started).await? {
            Streamed::Reply(reply, ttft) => (reply, ttft),
            Streamed::TooLong(completion) => return Ok(completion),
        }
    } else {
        let text = response.text().await.map_err(from_reqwest)?;
        let value: Value = serde_json::from_str(&text).map_err(|e| {
            retry(format!(
                "malformed response from {url}: {e}: {}",
                shorten(&text)
            ))
        })?;
        (Reply::from_response(&value).map_err(retry)?, None)
    };
    Ok(completion(inner, &url, body, reply, ttft, started, stream).await)
}

/// What a non-success status means: a prompt too long for the context (a completion that
/// failed as the local judge's does), a failure to retry, or one no retry can fix.
async fn refused(
    endpoint: &Endpoint,
    url: &str,
    response: reqwest::Response,
    started: Instant,
) -> Result<Completion, Failure> {
    let status = response.status();
    let after = retry_after(response.headers());
    let text = response.text().await.unwrap_or_default();
    if matches!(status.as_u16(), 400 | 413 | 422) {
        if let Some(prompt_tokens) = context_overflow(&text) {
            // No retry can make the prompt fit, and the next prompt may: a verdict that
            // failed as the local judge's does, not a failed call and not a stop.
            return Ok(too_long(prompt_tokens, started));
        }
    }
    let message = format!("HTTP {} from {url}: {}", status, shorten(&text));
    Err(match status.as_u16() {
        408 | 409 | 425 | 429 | 500..=599 => Failure::Retry {
            message,
            after,
            health: Attempt::Failed,
        },
        401 | 403 => Failure::Fatal(format!(
            "{message}; check the API key ({})",
            endpoint.key_source
        )),
        404 => Failure::Fatal(format!(
            "{message}; check base_url and the model name {:?}",
            endpoint.model
        )),
        _ => Failure::Fatal(format!("{message}; the server rejected the request")),
    })
}

/// What a stream came to: a whole reply and when its first content came, or a prompt too
/// long for the context, which the server said when the cut request was asked again.
enum Streamed {
    Reply(Reply, Option<f64>),
    TooLong(Completion),
}

/// Reads a streamed reply; a stream cut short is a failure (or a too-long prompt).
async fn read_stream(
    inner: &Inner,
    url: &str,
    body: &Value,
    mut response: reqwest::Response,
    started: Instant,
) -> Result<Streamed, Failure> {
    let endpoint = &inner.endpoint;
    let mut reply = Reply::default();
    let mut ttft = None;
    let mut parser = SseParser::default();
    let mut done = false;
    let mut handle = |events: Vec<Event>, reply: &mut Reply| -> Result<(), Failure> {
        for event in events {
            match event {
                Event::Done => done = true,
                Event::Data(data) => {
                    let chunk: Value = serde_json::from_str(&data).map_err(|e| {
                        retry(format!(
                            "malformed stream chunk from {url}: {e}: {}",
                            shorten(&data)
                        ))
                    })?;
                    if chunk["error"].is_object() || chunk["error"].is_string() {
                        return Err(retry(format!(
                            "the stream from {url} reported an error: {}",
                            shorten(&data)
                        )));
                    }
                    if !reply.add_chunk(&chunk).is_empty() && ttft.is_none() {
                        ttft = Some(started.elapsed().as_secs_f64() * 1000.0);
                    }
                }
            }
        }
        Ok(())
    };
    // A stream cut short, by an end before the reply's or by a broken body.
    let mut broken = None;
    loop {
        match response.chunk().await {
            Ok(Some(bytes)) => handle(parser.push(&bytes), &mut reply)?,
            Ok(None) => break,
            Err(e) => {
                broken = Some((e.is_timeout(), from_reqwest(e)));
                break;
            }
        }
    }
    if broken.is_none() {
        handle(parser.finish(), &mut reply)?;
    }
    // Every server ends a whole reply's choice with a finish_reason. A stream that ends
    // without one was cut, even where `[DONE]` closed it: llama-cpp-python ends a
    // stream so, with no content, when a new request interrupts it.
    if broken.is_some() || reply.finish_reason.is_none() {
        let serial = inner
            .one_at_a_time
            .load(std::sync::atomic::Ordering::SeqCst);
        if done && endpoint.concurrency > 1 && !serial {
            return Err(one_at_a_time(inner, url));
        }
        let timed_out = broken.as_ref().is_some_and(|(t, _)| *t);
        if let Some(completion) =
            too_long_by_its_cut(inner, url, body, &reply, timed_out, started).await
        {
            return Ok(Streamed::TooLong(completion));
        }
        return Err(broken.map_or_else(
            || retry(format!("the stream from {url} ended before the reply did")),
            |(_, failure)| failure,
        ));
    }
    Ok(Streamed::Reply(reply, ttft))
}

/// A stream the server ended when another request arrived: from now on, one request at a
/// time, and this call again at once.
fn one_at_a_time(inner: &Inner, url: &str) -> Failure {
    inner
        .one_at_a_time
        .store(true, std::sync::atomic::Ordering::SeqCst);
    Failure::Retry {
        message: format!(
            "the stream from {url} ended with [DONE] and no finish_reason when another request arrived: {}",
            crate::ONE_AT_A_TIME
        ),
        after: Some(Duration::ZERO),
        health: Attempt::Answered,
    }
}

/// The completion a whole reply makes, its prompt counted where the stream had no usage.
/// An unstreamed reply of one token (an exact pass's) brought its first token with it.
async fn completion(
    inner: &Inner,
    url: &str,
    body: &Value,
    reply: Reply,
    ttft: Option<f64>,
    started: Instant,
    stream: bool,
) -> Completion {
    let latency_ms = started.elapsed().as_secs_f64() * 1000.0;
    if reply.llama_cpp {
        inner
            .llama_cpp
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
    if stream && reply.prompt_tokens.is_some() {
        inner
            .usage_streamed
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }
    // Some servers (llama-cpp-python) report no usage when streaming. The completion is then
    // counted by its content chunks, and the prompt by one small unstreamed request per
    // distinct prompt, made after the call was timed.
    let prompt_tokens = match reply.prompt_tokens {
        Some(n) => n,
        None if stream => count_prompt(inner, url, body).await.unwrap_or(0),
        None => 0,
    };
    let top_logprobs = reply.first_token_logprobs();
    Completion {
        stop: match reply.finish_reason.as_deref() {
            Some("length") => StopReason::MaxTokens,
            _ => StopReason::EndOfTurn,
        },
        prompt_tokens,
        completion_tokens: reply.completion_tokens.unwrap_or(reply.deltas),
        text: reply.text,
        latency_ms,
        ttft_ms: ttft.or((!stream && reply.completion_tokens == Some(1)).then_some(latency_ms)),
        cached_tokens: reply.cached_tokens,
        attempts: 1,
        top_logprobs,
        logprobs: (!reply.logprobs.is_empty()).then(|| Value::Array(reply.logprobs).to_string()),
        decoded_tokens: None,
        endpoint: None,
        logits: None,
    }
}

/// A stream cut before any content, as llama-cpp-python cuts one when the prompt does not
/// fit its context (it starts the stream before it reads the prompt): the same request
/// unstreamed says whether that was why, and a prompt too long is a completion after those
/// two requests, since no retry would make it fit. Not asked of a server that has streamed
/// usage, which llama-cpp-python does not, nor of a call that timed out.
async fn too_long_by_its_cut(
    inner: &Inner,
    url: &str,
    body: &Value,
    reply: &Reply,
    timed_out: bool,
    started: Instant,
) -> Option<Completion> {
    let cut_early = reply.deltas == 0 && reply.text.is_empty() && !timed_out;
    if !cut_early
        || inner
            .usage_streamed
            .load(std::sync::atomic::Ordering::SeqCst)
    {
        return None;
    }
    match probe(inner, url, body).await {
        Probe::TooLong(prompt_tokens) => Some(Completion {
            attempts: 2,
            ..too_long(prompt_tokens, started)
        }),
        Probe::Tokens(_) | Probe::Unknown => None,
    }
}

/// The completion of a prompt the server's context cannot hold: nothing generated.
fn too_long(prompt_tokens: Option<u32>, started: Instant) -> Completion {
    Completion {
        text: String::new(),
        prompt_tokens: prompt_tokens.unwrap_or(0),
        completion_tokens: 0,
        latency_ms: started.elapsed().as_secs_f64() * 1000.0,
        ttft_ms: None,
        stop: StopReason::PromptTooLong,
        cached_tokens: None,
        attempts: 1,
        logprobs: None,
        decoded_tokens: None,
        endpoint: None,
        logits: None,
        top_logprobs: None,
    }
}

/// The prompt tokens of `body`'s messages, from the usage of an unstreamed one-token
/// request; remembered per prompt. `None` if the server will not say.
async fn count_prompt(inner: &Inner, url: &str, body: &Value) -> Option<u32> {
    let key = judgelab_core::hash::sha256_hex(body["messages"].to_string());
    if let Some(&n) = inner
        .prompt_tokens
        .lock()
        .expect("never poisoned")
        .get(&key)
    {
        return Some(n);
    }
    let Probe::Tokens(n) = probe(inner, url, body).await else {
        return None;
    };
    inner
        .prompt_tokens
        .lock()
        .expect("never poisoned")
        .insert(key, n);
    Some(n)
}

/// What an unstreamed one-token request of `body`'s messages says of its prompt.
enum Probe {
    Tokens(u32),
    /// Longer than the server's context, of this many tokens where it says.
    TooLong(Option<u32>),
    /// Nothing: it failed, or reported no usage.
    Unknown,
}

async fn probe(inner: &Inner, url: &str, body: &Value) -> Probe {
    let mut probe = body.clone();
    let Some(object) = probe.as_object_mut() else {
        return Probe::Unknown;
    };
    for field in [
        "stream_options",
        "logprobs",
        "top_logprobs",
        "response_format",
    ] {
        object.remove(field);
    }
    object.insert("stream".into(), Value::Bool(false));
    object.insert("max_tokens".into(), Value::from(1));
    let send = || {
        let request = inner
            .client
            .post(url)
            .json(&probe)
            .timeout(inner.endpoint.timeout);
        match &inner.endpoint.api_key {
            Some(key) => request.bearer_auth(&key.0),
            None => request,
        }
        .send()
    };
    // Sent right after a stream the server cut, it may go out on the connection the server
    // is closing: once more on a fresh one.
    let response = match send().await {
        Ok(response) => response,
        Err(_) => match send().await {
            Ok(response) => response,
            Err(_) => return Probe::Unknown,
        },
    };
    let status = response.status();
    let Ok(text) = response.text().await else {
        return Probe::Unknown;
    };
    if !status.is_success() {
        return match context_overflow(&text) {
            Some(prompt_tokens) if matches!(status.as_u16(), 400 | 413 | 422) => {
                Probe::TooLong(prompt_tokens)
            }
            _ => Probe::Unknown,
        };
    }
    serde_json::from_str::<Value>(&text)
        .ok()
        .and_then(|v| v["usage"]["prompt_tokens"].as_u64())
        .and_then(|n| u32::try_from(n).ok())
        .map_or(Probe::Unknown, Probe::Tokens)
}
