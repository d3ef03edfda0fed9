//! The findings (`report::findings`): a snapshot of each kind — its subject, sentence and
//! figures — on fixed summaries, so that a change to what a report says shows in a diff
//! (`cargo insta review`, or `INSTA_UPDATE=always` and read the diff).

use judgelab_core::metrics::Quality;
use judgelab_report::analysis::Analysis;
use judgelab_report::findings::{Findings, Kind};

use crate::fixture::{self, summary, trial};

/// The sentences that say which configuration to pick, in order.
pub fn picked(a: &Analysis<'_>) -> Vec<String> {
    Findings::new(a)
        .of(&Kind::PICK)
        .map(|f| f.text.clone())
        .collect()
}

/// The findings of `kind`, each as its subject, its line and its figures.
fn shown(findings: &Findings, kind: Kind) -> String {
    let number = |x: f64| format!("{x:.4}");
    findings
        .of(&[kind])
        .map(|f| {
            let figures: Vec<String> = f
                .figures
                .iter()
                .map(|g| {
                    let e = g.estimate;
                    let value = e.value.map_or("—".into(), number);
                    let ci = e.ci.map_or(String::new(), |(lo, hi)| {
                        format!(" [{}, {}]", number(lo), number(hi))
                    });
                    format!("  {}: {value}{ci}", g.name)
                })
                .collect();
            format!(
                "[{}] {}\n{}\n",
                f.subject.label(),
                f.line(),
                figures.join("\n")
            )
        })
        .collect()
}

/// A snapshot of every kind `s` has a finding of, named after the kind and the fixture.
fn snapshot_kinds(
    fixture: &str,
    s: &judgelab_core::results::ExperimentSummary,
    quality: Quality,
) -> Vec<Kind> {
    let a = Analysis::new(s, quality);
    let findings = Findings::new(&a);
    let mut seen = Vec::new();
    for kind in Kind::ALL {
        let text = shown(&findings, kind);
        if !text.is_empty() {
            let name = format!("{}_{fixture}", kind.name().replace(' ', "_"));
            insta::assert_snapshot!(name, text);
            seen.push(kind);
        }
    }
    seen
}

#[test]
fn each_kind_of_finding_says_what_it_rests_on() {
    let mut seen = snapshot_kinds("sweep", &fixture::renderers(), Quality::Accuracy);
    let chance = fixture::chance();
    seen.extend(snapshot_kinds("chance", &chance, Quality::Accuracy));
    // Nothing judged yet: no pick.
    let mut empty = summary(vec![trial(1, 0.0, 400, |_| true)]);
    empty.trials[0].metrics.quality = Default::default();
    seen.extend(snapshot_kinds("unjudged", &empty, Quality::Accuracy));
    // The people behind the labels and learned weights: those kinds alone.
    let people = with_people();
    let a = Analysis::new(&people, Quality::Accuracy);
    let findings = Findings::new(&a);
    for kind in [Kind::Humans, Kind::CriterionWeights, Kind::ItemWeights] {
        let name = format!("{}_people", kind.name().replace(' ', "_"));
        insta::assert_snapshot!(name, shown(&findings, kind));
        seen.push(kind);
    }
    for kind in [
        Kind::Humans,
        Kind::CriterionWeights,
        Kind::ItemWeights,
        Kind::Undecided,
        Kind::NotReady,
        Kind::Pick,
        Kind::Selection,
        Kind::Caveat,
        Kind::Confirmation,
        Kind::Labels,
        Kind::Trust,
        Kind::Cascade,
        Kind::Panel,
        Kind::Drift,
        Kind::Wording,
    ] {
        assert!(
            seen.contains(&kind),
            "no fixture has a {} finding",
            kind.name()
        );
    }
}

/// The sweep with the people behind its labels (the dataset and one annotator, and the
/// pick with each) and learned weights on its first trial: criterion weights fitted on
/// the dev split alone, a checklist's item weights confirmed on a test split.
fn with_people() -> judgelab_core::results::ExperimentSummary {
    use judgelab_core::annotation::humans::{HumanAgreement, JudgeWithRater, Rater, RaterPair};
    use judgelab_core::metrics::alpha::Level;
    use judgelab_core::metrics::{Estimate, Qualities, SplitScore};
    use judgelab_core::results::weighted::LearnedWeights;

    let accuracy = |value: f64, lo: f64, hi: f64| {
        Qualities(
            [(
                Quality::Accuracy,
                Estimate {
                    value: Some(value),
                    ci: Some((lo, hi)),
                },
            )]
            .into(),
        )
    };
    let mut s = fixture::renderers();
    let pick = s.trials[3].id;
    s.humans = Some(HumanAgreement {
        raters: vec![
            Rater {
                name: "dataset".into(),
                n_items: 200,
            },
            Rater {
                name: "ann".into(),
                n_items: 40,
            },
        ],
        pairs: vec![RaterPair {
            first: "dataset".into(),
            second: "ann".into(),
            n_items: 40,
            quality: accuracy(0.85, 0.72, 0.95),
        }],
        level: Level::Nominal,
        alpha: Estimate {
            value: Some(0.69),
            ci: Some((0.45, 0.88)),
        },
        alpha_raters: 2,
        combined: false,
        n_shared: 40,
        judge: vec![
            JudgeWithRater {
                rater: "dataset".into(),
                trial_id: pick,
                n_items: 200,
                quality: accuracy(0.95, 0.92, 0.97),
            },
            JudgeWithRater {
                rater: "ann".into(),
                trial_id: pick,
                n_items: 40,
                quality: accuracy(0.875, 0.77, 0.97),
            },
        ],
    });
    let score = |n: usize, value: f64| SplitScore {
        n,
        n_errors: 0,
        quality: accuracy(value, value - 0.1, (value + 0.1).min(1.0)),
    };
    let weights = |names: &[(&str, f64)], test: bool| LearnedWeights {
        method: "non-negative least squares with a free intercept, fitted on the dev split",
        weights: names.iter().map(|&(n, w)| (n.to_string(), w)).collect(),
        intercept: 0.5,
        varies: names.iter().map(|&(n, _)| (n.to_string(), 0.4)).collect(),
        spearman: names
            .iter()
            .map(|&(n, _)| (n.to_string(), Some(0.35)))
            .collect(),
        questions: Default::default(),
        n_fit: 180,
        dev: score(180, 0.8),
        test: test.then(|| score(60, 0.75)),
        minimum: None,
    };
    s.trials[0].weights = Some(weights(&[("helpful", 0.7), ("harmless", 0.0)], false));
    s.trials[0].item_weights = Some(weights(&[("helpful/1", 0.4), ("helpful/2", 0.2)], true));
    s.trials[0].split_scores.dev = score(180, 0.78);
    s.trials[0].split_scores.test = Some(score(60, 0.7));
    s
}
