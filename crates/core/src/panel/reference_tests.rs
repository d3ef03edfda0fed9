//! Panels against votes taken by hand and scikit-learn, scipy and krippendorff on the same
//! fixed verdicts (`testdata/reference.json`, written by `tools/reference_panel.py`): the
//! panel's verdicts, its accuracy (with the bootstrap interval of the same resamples),
//! kappa, Spearman, the members' alpha and the panel's kappa without each member.

use serde_json::Value;

use super::*;
use crate::metrics::TrialMetrics;

const REFERENCE: &str = include_str!("testdata/reference.json");

use crate::reference::close;

fn label(v: &Value) -> Option<Label> {
    match v {
        Value::Null => None,
        Value::String(s) => Label::from_text(s),
        Value::Number(n) => Some(Label::Rating(n.as_f64().unwrap())),
        _ => panic!("{v} is no label"),
    }
}

/// The members' calls: one per item, a parse failure where the reference has none.
fn members(case: &Value) -> Vec<Vec<Observation>> {
    let humans: Vec<Label> = case["humans"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| label(h).unwrap())
        .collect();
    case["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            m.as_array()
                .unwrap()
                .iter()
                .enumerate()
                .map(|(unit, v)| Observation {
                    verdict: Some(match label(v) {
                        Some(l) => Verdict::Parsed(l),
                        None => Verdict::Failed(FailureKind::NoLabel),
                    }),
                    ..Observation::verdict(unit, humans[unit], humans[unit])
                })
                .collect()
        })
        .collect()
}

fn panel(task: Task, rule: PanelRule, ties: Option<Ties>, members: &[Vec<Observation>]) -> Panel {
    let metrics = TrialMetrics::default();
    let parts: Vec<Part<'_>> = members
        .iter()
        .enumerate()
        .map(|(i, m)| Part {
            id: i as i64 + 1,
            dev: m,
            test: &[],
            latencies: &[],
            metrics: &metrics,
        })
        .collect();
    let spec = PanelSpec {
        name: "p".into(),
        members: (1..=members.len() as i64).collect(),
        rule,
        ties,
    };
    let bootstrap = BootstrapSpec {
        resamples: 200,
        ..BootstrapSpec::default()
    };
    Panel::new(task, &spec, &parts, Quality::Kappa, &bootstrap)
}

fn verdicts(p: &Panel) -> Vec<Option<Label>> {
    p.observations
        .iter()
        .map(|o| o.verdict.and_then(|v| v.label()))
        .collect()
}

#[test]
fn pairwise_panels_vote_as_by_hand_and_score_as_the_reference() {
    let reference: Value = serde_json::from_str(REFERENCE).unwrap();
    let case = &reference["pairwise"];
    let members = members(case);
    for (ties, key) in [(Ties::Tie, "tie"), (Ties::First, "first")] {
        let want = &case[key];
        let p = panel(Task::Pairwise, PanelRule::Majority, Some(ties), &members);
        let expected: Vec<Option<Label>> = want["verdicts"]
            .as_array()
            .unwrap()
            .iter()
            .map(label)
            .collect();
        assert_eq!(verdicts(&p), expected, "{key}");
        let m = &p.metrics;
        close(&format!("{key}: accuracy"), m.accuracy(), &want["accuracy"]);
        let (lo, hi) = m.estimate(Quality::Accuracy).ci.unwrap();
        close(
            &format!("{key}: accuracy ci"),
            Some(lo),
            &want["accuracy_ci"][0],
        );
        close(
            &format!("{key}: accuracy ci"),
            Some(hi),
            &want["accuracy_ci"][1],
        );
        close(&format!("{key}: kappa"), m.kappa(), &want["kappa"]);
        for (c, w) in p
            .contributions
            .iter()
            .zip(want["kappa_without"].as_array().unwrap())
        {
            close(&format!("{key}: without {}", c.member), c.without.value, w);
            let diff = m.kappa().unwrap() - w.as_f64().unwrap();
            close(
                &format!("{key}: difference"),
                c.difference.value,
                &diff.into(),
            );
        }
        close(
            &format!("{key}: members' alpha"),
            p.members_agreement.alpha.value,
            &case["members_alpha"],
        );
        assert_eq!(p.members_agreement.level, Level::Nominal);
        // Item 0, where every member failed, is the panel's parse failure.
        assert_eq!(m.parse_failure_rate, Some(1.0 / 36.0));
    }
}

#[test]
fn rating_panels_vote_as_by_hand_and_score_as_the_reference() {
    let reference: Value = serde_json::from_str(REFERENCE).unwrap();
    let case = &reference["rating"];
    let members = members(case);
    let task = Task::Single {
        scale_min: 1,
        scale_max: 5,
    };
    for (rule, ties, key) in [
        (PanelRule::Mean, None, "mean"),
        (PanelRule::Majority, Some(Ties::First), "first"),
    ] {
        let want = &case[key];
        let p = panel(task, rule, ties, &members);
        for (got, w) in verdicts(&p)
            .iter()
            .zip(want["verdicts"].as_array().unwrap())
        {
            match (got, label(w)) {
                (Some(Label::Rating(g)), Some(Label::Rating(w))) => {
                    assert!((g - w).abs() < 1e-12, "{key}: {g} != {w}")
                }
                (g, w) => assert_eq!(*g, w, "{key}"),
            }
        }
        let m = &p.metrics;
        close(&format!("{key}: accuracy"), m.accuracy(), &want["accuracy"]);
        close(
            &format!("{key}: within half a point"),
            m.value(Quality::WithinHalfPoint),
            &want["within_half_point"],
        );
        close(&format!("{key}: kappa"), m.kappa(), &want["kappa"]);
        close(
            &format!("{key}: spearman"),
            m.value(Quality::Spearman),
            &want["spearman"],
        );
        close(
            &format!("{key}: members' alpha"),
            p.members_agreement.alpha.value,
            &case["members_alpha"],
        );
        assert_eq!(p.members_agreement.level, Level::Ordinal);
    }
}
