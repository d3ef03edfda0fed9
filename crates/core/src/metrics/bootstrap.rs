//! Seeded bootstrap confidence intervals over items, by the percentile method.
//!
//! A resample is drawn in one of two ways, the same bootstrap either way:
//! - [`BootstrapSpec::for_each_resample`] draws `n` unit indices with
//!   [`SplitMix64::below`], for statistics that read each unit's own values (latencies,
//!   costs);
//! - [`BootstrapSpec::for_each_count`] draws how many units of each [`Kinds`] a resample
//!   takes, for statistics that read units only by kind (a verdict against its label):
//!   drawing `n` units uniformly takes a multinomial number of each kind, drawn as
//!   binomials ([`SplitMix64::binomial`]), in time that grows with the kinds, not with
//!   the units (a million verdicts have a dozen kinds);
//! - [`BootstrapSpec::map_bags`] draws those counts and, for each kind, how many of its
//!   units the resample left out, for the out-of-bag estimate of a selection.
//!
//! The same seed gives the same resamples on every machine and, but for the bags (which
//! only the selection-corrected estimate draws, checked by a chi-square test and its own
//! simulation), in the Python reference (`tools/reference_common.py`), which draws them
//! the same way. A resample on which the
//! statistic is undefined (say, every resampled verdict is the same label, so kappa is
//! 0/0) is left out, as it would be in a NaN-skipping reference.

use std::collections::HashMap;
use std::hash::Hash;

use serde::{Deserialize, Serialize};

use crate::metrics::latency::percentile;
use crate::rng::{Below, SplitMix64};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BootstrapSpec {
    /// Resamples drawn; 0 turns confidence intervals off.
    pub resamples: u32,
    /// Two-sided coverage, 0.95 for a 95% interval.
    pub level: f64,
    pub seed: u64,
}

impl Default for BootstrapSpec {
    fn default() -> Self {
        BootstrapSpec {
            resamples: 1000,
            level: 0.95,
            seed: 0,
        }
    }
}

impl BootstrapSpec {
    /// The index lists of every resample of `n` units, all drawn from one generator.
    pub fn resamples(&self, n: usize) -> Vec<Vec<usize>> {
        let mut out = Vec::new();
        self.for_each_resample(n, |idx| out.push(idx.to_vec()));
        out
    }

    /// Calls `f` with the index list of each resample of `n` units in turn, the same lists
    /// as [`Self::resamples`], drawn into one buffer: on 25,000 items, holding all 1,000
    /// lists at once took 200 MB and most of the time.
    pub fn for_each_resample(&self, n: usize, mut f: impl FnMut(&[usize])) {
        if n == 0 {
            return;
        }
        let mut rng = SplitMix64::new(self.seed);
        let below = Below::new(n as u64);
        let mut idx = Vec::with_capacity(n);
        for _ in 0..self.resamples {
            idx.clear();
            idx.extend((0..n).map(|_| below.draw(&mut rng) as usize));
            f(&idx);
        }
    }

    /// `f` on each resample of `n` units, the same resamples as
    /// [`Self::for_each_resample`], each as its draws one by one ([`Draws`]: a statistic
    /// that counts what it draws writes no list of `n` indices), with a state of its
    /// thread's own from `init`; on up to as many threads as there are cores, the results
    /// in the resamples' order.
    pub fn map_resamples<S, T: Send>(
        &self,
        n: usize,
        init: impl Fn() -> S + Sync,
        f: impl Fn(&mut S, &mut Draws<'_>) -> T + Sync,
    ) -> Vec<T> {
        if n == 0 {
            return Vec::new();
        }
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
        self.map_draws(n as u64, n, threads, init, f)
    }

    /// [`Self::map_resamples`] with `per_resample` draws below `below` each, on `threads`.
    ///
    /// A thread starts its share of the resamples where the generator would be had no
    /// draw before them been rejected (each draw takes one number, and [`SplitMix64::skip`]
    /// jumps there). A rejection (one in 2^44 draws below 2^20) moves every later share:
    /// those are drawn again, in turn, from where the generator really is.
    fn map_draws<S, T: Send>(
        &self,
        below: u64,
        per_resample: usize,
        threads: usize,
        init: impl Fn() -> S + Sync,
        f: impl Fn(&mut S, &mut Draws<'_>) -> T + Sync,
    ) -> Vec<T> {
        let below = Below::new(below);
        let resamples = self.resamples as usize;
        let share = resamples.div_ceil(threads.max(1)).max(1);
        let starts: Vec<usize> = (0..resamples).step_by(share).collect();
        // A share's resamples from `skipped` numbers into the stream, and the numbers it
        // rejected.
        let run = |start: usize, skipped: u64| -> (Vec<T>, u64) {
            let mut rng = SplitMix64::new(self.seed);
            rng.skip(skipped);
            let mut state = init();
            let mut rejected = 0;
            let results = (start..(start + share).min(resamples))
                .map(|_| {
                    let mut draws = Draws {
                        rng: &mut rng,
                        below,
                        left: per_resample,
                        rejected: 0,
                    };
                    let result = f(&mut state, &mut draws);
                    // A statistic that stops early leaves the stream where the others are.
                    draws.by_ref().for_each(drop);
                    rejected += draws.rejected;
                    result
                })
                .collect();
            (results, rejected)
        };
        let first_draw = |start: usize| (start * per_resample) as u64;
        let shares: Vec<(Vec<T>, u64)> = std::thread::scope(|scope| {
            let handles: Vec<_> = starts
                .iter()
                .map(|&start| scope.spawn(move || run(start, first_draw(start))))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a resampling thread panicked"))
                .collect()
        });
        let mut out = Vec::with_capacity(resamples);
        let mut late = 0;
        for (&start, (results, rejected)) in starts.iter().zip(shares) {
            let (results, rejected) = if late == 0 {
                (results, rejected)
            } else {
                run(start, first_draw(start) + late)
            };
            late += rejected;
            out.extend(results);
        }
        out
    }

    /// Calls `f` with each resample of units of `sizes.len()` kinds (`sizes[k]` units of
    /// kind k) as how many units of each kind it drew: kind k's number is binomial over
    /// the draws the kinds before it left, with k's share of the units they left.
    pub fn for_each_count(&self, sizes: &[u64], mut f: impl FnMut(&[u64])) {
        let n: u64 = sizes.iter().sum();
        if n == 0 {
            return;
        }
        let mut rng = SplitMix64::new(self.seed);
        let mut drawn = vec![0u64; sizes.len()];
        for _ in 0..self.resamples {
            let (mut draws_left, mut units_left) = (n, n);
            for (d, &size) in drawn.iter_mut().zip(sizes) {
                *d = if size == units_left {
                    draws_left
                } else {
                    rng.binomial(draws_left, size as f64 / units_left as f64)
                };
                draws_left -= *d;
                units_left -= size;
            }
            f(&drawn);
        }
    }

    /// `f` on each resample of units of `sizes.len()` kinds as its [`Bag`]: how many
    /// units of each kind it drew, counting repeats (as [`Self::for_each_count`] draws
    /// them), and how many of each kind it never drew ([`left_out`]). Resample `r` draws
    /// from its own stretch of the generator (2^40 numbers from `r * 2^40`), so that the
    /// resamples, on as many threads as there are cores, do not depend on the threads.
    pub fn map_bags<S, T: Send>(
        &self,
        sizes: &[u64],
        init: impl Fn() -> S + Sync,
        f: impl Fn(&mut S, &Bag) -> T + Sync,
    ) -> Vec<T> {
        let n: u64 = sizes.iter().sum();
        if n == 0 {
            return Vec::new();
        }
        let resamples = self.resamples as usize;
        let threads = std::thread::available_parallelism().map_or(1, |t| t.get());
        let share = resamples.div_ceil(threads).max(1);
        let run = |first: usize| -> Vec<T> {
            let mut state = init();
            let mut bag = Bag {
                in_bag: vec![0; sizes.len()],
                left_out: vec![0; sizes.len()],
            };
            (first..(first + share).min(resamples))
                .map(|r| {
                    let mut rng = SplitMix64::new(self.seed);
                    rng.skip((r as u64) << 40);
                    let (mut draws_left, mut units_left) = (n, n);
                    for (k, &size) in sizes.iter().enumerate() {
                        let drawn = if size == units_left {
                            draws_left
                        } else {
                            rng.binomial(draws_left, size as f64 / units_left as f64)
                        };
                        bag.in_bag[k] = drawn;
                        draws_left -= drawn;
                        units_left -= size;
                    }
                    for (k, &size) in sizes.iter().enumerate() {
                        bag.left_out[k] = left_out(&mut rng, size, bag.in_bag[k]);
                    }
                    f(&mut state, &bag)
                })
                .collect()
        };
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..resamples)
                .step_by(share)
                .map(|first| scope.spawn(move || run(first)))
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("a resampling thread panicked"))
                .collect()
        })
    }

    /// The percentile interval of a statistic's values over the resamples (`None` values
    /// dropped); `None` when no resample defines it.
    pub fn interval(&self, values: impl IntoIterator<Item = Option<f64>>) -> Option<(f64, f64)> {
        let mut values: Vec<f64> = values
            .into_iter()
            .flatten()
            .filter(|v| v.is_finite())
            .collect();
        values.sort_by(f64::total_cmp);
        let tail = (1.0 - self.level) / 2.0;
        Some((percentile(&values, tail)?, percentile(&values, 1.0 - tail)?))
    }

    /// The interval of `statistic` over resamples of `n` units.
    pub fn ci(
        &self,
        n: usize,
        mut statistic: impl FnMut(&[usize]) -> Option<f64>,
    ) -> Option<(f64, f64)> {
        let mut values = Vec::with_capacity(self.resamples as usize);
        self.for_each_resample(n, |idx| values.push(statistic(idx)));
        self.interval(values)
    }
}

/// One resample of units by kind ([`BootstrapSpec::map_bags`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Bag {
    /// How many draws each kind took, repeats counted.
    pub in_bag: Vec<u64>,
    /// How many of each kind's units no draw took.
    pub left_out: Vec<u64>,
}

/// How many of `units` units `draws` uniform draws among them leave undrawn: the draws
/// are thrown one by one, the units drawn so far numbered first, so a draw takes a new
/// unit when it lands at or past their number. Exact, and it touches no memory: counting
/// each unit's draws in an array was most of the time of a million-verdict BBC. A draw
/// is Lemire's multiply-and-shift ("Fast random integer generation in an interval",
/// 2019), with the rejection that makes it uniform: one multiplication, not
/// [`Below`]'s four.
pub fn left_out(rng: &mut SplitMix64, units: u64, draws: u64) -> u64 {
    if units == 0 {
        return 0;
    }
    // 2^64 mod units: products whose low half falls below it are the surplus.
    let surplus = units.wrapping_neg() % units;
    let mut drawn = 0;
    for _ in 0..draws {
        let unit = loop {
            let product = u128::from(rng.next_u64()) * u128::from(units);
            if product as u64 >= surplus {
                break (product >> 64) as u64;
            }
        };
        drawn += u64::from(unit >= drawn);
        if drawn == units {
            break;
        }
    }
    units - drawn
}

/// One resample's draws of unit indices, in the order [`BootstrapSpec::for_each_resample`]
/// draws them.
pub struct Draws<'a> {
    rng: &'a mut SplitMix64,
    below: Below,
    left: usize,
    /// Numbers the rule rejected so far.
    rejected: u64,
}

impl Iterator for Draws<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        loop {
            if let Some(u) = self.below.accept(self.rng.next_u64()) {
                return Some(u as usize);
            }
            self.rejected += 1;
        }
    }
}

/// Units sorted into kinds, in the order each kind first appears: units of one kind are
/// alike to the statistic, so a resample need only say how many of each it drew
/// ([`BootstrapSpec::for_each_count`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Kinds {
    /// How many units each kind has.
    pub sizes: Vec<u64>,
    /// The first unit of each kind.
    pub first: Vec<usize>,
    /// Each unit's kind, by number.
    pub of_unit: Vec<u32>,
}

impl Kinds {
    /// Units `0..` by their keys: units with equal keys are of one kind.
    pub fn new<K: Hash + Eq>(keys: impl IntoIterator<Item = K>) -> Kinds {
        let mut index: HashMap<K, usize, foldhash::fast::RandomState> = HashMap::default();
        let mut kinds = Kinds::default();
        for (unit, key) in keys.into_iter().enumerate() {
            let k = *index.entry(key).or_insert_with(|| {
                kinds.sizes.push(0);
                kinds.first.push(unit);
                kinds.sizes.len() - 1
            });
            kinds.sizes[k] += 1;
            kinds.of_unit.push(k as u32);
        }
        kinds
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resamples_are_seeded_and_in_range() {
        let spec = BootstrapSpec {
            resamples: 5,
            ..BootstrapSpec::default()
        };
        let a = spec.resamples(7);
        assert_eq!(a, spec.resamples(7));
        assert_eq!(a.len(), 5);
        assert!(a.iter().flatten().all(|&i| i < 7));
        assert!(spec.resamples(0).is_empty());
        let other = BootstrapSpec { seed: 1, ..spec };
        assert_ne!(a, other.resamples(7));
    }

    #[test]
    fn resamples_drawn_on_threads_are_the_resamples() {
        let spec = BootstrapSpec {
            resamples: 37,
            ..BootstrapSpec::default()
        };
        let sequential = spec.resamples(11);
        for threads in [1, 2, 3, 8, 64] {
            let drawn = spec.map_draws(11, 11, threads, || (), |_, d| d.collect::<Vec<_>>());
            assert_eq!(drawn, sequential, "{threads} threads");
        }
        // A statistic that stops early leaves the stream as it found it.
        let firsts = spec.map_draws(11, 11, 3, || (), |_, d| d.next());
        let want: Vec<_> = sequential.iter().map(|r| Some(r[0])).collect();
        assert_eq!(firsts, want);
        assert!(spec.map_resamples(0, || (), |_, d| d.count()).is_empty());
    }

    /// Below 2^63 + 1, half the numbers are rejected: every share after the first starts
    /// in the wrong place and is drawn again.
    #[test]
    fn rejections_move_the_later_shares() {
        let spec = BootstrapSpec {
            resamples: 40,
            ..BootstrapSpec::default()
        };
        let below = (1u64 << 63) + 1;
        let mut rng = SplitMix64::new(spec.seed);
        let sequential: Vec<Vec<u64>> = (0..40)
            .map(|_| (0..5).map(|_| rng.below(below)).collect())
            .collect();
        for threads in [1, 2, 5] {
            let drawn = spec.map_draws(
                below,
                5,
                threads,
                || (),
                |_, d| d.map(|u| u as u64).collect::<Vec<_>>(),
            );
            assert_eq!(drawn, sequential, "{threads} threads");
        }
    }

    /// A bag has the law of drawing units one by one: on 5 units of kinds [0, 1, 1, 2, 2],
    /// the frequencies of each (drawn, left out) over 40,000 resamples match the exact
    /// ones (every one of the 5^5 draws enumerated) by a chi-square test at 0.1%; and a
    /// bag does not depend on the threads that drew it.
    #[test]
    fn bags_are_drawn_as_units_are() {
        let (sizes, of_unit) = ([1u64, 2, 2], [0usize, 1, 1, 2, 2]);
        let mut exact: HashMap<(Vec<u64>, Vec<u64>), f64> = HashMap::new();
        for d in 0..5usize.pow(5) {
            let draws: Vec<usize> = (0..5).map(|i| d / 5usize.pow(i) % 5).collect();
            let mut in_bag = vec![0; 3];
            let mut left_out = sizes.to_vec();
            for (u, &k) in of_unit.iter().enumerate() {
                let times = draws.iter().filter(|&&x| x == u).count() as u64;
                in_bag[k] += times;
                left_out[k] -= u64::from(times > 0);
            }
            *exact.entry((in_bag, left_out)).or_default() += 1.0 / 3125.0;
        }
        let spec = BootstrapSpec {
            resamples: 40_000,
            ..BootstrapSpec::default()
        };
        let bags = spec.map_bags(&sizes, || (), |_, b| (b.in_bag.clone(), b.left_out.clone()));
        let mut seen: HashMap<(Vec<u64>, Vec<u64>), f64> = HashMap::new();
        for bag in &bags {
            assert!(exact.contains_key(bag), "{bag:?} cannot be drawn");
            *seen.entry(bag.clone()).or_default() += 1.0;
        }
        let (mut chi2, mut cells, mut rest) = (0.0, 0, (0.0, 0.0));
        for (bag, p) in &exact {
            let (o, e) = (seen.get(bag).copied().unwrap_or(0.0), p * 40_000.0);
            if e >= 5.0 {
                chi2 += (o - e).powi(2) / e;
                cells += 1;
            } else {
                rest = (rest.0 + o, rest.1 + e);
            }
        }
        if rest.1 > 0.0 {
            chi2 += (rest.0 - rest.1).powi(2) / rest.1;
            cells += 1;
        }
        let df = f64::from(cells - 1);
        let critical = df * (1.0 - 2.0 / (9.0 * df) + 3.09 * (2.0 / (9.0 * df)).sqrt()).powi(3);
        assert!(
            cells > 20 && chi2 < critical,
            "chi-square {chi2:.1} over {cells} cells, critical {critical:.1}"
        );
        let first: Vec<_> = bags[..5].to_vec();
        let few = BootstrapSpec {
            resamples: 5,
            ..spec
        };
        assert_eq!(
            few.map_bags(&sizes, || (), |_, b| (b.in_bag.clone(), b.left_out.clone())),
            first
        );
    }

    /// The units left out of `draws` among `units`, against their expected number,
    /// `units * (1 - 1/units)^draws`, where a unit is drawn hundreds of times too.
    #[test]
    fn left_out_is_as_many_as_expected() {
        let mut rng = SplitMix64::new(5);
        for (units, draws) in [(1_000u64, 1_000u64), (3, 900), (1, 0), (50, 10)] {
            let mean = (0..2_000)
                .map(|_| left_out(&mut rng, units, draws) as f64)
                .sum::<f64>()
                / 2_000.0;
            let want = units as f64 * (1.0 - 1.0 / units as f64).powf(draws as f64);
            assert!(
                (mean - want).abs() < 0.02 * units as f64,
                "{units} units, {draws} draws: {mean} left out, {want} expected"
            );
        }
        assert_eq!(left_out(&mut rng, 0, 0), 0);
        assert_eq!(left_out(&mut rng, 4, 0), 4);
    }

    #[test]
    fn kinds_are_in_order_of_first_appearance() {
        let kinds = Kinds::new(["b", "a", "b", "c", "a", "b"]);
        assert_eq!(kinds.sizes, [3, 2, 1]);
        assert_eq!(kinds.first, [0, 1, 3]);
        assert_eq!(kinds.of_unit, [0, 1, 0, 2, 1, 0]);
    }

    /// Counting kinds is the bootstrap of drawing units: each kind's number drawn has the
    /// multinomial's mean and variance, and every resample draws `n` in all.
    #[test]
    fn counts_of_kinds_are_multinomial() {
        let sizes = [5u64, 120, 0, 875, 1];
        let n = 1001.0;
        let spec = BootstrapSpec {
            resamples: 20_000,
            ..BootstrapSpec::default()
        };
        let mut sum = [0.0; 5];
        let mut sq = [0.0; 5];
        spec.for_each_count(&sizes, |drawn| {
            assert_eq!(drawn.iter().sum::<u64>(), 1001);
            for (k, &d) in drawn.iter().enumerate() {
                sum[k] += d as f64;
                sq[k] += (d as f64).powi(2);
            }
        });
        let r = f64::from(spec.resamples);
        for (k, &size) in sizes.iter().enumerate() {
            let p = size as f64 / n;
            let (mean, var) = (sum[k] / r, sq[k] / r - (sum[k] / r).powi(2));
            let (want_mean, want_var) = (n * p, n * p * (1.0 - p));
            // Five standard errors of the mean; the variance within 5%.
            assert!(
                (mean - want_mean).abs() <= 5.0 * (want_var / r).sqrt() + 1e-12,
                "kind {k}: mean {mean} vs {want_mean}"
            );
            assert!(
                (var - want_var).abs() <= 0.05 * want_var + 1e-12,
                "kind {k}: variance {var} vs {want_var}"
            );
        }
        let mut again = Vec::new();
        spec.for_each_count(&sizes, |d| again.push(d.to_vec()));
        let mut once = Vec::new();
        spec.for_each_count(&sizes, |d| once.push(d.to_vec()));
        assert_eq!(again, once, "seeded");
    }

    #[test]
    fn interval_skips_undefined_resamples() {
        let spec = BootstrapSpec::default();
        let values = (0..=100).map(|i| (i % 2 == 0).then_some(i as f64));
        let (lo, hi) = spec.interval(values).unwrap();
        assert!(
            (lo - 2.5).abs() < 1e-9 && (hi - 97.5).abs() < 1e-9,
            "{lo} {hi}"
        );
        assert_eq!(spec.interval([None, None]), None);
    }
}
