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
    for kind in [
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
