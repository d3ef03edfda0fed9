//! A race's decision after a round: which trials are clearly worse than the leader.
//!
//! A race judges the dev items in rounds, every surviving trial on the same items. After a
//! round, the leader is the trial that [`selection::pick`] chooses on the items judged so
//! far, and every other survivor is compared with it on the items both have: the
//! difference in the selection metric, with a paired jackknife standard error over items
//! and a Student t test on it (for accuracy this is the paired t test on per-item
//! differences that irace's `t-test-holm` runs; the jackknife makes it apply to kappa and
//! the correlations, which are not per-item means). The p-values are adjusted together by
//! Holm's step-down method, so that each round drops a trial that is in truth as good as
//! the leader with probability at most `alpha`. A trial is dropped when its comparison is
//! rejected and it is behind.
//!
//! Trials of one exact group share their forward passes, so dropping one of them saves
//! nothing: a group is dropped only when all its survivors are. The decision depends on
//! nothing but the verdicts of the round's items, so a resumed race makes it again alike.

use serde::Serialize;

use crate::dataset::Task;
use crate::experiment::Selection;
use crate::metrics::{self, quality, Observation, Quality, Scored};
use crate::selection::{self, Ties};

/// One round of a race over the dev split.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    /// From 1.
    pub round: u32,
    pub n_rounds: u32,
    /// Dev items judged by the end of the round: the first `n_items` of the split.
    pub n_items: usize,
    /// Whether it drops trials: from `min_items` on, and never the last round (the dev
    /// split is then judged, and the selection chooses among the survivors).
    pub decides: bool,
}

impl Round {
    /// The round's decision among `candidates` (see [`decide`]); a round that does not
    /// decide only measures them, with no leader.
    pub fn decision(
        &self,
        task: Task,
        selection: &Selection,
        candidates: &[&[Observation]],
        ties: &[Ties],
        groups: &[usize],
    ) -> Decision {
        if self.decides {
            decide(
                task,
                selection.metric,
                selection.alpha,
                candidates,
                ties,
                groups,
            )
        } else {
            Decision {
                leader: None,
                standings: measure(task, selection.metric, candidates),
            }
        }
    }
}

/// The rounds of a race over `n_dev` dev items: `selection.round` items each, the last
/// one shorter.
pub fn rounds(n_dev: usize, selection: &Selection) -> impl Iterator<Item = Round> {
    let per_round = selection.round.max(1);
    let n_rounds = n_dev.div_ceil(per_round) as u32;
    let min_items = selection.min_items;
    (1..=n_rounds).map(move |round| {
        let n_items = (round as usize * per_round).min(n_dev);
        Round {
            round,
            n_rounds,
            n_items,
            decides: n_items >= min_items && round < n_rounds,
        }
    })
}

/// One trial's standing after a round.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Standing {
    /// Its index among the candidates.
    pub trial: usize,
    /// Its metric on the round's items.
    pub value: Option<f64>,
    /// Its metric minus the leader's, on the items both have, with the jackknife standard
    /// error and the test's two-sided p-value (none for the leader).
    pub difference: Option<f64>,
    pub std_error: Option<f64>,
    pub p_value: Option<f64>,
    /// The p-value it had to reach to be dropped (Holm).
    pub threshold: Option<f64>,
    pub dropped: bool,
}

/// A trial's standing after a round, as stored: what the race's chart and its record of
/// drops read.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RoundStanding {
    pub trial_id: i64,
    /// From 1.
    pub round: u32,
    /// Dev items judged by the end of the round.
    pub n_items: usize,
    pub leader: bool,
    pub value: Option<f64>,
    pub difference: Option<f64>,
    pub std_error: Option<f64>,
    pub p_value: Option<f64>,
    pub threshold: Option<f64>,
    pub dropped: bool,
}

impl RoundStanding {
    /// `standing` of round `round` for the trial with store id `trial_id`.
    pub fn new(trial_id: i64, round: u32, n_items: usize, leader: bool, s: &Standing) -> Self {
        RoundStanding {
            trial_id,
            round,
            n_items,
            leader,
            value: s.value,
            difference: s.difference,
            std_error: s.std_error,
            p_value: s.p_value,
            threshold: s.threshold,
            dropped: s.dropped,
        }
    }
}

/// What a round decided.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Decision {
    /// The leader's index among the candidates.
    pub leader: Option<usize>,
    /// Every candidate, in candidate order.
    pub standings: Vec<Standing>,
}

impl Decision {
    pub fn dropped(&self) -> impl Iterator<Item = usize> + '_ {
        self.standings.iter().filter(|s| s.dropped).map(|s| s.trial)
    }
}

/// Each candidate's metric on its calls, with nothing tested: a round before
/// `min_items` records only these.
pub fn measure(task: Task, metric: Quality, candidates: &[&[Observation]]) -> Vec<Standing> {
    candidates
        .iter()
        .enumerate()
        .map(|(i, c)| Standing {
            trial: i,
            value: metrics::value_of(task, c, metric),
            difference: None,
            std_error: None,
            p_value: None,
            threshold: None,
            dropped: false,
        })
        .collect()
}

/// Decides a round among `candidates` (each survivor's calls on the items judged so far;
/// `ties` break ties for the leader; `groups[i]` names candidate i's exact group, trials
/// that share their forward passes).
pub fn decide(
    task: Task,
    metric: Quality,
    alpha: f64,
    candidates: &[&[Observation]],
    ties: &[Ties],
    groups: &[usize],
) -> Decision {
    let units: Vec<Vec<Vec<Scored>>> = candidates
        .iter()
        .map(|c| {
            let n_units = c.iter().map(|o| o.unit + 1).max().unwrap_or(0);
            metrics::scored_by_unit(task, c, n_units)
        })
        .collect();
    let mut standings = measure(task, metric, candidates);
    let values: Vec<Option<f64>> = standings.iter().map(|s| s.value).collect();
    let leader = selection::pick(&values, ties);
    let Some(leader) = leader else {
        return Decision { leader, standings };
    };
    for (i, s) in standings
        .iter_mut()
        .enumerate()
        .filter(|(i, _)| *i != leader)
    {
        if let Some((d, se, p)) = paired_test(task, metric, &units[i], &units[leader]) {
            (s.difference, s.std_error, s.p_value) = (Some(d), Some(se), Some(p));
        }
    }
    // Holm: the smallest p-value against alpha / m, the next against alpha / (m - 1), ...,
    // until one is not small enough.
    let mut tested: Vec<usize> = (0..standings.len())
        .filter(|&i| i != leader && standings[i].p_value.is_some())
        .collect();
    tested.sort_by(|&a, &b| {
        let (pa, pb) = (standings[a].p_value, standings[b].p_value);
        pa.partial_cmp(&pb)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(a.cmp(&b))
    });
    let m = tested.len();
    let mut rejecting = true;
    for (rank, &i) in tested.iter().enumerate() {
        let threshold = alpha / (m - rank) as f64;
        let s = &mut standings[i];
        s.threshold = Some(threshold);
        rejecting = rejecting && s.p_value.is_some_and(|p| p <= threshold);
        s.dropped = rejecting && s.difference.is_some_and(|d| d < 0.0);
    }
    // A group goes only as a whole, and never with the leader in it.
    for g in groups
        .iter()
        .copied()
        .collect::<std::collections::BTreeSet<_>>()
    {
        let members: Vec<usize> = (0..groups.len()).filter(|&i| groups[i] == g).collect();
        if members
            .iter()
            .any(|&i| i == leader || !standings[i].dropped)
        {
            for i in members {
                standings[i].dropped = false;
            }
        }
    }
    Decision {
        leader: Some(leader),
        standings,
    }
}

/// `a`'s metric minus `b`'s on the units both have, its jackknife standard error and the
/// two-sided p-value of a t test with n - 1 degrees of freedom.
fn paired_test(
    task: Task,
    metric: Quality,
    a: &[Vec<Scored>],
    b: &[Vec<Scored>],
) -> Option<(f64, f64, f64)> {
    let shared: Vec<usize> = (0..a.len().min(b.len()))
        .filter(|&u| !a[u].is_empty() && !b[u].is_empty())
        .collect();
    let n = shared.len();
    if n < 3 {
        return None;
    }
    let side = |x: &[Vec<Scored>]| {
        if n == x.len() {
            // Every unit is shared: the usual case, in a race's lockstep rounds.
            return metrics::CountedUnits::new(x);
        }
        let units: Vec<Vec<Scored>> = shared.iter().map(|&u| x[u].clone()).collect();
        metrics::CountedUnits::new(&units)
    };
    let (ca, cb) = (side(a), side(b));
    let (all_a, all_b) = (ca.all(), cb.all());
    let value = |c: &metrics::CountedUnits, counts: &[f64]| {
        quality::value_tally(task, c.distinct.as_tally(counts), metric)
    };
    let d = value(&ca, &all_a)? - value(&cb, &all_b)?;
    // Units whose verdicts are alike on both sides leave the same statistic out: each
    // distinct pair is left out once and weighted by how many units it stands for.
    let mut patterns: std::collections::BTreeMap<(&[u32], &[u32]), f64> =
        std::collections::BTreeMap::new();
    for k in 0..n {
        *patterns.entry((ca.unit(k), cb.unit(k))).or_default() += 1.0;
    }
    let (mut left_out, mut weights) = (Vec::new(), Vec::new());
    let (mut counts_a, mut counts_b) = (all_a.clone(), all_b.clone());
    for (&(ia, ib), w) in &patterns {
        for &id in ia {
            counts_a[id as usize] -= 1.0;
        }
        for &id in ib {
            counts_b[id as usize] -= 1.0;
        }
        // A statistic undefined without this unit makes the error unknown.
        let without = value(&ca, &counts_a)? - value(&cb, &counts_b)?;
        left_out.push(without);
        weights.push(*w);
        counts_a.copy_from_slice(&all_a);
        counts_b.copy_from_slice(&all_b);
    }
    let nf = n as f64;
    let mean = left_out
        .iter()
        .zip(&weights)
        .map(|(v, w)| v * w)
        .sum::<f64>()
        / nf;
    let variance = (nf - 1.0) / nf
        * left_out
            .iter()
            .zip(&weights)
            .map(|(v, w)| w * (v - mean).powi(2))
            .sum::<f64>();
    let se = variance.max(0.0).sqrt();
    let p = if se > 1e-12 {
        student_t_two_sided(d / se, nf - 1.0)
    } else if d.abs() > 1e-12 {
        0.0
    } else {
        1.0
    };
    Some((d, se, p))
}

/// P(|T| >= |t|) for Student's t with `df` degrees of freedom.
pub fn student_t_two_sided(t: f64, df: f64) -> f64 {
    let x = df / (df + t * t);
    regularized_incomplete_beta(x, df / 2.0, 0.5).clamp(0.0, 1.0)
}

/// I_x(a, b), by the continued fraction of Numerical Recipes (Press et al., §6.4).
fn regularized_incomplete_beta(x: f64, a: f64, b: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let ln_front = ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln();
    if x < (a + 1.0) / (a + b + 2.0) {
        ln_front.exp() * beta_fraction(x, a, b) / a
    } else {
        1.0 - ln_front.exp() * beta_fraction(1.0 - x, b, a) / b
    }
}

fn beta_fraction(x: f64, a: f64, b: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..300 {
        let m = m as f64;
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        d = if d.abs() < TINY { TINY } else { d };
        c = 1.0 + aa / c;
        c = if c.abs() < TINY { TINY } else { c };
        d = 1.0 / d;
        let step = d * c;
        h *= step;
        if (step - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// ln Γ(x) for x > 0 (Lanczos, g = 7, n = 9).
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut sum = G[0];
    for (i, g) in G.iter().enumerate().skip(1) {
        sum += g / (x + i as f64);
    }
    let t = x + 7.5;
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + sum.ln()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{Choice, Label};

    #[test]
    fn t_distribution_matches_scipy() {
        // 2 * scipy.stats.t.sf(abs(t), df), scipy 1.x
        let cases = [
            (2.0, 10.0, 0.073_388_034_770_740_37),
            (1.0, 1.0, 0.5),
            (3.5, 39.0, 0.001_180_627_000_338_732),
            (0.0, 5.0, 1.0),
            (-2.5, 100.0, 0.014_045_789_124_077_172),
        ];
        for (t, df, want) in cases {
            let got = student_t_two_sided(t, df);
            assert!((got - want).abs() < 1e-9, "t={t} df={df}: {got} != {want}");
        }
    }

    fn trial(right: &[bool]) -> Vec<Observation> {
        let (a, b) = (Label::Choice(Choice::A), Label::Choice(Choice::B));
        right
            .iter()
            .enumerate()
            .map(|(unit, &r)| {
                let human = if unit % 2 == 0 { a } else { b };
                let verdict = match (unit % 2 == 0, r) {
                    (true, true) | (false, false) => a,
                    _ => b,
                };
                Observation::verdict(unit, human, verdict)
            })
            .collect()
    }

    #[test]
    fn for_accuracy_the_jackknife_test_is_the_paired_t_test() {
        let a: Vec<bool> = (0..60).map(|i| i % 3 != 0).collect();
        let b: Vec<bool> = (0..60).map(|i| i % 5 == 0 || i % 7 == 0).collect();
        let decision = decide(
            Task::Pairwise,
            Quality::Accuracy,
            0.05,
            &[&trial(&a), &trial(&b)],
            &[Ties::default(); 2],
            &[0, 1],
        );
        assert_eq!(decision.leader, Some(0));
        let s = decision.standings[1];
        // The paired t test on d_i = b_i - a_i.
        let d: Vec<f64> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| f64::from(*y as u8) - f64::from(*x as u8))
            .collect();
        let n = d.len() as f64;
        let mean = d.iter().sum::<f64>() / n;
        let sd = (d.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt();
        assert!((s.difference.unwrap() - mean).abs() < 1e-12);
        assert!((s.std_error.unwrap() - sd / n.sqrt()).abs() < 1e-12);
        let p = student_t_two_sided(mean / (sd / n.sqrt()), n - 1.0);
        assert!((s.p_value.unwrap() - p).abs() < 1e-12);
        assert!(s.dropped && s.threshold == Some(0.05));
    }

    #[test]
    fn holm_stops_at_the_first_comparison_it_cannot_reject_and_groups_go_whole() {
        let best: Vec<bool> = (0..80).map(|i| i % 10 != 0).collect();
        let close: Vec<bool> = (0..80).map(|i| i % 10 != 0 && i != 41).collect();
        let bad: Vec<bool> = (0..80).map(|i| i % 2 == 0).collect();
        let worse: Vec<bool> = (0..80).map(|i| i % 4 == 0).collect();
        let trials = [trial(&best), trial(&close), trial(&bad), trial(&worse)];
        let views: Vec<&[Observation]> = trials.iter().map(Vec::as_slice).collect();
        let decision = decide(
            Task::Pairwise,
            Quality::Kappa,
            0.05,
            &views,
            &[Ties::default(); 4],
            &[0, 1, 2, 3],
        );
        assert_eq!(decision.leader, Some(0));
        let dropped: Vec<usize> = decision.dropped().collect();
        assert_eq!(dropped, vec![2, 3]);
        // The worst first, against alpha / 3, then alpha / 2; the close one is not rejected.
        assert_eq!(decision.standings[3].threshold, Some(0.05 / 3.0));
        assert_eq!(decision.standings[2].threshold, Some(0.05 / 2.0));
        assert!(!decision.standings[1].dropped);
        // In one exact group with the close trial, the bad one stays.
        let decision = decide(
            Task::Pairwise,
            Quality::Kappa,
            0.05,
            &views,
            &[Ties::default(); 4],
            &[0, 1, 1, 2],
        );
        assert_eq!(decision.dropped().collect::<Vec<_>>(), vec![3]);
    }
}
