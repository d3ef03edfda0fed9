//! `report.md`: the same reading as the HTML report, for a README, a pull request or a
//! paper draft; charts are linked as the PNG files beside it.

use std::fmt::Write;

use judgelab_core::results::comparison::Comparison;
use judgelab_core::Task;

use judgelab_core::align::outcome::AlignOutcome;

use crate::analysis::Analysis;
use crate::comparison;
use crate::findings::{Findings, Kind};
use crate::table::{Output, ResultsTable, Row, RowKind, SectionTable, Style};
use crate::ReportOptions;

/// `charts` lists (file name, caption) of the PNGs written beside the report; each of the
/// `options`' comparisons is a section of its own, as an alignment's outcome is.
pub fn render(
    a: &Analysis<'_>,
    table: &ResultsTable,
    findings: &Findings,
    charts: &[(String, String)],
    options: &ReportOptions,
) -> String {
    let mut m = String::new();
    head(&mut m, a);
    if let Some(o) = &options.alignment {
        alignment(&mut m, a, o);
    }
    pick(&mut m, findings);
    confirmation(&mut m, a, findings);
    trust(&mut m, findings);
    m.push_str("\n## Trials\n\n");
    let _ = writeln!(
        m,
        "★ marks the best trial: {}. “(pick)” marks the recommendation.\n",
        a.ranking()
    );
    trials(&mut m, table);
    panels(&mut m, findings);
    baselines(&mut m, a, table);
    weights(&mut m, findings);
    drift(&mut m, a, findings);
    list(
        &mut m,
        findings,
        Kind::Wording,
        "\n## Wording\n\nTemplates that mean the same, worded otherwise (`[robustness]`): the items whose verdict no rewording changes, on the same calls:\n\n",
    );
    for c in &options.comparisons {
        compared(&mut m, c, a.summary.experiment.task_kind);
    }
    m.push_str("\n## Charts\n\n");
    for (file, caption) in charts {
        let _ = writeln!(m, "![{caption}]({file})\n");
    }
    let e = &a.summary.experiment;
    let _ = writeln!(
        m,
        "## Reproduce this run\n\n`judgelab run experiment.toml`, then `judgelab report {} --out report`, with this `experiment.toml`:\n\n```toml\n{}\n```",
        e.name,
        e.spec.trim_end()
    );
    m
}

/// The title and what was judged.
fn head(m: &mut String, a: &Analysis<'_>) {
    let e = &a.summary.experiment;
    let _ = writeln!(m, "# Judgelab report: {}\n", e.name);
    let _ = writeln!(
        m,
        "Dataset **{}** ({} task), {} items judged by each of {} trials, {} repeat(s); {}/{} calls stored. Intervals are 95% bootstrap percentile intervals over items ({} resamples, seed {}).\n",
        e.dataset,
        e.task,
        e.n_items,
        a.summary.trials.len(),
        e.repeats,
        e.n_stored,
        e.n_expected,
        a.summary.bootstrap.resamples,
        a.summary.bootstrap.seed
    );
}

/// The recommendation and its caveats, and the human ceiling.
fn pick(m: &mut String, findings: &Findings) {
    m.push_str("## Which configuration to pick\n\n");
    for f in findings.of(&[Kind::Labels]) {
        let _ = writeln!(m, "**{}**\n", f.text);
    }
    for f in findings.of(&Kind::PICK) {
        let _ = writeln!(m, "- {}", f.line());
    }
    list(
        m,
        findings,
        Kind::Humans,
        "\nPeople and the judge (the human ceiling):\n\n",
    );
}

/// The findings of `kind`, a bullet each, after `intro`; nothing without one.
fn list(m: &mut String, findings: &Findings, kind: Kind, intro: &str) {
    if !findings.any(&[kind]) {
        return;
    }
    m.push_str(intro);
    for f in findings.of(&[kind]) {
        let _ = writeln!(m, "- {}", f.line());
    }
}

/// Whether a test split confirmed the pick, the kept trials' dev and test scores, and
/// what a race dropped.
fn confirmation(m: &mut String, a: &Analysis<'_>, findings: &Findings) {
    m.push_str("\n## Is the pick confirmed?\n\n");
    for f in findings.of(&[Kind::Confirmation]) {
        let _ = writeln!(m, "{}\n", f.text);
    }
    let e = &a.summary.experiment;
    if e.selected && e.n_test_items > 0 {
        section_table(m, &SectionTable::confirmation(a));
    }
    for f in findings.of(&[Kind::Race]) {
        let _ = writeln!(m, "\n{}", f.text);
    }
}

/// An alignment's search: its candidates, the test split's confirmation and the calls
/// spent (the chart of the best dev score by generation is among the charts).
fn alignment(m: &mut String, a: &Analysis<'_>, o: &AlignOutcome) {
    let _ = writeln!(m, "\n## Alignment\n\n{}.\n", crate::alignment::intro(o));
    section_table(m, &crate::alignment::table(o, a.task));
    m.push('\n');
    for line in crate::alignment::closing_lines(o) {
        let _ = writeln!(m, "{line}\n");
    }
}

/// Each trusted trial's calibration and what it decides alone, and the cascades.
fn trust(m: &mut String, findings: &Findings) {
    let kinds = [Kind::Trust, Kind::Cascade];
    if !findings.any(&kinds) {
        return;
    }
    m.push_str("\n## How far to trust it\n\n");
    for f in findings.of(&kinds) {
        let _ = writeln!(m, "- {}", f.line());
    }
}

/// Each panel in a sentence.
fn panels(m: &mut String, findings: &Findings) {
    list(
        m,
        findings,
        Kind::Panel,
        "\nPanels (composed from the members' stored verdicts, no new call; cost: the members' sum; latency: the slowest member's):\n\n",
    );
}

/// Each trial against its reference trial, in a sentence.
fn drift(m: &mut String, a: &Analysis<'_>, findings: &Findings) {
    let reference = a.summary.experiment.parsed.reference.describe();
    let named = if reference.is_empty() {
        String::new()
    } else {
        format!(" ({reference})")
    };
    list(
        m,
        findings,
        Kind::Drift,
        &format!("\n## Drift from the reference\n\nEach trial against its reference{named}, on the same calls:\n\n"),
    );
}

/// The criterion weights learned from the item's label, per trial that rates criteria,
/// then a checklist's items'.
fn weights(m: &mut String, findings: &Findings) {
    list(
        m,
        findings,
        Kind::CriterionWeights,
        "\n## Criterion weights\n\nHow much each criterion's value says about the humans' overall label:\n\n",
    );
    list(
        m,
        findings,
        Kind::ItemWeights,
        "\nA checklist's yes/no items, fitted the same way: which items carry information (an item that never varies carries none):\n\n",
    );
}

/// The baselines' rows of the table, in the report's metric and exact agreement.
fn baselines(m: &mut String, a: &Analysis<'_>, table: &ResultsTable) {
    let q = a.quality_title();
    m.push_str("\nBaselines (over the same items):\n\n");
    let (quality, exact) = (table.column(a.quality.name()), table.exact_agreement());
    for b in &table.baselines {
        let mut line = format!("- {}: {q} {}", b.label, text(table, b, quality));
        if let Some(c) = exact.filter(|&c| Some(c) != quality) {
            let title = &table.columns[c].title;
            line.push_str(&format!(", {title} {}", text(table, b, Some(c))));
        }
        let _ = writeln!(m, "{line}");
    }
}

/// A section's table: its rows' names, then each cell as the report writes it.
pub(crate) fn section_table(m: &mut String, t: &SectionTable) {
    let mut header = vec![t.subject.clone()];
    header.extend(t.columns.iter().map(|c| c.title.clone()));
    let _ = writeln!(m, "| {} |", header.join(" | "));
    let _ = writeln!(m, "|{}", "---|".repeat(header.len()));
    for row in &t.rows {
        let mut cells = vec![row.name.clone()];
        cells.extend(
            row.cells
                .iter()
                .zip(&t.columns)
                .map(|(cell, c)| cell.text(c, Style::Report)),
        );
        let _ = writeln!(m, "| {} |", cells.join(" | "));
    }
}

/// The results table's rows with the columns the report shows: ★ on the best trial,
/// "(pick)" on the recommendation, each composed row marked with its kind.
fn trials(m: &mut String, table: &ResultsTable) {
    let columns = table.shown(Output::Report);
    let mut header = vec!["trial".to_string()];
    header.extend(columns.iter().map(|&c| table.columns[c].title.clone()));
    let _ = writeln!(m, "| {} |", header.join(" | "));
    let _ = writeln!(m, "|{}", "---|".repeat(header.len()));
    for row in &table.rows {
        let mut name = row.name.clone();
        if row.best {
            name.push_str(" ★");
        }
        if row.recommended {
            name.push_str(" (pick)");
        }
        if row.kind != RowKind::Trial {
            name.push_str(&format!(" ({})", row.kind.name()));
        }
        let mut cells = vec![name];
        cells.extend(columns.iter().map(|&c| text(table, row, Some(c))));
        let _ = writeln!(m, "| {} |", cells.join(" | "));
    }
}

/// A row's cell in column `c` as the report writes it; `—` without the column.
fn text(table: &ResultsTable, row: &Row, c: Option<usize>) -> String {
    c.map_or("—".into(), |c| {
        row.cells[c].text(&table.columns[c], Style::Report)
    })
}

/// The report's section on one comparison, in Markdown.
fn compared(m: &mut String, c: &Comparison, task: Task) {
    let (a, b) = (comparison::side(&c.first), comparison::side(&c.second));
    let d = &c.drift;
    let _ = writeln!(
        m,
        "\n## Compared: {a} and {b}\n\n`{a}`: {}  \n`{b}`: {}\n",
        c.first.params, c.second.params
    );
    let mut sentences = vec![comparison::calls(d, &a, &b), comparison::flips(d)];
    sentences.extend(
        comparison::by_human(d)
            .into_iter()
            .map(|l| format!("  - {l}")),
    );
    sentences.extend(comparison::paired(c, task));
    sentences.push(comparison::divergence(d));
    for s in sentences {
        if s.starts_with("  - ") {
            let _ = writeln!(m, "{s}");
        } else {
            let _ = writeln!(m, "- {s}");
        }
    }
    if let Some(flips) = SectionTable::flips(d) {
        let _ = writeln!(m, "\nFlip matrix (rows {a}, columns {b}):\n");
        section_table(m, &flips);
    }
    if let Some(moved) = SectionTable::moved(d, &a, &b) {
        m.push_str("\nThe calls whose beliefs moved most:\n\n");
        section_table(m, &moved);
    }
}
