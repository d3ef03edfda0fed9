//! Databases written at every earlier schema version open, migrate and resume. Each of
//! `tests/old-databases/0001` … `0012` holds a database that the CLI of the last commit at
//! that schema version wrote (`make.sh` says how), the experiment files it ran, and what
//! that CLI's `show --json` printed. Today's CLI must read the same numbers from it, and
//! running each experiment again must judge nothing that is stored: only the calls that
//! failed are retried, against a server that refuses them again.

use std::path::{Path, PathBuf};

use judgelab_testkit::Refuser;
use serde_json::Value;

use crate::{text, Env};

/// Where the fixtures' remote judge was served; nothing serves it now but [`Refuser`].
const REMOTE_PORT: u16 = 47803;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/old-databases")
}

/// What `show --json` printed at `version`, in today's shape. Until 9be0b85 a trial's
/// metrics were an object of their own; they are the trial's fields now. And 5d7bfee
/// redefined pairwise kappa on purpose: a parse failure became a category of its own rather
/// than an item left out, so a 0001 trial with parse failures has another kappa today.
/// Since issue 14 a local trial's latency comes from calls timed alone (a batched call's
/// time was its batch's), which databases before 0005 have none of until they are run
/// again, and a p99 needs 100 calls, which no trial here has. Export version 2 (issue 17)
/// lists panels among the trials, each entry with its kind; a trial's fields are as they
/// were. Since issue 35 a tie in the selection metric as shown (three decimals) goes to the
/// trial with fewer parse failures before the cheaper one, on purpose ([`repicked`]). Since
/// issue 50 an agreement metric's resamples draw how many items of each kind they take
/// rather than which items: the same bootstrap on other resamples, so those intervals are
/// not compared (their values are; [`without_agreement_intervals`]).
fn in_todays_shape(version: &str, mut shown: Value) -> Value {
    without_agreement_intervals(&mut shown);
    let pairwise = shown["experiment"]["task"] == "pairwise";
    if shown.get("schema_version").is_some() {
        shown["schema_version"] = judgelab_core::results::EXPORT_SCHEMA_VERSION.into();
    }
    for trial in shown["trials"].as_array_mut().expect("trials") {
        let trial = trial.as_object_mut().expect("a trial");
        if let Some(Value::Object(metrics)) = trial.remove("metrics") {
            trial.extend(metrics);
        }
        let local = trial.get("model_sha256").is_some_and(|s| !s.is_null());
        for key in ["latency_ms", "ttft_ms"] {
            if local && version < "0005" {
                trial.remove(key);
            } else if let Some(Value::Object(p)) = trial.get_mut(key) {
                p.remove("p99");
            }
        }
        let failures = trial["parse_failure_rate"].as_f64().unwrap_or(0.0) > 0.0;
        if version == "0001" && pairwise && failures {
            trial.remove("kappa");
        }
    }
    repicked(&mut shown);
    shown
}

/// Drops every `<metric>_ci` of an agreement metric, and the interval of a paired
/// difference in one or of a panel's metric without a member, wherever they are.
fn without_agreement_intervals(value: &mut Value) {
    match value {
        Value::Object(entry) => {
            entry.retain(|key, _| {
                key.strip_suffix("_ci")
                    .is_none_or(|q| q.parse::<judgelab_core::metrics::Quality>().is_err())
            });
            for key in ["difference", "without"] {
                if let Some(Value::Object(estimate)) = entry.get_mut(key) {
                    estimate.remove("ci");
                }
            }
            entry.values_mut().for_each(without_agreement_intervals);
        }
        Value::Array(items) => items.iter_mut().for_each(without_agreement_intervals),
        _ => {}
    }
}

/// Ratings that are not all whole points (labels that are means) have no exact accuracy
/// since issue 36: wherever today's output has `within_half_point` in its place (a trial,
/// its splits, a baseline, a table row), the accuracy printed then is not expected. The
/// results table's columns (0012 on) are today's registry, not stored data.
fn without_undefined_accuracy(mut expected: Value, shown: &Value) -> Value {
    if let Some(table) = expected.get_mut("table").and_then(Value::as_object_mut) {
        table.remove("columns");
    }
    drop_undefined(&mut expected, shown);
    expected
}

fn drop_undefined(expected: &mut Value, shown: &Value) {
    match expected {
        Value::Object(entry) => {
            let within = &shown["within_half_point"];
            if within.is_number() || within["value"].is_number() {
                entry.remove("accuracy");
                entry.remove("accuracy_ci");
            }
            for (key, value) in entry.iter_mut() {
                drop_undefined(value, &shown[key.as_str()]);
            }
        }
        Value::Array(items) => {
            for (i, value) in items.iter_mut().enumerate() {
                drop_undefined(value, &shown[i]);
            }
        }
        _ => {}
    }
}

/// Where the pick rule of issue 35 chooses otherwise than the CLI that printed `shown`:
/// among the trials tied with its pick as shown, the one with the fewest parse failures
/// (0008's and 0009's `remote`: trial 6 at kappa −0.125 with 17% parse failures, where
/// trial 8 had 50%). That pick is expected instead. The selection-corrected estimate picks
/// again on every bootstrap resample, where these few items tie often, so it moves with the
/// rule: it is not compared (`naive`, the pick's own score, is; `core::selection`'s
/// simulation holds the estimate's bias).
fn repicked(shown: &mut Value) {
    let Some(selection) = shown.get("selection").cloned() else {
        return;
    };
    let metric = selection["metric"].as_str().expect("a metric");
    let trials: Vec<(i64, f64, f64)> = shown["trials"]
        .as_array()
        .expect("trials")
        .iter()
        .filter(|t| t.get("kind").is_none_or(|k| k == "trial"))
        .filter_map(|t| {
            let value = t[metric].as_f64()?;
            let failures = t["parse_failure_rate"].as_f64().unwrap_or(0.0);
            Some((t["id"].as_i64()?, (value * 1000.0).round(), failures))
        })
        .collect();
    let best = selection["best"].as_i64().expect("a pick");
    let (_, as_shown, failures) = *trials.iter().find(|t| t.0 == best).expect("the pick");
    let tied = trials.iter().filter(|t| t.1 == as_shown);
    let fewest = tied.min_by(|a, b| a.2.total_cmp(&b.2)).expect("the pick");
    let selection = shown["selection"].as_object_mut().expect("a selection");
    if fewest.2 < failures {
        selection.insert("best".into(), fewest.0.into());
    }
    for key in ["value", "ci", "optimism"] {
        selection.remove(key);
    }
}

/// Every number, string and flag of `old` is in `new` at the same place (what was added
/// since is not compared, and a null may be left out); differences are listed by their
/// JSON path.
fn differences(old: &Value, new: &Value, path: &str, out: &mut Vec<String>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            for (key, value) in a {
                match b.get(key) {
                    Some(other) => differences(value, other, &format!("{path}.{key}"), out),
                    None if value.is_null() => {}
                    None => out.push(format!("{path}.{key}: gone (was {value})")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                differences(x, y, &format!("{path}[{i}]"), out);
            }
        }
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            if (a - b).abs() > 1e-9 * a.abs().max(1.0) {
                out.push(format!("{path}: {a} is now {b}"));
            }
        }
        (a, b) if a != b => out.push(format!("{path}: {a} is now {b}")),
        _ => {}
    }
}

/// Copies a version's folder and the datasets beside it into `dir`, the database to `db`.
fn copy_fixture(version: &str, dir: &Path, db: &Path) -> Vec<String> {
    let from = fixtures();
    std::fs::create_dir_all(dir.join("datasets")).unwrap();
    for entry in std::fs::read_dir(from.join("datasets")).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), dir.join("datasets").join(entry.file_name())).unwrap();
    }
    std::fs::create_dir_all(dir.join(version)).unwrap();
    let mut names = Vec::new();
    for entry in std::fs::read_dir(from.join(version)).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            std::fs::copy(&path, dir.join(version).join(path.file_name().unwrap())).unwrap();
            names.push(path.file_stem().unwrap().to_str().unwrap().to_string());
        }
    }
    std::fs::copy(from.join(version).join("judgelab.sqlite"), db).unwrap();
    names.sort();
    names
}

/// The calls a run answered from the response cache, as the CLI reports them.
fn cache_hits(stderr: &str) -> u64 {
    stderr
        .lines()
        .find_map(|l| l.strip_suffix(" of them answered from the response cache (no call made; --no-cache to call again)"))
        .map_or(0, |n| n.trim().parse().unwrap())
}

/// The requests a run made, as the CLI reports them.
fn model_calls(stderr: &str) -> u64 {
    stderr
        .lines()
        .find_map(|l| {
            l.split_once(" model calls (")
                .map(|(n, _)| n.trim().parse().unwrap())
        })
        .unwrap_or(0)
}

/// The calls without a verdict: each failed and is stored with its error.
fn failed_calls(shown: &Value) -> u64 {
    let e = &shown["experiment"];
    e["n_expected"].as_u64().unwrap() - e["n_stored"].as_u64().unwrap()
}

#[test]
fn databases_of_every_earlier_schema_migrate_report_the_same_numbers_and_resume() {
    let refuser = Refuser::bind(REMOTE_PORT, "503 Service Unavailable");
    let mut retried = 0u64;
    for version in [
        "0001", "0002", "0003", "0004", "0005", "0006", "0007", "0008", "0009", "0010", "0011",
        "0012",
    ] {
        let env = Env::new();
        let names = copy_fixture(version, env.dir.path(), &env.db());
        assert!(!names.is_empty(), "{version} has no experiments");
        for name in &names {
            let printed: Value = serde_json::from_str(
                &std::fs::read_to_string(
                    fixtures()
                        .join(version)
                        .join("show")
                        .join(format!("{name}.json")),
                )
                .unwrap(),
            )
            .unwrap();
            let shown = env.show(name);
            let expected = without_undefined_accuracy(in_todays_shape(version, printed), &shown);
            let mut diff = Vec::new();
            differences(&expected, &shown, "", &mut diff);
            assert!(diff.is_empty(), "{version}/{name}: {}", diff.join("\n"));

            // Resuming judges nothing that is stored. Failed calls are retried: a request
            // that another trial sent and got answered comes from the response cache, the
            // rest reaches the server and is refused again.
            let failed = failed_calls(&shown);
            let file = env.dir.path().join(version).join(format!("{name}.toml"));
            let out = env.run(&["run", file.to_str().unwrap()]);
            let err = text(&out.stderr);
            let at = format!("{version}/{name}");
            assert!(err.contains(&format!("resuming {name:?}")), "{at}: {err}");
            let hits = cache_hits(&err);
            if failed == 0 {
                assert!(out.status.success(), "{at}: {err}");
                assert!(err.contains("is complete: nothing to judge"), "{at}: {err}");
            } else {
                assert!(
                    err.contains(&format!("judged {failed} verdicts")),
                    "{at}: {err}"
                );
                // The cause is printed, with how many calls it failed.
                if failed > hits {
                    assert!(
                        err.contains(&format!("failed calls, by cause:\n  {} × ", failed - hits))
                            && err.contains("503"),
                        "{at}: {err}"
                    );
                }
                // Calls that send the same request (a trial in both answer orders and one
                // in `ab`) make it once.
                let made = model_calls(&err);
                assert!(made <= failed - hits, "{at}: {err}");
                retried += made;
            }
            if version == "0011" {
                // The labels given in the queue are still each annotator's: ann's queue
                // is the eight items less the three she labelled.
                let out = env.run(&["label", name, "--annotator", "ann", "--list", "--json"]);
                let queue: Value = serde_json::from_slice(&out.stdout).unwrap();
                assert_eq!(queue.as_array().unwrap().len(), 5, "{version}: {queue}");
            }
            if version == "0012" {
                // The items' labels on the six USR criteria, with their scales, are kept.
                let listed = crate::datasets_listed(&env);
                assert!(
                    listed.contains("labelled on criteria: coherence (1-3), engagingness (1-3), groundedness (0-1), naturalness (1-3), overall (1-5), understandability (0-1)"),
                    "{version}: {listed}"
                );
            }
            let resumed = env.show(name);
            let stored = |v: &Value| v["experiment"]["n_stored"].as_u64().unwrap();
            assert_eq!(stored(&resumed), stored(&shown) + hits, "{at}: {err}");
            let trials = |v: &Value| v["trials"].as_array().unwrap().clone();
            for (before, after) in trials(&shown).iter().zip(trials(&resumed).iter()) {
                let counts = |t: &Value| (t["n"].clone(), t["n_errors"].clone());
                if counts(after) != counts(before) {
                    // A failed call answered from the cache: this trial has its verdict now.
                    continue;
                }
                let mut diff = Vec::new();
                differences(before, after, "", &mut diff);
                assert!(diff.is_empty(), "{at}, after resuming: {}", diff.join("\n"));
            }
        }
    }
    assert!(
        retried > 0,
        "the fixtures have failed remote calls to retry"
    );
    assert_eq!(
        refuser.completions() as u64,
        retried,
        "only the failed calls that the cache could not answer were sent again, each request once"
    );
}
