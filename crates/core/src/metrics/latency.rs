//! Latency and time-to-first-token of one request, at a stated concurrency: where each
//! trial's figures come from ([`Timing`]), their percentiles with bootstrap intervals over
//! calls ([`Percentiles`]), and the order statistic they use.
//!
//! A local judge batches a sweep's calls, so the time a batched call took is the batch's,
//! not the configuration's: a local trial's figures come from a seeded sample of its calls
//! timed alone, one request at a time with nothing of an earlier call reused
//! (concurrency 1). A remote judge's calls are requests of their own, each timed as it was
//! made, with up to the endpoint's `concurrency` in flight: that is their load. Where the
//! sweep sets a remote trial's load (the `concurrency` axis), its figures come from a
//! sample of its calls made again with that many in flight.

use serde::{Deserialize, Serialize};

use crate::judge::{CallError, Completion};
use crate::metrics::BootstrapSpec;

/// Fewer calls than this give no p99: its 1% tail would be one call or none.
pub const P99_MIN_CALLS: usize = 100;

/// Where a trial's latency figures come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Timing<'a> {
    /// The trial's own calls, made with up to `concurrency` requests in flight.
    Calls { concurrency: u32 },
    /// A sample of its calls made again to be timed, with `concurrency` in flight (a
    /// local judge's alone, at 1), warm-ups left out.
    Sampled {
        concurrency: u32,
        timed: &'a [Timed],
    },
}

/// What one request took, as its figures read it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Timed {
    pub latency_ms: f64,
    pub ttft_ms: Option<f64>,
    /// The prompt it prefilled before its first token.
    pub prompt_tokens: u32,
}

/// Prompt tokens prefilled per second: the timed calls' prompt tokens over their time to
/// first token, summed; none without a call with a time to first token.
pub fn prefill_rate(calls: impl IntoIterator<Item = (u32, Option<f64>)>) -> Option<f64> {
    let (tokens, ms) = calls
        .into_iter()
        .filter_map(|(tokens, ttft)| Some((f64::from(tokens), ttft?)))
        .fold((0.0, 0.0), |(t, m), (tokens, ttft)| (t + tokens, m + ttft));
    (ms > 0.0).then(|| tokens / ms * 1000.0)
}

/// One request made to be timed, not scored: a call of a trial timed alone
/// (`results::TimedCall`) or a request of a load ramp (`load::LevelRun`).
#[derive(Debug, Clone, PartialEq)]
pub struct TimedRequest {
    pub item_id: String,
    pub swapped: bool,
    /// Made before the timed ones (a warm-up): left out of the figures.
    pub warmup: bool,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    /// From its first attempt to its end, retries included; none when it failed.
    pub latency_ms: Option<f64>,
    pub ttft_ms: Option<f64>,
    pub attempts: u32,
    pub error: Option<String>,
}

impl TimedRequest {
    /// The record of a request of (`item_id`, `swapped`) and what the judge answered; none:
    /// it did not answer.
    pub fn new(
        item_id: &str,
        swapped: bool,
        warmup: bool,
        answer: Option<Result<Completion, CallError>>,
    ) -> TimedRequest {
        let base = TimedRequest {
            item_id: item_id.to_string(),
            swapped,
            warmup,
            prompt_tokens: 0,
            completion_tokens: 0,
            latency_ms: None,
            ttft_ms: None,
            attempts: 0,
            error: None,
        };
        match answer {
            Some(Ok(c)) => TimedRequest {
                prompt_tokens: c.prompt_tokens,
                completion_tokens: c.completion_tokens,
                latency_ms: Some(c.latency_ms),
                ttft_ms: c.ttft_ms,
                attempts: c.attempts,
                ..base
            },
            Some(Err(e)) => TimedRequest {
                attempts: e.attempts,
                error: Some(e.message),
                ..base
            },
            None => TimedRequest {
                error: Some("the judge returned no response for this request".into()),
                ..base
            },
        }
    }

    /// Its timing, if it succeeded and was not a warm-up.
    pub fn timed(&self) -> Option<Timed> {
        match (self.warmup, &self.error, self.latency_ms) {
            (false, None, Some(latency_ms)) => Some(Timed {
                latency_ms,
                ttft_ms: self.ttft_ms,
                prompt_tokens: self.prompt_tokens,
            }),
            _ => None,
        }
    }
}

/// p50, p95 and p99 of `n` calls, each with a bootstrap interval that resamples calls.
/// p99 is `None` below [`P99_MIN_CALLS`] calls.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Percentiles {
    pub p50: Option<f64>,
    pub p95: Option<f64>,
    pub p99: Option<f64>,
    #[serde(default)]
    pub n: usize,
    #[serde(default)]
    pub p50_ci: Option<[f64; 2]>,
    #[serde(default)]
    pub p95_ci: Option<[f64; 2]>,
    #[serde(default)]
    pub p99_ci: Option<[f64; 2]>,
}

impl Percentiles {
    /// The percentiles of `values` (non-finite ones dropped) with intervals drawn as
    /// `spec` says.
    pub fn of(values: &[f64], spec: &BootstrapSpec) -> Percentiles {
        let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let with_p99 = n >= P99_MIN_CALLS;
        let qs = [0.50, 0.95, 0.99];
        // A resample draws indexes into `sorted`, so its order statistics are a walk over
        // how often it drew each: O(n) per resample rather than a sort, and the same values
        // (`summarize` computes this for every trial, and a remote trial has every call).
        let mut draws: [Vec<Option<f64>>; 3] = Default::default();
        let mut counts = vec![0u32; n];
        spec.for_each_resample(n, |idx| {
            counts.fill(0);
            for &i in idx {
                counts[i] += 1;
            }
            for (q, d) in qs.iter().zip(&mut draws) {
                d.push(resampled_percentile(&sorted, &counts, *q));
            }
        });
        let [d50, d95, d99] = draws;
        let ci = |d: Vec<Option<f64>>| spec.interval(d).map(|(lo, hi)| [lo, hi]);
        Percentiles {
            p50: percentile(&sorted, 0.50),
            p95: percentile(&sorted, 0.95),
            p99: if with_p99 {
                percentile(&sorted, 0.99)
            } else {
                None
            },
            n,
            p50_ci: ci(d50),
            p95_ci: ci(d95),
            p99_ci: if with_p99 { ci(d99) } else { None },
        }
    }
}

impl Percentiles {
    /// Why `value`, one of these percentiles, is blank where it is for want of calls:
    /// `needs ≥ 100 calls` for a p99 of fewer; none where it has a value or nothing was
    /// timed. Every renderer says it in these words.
    pub fn needs(&self, value: Option<f64>) -> Option<String> {
        (value.is_none() && self.n > 0 && self.n < P99_MIN_CALLS)
            .then(|| format!("needs ≥ {P99_MIN_CALLS} calls"))
    }
}

/// The `q` quantile of ascending `sorted` values with linear interpolation between order
/// statistics (numpy's default `linear` method); `None` for no values.
pub fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let h = last as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(last);
    Some(sorted[lo] + (h - lo as f64) * (sorted[hi] - sorted[lo]))
}

/// [`percentile`] of the resample that drew index `i` of ascending `sorted` `counts[i]`
/// times.
fn resampled_percentile(sorted: &[f64], counts: &[u32], q: f64) -> Option<f64> {
    let last = sorted.len().checked_sub(1)?;
    let h = last as f64 * q.clamp(0.0, 1.0);
    let lo = h.floor() as usize;
    let hi = (lo + 1).min(last);
    // The resample's values at ranks lo and hi.
    let (mut at_lo, mut at_hi) = (None, None);
    let mut seen = 0usize;
    for (value, &c) in sorted.iter().zip(counts) {
        seen += c as usize;
        if at_lo.is_none() && seen > lo {
            at_lo = Some(*value);
        }
        if seen > hi {
            at_hi = Some(*value);
            break;
        }
    }
    let (a, b) = (at_lo?, at_hi?);
    Some(a + (h - lo as f64) * (b - a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    /// A log-normal draw (median 1,000 ms, a long right tail), as latencies are.
    fn lognormal(rng: &mut SplitMix64) -> f64 {
        let u1 = (rng.next_u64() as f64 + 1.0) / (u64::MAX as f64 + 2.0);
        let u2 = rng.next_u64() as f64 / u64::MAX as f64;
        let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
        (1000f64.ln() + 0.5 * z).exp()
    }

    /// The 95% intervals of p50 and p95 cover the true quantiles about 95% of the time on
    /// 200 calls; of p99, on 400. (The percentile bootstrap of a tail quantile covers less
    /// on fewer calls, which is why p99 needs at least 100.)
    #[test]
    fn intervals_cover_the_true_quantiles_in_simulation() {
        // The log-normal's quantiles: exp(mu + sigma * z_q).
        let truth = |z: f64| (1000f64.ln() + 0.5 * z).exp();
        let (t50, t95, t99) = (truth(0.0), truth(1.644_853_6), truth(2.326_347_9));
        let spec = BootstrapSpec {
            resamples: 400,
            ..BootstrapSpec::default()
        };
        let mut rng = SplitMix64::new(7);
        let reps = 300;
        let mut covered = [0usize; 3];
        for rep in 0..reps {
            let n = 200;
            let values: Vec<f64> = (0..n).map(|_| lognormal(&mut rng)).collect();
            let p = Percentiles::of(&values, &BootstrapSpec { seed: rep, ..spec });
            let inside =
                |ci: Option<[f64; 2]>, t: f64| ci.is_some_and(|[lo, hi]| lo <= t && t <= hi);
            covered[0] += usize::from(inside(p.p50_ci, t50));
            covered[1] += usize::from(inside(p.p95_ci, t95));
            let values: Vec<f64> = (0..400).map(|_| lognormal(&mut rng)).collect();
            let p = Percentiles::of(&values, &BootstrapSpec { seed: rep, ..spec });
            covered[2] += usize::from(inside(p.p99_ci, t99));
        }
        let rates = covered.map(|c| c as f64 / reps as f64);
        for (name, rate) in ["p50", "p95", "p99"].iter().zip(rates) {
            assert!((0.89..=0.99).contains(&rate), "{name} coverage {rate}");
        }
    }

    /// The walk over counts gives exactly what sorting each resample gives.
    #[test]
    fn a_resample_is_read_without_sorting_it() {
        let mut rng = SplitMix64::new(3);
        let mut sorted: Vec<f64> = (0..57).map(|_| lognormal(&mut rng)).collect();
        sorted.push(sorted[4]); // ties
        sorted.sort_by(f64::total_cmp);
        let spec = BootstrapSpec {
            resamples: 50,
            ..BootstrapSpec::default()
        };
        spec.for_each_resample(sorted.len(), |idx| {
            let mut counts = vec![0u32; sorted.len()];
            idx.iter().for_each(|&i| counts[i] += 1);
            let mut resample: Vec<f64> = idx.iter().map(|&i| sorted[i]).collect();
            resample.sort_by(f64::total_cmp);
            for q in [0.0, 0.5, 0.95, 0.99, 1.0] {
                assert_eq!(
                    resampled_percentile(&sorted, &counts, q),
                    percentile(&resample, q)
                );
            }
        });
    }

    #[test]
    fn p99_needs_a_hundred_calls() {
        let spec = BootstrapSpec::default();
        let few = Percentiles::of(&(1..=99).map(f64::from).collect::<Vec<_>>(), &spec);
        assert_eq!((few.n, few.p99, few.p99_ci), (99, None, None));
        assert!(few.p95.is_some() && few.p95_ci.is_some());
        let enough = Percentiles::of(&(1..=100).map(f64::from).collect::<Vec<_>>(), &spec);
        assert!((enough.p99.unwrap() - 99.01).abs() < 1e-9);
        let [lo, hi] = enough.p99_ci.unwrap();
        assert!(lo <= 99.01 && (99.01..=100.0).contains(&hi));
        assert_eq!(Percentiles::of(&[], &spec), Percentiles::default());
    }

    #[test]
    fn matches_numpy_linear() {
        // numpy.percentile([1, 2, 3, 4, 10], [50, 95, 99]) == [3.0, 8.8, 9.76]
        let xs = [1.0, 2.0, 3.0, 4.0, 10.0];
        assert_eq!(percentile(&xs, 0.5), Some(3.0));
        assert!((percentile(&xs, 0.95).unwrap() - 8.8).abs() < 1e-12);
        assert!((percentile(&xs, 0.99).unwrap() - 9.76).abs() < 1e-12);
        assert_eq!(percentile(&[7.0], 0.99), Some(7.0));
        assert_eq!(percentile(&[], 0.5), None);
    }
}
