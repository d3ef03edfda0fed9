//! Metrics of a trial, computed from its verdicts: agreement with the humans (each with a
//! bootstrap confidence interval), parse failures, confusion, position bias, tokens, cost
//! and latency. Pure functions over plain data.
//!
//! Conventions, for every number here:
//! - An **observation** is one call. Calls on the same item and repeat form one **verdict**:
//!   a pairwise item judged in both answer orders gives one verdict, combined as MT-Bench
//!   does ([`position::combine`]), or by probability for the `debiased` order
//!   ([`position::debias`]).
//! - `n` counts verdicts that have a judge output; verdicts whose call failed (recorded with
//!   an error) are counted in `n_errors` and excluded from everything else.
//! - `accuracy` is over all `n` verdicts: a parse failure counts as a wrong answer. So is
//!   pairwise Cohen's kappa, where a failure is a category of its own that matches no human
//!   label: a judge that fails often cannot score well on the few verdicts it gives. The
//!   weighted kappas and correlations of ratings are over parsed verdicts only (a failure
//!   has no place on the scale), and Krippendorff's alpha treats a failure as a missing
//!   value; `parse_failure_rate` says how many that leaves out.
//! - Ratings are compared by category, rounded to the nearest integer on the scale (a human
//!   mean of 4.67 is a 5); the correlations and interval alpha use the unrounded values.
//!   Accuracy is defined only where every label and verdict is a whole point; elsewhere
//!   (labels that are means, a rubric's aggregate) `within_half_point` takes its place.
//! - Confidence intervals resample items (with all their repeats) — see [`bootstrap`].
//! - Tokens and cost are per verdict (both orders' calls summed); latency percentiles are
//!   per call, and interpolate linearly between order statistics (numpy's default).

pub mod agreement;
pub mod alpha;
pub mod baseline;
pub mod bootstrap;
pub mod confusion;
pub mod drift;
pub mod expected;
pub mod latency;
pub mod paired;
pub mod position;
pub mod quality;

use std::collections::BTreeMap;

use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use crate::dataset::{Label, Task};
use crate::sampling::VerdictDistribution;
use crate::sweep::Order;
use crate::trust::belief::Belief;
use crate::verdict::Verdict;
pub use bootstrap::{BootstrapSpec, Kinds};
pub use confusion::Confusion;
pub use expected::Expected;
pub use latency::{Percentiles, Timed, TimedRequest, Timing};
pub use position::PositionBias;
pub use quality::{Quality, Scored};

/// One call as the metrics see it.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// The item, as an index shared by every trial of the experiment.
    pub unit: usize,
    pub repeat: u32,
    /// The answers were shown in swapped order (pairwise); the verdict is in the dataset's
    /// frame regardless.
    pub swapped: bool,
    pub human: Label,
    /// `None` when the call itself failed.
    pub verdict: Option<Verdict>,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub latency_ms: f64,
    pub ttft_ms: Option<f64>,
    /// What the call cost, where the judge has a price.
    pub cost_usd: Option<f64>,
    /// Exact verdicts: the distribution the verdict was drawn from, in the dataset's frame.
    pub distribution: Option<VerdictDistribution>,
    /// What the judge believed of the verdicts, where it says ([`crate::trust::confidence`]).
    pub belief: Option<Belief>,
    /// The trial's answer order: how its two orders' calls on one item and repeat combine
    /// into one verdict (by agreement for `both`, by probability for `debiased`).
    pub order: Order,
}

impl Observation {
    /// A verdict on `unit` and nothing else of its call (no tokens, no time, no cost): what
    /// simulations and tests of the statistics need.
    pub fn verdict(unit: usize, human: Label, verdict: Label) -> Observation {
        Observation {
            unit,
            repeat: 0,
            swapped: false,
            human,
            verdict: Some(Verdict::Parsed(verdict)),
            prompt_tokens: 0,
            completion_tokens: 0,
            latency_ms: 0.0,
            ttft_ms: None,
            cost_usd: None,
            distribution: None,
            belief: None,
            order: Order::Ab,
        }
    }
}

/// A statistic and its confidence interval.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    pub value: Option<f64>,
    pub ci: Option<(f64, f64)>,
}

/// Agreement metrics by name. It serialises flat: each metric `name` beside `name_ci` as
/// `[low, high]` (or null), so that a script reads `trial["kappa_ci"]` without knowing the
/// Rust types.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Qualities(pub BTreeMap<Quality, Estimate>);

impl Qualities {
    pub fn get(&self, q: Quality) -> Estimate {
        self.0.get(&q).copied().unwrap_or_default()
    }
}

impl Serialize for Qualities {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.0.len() * 2))?;
        for (q, e) in &self.0 {
            map.serialize_entry(q.name(), &e.value)?;
            map.serialize_entry(&format!("{}_ci", q.name()), &e.ci.map(|(l, h)| [l, h]))?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for Qualities {
    /// Reads what `serialize` writes; keys that name no metric are left alone (a flattened
    /// struct's other fields).
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let flat: BTreeMap<String, serde_json::Value> = BTreeMap::deserialize(deserializer)?;
        let mut out = BTreeMap::new();
        for q in Quality::ALL {
            let value = match flat.get(q.name()) {
                Some(v) => Option::<f64>::deserialize(v).map_err(serde::de::Error::custom)?,
                None => continue,
            };
            let ci = match flat.get(&format!("{}_ci", q.name())) {
                Some(v) => Option::<[f64; 2]>::deserialize(v).map_err(serde::de::Error::custom)?,
                None => None,
            };
            out.insert(
                q,
                Estimate {
                    value,
                    ci: ci.map(|[l, h]| (l, h)),
                },
            );
        }
        Ok(Qualities(out))
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct TrialMetrics {
    pub n: usize,
    pub n_errors: usize,
    /// Every agreement metric of the task, defined or not.
    #[serde(flatten)]
    pub quality: Qualities,
    pub parse_failure_rate: Option<f64>,
    pub prompt_tokens_per_item: Option<f64>,
    pub completion_tokens_per_item: Option<f64>,
    /// Dollars per 1,000 verdicts, where every call has a cost.
    pub usd_per_1k_items: Option<f64>,
    /// Per request, at `latency_concurrency` requests in flight (see [`latency`]).
    pub latency_ms: Percentiles,
    pub ttft_ms: Percentiles,
    /// The load the latency figures were measured at: 1 for calls timed alone, a remote
    /// endpoint's `concurrency` for its calls; `None` when none was measured (a local trial
    /// whose calls were not timed alone yet).
    pub latency_concurrency: Option<u32>,
    /// Prompt tokens prefilled per second by the same calls ([`latency::prefill_rate`]).
    pub prefill_tokens_per_s: Option<f64>,
    pub confusion: Confusion,
    /// Pairwise only.
    pub position: Option<PositionBias>,
    /// Exact trials (every verdict one call with its distribution): agreement expected
    /// under the exact distributions ([`expected`]).
    pub expected: Option<Expected>,
}

/// A trial's agreement on one split of the items.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SplitScore {
    pub n: usize,
    pub n_errors: usize,
    #[serde(flatten)]
    pub quality: Qualities,
}

impl SplitScore {
    /// The agreement of `observations` (units numbered within the split).
    pub fn of(task: Task, observations: &[Observation], spec: &BootstrapSpec) -> SplitScore {
        let groups = group(observations);
        let units = scored_units(task, &groups);
        let n = groups.iter().filter(|g| g.verdict.is_some()).count();
        SplitScore {
            n,
            n_errors: groups.len() - n,
            quality: estimates(task, &units, spec),
        }
    }
}

/// A trial's agreement on the dev split, and on the test split where it judged it.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SplitScores {
    pub dev: SplitScore,
    pub test: Option<SplitScore>,
}

impl TrialMetrics {
    pub fn estimate(&self, q: Quality) -> Estimate {
        self.quality.get(q)
    }

    pub fn value(&self, q: Quality) -> Option<f64> {
        self.estimate(q).value
    }

    pub fn accuracy(&self) -> Option<f64> {
        self.value(Quality::Accuracy)
    }

    pub fn kappa(&self) -> Option<f64> {
        self.value(Quality::Kappa)
    }

    /// Prompt plus completion tokens per verdict.
    pub fn tokens_per_item(&self) -> Option<f64> {
        Some(self.prompt_tokens_per_item? + self.completion_tokens_per_item?)
    }
}

/// The calls on one item and repeat, reduced to one verdict.
#[derive(Debug, Clone)]
pub struct Verdicts<'a> {
    pub unit: usize,
    /// One call, or one per answer order: held inline (a million groups allocate nothing).
    pub calls: smallvec::SmallVec<[&'a Observation; 2]>,
    /// `None` when a call failed.
    pub verdict: Option<Verdict>,
}

/// Groups calls by item and repeat (first appearance order) and combines each group.
pub fn group(observations: &[Observation]) -> Vec<Verdicts<'_>> {
    const NONE: u32 = u32::MAX;
    let n_units = observations.iter().map(|o| o.unit + 1).max().unwrap_or(0);
    // Each unit's first group, and each group's next of the same unit (one per repeat):
    // units are numbered densely, and a million calls look their group up in a list.
    let mut first = vec![NONE; n_units];
    let mut next: Vec<u32> = Vec::new();
    let mut groups: Vec<Verdicts<'_>> = Vec::new();
    for o in observations {
        let mut at = first[o.unit];
        let mut last = NONE;
        while at != NONE && groups[at as usize].calls[0].repeat != o.repeat {
            last = at;
            at = next[at as usize];
        }
        if at == NONE {
            at = groups.len() as u32;
            groups.push(Verdicts {
                unit: o.unit,
                calls: smallvec::SmallVec::new(),
                verdict: None,
            });
            next.push(NONE);
            match last {
                NONE => first[o.unit] = at,
                l => next[l as usize] = at,
            }
        }
        groups[at as usize].calls.push(o);
    }
    for g in &mut groups {
        let in_order = |s: bool| g.calls.iter().find(|c| c.swapped == s);
        g.verdict = match (in_order(false), in_order(true)) {
            (Some(ab), Some(ba)) => ab.verdict.zip(ba.verdict).map(|(x, y)| {
                position::combine_as(ab.order, (x, ab.belief.as_ref()), (y, ba.belief.as_ref()))
            }),
            (Some(one), None) | (None, Some(one)) => one.verdict,
            (None, None) => None,
        };
    }
    groups
}

/// Each metric of `task` over verdicts grouped into units (items), with bootstrap intervals
/// that resample the units. A resample counts how often it drew each distinct verdict
/// ([`quality::Tally`]) rather than copying the verdicts it drew, from how many units of
/// each kind it drew ([`BootstrapSpec::for_each_count`]).
pub fn estimates(task: Task, units: &[Vec<Scored>], spec: &BootstrapSpec) -> Qualities {
    let counted = CountedUnits::new(units);
    let point = quality::compute_tally(task, counted.distinct.as_tally(&counted.all()));
    let mut resampled: Vec<Vec<Option<f64>>> = vec![Vec::new(); point.len()];
    let mut counts = Vec::new();
    let kinds = counted.kinds();
    spec.for_each_count(&kinds.sizes, |drawn| {
        counted.recount_kinds(&kinds, drawn, &mut counts);
        let values = quality::compute_tally(task, counted.distinct.as_tally(&counts));
        for (slot, (_, value)) in resampled.iter_mut().zip(values) {
            slot.push(value);
        }
    });
    Qualities(
        point
            .into_iter()
            .zip(resampled)
            .map(|((q, value), values)| {
                let ci = if spec.resamples > 0 {
                    spec.interval(values)
                } else {
                    None
                };
                (q, Estimate { value, ci })
            })
            .collect(),
    )
}

/// Units of scored verdicts as the numbers of their distinct values, for recounting by
/// kind ([`Self::kinds`], [`Self::recount_kinds`]).
pub struct CountedUnits {
    pub distinct: quality::Distinct,
    /// Unit u's verdicts are `ids[starts[u]..starts[u + 1]]`, by their number in
    /// `distinct`: one flat list.
    ids: Vec<u32>,
    starts: Vec<usize>,
}

impl CountedUnits {
    pub fn new(units: &[Vec<Scored>]) -> CountedUnits {
        let mut distinct = quality::Distinct::default();
        let mut ids = Vec::with_capacity(units.iter().map(Vec::len).sum());
        let mut starts = Vec::with_capacity(units.len() + 1);
        starts.push(0);
        for u in units {
            ids.extend(u.iter().map(|&s| distinct.id(s)));
            starts.push(ids.len());
        }
        CountedUnits {
            distinct,
            ids,
            starts,
        }
    }

    /// `values` laid out by unit already: unit u's are `values[starts[u]..starts[u + 1]]`.
    pub fn from_runs(values: impl Iterator<Item = Scored>, starts: Vec<usize>) -> CountedUnits {
        let mut distinct = quality::Distinct::default();
        let ids = values.map(|s| distinct.id(s)).collect();
        CountedUnits {
            distinct,
            ids,
            starts,
        }
    }

    /// A trial's scored verdicts by unit, as [`scored_by_unit`] lists them (`n_units`
    /// units, empty where it has none), laid out by a counting sort: no list per unit.
    pub fn by_unit(task: Task, observations: &[Observation], n_units: usize) -> CountedUnits {
        let judged: Vec<(usize, Scored)> = group(observations)
            .into_iter()
            .filter_map(|g| {
                Some((
                    g.unit,
                    Scored::new(task, g.calls[0].human, g.verdict?.label()),
                ))
            })
            .collect();
        let (order, starts) = unit_order(n_units, judged.iter().map(|&(u, _)| u));
        CountedUnits::from_runs(order.iter().map(|&i| judged[i].1), starts)
    }

    /// Unit `u`'s verdicts, by their number in `distinct`.
    pub fn unit(&self, u: usize) -> &[u32] {
        &self.ids[self.starts[u]..self.starts[u + 1]]
    }

    /// The units by kind: units with the same verdicts are alike.
    pub fn kinds(&self) -> Kinds {
        Kinds::new((0..self.starts.len() - 1).map(|u| self.unit(u)))
    }

    /// How often each distinct value occurs in a resample that drew `drawn[k]` units of
    /// each of `kinds` (kinds of these units, or finer), into `counts`.
    pub fn recount_kinds(&self, kinds: &Kinds, drawn: &[u64], counts: &mut Vec<f64>) {
        counts.clear();
        counts.resize(self.distinct.len(), 0.0);
        for (&unit, &d) in kinds.first.iter().zip(drawn) {
            for &id in self.unit(unit) {
                counts[id as usize] += d as f64;
            }
        }
    }

    /// How often each distinct value occurs over every unit.
    pub fn all(&self) -> Vec<f64> {
        let mut counts = vec![0.0; self.distinct.len()];
        for &id in &self.ids {
            counts[id as usize] += 1.0;
        }
        counts
    }
}

/// Things on units `0..n_units` laid out unit by unit, by a counting sort (no list per
/// unit): the things' places in that order, and where each unit's start (unit u's are
/// `order[starts[u]..starts[u + 1]]`, in the order given).
pub fn unit_order(
    n_units: usize,
    units: impl Iterator<Item = usize> + Clone,
) -> (Vec<usize>, Vec<usize>) {
    let mut starts = vec![0; n_units + 1];
    for u in units.clone() {
        starts[u + 1] += 1;
    }
    for u in 0..n_units {
        starts[u + 1] += starts[u];
    }
    let mut next = starts.clone();
    let mut order = vec![0; starts[n_units]];
    for (i, u) in units.enumerate() {
        order[next[u]] = i;
        next[u] += 1;
    }
    (order, starts)
}

/// A trial's scored verdicts by unit: `n_units` lists, the unit's index its place (empty
/// where it has none), where [`scored_units`] keeps only the units it has.
pub fn scored_by_unit(
    task: Task,
    observations: &[Observation],
    n_units: usize,
) -> Vec<Vec<Scored>> {
    let mut units = vec![Vec::new(); n_units];
    for g in group(observations) {
        if let Some(verdict) = g.verdict {
            units[g.unit].push(Scored::new(task, g.calls[0].human, verdict.label()));
        }
    }
    units
}

/// One metric of `task` over every verdict of `observations`, without an interval.
pub fn value_of(task: Task, observations: &[Observation], q: Quality) -> Option<f64> {
    let groups = group(observations);
    let all: Vec<Scored> = scored_units(task, &groups).into_iter().flatten().collect();
    quality::value(task, &all, q)
}

/// Judged verdicts as scored units, in first-appearance order of their items.
pub fn scored_units(task: Task, groups: &[Verdicts<'_>]) -> Vec<Vec<Scored>> {
    // Each item's place in `units`, by its (dense) unit number.
    let mut index: Vec<Option<usize>> =
        vec![None; groups.iter().map(|g| g.unit + 1).max().unwrap_or(0)];
    let mut units: Vec<Vec<Scored>> = Vec::new();
    for g in groups {
        let Some(verdict) = g.verdict else { continue };
        let human = g.calls[0].human;
        let i = *index[g.unit].get_or_insert_with(|| {
            units.push(Vec::with_capacity(1));
            units.len() - 1
        });
        units[i].push(Scored::new(task, human, verdict.label()));
    }
    units
}

/// Position bias over the items' calls in each answer order.
fn position_of(groups: &[Verdicts<'_>]) -> PositionBias {
    // Every group's calls in one list, each group a slice of it.
    let mut calls: Vec<(bool, Option<Label>)> = Vec::with_capacity(groups.len() * 2);
    let mut ends = Vec::with_capacity(groups.len());
    for g in groups {
        calls.extend(
            g.calls
                .iter()
                .map(|o| (o.swapped, o.verdict.and_then(|v| v.label()))),
        );
        ends.push(calls.len());
    }
    let starts = std::iter::once(0).chain(ends.iter().copied());
    position::position_bias(starts.zip(&ends).map(|(start, &end)| &calls[start..end]))
}

/// Computes a trial's metrics from its calls, its latency as `timing` says.
pub fn compute(
    task: Task,
    observations: &[Observation],
    timing: Timing<'_>,
    spec: &BootstrapSpec,
) -> TrialMetrics {
    let groups = group(observations);
    let judged: Vec<&Verdicts<'_>> = groups.iter().filter(|g| g.verdict.is_some()).collect();
    let n = judged.len();
    let ratio = |count: usize| (n > 0).then(|| count as f64 / n as f64);
    let per_item = |f: &dyn Fn(&Observation) -> f64| {
        (n > 0).then(|| {
            judged
                .iter()
                .flat_map(|g| &g.calls)
                .map(|o| f(o))
                .sum::<f64>()
                / n as f64
        })
    };
    let units = scored_units(task, &groups);
    let scored: Vec<Scored> = units.iter().flatten().copied().collect();
    let failures = judged
        .iter()
        .filter(|g| matches!(g.verdict, Some(Verdict::Failed(_))))
        .count();
    let calls: Vec<&Observation> = judged
        .iter()
        .flat_map(|g| g.calls.iter().copied())
        .collect();
    let all_priced = calls.iter().all(|o| o.cost_usd.is_some());
    let (latencies, ttfts, latency_concurrency, prefill_tokens_per_s): (Vec<f64>, Vec<f64>, _, _) =
        match timing {
            Timing::Calls { concurrency } => (
                calls.iter().map(|o| o.latency_ms).collect(),
                calls.iter().filter_map(|o| o.ttft_ms).collect(),
                (!calls.is_empty()).then_some(concurrency),
                latency::prefill_rate(calls.iter().map(|o| (o.prompt_tokens, o.ttft_ms))),
            ),
            Timing::Sampled { concurrency, timed } => (
                timed.iter().map(|t| t.latency_ms).collect(),
                timed.iter().filter_map(|t| t.ttft_ms).collect(),
                (!timed.is_empty()).then_some(concurrency),
                latency::prefill_rate(timed.iter().map(|t| (t.prompt_tokens, t.ttft_ms))),
            ),
        };
    let position = (task == Task::Pairwise).then(|| position_of(&groups));
    let exact: Option<Vec<(Label, &VerdictDistribution)>> = judged
        .iter()
        .map(|g| match g.calls.as_slice() {
            [o] => o.distribution.as_ref().map(|d| (o.human, d)),
            _ => None,
        })
        .collect();
    TrialMetrics {
        n,
        n_errors: groups.len() - n,
        quality: estimates(task, &units, spec),
        parse_failure_rate: ratio(failures),
        prompt_tokens_per_item: per_item(&|o| o.prompt_tokens as f64),
        completion_tokens_per_item: per_item(&|o| o.completion_tokens as f64),
        usd_per_1k_items: if all_priced {
            per_item(&|o| o.cost_usd.unwrap_or(0.0) * 1000.0)
        } else {
            None
        },
        latency_ms: Percentiles::of(&latencies, spec),
        ttft_ms: Percentiles::of(&ttfts, spec),
        latency_concurrency,
        prefill_tokens_per_s,
        confusion: Confusion::new(task, &scored),
        position,
        expected: exact
            .filter(|v| !v.is_empty())
            .map(|v| expected::expected(task, &v)),
    }
}

#[cfg(test)]
mod reference_tests;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Choice;
    use crate::verdict::FailureKind;

    fn obs(unit: usize, human: Label, verdict: Option<Verdict>, latency_ms: f64) -> Observation {
        Observation {
            order: crate::sweep::Order::Ab,
            unit,
            repeat: 0,
            swapped: false,
            human,
            verdict,
            prompt_tokens: 100,
            completion_tokens: 2,
            latency_ms,
            ttft_ms: Some(latency_ms / 2.0),
            cost_usd: None,
            distribution: None,
            belief: None,
        }
    }

    const A: Label = Label::Choice(Choice::A);
    const B: Label = Label::Choice(Choice::B);

    #[test]
    fn pairwise_trial() {
        let observations = vec![
            obs(0, A, Some(Verdict::Parsed(A)), 10.0),
            obs(1, A, Some(Verdict::Parsed(B)), 20.0),
            obs(2, B, Some(Verdict::Parsed(B)), 30.0),
            obs(3, B, Some(Verdict::Failed(FailureKind::NoLabel)), 40.0),
            obs(4, B, None, 1000.0),
        ];
        let m = compute(
            Task::Pairwise,
            &observations,
            Timing::Calls { concurrency: 1 },
            &BootstrapSpec::default(),
        );
        assert_eq!((m.n, m.n_errors), (4, 1));
        assert_eq!(m.accuracy(), Some(0.5));
        assert_eq!(m.parse_failure_rate, Some(0.25));
        // Pairs (A,A) (A,B) (B,B) (B,failed): po = 2/4; the judge's marginals are A 1/4,
        // B 2/4, failed 1/4, so pe = 2/4 * 1/4 + 2/4 * 2/4 = 3/8.
        let kappa = (0.5 - 3.0 / 8.0) / (1.0 - 3.0 / 8.0);
        assert!((m.kappa().unwrap() - kappa).abs() < 1e-12);
        let (lo, hi) = m.estimate(Quality::Accuracy).ci.unwrap();
        assert!(lo <= 0.5 && 0.5 <= hi);
        assert_eq!(m.prompt_tokens_per_item, Some(100.0));
        assert_eq!(m.usd_per_1k_items, None);
        assert_eq!(m.latency_ms.p50, Some(25.0));
        assert_eq!(m.ttft_ms.p50, Some(12.5));
        // Nobody said tie: rows and columns A and B, then parse failures.
        assert_eq!(m.confusion.counts, vec![vec![1, 1, 0], vec![0, 1, 1]]);
        let json = serde_json::to_value(&m).unwrap();
        assert_eq!(json["accuracy"], 0.5);
        assert!(json["kappa_ci"].is_array());
        assert_eq!(json["spearman"], serde_json::Value::Null);
    }

    #[test]
    fn both_orders_make_one_verdict_and_cost_twice() {
        let mut swapped = obs(0, A, Some(Verdict::Parsed(B)), 10.0);
        swapped.swapped = true;
        let observations = vec![obs(0, A, Some(Verdict::Parsed(A)), 10.0), swapped];
        let m = compute(
            Task::Pairwise,
            &observations,
            Timing::Calls { concurrency: 1 },
            &BootstrapSpec::default(),
        );
        assert_eq!(m.n, 1);
        assert_eq!(m.prompt_tokens_per_item, Some(200.0));
        // Disagreement across orders is a tie, which the human (A) did not say.
        assert_eq!(m.accuracy(), Some(0.0));
        let position = m.position.unwrap();
        assert_eq!(position.consistency, Some(0.0));
        // Both calls chose the answer shown first.
        assert_eq!(position.first_preferred, Some(1.0));
    }

    /// Intervals from recounting distinct verdicts are those of copying the verdicts each
    /// resample drew (every verdict counted once, as before tallies), on the same seed:
    /// exactly, but for the correlations, whose sums of non-integer values run in another
    /// order.
    #[test]
    fn recounted_resamples_give_the_copied_resamples_values() {
        let mut rng = crate::rng::SplitMix64::new(7);
        let task = Task::Single {
            scale_min: 1,
            scale_max: 5,
        };
        let human_means = [1.0, 2.0, 2.3333, 3.0, 3.6667, 4.0, 4.6667, 5.0];
        let units: Vec<Vec<Scored>> = (0..300)
            .map(|_| {
                let human = human_means[rng.below(8) as usize];
                (0..1 + rng.below(3))
                    .map(|_| {
                        let judge = match rng.below(12) {
                            0 => None,
                            d => Some(Label::Rating((1 + (d + human as u64) % 5) as f64)),
                        };
                        Scored::new(task, Label::Rating(human), judge)
                    })
                    .collect()
            })
            .collect();
        let spec = BootstrapSpec {
            resamples: 200,
            ..BootstrapSpec::default()
        };
        let recounted = estimates(task, &units, &spec);
        let all: Vec<Scored> = units.iter().flatten().copied().collect();
        for &q in Quality::for_task(task) {
            // The values drawn once each, and every other value of the set zero times: a
            // tally can count any of them (which decides whether accuracy is defined).
            let copied = |sample: &[Scored]| {
                let values: Vec<Scored> = sample.iter().chain(&all).copied().collect();
                let counts: Vec<f64> = (0..values.len())
                    .map(|i| if i < sample.len() { 1.0 } else { 0.0 })
                    .collect();
                let tally = quality::Tally {
                    values: &values,
                    counts: &counts,
                };
                quality::value_tally(task, tally, q)
            };
            // The same resamples, each as the units it drew: each kind's first unit, as
            // many times as the resample drew units of that kind.
            let kinds = CountedUnits::new(&units).kinds();
            let mut values = Vec::new();
            spec.for_each_count(&kinds.sizes, |drawn| {
                let sample: Vec<Scored> = kinds
                    .first
                    .iter()
                    .zip(drawn)
                    .flat_map(|(&u, &d)| std::iter::repeat_n(&units[u], d as usize).flatten())
                    .copied()
                    .collect();
                values.push(copied(&sample));
            });
            let ci = spec.interval(values);
            let got = recounted.get(q);
            if q == Quality::Accuracy {
                // The labels are means: exact agreement is not defined.
                assert_eq!(got, Estimate::default());
                continue;
            }
            // Sums of non-integer ratings add in another order.
            let exact = !matches!(
                q,
                Quality::Spearman | Quality::Pearson | Quality::MeanAbsoluteError
            );
            let same = |a: f64, b: f64| if exact { a == b } else { (a - b).abs() < 1e-12 };
            let (value, want) = (got.value.unwrap(), copied(&all).unwrap());
            assert!(same(value, want), "{q}: {value} != {want}");
            let ((lo, hi), (want_lo, want_hi)) = (got.ci.unwrap(), ci.unwrap());
            assert!(
                same(lo, want_lo) && same(hi, want_hi),
                "{q}: [{lo}, {hi}] != [{want_lo}, {want_hi}]"
            );
        }
    }

    #[test]
    fn empty_trial_has_no_numbers() {
        let m = compute(
            Task::Pairwise,
            &[],
            Timing::Calls { concurrency: 1 },
            &BootstrapSpec::default(),
        );
        assert_eq!(m.n, 0);
        assert_eq!(m.accuracy(), None);
        assert_eq!(m.estimate(Quality::Kappa), Estimate::default());
        assert_eq!(m.latency_ms, Percentiles::default());
    }
}
