//! The queue's labels: keys, combining, relabelling, export, ranking and the human ceiling.

use super::humans::{human_agreement, DATASET};
use super::queue::{disagreement, queue, Filter};
use super::*;
use crate::dataset::{parse, ImportOptions};
use crate::metrics::{BootstrapSpec, Quality};
use crate::record::{Outcome, VerdictRecord};
use crate::verdict::Verdict;

const A: Label = Label::Choice(Choice::A);
const B: Label = Label::Choice(Choice::B);
const T: Label = Label::Choice(Choice::Tie);
const RATING: Task = Task::Single {
    scale_min: 1,
    scale_max: 5,
};

fn pairwise(labels: &[Option<&str>]) -> Dataset {
    let lines: Vec<String> = labels
        .iter()
        .enumerate()
        .map(|(i, l)| {
            let label = l.map_or("null".to_string(), |l| format!("{l:?}"));
            format!(
                r#"{{"id":"i{i}","task":"pairwise","question":"q{i}","answer_a":"a","answer_b":"b","human_label":{label},"meta":{{"src":{i}}}}}"#
            )
        })
        .collect();
    parse(
        "d.jsonl",
        lines.join("\n").as_bytes(),
        &ImportOptions::default(),
    )
    .unwrap()
}

fn given(item: &str, annotator: &str, label: Label) -> Annotation {
    Annotation {
        item_id: item.into(),
        annotator: annotator.into(),
        label,
        created_at: "2026-12-04T00:00:00Z".into(),
    }
}

fn labels_of(d: &Dataset) -> Vec<(String, Option<String>)> {
    let mut out: Vec<(String, Option<String>)> = d
        .items
        .iter()
        .map(|i| (i.id.clone(), Some(i.human_label.to_text())))
        .chain(d.unlabelled.iter().map(|i| (i.id.clone(), None)))
        .collect();
    out.sort();
    out
}

#[test]
fn one_key_gives_one_label() {
    let check = |task, key, expect: Option<Label>| assert_eq!(Key::label(task, key), expect);
    check(Task::Pairwise, 'a', Some(A));
    check(Task::Pairwise, 'B', Some(B));
    check(Task::Pairwise, 't', Some(T));
    check(Task::Pairwise, '1', None);
    check(RATING, '4', Some(Label::Rating(4.0)));
    check(RATING, '0', None);
    check(RATING, '6', None);
    check(RATING, 'a', None);
    assert_eq!(parse_label(Task::Pairwise, "tie"), Ok(T));
    assert_eq!(parse_label(RATING, " 3 "), Ok(Label::Rating(3.0)));
    let zero_to_ten = Task::Single {
        scale_min: 0,
        scale_max: 10,
    };
    assert_eq!(parse_label(zero_to_ten, "10"), Ok(Label::Rating(10.0)));
    assert_eq!(
        parse_label(RATING, "3.5").unwrap_err().to_string(),
        "\"3.5\" is not a label of a single (1-5) dataset (expected a whole number from 1 to 5)"
    );
    assert_eq!(
        parse_label(Task::Pairwise, "C").unwrap_err().to_string(),
        "\"C\" is not a label of a pairwise dataset (expected a, b or t (A, B or tie))"
    );
}

#[test]
fn several_labels_combine_by_majority_or_mean() {
    assert_eq!(combine(Task::Pairwise, &[A, A, B]), A);
    assert_eq!(combine(Task::Pairwise, &[A, B]), T);
    assert_eq!(combine(Task::Pairwise, &[T]), T);
    assert_eq!(
        combine(RATING, &[Label::Rating(4.0), Label::Rating(5.0)]),
        Label::Rating(4.5)
    );
}

#[test]
fn relabelling_never_touches_the_dataset_and_says_whose_labels() {
    let d = pairwise(&[Some("A"), Some("B"), None, None]);
    let notes = vec![
        given("i1", "ann", A),
        given("i2", "ann", B),
        given("i2", "bob", T),
        given("i3", "bob", A),
    ];
    let check = |labels: Labels, expect: &[(&str, Option<&str>)]| {
        let got = labels_of(&relabel(d.clone(), &notes, &labels).unwrap());
        let expect: Vec<(String, Option<String>)> = expect
            .iter()
            .map(|(i, l)| (i.to_string(), l.map(str::to_string)))
            .collect();
        assert_eq!(got, expect, "{labels:?}");
    };
    check(
        Labels::Original,
        &[
            ("i0", Some("A")),
            ("i1", Some("B")),
            ("i2", None),
            ("i3", None),
        ],
    );
    let ann = Some("ann".to_string());
    check(
        Labels::Annotations {
            annotator: ann.clone(),
        },
        &[
            ("i0", None),
            ("i1", Some("A")),
            ("i2", Some("B")),
            ("i3", None),
        ],
    );
    // Everyone's: ann's B and bob's tie on i2 split, so it is a tie.
    check(
        Labels::Annotations { annotator: None },
        &[
            ("i0", None),
            ("i1", Some("A")),
            ("i2", Some("tie")),
            ("i3", Some("A")),
        ],
    );
    check(
        Labels::Both { annotator: ann },
        &[
            ("i0", Some("A")),
            ("i1", Some("A")),
            ("i2", Some("B")),
            ("i3", None),
        ],
    );
    let err = relabel(
        d.clone(),
        &notes,
        &Labels::Both {
            annotator: Some("eve".into()),
        },
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "nobody named \"eve\" has labelled this dataset (annotators: ann, bob)"
    );
    assert_eq!(
        Labels::parse("both", Some("ann".into()))
            .unwrap()
            .describe(),
        "ann's labels where given, else the dataset's"
    );
    assert!(Labels::parse("mine", None).is_err());
}

#[test]
fn exported_labels_import_as_a_dataset() {
    let d = pairwise(&[Some("A"), Some("B"), None]);
    let notes = vec![given("i1", "ann", A), given("i2", "ann", T)];
    let labels = Labels::Both {
        annotator: Some("ann".into()),
    };
    let text = export_jsonl(&d, &notes, &labels).unwrap();
    let back = parse("labels.jsonl", text.as_bytes(), &ImportOptions::default()).unwrap();
    assert_eq!(
        labels_of(&back),
        labels_of(&relabel(d.clone(), &notes, &labels).unwrap())
    );
    assert_eq!(back.items.len(), 3);
    let first: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    assert_eq!(first["id"], "i1");
    assert_eq!(first["human_label"], "A");
    assert_eq!(first["meta"]["src"], 1);
    assert_eq!(first["meta"]["judgelab"]["original_label"], "B");
    assert_eq!(
        first["meta"]["judgelab"]["annotations"][0]["annotator"],
        "ann"
    );
    // Ratings export as numbers on their scale.
    let ratings = parse(
        "r.jsonl",
        br#"{"id":"r","task":"single","question":"q","answer":"x","human_label":3.5,"human_labels":{"coherence":2.5},"label_scales":{"coherence":[1,3]}}"#,
        &ImportOptions::default(),
    )
    .unwrap();
    let text = export_jsonl(
        &ratings,
        &[given("r", "ann", Label::Rating(4.0))],
        &Labels::Annotations { annotator: None },
    )
    .unwrap();
    let back = parse("r2.jsonl", text.as_bytes(), &ImportOptions::default()).unwrap();
    assert_eq!(back.items[0].human_label, Label::Rating(4.0));
    // Labels on criteria and their scales travel with the items.
    assert_eq!(back.criteria, ratings.criteria);
    assert_eq!(back.items[0].human_labels, ratings.items[0].human_labels);
}

#[test]
fn disagreement_is_vote_entropy_or_spread() {
    let close = |got: Option<f64>, expect: f64| {
        assert!((got.unwrap() - expect).abs() < 1e-12, "{got:?} vs {expect}")
    };
    assert_eq!(disagreement(Task::Pairwise, &[A]), None);
    close(disagreement(Task::Pairwise, &[A, A, A]), 0.0);
    close(disagreement(Task::Pairwise, &[A, B]), 1.0);
    close(disagreement(Task::Pairwise, &[A, B, T]), 3f64.log2());
    close(
        disagreement(Task::Pairwise, &[A, A, A, B]),
        -(0.75f64 * 0.75f64.log2() + 0.25 * 0.25f64.log2()),
    );
    close(
        disagreement(RATING, &[Label::Rating(1.0), Label::Rating(5.0)]),
        2.0,
    );
}

fn record(trial_id: i64, item: &str, swapped: bool, verdict: Option<Label>) -> VerdictRecord {
    let outcome = Outcome::Judged(match verdict {
        Some(l) => Verdict::Parsed(l),
        None => Verdict::Failed(crate::verdict::FailureKind::NoLabel),
    });
    VerdictRecord::new(trial_id, item, 0, swapped, 0, "h", outcome)
}

#[test]
fn the_queue_puts_the_most_disputed_items_first_and_skips_what_was_labelled() {
    let d = pairwise(&[Some("A"), Some("B"), Some("A"), None, None]);
    // i0: all agree; i1: A against B; i2: one vote; i3 (unlabelled): A, B, tie; i4: none.
    let t1 = [
        record(1, "i0", false, Some(A)),
        record(1, "i1", false, Some(A)),
        record(1, "i2", false, Some(B)),
        record(1, "i3", false, Some(A)),
    ];
    let t2 = [
        record(2, "i0", false, Some(A)),
        record(2, "i1", false, Some(B)),
        record(2, "i2", false, None),
        record(2, "i3", false, Some(B)),
    ];
    // Trial 3 judges both orders: A then tie combine as MT-Bench does, into a tie.
    let t3 = [
        record(3, "i3", false, Some(A)),
        record(3, "i3", true, Some(T)),
    ];
    let trials = [
        Judged {
            order: crate::sweep::Order::Ab,
            trial_id: 1,
            records: t1.iter().collect(),
        },
        Judged {
            order: crate::sweep::Order::Ab,
            trial_id: 2,
            records: t2.iter().collect(),
        },
        Judged {
            order: crate::sweep::Order::Ab,
            trial_id: 3,
            records: t3.iter().collect(),
        },
    ];
    let ids = |notes: &[Annotation], filter| -> Vec<String> {
        queue(&d, &trials, notes, "ann", filter)
            .into_iter()
            .map(|q| q.item_id)
            .collect()
    };
    assert_eq!(ids(&[], Filter::default()), ["i3", "i1", "i0", "i2", "i4"]);
    let q = queue(&d, &trials, &[], "ann", Filter::default());
    assert_eq!(q[0].n_votes, 3);
    assert_eq!(q[0].votes[2].verdicts, vec![Some(T)]);
    assert_eq!(q[3].disagreement, None);
    assert_eq!(q[3].votes[1].verdicts, vec![None]);
    assert!(!q[0].labelled && q[1].labelled);
    // Another annotator's labels do not take an item off ann's queue; ann's own do.
    let notes = [given("i3", "bob", A), given("i1", "ann", A)];
    assert_eq!(ids(&notes, Filter::default()), ["i3", "i0", "i2", "i4"]);
    let only = Filter {
        unlabelled_only: true,
    };
    assert_eq!(ids(&notes, only), ["i3", "i4"]);
}

#[test]
fn people_agree_with_each_other_and_the_judge_with_each_of_them() {
    // The dataset says A B A B; ann says A B B B: accuracy 0.75, Cohen's kappa
    // (0.75 - 0.5) / (1 - 0.5) = 0.5, and Krippendorff's alpha (nominal) 1 - 2·7/30.
    let d = pairwise(&[Some("A"), Some("B"), Some("A"), Some("B")]);
    let notes: Vec<Annotation> = [A, B, B, B]
        .iter()
        .enumerate()
        .map(|(i, l)| given(&format!("i{i}"), "ann", *l))
        .collect();
    let records: Vec<VerdictRecord> = [A, B, B, A]
        .iter()
        .enumerate()
        .map(|(i, l)| record(7, &format!("i{i}"), false, Some(*l)))
        .collect();
    let judged = Judged {
        order: crate::sweep::Order::Ab,
        trial_id: 7,
        records: records.iter().collect(),
    };
    let spec = BootstrapSpec {
        resamples: 200,
        ..BootstrapSpec::default()
    };
    let h = human_agreement(&d, &notes, &[], Some(&judged), &spec).unwrap();
    assert_eq!(h.raters.len(), 2);
    assert_eq!(h.raters[0].name, DATASET);
    let pair = &h.pairs[0];
    assert_eq!(
        (pair.first.as_str(), pair.second.as_str()),
        (DATASET, "ann")
    );
    assert_eq!(pair.n_items, 4);
    let close = |x: Option<f64>, y: f64| assert!((x.unwrap() - y).abs() < 1e-12, "{x:?} {y}");
    close(pair.quality.get(Quality::Accuracy).value, 0.75);
    close(pair.quality.get(Quality::Kappa).value, 0.5);
    close(h.alpha.value, 1.0 - 14.0 / 30.0);
    assert_eq!(h.n_shared, 4);
    // The judge says A B B A: 0.5 with the dataset, 0.75 with ann.
    assert_eq!(h.judge.len(), 2);
    close(h.judge[0].quality.get(Quality::Accuracy).value, 0.5);
    close(h.judge[1].quality.get(Quality::Accuracy).value, 0.75);
    assert!(human_agreement(&d, &[], &[], Some(&judged), &spec).is_none());
}
