//! The labelling queue on the real SmolLM2: three exact trials of one experiment; the
//! queue ranks items by the vote entropy of their stored verdicts, computed here by hand;
//! answers come through standard input with the keys a person presses; the metrics against
//! the new labels equal those counted here by hand; the labels export as JSONL that
//! imports as a dataset.

use std::collections::BTreeMap;
use std::io::Write;
use std::process::Stdio;

use judgelab_core::Label;
use serde_json::Value;

use super::{check_invalid, lines, llmbar_short, text, Env};

fn stored(env: &Env, trial_id: i64) -> Vec<judgelab_core::results::VerdictRecord> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = judgelab_store::Store::open(&env.db()).await.unwrap();
        store.verdicts(trial_id).await.unwrap()
    })
}

fn json_line(env: &Env, args: &[&str]) -> Value {
    let out = env.run(args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    serde_json::from_str(stdout.trim()).unwrap_or_else(|_| panic!("{stdout}"))
}

fn close(got: &Value, want: f64, what: &str) {
    let got = got.as_f64().unwrap_or_else(|| panic!("{what}: {got}"));
    assert!((got - want).abs() < 1e-9, "{what}: {got} against {want}");
}

#[test]
fn five_items_labelled_from_the_queue_change_the_metrics_and_export_as_a_dataset() {
    let env = Env::new();
    // Twelve labelled LLMBar items and two without a label.
    let mut lines: Vec<String> = lines(llmbar_short()).into_iter().take(14).collect();
    for line in &mut lines[12..] {
        let mut v: Value = serde_json::from_str(line).unwrap();
        v["human_label"] = Value::Null;
        *line = v.to_string();
    }
    let data = env.file("queue.jsonl", lines.join("\n"));
    let out = env.run(&["import", data.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let spec = format!(
        "name = \"q\"\ndataset = {:?}\n[judge]\ntemplate = \"pairwise\"\nexact = true\n[sweep]\ntemperature = [0.0, 1.2, 2.0]\n",
        data.display().to_string()
    );
    let file = env.file("q.toml", &spec);
    let out = env.run(&["run", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let before = env.show("q");
    let ids: Vec<i64> = before["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids.len(), 3);
    assert!(before["humans"].is_null());
    assert_eq!(before["labels"]["kind"], "original");

    // The votes by hand: each item's stored verdicts (one order, one repeat: one a trial).
    let mut votes: BTreeMap<String, Vec<Label>> = BTreeMap::new();
    let mut said: BTreeMap<(i64, String), Option<Label>> = BTreeMap::new();
    for &id in &ids {
        for r in stored(&env, id) {
            if let Some(l) = r.outcome.label() {
                votes.entry(r.item_id.clone()).or_default().push(l);
            }
            said.insert((id, r.item_id.clone()), r.outcome.label());
        }
    }
    let entropy = |v: &[Label]| -> Option<f64> {
        if v.len() < 2 {
            return None;
        }
        let mut counts: BTreeMap<String, f64> = BTreeMap::new();
        for l in v {
            *counts.entry(l.to_text()).or_default() += 1.0;
        }
        let n = v.len() as f64;
        Some(
            counts
                .values()
                .map(|c| -(c / n) * (c / n).log2())
                .sum::<f64>()
                .max(0.0),
        )
    };
    let listed = json_line(
        &env,
        &["label", "q", "--annotator", "ann", "--list", "--json"],
    );
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), 14, "every item, with a label and without");
    // Descending, and the items with no disagreement to rank by (fewer than two votes)
    // after every item that has one.
    let mut last = f64::INFINITY;
    for q in listed {
        let id = q["item_id"].as_str().unwrap();
        let want = votes.get(id).and_then(|v| entropy(v));
        match want {
            Some(h) => {
                close(&q["disagreement"], h, id);
                assert!(h <= last + 1e-12, "{id}: ranked {h} after {last}");
                last = h;
            }
            None => {
                assert!(q["disagreement"].is_null(), "{id}: {q}");
                last = f64::NEG_INFINITY;
            }
        }
    }
    // The two items without a label were judged by no trial: last, with no disagreement.
    for q in &listed[12..] {
        assert_eq!(q["labelled"], false, "{q}");
        assert_eq!(q["n_votes"], 0);
    }
    let queue: Vec<String> = listed
        .iter()
        .map(|q| q["item_id"].as_str().unwrap().to_string())
        .collect();

    // A person at the keyboard: a, a wrong key, b, t, skip, undo (back to the third), b,
    // a, then t on the sixth, and quit.
    let mut child = env
        .cmd(&["label", "q", "--annotator", "ann"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"a\nx\nb\nt\ns\nu\nb\ns\na\nt\nq\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(
        stdout.contains("is not a label of a pairwise dataset"),
        "{stdout}"
    );
    assert!(stdout.contains("took back the label of"), "{stdout}");
    assert!(
        stdout.contains("ann labelled 5 items this time (5 in all)"),
        "{stdout}"
    );
    // The trials' verdicts come after the label, never before: the first item's block
    // shows its question, then the label, then what the trials said.
    let first = stdout.find(&format!("] {} ·", queue[0])).unwrap();
    let label_at = first + stdout[first..].find("labelled A").unwrap();
    assert!(
        !stdout[first..label_at].contains("the trials said"),
        "{stdout}"
    );
    assert!(stdout[label_at..].starts_with("labelled A"), "{stdout}");
    let given: BTreeMap<&str, Label> = [
        (queue[0].as_str(), "A"),
        (queue[1].as_str(), "B"),
        (queue[2].as_str(), "B"),
        (queue[4].as_str(), "A"),
        (queue[5].as_str(), "tie"),
    ]
    .into_iter()
    .map(|(i, l)| (i, Label::from_text(l).unwrap()))
    .collect();

    // The queue goes on where ann stopped; bob's queue is whole.
    let left = json_line(
        &env,
        &["label", "q", "--annotator", "ann", "--list", "--json"],
    );
    assert_eq!(left.as_array().unwrap().len(), 9);
    let bobs = json_line(
        &env,
        &["label", "q", "--annotator", "bob", "--list", "--json"],
    );
    assert_eq!(bobs.as_array().unwrap().len(), 14);

    // Metrics against ann's labels, by hand: each trial's verdicts on her five items.
    let against = json_line(
        &env,
        &[
            "show",
            "q",
            "--json",
            "--labels",
            "annotations",
            "--annotator",
            "ann",
        ],
    );
    assert_eq!(against["labels"]["kind"], "annotations");
    assert_eq!(against["labels"]["annotator"], "ann");
    assert_eq!(against["labels"]["n_labelled"], 5);
    let trials = against["trials"].as_array().unwrap();
    for (t, &id) in trials.iter().zip(&ids) {
        let judged: Vec<(Label, Option<Label>)> = given
            .iter()
            .map(|(item, l)| (*l, said[&(id, item.to_string())]))
            .collect();
        let right = judged.iter().filter(|(h, j)| Some(*h) == *j).count();
        assert_eq!(t["n"], 5, "{t}");
        close(&t["accuracy"], right as f64 / 5.0, "accuracy against ann");
    }
    // The dataset's own labels beside ann's: how often she agrees with them.
    let originals: BTreeMap<String, Label> = lines[..12]
        .iter()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            (
                v["id"].as_str().unwrap().to_string(),
                Label::from_text(v["human_label"].as_str().unwrap()).unwrap(),
            )
        })
        .collect();
    let humans = &against["humans"];
    assert_eq!(humans["raters"][1]["name"], "ann");
    let pair = &humans["pairs"][0];
    assert_eq!(pair["first"], "dataset");
    let shared: Vec<(&Label, &Label)> = given
        .iter()
        .filter_map(|(i, l)| Some((originals.get(*i)?, l)))
        .collect();
    assert_eq!(pair["n_items"], shared.len());
    let same = shared.iter().filter(|(a, b)| a == b).count();
    close(
        &pair["accuracy"],
        same as f64 / shared.len() as f64,
        "dataset with ann",
    );
    assert!(humans["judge"].as_array().unwrap().len() == 2, "{humans}");
    // The default is still the dataset's labels: nothing was overwritten.
    let plain = env.show("q");
    assert_eq!(plain["labels"]["n_labelled"], 12);
    for (a, b) in plain["trials"]
        .as_array()
        .unwrap()
        .iter()
        .zip(before["trials"].as_array().unwrap())
    {
        assert_eq!(a["accuracy"], b["accuracy"]);
        assert_eq!(a["kappa"], b["kappa"]);
    }

    // An item without a label, labelled by a script; then only such items are queued.
    let unlabelled = &queue[12];
    let out = env.run(&[
        "label",
        "q",
        "--annotator",
        "ann",
        "--item",
        unlabelled,
        "--give",
        "b",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let only = json_line(
        &env,
        &[
            "label",
            "q",
            "--annotator",
            "ann",
            "--list",
            "--json",
            "--unlabelled",
        ],
    );
    assert_eq!(only.as_array().unwrap().len(), 1);
    assert_eq!(only[0]["item_id"], queue[13].as_str());
    let both = json_line(
        &env,
        &[
            "show",
            "q",
            "--json",
            "--labels",
            "both",
            "--annotator",
            "ann",
            "--resamples",
            "0",
        ],
    );
    assert_eq!(both["labels"]["n_labelled"], 13);

    // Refusals, each naming what is wrong.
    check_invalid(
        &env,
        &[
            "label",
            "q",
            "--annotator",
            "ann",
            "--item",
            &queue[0],
            "--give",
            "4",
        ],
        &["\"4\" is not a label of a pairwise dataset"],
    );
    check_invalid(
        &env,
        &[
            "label",
            "q",
            "--annotator",
            "ann",
            "--item",
            "nope",
            "--give",
            "a",
        ],
        &["no item \"nope\" in the dataset"],
    );
    check_invalid(
        &env,
        &["label", "q", "--annotator", "dataset", "--list"],
        &["names the dataset's own labels"],
    );
    check_invalid(
        &env,
        &["show", "q", "--labels", "annotations", "--annotator", "eve"],
        &["nobody named \"eve\" has labelled this dataset (annotators: ann)"],
    );

    // Export ann's labels over the dataset's, and import the file as a dataset of its own.
    let exported = env.dir.path().join("relabelled.jsonl");
    let out = env.run(&[
        "label",
        "q",
        "--export",
        exported.to_str().unwrap(),
        "--labels",
        "both",
        "--labels-of",
        "ann",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        text(&out.stdout).contains("wrote 14 items (13 with"),
        "{}",
        text(&out.stdout)
    );
    let written = std::fs::read_to_string(&exported).unwrap();
    for line in written.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let id = v["id"].as_str().unwrap();
        let want = given
            .get(id)
            .copied()
            .or((id == unlabelled.as_str()).then_some(Label::Choice(judgelab_core::Choice::B)))
            .or(originals.get(id).copied());
        assert_eq!(
            v["human_label"]
                .as_str()
                .map(|t| Label::from_text(t).unwrap()),
            want,
            "{line}"
        );
    }
    let out = env.run(&["import", exported.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed = text(&env.run(&["list"]).stdout);
    assert!(listed.contains("relabelled"), "{listed}");
    // A label taken back is gone from the queue's labels.
    let out = env.run(&["label", "q", "--undo", &queue[0], "--annotator", "ann"]);
    assert!(
        text(&out.stdout).contains("took back ann's label"),
        "{}",
        text(&out.stdout)
    );
}

/// PandaLM's file keeps each of its three annotators' labels (`meta.annotations`): with
/// nobody labelling in the queue, `show` gives the people's agreement pair by pair — the
/// Cohen's kappa 0.85–0.88 PandaLM publishes, as scikit-learn computes it on the file —
/// and alpha over the three alone (the dataset's label is their majority), beside the
/// pick's agreement with each of them.
#[test]
fn the_people_a_file_keeps_give_the_human_ceiling() {
    let env = Env::new();
    let data =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../datasets/pandalm_test.jsonl");
    let spec = format!(
        "name = \"people\"\ndataset = {:?}\n[judge]\ntemplate = \"pairwise\"\n[sweep]\nmax_tokens = 1\n[limits]\nitems = 4\n",
        data.display().to_string()
    );
    let file = env.file("people.toml", &spec);
    let out = env.run(&["run", file.to_str().unwrap()]);
    let said = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        said.contains("people: the 3 raters the file keeps (the dataset's label combines theirs, so it is left out): Krippendorff's alpha"),
        "{said}"
    );
    let v = env.show("people");
    let h = &v["humans"];
    assert_eq!(
        (h["alpha_raters"].as_u64(), h["combined"].as_bool()),
        (Some(3), Some(true)),
        "{h}"
    );
    // krippendorff.alpha (nominal) over the three annotators' votes.
    close(&h["alpha"]["value"], 0.8642206851960816, "alpha");
    let pairs = h["pairs"].as_array().unwrap();
    // sklearn.metrics.cohen_kappa_score on the file's votes.
    let published = [
        (
            "annotator 1 (file)",
            "annotator 2 (file)",
            0.8520226785167024,
        ),
        (
            "annotator 1 (file)",
            "annotator 3 (file)",
            0.8789438112500384,
        ),
        (
            "annotator 2 (file)",
            "annotator 3 (file)",
            0.8616614540762907,
        ),
    ];
    assert_eq!(pairs.len(), published.len(), "{h}");
    for (p, (first, second, kappa)) in pairs.iter().zip(published) {
        assert_eq!(
            (p["first"].as_str(), p["second"].as_str()),
            (Some(first), Some(second))
        );
        assert_eq!(p["n_items"], 999);
        close(&p["kappa"], kappa, &format!("{first} and {second}"));
    }
    let judge = h["judge"].as_array().unwrap();
    assert_eq!(judge.len(), 4, "{h}");
    assert!(judge.iter().all(|j| j["n_items"] == 4), "{h}");
}
