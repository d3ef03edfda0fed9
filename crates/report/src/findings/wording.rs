//! Each paraphrase group (`[robustness]`): the share of items whose verdict no rewording
//! changes, and the least stable items with their verdicts.

use judgelab_core::sweep::Axis;

use super::{Figure, Finding, Kind, Subject};
use crate::analysis::Analysis;

/// Each paraphrase group in a sentence: its templates and trials, the share of items no
/// rewording changes with its interval, and the least stable items with their verdicts.
pub(super) fn findings(a: &Analysis<'_>) -> Vec<Finding> {
    a.summary
        .robustness
        .iter()
        .map(|g| {
            let ids: Vec<String> = g.trials.iter().map(|id| format!("#{id}")).collect();
            let share = g.stable.value.map_or("undefined".into(), |v| {
                let ci = g.stable.ci.map_or(String::new(), |(lo, hi)| {
                    format!(" [{:.1}%, {:.1}%]", 100.0 * lo, 100.0 * hi)
                });
                format!("{:.1}%{ci}", 100.0 * v)
            });
            let stable = g
                .stable
                .value
                .map_or(0, |v| (v * g.n_items as f64).round() as usize);
            let mut line = format!(
                "{} ({}){}: {stable} of {} items keep their verdict whatever the wording ({share})",
                g.templates.join(" / "),
                ids.join(", "),
                varying(a, g.trials[0]),
                g.n_items
            );
            let shown: Vec<String> = g
                .least_stable
                .iter()
                .take(3)
                .map(|i| {
                    format!(
                        "{} (humans {}: {})",
                        i.item_id,
                        i.human,
                        i.verdicts.join(" | ")
                    )
                })
                .collect();
            if !shown.is_empty() {
                line += &format!("; least stable: {}", shown.join(", "));
            }
            Finding {
                kind: Kind::Wording,
                subject: Subject::Trials(g.trials.clone()),
                figures: vec![Figure::new("stable", g.stable)],
                text: line,
            }
        })
        .collect()
}

/// What sets a paraphrase group apart from the others: the varying axes but the template,
/// as ` at temp=0`; empty where none.
fn varying(a: &Analysis<'_>, trial_id: i64) -> String {
    let Some(t) = a.summary.trials.iter().find(|t| t.id == trial_id) else {
        return String::new();
    };
    let parts: Vec<String> = a
        .varying
        .iter()
        .filter(|&&axis| axis != Axis::Template)
        .map(|axis| format!("{}={}", axis.short(), axis.label(&t.params)))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" at {}", parts.join(" "))
    }
}
