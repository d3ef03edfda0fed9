//! A concurrency ramp's figures, from the calls each level made: throughput, per-request
//! TTFT and latency percentiles with intervals, errors, retries and latency split by
//! attempts, the cold start, and the knee. The engine makes the calls (`engine::load`);
//! this is the arithmetic.
//!
//! The knee is the lowest level whose throughput is within 10% of the best: more requests
//! in flight past it buy no throughput, only queueing. With an SLO on p99 TTFT (p95 when a
//! level has fewer than 100 calls), the knee is at most the highest level that meets it.

use serde::Serialize;

use crate::metrics::{BootstrapSpec, Percentiles, TimedRequest};

/// What one level ran: its calls and the wall time of its timed requests.
#[derive(Debug, Clone, PartialEq)]
pub struct LevelRun {
    pub concurrency: u32,
    pub wall_s: f64,
    pub calls: Vec<TimedRequest>,
}

/// One level's figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadLevel {
    pub concurrency: u32,
    /// Timed requests (warm-up left out).
    pub requests: usize,
    pub wall_s: f64,
    /// Verdicts (successful requests) per second of wall time.
    pub throughput_vps: f64,
    /// Prompt and completion tokens per second of wall time.
    pub tokens_per_s: f64,
    pub ttft_ms: Percentiles,
    pub latency_ms: Percentiles,
    /// From the first token to the end of the answer: the stream, which a KV-cache
    /// eviction (a preempted sequence decoded again) stretches and TTFT does not show.
    pub stream_ms: Percentiles,
    pub errors: usize,
    /// Requests that needed more than one attempt.
    pub retried: usize,
    pub error_rate: f64,
    pub retry_rate: f64,
    /// End-to-end latency of the requests answered at their first attempt, and of those
    /// that were retried.
    pub first_try_latency_ms: Percentiles,
    pub retried_latency_ms: Percentiles,
}

impl LoadLevel {
    pub fn of(run: &LevelRun, spec: &BootstrapSpec) -> LoadLevel {
        let timed: Vec<&TimedRequest> = run.calls.iter().filter(|c| !c.warmup).collect();
        let ok: Vec<&TimedRequest> = timed
            .iter()
            .copied()
            .filter(|c| c.error.is_none())
            .collect();
        let latencies = |pick: &dyn Fn(&TimedRequest) -> bool| -> Vec<f64> {
            ok.iter()
                .filter(|c| pick(c))
                .filter_map(|c| c.latency_ms)
                .collect()
        };
        let ttfts: Vec<f64> = ok.iter().filter_map(|c| c.ttft_ms).collect();
        let streams: Vec<f64> = ok
            .iter()
            .filter_map(|c| Some(c.latency_ms? - c.ttft_ms?))
            .collect();
        let tokens: u64 = ok
            .iter()
            .map(|c| u64::from(c.prompt_tokens) + u64::from(c.completion_tokens))
            .sum();
        let n = timed.len();
        let errors = n - ok.len();
        let retried = timed.iter().filter(|c| c.attempts > 1).count();
        let rate = |k: usize| if n == 0 { 0.0 } else { k as f64 / n as f64 };
        let per_s = |x: f64| {
            if run.wall_s > 0.0 {
                x / run.wall_s
            } else {
                0.0
            }
        };
        LoadLevel {
            concurrency: run.concurrency,
            requests: n,
            wall_s: run.wall_s,
            throughput_vps: per_s(ok.len() as f64),
            tokens_per_s: per_s(tokens as f64),
            ttft_ms: Percentiles::of(&ttfts, spec),
            latency_ms: Percentiles::of(&latencies(&|_| true), spec),
            stream_ms: Percentiles::of(&streams, spec),
            errors,
            retried,
            error_rate: rate(errors),
            retry_rate: rate(retried),
            first_try_latency_ms: Percentiles::of(&latencies(&|c| c.attempts <= 1), spec),
            retried_latency_ms: Percentiles::of(&latencies(&|c| c.attempts > 1), spec),
        }
    }

    /// The TTFT tail the SLO is held to: p99, or p95 below 100 calls; and which.
    pub fn ttft_tail(&self) -> Option<(&'static str, f64)> {
        match (self.ttft_ms.p99, self.ttft_ms.p95) {
            (Some(p99), _) => Some(("p99", p99)),
            (None, Some(p95)) => Some(("p95", p95)),
            _ => None,
        }
    }
}

/// The first requests of the ramp, before its first level was timed: the cold start.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Warmup {
    /// Warm-up requests over all levels.
    pub requests: usize,
    /// The very first request's.
    pub ttft_ms: Option<f64>,
    pub latency_ms: Option<f64>,
}

/// A ramp: its levels, the knee and why, and the cold start.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LoadRamp {
    /// The distinct prompts its requests were drawn from: past them, requests repeat
    /// prompts, which a server's prompt cache answers faster.
    pub distinct_prompts: usize,
    pub levels: Vec<LoadLevel>,
    pub knee: Option<u32>,
    pub knee_reason: String,
    pub warmup: Warmup,
    pub slo_ms: Option<f64>,
}

impl LoadRamp {
    /// The ramp of `runs`, in the order of their levels.
    pub fn new(runs: &[LevelRun], slo_ms: Option<f64>, spec: &BootstrapSpec) -> LoadRamp {
        let mut levels: Vec<LoadLevel> = runs.iter().map(|r| LoadLevel::of(r, spec)).collect();
        levels.sort_by_key(|l| l.concurrency);
        let first = runs.iter().flat_map(|r| &r.calls).find(|c| c.warmup);
        let warmup = Warmup {
            requests: runs
                .iter()
                .flat_map(|r| &r.calls)
                .filter(|c| c.warmup)
                .count(),
            ttft_ms: first.and_then(|c| c.ttft_ms),
            latency_ms: first.and_then(|c| c.latency_ms),
        };
        let (knee, knee_reason) = knee(&levels, slo_ms);
        let prompts: std::collections::HashSet<(&str, bool)> = runs
            .iter()
            .flat_map(|r| &r.calls)
            .map(|c| (c.item_id.as_str(), c.swapped))
            .collect();
        LoadRamp {
            distinct_prompts: prompts.len(),
            levels,
            knee,
            knee_reason,
            warmup,
            slo_ms,
        }
    }
}

/// A ramp as stored: of which trial, when, and what it measured.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StoredRamp {
    pub id: i64,
    pub trial_id: i64,
    pub created_at: String,
    /// Timed requests per level.
    pub requests: usize,
    #[serde(flatten)]
    pub ramp: LoadRamp,
}

impl StoredRamp {
    /// Requests it sent, warm-ups included.
    pub fn sent(&self) -> usize {
        self.ramp.levels.iter().map(|l| l.requests).sum::<usize>() + self.ramp.warmup.requests
    }
}

/// The knee of `levels` (ascending) and a sentence that says why.
pub fn knee(levels: &[LoadLevel], slo_ms: Option<f64>) -> (Option<u32>, String) {
    let Some(best) = levels
        .iter()
        .max_by(|a, b| a.throughput_vps.total_cmp(&b.throughput_vps))
        .filter(|b| b.throughput_vps > 0.0)
    else {
        return (None, "no level answered a request".into());
    };
    let flat = levels
        .iter()
        .find(|l| l.throughput_vps >= 0.9 * best.throughput_vps)
        .expect("the best level qualifies");
    let mut reason = format!(
        "throughput stops rising at {} requests in flight: {:.2} verdicts/s, {:.0}% of the best ({:.2} at {})",
        flat.concurrency,
        flat.throughput_vps,
        100.0 * flat.throughput_vps / best.throughput_vps,
        best.throughput_vps,
        best.concurrency
    );
    let Some(slo) = slo_ms else {
        return (Some(flat.concurrency), reason);
    };
    let passes = |l: &LoadLevel| l.ttft_tail().is_some_and(|(_, v)| v > slo);
    match levels.iter().position(passes) {
        Some(0) => {
            let (which, v) = levels[0].ttft_tail().expect("it passed");
            (
                None,
                format!("{which} TTFT is {v:.0} ms at {} requests in flight, past the {slo:.0} ms SLO at every level", levels[0].concurrency),
            )
        }
        Some(i) if levels[i - 1].concurrency < flat.concurrency => {
            let (which, v) = levels[i].ttft_tail().expect("it passed");
            (
                Some(levels[i - 1].concurrency),
                format!(
                    "{which} TTFT passes the {slo:.0} ms SLO at {} requests in flight ({v:.0} ms), before throughput stops rising",
                    levels[i].concurrency
                ),
            )
        }
        _ => {
            reason.push_str(&format!(", within the {slo:.0} ms SLO on TTFT"));
            (Some(flat.concurrency), reason)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(ttft: f64, latency: f64, attempts: u32, error: bool) -> TimedRequest {
        TimedRequest {
            warmup: false,
            item_id: "i".into(),
            swapped: false,
            prompt_tokens: 100,
            completion_tokens: 2,
            latency_ms: (!error).then_some(latency),
            ttft_ms: (!error).then_some(ttft),
            attempts,
            error: error.then(|| "HTTP 503".into()),
        }
    }

    fn level(concurrency: u32, wall_s: f64, ttft: f64) -> LevelRun {
        LevelRun {
            concurrency,
            wall_s,
            calls: (0..10).map(|_| call(ttft, ttft + 50.0, 1, false)).collect(),
        }
    }

    #[test]
    fn a_level_counts_its_timed_calls_and_splits_retries() {
        let mut run = level(2, 4.0, 300.0);
        run.calls[0] = call(900.0, 2_000.0, 3, false);
        run.calls[1] = call(0.0, 0.0, 5, true);
        run.calls.push(TimedRequest {
            warmup: true,
            ..call(5_000.0, 6_000.0, 1, false)
        });
        let l = LoadLevel::of(&run, &BootstrapSpec::default());
        assert_eq!((l.requests, l.errors, l.retried), (10, 1, 2));
        assert_eq!(l.throughput_vps, 9.0 / 4.0);
        assert_eq!(l.tokens_per_s, 9.0 * 102.0 / 4.0);
        assert_eq!((l.error_rate, l.retry_rate), (0.1, 0.2));
        assert_eq!(l.retried_latency_ms.n, 1);
        assert_eq!(l.retried_latency_ms.p50, Some(2_000.0));
        assert_eq!(l.first_try_latency_ms.p50, Some(350.0));
        assert_eq!(l.ttft_tail(), Some(("p95", l.ttft_ms.p95.unwrap())));
    }

    #[test]
    fn the_knee_is_where_throughput_stops_rising_or_the_slo_is_passed() {
        let spec = BootstrapSpec::default();
        // 10 requests per level: 2.5, 5, 9.5 and 10 verdicts/s; TTFT rises with the level.
        let runs = [
            level(1, 4.0, 100.0),
            level(2, 2.0, 150.0),
            level(4, 10.0 / 9.5, 300.0),
            level(8, 1.0, 900.0),
        ];
        let ramp = LoadRamp::new(&runs, None, &spec);
        assert_eq!(ramp.knee, Some(4), "{}", ramp.knee_reason);
        assert!(ramp.knee_reason.starts_with("throughput stops rising at 4"));
        let tight = LoadRamp::new(&runs, Some(200.0), &spec);
        assert_eq!(tight.knee, Some(2), "{}", tight.knee_reason);
        assert!(tight.knee_reason.contains("passes the 200 ms SLO at 4"));
        let loose = LoadRamp::new(&runs, Some(5_000.0), &spec);
        assert_eq!(loose.knee, Some(4));
        let none = LoadRamp::new(&runs, Some(50.0), &spec);
        assert_eq!(none.knee, None, "{}", none.knee_reason);
        assert_eq!(knee(&[], None).0, None);
    }
}
