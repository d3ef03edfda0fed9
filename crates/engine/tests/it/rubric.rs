//! Rubric trials: each criterion's verdicts stored apart, and scored against the criterion's
//! own labels as the reference libraries score them (`tools/reference_rubric.py` wrote
//! `testdata/criteria.json`).

use std::sync::Arc;

use judgelab_core::annotation::Labels;
use judgelab_core::metrics::Quality;
use judgelab_core::verdict::{FailureKind, Verdict};
use judgelab_core::Label;
use judgelab_engine::{summarize, summarize_against, EngineError};
use judgelab_store::Store;
use serde_json::Value;

use std::collections::HashMap;

use crate::{run, scripted};

const TEMPLATE: &str = r#"{%- set criteria = [
  {"name": "coherence", "definition": "Does the response follow from the context?"},
  {"name": "engaging", "definition": "Is the response engaging?"},
] -%}
{{ question }}"#;

/// The reference case's items as a dataset rated 1-5 overall and on its criteria, each
/// item's question `q{i}`, the judge answering each as the case says.
fn write_case(dir: &std::path::Path, case: &Value) -> Vec<String> {
    let mut lines = Vec::new();
    let mut outputs = Vec::new();
    for (i, item) in case["items"].as_array().unwrap().iter().enumerate() {
        let mut line = serde_json::json!({
            "id": item["id"],
            "task": "single",
            "question": format!("q{i}"),
            "answer": "a response",
            "human_label": item["overall"],
            "human_labels": item["labels"],
        });
        if i == 0 {
            line["label_scales"] = case["scales"].clone();
        }
        lines.push(line.to_string());
        outputs.push(item["output"].as_str().unwrap().to_string());
    }
    std::fs::write(dir.join("items.jsonl"), lines.join("\n")).unwrap();
    std::fs::write(dir.join("r.jinja"), TEMPLATE).unwrap();
    std::fs::write(dir.join("fake.gguf"), "GGUF and nothing else").unwrap();
    std::fs::write(
        dir.join("r.toml"),
        "name = \"r\"\ndataset = \"items.jsonl\"\n[judge]\nmodel = \"fake.gguf\"\ntemplate = \"r.jinja\"\n[sweep]\nmax_tokens = 32\n",
    )
    .unwrap();
    outputs
}

const METRICS: [(&str, Quality); 10] = [
    ("accuracy", Quality::Accuracy),
    ("within_half_point", Quality::WithinHalfPoint),
    ("qwk", Quality::Kappa),
    ("lwk", Quality::KappaLinear),
    ("spearman", Quality::Spearman),
    ("kendall", Quality::Kendall),
    ("pearson", Quality::Pearson),
    ("alpha_ordinal", Quality::AlphaOrdinal),
    ("alpha_interval", Quality::AlphaInterval),
    ("mae", Quality::MeanAbsoluteError),
];

fn close(actual: Option<f64>, expected: &Value, what: &str) {
    match (actual, expected.as_f64()) {
        (Some(a), Some(e)) => assert!((a - e).abs() < 1e-9, "{what}: {a} against {e}"),
        (a, e) => assert_eq!(a, e, "{what}"),
    }
}

#[tokio::test]
async fn each_criterion_is_stored_apart_and_scored_against_its_own_labels() {
    let case: Value = serde_json::from_str(include_str!("testdata/criteria.json")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let outputs = write_case(dir.path(), &case);
    let outputs: Vec<&str> = outputs.iter().map(String::as_str).collect();
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
    let judge = scripted(&outputs, None);
    run(&store, &dir.path().join("r.toml"), &judge, Arc::default()).await;

    // An answer leaving a criterion out fails that criterion alone; one off its scale too.
    let s = summarize(&store, "r", &Default::default()).await.unwrap();
    let trial = &s.trials[0];
    let stored = |id: &str| {
        let v = trial.verdicts.iter().find(|v| v.item_id == id).unwrap();
        (v.criteria["coherence"], v.criteria["engaging"])
    };
    assert_eq!(
        stored("u03"),
        (
            Verdict::Parsed(Label::Rating(1.0)),
            Verdict::Failed(FailureKind::NoLabel)
        )
    );
    assert_eq!(stored("u07").1, Verdict::Failed(FailureKind::OutOfRange));

    for (name, expected) in case["expected"].as_object().unwrap() {
        let score = &trial.criteria[name];
        assert_eq!(
            score.dev.n as u64,
            expected["n"].as_u64().unwrap(),
            "{name}"
        );
        let n_errors = expected["n_errors"].as_u64().unwrap();
        assert_eq!(score.dev.n_errors as u64, n_errors, "{name}");
        close(
            score.parse_failure_rate,
            &expected["parse_failure_rate"],
            name,
        );
        // The experiment read on the criterion alone agrees with its column.
        let alone = summarize_against(
            &store,
            "r",
            &Default::default(),
            &Labels::Original,
            Some(name),
        )
        .await
        .unwrap();
        assert_eq!(alone.labels.criterion.as_ref().unwrap().name, *name);
        assert_eq!(alone.experiment.task_kind, alone.dataset.task);
        for (key, q) in METRICS {
            let what = format!("{name} {key}");
            close(score.dev.quality.get(q).value, &expected[key], &what);
            close(alone.trials[0].metrics.value(q), &expected[key], &what);
        }
    }

    // Weights fitted to the overall label as scipy's nnls fits them, and the weighted
    // aggregate scored as the reference libraries score it.
    let want = &case["weights"];
    let w = trial.weights.as_ref().expect("a rubric trial has weights");
    assert_eq!(w.n_fit as u64, want["n_fit"].as_u64().unwrap());
    close(Some(w.intercept), &want["intercept"], "intercept");
    for name in ["coherence", "engaging"] {
        close(Some(w.weights[name]), &want["weights"][name], name);
        close(Some(w.varies[name]), &want["varies"][name], name);
    }
    assert!(w.test.is_none(), "no test split");
    let (minimum, _) = w
        .minimum
        .as_ref()
        .expect("criteria have a minimum aggregate");
    for (key, q) in METRICS {
        close(
            w.dev.quality.get(q).value,
            &want[key],
            &format!("weighted {key}"),
        );
        close(
            minimum.quality.get(q).value,
            &want["minimum"][key],
            &format!("minimum {key}"),
        );
    }

    let unknown = summarize_against(
        &store,
        "r",
        &Default::default(),
        &Labels::Original,
        Some("fluency"),
    )
    .await
    .unwrap_err();
    assert!(unknown.is_invalid_input());
    assert_eq!(
        unknown.to_string(),
        "\"fluency\" is not a criterion a trial of this experiment asks (coherence, engaging)"
    );
    let queue = summarize_against(
        &store,
        "r",
        &Default::default(),
        &Labels::Annotations { annotator: None },
        Some("engaging"),
    )
    .await;
    assert!(matches!(queue, Err(EngineError::Results(_))));
}

/// A checklist asks a criterion the template declares with yes/no items as those items, a
/// call each, stored as `NAME/k`; each criterion's value is the share of its items answered
/// yes on its scale (the stated rule), over the items that parsed: an answer that does not
/// parse fails that item only. Everything downstream reads the criterion, not its items.
#[tokio::test]
async fn a_checklists_yes_no_items_make_their_criterions_value() {
    let dir = tempfile::tempdir().unwrap();
    let coherence = [1, 3, 2, 3];
    crate::two_criteria(
        dir.path(),
        coherence.map(|x| x as f64),
        ("engaging", [1, 3], [1.0, 3.0, 2.0, 1.0]),
    );
    std::fs::write(
        dir.path().join("c.jinja"),
        r#"{%- set criteria = [
  {"name": "coherence", "definition": "Does it follow?"},
  {"name": "engaging", "definition": "Is it engaging?", "items": ["Asks?", "Adds?"]},
] -%}
{{ question }} {{ rubric[0].name }}{% if rubric[0].item %} {{ rubric[0].item }}{% endif %}"#,
    )
    .unwrap();
    std::fs::write(dir.path().join("fake.gguf"), "GGUF and nothing else").unwrap();
    std::fs::write(
        dir.path().join("c.toml"),
        "name = \"c\"\ndataset = \"items.jsonl\"\n[judge]\nmodel = \"fake.gguf\"\ntemplate = \"c.jinja\"\n[sweep]\nmax_tokens = 4\nstyle = \"checklist\"\n",
    )
    .unwrap();
    // Engaging's items: both yes, one yes, neither, and one that does not parse.
    let answers = [
        ("Yes", "yes"),
        ("no", "Yes."),
        ("No", "no"),
        ("maybe", "yes"),
    ];
    let mut script = HashMap::new();
    for i in 0..4 {
        script.insert(format!("q{i} coherence"), coherence[i].to_string());
        script.insert(format!("q{i} engaging Asks?"), answers[i].0.to_string());
        script.insert(format!("q{i} engaging Adds?"), answers[i].1.to_string());
    }
    let judge = Arc::new(crate::Scripted {
        script,
        ..Arc::into_inner(scripted(&[], None)).unwrap()
    });
    let store = Store::open(&dir.path().join("db.sqlite")).await.unwrap();
    let s = run(&store, &dir.path().join("c.toml"), &judge, Arc::default()).await;
    // 4 items × (1 criterion + 2 items), counted as calls for 4 verdicts.
    assert_eq!((s.total, s.verdicts, s.n_errors), (12, 4, 0));

    let row = store.experiment_by_name("c").await.unwrap().unwrap();
    let trial = &store.trials(row.id).await.unwrap()[0];
    let mut names: Vec<String> = store
        .verdicts(trial.id)
        .await
        .unwrap()
        .into_iter()
        .filter(|v| v.item_id == "i0")
        .map(|v| v.criterion)
        .collect();
    names.sort();
    assert_eq!(names, ["coherence", "engaging/1", "engaging/2"]);

    let summary = summarize(&store, "c", &Default::default()).await.unwrap();
    let t = &summary.trials[0];
    assert_eq!(
        t.criteria.keys().collect::<Vec<_>>(),
        ["coherence", "engaging"]
    );
    // 1 + share × 2: both yes 3, one yes 2, neither 1, the parsed one yes 3.
    let want = [3.0, 2.0, 1.0, 3.0];
    for v in t.verdicts.iter() {
        let i: usize = v.item_id[1..].parse().unwrap();
        assert_eq!(
            v.criteria["engaging"],
            Verdict::Parsed(Label::Rating(want[i])),
            "{v:?}"
        );
    }
    // The items' weights, fitted to the overall label on the verdicts answering both (the
    // last item's first answer did not parse), with how often each varies and how its
    // answers rank with the humans' engaging labels.
    let w = t
        .item_weights
        .as_ref()
        .expect("a checklist with items has item weights");
    assert_eq!(
        w.weights.keys().collect::<Vec<_>>(),
        ["engaging/1", "engaging/2"]
    );
    assert_eq!(w.n_fit, 3);
    assert_eq!(w.questions["engaging/2"], "Adds?");
    // Answers (1, 1), (0, 1), (0, 0): each item's share off its most common answer.
    assert!((w.varies["engaging/1"] - 1.0 / 3.0).abs() < 1e-12, "{w:?}");
    assert!((w.varies["engaging/2"] - 1.0 / 3.0).abs() < 1e-12, "{w:?}");
    // Engaging labels 1, 3, 2 on those items: Spearman of (1, 0, 0) and (1, 1, 0) with them.
    let rho = |x: &[f64]| judgelab_core::metrics::agreement::spearman(x, &[1.0, 3.0, 2.0]);
    assert_eq!(w.spearman["engaging/1"], rho(&[1.0, 0.0, 0.0]));
    assert_eq!(w.spearman["engaging/2"], rho(&[1.0, 1.0, 0.0]));
    assert!(t.weights.is_some(), "the criteria have weights too");
    // Read on the criterion alone: its four values against its labels.
    let alone = summarize_against(
        &store,
        "c",
        &Default::default(),
        &Labels::Original,
        Some("engaging"),
    )
    .await
    .unwrap();
    assert_eq!(alone.trials[0].metrics.n, 4);
    assert_eq!(alone.trials[0].metrics.parse_failure_rate, Some(0.0));
}
