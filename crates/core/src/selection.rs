//! Which trial a sweep picks, and how far picking it among many overstates it.
//!
//! The pick ([`pick`]) is the trial with the highest quality as it is shown (to three
//! decimals); among trials tied there, the one with the fewest parse failures, then the
//! lowest cost, then the lowest p95 latency, then the earliest. A researcher reads a tie
//! in the figure shown as a tie, and would not take the trial whose outputs fail to parse
//! when another scores the same without. Its score was measured on the items that chose
//! it, and the largest of N noisy
//! estimates is biased upward (the winner's curse): with 20 trials of 40 items, by about a
//! tenth of accuracy. [`corrected`] estimates what the pick's quality on new items is, by
//! the bootstrap bias-corrected out-of-bag method (BBC; Tsamardinos, Greasidou and
//! Borboudakis, "Bootstrapping the out-of-sample predictions for efficient and accurate
//! cross-validation", Machine Learning 107, 2018): on each bootstrap resample of the items,
//! the selection is made again on the items drawn, and the trial it selects is scored on
//! the items left out (about 37% of them). The mean of those scores is the estimate and
//! their percentile interval its interval. The estimate is slightly pessimistic, as the
//! paper reports (a selection on fewer distinct items picks worse); the simulation below
//! holds its bias within ±0.01 where the naive estimate's is several hundredths.

use std::cmp::Ordering;

use serde::Serialize;

use crate::dataset::Task;
use crate::metrics::{
    self, paired, quality, BootstrapSpec, Kinds, Observation, Quality, TrialMetrics,
};
use crate::verdict::Verdict;

/// The rule [`pick`] follows, in a sentence for reports.
pub const RULE: &str = "the highest quality as shown (three decimals); on a tie, the fewest parse failures, then the lowest cost, then the lowest p95 latency, then the earliest trial";

/// What breaks a tie on quality, in this order: fewer parse failures, lower cost, lower
/// latency. A figure that is unknown ranks after every known one.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Ties {
    /// The share of verdicts that did not parse.
    pub parse_failures: Option<f64>,
    pub cost: Option<f64>,
    /// p95 latency in milliseconds.
    pub latency: Option<f64>,
}

impl Ties {
    /// A trial's, from its metrics and the cost it is compared by.
    pub fn of(m: &TrialMetrics, cost: Option<f64>) -> Ties {
        Ties {
            parse_failures: m.parse_failure_rate,
            cost,
            latency: m.latency_ms.p95,
        }
    }

    /// A trial's, from its calls: the share of answered calls that did not parse, and
    /// tokens per call as the cost (no latency: calls judged in batches are not timed).
    pub fn of_calls(calls: &[Observation]) -> Ties {
        let answered = calls.iter().filter(|o| o.verdict.is_some());
        let failed = calls
            .iter()
            .filter(|o| matches!(o.verdict, Some(Verdict::Failed(_))))
            .count();
        let n_answered = answered.count();
        let tokens: f64 = calls
            .iter()
            .map(|o| f64::from(o.prompt_tokens + o.completion_tokens))
            .sum();
        Ties {
            parse_failures: (n_answered > 0).then(|| failed as f64 / n_answered as f64),
            cost: (!calls.is_empty()).then(|| tokens / calls.len() as f64),
            latency: None,
        }
    }

    /// Lower first, an unknown figure last.
    fn order(&self, other: &Ties) -> Ordering {
        let lower = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => a.total_cmp(&b),
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (None, None) => Ordering::Equal,
        };
        lower(self.parse_failures, other.parse_failures)
            .then_with(|| lower(self.cost, other.cost))
            .then_with(|| lower(self.latency, other.latency))
    }
}

/// A quality as it is shown, to three decimals: what counts as a tie.
fn shown(q: f64) -> i64 {
    (q * 1000.0).round() as i64
}

/// The index of the trial that ranks first by `quality`, ties broken by `ties` (see the
/// module's rule); `None` when no trial has a value.
pub fn pick(qualities: &[Option<f64>], ties: &[Ties]) -> Option<usize> {
    rank(qualities, ties).into_iter().next()
}

/// The trials with a quality, best first by [`pick`]'s rule.
pub fn rank(qualities: &[Option<f64>], ties: &[Ties]) -> Vec<usize> {
    let mut ranked: Vec<usize> = (0..qualities.len())
        .filter(|&i| qualities[i].is_some_and(f64::is_finite))
        .collect();
    let key = |i: usize| shown(qualities[i].unwrap_or_default());
    let tie = |i: usize| ties.get(i).copied().unwrap_or_default();
    ranked.sort_by(|&i, &j| {
        key(j)
            .cmp(&key(i))
            .then_with(|| tie(i).order(&tie(j)))
            .then(i.cmp(&j))
    });
    ranked
}

/// The pick among `trials` by `quality`, for metrics already computed.
pub fn pick_of(
    trials: &[&TrialMetrics],
    quality: Quality,
    cost: impl Fn(&TrialMetrics) -> Option<f64>,
) -> Option<usize> {
    let qualities: Vec<Option<f64>> = trials.iter().map(|m| m.value(quality)).collect();
    let ties: Vec<Ties> = trials.iter().map(|m| Ties::of(m, cost(m))).collect();
    pick(&qualities, &ties)
}

/// Why a trial judges the test split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The best on the dev split.
    Pick,
    /// Its paired interval of the difference with the pick includes zero.
    Indistinguishable,
    /// Among the best `n` (`confirm = n`).
    Best(usize),
}

impl Role {
    pub fn name(self) -> String {
        match self {
            Role::Pick => "pick".into(),
            Role::Indistinguishable => "indistinguishable".into(),
            Role::Best(n) => format!("best {n}"),
        }
    }
}

/// The trials that judge the test split, among `trials` (each one's dev calls): the best
/// `confirm` of them by `metric` (ranked as [`pick`] ranks, with `ties`), or without `confirm`, the pick and
/// every trial whose paired bootstrap interval of the difference with it includes zero
/// (what the report calls indistinguishable from it). In trial order.
pub fn kept(
    task: Task,
    trials: &[&[Observation]],
    ties: &[Ties],
    metric: Quality,
    confirm: Option<usize>,
    spec: &BootstrapSpec,
) -> Vec<(usize, Role)> {
    let qualities: Vec<Option<f64>> = trials
        .iter()
        .map(|t| metrics::value_of(task, t, metric))
        .collect();
    let Some(best) = pick(&qualities, ties) else {
        return Vec::new();
    };
    let mut out: Vec<(usize, Role)> = match confirm {
        Some(n) => rank(&qualities, ties)
            .into_iter()
            .take(n)
            .map(|i| (i, if i == best { Role::Pick } else { Role::Best(n) }))
            .collect(),
        None => (0..trials.len())
            .filter_map(|i| {
                if i == best {
                    return Some((i, Role::Pick));
                }
                let c = paired::compare(task, trials[i], trials[best], metric, spec);
                let (lo, hi) = c.difference.ci?;
                (lo <= 0.0 && 0.0 <= hi).then_some((i, Role::Indistinguishable))
            })
            .collect(),
    };
    out.sort_by_key(|(i, _)| *i);
    out
}

/// The pick's quality corrected for having been chosen among `n_trials`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Corrected {
    pub metric: Quality,
    /// The trials it was chosen among.
    pub n_trials: usize,
    /// The pick's own score, on the items that chose it.
    pub naive: Option<f64>,
    /// The out-of-bag estimate of its score on new items, and its interval.
    pub value: Option<f64>,
    pub ci: Option<(f64, f64)>,
    /// `naive - value`: how much the choice inflates the pick's score.
    pub optimism: Option<f64>,
}

/// The BBC estimate of the quality of the trial that [`pick`] chooses among `trials` (each
/// one's calls, on units shared by all), with `ties` breaking ties as there. `None` when
/// intervals are off (`spec.resamples == 0`).
pub fn corrected(
    task: Task,
    trials: &[&[Observation]],
    ties: &[Ties],
    metric: Quality,
    spec: &BootstrapSpec,
) -> Option<Corrected> {
    if spec.resamples == 0 || trials.is_empty() {
        return None;
    }
    let n_units = trials
        .iter()
        .flat_map(|t| t.iter().map(|o| o.unit + 1))
        .max()
        .unwrap_or(0);
    let counted: Vec<metrics::CountedUnits> = trials
        .iter()
        .map(|t| metrics::CountedUnits::by_unit(task, t, n_units))
        .collect();
    let score = |c: &metrics::CountedUnits, counts: &[f64]| {
        quality::value_tally(task, c.distinct.as_tally(counts), metric)
    };
    let naive = {
        let qualities: Vec<Option<f64>> = counted.iter().map(|c| score(c, &c.all())).collect();
        pick(&qualities, ties).and_then(|i| qualities[i])
    };
    // A unit's kind is its verdicts in every trial: a resample is how many units of each
    // kind it drew, and how many of each it left out.
    let kinds_in: Vec<Kinds> = counted.iter().map(metrics::CountedUnits::kinds).collect();
    let kinds = Kinds::new((0..n_units).map(|u| {
        kinds_in
            .iter()
            .map(|k| k.of_unit[u])
            .collect::<smallvec::SmallVec<[u32; 8]>>()
    }));
    let values = spec.map_bags(&kinds.sizes, Vec::new, |counts, bag| {
        let qualities: Vec<Option<f64>> = counted
            .iter()
            .map(|c| {
                c.recount_kinds(&kinds, &bag.in_bag, counts);
                score(c, counts)
            })
            .collect();
        let chosen = pick(&qualities, ties)?;
        counted[chosen].recount_kinds(&kinds, &bag.left_out, counts);
        score(&counted[chosen], counts)
    });
    let defined: Vec<f64> = values.iter().flatten().copied().collect();
    let value = (!defined.is_empty()).then(|| defined.iter().sum::<f64>() / defined.len() as f64);
    Some(Corrected {
        metric,
        n_trials: trials.len(),
        naive,
        value,
        ci: spec.interval(values),
        optimism: naive.zip(value).map(|(n, v)| n - v),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{Choice, Label};
    use crate::rng::SplitMix64;
    use crate::verdict::Verdict;

    #[test]
    fn the_test_split_goes_to_the_best_n_or_to_those_like_the_pick() {
        let mut rng = SplitMix64::new(3);
        let trials = sweep(&[0.6, 0.9, 0.88, 0.5], 200, &mut rng);
        let views: Vec<&[Observation]> = trials.iter().map(Vec::as_slice).collect();
        let spec = BootstrapSpec::default();
        let kept = |confirm| {
            kept(
                Task::Pairwise,
                &views,
                &[Ties::default(); 4],
                Quality::Accuracy,
                confirm,
                &spec,
            )
        };
        assert_eq!(
            kept(None),
            vec![(1, Role::Pick), (2, Role::Indistinguishable)]
        );
        assert_eq!(
            kept(Some(3)),
            vec![(0, Role::Best(3)), (1, Role::Pick), (2, Role::Best(3))]
        );
        assert_eq!(kept(Some(9)).len(), 4);
        assert_eq!(Role::Best(3).name(), "best 3");
    }

    #[test]
    fn the_pick_is_the_best_as_shown_then_the_fewest_failures_the_cheapest_the_fastest_the_first() {
        let none = [Ties::default(); 6];
        let q = [
            Some(0.5),
            Some(0.7),
            None,
            Some(0.7),
            Some(f64::NAN),
            Some(0.7004),
        ];
        assert_eq!(pick(&q, &none), Some(1));
        let ties = |failures: [f64; 6], cost: [f64; 6], latency: [f64; 6]| -> Vec<Ties> {
            (0..6)
                .map(|i| Ties {
                    parse_failures: Some(failures[i]),
                    cost: Some(cost[i]),
                    latency: Some(latency[i]),
                })
                .collect()
        };
        // 0.7004 shows as 0.700: a tie, which its 10% of parse failures against 65% wins.
        let t = ties([0.0, 0.65, 0.0, 0.65, 0.0, 0.1], [1.0; 6], [1.0; 6]);
        assert_eq!(pick(&q, &t), Some(5));
        let t = ties([0.0; 6], [9.0, 2.0, 0.0, 1.0, 0.0, 3.0], [1.0; 6]);
        assert_eq!(pick(&q, &t), Some(3));
        let t = ties([0.0; 6], [1.0; 6], [9.0, 5.0, 0.0, 5.0, 0.0, 4.0]);
        assert_eq!(pick(&q, &t), Some(5));
        // A known figure ranks before an unknown one.
        let mut t = ties([0.0; 6], [1.0; 6], [1.0; 6]);
        t[1].parse_failures = None;
        assert_eq!(pick(&q, &t), Some(3));
        assert_eq!(rank(&q, &t), vec![3, 5, 1, 0]);
        assert_eq!(pick(&[None, None], &none[..2]), None);
    }

    /// A sweep of configurations whose true accuracies are `truth`, each judging `n` items
    /// right with its probability, independently.
    fn sweep(truth: &[f64], n: usize, rng: &mut SplitMix64) -> Vec<Vec<Observation>> {
        let (a, b) = (Label::Choice(Choice::A), Label::Choice(Choice::B));
        truth
            .iter()
            .map(|&p| {
                (0..n)
                    .map(|unit| {
                        let uniform = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                        let right = uniform < p;
                        Observation::verdict(unit, a, if right { a } else { b })
                    })
                    .collect()
            })
            .collect()
    }

    /// Over 2,000 simulated sweeps of 10 configurations (true accuracy 0.55 to 0.65) on 60
    /// items, the naive score of the pick overstates its true accuracy by several
    /// hundredths; the corrected one is within ±0.01.
    #[test]
    fn the_corrected_estimate_is_unbiased_in_simulation() {
        let truth: Vec<f64> = (0..10).map(|i| 0.55 + 0.01 * i as f64).collect();
        let mut rng = SplitMix64::new(11);
        let (mut naive, mut corrected_bias, mut covered) = (0.0, 0.0, 0);
        let n_sweeps = 2000;
        for s in 0..n_sweeps {
            let trials = sweep(&truth, 60, &mut rng);
            let views: Vec<&[Observation]> = trials.iter().map(Vec::as_slice).collect();
            let spec = BootstrapSpec {
                resamples: 40,
                seed: s,
                ..BootstrapSpec::default()
            };
            let c = corrected(
                Task::Pairwise,
                &views,
                &[Ties::default(); 10],
                Quality::Accuracy,
                &spec,
            )
            .unwrap();
            // The pick, as `corrected` made it.
            let accuracies: Vec<Option<f64>> = views
                .iter()
                .map(|t| {
                    let right = t
                        .iter()
                        .filter(|o| o.verdict == Some(Verdict::Parsed(o.human)));
                    Some(right.count() as f64 / t.len() as f64)
                })
                .collect();
            let chosen = pick(&accuracies, &[Ties::default(); 10]).unwrap();
            assert_eq!(c.naive, accuracies[chosen]);
            naive += c.naive.unwrap() - truth[chosen];
            corrected_bias += c.value.unwrap() - truth[chosen];
            let (lo, hi) = c.ci.unwrap();
            covered += usize::from(lo <= truth[chosen] && truth[chosen] <= hi);
        }
        let (naive, corrected_bias) = (naive / n_sweeps as f64, corrected_bias / n_sweeps as f64);
        assert!(naive > 0.04, "naive bias {naive}");
        assert!(
            corrected_bias.abs() < 0.01,
            "corrected bias {corrected_bias}"
        );
        // Not a claimed coverage, but the interval must be about the right width.
        let coverage = covered as f64 / n_sweeps as f64;
        assert!(coverage > 0.85, "coverage {coverage}");
    }
}
