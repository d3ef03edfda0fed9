//! `report.html`: one self-contained file (inline CSS and SVG charts, no scripts, nothing
//! fetched) that tells a reader which configuration to pick and why.

use std::fmt::Write;

use judgelab_core::pareto::FrontStatus;
use judgelab_core::results::comparison::Comparison;
use judgelab_core::Task;

use judgelab_core::sweep::Axis;

use judgelab_core::align::outcome::AlignOutcome;

use crate::analysis::Analysis;
use crate::comparison;
use crate::escape::escape;
use crate::findings::{Findings, Kind};
use crate::table::{Cell, Column, Output, ResultsTable, RowKind, SectionTable, Style, Unit};
use crate::ReportOptions;

/// The charts, as inline SVG, that the page embeds.
pub struct Figures {
    pub pareto_cost: String,
    pub pareto_latency: String,
    pub parameter: Option<String>,
    /// Each trial's agreement on each criterion, where trials rate criteria.
    pub criteria: Option<String>,
    /// Agreement against the flip rate from the reference trial, where one is named.
    pub drift: Option<String>,
    pub latency: String,
    pub confusion: String,
    /// The latest load ramp's latency and throughput charts, where there is one.
    pub load: Option<(String, String)>,
    /// A race's standings by round, where the experiment raced.
    pub race: Option<String>,
    /// An alignment's best dev score by generation, where the experiment is one.
    pub alignment: Option<String>,
    /// The reliability diagram and the coverage–agreement curves, where a trial's verdicts
    /// have confidences.
    pub trust: Option<(String, String)>,
}

const STYLE: &str = r#"
body { font-family: "DejaVu Sans", "Helvetica Neue", Arial, sans-serif; margin: 2rem auto; max-width: 1200px; padding: 0 1rem; color: #222; line-height: 1.45; }
h1 { margin-bottom: 0.2rem; } h2 { margin-top: 2.2rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; }
.meta { color: #555; }
.pick { background: #eef6ee; border-left: 5px solid #2e7d32; padding: 0.8rem 1.2rem; }
.pick li { margin: 0.3rem 0; }
table { border-collapse: collapse; font-size: 0.88rem; margin: 0.6rem 0; }
th, td { border-bottom: 1px solid #e2e2e2; padding: 0.3rem 0.55rem; text-align: right; white-space: nowrap; vertical-align: top; }
td small { color: #666; } .wide { overflow-x: auto; }
th { background: #f4f4f4; } td.l, th.l { text-align: left; }
tr.recommended td { background: #e3f1e3; font-weight: 600; } tr.baseline td { color: #666; font-style: italic; } tr.composed td { color: #7a3d64; }
.badge { display: inline-block; padding: 0 0.4rem; border-radius: 0.6rem; font-size: 0.75rem; }
.front { background: #0072b2; color: white; } .indistinguishable { background: #e69f00; color: black; } .dominated { background: #ddd; color: #444; }
figure { margin: 1rem 0; max-width: 900px; }
figure svg { display: block; width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.85rem; }
pre { background: #f6f6f6; padding: 0.8rem; overflow-x: auto; }
details { margin: 0.6rem 0; } .note { color: #555; font-size: 0.9rem; }
"#;

fn badge(status: FrontStatus) -> String {
    let text = match status {
        FrontStatus::Front => "front",
        FrontStatus::Indistinguishable => "≈ front",
        FrontStatus::Dominated => "dominated",
        FrontStatus::Unavailable => "—",
    };
    format!("<span class=\"badge {}\">{text}</span>", status.name())
}

pub fn render(
    a: &Analysis<'_>,
    table: &ResultsTable,
    findings: &Findings,
    figures: &Figures,
    options: &ReportOptions,
) -> String {
    let mut h = String::new();
    head(&mut h, a);
    if let Some(o) = &options.alignment {
        alignment(&mut h, a, o, figures);
    }
    pick(&mut h, a, findings, figures);
    confirmation(&mut h, a, findings, figures);
    trust(&mut h, a, findings, figures);
    trials(&mut h, a, table, findings);
    criteria(&mut h, findings, figures);
    drift(&mut h, a, findings, figures);
    wording(&mut h, findings);
    for c in &options.comparisons {
        compared(&mut h, c, a.summary.experiment.task_kind);
    }
    parameters(&mut h, a, figures);
    latency(&mut h, a, figures);
    under_load(&mut h, a, figures);
    confusion(&mut h, a, figures);
    position(&mut h, a);
    reading(&mut h, a);
    h
}

/// The page's head and the experiment's one-line summary.
fn head(h: &mut String, a: &Analysis<'_>) {
    let e = &a.summary.experiment;
    let _ = writeln!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"generator\" content=\"judgelab {}\">\n<meta name=\"judgelab-report-version\" content=\"1\">\n<title>Judgelab report: {}</title>\n<style>{STYLE}</style></head><body>",
        env!("CARGO_PKG_VERSION"),
        escape(&e.name)
    );
    let _ = writeln!(
        h,
        "<h1>Judgelab report: {}</h1>\n<p class=\"meta\">Dataset <b>{}</b> ({} task) · {} items judged by each of {} trials · {} repeat{} · few-shot pool of {} items kept apart · {}/{} calls stored · created {}</p>",
        escape(&e.name),
        escape(&e.dataset),
        e.task,
        e.n_items,
        a.summary.trials.len(),
        e.repeats,
        if e.repeats == 1 { "" } else { "s" },
        e.few_shot_pool.len(),
        e.n_stored,
        e.n_expected,
        escape(&e.created_at)
    );
}

/// The recommendation, the findings and both Pareto charts.
fn pick(h: &mut String, a: &Analysis<'_>, findings: &Findings, figures: &Figures) {
    let q = a.quality_title();
    h.push_str("<h2>Which configuration to pick</h2>\n");
    for f in findings.of(&[Kind::Labels]) {
        let _ = writeln!(h, "<p class=\"note\"><b>{}</b></p>", inline(&f.text));
    }
    h.push_str("<div class=\"pick\">");
    list(h, findings, &Kind::PICK);
    h.push_str("</div>\n");
    if findings.any(&[Kind::Humans]) {
        h.push_str("<h3>People and the judge</h3>\n<p class=\"note\">How much the people who labelled the dataset agree with each other (its own labels and each annotator of the labelling queue): the ceiling a judge is measured against.</p>\n");
        list(h, findings, &[Kind::Humans]);
    }
    if let Some(pick) = a.recommended {
        let p = &a.summary.trials[pick].params;
        let axes: Vec<String> = Axis::ALL
            .iter()
            .map(|axis| format!("{} <code>{}</code>", axis.title(), escape(&axis.label(p))))
            .collect();
        let _ = writeln!(
            h,
            "<p class=\"note\">Trial #{} in full: {}.</p>",
            a.summary.trials[pick].id,
            axes.join(", ")
        );
    }

    let _ = writeln!(
        h,
        "<h2>The trade-off</h2>\n<figure>{}<figcaption>Each point is a trial: {q} (with its 95% interval) against {}. Blue points form the Pareto front (no other trial is better on both axes); orange points are dominated but their intervals overlap the front's, so the data cannot say they are worse. Dashed lines are the baselines.</figcaption></figure>\n<figure>{}<figcaption>The same trials against {}.</figcaption></figure>",
        figures.pareto_cost,
        escape(&a.cost.title(a.task)),
        figures.pareto_latency,
        escape(&a.axis_title(a.latency).replace(" (ms)", ""))
    );
}

/// An alignment's search: the best dev score by generation, its candidates, the test
/// split's confirmation and the calls spent.
fn alignment(h: &mut String, a: &Analysis<'_>, o: &AlignOutcome, figures: &Figures) {
    let _ = writeln!(
        h,
        "<h2>Alignment</h2>\n<p>{}.</p>",
        escape(&crate::alignment::intro(o))
    );
    if let Some(svg) = &figures.alignment {
        let _ = writeln!(h, "<figure>{svg}<figcaption>After each generation, the best {} on the dev split (with its 95% interval) of the candidates so far that judged every dev item; the pick is the last point. Dev scores are what the search chose by, so they flatter the pick: the test split below is the honest figure.</figcaption></figure>", escape(o.metric.title(a.task)));
    }
    section_table(h, &crate::alignment::table(o, a.task));
    for line in crate::alignment::closing_lines(o) {
        let _ = writeln!(h, "<p>{}</p>", escape(&line));
    }
}

/// How far to trust the judges: each trusted trial's calibration and what it decides
/// alone at the experiment's target, with the reliability diagram and the curves.
fn trust(h: &mut String, a: &Analysis<'_>, findings: &Findings, figures: &Figures) {
    h.push_str("<h2>How far to trust it</h2>\n");
    let trusted = a.trusted();
    if trusted.is_empty() {
        h.push_str("<p>No trial's verdicts carry a confidence: an exact trial has the model's own probabilities, a local generation its tokens' log-probabilities, a remote judge its top logprobs where asked (<code>top_logprobs</code>), and any trial repeated with <code>repeats</code> the agreement of its repeats.</p>\n");
        return;
    }
    list(h, findings, &[Kind::Trust, Kind::Cascade]);
    section_table(h, &SectionTable::trust(a));
    let target = a.summary.experiment.parsed.trust.target;
    let _ = writeln!(h, "<p class=\"note\">Confidence is the model's probability of its verdict among the verdicts (exact trials, at temperature 1 whatever the trial samples with), the same read from a generation's top logprobs (a local judge's own, a remote judge's where asked with top_logprobs), or the share of an item's repeats that agree. ECE: the mean gap between confidence and the share right over ten equal-width bins, weighted by their verdicts; Brier: the mean squared gap per verdict; both with 95% bootstrap intervals over items, on the dev split. The threshold is chosen on the dev split by fixed-sequence testing so that, with probability at least {:.0}%, the verdicts it accepts agree with humans at least {:.0}% of the time ([trust] agreement and risk); the test split, where a trial judged it, says what it achieved.</p>", 100.0 * (1.0 - target.risk), 100.0 * target.agreement);
    if let Some((reliability, coverage)) = &figures.trust {
        let _ = writeln!(h, "<figure>{reliability}<figcaption>Each point is a bin of verdicts of similar confidence: its mean confidence against the share of its verdicts that agree with the human. Points below the diagonal are overconfident.</figcaption></figure>\n<figure>{coverage}<figcaption>Accept the verdicts at or above a confidence threshold and send the rest to humans: each line runs from the most confident verdicts alone (left) to every verdict (right). The dashed line is the target agreement.</figcaption></figure>");
    }
}

/// The results table with the columns the report shows, the baselines below it: a
/// composed row says what it is made of across the parameters' columns, a standing is a
/// badge.
fn results_table(h: &mut String, table: &ResultsTable) {
    let columns = table.shown(Output::Report);
    let left = |c: usize| {
        matches!(
            table.columns[c].unit,
            Unit::Param | Unit::Text | Unit::Role | Unit::Standing
        )
    };
    let params = columns
        .iter()
        .take_while(|&&c| table.columns[c].unit == Unit::Param)
        .count();
    h.push_str("<div class=\"wide\"><table><tr><th class=\"l\">trial</th>");
    for &c in &columns {
        let class = if left(c) { " class=\"l\"" } else { "" };
        let _ = write!(h, "<th{class}>{}</th>", escape(&table.columns[c].title));
    }
    h.push_str("</tr>\n");
    for row in table.rows.iter().chain(&table.baselines) {
        let class = match row.kind {
            RowKind::Trial if row.recommended => " class=\"recommended\"",
            RowKind::Trial => "",
            RowKind::Baseline => " class=\"baseline\"",
            RowKind::Cascade | RowKind::Panel => " class=\"composed\"",
        };
        let star = if row.best { " ★" } else { "" };
        let _ = write!(
            h,
            "<tr{class}><td class=\"l\">{}{star}</td>",
            escape(&row.name)
        );
        let mut rest = &columns[..];
        if let (Some(d), true) = (&row.description, params > 0) {
            let _ = write!(h, "<td class=\"l\" colspan=\"{params}\">{}</td>", escape(d));
            rest = &columns[params..];
        }
        for &c in rest {
            let cell = &row.cells[c];
            let class = if left(c) { " class=\"l\"" } else { "" };
            let text = match cell {
                Cell::Standing(Some(s)) => badge(*s),
                Cell::Standing(None) => "composed".into(),
                Cell::Text(_) | Cell::Param { .. } => {
                    escape(&cell.text(&table.columns[c], Style::Html))
                }
                _ => cell.text(&table.columns[c], Style::Html),
            };
            let _ = write!(h, "<td{class}>{text}</td>");
        }
        h.push_str("</tr>\n");
    }
}

/// Every trial with its intervals, and the baselines.
fn trials(h: &mut String, a: &Analysis<'_>, table: &ResultsTable, findings: &Findings) {
    let e = &a.summary.experiment;
    let q = a.quality_title();
    h.push_str("<h2>Trials</h2>\n");
    let _ = writeln!(
        h,
        "<p class=\"note\">Intervals are 95% bootstrap percentile intervals over items ({} resamples, seed {}). “vs best” is the paired difference in {q} from the best trial on the same items, with McNemar's exact test on which verdicts are right.</p>",
        a.summary.bootstrap.resamples,
        a.summary.bootstrap.seed
    );
    let parsed = &e.parsed;
    let how = |r: judgelab_core::experiment::Reproduces| {
        a.summary
            .trials
            .iter()
            .filter(|t| parsed.reproduces(&t.params) == r)
            .count()
    };
    let (exactly, nearly) = (
        how(judgelab_core::experiment::Reproduces::BitForBit),
        how(judgelab_core::experiment::Reproduces::UpToNearTies),
    );
    if exactly + nearly > 0 {
        let _ = writeln!(
            h,
            "<p class=\"note\">Reproducible: {exactly} local trial(s) bit for bit (seeded samples, and every call of a judge with <code>reproducible = true</code>, each decoded alone, whatever the batch or a resume); {nearly} up to near-ties (greedy generations and exact passes, decoded in batches, whose logits move by up to a few hundredths with the batch: two tokens that close may read otherwise after a resume or with another <code>parallel</code>).</p>"
        );
    }
    results_table(h, table);
    let _ = write!(
        h,
        "</table></div>\n<p class=\"note\">★ the best: {}. The highlighted row is the recommendation. Small print: the 95% interval.",
        escape(&a.ranking())
    );
    if !a.summary.cascades.is_empty() {
        h.push_str(" A cascade is not a trial: it is composed from two trials' stored verdicts, the cheap one's where its confidence reaches its selective threshold and the strong one's for the rest; its cost is the cheap trial's plus the escalated share of the strong one's, its latency a cheap request's plus a strong one's where escalated.");
    }
    if !a.summary.panels.is_empty() {
        h.push_str(" A panel is not a trial either: its members' stored verdicts on each item combined by its rule, with no new call; its cost is its members' sum, its latency per request the slowest member's.");
    }
    h.push_str("</p>\n");
    panels(h, findings);
}

/// A rubric's criteria: each trial's agreement on each (the table's criterion columns,
/// drawn), and the criterion weights learned from the item's label.
fn criteria(h: &mut String, findings: &Findings, figures: &Figures) {
    let Some(chart) = &figures.criteria else {
        return;
    };
    let _ = writeln!(h, "<h2>Criteria</h2>\n<figure>{chart}<figcaption>Each trial's agreement with the humans on each criterion it rates, against that criterion's own labels, with 95% intervals: a rubric (every criterion in one call) and a checklist (a call per criterion) compare criterion by criterion. A criterion whose values never vary has no rank correlation, and no point. <code>judgelab show --criterion NAME</code> reads the whole experiment on one.</figcaption></figure>");
    if findings.any(&[Kind::CriterionWeights]) {
        h.push_str("<h3>Criterion weights</h3>\n<p class=\"note\">How much each criterion's value says about the humans' overall label.</p>\n");
        list(h, findings, &[Kind::CriterionWeights]);
    }
    if findings.any(&[Kind::ItemWeights]) {
        h.push_str("<h3>Checklist items</h3>\n<p class=\"note\">A checklist's yes/no items, fitted the same way: which items carry information (an item that never varies carries none).</p>\n");
        list(h, findings, &[Kind::ItemWeights]);
    }
}

/// Each trial against the reference trial: the drift columns, drawn.
fn drift(h: &mut String, a: &Analysis<'_>, findings: &Findings, figures: &Figures) {
    let Some(chart) = &figures.drift else {
        return;
    };
    let reference = match a.summary.experiment.parsed.reference.describe() {
        named if named.is_empty() => "the reference's values".to_string(),
        named => named,
    };
    let _ = writeln!(h, "<h2>Drift from the reference</h2>\n<figure>{chart}<figcaption>Each trial's agreement with the humans (95% interval) against the share of its verdicts that differ from its reference trial's on the same calls (item, answer order, repeat): the trial with {} and its other parameters the same, drawn at 0. Agreement can stay where it is while many verdicts flip; the table's <code>flips</code> has each rate's interval and <code>KL</code> how far exact trials' beliefs moved. <code>judgelab compare EXP:A EXP:B</code> lists the calls that moved most.</figcaption></figure>", escape(&reference));
    list(h, findings, &[Kind::Drift]);
}

/// A section's table: its rows' names, then each cell as HTML writes it (an interval in
/// small print), text to the left.
pub(crate) fn section_table(h: &mut String, t: &SectionTable) {
    let left = |c: &Column| matches!(c.unit, Unit::Text | Unit::Role);
    let class = |c: &Column| if left(c) { " class=\"l\"" } else { "" };
    let _ = write!(h, "<table><tr><th class=\"l\">{}</th>", escape(&t.subject));
    for c in &t.columns {
        let _ = write!(h, "<th{}>{}</th>", class(c), escape(&c.title));
    }
    h.push_str("</tr>\n");
    for row in &t.rows {
        let _ = write!(h, "<tr><td class=\"l\">{}</td>", escape(&row.name));
        for (cell, c) in row.cells.iter().zip(&t.columns) {
            let text = cell.text(c, Style::Html);
            let text = match cell {
                Cell::Text(_) => escape(&text),
                _ => text,
            };
            let _ = write!(h, "<td{}>{text}</td>", class(c));
        }
        h.push_str("</tr>\n");
    }
    h.push_str("</table>\n");
}

/// Each paraphrase group: how often the wording alone changes a verdict.
fn wording(h: &mut String, findings: &Findings) {
    if !findings.any(&[Kind::Wording]) {
        return;
    }
    h.push_str("<h2>Wording</h2>\n<p class=\"note\">Templates that mean the same, worded otherwise (<code>[robustness]</code>): the share of items whose verdict no rewording changes, on the same calls (item, answer order, repeat), with its 95% bootstrap interval over items; a verdict that changes with the wording alone is the template's, not the answers'.</p>\n");
    list(h, findings, &[Kind::Wording]);
}

/// A finding's sentence, escaped, what it marks as code (`` `…` ``) in `<code>`.
fn inline(text: &str) -> String {
    let mut out = String::new();
    for (i, part) in escape(text).split('`').enumerate() {
        match i % 2 {
            1 => {
                let _ = write!(out, "<code>{part}</code>");
            }
            _ => out.push_str(part),
        }
    }
    out
}

/// The findings of `kinds` as a list, a panel's name in bold; nothing without one.
fn list(h: &mut String, findings: &Findings, kinds: &[Kind]) {
    if !findings.any(kinds) {
        return;
    }
    h.push_str("<ul>\n");
    for f in findings.of(kinds) {
        let line = match f.kind {
            Kind::Panel => format!(
                "<b>{}</b>: {}.",
                escape(&f.subject.label()),
                escape(&f.text)
            ),
            _ => escape(&f.line()),
        };
        let _ = writeln!(h, "<li>{line}</li>");
    }
    h.push_str("</ul>\n");
}

/// Each panel in a sentence: its rule, its score against the best trial, how much its
/// members agree, and what each adds.
fn panels(h: &mut String, findings: &Findings) {
    if !findings.any(&[Kind::Panel]) {
        return;
    }
    h.push_str("<h3>Panels</h3>\n");
    list(h, findings, &[Kind::Panel]);
    h.push_str("<p class=\"note\">Members' agreement is Krippendorff's alpha over the members' verdicts (nominal for choices, ordinal for ratings), with a 95% bootstrap interval over items; “without #n” is the panel's metric with that member left out, and in brackets the panel's paired difference from it.</p>\n");
}

/// Whether the pick was confirmed on items that did not choose it: each kept trial's dev
/// and test scores side by side, and a race's drops.
fn confirmation(h: &mut String, a: &Analysis<'_>, findings: &Findings, figures: &Figures) {
    let e = &a.summary.experiment;
    h.push_str("<h2>Is the pick confirmed?</h2>\n");
    for f in findings.of(&[Kind::Confirmation]) {
        let _ = writeln!(h, "<p>{}</p>", inline(&f.text));
    }
    if e.selected && e.n_test_items > 0 {
        section_table(h, &SectionTable::confirmation(a));
    }
    let Some(race) = findings.of(&[Kind::Race]).next() else {
        return;
    };
    let _ = writeln!(h, "<p>{}</p>", inline(&race.text));
    let s = &e.parsed.selection;
    if let Some(svg) = &figures.race {
        let _ = writeln!(h, "<figure>{svg}<figcaption>Each line is a trial's {} minus the round's leader's on the items judged so far, with a 95% interval from the paired jackknife error (the test that drops a trial is stricter: Holm's level over that round's comparisons). A line ends at the round that dropped its trial.</figcaption></figure>", escape(s.metric.title(a.task)));
    }
    let dropped = SectionTable::dropped(a);
    if !dropped.rows.is_empty() {
        section_table(h, &dropped);
    }
}

/// The metric against the swept parameter that matters most.
fn parameters(h: &mut String, a: &Analysis<'_>, figures: &Figures) {
    let q = a.quality_title();
    if let Some(svg) = &figures.parameter {
        let _ = writeln!(h, "<h2>How the parameters matter</h2>\n<figure>{svg}<figcaption>{q} of each trial (95% intervals) against one swept parameter, one line per setting of the others.</figcaption></figure>");
    }
}

/// Latency: the CDF chart and each trial's percentiles and tokens.
fn latency(h: &mut String, a: &Analysis<'_>, figures: &Figures) {
    let load = a.summary.latency_load();
    let _ = writeln!(h, "<h2>Latency</h2>\n<figure>{}<figcaption>Share of requests answered within a given time, per trial, {load}. A local judge batches a sweep's calls, so a local trial's figures come from a seeded sample of its calls made again alone, one request at a time with nothing cached (its first is a warm-up, left out); a remote trial's come from its own calls, with up to its endpoint's <code>concurrency</code> in flight. The tail (p95, p99) is what users feel, and the least stable figure: each has its 95% bootstrap interval over calls, and p99 needs at least 100 calls.</figcaption></figure>", figures.latency);
    section_table(h, &SectionTable::latency(a));
}

/// The latest load ramp (`judgelab load`): its charts, each level's figures, the knee and
/// the cold start.
fn under_load(h: &mut String, a: &Analysis<'_>, figures: &Figures) {
    let (Some(r), Some((latency, throughput))) = (a.summary.load_ramps.last(), &figures.load)
    else {
        return;
    };
    let label = a
        .summary
        .trial_index(r.trial_id)
        .map_or_else(|_| format!("#{}", r.trial_id), |i| a.labels[i].clone());
    let _ = writeln!(
        h,
        "<h2>Under load</h2>\n<p>Trial {} ramped through {} levels of requests in flight ({} timed requests each, after a warm-up left out; ramp {} of {}). {}. The requests replay the trial's own calls, none answered from a prompt cache where the judge can be asked (a llama.cpp server, the local judge).</p>",
        escape(&label),
        r.ramp.levels.len(),
        r.requests,
        r.id,
        escape(&r.created_at),
        escape(&match r.ramp.knee {
            Some(k) => format!("Knee at {k}: {}", r.ramp.knee_reason),
            None => format!("No knee: {}", r.ramp.knee_reason),
        })
    );
    let _ = writeln!(h, "<figure>{latency}<figcaption>Time to first token and end-to-end latency per request at each level, with 95% bootstrap intervals over requests; p99 needs 100 requests.</figcaption></figure>\n<figure>{throughput}<figcaption>Verdicts per second at each level; the knee is the lowest level within 10% of the best.</figcaption></figure>");
    if let Some(table) = SectionTable::load(a) {
        section_table(h, &table);
    }
    let w = &r.ramp.warmup;
    if let (Some(ttft), Some(latency)) = (w.ttft_ms, w.latency_ms) {
        let _ = writeln!(
            h,
            "<p class=\"note\">Cold start: the ramp's first request took {latency:.0} ms (TTFT {ttft:.0} ms). Requests were drawn from {} distinct prompts of the trial, and none was answered from a prompt cache: a remote ramp's requests go out uncached, a local one's repeats within a level, so each pays its whole prefill.</p>",
            r.ramp.distinct_prompts
        );
    }
}

/// Confusion matrices: the recommended trial's chart, every trial's table.
fn confusion(h: &mut String, a: &Analysis<'_>, figures: &Figures) {
    let _ = writeln!(h, "<h2>Where the recommended judge goes wrong</h2>\n<figure>{}<figcaption>Rows: the human label; columns: the judge's verdict, with unparsable outputs in a column of their own.</figcaption></figure>", figures.confusion);
    h.push_str("<details><summary>Confusion matrices of every trial</summary>\n");
    for (i, label) in a.labels.iter().enumerate() {
        let _ = write!(h, "<p><b>{}</b></p>", escape(label));
        section_table(h, &SectionTable::confusion(a, i));
    }
    h.push_str("</details>\n");
}

/// Position bias, where answers were shown in both orders, and every metric of every trial.
fn position(h: &mut String, a: &Analysis<'_>) {
    if a.has_orders() {
        h.push_str("<h2>Position bias</h2>\n<p class=\"note\">Consistency: items judged in both orders whose two verdicts agree. First preferred: verdicts that chose the answer shown first (50% is unbiased; ties choose neither).</p>");
        section_table(h, &SectionTable::position(a));
    }
    h.push_str("<details><summary>Every agreement metric, with 95% intervals</summary><div class=\"wide\">");
    section_table(h, &SectionTable::every_metric(a));
    h.push_str("</div></details>\n");
}

/// How to read the numbers, and the experiment file that reproduces the run.
fn reading(h: &mut String, a: &Analysis<'_>) {
    let e = &a.summary.experiment;
    h.push_str("<h2>How to read this</h2><ul class=\"note\">\n<li><b>Kappa</b> is agreement corrected for chance: 0 is what a judge guessing with the same label frequencies gets, 1 is perfect. Accuracy, and the kappa of pairwise data, count an unparsable output as wrong.</li>\n<li>A <b>95% interval</b> comes from re-drawing the judged items with replacement; two trials whose intervals overlap heavily are not shown to differ. The paired “vs best” interval is sharper, because it compares the same items.</li>\n<li>The <b>baselines</b> need no model: always the most common label, and (pairwise) “the longer answer wins”. A judge that does not beat them measures length, not quality.</li>\n</ul>\n");

    let _ = writeln!(
        h,
        "<h2>Reproduce this run</h2>\n<p>Save this as <code>experiment.toml</code>, then run <code>judgelab run experiment.toml</code> and <code>judgelab report {} --out report</code>. Relative paths in it are resolved from the folder of the file.</p>\n<pre>{}</pre>",
        escape(&e.name),
        escape(&e.spec)
    );
    h.push_str("<p class=\"note\">Files beside this report: trials.csv (one row per trial), verdicts.csv (one row per call), report.md, and each chart as SVG and PNG.</p>\n</body></html>\n");
}

/// The report's section on one comparison, in HTML.
fn compared(h: &mut String, c: &Comparison, task: Task) {
    let (a, b) = (comparison::side(&c.first), comparison::side(&c.second));
    let d = &c.drift;
    let _ = writeln!(
        h,
        "<h2>Compared: {} and {}</h2>\n<p class=\"note\">{}: {}<br>{}: {}</p>",
        escape(&a),
        escape(&b),
        escape(&a),
        escape(&c.first.params),
        escape(&b),
        escape(&c.second.params)
    );
    h.push_str("<ul>\n");
    let mut sentences = vec![comparison::calls(d, &a, &b), comparison::flips(d)];
    sentences.extend(comparison::paired(c, task));
    sentences.push(comparison::divergence(d));
    for s in sentences {
        let _ = writeln!(h, "<li>{}</li>", escape(&s));
    }
    h.push_str("</ul>\n");
    if let Some(flips) = SectionTable::flips(d) {
        let _ = writeln!(
            h,
            "<p class=\"note\">Flip matrix: rows {}, columns {}</p>",
            escape(&a),
            escape(&b)
        );
        section_table(h, &flips);
    }
    let by = comparison::by_human(d);
    if !by.is_empty() {
        h.push_str("<ul class=\"note\">\n");
        for line in by {
            let _ = writeln!(h, "<li>{}</li>", escape(&line));
        }
        h.push_str("</ul>\n");
    }
    if let Some(moved) = SectionTable::moved(d, &a, &b) {
        h.push_str("<p class=\"note\">The calls whose beliefs moved most (Jensen–Shannon)</p>\n");
        section_table(h, &moved);
    }
}
