//! An alignment's outcome (`judgelab align`) in words and in the report: each candidate's
//! row (how it was made, its dev score on the items it judged, its calls, whether a race
//! dropped it or its reply was rejected), the best with its dev score naive and corrected
//! for the choice, the test split's confirmation, and the calls spent against what scoring
//! every candidate on the whole dev split would have taken; the terminal's text ([`text`])
//! and the report's "Alignment" section's parts ([`intro`], [`table`], [`closing_lines`],
//! and [`chart`]: the best dev score by generation).

use std::fmt::Write;

use judgelab_core::align::outcome::{AlignOutcome, Scored};
use judgelab_core::align::plan::Plan;
use judgelab_core::align::Move;
use judgelab_core::Task;

use crate::analysis::estimate_text;
use crate::charts::{LineChart, LinePoint, Series};
use crate::table::column;
use crate::table::{Cell, SectionRow, SectionTable, Unit};

/// The outcome as the terminal shows it.
pub fn text(o: &AlignOutcome) -> String {
    let metric = o.metric;
    let mut out = format!("{}\n", intro(o));
    let _ = writeln!(
        out,
        "{:<5} {:<6} {:<4} {:<15} {:>9}  {:<24} {:>6}  {}",
        "cand",
        "parent",
        "gen",
        "move",
        "dev items",
        metric.name(),
        "calls",
        ""
    );
    for c in &o.candidates {
        out.push_str(&row(o, c));
    }
    out.push_str(&closing(o));
    out
}

/// What was aligned, and how many candidates were scored and rejected.
pub fn intro(o: &AlignOutcome) -> String {
    let scored = o
        .candidates
        .iter()
        .filter(|c| c.candidate.trial_id.is_some());
    let rewrites = scored
        .clone()
        .filter(|c| c.candidate.kind == Move::Rewrite)
        .count();
    let rejected = o
        .candidates
        .iter()
        .filter(|c| c.candidate.rejected.is_some())
        .count();
    format!(
        "alignment {:?} of trial #{} of {:?}: {}, {} of them a rewrite; {}",
        o.alignment,
        o.trial,
        o.source,
        counted(scored.count(), "candidate scored", "candidates scored"),
        rewrites,
        counted(rejected, "reply rejected", "replies rejected"),
    )
}

/// The best, the test split's confirmation and the calls spent, a line each.
pub fn closing_lines(o: &AlignOutcome) -> Vec<String> {
    closing(o).lines().map(str::to_string).collect()
}

/// The best, the test split's confirmation and the calls spent.
fn closing(o: &AlignOutcome) -> String {
    let metric = o.metric;
    let mut out = String::new();
    let best = &o.candidates[o.best as usize];
    let _ = writeln!(
        out,
        "best: candidate {} ({}): dev {} {}; corrected for the choice among those that judged every dev item: {}",
        o.best,
        made_by(o, best),
        metric.name(),
        estimate_text(o.dev_naive),
        o.dev_corrected.map_or("—".into(), estimate_text),
    );
    match &o.confirmation {
        Some(c) => {
            let _ = writeln!(
                out,
                "test ({} items): start {}, best {}; difference {} (paired), McNemar p = {:.3}: {}",
                o.test_items.len(),
                estimate_text(c.start.quality.get(metric)),
                estimate_text(c.best.quality.get(metric)),
                estimate_text(c.difference.difference),
                c.difference.mcnemar_p,
                c.verdict,
            );
        }
        None => {
            let _ = writeln!(out, "test: not judged (the search stopped first)");
        }
    }
    out.push_str(&spending(o));
    if let Some(why) = &o.stopped {
        let _ = writeln!(out, "stopped early: {why}");
    }
    out
}

/// The calls spent (and dollars, where priced), and how far the candidates not picked
/// got on the dev split.
fn spending(o: &AlignOutcome) -> String {
    let mut out = String::new();
    let budget = o
        .plan
        .budget
        .calls
        .map_or(String::new(), |b| format!(" of a budget of {b}"));
    let test: u64 = o.candidates.iter().map(|c| c.test_calls).sum();
    let proposer: u32 = o
        .candidates
        .iter()
        .filter_map(|c| c.candidate.proposal.as_ref())
        .map(|p| p.sends)
        .sum();
    let _ = writeln!(
        out,
        "calls: {} spent{budget} ({} on the dev split, {test} on the test split, {proposer} by the proposer); scoring every candidate on the whole dev split would have taken {} there",
        o.spent_calls, o.dev_calls, o.full_dev_calls
    );
    if let Some(usd) = o.spent_usd {
        let judge = o.spent_calls - u64::from(proposer);
        let most = o
            .plan
            .usd_at_most(judge, u64::from(proposer))
            .unwrap_or(0.0);
        let budget = o
            .plan
            .budget
            .usd
            .map_or(String::new(), |b| format!(" of a budget of ${b}"));
        let _ = writeln!(
            out,
            "dollars: ${usd:.4} spent{budget}, as the servers' usage priced the calls; counted at their most, as the budget counts them: ${most:.4}"
        );
    }
    let losers: Vec<&Scored> = o
        .candidates
        .iter()
        .filter(|c| c.candidate.trial_id.is_some() && c.candidate.id != o.start)
        .filter(|c| c.candidate.id != o.best)
        .collect();
    if !losers.is_empty() {
        let judged: usize = losers.iter().map(|c| c.dev_items).sum();
        let dropped = losers.iter().filter(|c| c.dropped_after.is_some()).count();
        let _ = writeln!(
            out,
            "the {} not picked judged {:.1} of the {} dev items on average ({dropped} dropped by a race before the whole split)",
            counted(losers.len(), "candidate", "candidates"),
            judged as f64 / losers.len() as f64,
            o.dev_items.len(),
        );
    }
    out
}

/// `1 reply rejected`, `2 replies rejected`.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Where a candidate ended: rejected, dropped by a race, the best, or none of these.
fn status(o: &AlignOutcome, c: &Scored) -> String {
    let k = &c.candidate;
    match (&k.rejected, c.dropped_after) {
        (Some(why), _) => format!("rejected: {why}"),
        (None, Some(n)) => format!("dropped after {n} items"),
        (None, None) if k.id == o.best => "best".into(),
        _ => String::new(),
    }
}

/// How a candidate was made: its move, or for a sampling move what it changed
/// ("temperature 0.5", "top_p 0.9").
fn made_by(o: &AlignOutcome, c: &Scored) -> String {
    let k = &c.candidate;
    let parent = k
        .parent
        .and_then(|p| o.candidates.get(p as usize))
        .and_then(|p| p.params.as_ref());
    match (k.kind, &c.params, parent) {
        (Move::Sampling, Some(p), Some(q)) if p.temperature != q.temperature => {
            format!("temperature {}", p.temperature)
        }
        (Move::Sampling, Some(p), Some(_)) => format!("top_p {}", p.top_p),
        (kind, _, _) => kind.name().into(),
    }
}

/// One candidate's row.
fn row(o: &AlignOutcome, c: &Scored) -> String {
    let k = &c.candidate;
    let status = status(o, c);
    let score = c
        .dev
        .as_ref()
        .map_or("—".into(), |d| estimate_text(d.quality.get(o.metric)));
    format!(
        "{:<5} {:<6} {:<4} {:<15} {:>9}  {:<24} {:>6}  {}\n",
        k.id,
        k.parent.map_or("—".into(), |p| p.to_string()),
        k.generation,
        made_by(o, c),
        if k.trial_id.is_some() {
            c.dev_items.to_string()
        } else {
            "—".into()
        },
        score,
        c.calls,
        status
    )
}

/// A search's plan in words: the most each part spends, and the most in all (in dollars
/// too, where calls have a price).
pub fn plan_text(p: &Plan) -> String {
    let budget = match (p.budget.calls, p.budget.usd) {
        (Some(b), Some(u)) => format!("a budget of {b} calls and ${u}"),
        (Some(b), None) => format!("a budget of {b} calls"),
        (None, Some(u)) => format!("a budget of ${u}"),
        (None, None) => "no budget of calls".into(),
    };
    let mut out = format!(
        "plan: {} generation(s) within {budget}: the start {} calls, each generation up to {} judge calls and {} proposer calls, the confirmation on the test split up to {}: at most {} calls",
        p.generations,
        p.start_calls,
        p.generation_calls,
        p.generation_proposer_calls,
        p.confirmation_calls,
        p.max_calls
    );
    if let Some(usd) = p.max_usd {
        let each = |what: &str, usd: Option<f64>, cap: Option<u64>| {
            usd.zip(cap).map(|(usd, cap)| {
                format!("a {what} call at most ${usd:.6} (prompts of up to {cap} tokens)")
            })
        };
        let calls: Vec<String> = [
            each("judge", p.usd_per_call, p.prompt_cap),
            each("proposer", p.usd_per_proposer_call, p.proposer_prompt_cap),
        ]
        .into_iter()
        .flatten()
        .collect();
        let _ = write!(out, ", ${usd:.4} ({})", calls.join(", "));
    }
    out
}

/// The candidates as the report's table has them.
pub fn table(o: &AlignOutcome, task: Task) -> SectionTable {
    let text = |s: String| Cell::Text(s);
    SectionTable {
        subject: "candidate".into(),
        columns: vec![
            column("parent", "parent".into(), Unit::Text, 0),
            column("generation", "generation".into(), Unit::Text, 0),
            column("move", "move".into(), Unit::Text, 0),
            column("dev_items", "dev items".into(), Unit::Count, 0),
            column(
                "dev",
                format!("dev {}", o.metric.title(task)),
                Unit::Estimate,
                3,
            ),
            column("calls", "calls".into(), Unit::Count, 0),
            column("status", "status".into(), Unit::Text, 0),
        ],
        rows: o
            .candidates
            .iter()
            .map(|c| {
                let k = &c.candidate;
                let judged = k.trial_id.is_some();
                SectionRow {
                    name: k.id.to_string(),
                    cells: vec![
                        text(k.parent.map_or("—".into(), |p| p.to_string())),
                        text(k.generation.to_string()),
                        text(made_by(o, c)),
                        Cell::Count(judged.then_some(c.dev_items as u64)),
                        c.dev
                            .as_ref()
                            .map_or(Cell::Blank, |d| Cell::Estimate(d.quality.get(o.metric))),
                        Cell::Count(Some(c.calls)),
                        text(status(o, c)),
                    ],
                }
            })
            .collect(),
    }
}

/// The best dev score by generation: after each, the best of the candidates so far that
/// judged the whole dev split (a race's losers judged less), with its interval; none where
/// no candidate judged it all.
pub fn chart(o: &AlignOutcome, task: Task) -> Option<LineChart> {
    let n_dev = o.dev_items.len();
    let last = o.candidates.iter().map(|c| c.candidate.generation).max()?;
    let complete = |c: &&Scored| {
        c.candidate.rejected.is_none() && c.dropped_after.is_none() && c.dev_items == n_dev
    };
    let points: Vec<LinePoint> = (0..=last)
        .filter_map(|g| {
            let best = o
                .candidates
                .iter()
                .filter(complete)
                .filter(|c| c.candidate.generation <= g)
                .filter_map(|c| c.dev.as_ref().map(|d| d.quality.get(o.metric)))
                .filter_map(|e| Some((e.value?, e.ci)))
                .max_by(|a, b| a.0.total_cmp(&b.0))?;
            Some(LinePoint {
                x: f64::from(g),
                y: best.0,
                ci: best.1,
            })
        })
        .collect();
    if points.is_empty() {
        return None;
    }
    let title = o.metric.title(task);
    Some(LineChart {
        title: format!("alignment: the best dev {title} by generation"),
        x_label: "generation".into(),
        y_label: format!("dev {title}"),
        x_ticks: Some(
            (0..=last)
                .map(|g| {
                    if g == 0 {
                        "start".into()
                    } else {
                        g.to_string()
                    }
                })
                .collect(),
        ),
        series: vec![Series {
            name: "the best so far".into(),
            points,
        }],
        baselines: Vec::new(),
        reference_kind: "reference".into(),
    })
}
