//! The OpenAI judge against a fault-injecting HTTP server on 127.0.0.1, written for these
//! tests: every failure a sweep meets (429 with Retry-After, 500/503, a hang past the
//! timeout, a reset connection, a stream cut short, malformed JSON, a bad key) ends as
//! specified, and every request is answered exactly once.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use judgelab_core::judge::StopReason;
use judgelab_core::{Judge, JudgeRequest, JudgeResponse, Message, Sampling};
use judgelab_openai::{ApiKey, Endpoint, OpenAiJudge};
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const SENTINEL_KEY: &str = "sk-judgelab-sentinel-0123456789";

/// What the server saw: requests per case, and the bodies and headers of all.
#[derive(Default)]
struct Log {
    per_case: HashMap<String, usize>,
    bodies: Vec<Value>,
    auth: Vec<String>,
}

struct Server {
    base_url: String,
    log: Arc<Mutex<Log>>,
    _runtime: tokio::runtime::Runtime,
}

impl Server {
    fn start() -> Server {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let log = Arc::new(Mutex::new(Log::default()));
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let shared = Arc::clone(&log);
        runtime.spawn(async move {
            loop {
                let (socket, _) = listener.accept().await.unwrap();
                tokio::spawn(serve(socket, Arc::clone(&shared)));
            }
        });
        Server {
            base_url,
            log,
            _runtime: runtime,
        }
    }

    fn count(&self, case: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .per_case
            .get(case)
            .copied()
            .unwrap_or(0)
    }
}

/// Reads one request; the last message's content names the case to play.
async fn serve(mut socket: TcpStream, log: Arc<Mutex<Log>>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let (head_end, length) = loop {
        let n = socket.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
            let length = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            break (end + 4, length);
        }
    };
    while buf.len() < head_end + length {
        let n = socket.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            return;
        }
        buf.extend_from_slice(&chunk[..n]);
    }
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let body: Value = serde_json::from_slice(&buf[head_end..head_end + length]).unwrap();
    let case = body["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    let stream = body["stream"].as_bool().unwrap_or(false);
    let nth = {
        let mut log = log.lock().unwrap();
        log.bodies.push(body.clone());
        log.auth.extend(
            head.lines()
                .filter(|l| l.to_lowercase().starts_with("authorization"))
                .map(str::to_string),
        );
        let n = log.per_case.entry(case.clone()).or_default();
        *n += 1;
        *n
    };
    let ok = || reply(stream, "A");
    let response = match (case.as_str(), nth) {
        ("429", 1) => status(
            429,
            "Retry-After: 1\r\n",
            r#"{"error":{"message":"rate limited"}}"#,
        ),
        ("5xx", 1) => status(500, "", "oops"),
        ("5xx", 2) => status(503, "", "overloaded"),
        ("hang", 1) => {
            tokio::time::sleep(Duration::from_secs(5)).await;
            return;
        }
        ("reset", 1) => return, // dropped without a byte: the connection is reset
        ("cut", 1) => {
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
            let part = "data: {\"choices\":[{\"delta\":{\"content\":\"A\"}}]}\n\n";
            let _ = socket.write_all(format!("{head}{part}").as_bytes()).await;
            return;
        }
        ("malformed", _) => {
            if stream {
                sse(&["{\"choices\": [ not json"])
            } else {
                status(200, "", "{\"choices\": [ not json")
            }
        }
        ("401", _) => status(
            401,
            "",
            &format!(r#"{{"error":{{"message":"Incorrect API key provided: {SENTINEL_KEY}"}}}}"#),
        ),
        ("long", _) => reply_with(stream, "A tie", "length"),
        // llama-server's answer to a prompt longer than its context.
        ("overflow", _) => status(
            400,
            "",
            r#"{"error":{"code":400,"message":"request (700 tokens) exceeds the available context size (512 tokens), try increasing it","type":"exceed_context_size_error","n_prompt_tokens":700,"n_ctx":512}}"#,
        ),
        // llama-cpp-python's answer to a prompt longer than its context: a stream begun
        // (the role), then cut before any content; unstreamed, a 400 that says why.
        ("cutlong", _) if stream => {
            let head =
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n";
            let part = "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n";
            let _ = socket.write_all(format!("{head}{part}").as_bytes()).await;
            return;
        }
        ("cutlong", _) => status(
            400,
            "",
            r#"{"error":{"message":"This model's maximum context length is 512 tokens. However, you requested 704 tokens (700 in the messages, 4 in the completion). Please reduce the length of the messages or completion.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}"#,
        ),
        // llama-cpp-python's stream that a new request interrupted: the role, then [DONE],
        // no content and no finish_reason.
        ("interrupted", 1) if stream => sse(&[
            r#"{"choices":[{"delta":{"role":"assistant"},"finish_reason":null}]}"#,
            "[DONE]",
        ]),
        // A server that streams no usage (llama-cpp-python), but reports it unstreamed.
        ("nousage", _) if stream => sse(&[
            r#"{"choices":[{"delta":{"content":"B"}}]}"#,
            r#"{"choices":[{"delta":{"content":" wins"},"finish_reason":"stop"}]}"#,
            "[DONE]",
        ]),
        _ => ok(),
    };
    let _ = socket.write_all(response.as_bytes()).await;
    let _ = socket.shutdown().await;
}

fn status(code: u16, headers: &str, body: &str) -> String {
    format!(
        "HTTP/1.1 {code} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n{headers}Connection: close\r\n\r\n{body}",
        body.len()
    )
}

fn sse(events: &[&str]) -> String {
    let mut out = String::from(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n",
    );
    for e in events {
        out.push_str(&format!("data: {e}\n\n"));
    }
    out
}

fn reply(stream: bool, text: &str) -> String {
    reply_with(stream, text, "stop")
}

fn reply_with(stream: bool, text: &str, finish: &str) -> String {
    if stream {
        let (first, rest) = text.split_at(1);
        sse(&[
            r#"{"choices":[{"delta":{"role":"assistant"}}]}"#,
            &format!(r#"{{"choices":[{{"delta":{{"content":"{first}"}}}}]}}"#),
            &format!(
                r#"{{"choices":[{{"delta":{{"content":"{rest}"}},"finish_reason":"{finish}"}}]}}"#
            ),
            r#"{"choices":[],"usage":{"prompt_tokens":21,"completion_tokens":2}}"#,
            "[DONE]",
        ])
    } else {
        status(
            200,
            "",
            &format!(
                r#"{{"choices":[{{"message":{{"content":"{text}"}},"finish_reason":"{finish}"}}],"usage":{{"prompt_tokens":21,"completion_tokens":2}}}}"#
            ),
        )
    }
}

fn endpoint(server: &Server) -> Endpoint {
    let mut e = Endpoint::new("remote", &server.base_url, "smollm2");
    e.api_key = Some(ApiKey::new(SENTINEL_KEY));
    e.key_source = "$JUDGELAB_TEST_KEY".into();
    e.timeout = Duration::from_millis(1500);
    e.backoff = Duration::from_millis(20);
    e.max_backoff = Duration::from_millis(100);
    e.max_attempts = 3;
    e
}

fn request(key: usize, case: &str) -> JudgeRequest {
    JudgeRequest {
        key,
        messages: vec![
            Message {
                role: "system".into(),
                content: "You are a judge.".into(),
            },
            Message {
                role: "user".into(),
                content: case.into(),
            },
        ],
        sampling: Sampling {
            temperature: 0.0,
            top_p: 1.0,
            max_tokens: 4,
            seed: 7,
        },
        logits: false,
        grammar: None,
        uncached: false,
    }
}

fn judge_all(judge: &OpenAiJudge, cases: &[&str]) -> Vec<JudgeResponse> {
    let requests = cases
        .iter()
        .enumerate()
        .map(|(i, c)| request(i, c))
        .collect();
    let mut responses = Vec::new();
    judge.judge_batch(requests, &Arc::new(AtomicBool::new(false)), &mut |r| {
        responses.push(r)
    });
    responses.sort_by_key(|r| r.key);
    responses
}

/// A stream cut before any content, by a server that has not streamed usage (as
/// llama-cpp-python does not): the same request unstreamed says the prompt is too long, and
/// the call is a `prompt_too_long` verdict after those two requests. Once the server has
/// streamed usage, the same cut is a cut stream, retried: no request is spent asking why.
#[test]
fn a_stream_cut_before_any_content_asks_why_once() {
    let server = Server::start();
    let judge = OpenAiJudge::new(endpoint(&server)).unwrap();
    let r = judge_all(&judge, &["cutlong"]).remove(0);
    let c = r.result.as_ref().unwrap();
    assert_eq!(c.stop, StopReason::PromptTooLong);
    assert_eq!((c.attempts, server.count("cutlong")), (2, 2));
    let unstreamed = |server: &Server| {
        let log = server.log.lock().unwrap();
        log.bodies.iter().filter(|b| b["stream"] == false).count()
    };
    assert_eq!(unstreamed(&server), 1);

    let server = Server::start();
    let judge = OpenAiJudge::new(endpoint(&server)).unwrap();
    judge_all(&judge, &["ok"]);
    let r = judge_all(&judge, &["cutlong"]).remove(0);
    let e = r.result.as_ref().unwrap_err();
    assert!(e.message.contains("ended before the reply did"), "{e}");
    assert_eq!((e.attempts, server.count("cutlong")), (3, 3));
    assert_eq!(unstreamed(&server), 0);
}

/// A stream that ends with `[DONE]` but no finish_reason was cut (llama-cpp-python's,
/// interrupted by another request). One call at a time, it is made again, and its verdict
/// and time to first token are the answer's, never an empty reply's; with several in
/// flight, the judge goes on one request at a time (retried side by side, the calls would
/// cut each other's streams) and says so.
#[test]
fn a_stream_done_without_a_finish_reason_is_cut() {
    let server = Server::start();
    let mut alone = endpoint(&server);
    alone.concurrency = 1;
    let judge = OpenAiJudge::new(alone).unwrap();
    let r = judge_all(&judge, &["interrupted"]).remove(0);
    let c = r.result.unwrap();
    assert_eq!(c.text, "A");
    assert!(c.ttft_ms.is_some_and(|t| t <= c.latency_ms));
    // The cut stream, the unstreamed request that asks whether the prompt was too long
    // (no server had streamed usage yet), and the stream made again.
    assert_eq!(server.count("interrupted"), 3);
    let unstreamed = server
        .log
        .lock()
        .unwrap()
        .bodies
        .iter()
        .filter(|b| b["stream"] == false)
        .count();
    assert_eq!(unstreamed, 1);

    // With several in flight, such a server serves one request at a time: the judge goes
    // on at one, makes the call again at once, and says so.
    let server = Server::start();
    let judge = OpenAiJudge::new(endpoint(&server)).unwrap();
    assert!(judge.notes().is_empty());
    let c = judge_all(&judge, &["interrupted", "ok"])
        .remove(0)
        .result
        .unwrap();
    assert_eq!((c.text.as_str(), c.attempts), ("A", 2));
    assert_eq!(server.count("interrupted"), 2);
    let notes = judge.notes();
    assert!(
        notes.len() == 1
            && notes[0].contains("one request at a time")
            && notes[0].contains("concurrency = 1 (in its [judge] or [[judges]] table"),
        "{notes:?}"
    );
}

#[test]
fn every_fault_ends_as_specified_and_every_call_is_answered_once() {
    let server = Server::start();
    let judge = OpenAiJudge::new(endpoint(&server)).unwrap();
    let cases = [
        "ok",
        "429",
        "5xx",
        "hang",
        "reset",
        "cut",
        "malformed",
        "long",
        "overflow",
    ];
    let responses = judge_all(&judge, &cases);
    assert_eq!(
        responses.iter().map(|r| r.key).collect::<Vec<_>>(),
        (0..cases.len()).collect::<Vec<_>>()
    );
    for (case, r) in cases.iter().zip(&responses) {
        match *case {
            "malformed" => {
                let e = r.result.as_ref().unwrap_err();
                assert!(
                    e.message.contains("malformed")
                        && e.message.contains("gave up after 3 attempts"),
                    "{e}"
                );
                assert_eq!(e.attempts as usize, server.count(case));
            }
            "long" => assert_eq!(r.result.as_ref().unwrap().stop, StopReason::MaxTokens),
            "overflow" => {
                // A verdict that failed, after one request: no retry makes it fit.
                let c = r.result.as_ref().unwrap();
                assert_eq!(c.stop, StopReason::PromptTooLong);
                assert_eq!((c.prompt_tokens, c.attempts), (700, 1));
            }

            _ => {
                let c = r.result.as_ref().unwrap_or_else(|e| panic!("{case}: {e}"));
                assert_eq!(c.text, "A", "{case}");
                assert_eq!((c.prompt_tokens, c.completion_tokens), (21, 2), "{case}");
                assert!(c.ttft_ms.is_some_and(|t| t <= c.latency_ms), "{case}");
                // Every attempt is counted on the completion.
                assert_eq!(c.attempts as usize, server.count(case), "{case}");
            }
        }
    }
    // One attempt for "ok"; a retry for each transient fault; 3 for the malformed body.
    let attempts: Vec<usize> = cases.iter().map(|c| server.count(c)).collect();
    assert_eq!(attempts, [1, 2, 3, 2, 2, 2, 3, 1, 1]);
    // Retry-After: 1 was honoured.
    let log = server.log.lock().unwrap();
    assert!(log.auth.iter().all(|a| a.ends_with(SENTINEL_KEY)));
    let body = &log.bodies[0];
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(
        (body["seed"].as_u64(), body["max_tokens"].as_u64()),
        (Some(7), Some(4))
    );
}

#[test]
fn a_bad_key_stops_the_judge_without_retrying_or_leaking_the_key() {
    let server = Server::start();
    let judge = OpenAiJudge::new(Endpoint {
        concurrency: 1,
        ..endpoint(&server)
    })
    .unwrap();
    let responses = judge_all(&judge, &["401", "ok", "ok"]);
    assert_eq!(responses.len(), 3);
    for r in &responses {
        let e = r.result.as_ref().unwrap_err();
        assert!(
            e.message.contains("HTTP 401") && e.message.contains("$JUDGELAB_TEST_KEY"),
            "{e}"
        );
        assert!(!e.message.contains(SENTINEL_KEY), "the key leaked: {e}");
    }
    // The refused call made one request; the calls after it none.
    let attempts: Vec<u32> = responses
        .iter()
        .map(|r| r.result.as_ref().unwrap_err().attempts)
        .collect();
    assert_eq!(attempts, [1, 0, 0]);
    // Never retried, and nothing more was sent once the key was known to be bad.
    assert_eq!((server.count("401"), server.count("ok")), (1, 0));
    assert!(!format!("{:?}", endpoint(&server)).contains(SENTINEL_KEY));
}

#[test]
fn without_streaming_a_whole_response_is_read() {
    let server = Server::start();
    let judge = OpenAiJudge::new(Endpoint {
        stream: false,
        ..endpoint(&server)
    })
    .unwrap();
    let responses = judge_all(&judge, &["ok", "5xx", "malformed"]);
    let c = responses[0].result.as_ref().unwrap();
    assert_eq!(
        (c.text.as_str(), c.prompt_tokens, c.ttft_ms),
        ("A", 21, None)
    );
    assert!(responses[1].result.is_ok());
    assert!(responses[2].result.is_err());
    assert_eq!(server.log.lock().unwrap().bodies[0]["stream"], false);
}

#[test]
fn a_stream_without_usage_is_counted_by_its_chunks_and_one_prompt_probe() {
    let server = Server::start();
    let judge = OpenAiJudge::new(endpoint(&server)).unwrap();
    let responses = judge_all(&judge, &["nousage"]);
    let c = responses[0].result.as_ref().unwrap();
    assert_eq!(c.text, "B wins");
    assert_eq!((c.prompt_tokens, c.completion_tokens), (21, 2));
    assert!(c.ttft_ms.is_some());
    // The call, then the unstreamed one-token request that counted the prompt.
    assert_eq!(server.count("nousage"), 2);
    let log = server.log.lock().unwrap();
    let probe = &log.bodies[1];
    assert_eq!(
        (probe["stream"].as_bool(), probe["max_tokens"].as_u64()),
        (Some(false), Some(1))
    );
    drop(log);
    // The same prompt again needs no second probe.
    judge_all(&judge, &["nousage"]);
    assert_eq!(server.count("nousage"), 3);
}

#[test]
fn a_pool_spreads_its_calls_and_moves_them_off_an_endpoint_that_is_down() {
    let (a, b) = (Server::start(), Server::start());
    let down = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}/v1", listener.local_addr().unwrap())
    };
    let mut e = endpoint(&a);
    e.pool = vec![b.base_url.clone()];
    let judge = OpenAiJudge::new(e.clone()).unwrap();
    let cases = ["ok"; 16];
    let responses = judge_all(&judge, &cases);
    let served = |url: &str| {
        responses
            .iter()
            .filter(|r| r.result.as_ref().unwrap().endpoint.as_deref() == Some(url))
            .count()
    };
    // Both endpoints answered, each verdict says which, and none was asked twice.
    assert_eq!(served(&a.base_url) + served(&b.base_url), 16);
    assert!(served(&a.base_url) >= 4 && served(&b.base_url) >= 4);
    assert_eq!(
        (a.count("ok"), b.count("ok")),
        (served(&a.base_url), served(&b.base_url))
    );

    // With one endpoint not listening, its first calls are refused once each and moved to
    // the other at once; nothing fails.
    let mut e = endpoint(&a);
    e.base_url = down.clone();
    e.pool = vec![a.base_url.clone()];
    e.backoff = Duration::from_secs(5);
    e.max_backoff = Duration::from_secs(5);
    let before = a.count("ok");
    let judge = OpenAiJudge::new(e).unwrap();
    let started = std::time::Instant::now();
    let responses = judge_all(&judge, &cases);
    let attempts: u32 = responses
        .iter()
        .map(|r| {
            let c = r.result.as_ref().unwrap();
            assert_eq!(c.endpoint.as_deref(), Some(a.base_url.as_str()));
            c.attempts
        })
        .sum();
    assert_eq!(a.count("ok") - before, 16);
    // The calls that tried the dead endpoint before its breaker opened (at most the four
    // in flight) made one more request each, and waited no backoff for it.
    assert!((16..=20).contains(&attempts), "{attempts}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}
