//! Panels on the real SmolLM2: three exact trials of one experiment vote, composed from the
//! verdicts stored with no model call; the panel's figures equal the votes taken here by
//! hand from the database's rows; panels come from `judgelab panel` and from the file's
//! `[[panels]]`, which resumes the experiment judging nothing; the report draws them.

use std::collections::BTreeMap;

use judgelab_core::results::{Outcome, VerdictRecord};
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

fn close(got: &Value, want: f64, what: &str) {
    let got = got.as_f64().unwrap_or_else(|| panic!("{what}: {got}"));
    assert!((got - want).abs() < 1e-9, "{what}: {got} against {want}");
}

/// Cohen's kappa of (human, judge) pairs, a parse failure (None) a category of its own.
fn kappa(pairs: &[(Label, Option<Label>)]) -> f64 {
    let n = pairs.len() as f64;
    let key = |l: Option<Label>| l.map_or("failed".to_string(), |l| l.to_text());
    let po = pairs.iter().filter(|(h, j)| Some(*h) == *j).count() as f64 / n;
    let mut humans: BTreeMap<String, f64> = BTreeMap::new();
    let mut judges: BTreeMap<String, f64> = BTreeMap::new();
    for (h, j) in pairs {
        *humans.entry(key(Some(*h))).or_default() += 1.0 / n;
        *judges.entry(key(*j)).or_default() += 1.0 / n;
    }
    let pe: f64 = humans
        .iter()
        .map(|(k, p)| p * judges.get(k).copied().unwrap_or(0.0))
        .sum();
    (po - pe) / (1.0 - pe)
}

fn shown(env: &Env, args: &[&str]) -> Value {
    let out = env.run(args);
    assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    let stdout = text(&out.stdout);
    serde_json::from_str(stdout.lines().last().unwrap()).unwrap_or_else(|_| panic!("{stdout}"))
}

#[test]
fn a_panel_of_three_real_trials_votes_as_by_hand() {
    let env = Env::new();
    let spec = format!(
        "name = \"vote\"\ndataset = {:?}\n[judge]\ntemplate = \"pairwise\"\nexact = true\n[sweep]\ntemperature = [0.0, 0.9, 1.5]\n[limits]\nitems = 12\n",
        llmbar_short().display().to_string()
    );
    let file = env.file("vote.toml", &spec);
    let out = env.run(&["run", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let before = env.show("vote");
    let ids: Vec<i64> = before["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_i64().unwrap())
        .collect();
    assert_eq!(ids.len(), 3);
    let members = format!("{},{},{}", ids[0], ids[1], ids[2]);

    // The votes by hand: each item's three stored verdicts, the most given, a split a tie.
    let humans: BTreeMap<String, Label> = lines(llmbar_short())
        .iter()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            let label = Label::from_text(v["human_label"].as_str().unwrap()).unwrap();
            (v["id"].as_str().unwrap().to_string(), label)
        })
        .collect();
    let verdicts: Vec<BTreeMap<String, VerdictRecord>> = ids
        .iter()
        .map(|&id| {
            stored(&env, id)
                .into_iter()
                .map(|v| (v.item_id.clone(), v))
                .collect()
        })
        .collect();
    let label = |v: &VerdictRecord| match &v.outcome {
        Outcome::Judged(Verdict::Parsed(l)) => Some(*l),
        Outcome::Judged(Verdict::Failed(_)) => None,
        Outcome::CallFailed(e) => panic!("a failed call: {e}"),
    };
    let mut pairs = Vec::new();
    let mut expected_accuracy = 0.0;
    for item in verdicts[0].keys() {
        let votes: Vec<Option<Label>> = verdicts.iter().map(|m| label(&m[item])).collect();
        let mut counts: Vec<(Label, usize)> = Vec::new();
        for v in votes.iter().flatten() {
            match counts.iter_mut().find(|(l, _)| l == v) {
                Some((_, n)) => *n += 1,
                None => counts.push((*v, 1)),
            }
        }
        let top = counts.iter().map(|c| c.1).max();
        let leaders: Vec<Label> = counts
            .iter()
            .filter(|c| Some(c.1) == top)
            .map(|c| c.0)
            .collect();
        let panel = match leaders.as_slice() {
            [] => None,
            [one] => Some(*one),
            _ => Some(Label::Choice(Choice::Tie)),
        };
        pairs.push((humans[item], panel));
        // The mean distribution's probability of the human's label.
        expected_accuracy += verdicts
            .iter()
            .map(|m| {
                let d = m[item].distribution.as_ref().expect("exact verdicts");
                d.labels
                    .iter()
                    .filter(|(l, _)| *l == humans[item])
                    .map(|(_, p)| p)
                    .sum::<f64>()
            })
            .sum::<f64>()
            / 3.0;
    }
    let n = pairs.len() as f64;
    expected_accuracy /= n;
    let accuracy = pairs.iter().filter(|(h, j)| Some(*h) == *j).count() as f64 / n;

    let p = shown(
        &env,
        &["panel", "vote", "vote3", "--members", &members, "--json"],
    );
    assert_eq!(p["kind"], "panel");
    assert_eq!(p["members"], serde_json::json!(ids));
    assert_eq!(p["rule"], "majority");
    assert_eq!(p["ties"], "tie");
    assert_eq!(p["n"], 12);
    close(&p["accuracy"], accuracy, "accuracy");
    close(&p["kappa"], kappa(&pairs), "kappa");
    assert_eq!(p["contributions"].as_array().unwrap().len(), 3);
    assert!(p["members_agreement"]["alpha"].is_object(), "{p}");

    // The mean of the exact distributions: its expected accuracy by hand.
    let d = shown(
        &env,
        &[
            "panel",
            "vote",
            "mean3",
            "--members",
            &members,
            "--rule",
            "distribution",
            "--json",
        ],
    );
    close(&d["expected"]["accuracy"], expected_accuracy, "E[accuracy]");
    assert_eq!(d["calibration"]["confidence_kind"], "exact", "{d}");

    // In show --json a panel is a trial of kind "panel", after the stored ones; nothing
    // was judged for it.
    let after = env.show("vote");
    let kinds: Vec<&str> = after["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["trial", "trial", "trial", "panel", "panel"]);
    assert_eq!(after["schema_version"], 3);
    assert_eq!(
        after["experiment"]["n_stored"],
        before["experiment"]["n_stored"]
    );
    let table = env.run(&["show", "vote"]);
    let table = text(&table.stdout);
    assert!(table.contains("panel vote3: majority of #"), "{table}");

    // Refused, with where and what: no such trial, one member, a mean of choices, a
    // distribution of a panel that has ties, and removing what is not there.
    let first = ids[0].to_string();
    check_invalid(
        &env,
        &["panel", "vote", "p", "--members", &format!("{first},999")],
        &["panel \"p\"", "trial 999 is not a trial of this experiment"],
    );
    check_invalid(
        &env,
        &["panel", "vote", "p", "--members", &first],
        &["a panel needs two or more"],
    );
    check_invalid(
        &env,
        &[
            "panel",
            "vote",
            "p",
            "--members",
            &members,
            "--rule",
            "mean",
        ],
        &["pairwise verdicts are choices"],
    );
    check_invalid(
        &env,
        &["panel", "nothing", "p", "--members", &members],
        &["no experiment named \"nothing\""],
    );
    check_invalid(
        &env,
        &["panel", "vote", "gone", "--remove"],
        &["is not a panel of this experiment"],
    );

    // The report draws the panels with the trials, marked as composed.
    let dir = env.dir.path().join("report");
    let out = env.run(&["report", "vote", "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let svg = std::fs::read_to_string(dir.join("pareto-quality-cost.svg")).unwrap();
    assert!(
        svg.contains("vote3 panel") && svg.contains("composed"),
        "{svg}"
    );
    let html = std::fs::read_to_string(dir.join("report.html")).unwrap();
    assert!(html.contains("<h3>Panels</h3>"), "no panels section");
    let csv = std::fs::read_to_string(dir.join("trials.csv")).unwrap();
    assert!(csv.lines().any(|l| l.contains(",vote3,majority,")), "{csv}");

    // A panel in the file: the same experiment, resumed with nothing to judge; its name
    // is the file's, so the command may not take it.
    let with_panel = format!(
        "{spec}\n[[panels]]\nname = \"pair\"\nmembers = [{}, {}]\nties = \"first\"\n",
        ids[0], ids[1]
    );
    let file = env.file("vote.toml", &with_panel);
    let out = env.run(&["run", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let resumed = env.show("vote");
    let names: Vec<&str> = resumed["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"] == "panel")
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["pair", "vote3", "mean3"]);
    assert_eq!(
        resumed["experiment"]["n_stored"],
        before["experiment"]["n_stored"]
    );
    check_invalid(
        &env,
        &["panel", "vote", "pair", "--members", &members],
        &["is declared in the experiment's file"],
    );
    check_invalid(
        &env,
        &["panel", "vote", "pair", "--remove"],
        &["remove it there"],
    );
    // A file panel that names another experiment's trial is refused before any call.
    let bad = format!("{spec}\n[[panels]]\nname = \"bad\"\nmembers = [{first}, 999]\n");
    let file = env.file("vote.toml", &bad);
    check_invalid(
        &env,
        &["run", file.to_str().unwrap()],
        &["panel \"bad\"", "trial 999"],
    );

    // Removed, it is gone and the trials are as they were.
    let out = env.run(&["panel", "vote", "vote3", "--remove"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file = env.file("vote.toml", &spec);
    let out = env.run(&["run", file.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let last = env.show("vote");
    let panels: Vec<&str> = last["trials"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["kind"] == "panel")
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(panels, ["mean3"]);
    assert_eq!(
        last["trials"][0]["accuracy"],
        before["trials"][0]["accuracy"]
    );
}
