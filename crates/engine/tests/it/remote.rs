//! Remote judges through the engine, against a minimal OpenAI-compatible server on
//! 127.0.0.1: usage, TTFT and cost recorded, and the response cache replaying answers.

use crate::Columns;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use judgelab_engine::{run_experiment, summarize, RunOptions};
use judgelab_store::Store;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// Streams "A" to every request; counts them.
async fn server() -> (String, Arc<AtomicUsize>) {
    let (url, calls, _) = server_with_auth().await;
    (url, calls)
}

/// The same, answering 401 while the returned flag is set.
async fn server_with_auth() -> (String, Arc<AtomicUsize>, Arc<AtomicBool>) {
    let reject = Arc::new(AtomicBool::new(false));
    let rejecting = Arc::clone(&reject);
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let calls = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&calls);
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let counter = Arc::clone(&counter);
            let rejecting = Arc::clone(&rejecting);
            tokio::spawn(async move {
                if read_request(&mut socket).await.is_none() {
                    return;
                }
                counter.fetch_add(1, Ordering::SeqCst);
                if rejecting.load(Ordering::SeqCst) {
                    let body = r#"{"error":{"message":"invalid api key"}}"#;
                    let out = format!("HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
                    let _ = socket.write_all(out.as_bytes()).await;
                    let _ = socket.shutdown().await;
                    return;
                }
                let events = [
                    r#"{"choices":[{"delta":{"content":"A"},"finish_reason":"stop"}]}"#,
                    r#"{"choices":[],"usage":{"prompt_tokens":21,"completion_tokens":2}}"#,
                    "[DONE]",
                ];
                let mut out = String::from("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n");
                for e in events {
                    out.push_str(&format!("data: {e}\n\n"));
                }
                let _ = socket.write_all(out.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    (url, calls, reject)
}

/// Reads one HTTP request, its head and the body it announces: the body, or `None` where
/// the client hung up first.
pub(crate) async fn read_request(socket: &mut tokio::net::TcpStream) -> Option<Vec<u8>> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    loop {
        let n = socket.read(&mut chunk).await.unwrap_or(0);
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_lowercase();
            let length: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return Some(buf.split_off(end + 4));
            }
        }
    }
}

fn experiment(dir: &std::path::Path, name: &str, url: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\ndataset = \"items.jsonl\"\n[judge]\nbackend = \"openai\"\nbase_url = \"{url}\"\nmodel = \"fake\"\ntemplate = \"q.jinja\"\napi_key_env = \"JUDGELAB_ENGINE_TEST_KEY\"\n[judge.prices.fake]\ninput = 1.0\noutput = 2.0\n[sweep]\nmax_tokens = 4\n"
        ),
    )
    .unwrap();
    path
}

/// Six pairwise items labelled A, a template that is the question, and the test's key.
fn fixture() -> tempfile::TempDir {
    std::env::set_var("JUDGELAB_ENGINE_TEST_KEY", "sk-engine-test");
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (0..6)
        .map(|i| format!(r#"{{"id":"i{i}","task":"pairwise","question":"q{i}","answer_a":"a","answer_b":"b","human_label":"A"}}"#))
        .collect();
    std::fs::write(dir.path().join("items.jsonl"), lines.join("\n")).unwrap();
    std::fs::write(dir.path().join("q.jinja"), "{{ question }}").unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_sweep_records_usage_and_cost_and_never_pays_twice() {
    let dir = fixture();
    let (url, calls) = server().await;
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();

    let first = run_experiment(
        &store,
        &experiment(dir.path(), "one", &url),
        RunOptions::default(),
        &mut |_| {},
    )
    .await
    .unwrap();
    assert_eq!(
        (first.judged_now, first.n_errors, first.cache_hits),
        (6, 0, 0)
    );
    assert_eq!(calls.load(Ordering::SeqCst), 6);
    let s = summarize(&store, "one", &Default::default()).await.unwrap();
    let m = &s.trials[0].metrics;
    assert_eq!(m.accuracy(), Some(1.0));
    assert_eq!(m.prompt_tokens_per_item, Some(21.0));
    assert!(m.ttft_ms.p50.is_some());
    // 21 input tokens at $1/M and 2 output tokens at $2/M, per 1,000 items.
    let usd = m.usd_per_1k_items.unwrap();
    assert!((usd - 0.025).abs() < 1e-12, "{usd}");
    assert!(s.trials[0].model_sha256.is_none());

    // The same calls under another name are replayed from the cache: no HTTP at all.
    let second = run_experiment(
        &store,
        &experiment(dir.path(), "two", &url),
        RunOptions::default(),
        &mut |_| {},
    )
    .await
    .unwrap();
    assert_eq!((second.judged_now, second.cache_hits), (6, 6));
    assert_eq!(calls.load(Ordering::SeqCst), 6);
    let rows = store
        .verdicts(
            summarize(&store, "two", &Default::default())
                .await
                .unwrap()
                .trials[0]
                .id,
        )
        .await
        .unwrap();
    assert!(rows
        .iter()
        .all(|r| r.cache_hit && r.verdict().as_deref() == Some("A")));

    // --no-cache calls again.
    let options = RunOptions {
        no_cache: true,
        ..RunOptions::default()
    };
    let third = run_experiment(
        &store,
        &experiment(dir.path(), "three", &url),
        options,
        &mut |_| {},
    )
    .await
    .unwrap();
    assert_eq!(third.cache_hits, 0);
    assert_eq!(calls.load(Ordering::SeqCst), 12);

    // The key is in no row of the database.
    store.close().await;
    let bytes = std::fs::read(dir.path().join("db.sqlite")).unwrap();
    assert!(!String::from_utf8_lossy(&bytes).contains("sk-engine-test"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_key_fails_every_call_once_and_the_next_run_recovers_them_all() {
    let dir = fixture();
    let (url, calls, reject) = server_with_auth().await;
    reject.store(true, Ordering::SeqCst);
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
    let file = experiment(dir.path(), "auth", &url);

    let first = run_experiment(&store, &file, RunOptions::default(), &mut |_| {})
        .await
        .unwrap();
    // The calls already in flight (4 at once by default) learn the key is bad; the others
    // fail without reaching the server.
    assert_eq!((first.judged_now, first.n_errors), (6, 6));
    let reached = calls.load(Ordering::SeqCst);
    assert!((1..=4).contains(&reached), "{reached}");
    let trial = summarize(&store, "auth", &Default::default())
        .await
        .unwrap()
        .trials[0]
        .id;
    let rows = store.verdicts(trial).await.unwrap();
    assert_eq!(rows.len(), 6);
    assert!(rows.iter().all(|r| r
        .error()
        .is_some_and(|e| e.contains("HTTP 401") && e.contains("$JUDGELAB_ENGINE_TEST_KEY"))));

    // Fixed: the next run retries exactly the failed calls, and nothing is duplicated.
    reject.store(false, Ordering::SeqCst);
    let second = run_experiment(&store, &file, RunOptions::default(), &mut |_| {})
        .await
        .unwrap();
    assert_eq!((second.judged_now, second.n_errors), (6, 0));
    assert_eq!(calls.load(Ordering::SeqCst), reached + 6);
    let rows = store.verdicts(trial).await.unwrap();
    assert_eq!(rows.len(), 6);
    assert!(rows
        .iter()
        .all(|r| r.error().is_none() && r.verdict().as_deref() == Some("A")));
}

/// An alignment of a priced remote judge within a budget in dollars: the plan says what
/// each call may cost and refuses a budget too small; the search counts every call at its
/// most and never passes the budget; the outcome reports what the usage priced.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_alignment_keeps_to_a_budget_in_dollars() {
    use judgelab_core::align::plan::Budget;
    use judgelab_engine::align::{align, plan, AlignRequest};

    let dir = fixture();
    // 30 items, half labelled B: a judge that always answers A gets half of them wrong.
    let lines: Vec<String> = (0..30)
        .map(|i| {
            let label = if i % 2 == 0 { "A" } else { "B" };
            format!(r#"{{"id":"i{i}","task":"pairwise","question":"question {i}","answer_a":"a","answer_b":"b","human_label":"{label}"}}"#)
        })
        .collect();
    std::fs::write(dir.path().join("items.jsonl"), lines.join("\n")).unwrap();
    let (url, calls) = server().await;
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
    let file = experiment(dir.path(), "priced", &url);
    let toml = std::fs::read_to_string(&file).unwrap()
        + "[limits]\ntest = 10\n[selection]\nmetric = \"accuracy\"\nstrategy = \"race\"\nround = 5\nmin_items = 10\n";
    std::fs::write(&file, toml).unwrap();
    run_experiment(&store, &file, RunOptions::default(), &mut |_| {})
        .await
        .unwrap();
    let trial = summarize(&store, "priced", &Default::default())
        .await
        .unwrap()
        .trials[0]
        .id;
    let request = |usd: f64| {
        let budget = Budget {
            calls: None,
            usd: Some(usd),
        };
        let mut r = AlignRequest::new("priced", trial, budget);
        r.options.timed_calls = 0;
        r
    };

    // A tiny budget is refused with what one generation needs.
    let err = plan(&store, &request(0.000_01))
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("does not cover one generation"), "{err}");
    let p = plan(&store, &request(1.0)).await.unwrap();
    let (cap, per_call) = (p.prompt_cap.unwrap(), p.usd_per_call.unwrap());
    // A call's most: its prompt at the cap ($1/M) and its 4 output tokens ($2/M).
    assert!((per_call - (cap as f64 + 8.0) / 1e6).abs() < 1e-12, "{p:?}");
    assert!(p.max_usd.unwrap() <= 1.0, "{p:?}");

    assert_eq!(
        p.usd_at_most(p.max_calls, 0),
        Some(p.max_calls as f64 * per_call)
    );
    // A generation's 60 dev calls, its proposer call and 30 test calls fit; two do not.
    let budget = 0.2;
    let one = plan(&store, &request(budget)).await.unwrap();
    assert_eq!(one.generations, 1, "{one:?}");
    let before = calls.load(Ordering::SeqCst);
    let o = align(&store, &request(budget), &mut |_| {}).await.unwrap();
    let made = (calls.load(Ordering::SeqCst) - before) as u64;
    assert!(
        made <= o.spent_calls,
        "{made} HTTP calls, {} counted",
        o.spent_calls
    );
    let proposer: u64 = o
        .candidates
        .iter()
        .filter_map(|c| c.candidate.proposal.as_ref())
        .map(|p| u64::from(p.sends))
        .sum();
    let most = o
        .plan
        .usd_at_most(o.spent_calls - proposer, proposer)
        .unwrap();
    assert!(most <= budget + 1e-12, "{most} of {budget}");
    // 21 prompt and 2 completion tokens a call, as the fake server's usage says.
    let usd = o.spent_usd.unwrap();
    assert!(
        (usd - made as f64 * 25e-6).abs() < 1e-9,
        "{usd} for {made} calls"
    );
    assert!(usd <= most);
}
