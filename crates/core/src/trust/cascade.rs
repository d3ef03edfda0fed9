//! Cascades: a cheap trial decides the verdicts it is confident of, and sends the rest to a
//! strong trial of the same experiment. Composed from stored verdicts with no new calls:
//! each verdict (an item and repeat) is the cheap trial's where its confidence reaches the
//! threshold, and the strong trial's on the same item and repeat otherwise (a cheap parse
//! or call failure has no confidence and is escalated too).
//!
//! What a cascade costs is the cheap trial's whole cost plus the escalated share of the
//! strong one's (every item is asked of the cheap judge first). Its latency per request is
//! the cheap request's, plus a strong request's where escalated: the k-th verdict takes the
//! cheap trial's k-th timed request, and the escalated ones (spread evenly over the
//! verdicts) the strong trial's in turn, each cycling: a deterministic stand-in for drawing
//! them at random.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::composed::Part;
use crate::dataset::Task;
use crate::metrics::{
    self, BootstrapSpec, Observation, Percentiles, SplitScore, SplitScores, TrialMetrics,
};
use crate::trust::confidence;

/// A virtual trial: `cheap` decides the verdicts it is at least `threshold` confident of,
/// `strong` the rest. Composed from stored verdicts, not run.
#[derive(Debug, Clone, Serialize)]
pub struct Cascade {
    /// Store ids of the cheap trial, asked first, and the strong one.
    pub cheap: i64,
    pub strong: i64,
    /// Where the cheap trial hands over: `[trust] cascade_threshold`, or its selective
    /// threshold at the `[trust]` target.
    pub threshold: f64,
    /// The share of dev verdicts sent to the strong trial.
    pub escalated: Option<f64>,
    /// On the dev split: agreement of the composed verdicts, cost as the cheap trial's
    /// plus the escalated share of the strong one's, latency per request as the module
    /// says.
    #[serde(flatten)]
    pub metrics: TrialMetrics,
    /// Its agreement on each split: `test` where both trials judged the test split.
    pub split_scores: SplitScores,
}

impl Cascade {
    /// Composes `cheap` and `strong` at `threshold`.
    pub fn new(
        task: Task,
        cheap: Part<'_>,
        strong: Part<'_>,
        threshold: f64,
        spec: &BootstrapSpec,
    ) -> Cascade {
        let dev = compose(task, cheap.dev, strong.dev, threshold);
        let escalated = dev.escalated();
        let e = escalated.unwrap_or(0.0);
        let latencies = latencies(
            cheap.latencies,
            strong.latencies,
            dev.n_accepted + dev.n_escalated,
            e,
        );
        let same_load = cheap.metrics.latency_concurrency == strong.metrics.latency_concurrency;
        let timing = metrics::Timing::Sampled {
            concurrency: cheap.metrics.latency_concurrency.unwrap_or(1),
            timed: &[],
        };
        let mut m = metrics::compute(task, &dev.observations, timing, spec);
        let (c, s) = (cheap.metrics, strong.metrics);
        m.usd_per_1k_items = cost(c.usd_per_1k_items, s.usd_per_1k_items, e);
        m.prompt_tokens_per_item = cost(c.prompt_tokens_per_item, s.prompt_tokens_per_item, e);
        m.completion_tokens_per_item = cost(
            c.completion_tokens_per_item,
            s.completion_tokens_per_item,
            e,
        );
        // Latency where both were measured at the same load; no time to first token (an
        // escalated request's first token is the strong judge's, after the whole cheap one).
        m.latency_ms = if same_load && !latencies.is_empty() {
            Percentiles::of(&latencies, spec)
        } else {
            Percentiles::default()
        };
        m.latency_concurrency = (same_load && !latencies.is_empty())
            .then_some(c.latency_concurrency)
            .flatten();
        m.ttft_ms = Percentiles::default();
        let test = (!cheap.test.is_empty() && !strong.test.is_empty()).then(|| {
            let composed = compose(task, cheap.test, strong.test, threshold);
            SplitScore::of(task, &composed.observations, spec)
        });
        Cascade {
            cheap: cheap.id,
            strong: strong.id,
            threshold,
            escalated,
            split_scores: SplitScores {
                dev: SplitScore {
                    n: m.n,
                    n_errors: m.n_errors,
                    quality: m.quality.clone(),
                },
                test,
            },
            metrics: m,
        }
    }
}

/// The verdicts of a cascade, as the metrics see them.
#[derive(Debug, Clone)]
pub struct Composed {
    pub observations: Vec<Observation>,
    /// Verdicts (item and repeat) the cheap trial decided, and those escalated.
    pub n_accepted: usize,
    pub n_escalated: usize,
}

impl Composed {
    /// The share of verdicts sent to the strong trial; none without verdicts.
    pub fn escalated(&self) -> Option<f64> {
        let n = self.n_accepted + self.n_escalated;
        (n > 0).then(|| self.n_escalated as f64 / n as f64)
    }
}

/// Composes `cheap` and `strong` (the same items, numbered alike) at `threshold`: every
/// item and repeat the cheap trial judged is kept from it where its confidence is at least
/// `threshold`, and taken from the strong trial otherwise (left out where the strong trial
/// has no call on it).
pub fn compose(
    task: Task,
    cheap: &[Observation],
    strong: &[Observation],
    threshold: f64,
) -> Composed {
    let (_, judged) = confidence::judged(task, cheap);
    let accepted: std::collections::HashSet<(usize, u32)> = judged
        .iter()
        .filter(|j| j.confidence.is_some_and(|c| c >= threshold))
        .map(|j| (j.unit, j.repeat))
        .collect();
    let mut strong_calls: BTreeMap<(usize, u32), Vec<&Observation>> = BTreeMap::new();
    for o in strong {
        strong_calls.entry((o.unit, o.repeat)).or_default().push(o);
    }
    let mut observations = Vec::with_capacity(cheap.len());
    let (mut n_accepted, mut n_escalated) = (0, 0);
    for group in metrics::group(cheap) {
        let key = (group.unit, group.calls[0].repeat);
        if accepted.contains(&key) {
            n_accepted += 1;
            observations.extend(group.calls.iter().map(|&o| o.clone()));
        } else if let Some(calls) = strong_calls.get(&key) {
            n_escalated += 1;
            observations.extend(calls.iter().map(|&o| o.clone()));
        }
    }
    Composed {
        observations,
        n_accepted,
        n_escalated,
    }
}

/// The cascade's figure for a per-verdict cost (dollars, tokens): the cheap trial's plus
/// the escalated share of the strong one's.
pub fn cost(cheap: Option<f64>, strong: Option<f64>, escalated: f64) -> Option<f64> {
    Some(cheap? + escalated * strong?)
}

/// Per-request latencies of a cascade of `n` verdicts whose `escalated` share went on to
/// the strong judge: the cheap trial's timed requests, plus the strong trial's for the
/// escalated ones, spread evenly over the verdicts (Bresenham), each trial's samples
/// taken in turn. Empty where either trial has none.
pub fn latencies(cheap: &[f64], strong: &[f64], n: usize, escalated: f64) -> Vec<f64> {
    if cheap.is_empty() || strong.is_empty() {
        return Vec::new();
    }
    let n = n.max(cheap.len());
    let mut out = Vec::with_capacity(n);
    let mut sent = 0usize;
    for k in 0..n {
        let mut latency = cheap[k % cheap.len()];
        // Escalate the k-th verdict where that keeps the share at `escalated` so far.
        if ((k + 1) as f64 * escalated).round() as usize > sent {
            latency += strong[sent % strong.len()];
            sent += 1;
        }
        out.push(latency);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{Choice, Label};
    use crate::trust::{Belief, ConfidenceKind};
    use crate::verdict::Verdict;

    const A: Label = Label::Choice(Choice::A);
    const B: Label = Label::Choice(Choice::B);

    fn believed(unit: usize, verdict: Label, p: f64) -> Observation {
        let other = if verdict == A { B } else { A };
        Observation {
            belief: Belief::normalised(ConfidenceKind::Exact, vec![(verdict, p), (other, 1.0 - p)]),
            cost_usd: Some(0.001),
            ..Observation::verdict(unit, A, verdict)
        }
    }

    #[test]
    fn confident_verdicts_stay_and_the_rest_escalate() {
        let cheap = vec![
            believed(0, A, 0.95),
            believed(1, B, 0.6),
            Observation {
                verdict: Some(Verdict::Failed(crate::FailureKind::NoLabel)),
                ..believed(2, A, 0.99)
            },
            believed(3, B, 0.99),
        ];
        let strong: Vec<Observation> = (0..4)
            .filter(|&u| u != 3)
            .map(|u| Observation::verdict(u, A, A))
            .collect();
        let c = compose(Task::Pairwise, &cheap, &strong, 0.9);
        // Item 0 and 3 are the cheap judge's; 1 (unsure) and 2 (a parse failure) escalate.
        assert_eq!((c.n_accepted, c.n_escalated), (2, 2));
        let verdicts: Vec<(usize, Option<Verdict>)> =
            c.observations.iter().map(|o| (o.unit, o.verdict)).collect();
        assert_eq!(
            verdicts,
            vec![
                (0, Some(Verdict::Parsed(A))),
                (1, Some(Verdict::Parsed(A))),
                (2, Some(Verdict::Parsed(A))),
                (3, Some(Verdict::Parsed(B))),
            ]
        );
        assert_eq!(c.escalated(), Some(0.5));
        assert_eq!(cost(Some(1.0), Some(10.0), 0.5), Some(6.0));
        assert_eq!(cost(Some(1.0), None, 0.5), None);
    }

    #[test]
    fn latencies_add_the_strong_request_to_the_escalated_share() {
        let l = latencies(&[10.0, 20.0], &[100.0], 4, 0.5);
        assert_eq!(l.len(), 4);
        let escalated = l.iter().filter(|&&x| x > 50.0).count();
        assert_eq!(escalated, 2);
        assert_eq!(l.iter().sum::<f64>(), 10.0 + 20.0 + 10.0 + 20.0 + 200.0);
        assert!(latencies(&[], &[1.0], 4, 0.5).is_empty());
        assert!(latencies(&[1.0], &[2.0], 3, 0.0).iter().all(|&x| x == 1.0));
        assert!(latencies(&[1.0], &[2.0], 3, 1.0).iter().all(|&x| x == 3.0));
    }
}
