//! Races and test splits with a judge of known accuracy per temperature: trials clearly
//! worse are dropped round by round and recorded with why, the test split is judged by the
//! kept trials only, a resumed race drops the same trials at the same rounds, and a budget
//! stops a run cleanly.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use judgelab_core::judge::{Completion, ModelIdentity, StopReason};
use judgelab_core::{Judge, JudgeRequest, JudgeResponse, Message};
use judgelab_engine::{run_experiment, EngineError, JudgeLoader, ModelSpec, RunOptions};
use judgelab_store::Store;

/// Right on an item with probability 0.9 - temperature, by a hash of (item, temperature):
/// the same answer every time it is asked.
struct Graded {
    identity: ModelIdentity,
    calls: AtomicUsize,
    /// Set this flag after so many calls.
    cancel_after: Option<(usize, Arc<AtomicBool>)>,
}

impl Judge for Graded {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    fn count_tokens(&self, messages: &[Message]) -> Result<usize, String> {
        Ok(messages.iter().map(|m| m.content.len()).sum())
    }

    fn judge_batch(
        &self,
        requests: Vec<JudgeRequest>,
        cancel: &Arc<AtomicBool>,
        on_response: &mut dyn FnMut(JudgeResponse),
    ) {
        for request in requests {
            if cancel.load(Ordering::SeqCst) {
                return;
            }
            let n = self.calls.fetch_add(1, Ordering::SeqCst) + 1;
            let question = &request.messages.last().unwrap().content;
            let index: u64 = question.trim_start_matches('q').parse().unwrap();
            let truth = if index.is_multiple_of(2) { "A" } else { "B" };
            let t = request.sampling.temperature;
            let h = judgelab_core::hash::stable_u64(&format!("{question} {}", t.to_bits()));
            let right = (h % 10_000) as f64 / 10_000.0 < 0.9 - t;
            let text = match (right, truth) {
                (true, label) => label,
                (false, "A") => "B",
                (false, _) => "A",
            };
            on_response(JudgeResponse {
                key: request.key,
                result: Ok(Completion {
                    text: text.into(),
                    prompt_tokens: 10,
                    completion_tokens: 1,
                    latency_ms: 1.0,
                    ttft_ms: None,
                    stop: StopReason::EndOfTurn,
                    cached_tokens: None,
                    attempts: 1,
                    logprobs: None,
                    decoded_tokens: None,
                    endpoint: None,
                    logits: None,
                    top_logprobs: None,
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

struct Loader(Arc<Graded>);

impl JudgeLoader for Loader {
    fn load(&self, _spec: &ModelSpec) -> Result<Arc<dyn Judge>, EngineError> {
        Ok(self.0.clone())
    }
}

const N_ITEMS: usize = 200;

/// 200 pairwise items q0..q199 labelled A, B, A, …, and an experiment of eight
/// temperatures over them with `extra` appended.
fn fixture(dir: &std::path::Path, extra: &str) -> std::path::PathBuf {
    let lines: Vec<String> = (0..N_ITEMS)
        .map(|i| {
            let label = if i % 2 == 0 { "A" } else { "B" };
            format!(r#"{{"id":"i{i}","task":"pairwise","question":"q{i}","answer_a":"a","answer_b":"b","human_label":"{label}"}}"#)
        })
        .collect();
    std::fs::write(dir.join("items.jsonl"), lines.join("\n")).unwrap();
    std::fs::write(dir.join("q.jinja"), "{{ question }}").unwrap();
    std::fs::write(dir.join("fake.gguf"), "GGUF and nothing else").unwrap();
    let experiment = dir.join("race.toml");
    std::fs::write(
        &experiment,
        format!(
            "name = \"race\"\ndataset = \"items.jsonl\"\n[judge]\nmodel = \"fake.gguf\"\ntemplate = \"q.jinja\"\nbatch_size = 8\n[sweep]\nmax_tokens = 4\ntemperature = [0.0, 0.05, 0.1, 0.3, 0.4, 0.5, 0.6, 0.7]\n{extra}"
        ),
    )
    .unwrap();
    experiment
}

const RACE: &str = "[limits]\ndev = 120\ntest = 40\n[selection]\nmetric = \"accuracy\"\nstrategy = \"race\"\nround = 20\nmin_items = 40\n";

fn judge(cancel_after: Option<(usize, Arc<AtomicBool>)>) -> Arc<Graded> {
    Arc::new(Graded {
        identity: ModelIdentity {
            name: "graded".into(),
            location: "memory".into(),
            sha256: None,
        },
        calls: AtomicUsize::new(0),
        cancel_after,
    })
}

async fn run(
    store: &Store,
    experiment: &std::path::Path,
    judge: &Arc<Graded>,
    cancel: Arc<AtomicBool>,
) -> judgelab_engine::RunSummary {
    let options = RunOptions {
        cancel,
        judges: Some(Arc::new(Loader(judge.clone()))),
        timed_calls: 0,
        ..RunOptions::default()
    };
    run_experiment(store, experiment, options, &mut |_| {})
        .await
        .unwrap()
}

/// (trial_idx, round) of every drop, and each trial's test role, as stored.
async fn outcome(store: &Store) -> (Vec<(usize, u32)>, Vec<Option<String>>) {
    let e = store.experiment_by_name("race").await.unwrap().unwrap();
    let trials = store.trials(e.id).await.unwrap();
    let idx = |id: i64| trials.iter().find(|t| t.id == id).unwrap().trial_idx;
    let drops = store
        .race_standings(e.id)
        .await
        .unwrap()
        .into_iter()
        .filter(|s| s.dropped)
        .map(|s| (idx(s.trial_id), s.round))
        .collect();
    (drops, trials.into_iter().map(|t| t.test_role).collect())
}

#[tokio::test]
async fn a_race_drops_the_clearly_worse_and_only_the_kept_judge_the_test_split() {
    let dir = tempfile::tempdir().unwrap();
    let experiment = fixture(dir.path(), RACE);
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
    let graded = judge(None);
    let summary = run(&store, &experiment, &graded, Arc::default()).await;
    assert!(!summary.interrupted && summary.n_errors == 0);
    let race = summary.race.unwrap();
    assert_eq!((race.rounds, race.n_rounds), (6, 6));
    let (drops, roles) = outcome(&store).await;
    let dropped: HashSet<usize> = drops.iter().map(|d| d.0).collect();
    // The hottest trials (accuracy 0.3 and below) go; the best (0.9) stays and is picked.
    assert!(dropped.contains(&6) && dropped.contains(&7), "{drops:?}");
    assert!(!dropped.contains(&0), "{drops:?}");
    assert!(
        drops.iter().all(|&(_, round)| round >= 2),
        "not before min_items: {drops:?}"
    );
    // The pick is one of the best three (0.9, 0.85, 0.8); the best judges the test split.
    let pick = roles
        .iter()
        .position(|r| r.as_deref() == Some("pick"))
        .unwrap();
    assert!(pick <= 2 && roles[0].is_some(), "{roles:?}");
    // Fewer calls than the grid's 8 × 120 on the dev split, and 40 test items per kept trial.
    let kept: Vec<usize> = (0..8).filter(|&i| roles[i].is_some()).collect();
    assert!(kept.iter().all(|i| !dropped.contains(i)));
    assert!(
        summary.model_calls < 8 * 120 + kept.len() * 40,
        "{}",
        summary.model_calls
    );

    // The test split's verdicts: only kept trials have any, each all 40.
    let e = store.experiment_by_name("race").await.unwrap().unwrap();
    let test: HashSet<&str> = e.test.iter().map(String::as_str).collect();
    assert_eq!(test.len(), 40);
    for t in store.trials(e.id).await.unwrap() {
        let verdicts = store.verdicts(t.id).await.unwrap();
        let on_test = verdicts
            .iter()
            .filter(|v| test.contains(v.item_id.as_str()))
            .count();
        let expected = if t.test_role.is_some() { 40 } else { 0 };
        assert_eq!(
            on_test, expected,
            "trial {} ({:?})",
            t.trial_idx, t.test_role
        );
    }
    let summary = judgelab_engine::summarize(&store, "race", &Default::default())
        .await
        .unwrap();
    let best = &summary.trials[0];
    assert!(best.split_scores.test.is_some() && best.dropped.is_none());
    let worst = &summary.trials[7];
    assert!(worst.split_scores.test.is_none());
    let drop = worst.dropped.unwrap();
    assert!(drop.p_value.unwrap() <= drop.threshold.unwrap() && drop.difference.unwrap() < 0.0);

    // Nothing left: running again judges nothing.
    let again = run(&store, &experiment, &graded, Arc::default()).await;
    assert_eq!(again.judged_now, 0);
}

#[tokio::test]
async fn a_race_interrupted_and_resumed_drops_the_same_trials_at_the_same_rounds() {
    let dir = tempfile::tempdir().unwrap();
    let whole = {
        let experiment = fixture(dir.path(), RACE);
        let store = Store::open(&dir.path().join("whole.sqlite")).await.unwrap();
        run(&store, &experiment, &judge(None), Arc::default()).await;
        outcome(&store).await
    };
    let experiment = fixture(dir.path(), RACE);
    let store = Store::open(&dir.path().join("resumed.sqlite"))
        .await
        .unwrap();
    // Interrupted mid-round, three times, then to the end.
    let mut stored = Vec::new();
    for after in [70, 150, 130] {
        let cancel = Arc::new(AtomicBool::new(false));
        let summary = run(
            &store,
            &experiment,
            &judge(Some((after, cancel.clone()))),
            cancel,
        )
        .await;
        assert!(summary.interrupted);
        stored.push(summary.already_done + summary.judged_now);
    }
    assert!(stored.windows(2).all(|w| w[0] < w[1]), "{stored:?}");
    let last = run(&store, &experiment, &judge(None), Arc::default()).await;
    assert!(!last.interrupted);
    assert_eq!(outcome(&store).await, whole);
    // No verdict twice: the unique key holds, and the counts match the uninterrupted run.
    let e = store.experiment_by_name("race").await.unwrap().unwrap();
    let n: usize = store.count_verdicts(e.id).await.unwrap();
    let other = Store::open(&dir.path().join("whole.sqlite")).await.unwrap();
    let o = other.experiment_by_name("race").await.unwrap().unwrap();
    assert_eq!(n, other.count_verdicts(o.id).await.unwrap());
}

#[tokio::test]
async fn a_budget_stops_the_run_cleanly_and_a_larger_one_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let experiment = fixture(
        dir.path(),
        &RACE.replace("test = 40\n", "test = 40\nmax_calls = 100\n"),
    );
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
    let summary = run(&store, &experiment, &judge(None), Arc::default()).await;
    let why = summary.stopped_by.expect("stopped by the budget");
    assert!(why.starts_with("limits.max_calls = 100"), "{why}");
    // It stops after the calls in flight: a batch at most past the budget.
    assert!(
        (100..=108).contains(&summary.model_calls),
        "{}",
        summary.model_calls
    );
    // Same experiment (budgets are not its identity), a larger budget: it resumes.
    let experiment = fixture(
        dir.path(),
        &RACE.replace("test = 40\n", "test = 40\nmax_calls = 100000\n"),
    );
    let summary = run(&store, &experiment, &judge(None), Arc::default()).await;
    assert!(summary.resumed && summary.stopped_by.is_none() && !summary.interrupted);
    assert_eq!(summary.race.unwrap().rounds, 6);
}

#[tokio::test]
async fn a_selection_metric_the_task_lacks_is_refused_before_any_call() {
    let dir = tempfile::tempdir().unwrap();
    let experiment = fixture(dir.path(), &RACE.replace("\"accuracy\"", "\"spearman\""));
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
    let graded = judge(None);
    let options = RunOptions {
        judges: Some(Arc::new(Loader(graded.clone()))),
        ..RunOptions::default()
    };
    let err = run_experiment(&store, &experiment, options, &mut |_| {})
        .await
        .unwrap_err();
    assert!(err.is_invalid_input(), "{err}");
    assert!(
        err.to_string()
            .contains("selection.metric: spearman is not defined for pairwise data"),
        "{err}"
    );
    assert_eq!(graded.calls.load(Ordering::SeqCst), 0);
}
