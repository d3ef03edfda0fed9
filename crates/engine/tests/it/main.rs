//! Engine tests with a scripted judge: fault injection, resume and cancellation on a real
//! SQLite file. (The real model runs in the llama and CLI tests.)

mod exact;
mod import;
mod race;
mod remote;
mod remote_exact;
mod rubric;
mod summaries;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use judgelab_core::judge::{CallError, Completion, ModelIdentity, StopReason};
use judgelab_core::{Judge, JudgeRequest, JudgeResponse, Message};
use judgelab_engine::{run_experiment, summarize, EngineError, JudgeLoader, ModelSpec, RunOptions};
use judgelab_store::Store;

/// A record's outcome read as the store's columns, which the tests below state it in.
pub(crate) trait Columns {
    fn verdict(&self) -> Option<String>;
    fn failure_kind(&self) -> Option<&'static str>;
    fn error(&self) -> Option<&str>;
    /// An exact record's distribution, `{label: p, …, "failed": p}`.
    fn distribution_json(&self) -> serde_json::Value;
}

impl Columns for judgelab_core::results::VerdictRecord {
    fn verdict(&self) -> Option<String> {
        self.outcome.label().map(|l| l.to_text())
    }
    fn failure_kind(&self) -> Option<&'static str> {
        self.outcome.failure().map(|f| f.name())
    }
    fn error(&self) -> Option<&str> {
        self.outcome.error()
    }
    fn distribution_json(&self) -> serde_json::Value {
        let d = self.distribution.as_ref().expect("an exact record");
        let mut map = serde_json::Map::new();
        for (label, p) in &d.labels {
            map.insert(label.to_text(), (*p).into());
        }
        map.insert("failed".into(), d.failed.into());
        serde_json::Value::Object(map)
    }
}

/// Answers each item (its question is the whole prompt) from a script. An output starting
/// with `!` is a failed call, once; the next call for that item answers what follows. The
/// output `~` is no response at all.
struct Scripted {
    identity: ModelIdentity,
    script: HashMap<String, String>,
    failed_once: Mutex<Vec<String>>,
    calls: AtomicUsize,
    /// Set this flag after so many calls (a user pressing Ctrl-C).
    cancel_after: Option<(usize, Arc<AtomicBool>)>,
    /// Each batch it was sent, as its requests' `uncached` flags.
    batches: Mutex<Vec<Vec<bool>>>,
}

impl Judge for Scripted {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    fn count_tokens(&self, messages: &[Message]) -> Result<usize, String> {
        Ok(messages
            .iter()
            .map(|m| m.content.split_whitespace().count())
            .sum())
    }

    fn judge_batch(
        &self,
        requests: Vec<JudgeRequest>,
        cancel: &Arc<AtomicBool>,
        on_response: &mut dyn FnMut(JudgeResponse),
    ) {
        self.batches
            .lock()
            .unwrap()
            .push(requests.iter().map(|r| r.uncached).collect());
        for request in requests {
            if cancel.load(Ordering::SeqCst) {
                return;
            }
            let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
            let question = request.messages.last().unwrap().content.clone();
            let output = self.script[&question].clone();
            if output == "~" {
                continue; // a judge that never answers this request
            }
            let result = match output.strip_prefix('!') {
                Some(rest) => {
                    let mut failed = self.failed_once.lock().unwrap();
                    if failed.contains(&question) {
                        Ok(rest.to_string())
                    } else {
                        failed.push(question.clone());
                        Err(CallError::after(1, "HTTP 503 from the scripted judge"))
                    }
                }
                None => Ok(output),
            };
            on_response(JudgeResponse {
                key: request.key,
                result: result.map(|text| Completion {
                    cached_tokens: None,
                    attempts: 1,
                    logprobs: None,
                    decoded_tokens: None,
                    endpoint: None,
                    logits: None,
                    top_logprobs: None,
                    completion_tokens: text.split_whitespace().count() as u32,
                    text,
                    prompt_tokens: 10,
                    latency_ms: 5.0 * n as f64,
                    ttft_ms: Some(1.0),
                    stop: StopReason::EndOfTurn,
                }),
            });
            if let Some((after, flag)) = &self.cancel_after {
                if n == *after {
                    flag.store(true, Ordering::SeqCst);
                }
            }
        }
    }
}

struct Loader(Arc<Scripted>);

impl JudgeLoader for Loader {
    fn load(&self, spec: &ModelSpec) -> Result<Arc<dyn Judge>, EngineError> {
        assert!(matches!(spec, ModelSpec::Local(m) if m.path.ends_with("fake.gguf")));
        Ok(self.0.clone())
    }
}

struct Fixture {
    dir: tempfile::TempDir,
    experiment: PathBuf,
}

/// Six pairwise items q0..q5 labelled A, B, A, B, A, B; a template that is the question.
fn fixture(batch_size: usize) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (0..6)
        .map(|i| {
            let label = if i % 2 == 0 { "A" } else { "B" };
            format!(r#"{{"id":"i{i}","task":"pairwise","question":"q{i}","answer_a":"a","answer_b":"b","human_label":"{label}"}}"#)
        })
        .collect();
    std::fs::write(dir.path().join("items.jsonl"), lines.join("\n")).unwrap();
    std::fs::write(dir.path().join("q.jinja"), "{{ question }}").unwrap();
    std::fs::write(dir.path().join("fake.gguf"), "GGUF and nothing else").unwrap();
    let experiment = dir.path().join("e.toml");
    std::fs::write(
        &experiment,
        format!("name = \"e\"\ndataset = \"items.jsonl\"\n[judge]\nmodel = \"fake.gguf\"\ntemplate = \"q.jinja\"\nbatch_size = {batch_size}\n[sweep]\nmax_tokens = 4\n"),
    )
    .unwrap();
    Fixture { dir, experiment }
}

fn scripted(outputs: &[&str], cancel_after: Option<(usize, Arc<AtomicBool>)>) -> Arc<Scripted> {
    Arc::new(Scripted {
        identity: ModelIdentity {
            name: "scripted".into(),
            location: "memory".into(),
            sha256: None,
        },
        script: outputs
            .iter()
            .enumerate()
            .map(|(i, o)| (format!("q{i}"), o.to_string()))
            .collect(),
        failed_once: Mutex::new(Vec::new()),
        calls: AtomicUsize::new(0),
        cancel_after,
        batches: Mutex::new(Vec::new()),
    })
}

/// Writes `dir/items.jsonl`: four rating items `i0`..`i3` (question `q{i}`, overall label
/// 1 + i) that the humans rated on `coherence` (1-3) and on a second criterion, each
/// value as given, the scales declared on the first line.
fn two_criteria(
    dir: &Path,
    coherence: [f64; 4],
    (name, scale, second): (&str, [i64; 2], [f64; 4]),
) {
    let lines: Vec<String> = (0..4)
        .map(|i| {
            let mut line = serde_json::json!({
                "id": format!("i{i}"),
                "task": "single",
                "question": format!("q{i}"),
                "answer": "a response",
                "human_label": 1 + i,
                "human_labels": {"coherence": coherence[i], name: second[i]},
            });
            if i == 0 {
                line["label_scales"] = serde_json::json!({"coherence": [1, 3], name: scale});
            }
            line.to_string()
        })
        .collect();
    std::fs::write(dir.join("items.jsonl"), lines.join("\n")).unwrap();
}

/// Runs with the scripted judge, timing no call alone.
async fn run(
    store: &Store,
    experiment: &Path,
    judge: &Arc<Scripted>,
    cancel: Arc<AtomicBool>,
) -> judgelab_engine::RunSummary {
    run_timed(store, experiment, judge, cancel, 0).await
}

async fn run_timed(
    store: &Store,
    experiment: &Path,
    judge: &Arc<Scripted>,
    cancel: Arc<AtomicBool>,
    timed_calls: usize,
) -> judgelab_engine::RunSummary {
    let options = RunOptions {
        cancel,
        judges: Some(Arc::new(Loader(judge.clone()))),
        timed_calls,
        ..RunOptions::default()
    };
    run_experiment(store, experiment, options, &mut |_| {})
        .await
        .unwrap()
}

#[tokio::test]
async fn failed_calls_are_recorded_then_retried_and_failures_are_classified() {
    let f = fixture(4);
    let store = Store::open(&f.dir.path().join("db.sqlite")).await.unwrap();
    let judge = scripted(
        &["A", "A", "The answer is A", "B", "I cannot decide", "!B"],
        None,
    );

    let first = run(&store, &f.experiment, &judge, Arc::default()).await;
    assert_eq!(
        (
            first.total,
            first.judged_now,
            first.n_errors,
            first.interrupted
        ),
        (6, 6, 1, false)
    );
    let s = summarize(&store, "e", &Default::default()).await.unwrap();
    let m = &s.trials[0].metrics;
    assert_eq!((m.n, m.n_errors), (5, 1));
    assert_eq!(m.accuracy(), Some(3.0 / 5.0));
    assert_eq!(m.parse_failure_rate, Some(1.0 / 5.0));

    let trial_id = s.trials[0].id;
    let rows = store.verdicts(trial_id).await.unwrap();
    let by_item: HashMap<&str, _> = rows.iter().map(|r| (r.item_id.as_str(), r)).collect();
    assert_eq!(by_item["i2"].verdict().as_deref(), Some("A"));
    assert_eq!(by_item["i2"].raw_output.as_deref(), Some("The answer is A"));
    assert_eq!(by_item["i4"].failure_kind(), Some("no_label"));
    assert_eq!(by_item["i4"].raw_output.as_deref(), Some("I cannot decide"));
    assert_eq!(
        by_item["i5"].error(),
        Some("HTTP 503 from the scripted judge")
    );
    assert_eq!(by_item["i5"].verdict(), None);

    // The next run retries only the failed call.
    let second = run(&store, &f.experiment, &judge, Arc::default()).await;
    assert_eq!(
        (second.already_done, second.judged_now, second.n_errors),
        (5, 1, 0)
    );
    assert_eq!(judge.calls.load(Ordering::SeqCst), 7);
    let m = summarize(&store, "e", &Default::default())
        .await
        .unwrap()
        .trials[0]
        .metrics
        .clone();
    assert_eq!((m.n, m.n_errors), (6, 0));
    assert_eq!(m.accuracy(), Some(4.0 / 6.0));
    // A local trial's batched calls say nothing of its latency: no call was timed alone.
    assert_eq!((m.latency_concurrency, m.latency_ms.p50), (None, None));

    // A finished experiment calls nothing.
    let third = run(&store, &f.experiment, &judge, Arc::default()).await;
    assert_eq!(third.judged_now, 0);
    assert_eq!(judge.calls.load(Ordering::SeqCst), 7);
}

/// A local trial's latency is that of calls timed alone: after judging, a seeded sample
/// made one request at a time, each in a batch of its own and marked `uncached`, after one
/// warm-up that the figures leave out; a resumed run times only what is missing.
#[tokio::test]
async fn a_local_trials_latency_is_that_of_calls_timed_alone() {
    let f = fixture(4);
    let store = Store::open(&f.dir.path().join("db.sqlite")).await.unwrap();
    let judge = scripted(&["A", "B", "A", "B", "A", "B"], None);
    let first = run_timed(&store, &f.experiment, &judge, Arc::default(), 3).await;
    assert_eq!((first.judged_now, first.timed_now), (6, 3));
    // Six verdicts in batches, then the warm-up and three calls alone.
    assert_eq!(judge.calls.load(Ordering::SeqCst), 10);
    let batches = judge.batches.lock().unwrap().clone();
    assert!(batches[..batches.len() - 4]
        .iter()
        .flatten()
        .all(|alone| !alone));
    assert!(batches[batches.len() - 4..].iter().all(|b| b == &[true]));
    let m = summarize(&store, "e", &Default::default())
        .await
        .unwrap()
        .trials[0]
        .metrics
        .clone();
    // The scripted judge's call n takes 5n ms: the timed calls were the 8th to 10th.
    assert_eq!(m.latency_concurrency, Some(1));
    assert_eq!((m.latency_ms.n, m.latency_ms.p50), (3, Some(45.0)));
    let [lo, hi] = m.latency_ms.p50_ci.unwrap();
    assert!((40.0..=45.0).contains(&lo) && (45.0..=50.0).contains(&hi));
    assert_eq!(m.latency_ms.p99, None, "p99 needs 100 calls");

    // A larger sample later: the warm-up again, and only the two calls not timed yet.
    let second = run_timed(&store, &f.experiment, &judge, Arc::default(), 5).await;
    assert_eq!((second.judged_now, second.timed_now), (0, 2));
    assert_eq!(judge.calls.load(Ordering::SeqCst), 13);
    let again = run_timed(&store, &f.experiment, &judge, Arc::default(), 5).await;
    assert_eq!(again.timed_now, 0);
    assert_eq!(judge.calls.load(Ordering::SeqCst), 13);
}

/// Trials whose timed requests are the same share one timed sample: a temperature × top_p
/// grid of one-token verdicts times each call once and stores it for every trial; a trial
/// whose longer output sampling changes keeps a sample of its own. A trial stored without
/// its copy (a run stopped between the two) takes it without a call.
#[tokio::test]
async fn trials_of_one_request_shape_share_their_timed_calls() {
    let f = fixture(4);
    std::fs::write(
        &f.experiment,
        "name = \"e\"\ndataset = \"items.jsonl\"\n[judge]\nmodel = \"fake.gguf\"\ntemplate = \"q.jinja\"\n[sweep]\ntemperature = [0.0, 0.5, 1.0]\ntop_p = [0.9, 1.0]\nmax_tokens = [1, 4]\n",
    )
    .unwrap();
    let store = Store::open(&f.dir.path().join("db.sqlite")).await.unwrap();
    let judge = scripted(&["A", "B", "A", "B", "A", "B"], None);
    let first = run_timed(&store, &f.experiment, &judge, Arc::default(), 3).await;
    // 12 trials × 6 items judged (the scripted judge has no vocabulary: no exact trial).
    // Timed: one shape for the six trials of max_tokens 1, one for the two greedy trials
    // of max_tokens 4, and one each for the four that sample four tokens: 3 × 6 calls and
    // a warm-up.
    assert_eq!((first.judged_now, first.timed_now), (72, 18));
    assert_eq!(judge.calls.load(Ordering::SeqCst), 72 + 19);
    let s = summarize(&store, "e", &Default::default()).await.unwrap();
    assert!(s
        .trials
        .iter()
        .all(|t| t.metrics.latency_ms.n == 3 && !t.params.exact));
    let p50 = |t: &judgelab_core::results::TrialSummary| t.metrics.latency_ms.p50;
    let one: Vec<_> = s
        .trials
        .iter()
        .filter(|t| t.params.max_tokens == 1)
        .collect();
    assert_eq!(one.len(), 6);
    assert!(one.iter().all(|t| p50(t) == p50(one[0])));

    // A trial that lost its copies is given them again, and nothing is called.
    let lost = one[3].id;
    let db = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        f.dir.path().join("db.sqlite").display()
    ))
    .await
    .unwrap();
    sqlx::query("DELETE FROM timed_calls WHERE trial_id = ?")
        .bind(lost)
        .execute(&db)
        .await
        .unwrap();
    db.close().await;
    let again = run_timed(&store, &f.experiment, &judge, Arc::default(), 3).await;
    assert_eq!((again.judged_now, again.timed_now), (0, 0));
    assert_eq!(judge.calls.load(Ordering::SeqCst), 72 + 19);
    let s = summarize(&store, "e", &Default::default()).await.unwrap();
    let restored = s.trials.iter().find(|t| t.id == lost).unwrap();
    assert_eq!(restored.metrics.latency_ms.n, 3);
    assert_eq!(p50(restored), p50(&s.trials[0]));
}

/// Cancelled while it times calls alone, a run says it was interrupted; the next one times
/// only the rest.
#[tokio::test]
async fn a_run_cancelled_while_timing_resumes_the_timing() {
    let f = fixture(4);
    let store = Store::open(&f.dir.path().join("db.sqlite")).await.unwrap();
    let cancel = Arc::new(AtomicBool::new(false));
    // Six verdicts, the warm-up, one timed call: then Ctrl-C.
    let judge = scripted(&["A", "B", "A", "B", "A", "B"], Some((8, cancel.clone())));
    let first = run_timed(&store, &f.experiment, &judge, cancel, 3).await;
    assert!(first.interrupted);
    assert_eq!((first.judged_now, first.timed_now), (6, 1));
    let second = run_timed(&store, &f.experiment, &judge, Arc::default(), 3).await;
    assert!(!second.interrupted);
    assert_eq!((second.judged_now, second.timed_now), (0, 2));
}

/// Loads the scripted judge and remembers each local spec's `parallel`.
struct Recording(Arc<Scripted>, Mutex<Vec<usize>>);

impl JudgeLoader for Recording {
    fn load(&self, spec: &ModelSpec) -> Result<Arc<dyn Judge>, EngineError> {
        if let ModelSpec::Local(m) = spec {
            self.1.lock().unwrap().push(m.parallel);
        }
        Ok(self.0.clone())
    }
}

/// A load ramp of a local trial: each level loads the judge decoding that many sequences
/// together, sends its warm-up, then its timed requests (the trial's prompts, repeated),
/// and the ramp is stored with every request.
#[tokio::test]
async fn a_load_ramp_of_a_local_trial() {
    let f = fixture(4);
    let store = Store::open(&f.dir.path().join("db.sqlite")).await.unwrap();
    let judge = scripted(&["A", "B", "A", "B", "A", "B"], None);
    run(&store, &f.experiment, &judge, Arc::default()).await;
    let trial_id = summarize(&store, "e", &Default::default())
        .await
        .unwrap()
        .trials[0]
        .id;
    let loader = Arc::new(Recording(judge.clone(), Mutex::new(Vec::new())));
    let options = judgelab_engine::load::LoadOptions {
        trial_id,
        levels: vec![1, 2, 4],
        requests: 8,
        warmup: 1,
        slo_ms: None,
        prompt_cache: false,
        threads: None,
        judges: Some(loader.clone()),
        cancel: Arc::default(),
    };
    let before = judge.calls.load(Ordering::SeqCst);
    let ramp = judgelab_engine::load::load_ramp(&store, "e", options, &mut |_| {})
        .await
        .unwrap();
    assert_eq!(*loader.1.lock().unwrap(), [1, 2, 4]);
    assert_eq!(judge.calls.load(Ordering::SeqCst) - before, 3 * 9);
    assert_eq!((ramp.requests, ramp.ramp.distinct_prompts), (8, 6));
    let levels = &ramp.ramp.levels;
    assert_eq!(
        levels.iter().map(|l| l.concurrency).collect::<Vec<_>>(),
        [1, 2, 4]
    );
    for l in levels {
        assert_eq!((l.requests, l.errors, l.retried), (8, 0, 0));
        assert_eq!(l.latency_ms.n, 8);
        assert!(l.throughput_vps > 0.0);
    }
    assert_eq!(ramp.ramp.warmup.requests, 3);
    assert!(ramp.ramp.knee.is_some(), "{}", ramp.ramp.knee_reason);
    assert!(ramp.id > 0);
    // Stored: the summary reads it back with the same figures.
    let summary = summarize(&store, "e", &Default::default()).await.unwrap();
    assert_eq!(summary.load_ramps.len(), 1);
    assert_eq!(summary.load_ramps[0].ramp.levels, ramp.ramp.levels);
    // A trial that is not there is the user's mistake.
    let err = judgelab_engine::load::load_ramp(
        &store,
        "e",
        judgelab_engine::load::LoadOptions {
            trial_id: 999,
            levels: vec![1],
            requests: 1,
            warmup: 0,
            slo_ms: None,
            prompt_cache: false,
            threads: None,
            judges: Some(loader),
            cancel: Arc::default(),
        },
        &mut |_| {},
    )
    .await
    .unwrap_err();
    assert!(err.is_invalid_input(), "{err}");
}

#[tokio::test]
async fn a_cancelled_run_resumes_without_repeating_anything() {
    let f = fixture(2);
    let store = Store::open(&f.dir.path().join("db.sqlite")).await.unwrap();
    let cancel = Arc::new(AtomicBool::new(false));
    let judge = scripted(&["A", "B", "A", "B", "A", "B"], Some((3, cancel.clone())));

    let first = run(&store, &f.experiment, &judge, cancel).await;
    assert!(first.interrupted);
    assert_eq!(first.judged_now, 3);
    assert_eq!(store.count_verdicts(first.experiment_id).await.unwrap(), 3);

    let second = run(&store, &f.experiment, &judge, Arc::default()).await;
    assert!(!second.interrupted);
    assert_eq!((second.already_done, second.judged_now), (3, 3));
    assert_eq!(judge.calls.load(Ordering::SeqCst), 6);
    let m = &summarize(&store, "e", &Default::default())
        .await
        .unwrap()
        .trials[0]
        .metrics;
    assert_eq!((m.n, m.accuracy()), (6, Some(1.0)));
}

#[tokio::test]
async fn few_shot_length_limits_pick_short_examples_and_never_judge_the_pool() {
    let f = fixture(8);
    // Item i's example is "q<i>" plus i filler words, answers and label: 4 + i words.
    let lines: Vec<String> = (0..10)
        .map(|i| {
            let label = if i % 2 == 0 { "A" } else { "B" };
            let question = format!("q{i}{}", " w".repeat(i));
            format!(r#"{{"id":"i{i}","task":"pairwise","question":"{question}","answer_a":"a","answer_b":"b","human_label":"{label}"}}"#)
        })
        .collect();
    std::fs::write(f.dir.path().join("items.jsonl"), lines.join("\n")).unwrap();
    let spec = std::fs::read_to_string(&f.experiment).unwrap().replace(
        "[sweep]\n",
        "[sweep]\nfew_shot = [0, 2]\nfew_shot_max_tokens = [8, 100]\ntemperature = [0.0, 0.5]\n",
    );
    std::fs::write(&f.experiment, spec).unwrap();
    std::fs::write(
        f.dir.path().join("q.jinja"),
        "{% for ex in examples %}{{ ex.label }} {% endfor %}{{ question }}",
    )
    .unwrap();
    let judge = Arc::new(Scripted {
        script: (0..10)
            .flat_map(|i| {
                let q = format!("q{i}{}", " w".repeat(i));
                ["", "A ", "B ", "A A ", "A B ", "B A ", "B B "]
                    .map(|p| (format!("{p}{q}"), "A".to_string()))
            })
            .collect(),
        ..Arc::try_unwrap(scripted(&[], None)).ok().unwrap()
    });
    let store = Store::open(&f.dir.path().join("db.sqlite")).await.unwrap();
    run(&store, &f.experiment, &judge, Arc::default()).await;
    let s = summarize(&store, "e", &Default::default()).await.unwrap();
    let pool = &s.experiment.few_shot_pool;
    assert!(pool.len() >= 2);
    assert_eq!(s.experiment.n_items, 10 - pool.len());
    assert_eq!(s.trials.len(), 2 * 2 * 2);
    let words = |id: &str| 4 + id[1..].parse::<usize>().unwrap();
    for t in &s.trials {
        let p = &t.params;
        assert_eq!(t.examples.len(), p.few_shot as usize, "{p:?}");
        let limit = p.few_shot_max_tokens.unwrap() as usize;
        assert!(
            t.examples.iter().all(|id| words(id) <= limit),
            "{p:?}: {:?}",
            t.examples
        );
        assert!(t.examples.iter().all(|id| pool.contains(id)));
        assert_eq!(t.metrics.n, s.experiment.n_items);
    }
    // Examples depend only on the few-shot settings, not on sampling.
    assert_eq!(s.trials[4].examples, s.trials[5].examples);
}

#[tokio::test]
async fn example_sets_show_other_examples_from_a_larger_pool() {
    let f = fixture(8);
    let lines: Vec<String> = (0..16)
        .map(|i| {
            let label = if i % 2 == 0 { "A" } else { "B" };
            format!(r#"{{"id":"i{i}","task":"pairwise","question":"q{i}","answer_a":"a","answer_b":"b","human_label":"{label}"}}"#)
        })
        .collect();
    std::fs::write(f.dir.path().join("items.jsonl"), lines.join("\n")).unwrap();
    let spec = std::fs::read_to_string(&f.experiment).unwrap().replace(
        "[sweep]\n",
        "[limits]\npool = 8\n[sweep]\nfew_shot = 2\nfew_shot_set = [0, 1, 2, 3]\n",
    );
    std::fs::write(&f.experiment, spec).unwrap();
    std::fs::write(
        f.dir.path().join("q.jinja"),
        "{% for ex in examples %}{{ ex.question }} {% endfor %}{{ question }}",
    )
    .unwrap();
    // Whatever the examples, the judge answers A.
    let judge = scripted(&[], None);
    let judge = Arc::new(Scripted {
        script: (0..16)
            .flat_map(|e1| {
                (0..16).flat_map(move |e2| {
                    (0..16).map(move |q| (format!("q{e1} q{e2} q{q}"), "A".to_string()))
                })
            })
            .collect(),
        ..Arc::try_unwrap(judge).ok().unwrap()
    });
    let store = Store::open(&f.dir.path().join("db.sqlite")).await.unwrap();
    let summary = run(&store, &f.experiment, &judge, Arc::default()).await;
    assert_eq!((summary.n_errors, summary.judged_now), (0, 4 * 8));
    let s = summarize(&store, "e", &Default::default()).await.unwrap();
    let pool = &s.experiment.few_shot_pool;
    assert_eq!(pool.len(), 8);
    assert_eq!(s.experiment.n_items, 8);
    let sets: Vec<&Vec<String>> = s.trials.iter().map(|t| &t.examples).collect();
    assert_eq!(sets.len(), 4);
    // Set 0 is the pool's first two; each set shows two pool items, one of each label.
    assert_eq!(sets[0][..], pool[..2]);
    for set in &sets {
        assert_eq!(set.len(), 2);
        assert!(set.iter().all(|id| pool.contains(id)));
        let even = set
            .iter()
            .filter(|id| id[1..].parse::<usize>().unwrap() % 2 == 0)
            .count();
        assert_eq!(even, 1, "{set:?}");
    }
    let distinct: std::collections::BTreeSet<Vec<String>> = sets
        .iter()
        .map(|s| {
            let mut s = s.to_vec();
            s.sort();
            s
        })
        .collect();
    assert!(distinct.len() >= 2, "the sets all chose {sets:?}");
    assert_eq!(s.trials[2].params.few_shot_set, 2);
}

#[tokio::test]
async fn replace_keeps_the_old_experiment_when_the_new_one_is_invalid() {
    let f = fixture(4);
    let store = Store::open(&f.dir.path().join("db.sqlite")).await.unwrap();
    let judge = scripted(&["A", "B", "A", "B", "A", "B"], None);
    run(&store, &f.experiment, &judge, Arc::default()).await;

    let spec = std::fs::read_to_string(&f.experiment).unwrap();
    std::fs::write(&f.experiment, format!("{spec}[limits]\nitems = 50\n")).unwrap();
    let options = RunOptions {
        replace: true,
        judges: Some(Arc::new(Loader(judge.clone()))),
        ..RunOptions::default()
    };
    let err = run_experiment(&store, &f.experiment, options, &mut |_| {})
        .await
        .unwrap_err();
    assert!(err.is_invalid_input(), "{err}");
    assert!(
        err.to_string()
            .contains("limits.items = 50 exceeds the 6 items"),
        "{err}"
    );
    let s = summarize(&store, "e", &Default::default()).await.unwrap();
    assert_eq!(s.experiment.n_stored, 6);
}

#[tokio::test]
async fn a_call_the_judge_never_answers_is_recorded_as_failed() {
    let f = fixture(3);
    let store = Store::open(&f.dir.path().join("db.sqlite")).await.unwrap();
    let judge = scripted(&["A", "~", "A", "B", "A", "B"], None);
    let summary = run(&store, &f.experiment, &judge, Arc::default()).await;
    assert_eq!((summary.judged_now, summary.n_errors), (6, 1));
    let s = summarize(&store, "e", &Default::default()).await.unwrap();
    let rows = store.verdicts(s.trials[0].id).await.unwrap();
    let silent = rows.iter().find(|r| r.item_id == "i1").unwrap();
    assert_eq!(
        silent.error(),
        Some("the judge returned no response for this call")
    );
    assert_eq!(s.trials[0].metrics.n, 5);
}

#[tokio::test]
async fn answer_orders_expose_a_judge_that_always_prefers_the_first_answer() {
    let f = fixture(4);
    let spec = std::fs::read_to_string(&f.experiment).unwrap();
    std::fs::write(
        &f.experiment,
        spec.replace("[sweep]\n", "[sweep]\norder = [\"ab\", \"ba\", \"both\"]\n"),
    )
    .unwrap();
    let store = Store::open(&f.dir.path().join("db.sqlite")).await.unwrap();
    // It says "A", the answer shown first, whatever the answers are.
    let judge = scripted(&["A"; 6], None);
    let summary = run(&store, &f.experiment, &judge, Arc::default()).await;
    assert_eq!((summary.total, summary.judged_now), (24, 24));

    let s = summarize(&store, "e", &Default::default()).await.unwrap();
    let [ab, ba, both] = [0, 1, 2].map(|i| s.trials[i].metrics.clone());
    assert_eq!(ab.accuracy(), Some(0.5));
    assert_eq!(ba.accuracy(), Some(0.5));
    // Judged both ways, its verdicts never agree: every item is a tie, none right.
    assert_eq!((both.n, both.accuracy()), (6, Some(0.0)));
    assert_eq!(both.prompt_tokens_per_item, Some(20.0));
    for m in [&ab, &ba, &both] {
        assert_eq!(m.position.as_ref().unwrap().first_preferred, Some(1.0));
    }
    assert_eq!(ab.position.unwrap().consistency, None);
    assert_eq!(both.position.unwrap().consistency, Some(0.0));

    // A swapped row stores the label in the dataset's frame and the raw output as said.
    let rows = store.verdicts(s.trials[1].id).await.unwrap();
    assert!(rows
        .iter()
        .all(|r| r.swapped && r.verdict().as_deref() == Some("B")));
    assert!(rows.iter().all(|r| r.raw_output.as_deref() == Some("A")));
    assert_eq!(s.experiment.n_expected, 24);
    assert_eq!(
        s.baselines["majority"]
            .quality
            .get(judgelab_core::metrics::Quality::Accuracy)
            .value,
        Some(0.5)
    );
}
