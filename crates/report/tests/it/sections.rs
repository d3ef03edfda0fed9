//! Snapshots of every section of the Markdown and HTML reports, as `write_report` writes
//! them for fixed summaries: a change to what a report says, or how it lays it out, shows
//! in a diff (`cargo insta review`, or `INSTA_UPDATE=always` and read the diff). Charts are
//! left out (`charts.rs` draws them): an HTML figure's SVG is shown as `<svg …/>`.

use judgelab_core::metrics::Quality;
use judgelab_core::results::ExperimentSummary;
use judgelab_report::{write_report, ReportOptions};

use crate::fixture;

/// `report.md` and `report.html` of `s`, as written.
fn reports(s: &ExperimentSummary) -> (String, String) {
    let dir = tempfile::tempdir().unwrap();
    let options = ReportOptions {
        quality: Quality::Accuracy,
        comparisons: Vec::new(),
        alignment: None,
    };
    write_report(s, dir.path(), &options).unwrap();
    let read = |name: &str| std::fs::read_to_string(dir.path().join(name)).unwrap();
    (read("report.md"), read("report.html"))
}

/// `text` cut where each line starting with `marker` begins a section (what comes before
/// the first is `head`); a section's name is its title's words (up to a tag), joined by `_`.
fn sections(text: &str, marker: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = vec![("head".into(), String::new())];
    for line in text.lines() {
        if let Some(title) = line.strip_prefix(marker) {
            let title = title.split('<').next().unwrap_or(title);
            let name: String = title
                .split(|c: char| !c.is_alphanumeric())
                .filter(|w| !w.is_empty())
                .take(6)
                .collect::<Vec<_>>()
                .join("_")
                .to_lowercase();
            out.push((name, String::new()));
        }
        if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

/// Every inline SVG as `<svg …/>`.
fn without_svgs(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(start) = rest.find("<svg") {
        out.push_str(&rest[..start]);
        out.push_str("<svg …/>");
        let end = rest[start..]
            .find("</svg>")
            .map_or(rest.len(), |e| start + e + 6);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

fn snapshot_sections(fixture: &str, s: &ExperimentSummary) {
    let (md, html) = reports(s);
    for (name, body) in sections(&md, "## ") {
        insta::assert_snapshot!(format!("md_{fixture}_{name}"), body);
    }
    let html = without_svgs(&html);
    let body = html.split("<body>").nth(1).unwrap_or(&html);
    for (name, section) in sections(&body.replace("<h2>", "\n<h2>"), "<h2>") {
        insta::assert_snapshot!(format!("html_{fixture}_{name}"), section);
    }
}

#[test]
fn every_section_of_the_reports() {
    snapshot_sections("sweep", &fixture::renderers());
    snapshot_sections("chance", &fixture::chance());
}

/// The section tables no fixture's report shows (a race's dropped trials, position bias),
/// as HTML writes their cells: a p-value in scientific notation, shares as percentages.
#[test]
fn the_race_and_position_tables() {
    use judgelab_core::metrics::position::PositionBias;
    use judgelab_core::race::RoundStanding;
    use judgelab_report::analysis::Analysis;
    use judgelab_report::table::{SectionTable, Style};

    let mut s = fixture::renderers();
    let id = s.trials[2].id;
    s.trials[2].dropped = Some(RoundStanding {
        trial_id: id,
        round: 2,
        n_items: 40,
        leader: false,
        value: Some(0.7),
        difference: Some(-0.25),
        std_error: Some(0.05),
        p_value: Some(3.2e-7),
        threshold: Some(0.05 / 3.0),
        dropped: true,
    });
    s.trials[0].metrics.position = Some(PositionBias {
        n_both: 80,
        consistency: Some(0.8125),
        n_verdicts: 160,
        first_preferred: Some(0.55),
    });
    let a = Analysis::new(&s, Quality::Accuracy);
    let text = |t: &SectionTable| {
        let mut out = format!(
            "{} | {}\n",
            t.subject,
            t.columns
                .iter()
                .map(|c| c.title.as_str())
                .collect::<Vec<_>>()
                .join(" | ")
        );
        for row in &t.rows {
            let cells: Vec<String> = row
                .cells
                .iter()
                .zip(&t.columns)
                .map(|(cell, c)| cell.text(c, Style::Html))
                .collect();
            out.push_str(&format!("{} | {}\n", row.name, cells.join(" | ")));
        }
        out
    };
    insta::assert_snapshot!("race_dropped", text(&SectionTable::dropped(&a)));
    insta::assert_snapshot!("position_bias", text(&SectionTable::position(&a)));
}
