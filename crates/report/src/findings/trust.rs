//! How far to trust a judge: each trusted trial's calibration and what it decides alone at
//! the experiment's target, and what each cascade decides.

use judgelab_core::metrics::Estimate;

use super::{Figure, Finding, Kind, Subject};
use judgelab_core::metrics::TrialMetrics;
use judgelab_core::trust::cascade::Cascade;

use crate::analysis::{cost_text, estimate_text, Analysis};

pub(super) fn findings(a: &Analysis<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for i in a.trusted() {
        let t = &a.summary.trials[i];
        let (Some(c), Some(s)) = (&t.calibration, &t.selective) else {
            continue;
        };
        let num = |x: Option<f64>| x.map_or("—".into(), |v| format!("{v:.3}"));
        let with = |value: Option<f64>, ci: Option<[f64; 2]>| Estimate {
            value,
            ci: ci.map(|[lo, hi]| (lo, hi)),
        };
        out.push(Finding {
            kind: Kind::Trust,
            subject: Subject::Trial(t.id),
            figures: vec![
                Figure::new("ECE", with(c.ece, c.ece_ci)),
                Figure::new("Brier", with(c.brier, c.brier_ci)),
                Figure::point("threshold", s.threshold),
            ],
            text: format!(
                "Trial #{} ({} confidence, {} verdicts): ECE {}, Brier {}; {}.",
                t.id,
                c.confidence_kind.name(),
                c.n,
                num(c.ece),
                num(c.brier),
                s.reading()
            ),
        });
    }
    for c in &a.summary.cascades {
        out.push(Finding {
            kind: Kind::Cascade,
            subject: Subject::Cascade {
                cheap: c.cheap,
                strong: c.strong,
                threshold: c.threshold,
            },
            figures: vec![
                Figure::new(a.quality.name(), c.metrics.estimate(a.quality)),
                Figure::point("escalated", c.escalated),
            ],
            text: reading(a, c),
        });
    }
    out
}

/// What a cascade achieves, in a sentence: "#2 decides 64% of verdicts (confidence ≥
/// 0.930) and #5 the rest: Cohen's kappa 0.610 [0.520, 0.700] at 120 tokens per item,
/// against #5 alone at 0.630 […] and 300 tokens per item".
fn reading(a: &Analysis<'_>, c: &Cascade) -> String {
    let q = a.quality;
    let value = |m: &TrialMetrics| estimate_text(m.estimate(q));
    let cost = |m: &TrialMetrics| cost_text(a.cost, m);
    let strong = a.summary.trials.iter().find(|t| t.id == c.strong);
    let mut out = format!(
        "#{} decides {} of verdicts (confidence ≥ {:.3}) and #{} the rest: {} {} at {}",
        c.cheap,
        c.escalated
            .map_or("—".into(), |e| format!("{:.0}%", 100.0 * (1.0 - e))),
        c.threshold,
        c.strong,
        a.quality_title(),
        value(&c.metrics),
        cost(&c.metrics),
    );
    if let Some(s) = strong {
        out.push_str(&format!(
            ", against #{} alone at {} and {}",
            s.id,
            value(&s.metrics),
            cost(&s.metrics)
        ));
    }
    if let Some(test) = c
        .split_scores
        .test
        .as_ref()
        .and_then(|t| t.quality.get(q).value)
    {
        out.push_str(&format!("; {test:.3} on the test split"));
    }
    out
}
