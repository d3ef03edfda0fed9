//! Exact verdicts from a remote judge, against a scripted OpenAI-compatible server on
//! 127.0.0.1: one call per item serves a temperature × top_p grid, the mass the server
//! left out is kept, a call's price is paid once, and a server without log-probabilities
//! makes the run say so and generate.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use judgelab_engine::{run_experiment, summarize, RunEvent, RunOptions};
use judgelab_store::Store;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use crate::remote::read_request;
use tokio::net::TcpListener;

/// What the server saw: every request body.
#[derive(Default)]
struct Seen {
    bodies: Mutex<Vec<Value>>,
    calls: AtomicUsize,
}

/// Answers an exact request (`top_logprobs`) with A 0.6, " A" 0.1, B 0.2, "The" 0.05 as
/// the first token's most likely tokens (0.05 left out), unless `logprobs` is unset; any
/// other request with a generated "B".
async fn server(logprobs: Arc<AtomicBool>) -> (String, Arc<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/v1", listener.local_addr().unwrap());
    let seen = Arc::new(Seen::default());
    let shared = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let (mut socket, _) = listener.accept().await.unwrap();
            let seen = Arc::clone(&shared);
            let logprobs = Arc::clone(&logprobs);
            tokio::spawn(async move {
                let Some(body) = read_request(&mut socket).await else {
                    return;
                };
                let body: Value = serde_json::from_slice(&body).unwrap_or_default();
                seen.calls.fetch_add(1, Ordering::SeqCst);
                seen.bodies.lock().unwrap().push(body.clone());
                let exact = body["top_logprobs"].is_u64();
                let answer = if exact && logprobs.load(Ordering::SeqCst) {
                    let top: Vec<Value> = [("A", 0.6), (" A", 0.1), ("B", 0.2), ("The", 0.05)]
                        .iter()
                        .map(|(t, p)| json!({"token": t, "logprob": f64::ln(*p)}))
                        .collect();
                    json!({"choices":[{"message":{"content":"A"},"finish_reason":"length",
                        "logprobs":{"content":[{"token":"A","logprob":f64::ln(0.6),"top_logprobs":top}]}}],
                        "usage":{"prompt_tokens":21,"completion_tokens":1}})
                } else {
                    json!({"choices":[{"message":{"content":"B"},"finish_reason":"stop"}],
                        "usage":{"prompt_tokens":21,"completion_tokens":1}})
                };
                let answer = answer.to_string();
                let out = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{answer}",
                    answer.len()
                );
                let _ = socket.write_all(out.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });
    (url, seen)
}

/// Six pairwise items labelled A (the last two B), and a template that is the question.
fn fixture() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (0..6)
        .map(|i| {
            let label = if i < 4 { "A" } else { "B" };
            format!(r#"{{"id":"i{i}","task":"pairwise","question":"q{i}","answer_a":"a","answer_b":"b","human_label":"{label}"}}"#)
        })
        .collect();
    std::fs::write(dir.path().join("items.jsonl"), lines.join("\n")).unwrap();
    std::fs::write(dir.path().join("q.jinja"), "{{ question }}").unwrap();
    dir
}

/// A 12-point temperature × top_p grid of one-token verdicts from a priced remote judge.
fn experiment(dir: &std::path::Path, name: &str, url: &str, exact: &str) -> std::path::PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(
        &path,
        format!(
            "name = \"{name}\"\ndataset = \"items.jsonl\"\n[judge]\nbackend = \"openai\"\nbase_url = \"{url}\"\nmodel = \"fake\"\ntemplate = \"q.jinja\"\nstream = false\n{exact}\n[judge.prices.fake]\ninput = 1.0\noutput = 2.0\n[sweep]\nmax_tokens = 1\ntemperature = [0.0, 0.3, 0.7, 1.0]\ntop_p = [0.5, 0.85, 1.0]\n"
        ),
    )
    .unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_remote_grid_costs_one_call_per_item_and_keeps_what_the_server_left_out() {
    let dir = fixture();
    let (url, seen) = server(Arc::new(AtomicBool::new(true))).await;
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
    let mut events = Vec::new();
    let run = run_experiment(
        &store,
        &experiment(dir.path(), "grid", &url, ""),
        RunOptions::default(),
        &mut |e| events.push(e),
    )
    .await
    .unwrap();
    // One call asks whether the server returns log-probabilities; then one per item.
    assert_eq!(seen.calls.load(Ordering::SeqCst), 1 + 6);
    assert_eq!((run.model_calls, run.judged_now, run.n_errors), (6, 72, 0));
    assert!(!events.iter().any(|e| matches!(e, RunEvent::Note { .. })));
    let bodies = seen.bodies.lock().unwrap().clone();
    assert!(bodies.iter().all(|b| b["max_tokens"] == 1
        && b["top_logprobs"] == 20
        && b["temperature"] == 1.0
        && b["logprobs"] == true));

    let s = summarize(&store, "grid", &Default::default())
        .await
        .unwrap();
    assert_eq!(s.trials.len(), 12);
    for t in &s.trials {
        let rows = store.verdicts(t.id).await.unwrap();
        assert_eq!(rows.len(), 6);
        let (temperature, top_p) = (t.params.temperature, t.params.top_p);
        for row in &rows {
            assert!(row.exact);
            assert!((row.uncovered.unwrap() - 0.05).abs() < 1e-12);
            // The call's whole price on each row: what the trial alone would pay.
            assert!((row.cost_usd.unwrap() - 23e-6).abs() < 1e-15);
            let d = row.distribution.as_ref().unwrap();
            let pa = d.p(&judgelab_core::Label::Choice(judgelab_core::Choice::A));
            // top_p 0.5 keeps "A" alone (0.6 ≥ 0.5), exactly; at T 0, A wins.
            let want = if top_p <= 0.5 || temperature == 0.0 {
                1.0
            } else {
                let w = |p: f64| p.powf(1.0 / temperature);
                if top_p <= 0.85 {
                    // A, B and " A" reach 0.85 (0.9).
                    (w(0.6) + w(0.1)) / (w(0.6) + w(0.2) + w(0.1))
                } else {
                    // The 0.05 left out: one more token as likely as "The", no verdict.
                    (w(0.6) + w(0.1)) / (w(0.6) + w(0.2) + w(0.1) + 2.0 * w(0.05))
                }
            };
            assert!(
                (pa - want).abs() < 1e-9,
                "T {temperature} top_p {top_p}: {pa} != {want}"
            );
            let belief = row.belief.as_ref().unwrap();
            let b = belief.p(&judgelab_core::Label::Choice(judgelab_core::Choice::A));
            assert!((b - 0.7).abs() < 1e-9);
        }
    }
    // The budget counts the six calls once, and their dollars once.
    let id = store.experiment_by_name("grid").await.unwrap().unwrap().id;
    let (calls, usd) = store.spent(id).await.unwrap();
    assert_eq!(calls, 6);
    assert!((usd - 6.0 * 23e-6).abs() < 1e-12, "{usd}");

    // A second experiment asks nothing again: the answer and the calls are cached.
    let before = seen.calls.load(Ordering::SeqCst);
    let again = run_experiment(
        &store,
        &experiment(dir.path(), "again", &url, ""),
        RunOptions::default(),
        &mut |_| {},
    )
    .await
    .unwrap();
    assert_eq!(seen.calls.load(Ordering::SeqCst), before);
    assert_eq!((again.judged_now, again.cache_hits), (72, 72));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_without_logprobs_makes_the_run_say_so_and_generate() {
    let dir = fixture();
    let logprobs = Arc::new(AtomicBool::new(false));
    let (url, seen) = server(Arc::clone(&logprobs)).await;
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
    let mut events = Vec::new();
    let run = run_experiment(
        &store,
        &experiment(dir.path(), "plain", &url, ""),
        RunOptions::default(),
        &mut |e| events.push(e),
    )
    .await
    .unwrap();
    let said: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::Note { message, .. } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(said[0].contains("without them"), "{}", said[0]);
    // Generated: one call per cell and item (trials at T 0 share theirs), after the ask.
    assert_eq!(run.n_errors, 0);
    assert_eq!(seen.calls.load(Ordering::SeqCst), 1 + run.model_calls);
    let s = summarize(&store, "plain", &Default::default())
        .await
        .unwrap();
    for t in &s.trials {
        let rows = store.verdicts(t.id).await.unwrap();
        assert!(rows.iter().all(|r| !r.exact && r.uncovered.is_none()));
    }

    // `exact = true` on such a server: each call fails with why, and nothing is drawn.
    let strict = run_experiment(
        &store,
        &experiment(dir.path(), "strict", &url, "exact = true"),
        RunOptions::default(),
        &mut |_| {},
    )
    .await
    .unwrap();
    assert_eq!(strict.n_errors, 72);
    let s = summarize(&store, "strict", &Default::default())
        .await
        .unwrap();
    let rows = store.verdicts(s.trials[0].id).await.unwrap();
    assert!(rows[0]
        .outcome
        .error()
        .is_some_and(|e| e.contains("no log-probabilities") && e.contains("exact = false")));
}
