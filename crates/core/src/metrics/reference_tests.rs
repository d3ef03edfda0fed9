//! Every statistic against the values scikit-learn, scipy and krippendorff give on the
//! same fixed data (`testdata/reference.json`, written by `tools/reference_stats.py`),
//! bootstrap intervals included: the script draws the same resamples.

use serde_json::Value;

use super::*;
use crate::dataset::Choice;
use crate::metrics::paired::compare;
use crate::verdict::FailureKind;

const REFERENCE: &str = include_str!("testdata/reference.json");
const SCALE: Task = Task::Single {
    scale_min: 1,
    scale_max: 5,
};

/// Latency does not enter these checks.
const CALLS: Timing<'static> = Timing::Calls { concurrency: 1 };

fn reference() -> Value {
    serde_json::from_str(REFERENCE).unwrap()
}

fn label(v: &Value) -> Option<Label> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(Label::Choice(match s.as_str() {
            "A" => Choice::A,
            "B" => Choice::B,
            _ => Choice::Tie,
        })),
        n => Some(Label::Rating(n.as_f64().unwrap())),
    }
}

fn observations(human: &Value, judge: &Value) -> Vec<Observation> {
    let (human, judge) = (human.as_array().unwrap(), judge.as_array().unwrap());
    human
        .iter()
        .zip(judge)
        .enumerate()
        .map(|(unit, (h, j))| Observation {
            order: crate::sweep::Order::Ab,
            unit,
            repeat: 0,
            swapped: false,
            human: label(h).unwrap(),
            verdict: Some(label(j).map_or(Verdict::Failed(FailureKind::NoLabel), Verdict::Parsed)),
            prompt_tokens: 1,
            completion_tokens: 1,
            latency_ms: 1.0,
            ttft_ms: None,
            cost_usd: None,
            distribution: None,
            belief: None,
        })
        .collect()
}

/// The reference's key for each metric of a task.
fn keys(task: Task) -> &'static [(&'static str, Quality)] {
    match task {
        Task::Pairwise => &[
            ("accuracy", Quality::Accuracy),
            ("agreement_without_ties", Quality::AgreementWithoutTies),
            ("cohen_kappa", Quality::Kappa),
            ("alpha_nominal", Quality::AlphaNominal),
        ],
        Task::Single { .. } => &[
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
        ],
    }
}

use crate::reference::close;

fn no_ci() -> BootstrapSpec {
    BootstrapSpec {
        resamples: 0,
        ..BootstrapSpec::default()
    }
}

#[test]
fn point_values_match_the_reference() {
    let r = reference();
    for (group, task) in [("nominal", Task::Pairwise), ("ratings", SCALE)] {
        for case in r[group].as_array().unwrap() {
            let m = compute(
                task,
                &observations(&case["human"], &case["judge"]),
                CALLS,
                &no_ci(),
            );
            for &(key, q) in keys(task) {
                close(
                    &format!("{group}/{}/{key}", case["name"]),
                    m.value(q),
                    &case[key],
                );
            }
        }
    }
}

#[test]
fn bootstrap_intervals_match_the_reference_on_the_same_resamples() {
    let r = reference();
    for b in r["bootstrap"].as_array().unwrap() {
        let (group, task) = match b["kind"].as_str().unwrap() {
            "nominal" => ("nominal", Task::Pairwise),
            _ => ("ratings", SCALE),
        };
        let case = r[group]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == b["case"])
            .unwrap();
        let spec = BootstrapSpec {
            resamples: b["resamples"].as_u64().unwrap() as u32,
            level: b["level"].as_f64().unwrap(),
            seed: b["seed"].as_u64().unwrap(),
        };
        let m = compute(
            task,
            &observations(&case["human"], &case["judge"]),
            CALLS,
            &spec,
        );
        for &(key, q) in keys(task) {
            let ci = m.estimate(q).ci;
            let what = format!("bootstrap {}/{key}", b["case"]);
            close(&what, ci.map(|c| c.0), &b[key][0]);
            close(&what, ci.map(|c| c.1), &b[key][1]);
        }
    }
}

#[test]
fn mcnemar_matches_scipy_binomtest() {
    crate::reference::check_mcnemar(&reference()["mcnemar"]);
}

#[test]
fn paired_comparison_matches_the_reference() {
    let r = reference();
    let case = &r["paired"][0];
    let spec = BootstrapSpec {
        resamples: case["resamples"].as_u64().unwrap() as u32,
        level: case["level"].as_f64().unwrap(),
        seed: case["seed"].as_u64().unwrap(),
    };
    let first = observations(&case["human"], &case["judge_a"]);
    let second = observations(&case["human"], &case["judge_b"]);
    let c = compare(Task::Pairwise, &first, &second, Quality::Kappa, &spec);
    assert_eq!(c.first_only as u64, case["b"].as_u64().unwrap());
    assert_eq!(c.second_only as u64, case["c"].as_u64().unwrap());
    close("p", Some(c.mcnemar_p), &case["p_value"]);
    close("kappa diff", c.difference.value, &case["kappa_diff"]);
    let ci = c.difference.ci;
    close("kappa diff ci", ci.map(|x| x.0), &case["kappa_diff_ci"][0]);
    close("kappa diff ci", ci.map(|x| x.1), &case["kappa_diff_ci"][1]);
}

/// Expected metrics of exact verdicts, through `compute` as the engine calls it: one call
/// per verdict, each with its distribution (and a draw that must not matter).
#[test]
fn expected_metrics_match_the_reference() {
    for case in reference()["expected"].as_array().unwrap() {
        let task = if case["scale"].is_null() {
            Task::Pairwise
        } else {
            SCALE
        };
        let observations: Vec<Observation> = case["human"]
            .as_array()
            .unwrap()
            .iter()
            .zip(case["distributions"].as_array().unwrap())
            .enumerate()
            .map(|(unit, (h, d))| {
                let mut distribution = VerdictDistribution::default();
                for (key, p) in d.as_object().unwrap() {
                    let p = p.as_f64().unwrap();
                    match key.as_str() {
                        "failed" => distribution.failed = p,
                        text => distribution
                            .labels
                            .push((Label::from_text(text).unwrap(), p)),
                    }
                }
                Observation {
                    order: crate::sweep::Order::Ab,
                    unit,
                    repeat: 0,
                    swapped: false,
                    human: label(h).unwrap(),
                    verdict: Some(Verdict::Failed(FailureKind::NoLabel)),
                    prompt_tokens: 1,
                    completion_tokens: 1,
                    latency_ms: 1.0,
                    ttft_ms: None,
                    cost_usd: None,
                    distribution: Some(distribution),
                    belief: None,
                }
            })
            .collect();
        let e = compute(task, &observations, CALLS, &no_ci())
            .expected
            .unwrap();
        close("expected accuracy", e.accuracy, &case["accuracy"]);
        close("expected kappa", e.kappa, &case["kappa"]);
        close("entropy", e.entropy_bits, &case["entropy_bits"]);
        close("failed", e.failed, &case["failed"]);
        if task != Task::Pairwise {
            close("G-Eval Spearman", e.geval_spearman, &case["geval_spearman"]);
            close("G-Eval Pearson", e.geval_pearson, &case["geval_pearson"]);
        }
    }
}
