//! Metrics of a trial, computed from its verdicts: agreement with the humans, parse
//! failures, tokens, latency. Pure functions over plain data.
//!
//! Conventions, for every number here:
//! - `n` counts verdicts that have a judge output; calls that failed (recorded with an
//!   error) are counted in `n_errors` and excluded from everything else.
//! - `accuracy` is over all `n` verdicts: a parse failure counts as a wrong answer.
//! - `kappa` and `spearman` are over parsed verdicts only (a failure has no place on the
//!   scale); `parse_failure_rate` (verdicts of any failure kind, `prompt_too_long` included,
//!   over `n`) says how many that leaves out.
//! - Ratings are compared by category, rounded to the nearest integer (a human mean of
//!   4.67 is a 5); `spearman` uses the unrounded values.
//! - `kappa` is Cohen's kappa for pairwise labels and quadratic-weighted kappa for ratings.
//! - Percentiles interpolate linearly between order statistics (numpy's default).

pub mod agreement;
pub mod latency;

use serde::{Deserialize, Serialize};

use crate::dataset::{Label, Task};
use crate::verdict::Verdict;

/// One verdict as the metrics see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub human: Label,
    /// `None` when the call itself failed.
    pub verdict: Option<Verdict>,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub latency_ms: f64,
    pub ttft_ms: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
}

impl Percentiles {
    pub fn of(values: &[f64]) -> Self {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        Percentiles {
            p50: latency::percentile(&sorted, 0.50),
            p95: latency::percentile(&sorted, 0.95),
            p99: latency::percentile(&sorted, 0.99),
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TrialMetrics {
    pub n: usize,
    pub n_errors: usize,
    pub accuracy: Option<f64>,
    pub kappa: Option<f64>,
    pub spearman: Option<f64>,
    pub parse_failure_rate: Option<f64>,
    pub prompt_tokens_per_item: Option<f64>,
    pub completion_tokens_per_item: Option<f64>,
    pub latency_ms: Percentiles,
    pub ttft_ms: Percentiles,
}

/// Computes a trial's metrics from its verdicts.
pub fn compute(task: Task, observations: &[Observation]) -> TrialMetrics {
    let judged: Vec<(&Observation, &Verdict)> = observations
        .iter()
        .filter_map(|o| o.verdict.as_ref().map(|v| (o, v)))
        .collect();
    let n = judged.len();
    let n_errors = observations.len() - n;
    let ratio = |count: usize| (n > 0).then(|| count as f64 / n as f64);
    let mean = |sum: f64| (n > 0).then(|| sum / n as f64);

    let parsed: Vec<(Label, Label)> = judged
        .iter()
        .filter_map(|(o, v)| v.label().map(|l| (o.human, l)))
        .collect();
    let correct = parsed
        .iter()
        .filter(|(h, v)| h.category() == v.category())
        .count();
    let humans: Vec<String> = parsed.iter().map(|(h, _)| h.category()).collect();
    let judges: Vec<String> = parsed.iter().map(|(_, v)| v.category()).collect();
    let (kappa, spearman) = match task {
        Task::Pairwise => (agreement::cohen_kappa(&humans, &judges), None),
        Task::Single {
            scale_min,
            scale_max,
        } => {
            let cat = |l: &Label| {
                (l.as_rating().unwrap_or(f64::NAN).round() as i64).clamp(scale_min, scale_max)
            };
            let h: Vec<i64> = parsed.iter().map(|(h, _)| cat(h)).collect();
            let v: Vec<i64> = parsed.iter().map(|(_, v)| cat(v)).collect();
            let hr: Vec<f64> = parsed.iter().filter_map(|(h, _)| h.as_rating()).collect();
            let vr: Vec<f64> = parsed.iter().filter_map(|(_, v)| v.as_rating()).collect();
            (
                agreement::weighted_kappa(
                    &h,
                    &v,
                    scale_min,
                    scale_max,
                    agreement::Weights::Quadratic,
                ),
                agreement::spearman(&hr, &vr),
            )
        }
    };
    let latencies: Vec<f64> = judged.iter().map(|(o, _)| o.latency_ms).collect();
    let ttfts: Vec<f64> = judged.iter().filter_map(|(o, _)| o.ttft_ms).collect();
    TrialMetrics {
        n,
        n_errors,
        accuracy: ratio(correct),
        kappa,
        spearman,
        parse_failure_rate: ratio(n - parsed.len()),
        prompt_tokens_per_item: mean(judged.iter().map(|(o, _)| o.prompt_tokens as f64).sum()),
        completion_tokens_per_item: mean(
            judged.iter().map(|(o, _)| o.completion_tokens as f64).sum(),
        ),
        latency_ms: Percentiles::of(&latencies),
        ttft_ms: Percentiles::of(&ttfts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Choice;
    use crate::verdict::FailureKind;

    fn obs(human: Label, verdict: Option<Verdict>, latency_ms: f64) -> Observation {
        Observation {
            human,
            verdict,
            prompt_tokens: 100,
            completion_tokens: 2,
            latency_ms,
            ttft_ms: Some(latency_ms / 2.0),
        }
    }

    #[test]
    fn pairwise_trial() {
        let a = Label::Choice(Choice::A);
        let b = Label::Choice(Choice::B);
        let observations = vec![
            obs(a, Some(Verdict::Parsed(a)), 10.0),
            obs(a, Some(Verdict::Parsed(b)), 20.0),
            obs(b, Some(Verdict::Parsed(b)), 30.0),
            obs(b, Some(Verdict::Failed(FailureKind::NoLabel)), 40.0),
            obs(b, None, 1000.0),
        ];
        let m = compute(Task::Pairwise, &observations);
        assert_eq!((m.n, m.n_errors), (4, 1));
        assert_eq!(m.accuracy, Some(0.5));
        assert_eq!(m.parse_failure_rate, Some(0.25));
        // Parsed pairs (A,A) (A,B) (B,B): po = 2/3, pe = 2/3*1/3 + 1/3*2/3 = 4/9.
        let kappa = (2.0 / 3.0 - 4.0 / 9.0) / (1.0 - 4.0 / 9.0);
        assert!((m.kappa.unwrap() - kappa).abs() < 1e-12);
        assert_eq!(m.spearman, None);
        assert_eq!(m.prompt_tokens_per_item, Some(100.0));
        assert_eq!(m.latency_ms.p50, Some(25.0));
        assert_eq!(m.ttft_ms.p50, Some(12.5));
    }

    #[test]
    fn empty_trial_has_no_numbers() {
        let m = compute(Task::Pairwise, &[]);
        assert_eq!(m.n, 0);
        assert_eq!(m.accuracy, None);
        assert_eq!(m.latency_ms, Percentiles::default());
    }
}
