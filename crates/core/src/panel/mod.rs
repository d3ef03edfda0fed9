//! Panels: several trials of one experiment vote on each item. Composed from stored
//! verdicts with no new calls ([`crate::experiment::PanelSpec`] declares one).
//!
//! Each member's calls on an item and repeat are first one verdict, as the metrics make it
//! (both answer orders combined); the panel's verdict is then its members' by the rule:
//! - **majority**: the verdict most members gave (ratings by category); a split vote is a
//!   tie (pairwise) or the first listed member's among the most given. A member's parse
//!   failure abstains; the panel fails to parse only where every member did;
//! - **mean** (ratings): the mean of the members' scores;
//! - **distribution** (exact trials): the most probable outcome of the mean of the members'
//!   exact distributions (a parse failure where failing is at least as probable as any
//!   verdict), which the panel's expected metrics read; its confidence is the mean of the
//!   members' beliefs.
//!
//! A panel judges an item and repeat that every member judged; where a member's call
//! failed, so did the panel's. Its cost is its members' sum (every member is asked), its
//! latency per request their maximum (they are asked at once): the k-th request takes each
//! member's k-th timed request, a deterministic stand-in for pairing them at random, and
//! only where every member was timed at the same load. No time to first token: the panel's
//! answer is its slowest member's whole one.
//!
//! Beside its metrics a panel reports how much its members agree with each other
//! (Krippendorff's alpha over them: nominal for choices, ordinal for ratings, with a
//! bootstrap interval over items) and each member's contribution: the panel's metric
//! without it, and the paired difference.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;

use crate::composed::Part;
use crate::dataset::{Choice, Label, Task};
use crate::experiment::{Experiment, PanelRule, PanelSpec, Ties};
use crate::metrics::alpha::{self, Level};
use crate::metrics::quality::Scored;
use crate::metrics::{
    self, paired, position, BootstrapSpec, Estimate, Observation, Percentiles, Quality, SplitScore,
    SplitScores, TrialMetrics,
};
use crate::sampling::VerdictDistribution;
use crate::sweep::{Order, TrialParams};
use crate::trust::belief::{same, ConfidenceKind};
use crate::trust::calibration::{self, Calibration};
use crate::trust::{confidence, Belief};
use crate::verdict::{FailureKind, Verdict};

/// A virtual trial: its members' verdicts combined by a rule. Composed, not run.
#[derive(Debug, Clone, Serialize)]
pub struct Panel {
    pub name: String,
    /// Store ids of its trials, in the order ties read them.
    pub members: Vec<i64>,
    pub rule: PanelRule,
    /// What a split vote gives (majority panels).
    pub ties: Option<Ties>,
    /// On the dev split: agreement of the panel's verdicts; cost as its members' sum,
    /// latency per request as their maximum.
    #[serde(flatten)]
    pub metrics: TrialMetrics,
    /// Its agreement on each split: `test` where every member judged the test split.
    pub split_scores: SplitScores,
    /// A distribution panel's calibration (its confidence is the mean belief).
    pub calibration: Option<Calibration>,
    /// How much the members agree with each other on the dev split.
    pub members_agreement: MembersAgreement,
    /// The metric contributions are measured by (the experiment's selection metric).
    pub contribution_metric: Quality,
    /// Per member, in `members`' order: the panel without it.
    pub contributions: Vec<Contribution>,
    /// Its verdicts as the metrics see them, one per item and repeat.
    #[serde(skip)]
    pub observations: Vec<Observation>,
    #[serde(skip)]
    pub test_observations: Vec<Observation>,
    #[serde(skip)]
    pub latencies: Vec<f64>,
}

/// Krippendorff's alpha over a panel's members.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct MembersAgreement {
    pub level: Level,
    pub alpha: Estimate,
    /// Verdicts (items and repeats) at least two members gave.
    pub n: usize,
}

/// What one member adds to its panel.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Contribution {
    pub member: i64,
    /// The panel's metric without this member (with one member left, that member's own).
    pub without: Estimate,
    /// The panel's metric minus `without`, with its paired bootstrap interval.
    pub difference: Estimate,
}

/// Whether `spec` can be composed from `trials` (store id and parameters of each trial of
/// `experiment`): every member is one of them, the rule fits the task, and a distribution
/// panel's members are exact. The message says what is wrong.
pub fn check(
    spec: &PanelSpec,
    experiment: &Experiment,
    task: Task,
    trials: &[(i64, &TrialParams)],
) -> Result<(), String> {
    spec.check_task(task)?;
    for &m in &spec.members {
        let Some((_, params)) = trials.iter().find(|(id, _)| *id == m) else {
            let ids: Vec<String> = trials.iter().map(|(id, _)| id.to_string()).collect();
            return Err(format!(
                "members: trial {m} is not a trial of this experiment (its trials are {})",
                ids.join(", ")
            ));
        };
        let exact = experiment.exact(params);
        if spec.rule == PanelRule::Distribution && !exact {
            return Err(format!(
                "rule \"distribution\" averages exact distributions, and trial {m} (judge {:?}) is not exact: use \"majority\"",
                params.judge
            ));
        }
    }
    Ok(())
}

impl Voting {
    /// What each member adds: the panel's `metric` against the panel without it, on the
    /// dev split.
    fn contributions(
        &self,
        members: &[Part<'_>],
        observations: &[Observation],
        metric: Quality,
        bootstrap: &BootstrapSpec,
    ) -> Vec<Contribution> {
        let task = self.task;
        (0..members.len())
            .map(|i| {
                let rest: Vec<&[Observation]> = members
                    .iter()
                    .enumerate()
                    .filter(|&(j, _)| j != i)
                    .map(|(_, m)| m.dev)
                    .collect();
                let without = self.compose(&rest);
                let compared = paired::compare(task, observations, &without, metric, bootstrap);
                Contribution {
                    member: members[i].id,
                    without: SplitScore::of(task, &without, bootstrap)
                        .quality
                        .get(metric),
                    difference: compared.difference,
                }
            })
            .collect()
    }
}

impl Panel {
    /// Composes `members` by `spec`'s rule; `metric` measures the contributions.
    pub fn new(
        task: Task,
        spec: &PanelSpec,
        members: &[Part<'_>],
        metric: Quality,
        bootstrap: &BootstrapSpec,
    ) -> Panel {
        let rule = Voting {
            task,
            rule: spec.rule,
            ties: spec.ties_for(task),
        };
        let dev: Vec<&[Observation]> = members.iter().map(|m| m.dev).collect();
        let observations = rule.compose(&dev);
        let latencies = latencies(members);
        let same_load = members
            .windows(2)
            .all(|w| w[0].metrics.latency_concurrency == w[1].metrics.latency_concurrency);
        let timing = metrics::Timing::Sampled {
            concurrency: members[0].metrics.latency_concurrency.unwrap_or(1),
            timed: &[],
        };
        let mut m = metrics::compute(task, &observations, timing, bootstrap);
        m.latency_ms = if same_load && !latencies.is_empty() {
            Percentiles::of(&latencies, bootstrap)
        } else {
            Percentiles::default()
        };
        m.latency_concurrency = (same_load && !latencies.is_empty())
            .then_some(members[0].metrics.latency_concurrency)
            .flatten();
        m.ttft_ms = Percentiles::default();
        let test_observations = if members.iter().all(|m| !m.test.is_empty()) {
            let test: Vec<&[Observation]> = members.iter().map(|m| m.test).collect();
            rule.compose(&test)
        } else {
            Vec::new()
        };
        let calibration = match confidence::judged(task, &observations) {
            (Some(kind), judged) => calibration::calibration(kind, &judged, bootstrap),
            (None, _) => None,
        };
        let contributions = rule.contributions(members, &observations, metric, bootstrap);
        Panel {
            name: spec.name.clone(),
            members: members.iter().map(|m| m.id).collect(),
            rule: spec.rule,
            ties: (spec.rule == PanelRule::Majority).then_some(rule.ties),
            split_scores: SplitScores {
                dev: SplitScore {
                    n: m.n,
                    n_errors: m.n_errors,
                    quality: m.quality.clone(),
                },
                test: (!test_observations.is_empty())
                    .then(|| SplitScore::of(task, &test_observations, bootstrap)),
            },
            metrics: m,
            calibration,
            members_agreement: members_agreement(task, &dev, bootstrap),
            contribution_metric: metric,
            contributions,
            observations,
            test_observations,
            latencies,
        }
    }
}

/// A rule applied to a task.
#[derive(Debug, Clone, Copy)]
struct Voting {
    task: Task,
    rule: PanelRule,
    ties: Ties,
}

/// One member's verdict on an item and repeat.
struct Vote<'a> {
    calls: &'a [&'a Observation],
    verdict: Option<Verdict>,
}

impl Voting {
    /// The panel's verdicts: one observation per item and repeat that every member judged,
    /// in the first member's order.
    fn compose(&self, members: &[&[Observation]]) -> Vec<Observation> {
        let grouped: Vec<Vec<metrics::Verdicts<'_>>> =
            members.iter().map(|m| metrics::group(m)).collect();
        let index: Vec<HashMap<(usize, u32), usize>> = grouped
            .iter()
            .map(|groups| {
                groups
                    .iter()
                    .enumerate()
                    .map(|(i, g)| ((g.unit, g.calls[0].repeat), i))
                    .collect()
            })
            .collect();
        let Some(first) = grouped.first() else {
            return Vec::new();
        };
        first
            .iter()
            .filter_map(|g| {
                let key = (g.unit, g.calls[0].repeat);
                let votes: Vec<Vote<'_>> = grouped
                    .iter()
                    .zip(&index)
                    .map(|(groups, index)| {
                        let v = &groups[*index.get(&key)?];
                        Some(Vote {
                            calls: &v.calls,
                            verdict: v.verdict,
                        })
                    })
                    .collect::<Option<_>>()?;
                Some(self.observation(key, &votes))
            })
            .collect()
    }

    /// The panel's observation of one item and repeat from its members' votes.
    fn observation(&self, (unit, repeat): (usize, u32), votes: &[Vote<'_>]) -> Observation {
        let calls = votes.iter().flat_map(|v| v.calls.iter().copied());
        let all: Vec<&Observation> = calls.collect();
        let cost_usd = all
            .iter()
            .map(|o| o.cost_usd)
            .sum::<Option<f64>>()
            .filter(|_| !all.is_empty());
        let failed_call = votes.iter().any(|v| v.verdict.is_none());
        let (verdict, distribution, belief) = if failed_call {
            (None, None, None)
        } else {
            self.decide(votes)
        };
        Observation {
            unit,
            repeat,
            swapped: false,
            // The panel's verdict is one already: its members' orders are combined.
            order: Order::Ab,
            human: all[0].human,
            verdict,
            prompt_tokens: all.iter().map(|o| o.prompt_tokens).sum(),
            completion_tokens: all.iter().map(|o| o.completion_tokens).sum(),
            latency_ms: all.iter().map(|o| o.latency_ms).fold(0.0, f64::max),
            ttft_ms: None,
            cost_usd,
            distribution,
            belief,
        }
    }

    /// The verdict of votes none of whose calls failed, and for a distribution panel the
    /// mean distribution and belief it comes from.
    fn decide(
        &self,
        votes: &[Vote<'_>],
    ) -> (Option<Verdict>, Option<VerdictDistribution>, Option<Belief>) {
        let task = self.task;
        let labels: Vec<Label> = votes
            .iter()
            .filter_map(|v| v.verdict.and_then(|v| v.label()))
            .collect();
        let failure = || first_failure(votes);
        match self.rule {
            PanelRule::Majority => {
                let verdict = majority(task, &labels, self.ties).map(Verdict::Parsed);
                (Some(verdict.unwrap_or_else(failure)), None, None)
            }
            PanelRule::Mean => {
                let scores: Vec<f64> = labels
                    .iter()
                    .filter_map(|l| match l {
                        Label::Rating(r) => Some(*r),
                        Label::Choice(_) => None,
                    })
                    .collect();
                let verdict = (!scores.is_empty()).then(|| {
                    Verdict::Parsed(Label::Rating(
                        scores.iter().sum::<f64>() / scores.len() as f64,
                    ))
                });
                (Some(verdict.unwrap_or_else(failure)), None, None)
            }
            PanelRule::Distribution => distribution_vote(task, votes, &labels),
        }
    }
}

/// Every member failed to parse: the panel fails as its first member did.
fn first_failure(votes: &[Vote<'_>]) -> Verdict {
    votes
        .iter()
        .find_map(|v| match v.verdict {
            Some(Verdict::Failed(kind)) => Some(Verdict::Failed(kind)),
            _ => None,
        })
        .unwrap_or(Verdict::Failed(FailureKind::NoLabel))
}

/// The `distribution` rule: the mean of the members' exact distributions, its most
/// probable outcome, and the mean of their beliefs where every member has one; the vote
/// decides where no member has a distribution.
fn distribution_vote(
    task: Task,
    votes: &[Vote<'_>],
    labels: &[Label],
) -> (Option<Verdict>, Option<VerdictDistribution>, Option<Belief>) {
    let distributions: Vec<VerdictDistribution> = votes
        .iter()
        .filter_map(|v| match v.calls {
            // A debiased verdict is drawn from nothing: it is the likeliest under the two
            // orders' beliefs, whatever their samples said.
            [o, _] if o.order == Order::Debiased => {
                o.distribution.as_ref().and(v.verdict).map(certain)
            }
            calls => combined_distribution(calls, |o| o.distribution.clone()),
        })
        .collect();
    let beliefs: Vec<VerdictDistribution> = votes
        .iter()
        .filter_map(|v| {
            combined_distribution(v.calls, |o| {
                o.belief.as_ref().map(|b| VerdictDistribution {
                    labels: b.labels.clone(),
                    failed: 0.0,
                })
            })
        })
        .collect();
    let Some(mean) = mean_distribution(&distributions) else {
        // No member has an exact distribution here: the vote decides.
        let verdict = majority(task, labels, Ties::default_for(task));
        return (
            Some(verdict.map_or_else(|| first_failure(votes), Verdict::Parsed)),
            None,
            None,
        );
    };
    // The most probable outcome: a parse failure where no verdict is more
    // probable than failing, as an exact trial at temperature 0 would say.
    let mode = mean
        .labels
        .iter()
        .fold(None::<(Label, f64)>, |best, &(l, p)| match best {
            Some((_, q)) if q >= p => best,
            _ => Some((l, p)),
        })
        .filter(|&(_, p)| p > mean.failed)
        .map(|(l, _)| l);
    let belief = (beliefs.len() == votes.len())
        .then(|| mean_distribution(&beliefs))
        .flatten()
        .and_then(|b| Belief::normalised(ConfidenceKind::Exact, b.labels));
    let verdict = mode.map_or_else(|| first_failure(votes), Verdict::Parsed);
    (Some(verdict), Some(mean), belief)
}

/// The label most of `labels` are (ratings by category); a split as `ties` says. None
/// where there is no label.
fn majority(task: Task, labels: &[Label], ties: Ties) -> Option<Label> {
    let mut counts: Vec<(Label, usize)> = Vec::new();
    for &l in labels {
        match counts.iter_mut().find(|(c, _)| same(task, *c, l)) {
            Some((_, n)) => *n += 1,
            None => counts.push((l, 1)),
        }
    }
    let top = counts.iter().map(|(_, n)| *n).max()?;
    let leaders: Vec<Label> = counts
        .iter()
        .filter(|(_, n)| *n == top)
        .map(|(l, _)| *l)
        .collect();
    match (leaders.as_slice(), ties) {
        ([one], _) => Some(*one),
        (_, Ties::Tie) if task == Task::Pairwise => Some(Label::Choice(Choice::Tie)),
        // The first member's label among the leaders: `counts` is in the members' order.
        (_, _) => Some(leaders[0]),
    }
}

/// A distribution certain of `verdict`.
fn certain(verdict: Verdict) -> VerdictDistribution {
    match verdict {
        Verdict::Parsed(label) => VerdictDistribution {
            labels: vec![(label, 1.0)],
            failed: 0.0,
        },
        Verdict::Failed(_) => VerdictDistribution {
            labels: Vec::new(),
            failed: 1.0,
        },
    }
}

/// One member's distribution over its verdict on an item and repeat (`of` reads each
/// call's): a call's own, or for both answer orders, the distribution of the verdict
/// the two combine into (`position::combine`, the orders drawn independently; a failure
/// of either is a failure); for the `debiased` order, the two orders' mean.
fn combined_distribution(
    calls: &[&Observation],
    of: impl Fn(&Observation) -> Option<VerdictDistribution>,
) -> Option<VerdictDistribution> {
    match calls {
        [one] => of(one),
        [first, second] if first.order == Order::Debiased => {
            mean_distribution(&[of(first)?, of(second)?])
        }
        [first, second] => {
            let (x, y) = (of(first)?, of(second)?);
            let mut out = VerdictDistribution {
                labels: Vec::new(),
                failed: x.failed + y.failed - x.failed * y.failed,
            };
            for &(a, pa) in &x.labels {
                for &(b, pb) in &y.labels {
                    let c = position::combine(Verdict::Parsed(a), Verdict::Parsed(b))
                        .label()
                        .expect("two verdicts combine into one");
                    add(&mut out.labels, c, pa * pb);
                }
            }
            Some(out)
        }
        _ => None,
    }
}

fn add(labels: &mut Vec<(Label, f64)>, label: Label, p: f64) {
    match labels.iter_mut().find(|(l, _)| *l == label) {
        Some((_, q)) => *q += p,
        None => labels.push((label, p)),
    }
}

/// The mean of `distributions`, labels in the order first met; none of none.
fn mean_distribution(distributions: &[VerdictDistribution]) -> Option<VerdictDistribution> {
    if distributions.is_empty() {
        return None;
    }
    let n = distributions.len() as f64;
    let mut out = VerdictDistribution::default();
    for d in distributions {
        for &(l, p) in &d.labels {
            add(&mut out.labels, l, p / n);
        }
        out.failed += d.failed / n;
    }
    Some(out)
}

/// Per-request latencies of a panel: the k-th takes the maximum of each member's k-th
/// timed request (cycling), as many as the most timed member has. Empty where a member
/// has none.
pub fn latencies(members: &[Part<'_>]) -> Vec<f64> {
    if members.is_empty() || members.iter().any(|m| m.latencies.is_empty()) {
        return Vec::new();
    }
    let n = members.iter().map(|m| m.latencies.len()).max().unwrap_or(0);
    (0..n)
        .map(|k| {
            members
                .iter()
                .map(|m| m.latencies[k % m.latencies.len()])
                .fold(f64::NEG_INFINITY, f64::max)
        })
        .collect()
}

/// Krippendorff's alpha over the members' verdicts (one unit per item and repeat, a parse
/// failure missing), with a bootstrap interval that resamples items.
fn members_agreement(
    task: Task,
    members: &[&[Observation]],
    spec: &BootstrapSpec,
) -> MembersAgreement {
    let level = match task {
        Task::Pairwise => Level::Nominal,
        Task::Single { .. } => Level::Ordinal,
    };
    // Each item's units: per repeat, the members' values.
    let mut by_item: BTreeMap<usize, BTreeMap<u32, Vec<f64>>> = BTreeMap::new();
    for m in members {
        for g in metrics::group(m) {
            let Some(label) = g.verdict.and_then(|v| v.label()) else {
                continue;
            };
            let value = Scored::new(task, g.calls[0].human, Some(label))
                .judge
                .map(|(code, _)| code as f64)
                .expect("a label scores");
            by_item
                .entry(g.unit)
                .or_default()
                .entry(g.calls[0].repeat)
                .or_default()
                .push(value);
        }
    }
    let items: Vec<Vec<Vec<f64>>> = by_item
        .into_values()
        .map(|repeats| repeats.into_values().collect())
        .collect();
    let n = items.iter().flatten().filter(|u| u.len() >= 2).count();
    let alpha_of = |idx: &mut dyn Iterator<Item = usize>| {
        let units: Vec<&Vec<f64>> = idx.flat_map(|i| &items[i]).collect();
        alpha::krippendorff_alpha(&units, level)
    };
    let value = alpha_of(&mut (0..items.len()));
    let mut resampled = Vec::new();
    if spec.resamples > 0 && value.is_some() {
        spec.for_each_resample(items.len(), |idx| {
            resampled.push(alpha_of(&mut idx.iter().copied()));
        });
    }
    MembersAgreement {
        level,
        alpha: Estimate {
            value,
            ci: if resampled.is_empty() {
                None
            } else {
                spec.interval(resampled)
            },
        },
        n,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Label = Label::Choice(Choice::A);
    const B: Label = Label::Choice(Choice::B);
    const TIE: Label = Label::Choice(Choice::Tie);

    fn voting(rule: PanelRule, ties: Ties) -> Voting {
        Voting {
            task: Task::Pairwise,
            rule,
            ties,
        }
    }

    #[test]
    fn a_majority_and_its_ties() {
        let p = Task::Pairwise;
        assert_eq!(majority(p, &[A, B, A], Ties::Tie), Some(A));
        assert_eq!(majority(p, &[A, B], Ties::Tie), Some(TIE));
        assert_eq!(majority(p, &[B, A], Ties::First), Some(B));
        assert_eq!(majority(p, &[A, B, TIE], Ties::First), Some(A));
        assert_eq!(majority(p, &[], Ties::Tie), None);
        let r = Task::Single {
            scale_min: 1,
            scale_max: 5,
        };
        let s = Label::Rating;
        assert_eq!(
            majority(r, &[s(4.0), s(2.0), s(2.0)], Ties::First),
            Some(s(2.0))
        );
        assert_eq!(majority(r, &[s(4.0), s(2.0)], Ties::First), Some(s(4.0)));
    }

    #[test]
    fn members_vote_on_what_all_of_them_judged() {
        let m1 = vec![
            Observation::verdict(0, A, A),
            Observation::verdict(1, A, B),
            Observation::verdict(2, B, B),
            Observation {
                verdict: Some(Verdict::Failed(FailureKind::NoLabel)),
                ..Observation::verdict(3, B, B)
            },
        ];
        let m2 = vec![
            Observation::verdict(0, A, B),
            Observation::verdict(1, A, B),
            Observation {
                verdict: None,
                ..Observation::verdict(2, B, B)
            },
            Observation::verdict(3, B, A),
        ];
        // The third member never judged item 3.
        let m3 = vec![
            Observation::verdict(0, A, A),
            Observation::verdict(1, A, A),
            Observation::verdict(2, B, B),
        ];
        let panel = voting(PanelRule::Majority, Ties::Tie).compose(&[&m1, &m2, &m3]);
        let verdicts: Vec<(usize, Option<Verdict>)> =
            panel.iter().map(|o| (o.unit, o.verdict)).collect();
        assert_eq!(
            verdicts,
            vec![
                (0, Some(Verdict::Parsed(A))),
                (1, Some(Verdict::Parsed(B))),
                // A member's call failed: the panel's did.
                (2, None),
            ]
        );
        // Two members: item 3's parse failure abstains, and the other decides.
        let two = voting(PanelRule::Majority, Ties::Tie).compose(&[&m1, &m2]);
        assert_eq!(two[3].verdict, Some(Verdict::Parsed(A)));
        // Item 0 splits A against B: a tie, or the first member's.
        assert_eq!(two[0].verdict, Some(Verdict::Parsed(TIE)));
        let first = voting(PanelRule::Majority, Ties::First).compose(&[&m1, &m2]);
        assert_eq!(first[0].verdict, Some(Verdict::Parsed(A)));
    }

    #[test]
    fn a_distribution_panel_averages_exact_distributions() {
        let exact = |unit: usize, labels: Vec<(Label, f64)>, failed: f64| {
            let d = VerdictDistribution { labels, failed };
            Observation {
                belief: Belief::exact(&d),
                distribution: Some(d),
                ..Observation::verdict(unit, A, A)
            }
        };
        let m1 = vec![exact(0, vec![(A, 0.9), (B, 0.1)], 0.0)];
        let m2 = vec![exact(0, vec![(B, 0.6), (A, 0.2)], 0.2)];
        let panel = voting(PanelRule::Distribution, Ties::Tie).compose(&[&m1, &m2]);
        let d = panel[0].distribution.as_ref().unwrap();
        assert_eq!(d.labels, vec![(A, 0.55), (B, 0.35)]);
        assert!((d.failed - 0.1).abs() < 1e-12);
        assert_eq!(panel[0].verdict, Some(Verdict::Parsed(A)));
        // Its belief is the mean of the members' beliefs at temperature 1.
        let b = panel[0].belief.as_ref().unwrap();
        assert!((b.p(Task::Pairwise, A) - (0.9 + 0.25) / 2.0).abs() < 1e-12);
        // Failing is the most probable outcome: a parse failure, as at temperature 0.
        let m1 = vec![exact(0, vec![(A, 0.1)], 0.9)];
        let m2 = vec![exact(0, vec![(B, 0.3)], 0.7)];
        let panel = voting(PanelRule::Distribution, Ties::Tie).compose(&[&m1, &m2]);
        assert!(matches!(panel[0].verdict, Some(Verdict::Failed(_))));
    }

    #[test]
    fn both_orders_combine_before_the_vote() {
        let call = |swapped: bool, verdict: Label| Observation {
            swapped,
            ..Observation::verdict(0, A, verdict)
        };
        // The first member says A in one order and B in the other: a tie of its own.
        let m1 = vec![call(false, A), call(true, B)];
        let m2 = vec![call(false, A)];
        let m3 = vec![call(false, B)];
        let panel = voting(PanelRule::Majority, Ties::First).compose(&[&m1, &m2, &m3]);
        assert_eq!(panel.len(), 1);
        // Votes tie, A, B: a three-way split, which the first member's tie decides.
        assert_eq!(panel[0].verdict, Some(Verdict::Parsed(TIE)));
    }

    #[test]
    fn latency_is_the_slowest_members_and_cost_their_sum() {
        let m = TrialMetrics::default();
        let part = |id: i64, latencies: &'static [f64]| Part {
            id,
            dev: &[],
            test: &[],
            latencies,
            metrics: &m,
        };
        let l = latencies(&[part(1, &[10.0, 30.0]), part(2, &[20.0])]);
        assert_eq!(l, vec![20.0, 30.0]);
        assert!(latencies(&[part(1, &[1.0]), part(2, &[])]).is_empty());
        let priced = |unit: usize, usd: f64, tokens: u32| Observation {
            cost_usd: Some(usd),
            prompt_tokens: tokens,
            ..Observation::verdict(unit, A, A)
        };
        let panel = voting(PanelRule::Majority, Ties::Tie)
            .compose(&[&[priced(0, 0.5, 10)], &[priced(0, 0.25, 5)]]);
        assert_eq!(panel[0].cost_usd, Some(0.75));
        assert_eq!(panel[0].prompt_tokens, 15);
    }
}

#[cfg(test)]
mod reference_tests;
