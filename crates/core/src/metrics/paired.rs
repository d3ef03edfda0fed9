//! Paired comparison of two trials on the same items: McNemar's exact test of who is
//! right where they differ, and a paired bootstrap interval of the difference in a metric.

use serde::Serialize;

use crate::dataset::Task;
use crate::metrics::{
    group, quality, BootstrapSpec, CountedUnits, Estimate, Kinds, Observation, Quality, Scored,
};

#[derive(Debug, Clone, PartialEq, Serialize)]
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
    let units = paired_units(task, first, second);
    let pairs: Vec<(Scored, Scored)> = units.iter().flatten().copied().collect();
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
        let units: Vec<Vec<Scored>> = units.iter().map(|u| u.iter().map(pick).collect()).collect();
        CountedUnits::new(&units)
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
            let kinds = Kinds::new((0..units.len()).map(|u| (side_a.unit(u), side_b.unit(u))));
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

/// The verdicts both trials have, by item in order; an item holds its pairs over its
/// repeats.
fn paired_units(
    task: Task,
    first: &[Observation],
    second: &[Observation],
) -> Vec<Vec<(Scored, Scored)>> {
    // Each side's verdicts by (item, repeat), sorted, then joined.
    let keyed = |obs: &[Observation]| -> Vec<((usize, u32), Scored)> {
        let mut keyed: Vec<_> = group(obs)
            .into_iter()
            .filter_map(|g| {
                let verdict = g.verdict?;
                let key = (g.unit, g.calls[0].repeat);
                Some((key, Scored::new(task, g.calls[0].human, verdict.label())))
            })
            .collect();
        keyed.sort_unstable_by_key(|(key, _)| *key);
        keyed
    };
    let (a, b) = (keyed(first), keyed(second));
    // Units are items, in order; a unit holds the item's pairs over its repeats.
    let mut units: Vec<Vec<(Scored, Scored)>> = Vec::new();
    let mut last_unit = None;
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                let unit = a[i].0 .0;
                if last_unit != Some(unit) {
                    units.push(Vec::with_capacity(1));
                    last_unit = Some(unit);
                }
                units.last_mut().expect("pushed").push((a[i].1, b[j].1));
                i += 1;
                j += 1;
            }
        }
    }
    units
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
