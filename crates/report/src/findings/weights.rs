//! The weights learned from the item's label: each trial's criterion weights, and a
//! checklist's yes/no items', with the weighted aggregate against the unweighted one.

use judgelab_core::results::weighted::LearnedWeights;
use judgelab_core::results::TrialSummary;

use super::{Figure, Finding, Kind, Subject};
use crate::analysis::{estimate_text, Analysis};

pub(super) fn findings(a: &Analysis<'_>) -> Vec<Finding> {
    let mut out = fitted(a, Kind::CriterionWeights, |t| t.weights.as_ref());
    out.extend(fitted(a, Kind::ItemWeights, |t| t.item_weights.as_ref()));
    out
}

/// Each trial's learned weights in words: the weights, how often each criterion's (or
/// item's) value varies, an item's rank correlation with its criterion, and the weighted
/// aggregate against the unweighted one in the report's metric — on the test split where
/// there is one, else on the dev split it was fitted on, said so.
fn fitted(
    a: &Analysis<'_>,
    kind: Kind,
    fitted: fn(&TrialSummary) -> Option<&LearnedWeights>,
) -> Vec<Finding> {
    let q = a.quality;
    a.summary
        .trials
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let w = fitted(t)?;
            let criteria: Vec<String> = w
                .weights
                .iter()
                .map(|(name, &weight)| weight_text(w, name, weight))
                .collect();
            let compared = match (&w.test, &t.split_scores.test) {
                (Some(weighted), Some(unweighted)) => format!(
                    "on the test split, {} {} weighted against {} unweighted",
                    a.quality_title(),
                    estimate_text(weighted.quality.get(q)),
                    estimate_text(unweighted.quality.get(q))
                ),
                _ => format!(
                    "on the dev split it was fitted on (in-sample, so optimistic; a test split confirms it), {} {} weighted against {} unweighted",
                    a.quality_title(),
                    estimate_text(w.dev.quality.get(q)),
                    estimate_text(t.split_scores.dev.quality.get(q))
                ),
            };
            // The minimum aggregate on the split the weighted one is compared on.
            let minimum = match (&w.minimum, &w.test) {
                (Some((_, Some(test))), Some(_)) => Some(test),
                (Some((dev, _)), _) => Some(dev),
                _ => None,
            };
            let minimum = minimum.map_or(String::new(), |m| {
                format!(
                    " The minimum aggregate (a verdict is its worst criterion): {}.",
                    estimate_text(m.quality.get(q))
                )
            });
            let mut figures: Vec<Figure> = w
                .weights
                .iter()
                .map(|(name, weight)| Figure::point(name.clone(), Some(*weight)))
                .collect();
            figures.push(Figure::point("intercept", Some(w.intercept)));
            Some(Finding {
                kind,
                subject: Subject::Trial(t.id),
                figures,
                text: format!(
                    "{}: {}; intercept {:.3}; {} ({} verdicts). {}{}.{minimum}",
                    a.labels[i],
                    criteria.join(", "),
                    w.intercept,
                    w.method,
                    w.n_fit,
                    compared[..1].to_uppercase(),
                    &compared[1..]
                ),
            })
        })
        .collect()
}

/// One criterion's (or item's) weight in words: "engagingness/1 \"Is it engaging?\" 0.412
/// (varies in 35%, Spearman 0.61 with engagingness)".
fn weight_text(w: &LearnedWeights, name: &str, weight: f64) -> String {
    let varies = w.varies.get(name).copied().unwrap_or(0.0);
    let rank = match (judgelab_core::rubric::items::of(name), w.spearman.get(name)) {
        (Some((criterion, _)), Some(Some(rho))) => format!(", Spearman {rho:.2} with {criterion}"),
        (Some((criterion, _)), _) => format!(", no Spearman with {criterion}"),
        (None, _) => String::new(),
    };
    let question = w
        .questions
        .get(name)
        .map_or(String::new(), |q| format!(" \"{q}\""));
    format!(
        "{name}{question} {weight:.3} (varies in {:.0}%{rank})",
        varies * 100.0
    )
}
