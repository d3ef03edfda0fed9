//! Whether the pick was confirmed on items that did not choose it (the test split), and
//! what a race dropped on the way.

use super::{Figure, Finding, Kind, Subject};
use crate::analysis::Analysis;

pub(super) fn findings(a: &Analysis<'_>) -> Vec<Finding> {
    let e = &a.summary.experiment;
    let confirmation = |figures: Vec<Figure>, text: String| Finding {
        kind: Kind::Confirmation,
        subject: Subject::Experiment,
        figures,
        text,
    };
    let mut out = vec![if e.n_test_items == 0 {
        confirmation(
            Vec::new(),
            "Not confirmed: this experiment has no test split, so every score here comes from the items that ranked the trials, and the best of them is biased upward (the maximum of noisy estimates). Set `[limits] test = N` to judge the kept trials again on items that did not pick them.".into(),
        )
    } else if !e.selected {
        confirmation(
            vec![Figure::point("test items", Some(e.n_test_items as f64))],
            format!(
                "Not yet: the {} test items are judged once the dev split is complete.",
                e.n_test_items
            ),
        )
    } else {
        confirmation(
            vec![
                Figure::point("dev items", Some(e.n_items as f64)),
                Figure::point("test items", Some(e.n_test_items as f64)),
            ],
            format!(
                "The trials below were kept after the {} dev items and judged on {} test items that played no part in choosing them. A test score well below the dev score is the optimism of choosing.",
                e.n_items, e.n_test_items
            ),
        )
    }];
    out.extend(race(a));
    out
}

/// A race's rule and what it dropped and saved; none without a race.
fn race(a: &Analysis<'_>) -> Option<Finding> {
    if a.summary.race.is_empty() {
        return None;
    }
    let s = &a.summary.experiment.parsed.selection;
    let dropped: Vec<String> = a
        .summary
        .trials
        .iter()
        .filter_map(|t| Some(format!("#{} after round {}", t.id, t.dropped?.round)))
        .collect();
    let (stored, grid) = a.summary.race_verdicts().unwrap_or((0, 0));
    let share = stored as f64 / grid.max(1) as f64;
    Some(Finding {
        kind: Kind::Race,
        subject: Subject::Experiment,
        figures: vec![
            Figure::point("trials dropped", Some(dropped.len() as f64)),
            Figure::point("share of the grid's dev verdicts", Some(share)),
        ],
        text: format!(
            "Raced in rounds of {} dev items: after each round from {} items on, a trial was dropped when the paired t test of its {} against the round's leader (jackknife standard error over items) rejected equality at Holm's level for α = {} and it was behind. {} of {} trials were dropped ({}); the race judged {stored} of the {grid} dev verdicts the full grid needs ({:.0}%).",
            s.round,
            s.min_items,
            s.metric.title(a.task),
            s.alpha,
            dropped.len(),
            a.summary.trials.len(),
            if dropped.is_empty() {
                "none".into()
            } else {
                dropped.join(", ")
            },
            100.0 * share,
        ),
    })
}
