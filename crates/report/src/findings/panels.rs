//! What each panel scores, against the best trial, how much its members agree, and what
//! each member adds.

use super::{Figure, Finding, Kind, Subject};
use crate::analysis::{cost_text, estimate_text, signed_text, Analysis};

pub(super) fn findings(a: &Analysis<'_>) -> Vec<Finding> {
    a.summary
        .panels
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut figures = vec![
                Figure::new(a.quality.name(), p.metrics.estimate(a.quality)),
                Figure::new("members' alpha", p.members_agreement.alpha),
            ];
            if let Some(c) = &a.panel_versus_best[i] {
                figures.push(Figure::new("difference from the best", c.difference));
            }
            Finding {
                kind: Kind::Panel,
                subject: Subject::Panel(p.name.clone()),
                figures,
                text: reading(a, i),
            }
        })
        .collect()
}

/// What a panel achieves, in a sentence: "majority of #1, #2, #3: Cohen's kappa 0.610
/// [0.520, 0.700] at 900 tokens per item; against the best trial #2 +0.050 [-0.02,
/// 0.12]; its members agree at Krippendorff's alpha 0.410 [0.300, 0.520]; without #1
/// 0.580 […], …".
fn reading(a: &Analysis<'_>, i: usize) -> String {
    let p = &a.summary.panels[i];
    let q = a.quality;
    let members: Vec<String> = p.members.iter().map(|m| format!("#{m}")).collect();
    let mut out = format!(
        "{} of {}{}: {} {} at {}",
        p.rule.name(),
        members.join(", "),
        p.ties
            .map_or(String::new(), |t| format!(" (a split vote: {})", t.name())),
        a.quality_title(),
        estimate_text(p.metrics.estimate(q)),
        cost_text(a.cost, &p.metrics),
    );
    if let (Some(c), Some(b)) = (&a.panel_versus_best[i], a.best) {
        out.push_str(&format!(
            "; against the best trial #{} {}",
            a.summary.trials[b].id,
            signed_text(c.difference)
        ));
    }
    if let Some(test) = p
        .split_scores
        .test
        .as_ref()
        .and_then(|t| t.quality.get(q).value)
    {
        out.push_str(&format!("; {test:.3} on the test split"));
    }
    out.push_str(&format!(
        "; its members agree at Krippendorff's alpha {} over {} verdicts",
        estimate_text(p.members_agreement.alpha),
        p.members_agreement.n
    ));
    let without: Vec<String> = p
        .contributions
        .iter()
        .map(|c| {
            format!(
                "without #{} {} {} (the panel {})",
                c.member,
                p.contribution_metric.name(),
                estimate_text(c.without),
                signed_text(c.difference)
            )
        })
        .collect();
    if !without.is_empty() {
        out.push_str(&format!("; {}", without.join(", ")));
    }
    out
}
