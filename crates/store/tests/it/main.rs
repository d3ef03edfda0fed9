//! Store tests on a temporary SQLite file.

use judgelab_core::dataset::{parse, ImportOptions};
use judgelab_core::results::{Outcome, VerdictRecord};
use judgelab_core::sampling::VerdictDistribution;
use judgelab_core::{Choice, Dataset, FailureKind, Label, Template, TrialParams, Verdict};
use judgelab_store::{DoneKey, NewExperiment, NewTrial, Store, StoreError};

fn dataset(name: &str, ids: &[&str]) -> Dataset {
    let lines: Vec<String> = ids
        .iter()
        .map(|id| {
            format!(r#"{{"id":"{id}","task":"pairwise","question":"q {id}","answer_a":"a","answer_b":"b","human_label":"B","meta":{{"votes":[1,2]}}}}"#)
        })
        .collect();
    parse(
        &format!("{name}.jsonl"),
        lines.join("\n").as_bytes(),
        &ImportOptions::default(),
    )
    .unwrap()
}

/// An experiment file, as the store keeps it.
const SPEC: &str = "name = \"e\"\ndataset = \"d\"\n[judge]\ntemplate = \"pairwise\"\n";

async fn store(dir: &tempfile::TempDir) -> Store {
    Store::open(&dir.path().join("sub/judgelab.sqlite"))
        .await
        .unwrap()
}

#[tokio::test]
async fn datasets_round_trip_and_are_found_by_hash_and_name() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let d = dataset("pairs", &["x", "y", "z"]);
    let info = store.insert_dataset(&d).await.unwrap();
    assert_eq!(info.n_items, 3);
    assert_eq!(
        store.dataset_by_hash(&d.content_hash).await.unwrap(),
        Some(info.clone())
    );
    assert_eq!(
        store.dataset_by_name("pairs").await.unwrap(),
        Some(info.clone())
    );
    let loaded = store.load_dataset(&info).await.unwrap();
    assert_eq!(loaded, d);

    // Items without a label are kept, apart from the labelled ones.
    let mut mixed = dataset("mixed", &["m1", "m2", "m3"]);
    let last = mixed.items.pop().unwrap();
    mixed.unlabelled.push(last.with_label(()));
    let info = store.insert_dataset(&mixed).await.unwrap();
    assert_eq!(info.n_items, 2);
    assert_eq!(store.load_dataset(&info).await.unwrap(), mixed);

    // Labels on several criteria, each on a scale of its own, come back as they went in.
    let rated = parse(
        "rated.jsonl",
        concat!(
            r#"{"id":"r1","task":"single","question":"q","answer":"x","human_label":4,"human_labels":{"coherence":2.5,"overall":4},"label_scales":{"coherence":[1,3]}}"#,
            "\n",
            r#"{"id":"r2","task":"single","question":"q","answer":"y","human_label":null,"human_labels":{"overall":3}}"#,
        )
        .as_bytes(),
        &ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(rated.criteria.len(), 2);
    let info = store.insert_dataset(&rated).await.unwrap();
    assert_eq!(info.criteria, rated.criteria);
    assert_eq!(store.load_dataset(&info).await.unwrap(), rated);

    let other = dataset("pairs", &["w"]);
    let err = store.insert_dataset(&other).await.unwrap_err();
    assert!(matches!(err, StoreError::NameTaken { .. }), "{err}");
    store.close().await;

    // Reopening the file finds everything again.
    let store = Store::open(&dir.path().join("sub/judgelab.sqlite"))
        .await
        .unwrap();
    assert_eq!(store.datasets().await.unwrap().len(), 3);
}

#[tokio::test]
async fn one_run_of_an_experiment_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let held = store.lock_run("e").unwrap();
    assert!(held.path.ends_with("sub/judgelab.sqlite-runs/e.lock"));
    // Another handle on the same database, as another process would open it.
    let other = Store::open(store.path()).await.unwrap();
    let err = other.lock_run("e").unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "experiment \"e\" is already running (process {}); wait for that run to end, or stop it, and run again",
            std::process::id()
        )
    );
    // Other experiments run meanwhile.
    let f = other.lock_run("f").unwrap();
    drop(held);
    let again = other.lock_run("e").unwrap();
    drop((again, f));
}

#[tokio::test]
async fn a_failed_import_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    // Validation normally rejects duplicate ids; here the database's unique key must roll
    // the whole transaction back on the second item.
    let mut d = dataset("dups", &["a", "b"]);
    d.items[1].id = "a".into();
    assert!(store.insert_dataset(&d).await.is_err());
    assert_eq!(store.datasets().await.unwrap(), vec![]);
    assert_eq!(store.dataset_by_name("dups").await.unwrap(), None);
}

fn params() -> TrialParams {
    TrialParams {
        judge: "default".into(),
        template: "pairwise".into(),
        temperature: 0.0,
        top_p: 1.0,
        max_tokens: 4,
        few_shot: 1,
        few_shot_max_tokens: None,
        few_shot_set: 0,
        order: Default::default(),
        constraint: Default::default(),
        concurrency: None,
        exact: false,
        style: Default::default(),
        quantization: None,
        input_max_tokens: None,
        input_strategy: Default::default(),
    }
}

fn verdict(trial_id: i64, item: &str, output: &str, error: Option<&str>) -> VerdictRecord {
    let outcome = match error {
        Some(e) => Outcome::CallFailed(e.to_string()),
        None => Outcome::Judged(Verdict::Parsed(Label::from_text(output).unwrap())),
    };
    VerdictRecord {
        raw_output: error.is_none().then(|| output.to_string()),
        prompt_tokens: 10,
        completion_tokens: 1,
        latency_ms: Some(12.5),
        ttft_ms: Some(3.0),
        ..VerdictRecord::new(trial_id, item, 0, false, 7, "h", outcome)
    }
}

#[tokio::test]
async fn verdicts_are_idempotent_and_failed_calls_are_retried() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let info = store
        .insert_dataset(&dataset("d", &["x", "y", "z"]))
        .await
        .unwrap();
    let template = Template::builtin("pairwise").unwrap();
    store.save_template(&template).await.unwrap();
    store.save_template(&template).await.unwrap();
    let experiment = store
        .create_experiment(
            &NewExperiment {
                name: "e".into(),
                content_hash: "c".into(),
                spec: SPEC.into(),
                dataset_id: info.id,
                pool: vec!["z".into()],
                judged: vec!["x".into(), "y".into()],
                test: vec![],
                card: None,
            },
            &[NewTrial {
                params: params(),
                template_hash: template.hash.clone(),
                model_path: "/m.gguf".into(),
                model_sha256: Some("abc".into()),
                examples: vec!["z".into()],
                judge_identity: String::new(),
            }],
            None,
        )
        .await
        .unwrap();
    assert_eq!(experiment.pool, vec!["z".to_string()]);
    let trials = store.trials(experiment.id).await.unwrap();
    assert_eq!(trials.len(), 1);
    assert_eq!(trials[0].params, params());
    let t = trials[0].id;

    assert!(store
        .record_verdict(&verdict(t, "x", "A", None))
        .await
        .unwrap());
    // A second verdict for the same key never overwrites a successful one.
    assert!(!store
        .record_verdict(&verdict(t, "x", "B", None))
        .await
        .unwrap());
    // A failed call is recorded, and replaced by the next successful attempt.
    assert!(store
        .record_verdict(&verdict(t, "y", "", Some("timeout")))
        .await
        .unwrap());
    let done = store.done_keys(t).await.unwrap();
    assert_eq!(done.len(), 1);
    assert!(done.contains(&DoneKey::new("x", 0, false, "")));
    let failed = store.verdicts_state(experiment.id).await.unwrap();
    assert_eq!(failed, (2, 1));
    // The same item shown with its answers swapped is another verdict.
    // It carries what summarising its inputs cost, and how many tokens they lost.
    let swapped = VerdictRecord {
        swapped: true,
        input_cut: Some(120),
        summaries: Some(judgelab_core::record::Written {
            calls: 2,
            prompt_tokens: 700,
            completion_tokens: 90,
            cost_usd: Some(0.25),
        }),
        ..verdict(t, "x", "B", None)
    };
    assert!(store.record_verdict(&swapped).await.unwrap());
    assert!(store
        .done_keys(t)
        .await
        .unwrap()
        .contains(&DoneKey::new("x", 0, true, "")));
    assert!(store
        .record_verdict(&verdict(t, "y", "B", None))
        .await
        .unwrap());
    let verdicts = store.verdicts(t).await.unwrap();
    assert_eq!(verdicts.len(), 3);
    assert_eq!(verdicts[0].outcome.label(), Some(Label::Choice(Choice::A)));
    assert!(verdicts[1].swapped);
    assert_eq!(
        (verdicts[1].input_cut, verdicts[1].summaries),
        (swapped.input_cut, swapped.summaries)
    );
    assert_eq!(verdicts[0].summaries, None);
    assert_eq!(verdicts[2].outcome.label(), Some(Label::Choice(Choice::B)));
    assert_eq!(verdicts[2].outcome.error(), None);
    assert_eq!(store.count_verdicts(experiment.id).await.unwrap(), 3);
    // The failed call judged again: as many rows, none failed (what the app's cache sees).
    assert_eq!(store.verdicts_state(experiment.id).await.unwrap(), (3, 0));

    // A rubric call keeps its verdict per criterion, a failed criterion as its failure;
    // a checklist's calls on one item, one per criterion, are verdicts of their own.
    let rubric = VerdictRecord {
        repeat: 1,
        criteria: [
            ("coherence".to_string(), Verdict::Parsed(Label::Rating(2.0))),
            (
                "naturalness".to_string(),
                Verdict::Failed(FailureKind::OutOfRange),
            ),
        ]
        .into(),
        ..verdict(t, "x", "A", None)
    };
    assert!(store.record_verdict(&rubric).await.unwrap());
    for criterion in ["coherence", "naturalness"] {
        let checklist = VerdictRecord {
            repeat: 2,
            criterion: criterion.into(),
            criteria: [(criterion.to_string(), Verdict::Parsed(Label::Rating(3.0)))].into(),
            ..verdict(t, "x", "A", None)
        };
        assert!(store.record_verdict(&checklist).await.unwrap());
    }
    let stored = store.verdicts(t).await.unwrap();
    assert_eq!(stored.len(), 6);
    assert_eq!(stored[2], rubric);
    let asked: Vec<(u32, &str)> = stored
        .iter()
        .filter(|v| v.item_id == "x" && v.repeat == 2)
        .map(|v| (v.repeat, v.criterion.as_str()))
        .collect();
    assert_eq!(asked, [(2, "coherence"), (2, "naturalness")]);
    assert_eq!(stored[0].criteria, Default::default());

    store.delete_experiment(experiment.id).await.unwrap();
    assert_eq!(store.experiment_by_name("e").await.unwrap(), None);
    assert_eq!(store.verdicts(t).await.unwrap(), vec![]);
}

/// An experiment "e" of one trial, judging x and y.
async fn one_trial(store: &Store) -> (i64, i64) {
    let info = store
        .insert_dataset(&dataset("d", &["x", "y"]))
        .await
        .unwrap();
    let template = Template::builtin("pairwise").unwrap();
    store.save_template(&template).await.unwrap();
    let experiment = store
        .create_experiment(
            &NewExperiment {
                name: "e".into(),
                content_hash: "c".into(),
                spec: SPEC.into(),
                dataset_id: info.id,
                pool: vec![],
                judged: vec!["x".into(), "y".into()],
                test: vec![],
                card: None,
            },
            &[NewTrial {
                params: params(),
                template_hash: template.hash.clone(),
                model_path: "/m.gguf".into(),
                model_sha256: None,
                examples: vec![],
                judge_identity: String::new(),
            }],
            None,
        )
        .await
        .unwrap();
    let trial = store.trials(experiment.id).await.unwrap()[0].id;
    (experiment.id, trial)
}

#[tokio::test]
async fn outcomes_and_distributions_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let (_, t) = one_trial(&store).await;
    let exact = VerdictRecord {
        raw_output: Some(" B".into()),
        exact: true,
        distribution: Some(VerdictDistribution {
            labels: vec![
                (Label::Choice(Choice::A), 0.25),
                (Label::Choice(Choice::B), 0.625),
            ],
            failed: 0.125,
        }),
        belief: Some(VerdictDistribution {
            labels: vec![
                (Label::Choice(Choice::A), 0.375),
                (Label::Choice(Choice::B), 0.5),
            ],
            failed: 0.125,
        }),
        ..VerdictRecord::new(
            t,
            "x",
            0,
            false,
            1,
            "h",
            Outcome::Judged(Verdict::Parsed(Label::Choice(Choice::B))),
        )
    };
    let failed_parse = VerdictRecord {
        raw_output: Some("I cannot".into()),
        ..VerdictRecord::new(
            t,
            "x",
            1,
            false,
            2,
            "h",
            Outcome::Judged(Verdict::Failed(FailureKind::Truncated)),
        )
    };
    let failed_call = VerdictRecord::new(
        t,
        "y",
        0,
        false,
        3,
        "h",
        Outcome::CallFailed("HTTP 503".into()),
    );
    for v in [&exact, &failed_parse, &failed_call] {
        assert!(store.record_verdict(v).await.unwrap());
    }
    assert_eq!(
        store.verdicts(t).await.unwrap(),
        vec![exact, failed_parse, failed_call]
    );
}

#[tokio::test]
async fn a_stored_spec_that_no_longer_parses_names_its_experiment() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let (id, _) = one_trial(&store).await;
    let pool = sqlx::SqlitePool::connect(&format!(
        "sqlite://{}",
        dir.path().join("sub/judgelab.sqlite").display()
    ))
    .await
    .unwrap();
    sqlx::query("UPDATE experiments SET spec = ? WHERE id = ?")
        .bind("name = \"e\"\n[sweep]\nrepeats = 0\n")
        .bind(id)
        .execute(&pool)
        .await
        .unwrap();
    let err = store.experiment_by_name("e").await.unwrap_err();
    assert!(
        matches!(err, StoreError::Spec { ref name, .. } if name == "e"),
        "{err}"
    );
    let shown = format!("{err}: {}", std::error::Error::source(&err).unwrap());
    assert!(
        shown.contains("experiment \"e\": its stored experiment file no longer parses"),
        "{shown}"
    );
}

#[tokio::test]
async fn a_race_and_a_selection_are_recorded_and_read_back() {
    use judgelab_core::race::RoundStanding;
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let info = store
        .insert_dataset(&dataset("d", &["x", "y", "z", "w"]))
        .await
        .unwrap();
    let template = Template::builtin("pairwise").unwrap();
    store.save_template(&template).await.unwrap();
    let trial = |temperature: f64| NewTrial {
        params: TrialParams {
            temperature,
            ..params()
        },
        template_hash: template.hash.clone(),
        model_path: "/m.gguf".into(),
        model_sha256: None,
        examples: vec![],
        judge_identity: String::new(),
    };
    let e = store
        .create_experiment(
            &NewExperiment {
                name: "e".into(),
                content_hash: "c".into(),
                spec: SPEC.into(),
                dataset_id: info.id,
                pool: vec![],
                judged: vec!["x".into(), "y".into()],
                test: vec!["z".into(), "w".into()],
                card: None,
            },
            &[trial(0.0), trial(0.7)],
            None,
        )
        .await
        .unwrap();
    assert_eq!(
        (e.test.clone(), e.selected, e.race_rounds),
        (vec!["z".to_string(), "w".to_string()], false, 0)
    );
    let trials = store.trials(e.id).await.unwrap();
    let standing = |trial_id, leader, dropped| RoundStanding {
        trial_id,
        round: 1,
        n_items: 2,
        leader,
        value: Some(0.5),
        difference: (!leader).then_some(-0.5),
        std_error: (!leader).then_some(0.1),
        p_value: (!leader).then_some(0.001),
        threshold: (!leader).then_some(0.05),
        dropped,
    };
    let round = [
        standing(trials[0].id, true, false),
        standing(trials[1].id, false, true),
    ];
    store.record_round(e.id, 1, &round).await.unwrap();
    assert_eq!(store.race_standings(e.id).await.unwrap(), round.to_vec());
    store
        .record_selection(e.id, &[(trials[0].id, "pick".into())])
        .await
        .unwrap();
    let e = store.experiment_by_name("e").await.unwrap().unwrap();
    assert_eq!((e.selected, e.race_rounds), (true, 1));
    let roles: Vec<Option<String>> = store
        .trials(e.id)
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.test_role)
        .collect();
    assert_eq!(roles, vec![Some("pick".to_string()), None]);
}

#[tokio::test]
async fn a_summary_is_stored_once_and_read_by_its_key() {
    let dir = tempfile::tempdir().unwrap();
    let store = store(&dir).await;
    let s = judgelab_store::StoredSummary {
        key: "k1".into(),
        summariser: "cheap".into(),
        max_tokens: 64,
        input_sha256: "ab".into(),
        summary: "short".into(),
        prompt_tokens: 300,
        completion_tokens: 40,
        latency_ms: Some(12.5),
        cost_usd: None,
    };
    store.insert_summary(&s).await.unwrap();
    let again = judgelab_store::StoredSummary {
        summary: "other".into(),
        ..s.clone()
    };
    store.insert_summary(&again).await.unwrap();
    let found = store
        .summaries(&["k1".to_string(), "k2".to_string()])
        .await
        .unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found["k1"], s);
}
