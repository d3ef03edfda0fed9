//! `judgelab estimate` on the real SmolLM2: items without a human label are judged with a
//! trial's configuration, stored as more of its verdicts (and kept out of its metrics), and
//! the figure printed is PPI++ or Rogan–Gladen on exactly those verdicts, checked here
//! against the statistics computed by hand from the database's rows.

use std::collections::BTreeMap;

use judgelab_core::metrics::position;
use judgelab_core::results::VerdictRecord;
use judgelab_core::trust::estimate;
use judgelab_core::{Choice, Label, Verdict};
use serde_json::Value;

use super::{check_invalid, lines, llmbar_short, text, Env};

/// Every verdict of `trial_id`, read straight from the database.
fn stored(env: &Env, trial_id: i64) -> Vec<VerdictRecord> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let store = judgelab_store::Store::open(&env.db()).await.unwrap();
        store.verdicts(trial_id).await.unwrap()
    })
}

/// Each item's score as `estimate` documents it: orders combined, repeats averaged, a
/// parse failure at `fallback`.
fn scores(
    verdicts: &[VerdictRecord],
    value: impl Fn(Label) -> f64,
    fallback: f64,
) -> BTreeMap<String, f64> {
    let mut calls: BTreeMap<(String, u32), Vec<(bool, Verdict)>> = BTreeMap::new();
    for v in verdicts {
        let judgelab_core::results::Outcome::Judged(verdict) = &v.outcome else {
            panic!("a failed call: {v:?}");
        };
        calls
            .entry((v.item_id.clone(), v.repeat))
            .or_default()
            .push((v.swapped, *verdict));
    }
    let mut sums: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for ((item, _), mut orders) in calls {
        orders.sort_by_key(|(swapped, _)| *swapped);
        let verdict = match orders.as_slice() {
            [(false, ab), (true, ba)] => position::combine(*ab, *ba),
            [(_, one)] => *one,
            other => panic!("calls of one repeat: {other:?}"),
        };
        let score = verdict.label().map_or(fallback, &value);
        sums.entry(item).or_default().push(score);
    }
    sums.into_iter()
        .map(|(item, s)| (item, s.iter().sum::<f64>() / s.len() as f64))
        .collect()
}

fn close(got: &Value, want: f64, what: &str) {
    let got = got.as_f64().unwrap_or_else(|| panic!("{what}: {got}"));
    assert!((got - want).abs() < 1e-9, "{what}: {got} against {want}");
}

/// The JSON on the last line of an `estimate --json`.
fn estimated(env: &Env, args: &[&str]) -> Value {
    let out = env.run(args);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    let stdout = text(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap_or_else(|_| panic!("{stdout}"))
}

/// A pairwise trial judged in both orders estimates the win rate of answer A on items
/// without a label (PPI++); a second call judges nothing; ids and tasks that cannot be
/// meant are refused before any call.
#[test]
fn estimates_on_items_without_a_label() {
    let env = Env::new();
    let lines: Vec<Value> = lines(llmbar_short())
        .iter()
        .take(14)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // Eight labelled items, and six more whose labels were never given.
    let mut dataset = String::new();
    for (i, item) in lines.iter().enumerate() {
        let mut item = item.clone();
        if i >= 8 {
            item["id"] = format!("unlabelled-{i}").into();
            item["human_label"] = Value::Null;
        }
        dataset.push_str(&format!("{item}\n"));
    }
    let data = env.file("partly.jsonl", &dataset);
    let exp = env.file(
        "est.toml",
        format!(
            "name = \"est\"\ndataset = \"{}\"\n[judge]\nmodel = \"default\"\ntemplate = \"pairwise\"\nexact = true\n[sweep]\ntemperature = 0.0\norder = \"both\"\n",
            data.display()
        ),
    );
    let out = env.run(&["run", exp.to_str().unwrap()]);
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("judged 16 verdicts"), "{stderr}");
    let before = env.show("est");
    assert_eq!(before["experiment"]["n_stored"], 16);

    let v = estimated(
        &env,
        &[
            "estimate", "est", "--trial", "1", "--width", "0.3", "--json",
        ],
    );
    assert_eq!(v["judged_now"], 12, "{v}");
    assert_eq!(
        (&v["quantity"], &v["method"]),
        (&"win_rate".into(), &"PPI++".into())
    );
    assert_eq!(v["n_unlabelled_items"], 6);
    assert_eq!(v["n_without_verdict"], 0);

    // By hand from the stored rows: the humans' A = 1, B = 0 against the judge's scores.
    let win = |l: Label| match l {
        Label::Choice(Choice::A) => 1.0,
        Label::Choice(Choice::Tie) => 0.5,
        Label::Choice(Choice::B) => 0.0,
        Label::Rating(r) => panic!("a rating {r} in a pairwise trial"),
    };
    let rows = stored(&env, 1);
    assert_eq!(rows.len(), 28, "16 labelled calls and 12 unlabelled");
    let f = scores(&rows, win, 0.5);
    let (mut y, mut fl, mut fu) = (Vec::new(), Vec::new(), Vec::new());
    for (i, item) in lines.iter().enumerate() {
        if i < 8 {
            let h = if item["human_label"] == "A" { 1.0 } else { 0.0 };
            y.push(h);
            fl.push(f[item["id"].as_str().unwrap()]);
        } else {
            fu.push(f[&format!("unlabelled-{i}")]);
        }
    }
    // Cut at 0..1 as a win rate is ([`estimate::Corrected::within`]).
    let want = estimate::ppi_mean(&y, &fl, &fu, 0.95)
        .unwrap()
        .within(0.0, 1.0);
    close(&v["value"], want.value, "value");
    close(&v["ci"][0], want.ci[0], "ci low");
    close(&v["ci"][1], want.ci[1], "ci high");
    close(&v["naive"], fu.iter().sum::<f64>() / 6.0, "naive");
    close(&v["lambda"], want.lambda.unwrap(), "lambda");
    assert_eq!(
        (v["n_labelled"].as_u64(), v["n_unlabelled"].as_u64()),
        (Some(8), Some(6))
    );
    let need = estimate::ppi_labels_needed(&y, &fl, &fu, 0.3, 0.95);
    assert_eq!(v["labels_needed"].as_u64().map(|n| n as usize), need, "{v}");

    // Resumed: nothing left to judge, the same figure; the trial's metrics never saw them.
    let again = estimated(&env, &["estimate", "est", "--trial", "1", "--json"]);
    assert_eq!(again["judged_now"], 0);
    assert_eq!(again["value"], v["value"]);
    let after = env.show("est");
    assert_eq!(after["experiment"]["n_stored"], 16);
    assert_eq!(after["trials"][0]["n"], before["trials"][0]["n"]);
    assert_eq!(
        after["trials"][0]["accuracy"],
        before["trials"][0]["accuracy"]
    );

    // An item under a labelled item's id would be taken for it; one under the id of an
    // item judged before with other text, likewise.
    let mut clash = lines[8].clone();
    clash["id"] = lines[0]["id"].clone();
    clash["human_label"] = Value::Null;
    let clash_file = env.file("clash.jsonl", format!("{clash}\n"));
    check_invalid(
        &env,
        &[
            "estimate",
            "est",
            "--trial",
            "1",
            "--dataset",
            clash_file.to_str().unwrap(),
        ],
        &[&format!("{} has the id of a labelled item", lines[0]["id"])],
    );
    let mut other = lines[0].clone();
    other["id"] = "unlabelled-8".into();
    other["human_label"] = Value::Null;
    let other_file = env.file("other.jsonl", format!("{other}\n"));
    check_invalid(
        &env,
        &[
            "estimate",
            "est",
            "--trial",
            "1",
            "--dataset",
            other_file.to_str().unwrap(),
        ],
        &["\"unlabelled-8\" has the id of an item this trial judged before with other text"],
    );
    // A dataset of another task, one with every item labelled, a trial that is not there.
    let ratings = env.file(
        "ratings.jsonl",
        "{\"id\": \"r1\", \"task\": \"single\", \"question\": \"q\", \"answer\": \"a\", \"human_label\": null}\n",
    );
    check_invalid(
        &env,
        &[
            "estimate",
            "est",
            "--trial",
            "1",
            "--dataset",
            ratings.to_str().unwrap(),
        ],
        &["a trial's verdicts estimate only items of its own task"],
    );
    let labelled = env.file("labelled.jsonl", format!("{}\n", lines[0]));
    check_invalid(
        &env,
        &[
            "estimate",
            "est",
            "--trial",
            "1",
            "--dataset",
            labelled.to_str().unwrap(),
        ],
        &["has no item without a human label"],
    );
    check_invalid(
        &env,
        &["estimate", "est", "--trial", "7"],
        &["no trial 7 in experiment \"est\" (its trials are 1)"],
    );
    let out = env.run(&["estimate", "est", "--trial", "1"]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        stdout.contains("corrected ") && stdout.contains("PPI++, with 8 labelled items"),
        "{stdout}"
    );
}

/// A 0–1 dataset whose human labels are passes and fails: the pass rate, corrected by
/// Rogan–Gladen with the trial's true positive and negative rates, or refused in words
/// where the judge is no better than chance on the labelled items.
#[test]
fn a_pass_rate_is_corrected_by_rogan_gladen() {
    let env = Env::new();
    let topical = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../datasets/topical_chat_usr.jsonl");
    let lines: Vec<Value> = std::fs::read_to_string(topical)
        .unwrap()
        .lines()
        .take(16)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut dataset = String::new();
    let mut humans = BTreeMap::new();
    for (i, item) in lines.iter().enumerate() {
        let mut item = item.clone();
        let pass = item["human_label"].as_f64().unwrap() >= 3.0;
        item["human_label"] = if i < 10 {
            humans.insert(item["id"].as_str().unwrap().to_string(), pass);
            u8::from(pass).into()
        } else {
            Value::Null
        };
        dataset.push_str(&format!("{item}\n"));
    }
    assert!(humans.values().any(|&p| p) && humans.values().any(|&p| !p));
    let data = env.file("pass.jsonl", &dataset);
    let out = env.run(&["import", data.to_str().unwrap(), "--scale", "0-1"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(said.contains("and 6 without a label"), "{said}");
    let exp = env.file(
        "pass.toml",
        "name = \"pass\"\ndataset = \"pass\"\n[judge]\nmodel = \"default\"\ntemplate = \"single\"\nexact = true\n[sweep]\ntemperature = 0.0\n",
    );
    let out = env.run(&["run", exp.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));

    let out = env.run(&["estimate", "pass", "--trial", "1", "--json"]);
    let rows = stored(&env, 1);
    assert_eq!(rows.len(), 16, "10 labelled calls and 6 unlabelled");
    let f = scores(
        &rows,
        |l| match l {
            Label::Rating(r) => r,
            Label::Choice(c) => panic!("a choice {c:?} in a rating trial"),
        },
        0.0,
    );
    let pass = |id: &str| f[id] > 0.5;
    let (mut labels, mut preds, mut rest) = (Vec::new(), Vec::new(), Vec::new());
    for (id, &h) in &humans {
        labels.push(h);
        preds.push(pass(id));
    }
    for item in &lines[10..] {
        rest.push(pass(item["id"].as_str().unwrap()));
    }
    match estimate::rogan_gladen(&labels, &preds, &rest, 0.95).map(|c| c.within(0.0, 1.0)) {
        Ok(want) => {
            let stdout = text(&out.stdout);
            assert!(out.status.success(), "{}", text(&out.stderr));
            let v: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
            assert_eq!(
                (&v["quantity"], &v["method"]),
                (&"pass_rate".into(), &"Rogan–Gladen".into())
            );
            close(&v["value"], want.value, "value");
            close(&v["ci"][0], want.ci[0], "ci low");
            close(&v["ci"][1], want.ci[1], "ci high");
            close(&v["tpr"], want.tpr.unwrap(), "tpr");
            close(&v["tnr"], want.tnr.unwrap(), "tnr");
            close(&v["naive"], want.naive, "naive");
        }
        Err(why) => {
            // SmolLM2 may well be at chance here: the error is the statistic's own.
            let stderr = text(&out.stderr);
            assert!(!out.status.success(), "{stderr}");
            assert!(stderr.contains(&why.to_string()), "{why} not in\n{stderr}");
        }
    }
}
