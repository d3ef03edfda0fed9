//! Exact verdicts with a scripted judge that returns logits: one call per item serves a
//! whole temperature × top_p grid and its repeats; a failed call fails every verdict it
//! answers, and only it is made again; a grammar removes non-verdict tokens.

use crate::Columns;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use judgelab_core::judge::{CallError, Completion, ModelIdentity, StopReason, Vocabulary};
use judgelab_core::{Judge, JudgeRequest, JudgeResponse, Message};
use judgelab_engine::{run_experiment, EngineError, JudgeLoader, ModelSpec, RunOptions};
use judgelab_store::Store;

/// Logits over the vocabulary `A`, `B`, `x`, end of turn, by item question.
struct Logits {
    identity: ModelIdentity,
    vocabulary: Option<Vocabulary>,
    logits: HashMap<String, Vec<f32>>,
    /// Questions whose first call fails.
    fail_once: Mutex<Vec<String>>,
    requests: Mutex<Vec<JudgeRequest>>,
    calls: AtomicUsize,
}

impl Judge for Logits {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    fn vocabulary(&self) -> Option<Vocabulary> {
        self.vocabulary.clone()
    }

    fn count_tokens(&self, _: &[Message]) -> Result<usize, String> {
        Ok(10)
    }

    fn judge_batch(
        &self,
        requests: Vec<JudgeRequest>,
        _cancel: &Arc<AtomicBool>,
        on_response: &mut dyn FnMut(JudgeResponse),
    ) {
        for request in requests {
            self.calls.fetch_add(1, Ordering::SeqCst);
            let question = request.messages.last().unwrap().content.clone();
            let failing = {
                let mut fail = self.fail_once.lock().unwrap();
                let at = fail.iter().position(|q| *q == question);
                at.map(|i| fail.remove(i)).is_some()
            };
            let result = if failing {
                Err(CallError::after(1, "the scripted judge fails once"))
            } else {
                Ok(Completion {
                    text: String::new(),
                    prompt_tokens: 10,
                    completion_tokens: 0,
                    latency_ms: 3.0,
                    ttft_ms: Some(3.0),
                    stop: StopReason::MaxTokens,
                    cached_tokens: None,
                    attempts: 1,
                    logprobs: None,
                    decoded_tokens: Some(4),
                    endpoint: None,
                    logits: Some(Arc::new(self.logits[&question].clone())),
                    top_logprobs: None,
                })
            };
            on_response(JudgeResponse {
                key: request.key,
                result,
            });
            self.requests.lock().unwrap().push(request);
        }
    }
}

struct Loader(Arc<Logits>);

impl JudgeLoader for Loader {
    fn load(&self, _: &ModelSpec) -> Result<Arc<dyn Judge>, EngineError> {
        Ok(self.0.clone())
    }
}

fn judge(vocabulary: Option<&[&str]>, fail_once: &[&str]) -> Arc<Logits> {
    // q0..q3: A clearly, B clearly, A and B close, "x" (no verdict) first.
    let logits = [
        [3.0, 0.0, -1.0, -2.0],
        [0.0, 3.0, -1.0, -2.0],
        [1.0, 0.875, -1.0, -2.0],
        [1.0, 0.5, 2.0, -2.0],
    ];
    Arc::new(Logits {
        identity: ModelIdentity {
            name: "logits".into(),
            location: "memory".into(),
            sha256: None,
        },
        vocabulary: vocabulary.map(|v| Arc::new(v.iter().map(|s| s.to_string()).collect())),
        logits: logits
            .iter()
            .enumerate()
            .map(|(i, l)| (format!("q{i}"), l.to_vec()))
            .collect(),
        fail_once: Mutex::new(fail_once.iter().map(|s| s.to_string()).collect()),
        requests: Mutex::new(Vec::new()),
        calls: AtomicUsize::new(0),
    })
}

const VOCABULARY: &[&str] = &["A", "B", "x", ""];

fn fixture(sweep: &str) -> (tempfile::TempDir, std::path::PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (0..4)
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
        format!("name = \"e\"\ndataset = \"items.jsonl\"\n[judge]\nmodel = \"fake.gguf\"\ntemplate = \"q.jinja\"\nexact = true\nbatch_size = 3\n[sweep]\n{sweep}\n"),
    )
    .unwrap();
    (dir, experiment)
}

async fn run(
    store: &Store,
    experiment: &std::path::Path,
    judge: &Arc<Logits>,
) -> Result<judgelab_engine::RunSummary, EngineError> {
    let options = RunOptions {
        judges: Some(Arc::new(Loader(judge.clone()))),
        timed_calls: 0,
        ..RunOptions::default()
    };
    run_experiment(store, experiment, options, &mut |_| {}).await
}

fn softmax(logits: &[f64]) -> Vec<f64> {
    let z: f64 = logits.iter().map(|l| l.exp()).sum();
    logits.iter().map(|l| l.exp() / z).collect()
}

#[tokio::test]
async fn one_call_per_item_serves_the_whole_grid_and_its_repeats() {
    let (dir, experiment) = fixture(
        "temperature = [0.0, 0.5, 1.0]\ntop_p = [0.5, 1.0]\nmax_tokens = [1, 8]\nrepeats = 2",
    );
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
    let judge = judge(Some(VOCABULARY), &[]);
    let s = run(&store, &experiment, &judge).await.unwrap();
    // 3 × 2 × 2 = 12 trials, 4 items, 2 repeats: 96 verdicts from 4 calls.
    assert_eq!(
        (s.n_trials, s.total, s.judged_now, s.n_errors),
        (12, 96, 96, 0)
    );
    assert_eq!(s.model_calls, 4);
    assert_eq!(s.prompt_tokens_decoded, 16);
    for r in judge.requests.lock().unwrap().iter() {
        assert!(r.logits && r.sampling.max_tokens == 0 && r.grammar.is_none());
    }

    let row = store.experiment_by_name("e").await.unwrap().unwrap();
    let trials = store.trials(row.id).await.unwrap();
    for trial in &trials {
        let (t, p) = (trial.params.temperature, trial.params.top_p);
        let rows = store.verdicts(trial.id).await.unwrap();
        assert_eq!(rows.len(), 8);
        for v in &rows {
            assert!(v.exact && v.error().is_none(), "{v:?}");
            let d = v.distribution_json();
            let item: usize = v.item_id[1..].parse().unwrap();
            let logits: Vec<f64> = judge.logits[&format!("q{item}")]
                .iter()
                .map(|&l| f64::from(l))
                .collect();
            let (pa, pb, failed) = if t == 0.0 {
                // Greedy: the highest logit alone.
                let best = (0..4)
                    .max_by(|&a, &b| logits[a].total_cmp(&logits[b]))
                    .unwrap();
                (
                    [1.0, 0.0, 0.0][best.min(2)],
                    [0.0, 1.0, 0.0][best.min(2)],
                    [0.0, 0.0, 1.0][best.min(2)],
                )
            } else if p == 1.0 {
                let q = softmax(&logits.iter().map(|l| l / t).collect::<Vec<_>>());
                (q[0], q[1], q[2] + q[3])
            } else {
                // top_p 0.5 at temperature 1 keeps the best token alone here, except for
                // q2, where A (0.48) needs B (0.43) to reach it.
                let q = softmax(&logits);
                if item == 2 {
                    let kept = softmax(&[logits[0] / t, logits[1] / t]);
                    (kept[0], kept[1], 0.0)
                } else {
                    let best = (0..4).max_by(|&a, &b| q[a].total_cmp(&q[b])).unwrap();
                    (
                        [1.0, 0.0, 0.0][best.min(2)],
                        [0.0, 1.0, 0.0][best.min(2)],
                        [0.0, 0.0, 1.0][best.min(2)],
                    )
                }
            };
            let got = |k: &str| d.get(k).and_then(|x| x.as_f64()).unwrap_or(0.0);
            for (k, want) in [("A", pa), ("B", pb), ("failed", failed)] {
                assert!(
                    (got(k) - want).abs() < 1e-6,
                    "{k} at T={t} top_p={p} on {}: {d} vs {want}",
                    v.item_id
                );
            }
            // The drawn verdict is one the distribution allows.
            match v.verdict().as_deref() {
                Some(label) => assert!(got(label) > 0.0, "{v:?}"),
                None => assert!(got("failed") > 0.0 && v.failure_kind().is_some(), "{v:?}"),
            }
        }
    }
    // Resuming finds nothing to do and calls nothing.
    let again = run(&store, &experiment, &judge).await.unwrap();
    assert_eq!((again.judged_now, again.model_calls), (0, 0));
    assert_eq!(judge.calls.load(Ordering::SeqCst), 4);
}

#[tokio::test]
async fn a_failed_call_fails_every_verdict_it_answers_and_is_made_again() {
    let (dir, experiment) = fixture("temperature = [0.0, 1.0]\ntop_p = [0.9, 1.0]\nrepeats = 2");
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
    let judge = judge(Some(VOCABULARY), &["q1"]);
    let first = run(&store, &experiment, &judge).await.unwrap();
    // q1's one call answered 4 trials × 2 repeats.
    assert_eq!(
        (
            first.total,
            first.judged_now,
            first.n_errors,
            first.model_calls
        ),
        (32, 32, 8, 4)
    );
    let second = run(&store, &experiment, &judge).await.unwrap();
    assert_eq!(
        (second.judged_now, second.n_errors, second.model_calls),
        (8, 0, 1)
    );
    assert_eq!(judge.calls.load(Ordering::SeqCst), 5);
}

#[tokio::test]
async fn a_grammar_leaves_no_room_for_a_parse_failure() {
    let (dir, experiment) =
        fixture("temperature = [0.0, 1.0]\nconstraint = [\"none\", \"grammar\"]\nrepeats = 20");
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
    let judge = judge(Some(VOCABULARY), &[]);
    let s = run(&store, &experiment, &judge).await.unwrap();
    // Two groups (one per constraint), each one call per item.
    assert_eq!(s.model_calls, 8);
    let row = store.experiment_by_name("e").await.unwrap().unwrap();
    for trial in store.trials(row.id).await.unwrap() {
        let rows = store.verdicts(trial.id).await.unwrap();
        let failures = rows.iter().filter(|v| v.failure_kind().is_some()).count();
        let greedy_q3 = rows.iter().find(|v| v.item_id == "i3").unwrap();
        match trial.params.constraint {
            judgelab_core::Constraint::Grammar => {
                assert_eq!(failures, 0);
                if trial.params.temperature == 0.0 {
                    assert_eq!(greedy_q3.verdict().as_deref(), Some("A"));
                }
            }
            judgelab_core::Constraint::None => {
                // q3's best token is "x": greedy fails on every repeat, warm draws often.
                if trial.params.temperature == 0.0 {
                    assert_eq!(failures, 20);
                    assert_eq!(greedy_q3.failure_kind(), Some("no_label"));
                } else {
                    assert!(failures > 0);
                }
            }
        }
    }
}

#[tokio::test]
async fn exact_verdicts_need_logits_and_one_token_labels() {
    let (dir, experiment) = fixture("temperature = [0.0, 1.0]");
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
    let err = run(&store, &experiment, &judge(None, &[]))
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("judge.exact: the judge of model \"fake.gguf\" cannot return logits"),
        "{err}"
    );
    let err = run(
        &store,
        &experiment,
        &judge(Some(&["A", "Bee", "x", ""]), &[]),
    )
    .await
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("\"B\" is not one token of this model"),
        "{err}"
    );
    assert!(err.is_invalid_input());
}

/// A checklist asks one criterion per call, each answered with one digit: its calls are
/// read exactly, each on its criterion's own scale (a digit off the scale is a failure),
/// one pass per (item, criterion) serving the whole temperature grid; each criterion gets
/// its expected agreement (G-Eval) from the distributions. A rubric's calls cannot be
/// read from one token, and `exact = true` with one is refused.
#[tokio::test]
async fn a_checklist_reads_each_criterion_from_one_pass_on_its_own_scale() {
    let dir = tempfile::tempdir().unwrap();
    let coherence = [1, 3, 2, 3];
    let grounded = [0, 1, 1, 0];
    crate::two_criteria(
        dir.path(),
        coherence.map(|x| x as f64),
        ("grounded", [0, 1], grounded.map(|x| x as f64)),
    );
    std::fs::write(
        dir.path().join("c.jinja"),
        r#"{%- set criteria = [
  {"name": "coherence", "definition": "Does it follow?"},
  {"name": "grounded", "definition": "Does it use the facts?"},
] -%}
{{ question }} {{ rubric | map(attribute="name") | join(",") }}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("fake.gguf"), "GGUF and nothing else").unwrap();
    let write = |style: &str, exact: &str| {
        let path = dir.path().join("c.toml");
        std::fs::write(
            &path,
            format!("name = \"c\"\ndataset = \"items.jsonl\"\n[judge]\nmodel = \"fake.gguf\"\ntemplate = \"c.jinja\"\n{exact}\n[sweep]\ntemperature = [0.0, 1.0]\nmax_tokens = 1\nstyle = {style}\n"),
        )
        .unwrap();
        path
    };
    // Logits over "0" "1" "2" "3" "x" "": coherence peaks at the humans' value, except on
    // i3 where "0" (off its 1-3 scale) leads; grounded at the humans' value.
    let mut logits = HashMap::new();
    for i in 0..4 {
        let mut c = vec![0.0f32, 0.0, 0.0, 0.0, -1.0, -3.0];
        c[if i == 3 { 0 } else { coherence[i] }] = 2.0;
        logits.insert(format!("q{i} coherence"), c);
        let mut g = vec![0.0f32, 0.0, -1.0, -1.0, -1.0, -3.0];
        g[grounded[i]] = 2.5;
        logits.insert(format!("q{i} grounded"), g);
    }
    let judge = Arc::new(Logits {
        logits,
        ..Arc::into_inner(judge(Some(&["0", "1", "2", "3", "x", ""]), &[])).unwrap()
    });
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();

    let err = run(
        &store,
        &write("[\"rubric\", \"checklist\"]", "exact = true"),
        &judge,
    )
    .await
    .unwrap_err();
    assert!(
        err.is_invalid_input()
            && err
                .to_string()
                .contains("a rubric's answer has a value per criterion"),
        "{err}"
    );

    let s = run(&store, &write("\"checklist\"", ""), &judge)
        .await
        .unwrap();
    // 2 trials × 4 items × 2 criteria from one pass per (item, criterion).
    assert_eq!((s.n_trials, s.n_errors), (2, 0));
    assert_eq!(s.model_calls, 8);
    assert!(judge.requests.lock().unwrap().iter().all(|r| r.logits));

    let row = store.experiment_by_name("c").await.unwrap().unwrap();
    for trial in store.trials(row.id).await.unwrap() {
        let rows = store.verdicts(trial.id).await.unwrap();
        assert_eq!(rows.len(), 8);
        for v in &rows {
            assert!(v.exact, "{v:?}");
            let d = v.distribution_json();
            let got = |k: &str| d.get(k).and_then(|x| x.as_f64()).unwrap_or(0.0);
            let item: usize = v.item_id[1..].parse().unwrap();
            let l: Vec<f64> = judge.logits[&format!("q{item} {}", v.criterion)]
                .iter()
                .map(|&x| f64::from(x))
                .collect();
            let (on_scale, off): (&[usize], &[usize]) = match v.criterion.as_str() {
                "coherence" => (&[1, 2, 3], &[0, 4, 5]),
                "grounded" => (&[0, 1], &[2, 3, 4, 5]),
                other => panic!("criterion {other:?}"),
            };
            if trial.params.temperature == 1.0 {
                let q = softmax(&l);
                for &k in on_scale {
                    let key = k.to_string();
                    assert!((got(&key) - q[k]).abs() < 1e-6, "{key}: {d}");
                }
                let failed: f64 = off.iter().map(|&k| q[k]).sum();
                assert!((got("failed") - failed).abs() < 1e-6, "{d}");
            } else if v.criterion == "coherence" && item == 3 {
                // Greedy on "0", off coherence's scale: a failure of that criterion.
                assert_eq!(got("failed"), 1.0, "{d}");
                assert!(v.failure_kind().is_some(), "{v:?}");
            }
        }
    }

    let summary = judgelab_engine::summarize(&store, "c", &Default::default())
        .await
        .unwrap();
    for trial in &summary.trials {
        for name in ["coherence", "grounded"] {
            let expected = trial.criteria[name].expected.as_ref().expect(name);
            assert!(expected.failed.is_some(), "{name}: {expected:?}");
        }
        let geval = trial.criteria["coherence"]
            .expected
            .as_ref()
            .unwrap()
            .geval_spearman;
        assert!(geval.is_some(), "{:?}", trial.criteria["coherence"]);
    }
    // Resuming finds nothing to do.
    let again = run(&store, &write("\"checklist\"", ""), &judge)
        .await
        .unwrap();
    assert_eq!(again.model_calls, 0);
}

#[tokio::test]
async fn debiased_orders_take_the_likelier_of_the_averaged_beliefs() {
    let dir = tempfile::tempdir().unwrap();
    let items = [("q0", "A"), ("q1", "B"), ("q2", "A")].map(|(q, label)| {
        format!(r#"{{"id":"i{}","task":"pairwise","question":"{q}","answer_a":"a","answer_b":"b","human_label":"{label}"}}"#, &q[1..])
    });
    std::fs::write(dir.path().join("items.jsonl"), items.join("\n")).unwrap();
    // The prompt shows the question and the answer shown first: "q0 a" in the dataset's
    // order, "q0 b" swapped.
    std::fs::write(dir.path().join("q.jinja"), "{{ question }} {{ answer_a }}").unwrap();
    std::fs::write(dir.path().join("fake.gguf"), "GGUF and nothing else").unwrap();
    let experiment = dir.path().join("e.toml");
    std::fs::write(
        &experiment,
        "name = \"e\"\ndataset = \"items.jsonl\"\n[judge]\nmodel = \"fake.gguf\"\ntemplate = \"q.jinja\"\nexact = true\n[sweep]\ntemperature = [0.0, 1.0]\norder = [\"both\", \"debiased\"]\n",
    )
    .unwrap();
    // Logits over A, B, x, end of turn, in the frame of the answers as shown. Each item's
    // orders disagree (the judge favours the answer shown first), one of them more surely;
    // q2's likeliest token is "x" (no verdict) in both orders.
    let logits: HashMap<String, Vec<f32>> = [
        ("q0 a", [2.0, 0.0, -1.0, -2.0]),
        ("q0 b", [0.5, 0.0, -1.0, -2.0]),
        ("q1 a", [1.0, 0.0, -1.0, -2.0]),
        ("q1 b", [3.0, 0.0, -1.0, -2.0]),
        ("q2 a", [1.0, 0.5, 2.0, -2.0]),
        ("q2 b", [0.0, 1.0, 2.0, -2.0]),
    ]
    .into_iter()
    .map(|(k, l)| (k.to_string(), l.to_vec()))
    .collect();
    let judge = Arc::new(Logits {
        logits,
        ..Arc::into_inner(judge(Some(VOCABULARY), &[])).unwrap()
    });
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
    let s = run(&store, &experiment, &judge).await.unwrap();
    assert_eq!((s.n_trials, s.n_errors), (4, 0));
    let summary = judgelab_engine::summarize(&store, "e", &Default::default())
        .await
        .unwrap();
    // The belief in the dataset's A of each order, over the verdicts alone.
    let p = |a: f64, b: f64| a.exp() / (a.exp() + b.exp());
    let believed_a = [
        (p(2.0, 0.0) + p(0.0, 0.5)) / 2.0,
        (p(1.0, 0.0) + p(0.0, 3.0)) / 2.0,
        (p(1.0, 0.5) + p(1.0, 0.0)) / 2.0,
    ];
    assert!(believed_a[0] > 0.5 && believed_a[1] < 0.5 && believed_a[2] > 0.5);
    for t in &summary.trials {
        let m = &t.metrics;
        match t.params.order {
            // By agreement: q0 and q1 flip into ties, greedy q2 fails.
            judgelab_core::Order::Both if t.params.temperature == 0.0 => {
                assert_eq!(m.accuracy(), Some(0.0));
                assert_eq!(m.parse_failure_rate, Some(1.0 / 3.0));
            }
            judgelab_core::Order::Both => {}
            // By probability: A, B, A, all right, at any temperature, and each as sure as
            // its averaged belief.
            judgelab_core::Order::Debiased => {
                assert_eq!(m.accuracy(), Some(1.0), "{:?}", t.params);
                assert_eq!(m.parse_failure_rate, Some(0.0));
                let (_, judged) = judgelab_core::trust::confidence::judged(
                    judgelab_core::Task::Pairwise,
                    &t.observations,
                );
                let mut confidences: Vec<f64> =
                    judged.iter().filter_map(|j| j.confidence).collect();
                confidences.sort_by(f64::total_cmp);
                let mut want: Vec<f64> = believed_a.iter().map(|&a| a.max(1.0 - a)).collect();
                want.sort_by(f64::total_cmp);
                for (got, want) in confidences.iter().zip(&want) {
                    assert!((got - want).abs() < 1e-6, "{confidences:?} vs {want:?}");
                }
                assert_eq!(confidences.len(), 3);
            }
            other => panic!("{other:?}"),
        }
    }
}
