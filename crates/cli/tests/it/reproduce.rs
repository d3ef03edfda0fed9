//! A seeded sweep reproduces: decoded one sequence at a time rather than four together, or
//! killed outright at random moments and resumed again and again, it ends with the
//! verdicts and metrics of the same sweep run straight through.

use std::process::Stdio;
use std::time::{Duration, Instant};

use judgelab_core::rng::SplitMix64;

use super::{experiment, signal, text, Env};

/// The sweep: seeded samples of eight tokens at two temperatures, with and without an
/// example, on 12 items. (Greedy generations are decoded in batches, where a near-tie may
/// go either way: they are not held to this.)
const SWEEP: &str =
    "temperature = [0.7, 1.0]\nmax_tokens = [8]\nfew_shot = [0, 1]\nseed = 11\n[limits]\nitems = 12";

/// Each verdict as `verdicts.csv` has it, less what timing changes: (trial, item, repeat,
/// order) → (verdict, failure kind, error, completion tokens, seed, prompt hash, output).
fn verdicts(env: &Env, name: &str) -> Vec<Vec<String>> {
    let dir = env.dir.path().join(format!("report-{name}"));
    let out = env.run(&["report", name, "--out", dir.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let mut reader = csv::Reader::from_path(dir.join("verdicts.csv")).unwrap();
    let headers = reader.headers().unwrap().clone();
    let keep = [
        "trial_id",
        "item_id",
        "repeat",
        "swapped",
        "verdict",
        "failure_kind",
        "error",
        "completion_tokens",
        "seed",
        "prompt_hash",
        "raw_output",
    ];
    let at: Vec<usize> = keep
        .iter()
        .map(|k| headers.iter().position(|h| h == *k).unwrap())
        .collect();
    let mut rows: Vec<Vec<String>> = reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            at.iter().map(|&i| r[i].to_string()).collect()
        })
        .collect();
    rows.sort();
    rows
}

/// Each trial's figures that its verdicts make.
fn metrics(env: &Env, name: &str) -> Vec<String> {
    env.show(name)["trials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let figures: Vec<String> = ["accuracy", "kappa", "parse_failure_rate", "n"]
                .iter()
                .map(|k| t[k].to_string())
                .collect();
            format!("{}: {}", t["params"], figures.join(" "))
        })
        .collect()
}

#[test]
fn a_sampled_sweep_decoded_alone_or_killed_many_times_ends_as_one_run_straight_through() {
    // The sweep straight through, and decoded one sequence at a time, run beside the
    // killed one (three judges at once: the test is often the last one running).
    let spawn_sweep = |env: &Env, extra: &str| {
        let exp = experiment(env, "seeded", extra, SWEEP);
        env.cmd(&["run", exp.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let straight = Env::new();
    let straight_run = spawn_sweep(&straight, "");
    // `parallel` is speed only: one sequence at a time, the same verdicts. (Decoded beside
    // others, a sampled generation's logits differ in their last bits from its own, and
    // nine of 48 such verdicts differed when they were.)
    let alone = Env::new();
    let alone_run = spawn_sweep(&alone, "parallel = 1");

    let env = Env::new();
    let exp = experiment(&env, "seeded", "", SWEEP);
    let exp = exp.to_str().unwrap();
    let mut rng = SplitMix64::new(7);
    let (mut kills, mut stored_between) = (0, Vec::new());
    // The longest a run may go before its kill: doubled after a kill that found nothing
    // new stored, so that every run is not killed before its first batch on a busy machine.
    let mut window_ms = 1500;
    let start = Instant::now();
    loop {
        let mut child = env
            .cmd(&["run", exp])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // A random moment: while the model loads, or anywhere in the sweep.
        let wait = Duration::from_millis(200 + rng.below(window_ms));
        let begun = Instant::now();
        while begun.elapsed() < wait && child.try_wait().unwrap().is_none() {
            std::thread::sleep(Duration::from_millis(10));
        }
        if let Some(status) = child.try_wait().unwrap() {
            assert!(status.success(), "a run failed");
            break;
        }
        signal(&child, "KILL");
        child.wait().unwrap();
        kills += 1;
        let stored = env.show("seeded")["experiment"]["n_stored"]
            .as_u64()
            .unwrap_or(0);
        if stored_between.last() == Some(&stored) {
            window_ms = (window_ms * 2).min(60_000);
        }
        stored_between.push(stored);
        assert!(
            start.elapsed() < Duration::from_secs(900),
            "not done after {kills} kills: {stored_between:?}"
        );
    }
    // Killed mid-sweep several times, not only before the first verdict or after the last.
    let mid = stored_between.iter().filter(|&&n| n > 0 && n < 48).count();
    assert!(kills >= 5 && mid >= 3, "{kills} kills: {stored_between:?}");
    let out = straight_run.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let expected = verdicts(&straight, "seeded");
    assert_eq!(expected.len(), 48);
    let out = alone_run.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(verdicts(&alone, "seeded"), expected);

    let out = env.run(&["run", exp]);
    assert!(
        text(&out.stderr).contains("nothing to judge"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        verdicts(&env, "seeded"),
        expected,
        "after {stored_between:?}"
    );
    assert_eq!(metrics(&env, "seeded"), metrics(&straight, "seeded"));
}
