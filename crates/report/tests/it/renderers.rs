//! Every renderer of the results table on one fixed summary ([`fixture::renderers`]), held
//! as reviewed snapshots: the terminal's grid, the report's Markdown and HTML table,
//! `trials.csv` and `show --json`'s table. A change to any output shows as a diff here
//! (`cargo insta review`, or `INSTA_UPDATE=always` and read the diff).

use judgelab_core::metrics::Quality;
use judgelab_core::pareto::{Cost, Objective};
use judgelab_report::analysis::Analysis;
use judgelab_report::table::{ResultsTable, RowKind};

use crate::fixture;

/// #1 and #4 tie in accuracy as shown: the best is #1, which has no parse failure, and
/// the recommendation #4, which the data cannot tell from it at half the cost. At the same
/// cost, #1 is both, and the report says what broke the tie.
#[test]
fn the_best_is_the_tied_trial_with_fewer_parse_failures() {
    let s = fixture::renderers();
    let a = Analysis::new(&s, Quality::Accuracy);
    let t = ResultsTable::new(&a, &[]);
    let named = |keep: fn(&judgelab_report::table::Row) -> bool| -> Vec<&str> {
        t.rows
            .iter()
            .filter(|r| keep(r))
            .map(|r| r.name.as_str())
            .collect()
    };
    assert_eq!(named(|r| r.best), ["#1"]);
    assert_eq!(named(|r| r.recommended), ["#4"]);
    let kinds: Vec<RowKind> = t.rows.iter().map(|r| r.kind).collect();
    use RowKind::{Cascade, Panel, Trial};
    assert_eq!(kinds, [Trial, Trial, Trial, Trial, Cascade, Panel]);

    let mut s = fixture::summary(vec![
        fixture::trial(1, 0.0, 400, |i| i % 20 != 0),
        fixture::failing(fixture::trial(4, 0.7, 400, |i| i % 20 != 0), |i| {
            i % 20 == 0
        }),
    ]);
    s.trials[1].params.few_shot = 1;
    let a = Analysis::new(&s, Quality::Accuracy);
    assert_eq!((a.best, a.recommended), (Some(0), Some(0)));
    let findings = crate::findings::picked(&a);
    assert!(
        findings[0]
            .contains("; #4 ties with it as shown, with more parse failures (5% against its 0%)"),
        "{}",
        findings[0]
    );
}

#[test]
fn renderers() {
    let s = fixture::renderers();
    let front = [
        Objective::Quality(Quality::Accuracy),
        Objective::Cost(Cost::Tokens),
    ];
    let a = Analysis::new(&s, Quality::Accuracy);
    let t = ResultsTable::new(&a, &front);
    insta::assert_snapshot!("terminal", judgelab_report::terminal::grid(&t));
    let csv = judgelab_report::tables::trials_csv(&t).unwrap();
    insta::assert_snapshot!("trials_csv", String::from_utf8(csv).unwrap());
    insta::assert_snapshot!("json", serde_json::to_string_pretty(&t).unwrap());
    let dir = tempfile::tempdir().unwrap();
    // #4 (its parse failures its flips) against #1, as `report --compare 1 4` adds it.
    let compared =
        judgelab_core::results::comparison::compare((&s, 1), (&s, 4), Quality::Accuracy).unwrap();
    insta::assert_snapshot!(
        "compared_terminal",
        judgelab_report::comparison::text(&compared, s.experiment.task_kind)
    );
    let options = judgelab_report::ReportOptions {
        quality: Quality::Accuracy,
        comparisons: vec![compared],
        alignment: None,
    };
    judgelab_report::write_report(&s, dir.path(), &options).unwrap();
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    let trials = section(&md, "## Trials", "## Charts");
    insta::assert_snapshot!("markdown", trials);
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    insta::assert_snapshot!("html", section(&html, "<h2>Trials</h2>", "<h3>Panels</h3>"));
    // The comparison's section: its sentences, flip matrix and the calls that moved most.
    let compared = |text: &str, heading: &str| {
        let start = text.find(heading).expect("a Compared section");
        let rest = &text[start + heading.len()..];
        let end = rest
            .find(&heading[..heading.len() - "Compared".len()])
            .unwrap_or(rest.len());
        text[start..start + heading.len() + end].to_string()
    };
    insta::assert_snapshot!("compared_markdown", compared(&md, "\n## Compared"));
    insta::assert_snapshot!("compared_html", compared(&html, "<h2>Compared"));
}

/// The part of `text` from `from` up to `to`.
fn section<'t>(text: &'t str, from: &str, to: &str) -> &'t str {
    let start = text
        .find(from)
        .unwrap_or_else(|| panic!("{from} in {text}"));
    let end = start
        + text[start..]
            .find(to)
            .unwrap_or_else(|| panic!("{to} after {from}"));
    &text[start..end]
}
