//! The labelling queue's figures against scikit-learn, scipy and krippendorff on fixed
//! labels (`testdata/reference.json`, written by `tools/reference_annotation.py`): each
//! pair of raters (the dataset and two annotators, each labelling part of the items), alpha
//! over all of them, everyone's labels combined, and the disagreement of fixed votes.

use serde_json::Value;

use super::humans::human_agreement;
use super::queue::disagreement;
use super::*;
use crate::dataset::{parse, ImportOptions};
use crate::metrics::{BootstrapSpec, Quality};

const REFERENCE: &str = include_str!("testdata/reference.json");

use crate::reference::close;

fn label(v: &Value) -> Label {
    match v {
        Value::String(s) => Label::from_text(s).unwrap(),
        Value::Number(n) => Label::Rating(n.as_f64().unwrap()),
        _ => panic!("{v} is no label"),
    }
}

/// The case's dataset (its `dataset` rater's labels, and the labels of the raters named
/// `NAME (file)` in its `meta.annotations`) and the annotators' labels.
fn case(task: &str, case: &Value) -> (Dataset, Vec<Annotation>) {
    let raters = case["raters"].as_object().unwrap();
    let in_file = |name: &str| name.strip_suffix(" (file)").map(str::to_string);
    let task = if task == "pairwise" { task } else { "single" };
    let lines: Vec<String> = raters["dataset"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(id, l)| {
            let answers = if task == "pairwise" {
                r#""answer_a":"a","answer_b":"b""#
            } else {
                r#""answer":"x""#
            };
            let people: Vec<Value> = raters
                .iter()
                .filter_map(|(name, labels)| {
                    let label = labels.get(id)?;
                    Some(serde_json::json!({"annotator": in_file(name)?, "label": label}))
                })
                .collect();
            let meta = serde_json::json!({ "annotations": people });
            format!(r#"{{"id":"{id}","task":"{task}","question":"q",{answers},"human_label":{l},"meta":{meta}}}"#)
        })
        .collect();
    let dataset = parse(
        "d.jsonl",
        lines.join("\n").as_bytes(),
        &ImportOptions::default(),
    )
    .unwrap();
    let mut annotations = Vec::new();
    let queue = |n: &str| n != "dataset" && in_file(n).is_none();
    for (name, labels) in raters.iter().filter(|(n, _)| queue(n)) {
        for (id, l) in labels.as_object().unwrap() {
            annotations.push(Annotation {
                item_id: id.clone(),
                annotator: name.clone(),
                label: label(l),
                created_at: String::new(),
            });
        }
    }
    (dataset, annotations)
}

fn check_case(task: &str, metrics: &[(&str, Quality)]) {
    let reference: Value = serde_json::from_str(REFERENCE).unwrap();
    let want = &reference[task];
    let (dataset, annotations) = case(task, want);
    let spec = BootstrapSpec {
        resamples: 0,
        ..BootstrapSpec::default()
    };
    let from_file = super::humans::from_file(&dataset, None);
    let h = human_agreement(&dataset, &annotations, &from_file, None, &spec).unwrap();
    let pairs = want["pairs"].as_array().unwrap();
    assert_eq!(h.pairs.len(), pairs.len());
    for (got, want) in h.pairs.iter().zip(pairs) {
        let what = format!("{task}: {} and {}", got.first, got.second);
        assert_eq!(got.first, want["first"].as_str().unwrap(), "{what}");
        assert_eq!(got.second, want["second"].as_str().unwrap(), "{what}");
        assert_eq!(
            got.n_items as u64,
            want["n_items"].as_u64().unwrap(),
            "{what}"
        );
        for (key, q) in metrics {
            close(
                &format!("{what}: {key}"),
                got.quality.get(*q).value,
                &want[*key],
            );
        }
    }
    close(&format!("{task}: alpha"), h.alpha.value, &want["alpha"]);
    // Over the people alone where the dataset's label combines theirs.
    let n_raters = want["raters"].as_object().unwrap().len();
    assert_eq!(h.combined, !from_file.is_empty());
    assert_eq!(h.alpha_raters, n_raters - usize::from(h.combined));
    assert_eq!(h.n_shared as u64, want["n_shared"].as_u64().unwrap());
    let combined = by_item(
        dataset.task,
        &annotations,
        &Labels::Annotations { annotator: None },
    )
    .unwrap();
    let expected = want["combined"].as_object().unwrap();
    assert_eq!(combined.len(), expected.len());
    for (id, l) in expected {
        match (combined[id], label(l)) {
            (Label::Rating(g), Label::Rating(w)) => {
                assert!((g - w).abs() < 1e-9, "{id}: {g} != {w}")
            }
            (g, w) => assert_eq!(g, w, "{id}"),
        }
    }
}

#[test]
fn raters_on_pairwise_items_agree_as_scikit_learn_and_krippendorff_say() {
    check_case(
        "pairwise",
        &[("accuracy", Quality::Accuracy), ("kappa", Quality::Kappa)],
    );
}

/// The reference's keys of the metrics of ratings.
const RATINGS: &[(&str, Quality)] = &[
    ("accuracy", Quality::Accuracy),
    ("within_half_point", Quality::WithinHalfPoint),
    ("kappa", Quality::Kappa),
    ("spearman", Quality::Spearman),
    ("pearson", Quality::Pearson),
];

#[test]
fn raters_on_ratings_that_are_means_agree_as_scikit_learn_scipy_and_krippendorff_say() {
    check_case("single", RATINGS);
}

/// Ratings that are means of three people whose own labels the file keeps: the pairs
/// among them, the queue's annotator and the dataset (not paired with its own people), and
/// alpha over the people alone.
#[test]
fn raters_kept_by_the_file_agree_as_scikit_learn_scipy_and_krippendorff_say() {
    check_case("file", RATINGS);
}

#[test]
fn disagreement_is_scipys_entropy_in_bits_or_numpys_standard_deviation() {
    let reference: Value = serde_json::from_str(REFERENCE).unwrap();
    for case in reference["disagreement"].as_array().unwrap() {
        let votes: Vec<Label> = case["votes"]
            .as_array()
            .unwrap()
            .iter()
            .map(label)
            .collect();
        let task = if votes.iter().any(|v| matches!(v, Label::Rating(_))) {
            Task::Single {
                scale_min: 1,
                scale_max: 5,
            }
        } else {
            Task::Pairwise
        };
        let want = case.get("entropy").or(case.get("spread")).unwrap();
        close(&format!("{case}"), disagreement(task, &votes), want);
    }
}
