//! The report's reading of an experiment, on summaries built in code: which trial it
//! recommends and what it says.

use judgelab_core::metrics::{BootstrapSpec, Quality};
use judgelab_core::Task;
use judgelab_report::analysis::Analysis;
use judgelab_report::table::ResultsTable;

use crate::findings::picked;
use crate::fixture::{believed, summary, trial, with_vote3};

#[test]
fn a_cheaper_trial_the_data_cannot_tell_from_the_best_is_recommended() {
    // 90% and 88% right: a difference the data cannot establish; the second costs half.
    let s = summary(vec![
        trial(1, 0.0, 400, |i| i % 10 != 0),
        trial(2, 0.7, 200, |i| i % 25 != 0 && i % 10 != 3),
        trial(3, 1.0, 100, |i| i % 2 == 0),
    ]);
    let a = Analysis::new(&s, Quality::Kappa);
    let findings = picked(&a);
    assert_eq!(a.best, Some(0));
    assert_eq!(a.recommended, Some(1), "{findings:?}");
    assert!(
        findings[0].starts_with("Pick trial #2 (temp=0.7)"),
        "{}",
        findings[0]
    );
    assert!(findings[0].contains("2.0× less"), "{}", findings[0]);
    assert!(
        findings.iter().any(|f| f.contains("It beats the baseline")),
        "{findings:?}"
    );
    assert_eq!(a.labels[0], "#1 temp=0");
}

#[test]
fn a_judge_no_better_than_the_baselines_is_not_ready() {
    // Right on 55%: no better than chance, at any price.
    let s = summary(vec![
        trial(1, 0.0, 400, |i| i % 20 < 11),
        trial(2, 0.7, 100, |i| i % 20 < 10),
    ]);
    let a = Analysis::new(&s, Quality::Accuracy);
    let findings = picked(&a);
    assert!(findings[0].starts_with("Not ready"), "{findings:?}");
    // Nothing is ready, so the most promising trial is named, not the cheapest.
    assert_eq!(a.recommended, a.best);
}

#[test]
fn every_swept_axis_is_shown_the_output_constraint_too() {
    let mut grammar = trial(2, 0.0, 200, |i| i % 10 != 0);
    grammar.params.constraint = judgelab_core::Constraint::Grammar;
    let s = summary(vec![trial(1, 0.0, 200, |i| i % 5 != 0), grammar]);
    let a = Analysis::new(&s, Quality::Kappa);
    assert_eq!(a.varying, vec![judgelab_core::sweep::Axis::Constraint]);
    // The labels the charts, the report's tables and the app's results table show.
    assert_eq!(a.labels, ["#1 constraint=none", "#2 constraint=grammar"]);
    let csv = String::from_utf8(
        judgelab_report::tables::trials_csv(&ResultsTable::new(&a, &[])).unwrap(),
    )
    .unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let column = rows[0].iter().position(|c| *c == "constraint").unwrap();
    assert_eq!([rows[1][column], rows[2][column]], ["none", "grammar"]);
    let dir = tempfile::tempdir().unwrap();
    let options = judgelab_report::ReportOptions {
        quality: Quality::Kappa,
        ..Default::default()
    };
    judgelab_report::write_report(&s, dir.path(), &options).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(
        html.contains("<th class=\"l\">constraint</th>"),
        "the trials table has the axis"
    );
    assert!(html.contains("<td class=\"l\">grammar</td>"));
}

#[test]
fn a_cascade_of_a_confident_cheap_trial_and_the_best_is_composed_and_shown() {
    // The strong trial is right on 95% at 400 tokens; the cheap one on 80% at 100, sure of
    // exactly its right verdicts, so it decides those and escalates the rest.
    let mut s = summary(vec![
        trial(1, 0.0, 400, |i| i % 20 != 0),
        believed(trial(2, 0.7, 100, |i| i % 5 != 0)),
    ]);
    s.cascades = judgelab_core::results::cascades(
        Task::Pairwise,
        &s.trials,
        Quality::Kappa,
        None,
        &BootstrapSpec::default(),
    );
    assert_eq!(s.cascades.len(), 1);
    let c = &s.cascades[0];
    assert_eq!((c.cheap, c.strong), (2, 1));
    assert!(c.threshold > 0.6 && c.threshold <= 0.97, "{}", c.threshold);
    assert_eq!(c.escalated, Some(0.2));
    // Right wherever the cheap judge decides, and where the strong one is on the rest (it
    // is wrong on every 20th item, all of them escalated).
    let accuracy = c.metrics.accuracy().unwrap();
    assert!(
        (accuracy - (160.0 + 30.0) / 200.0).abs() < 1e-12,
        "{accuracy}"
    );
    // 101 tokens a verdict for everything, plus 401 for the escalated fifth.
    let tokens = c.metrics.tokens_per_item().unwrap();
    assert!((tokens - (101.0 + 0.2 * 401.0)).abs() < 1e-9, "{tokens}");

    let a = Analysis::new(&s, Quality::Kappa);
    let chart = a.pareto_chart(a.cost);
    let composed: Vec<&judgelab_report::charts::ParetoPoint> = chart
        .points
        .iter()
        .filter(|p| p.status == judgelab_report::charts::FrontStatus::Composed)
        .collect();
    assert_eq!(composed.len(), 1);
    assert!(
        composed[0].label.starts_with("#2→#1 cascade"),
        "{}",
        composed[0].label
    );
    let csv = String::from_utf8(
        judgelab_report::tables::trials_csv(&ResultsTable::new(&a, &[])).unwrap(),
    )
    .unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let cheap = rows[0].iter().position(|c| *c == "cascade_cheap").unwrap();
    assert_eq!(rows.len(), 4, "{csv}");
    assert_eq!((rows[3][cheap], rows[3][cheap + 1]), ("2", "1"), "{csv}");
    let dir = tempfile::tempdir().unwrap();
    let options = judgelab_report::ReportOptions {
        quality: Quality::Kappa,
        ..Default::default()
    };
    judgelab_report::write_report(&s, dir.path(), &options).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(
        html.contains("<li>#2→#1 cascade ≥"),
        "the trust section reads it"
    );
    assert!(
        html.contains("<tr class=\"composed\">"),
        "the trials table lists it"
    );
    assert!(html.contains("#2 decides 80% of verdicts"), "{html}");
}

#[test]
fn a_panel_is_drawn_listed_and_read_beside_its_members() {
    // Three trials right on 90%, 80% and 70% of the items, wrong on different ones: the
    // majority is wrong only where two are.
    let mut s = summary(vec![
        trial(1, 0.0, 100, |i| i % 10 != 0),
        trial(2, 0.5, 100, |i| i % 5 != 1),
        trial(3, 1.0, 100, |i| i % 10 >= 3),
    ]);
    with_vote3(&mut s);
    assert_eq!(s.panels.len(), 1);
    let p = &s.panels[0];
    // Wrong where two of three are: items i % 10 = 0 (trials 1 and 3) and 1 (2 and 3).
    let accuracy = p.metrics.accuracy().unwrap();
    assert!((accuracy - 0.8).abs() < 1e-12, "{accuracy}");
    // Its cost is its members' sum.
    let tokens = p.metrics.tokens_per_item().unwrap();
    assert!((tokens - 3.0 * 101.0).abs() < 1e-9, "{tokens}");

    let a = Analysis::new(&s, Quality::Kappa);
    let chart = a.pareto_chart(a.cost);
    let composed: Vec<&str> = chart
        .points
        .iter()
        .filter(|p| p.status == judgelab_report::charts::FrontStatus::Composed)
        .map(|p| p.label.as_str())
        .collect();
    assert_eq!(composed, ["vote3 panel"]);
    assert!(
        chart
            .points
            .iter()
            .filter(|p| p.label.starts_with('#'))
            .count()
            == 3,
        "its members are on the same chart"
    );
    let csv = String::from_utf8(
        judgelab_report::tables::trials_csv(&ResultsTable::new(&a, &[])).unwrap(),
    )
    .unwrap();
    let rows: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let panel = rows[0].iter().position(|c| *c == "panel").unwrap();
    assert_eq!(rows.len(), 5, "{csv}");
    assert_eq!(
        (rows[4][panel], rows[4][panel + 1], rows[4][panel + 2]),
        ("vote3", "majority", "1 2 3"),
        "{csv}"
    );
    assert_eq!(rows[0].len(), rows[4].len());
    let dir = tempfile::tempdir().unwrap();
    let options = judgelab_report::ReportOptions {
        quality: Quality::Kappa,
        ..Default::default()
    };
    judgelab_report::write_report(&s, dir.path(), &options).unwrap();
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("<h3>Panels</h3>"), "{html}");
    assert!(html.contains("majority of #1, #2, #3"), "{html}");
    assert!(html.contains("against the best trial #1"), "{html}");
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("| vote3 (panel) |"), "{md}");
}
