//! An alignment's outcome in words (`judgelab align`'s text): each candidate's row (how it
//! was made, its dev score on the items it judged, its calls, whether a race dropped it or
//! its reply was rejected), the best with its dev score naive and corrected for the
//! choice, the test split's confirmation, and the calls spent.

use std::fmt::Write;

use judgelab_core::align::outcome::{AlignOutcome, Scored};
use judgelab_core::align::plan::Plan;

use crate::analysis::estimate_text;

/// The outcome as the terminal shows it.
pub fn text(o: &AlignOutcome) -> String {
    let metric = o.metric;
    let scored = o
        .candidates
        .iter()
        .filter(|c| c.candidate.trial_id.is_some());
    let rewrites = scored
        .clone()
        .filter(|c| c.candidate.kind == judgelab_core::align::Move::Rewrite)
        .count();
    let rejected = o
        .candidates
        .iter()
        .filter(|c| c.candidate.rejected.is_some())
        .count();
    let mut out = format!(
        "alignment {:?} of trial #{} of {:?}: {}, {} of them a rewrite; {}\n",
        o.alignment,
        o.trial,
        o.source,
        counted(scored.count(), "candidate scored", "candidates scored"),
        rewrites,
        counted(rejected, "reply rejected", "replies rejected"),
    );
    let _ = writeln!(
        out,
        "{:<5} {:<6} {:<4} {:<9} {:>9}  {:<24} {:>6}  {}",
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

/// The best, the test split's confirmation and the calls spent.
fn closing(o: &AlignOutcome) -> String {
    let metric = o.metric;
    let mut out = String::new();
    let best = &o.candidates[o.best as usize];
    let _ = writeln!(
        out,
        "best: candidate {} ({}): dev {} {}; corrected for the choice among those that judged every dev item: {}",
        o.best,
        best.candidate.kind,
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
    if let Some(why) = &o.stopped {
        let _ = writeln!(out, "stopped early: {why}");
    }
    out
}

/// `1 reply rejected`, `2 replies rejected`.
fn counted(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// One candidate's row.
fn row(o: &AlignOutcome, c: &Scored) -> String {
    let k = &c.candidate;
    let status = match (&k.rejected, c.dropped_after) {
        (Some(why), _) => format!("rejected: {why}"),
        (None, Some(n)) => format!("dropped after {n} items"),
        (None, None) if k.id == o.best => "best".into(),
        _ => String::new(),
    };
    let score = c
        .dev
        .as_ref()
        .map_or("—".into(), |d| estimate_text(d.quality.get(o.metric)));
    format!(
        "{:<5} {:<6} {:<4} {:<9} {:>9}  {:<24} {:>6}  {}\n",
        k.id,
        k.parent.map_or("—".into(), |p| p.to_string()),
        k.generation,
        k.kind.name(),
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

/// A search's plan in words: the most each part spends, and the most in all.
pub fn plan_text(p: &Plan) -> String {
    let budget = match p.budget.calls {
        Some(b) => format!("a budget of {b} calls"),
        None => "no budget of calls".into(),
    };
    format!(
        "plan: {} generation(s) within {budget}: the start {} calls, each generation up to {} judge calls and {} proposer calls, the confirmation on the test split up to {}: at most {} calls",
        p.generations,
        p.start_calls,
        p.generation_calls,
        p.generation_proposer_calls,
        p.confirmation_calls,
        p.max_calls
    )
}
