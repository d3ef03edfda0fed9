//! Paired comparison of two trials on the same items: McNemar's exact test of who is
//! right where they differ, and a paired bootstrap interval of the difference in a metric.

use serde::{Deserialize, Serialize};

use crate::dataset::Task;
use crate::metrics::{
    group, quality, unit_order, BootstrapSpec, CountedUnits, Estimate, Kinds, Observation, Quality,
    Scored,
};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairedComparison {
    /// Verdicts (item and repeat) that both trials have.
    pub n_pairs: usize,
    /// The first trial right and the second wrong, and the reverse.
    pub first_only: usize,
    pub second_only: usize,
    /// McNemar's exact two-sided p-value for accuracy.
    pub mcnemar_p: f64,
    pub metric: Quality,
    /// The first trial's metric minus the second's, with its paired bootstrap interval.
    pub difference: Estimate,
}

/// Compares trials `first` and `second` on the verdicts they share, by `metric`.
pub fn compare(
    task: Task,
    first: &[Observation],
    second: &[Observation],
    metric: Quality,
    spec: &BootstrapSpec,
) -> PairedComparison {
    let (pairs, starts) = paired_units(task, first, second);
    let first_only = pairs
        .iter()
        .filter(|(x, y)| x.correct() && !y.correct())
        .count();
    let second_only = pairs
        .iter()
        .filter(|(x, y)| !x.correct() && y.correct())
        .count();
    // Each side's verdicts counted by value, unit by unit, so that a resample is a recount
    // (see `quality::Tally`).
    let side = |pick: fn(&(Scored, Scored)) -> Scored| {
        CountedUnits::from_runs(pairs.iter().map(pick), starts.clone())
    };
    let (side_a, side_b) = (side(|p| p.0), side(|p| p.1));
    let defined = Quality::for_task(task).contains(&metric);
    let difference = |counts_a: &[f64], counts_b: &[f64]| -> Option<f64> {
        if !defined {
            return None;
        }
        let va = quality::value_tally(task, side_a.distinct.as_tally(counts_a), metric)?;
        let vb = quality::value_tally(task, side_b.distinct.as_tally(counts_b), metric)?;
        Some(va - vb)
    };
    let ci = (spec.resamples > 0)
        .then(|| {
            // A unit's kind is its verdicts on both sides.
            let kinds = Kinds::new((0..starts.len() - 1).map(|u| (side_a.unit(u), side_b.unit(u))));
            let (mut counts_a, mut counts_b) = (Vec::new(), Vec::new());
            let mut values = Vec::with_capacity(spec.resamples as usize);
            spec.for_each_count(&kinds.sizes, |drawn| {
                side_a.recount_kinds(&kinds, drawn, &mut counts_a);
                side_b.recount_kinds(&kinds, drawn, &mut counts_b);
                values.push(difference(&counts_a, &counts_b));
            });
            spec.interval(values)
        })
        .flatten();
    PairedComparison {
        n_pairs: pairs.len(),
        first_only,
        second_only,
        mcnemar_p: mcnemar_exact(first_only as u64, second_only as u64),
        metric,
        difference: Estimate {
            value: difference(&side_a.all(), &side_b.all()),
            ci,
        },
    }
}

/// The verdicts both trials have, by item in order, each item's in order of repeat: one
/// flat list, item u's pairs at `starts[u]..starts[u + 1]` (items are those with a pair).
fn paired_units(
    task: Task,
    first: &[Observation],
    second: &[Observation],
) -> (Vec<(Scored, Scored)>, Vec<usize>) {
    let n_units = first
        .iter()
        .chain(second)
        .map(|o| o.unit + 1)
        .max()
        .unwrap_or(0);
    let (a, b) = (
        ByUnit::new(task, first, n_units),
        ByUnit::new(task, second, n_units),
    );
    let mut pairs = Vec::with_capacity(a.verdicts.len().min(b.verdicts.len()));
    let mut starts = vec![0];
    for u in 0..n_units {
        let theirs = b.unit(u);
        for (repeat, x) in a.unit(u) {
            if let Some((_, y)) = theirs.iter().find(|(r, _)| r == repeat) {
                pairs.push((*x, *y));
            }
        }
        if pairs.len() > *starts.last().expect("a start") {
            starts.push(pairs.len());
        }
    }
    (pairs, starts)
}

/// One trial's judged verdicts with their repeats, laid out by unit (a counting sort: no
/// list per unit), each unit's in order of repeat.
struct ByUnit {
    verdicts: Vec<(u32, Scored)>,
    starts: Vec<usize>,
}

impl ByUnit {
    fn new(task: Task, observations: &[Observation], n_units: usize) -> ByUnit {
        let judged: Vec<(usize, u32, Scored)> = group(observations)
            .into_iter()
            .filter_map(|g| {
                let verdict = g.verdict?;
                let scored = Scored::new(task, g.calls[0].human, verdict.label());
                Some((g.unit, g.calls[0].repeat, scored))
            })
            .collect();
        let (order, starts) = unit_order(n_units, judged.iter().map(|&(u, _, _)| u));
        let mut verdicts: Vec<(u32, Scored)> =
            order.iter().map(|&i| (judged[i].1, judged[i].2)).collect();
        for u in 0..n_units {
            let unit = &mut verdicts[starts[u]..starts[u + 1]];
            if unit.len() > 1 {
                unit.sort_unstable_by_key(|(repeat, _)| *repeat);
            }
        }
        ByUnit { verdicts, starts }
    }

    fn unit(&self, u: usize) -> &[(u32, Scored)] {
        &self.verdicts[self.starts[u]..self.starts[u + 1]]
    }
}

/// McNemar's exact test: the two-sided binomial test of `b` successes in `b + c` trials at
/// p = 0.5 (scipy's `binomtest(min(b, c), b + c).pvalue`); 1 when there are no discordant
/// pairs. Terms are summed in log space so that thousands of pairs do not underflow.
pub fn mcnemar_exact(b: u64, c: u64) -> f64 {
    let n = b + c;
    if n == 0 {
        return 1.0;
    }
    let k = b.min(c);
    let mut log_term = -(n as f64) * std::f64::consts::LN_2;
    let mut tail = log_term.exp();
    for i in 1..=k {
        log_term += ((n - i + 1) as f64).ln() - (i as f64).ln();
        tail += log_term.exp();
    }
    (2.0 * tail).min(1.0)
}
