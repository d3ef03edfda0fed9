//! Each trial against its reference trial: the share of the reference's verdicts it
//! keeps, its agreement beside the reference's, and where the model file is another one
//! (a quantisation), the memory its weights take and how fast it prefills.

use judgelab_core::results::TrialSummary;

use super::{Figure, Finding, Kind, Subject};
use crate::analysis::Analysis;

/// Each trial held against its reference in a sentence: the share of the reference's
/// verdicts it keeps (with the flip rate's interval), its agreement beside the
/// reference's, and where both are local model files, the share of the memory its weights
/// take and how fast it prefills: "Q4_0 keeps 99% of verdicts at 60% of the memory".
pub(super) fn findings(a: &Analysis<'_>) -> Vec<Finding> {
    let s = a.summary;
    let q = a.quality;
    s.trials
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let d = t.drift.as_ref()?;
            let r = s.trials.iter().position(|r| r.id == d.reference)?;
            let reference = &s.trials[r];
            let flips = d.flip_rate.value?;
            let interval = d.flip_rate.ci.map_or(String::new(), |(lo, hi)| {
                format!(
                    ", flip rate {:.1}% [{:.1}%, {:.1}%]",
                    100.0 * flips,
                    100.0 * lo,
                    100.0 * hi
                )
            });
            let value = |t: &TrialSummary| {
                t.metrics
                    .value(q)
                    .map_or("undefined".to_string(), |v| format!("{v:.3}"))
            };
            let mut line = format!(
                "{} keeps {:.1}% of {}'s verdicts on {} calls{interval}; {} {} vs {}",
                a.labels[i],
                100.0 * (1.0 - flips),
                a.labels[r].split(' ').next().unwrap_or(""),
                d.n_pairs,
                q.name(),
                value(t),
                value(reference)
            );
            if let Some(kl) = d.kl_mean.value {
                line += &format!("; mean KL {kl:.4} nats");
            }
            // Memory and speed where the model file is another one (a quantisation): the
            // same file's prefill differs by prompt length and noise alone.
            let other_file = t.model_sha256 != reference.model_sha256;
            if let (true, Some(b), Some(rb)) = (other_file, t.model_bytes, reference.model_bytes) {
                line += &format!(
                    "; at {:.0}% of the memory ({:.1} MB)",
                    100.0 * b as f64 / rb as f64,
                    b as f64 / 1e6
                );
            }
            if let (true, Some(p), Some(rp)) = (
                other_file,
                t.metrics.prefill_tokens_per_s,
                reference.metrics.prefill_tokens_per_s,
            ) {
                line += &format!(", prefilling {:.2}× as fast ({p:.0} tokens/s)", p / rp);
            }
            Some(Finding {
                kind: Kind::Drift,
                subject: Subject::Trial(t.id),
                figures: vec![
                    Figure::new("flip rate", d.flip_rate),
                    Figure::point(q.name(), t.metrics.value(q)),
                    Figure::point(
                        format!("reference {}", q.name()),
                        reference.metrics.value(q),
                    ),
                    Figure::new("mean KL", d.kl_mean),
                ],
                text: line,
            })
        })
        .collect()
}
