//! Estimates on unlabelled data, corrected with the labelled items: what the mean score, the
//! win rate or the pass rate of a population is, when a judge has scored all of it and
//! humans only a few.
//!
//! - **PPI++** (Angelopoulos, Duchi and Zrnic 2023, "PPI++: Efficient prediction-powered
//!   inference"), for a mean (a mean rating, or a win rate: A's wins plus half the ties):
//!   `θ = λ·mean(f̃) + mean(Y − λ·f)` over the judge's scores `f̃` on the N unlabelled items
//!   and the pairs `(Y, f)` of human and judge on the n labelled ones. It is unbiased for
//!   every λ; the power-tuned `λ = Cov(Y, f) / ((1 + n/N)·Var(f))` (the covariance over the
//!   labelled pairs with 1/n, the sample variance over every judge score, clipped to
//!   [0, 1], as `ppi_py` tunes it)
//!   minimises its variance, so that a poor judge costs nothing (λ = 0 is the humans' mean
//!   alone) and a good one narrows the interval. The interval is the normal one,
//!   `θ ± z·sqrt(sd(λ·f̃)²/N + sd(Y − λ·f)²/n)`, as `ppi_py.ppi_mean_ci` computes it.
//! - **Rogan–Gladen** (1978), for a pass rate from a binary judge: the judge's observed
//!   pass rate `p` on the unlabelled items, corrected with its true positive and true
//!   negative rates on the labelled ones, `θ = (p + TNR − 1) / (TPR + TNR − 1)`, clipped to
//!   [0, 1], as `judgy.estimate_success_rate` computes it. A judge no better than chance
//!   (TPR + TNR ≤ 1) cannot be corrected. The interval is the delta method's over all
//!   three rates (`judgy`'s bootstrap holds `p` fixed, which undercovers with a few
//!   thousand unlabelled items): `Var θ = (p(1−p)/N + θ²·TPR(1−TPR)/n₊ +
//!   (1−θ)²·TNR(1−TNR)/n₋) / (TPR + TNR − 1)²`, clipped to [0, 1].
//!
//! Both come with the naive figure beside them (the judge's own mean on the unlabelled
//! items, as if it were right) and a planner: how many labelled items give an interval of
//! a chosen width, from the variances the labelled items show.

use serde::Serialize;

use crate::normal::z;

/// A corrected estimate with its interval, beside the naive figure.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Corrected {
    pub value: f64,
    pub ci: [f64; 2],
    /// The judge's own mean on the unlabelled items, as if it were never wrong, with its
    /// normal interval (which says nothing of the judge's bias).
    pub naive: f64,
    pub naive_ci: [f64; 2],
    /// Labelled pairs and unlabelled judge scores used.
    pub n_labelled: usize,
    pub n_unlabelled: usize,
    /// PPI++: the power-tuning weight; Rogan–Gladen: none.
    pub lambda: Option<f64>,
    /// Rogan–Gladen: the judge's true positive and true negative rates on the labelled items.
    pub tpr: Option<f64>,
    pub tnr: Option<f64>,
}

/// Why an estimate cannot be made.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EstimateError {
    #[error("no labelled items: a correction needs human labels on some items the judge scored")]
    NoLabels,
    #[error("no unlabelled items to estimate on")]
    NoUnlabelled,
    #[error(
        "the labelled items hold only {0}: a pass rate's correction needs passes and fails both"
    )]
    OneClass(&'static str),
    #[error("the judge is no better than chance on the labelled items (TPR {tpr:.3} + TNR {tnr:.3} ≤ 1): its pass rate cannot be corrected")]
    NoBetterThanChance { tpr: f64, tnr: f64 },
    #[error("the level {0} must lie between 0 and 1")]
    Level(f64),
}

fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// The variance with 1/n, as numpy's default.
fn var(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / x.len() as f64
}

fn check_level(level: f64) -> Result<(), EstimateError> {
    (level > 0.0 && level < 1.0)
        .then_some(())
        .ok_or(EstimateError::Level(level))
}

/// The judge's mean on the unlabelled items with its normal interval.
fn naive(f_unlabelled: &[f64], z: f64) -> (f64, [f64; 2]) {
    let m = mean(f_unlabelled);
    let half = z * (var(f_unlabelled) / f_unlabelled.len() as f64).sqrt();
    (m, [m - half, m + half])
}

/// The covariance of the labelled pairs (1/n), and the sample variance (1/(n + N − 1)) of
/// every judge score: what PPI++'s λ is tuned from.
fn moments(y: &[f64], f: &[f64], f_unlabelled: &[f64]) -> (f64, f64) {
    let (my, mf) = (mean(y), mean(f));
    let cov = y
        .iter()
        .zip(f)
        .map(|(a, b)| (a - my) * (b - mf))
        .sum::<f64>()
        / y.len() as f64;
    let all: Vec<f64> = f.iter().chain(f_unlabelled).copied().collect();
    let k = all.len() as f64;
    let var_f = if k > 1.0 {
        var(&all) * k / (k - 1.0)
    } else {
        0.0
    };
    (cov, var_f)
}

/// λ for `n` labelled and `big_n` unlabelled items, from [`moments`].
fn tuned(cov: f64, var_f: f64, n: f64, big_n: f64) -> f64 {
    if var_f > 0.0 {
        (cov / ((1.0 + n / big_n) * var_f)).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

impl Corrected {
    /// The estimate cut at what its quantity can be, `lo..=hi`: the normal intervals of few
    /// items can reach past it (a rate's to 1.05), and cutting them there loses no coverage.
    pub fn within(self, lo: f64, hi: f64) -> Corrected {
        let cut = |x: f64| x.clamp(lo, hi);
        Corrected {
            value: cut(self.value),
            ci: self.ci.map(cut),
            naive: cut(self.naive),
            naive_ci: self.naive_ci.map(cut),
            ..self
        }
    }
}

/// PPI++'s power-tuning weight.
pub fn ppi_lambda(y: &[f64], f: &[f64], f_unlabelled: &[f64]) -> f64 {
    let (cov, var_f) = moments(y, f, f_unlabelled);
    tuned(cov, var_f, y.len() as f64, f_unlabelled.len() as f64)
}

/// PPI++ for a mean: humans' scores `y` and the judge's `f` on the labelled items (pairs in
/// order), the judge's `f_unlabelled` on the rest.
pub fn ppi_mean(
    y: &[f64],
    f: &[f64],
    f_unlabelled: &[f64],
    level: f64,
) -> Result<Corrected, EstimateError> {
    check_level(level)?;
    assert_eq!(y.len(), f.len(), "labelled pairs");
    if y.is_empty() {
        return Err(EstimateError::NoLabels);
    }
    if f_unlabelled.is_empty() {
        return Err(EstimateError::NoUnlabelled);
    }
    let z = z(level);
    let lambda = ppi_lambda(y, f, f_unlabelled);
    let imputed: Vec<f64> = f_unlabelled.iter().map(|v| lambda * v).collect();
    let rectifier: Vec<f64> = y.iter().zip(f).map(|(a, b)| a - lambda * b).collect();
    let value = mean(&imputed) + mean(&rectifier);
    let se =
        (var(&imputed) / imputed.len() as f64 + var(&rectifier) / rectifier.len() as f64).sqrt();
    let (naive, naive_ci) = naive(f_unlabelled, z);
    Ok(Corrected {
        value,
        ci: [value - z * se, value + z * se],
        naive,
        naive_ci,
        n_labelled: y.len(),
        n_unlabelled: f_unlabelled.len(),
        lambda: Some(lambda),
        tpr: None,
        tnr: None,
    })
}

/// Rogan–Gladen for a pass rate: humans' and the judge's pass/fail on the labelled items,
/// the judge's on the rest.
pub fn rogan_gladen(
    labels: &[bool],
    preds: &[bool],
    unlabelled: &[bool],
    level: f64,
) -> Result<Corrected, EstimateError> {
    check_level(level)?;
    assert_eq!(labels.len(), preds.len(), "labelled pairs");
    if labels.is_empty() {
        return Err(EstimateError::NoLabels);
    }
    if unlabelled.is_empty() {
        return Err(EstimateError::NoUnlabelled);
    }
    let pos = labels.iter().filter(|&&l| l).count();
    let neg = labels.len() - pos;
    if pos == 0 {
        return Err(EstimateError::OneClass("fails"));
    }
    if neg == 0 {
        return Err(EstimateError::OneClass("passes"));
    }
    let both = |label: bool, pred: bool| {
        labels
            .iter()
            .zip(preds)
            .filter(|&(&l, &p)| l == label && p == pred)
            .count() as f64
    };
    let tpr = both(true, true) / pos as f64;
    let tnr = both(false, false) / neg as f64;
    let d = tpr + tnr - 1.0;
    if d <= 0.0 {
        return Err(EstimateError::NoBetterThanChance { tpr, tnr });
    }
    let big_n = unlabelled.len() as f64;
    let p = unlabelled.iter().filter(|&&u| u).count() as f64 / big_n;
    let raw = (p + tnr - 1.0) / d;
    let theta = raw.clamp(0.0, 1.0);
    let variance = (p * (1.0 - p) / big_n
        + raw * raw * tpr * (1.0 - tpr) / pos as f64
        + (1.0 - raw) * (1.0 - raw) * tnr * (1.0 - tnr) / neg as f64)
        / (d * d);
    let z = z(level);
    let half = z * variance.sqrt();
    let scores: Vec<f64> = unlabelled.iter().map(|&u| f64::from(u8::from(u))).collect();
    let (naive, naive_ci) = naive(&scores, z);
    Ok(Corrected {
        value: theta,
        ci: [(raw - half).clamp(0.0, 1.0), (raw + half).clamp(0.0, 1.0)],
        naive,
        naive_ci,
        n_labelled: labels.len(),
        n_unlabelled: unlabelled.len(),
        lambda: None,
        tpr: Some(tpr),
        tnr: Some(tnr),
    })
}

/// How many labelled items give a PPI++ interval of total width `width`, with the N
/// unlabelled items there are, from the variances and covariance the labelled pairs show
/// (λ tuned anew for each n: more labels lean less on the judge, so that any width is
/// reached in the end, by the humans' mean alone if need be); none without data or above
/// a hundred million labels.
pub fn ppi_labels_needed(
    y: &[f64],
    f: &[f64],
    f_unlabelled: &[f64],
    width: f64,
    level: f64,
) -> Option<usize> {
    if y.is_empty() || f_unlabelled.is_empty() || width <= 0.0 || !(0.0..1.0).contains(&level) {
        return None;
    }
    let (cov, var_f) = moments(y, f, f_unlabelled);
    let var_y = var(y);
    let big_n = f_unlabelled.len() as f64;
    let z = z(level);
    let width_at = |n: usize| {
        let n = n as f64;
        let lambda = tuned(cov, var_f, n, big_n);
        let rectifier = (var_y - 2.0 * lambda * cov + lambda * lambda * var_f).max(0.0);
        2.0 * z * (rectifier / n + lambda * lambda * var_f / big_n).sqrt()
    };
    const MOST: usize = 100_000_000;
    if width_at(MOST) > width {
        return None;
    }
    // The width falls as n grows: the least n that reaches it, by bisection.
    let (mut lo, mut hi) = (1usize, MOST);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if width_at(mid) <= width {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    Some(lo)
}

/// How many labelled items (passes and fails in the share the labelled items hold) give a
/// Rogan–Gladen interval of total width `width`; none where no number can.
pub fn rogan_gladen_labels_needed(
    labels: &[bool],
    preds: &[bool],
    unlabelled: &[bool],
    width: f64,
) -> Option<usize> {
    let c = rogan_gladen(labels, preds, unlabelled, 0.95).ok()?;
    let (tpr, tnr) = (c.tpr?, c.tnr?);
    let share = labels.iter().filter(|&&l| l).count() as f64 / labels.len() as f64;
    let d = tpr + tnr - 1.0;
    let big_n = unlabelled.len() as f64;
    let p = unlabelled.iter().filter(|&&u| u).count() as f64 / big_n;
    let theta = (p + tnr - 1.0) / d;
    let per_label = theta * theta * tpr * (1.0 - tpr) / share
        + (1.0 - theta) * (1.0 - theta) * tnr * (1.0 - tnr) / (1.0 - share);
    let room = (width / (2.0 * z(0.95))).powi(2) * d * d - p * (1.0 - p) / big_n;
    (room > 0.0 && width > 0.0).then(|| (per_label / room).ceil().max(1.0) as usize)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::SplitMix64;

    #[test]
    fn a_poor_judge_costs_nothing_and_chance_cannot_be_corrected() {
        // The judge's scores say nothing of the humans': λ is 0, the humans' mean.
        let y = [1.0, 0.0, 1.0, 0.0];
        let f = [1.0, 1.0, 0.0, 0.0];
        let c = ppi_mean(&y, &f, &[1.0, 0.0, 1.0], 0.95).unwrap();
        assert_eq!((c.lambda, c.value), (Some(0.0), 0.5));
        let err = rogan_gladen(&[true, false], &[true, true], &[true], 0.95).unwrap_err();
        assert!(
            matches!(err, EstimateError::NoBetterThanChance { .. }),
            "{err}"
        );
        assert!(rogan_gladen(&[true], &[true], &[true], 0.95).is_err());
    }

    /// A simulated world: a true pass rate, a judge with a TPR and TNR, n labelled and N
    /// unlabelled items drawn from it.
    fn world(
        rng: &mut SplitMix64,
        theta: f64,
        tpr: f64,
        tnr: f64,
        n: usize,
        big_n: usize,
    ) -> (Vec<bool>, Vec<bool>, Vec<bool>) {
        let mut draw = |count: usize| -> Vec<(bool, bool)> {
            (0..count)
                .map(|_| {
                    let pass = rng.uniform() < theta;
                    let right = rng.uniform() < if pass { tpr } else { tnr };
                    (pass, pass == right)
                })
                .collect()
        };
        let labelled = draw(n);
        let unlabelled = draw(big_n);
        (
            labelled.iter().map(|p| p.0).collect(),
            labelled.iter().map(|p| p.1).collect(),
            unlabelled.iter().map(|p| p.1).collect(),
        )
    }

    /// 2,000 simulated datasets each: the share whose interval covers the truth.
    #[test]
    fn the_intervals_cover_the_truth_in_simulation() {
        let mut rng = SplitMix64::new(20_231_105);
        let (theta, runs) = (0.3, 2000);
        let (mut ppi, mut rg, mut naive) = (0, 0, 0);
        let mut widths = (0.0, 0.0);
        for _ in 0..runs {
            let (labels, preds, unlabelled) = world(&mut rng, theta, 0.85, 0.8, 300, 3000);
            let y: Vec<f64> = labels.iter().map(|&l| f64::from(u8::from(l))).collect();
            let f: Vec<f64> = preds.iter().map(|&l| f64::from(u8::from(l))).collect();
            let fu: Vec<f64> = unlabelled.iter().map(|&l| f64::from(u8::from(l))).collect();
            let p = ppi_mean(&y, &f, &fu, 0.95).unwrap();
            let r = rogan_gladen(&labels, &preds, &unlabelled, 0.95).unwrap();
            ppi += usize::from(p.ci[0] <= theta && theta <= p.ci[1]);
            rg += usize::from(r.ci[0] <= theta && theta <= r.ci[1]);
            naive += usize::from(p.naive_ci[0] <= theta && theta <= p.naive_ci[1]);
            widths.0 += p.ci[1] - p.ci[0];
            widths.1 += (y.len() as f64).recip().sqrt() * 2.0 * 1.96 * (0.21f64).sqrt();
        }
        let rate = |k: usize| k as f64 / runs as f64;
        eprintln!(
            "coverage: PPI++ {:.4}, Rogan–Gladen {:.4}, naive {:.4}; mean width PPI++ {:.4} vs humans alone {:.4}",
            rate(ppi),
            rate(rg),
            rate(naive),
            widths.0 / runs as f64,
            widths.1 / runs as f64
        );
        assert!((0.94..=0.96).contains(&rate(ppi)), "PPI++ {}", rate(ppi));
        assert!(
            (0.94..=0.96).contains(&rate(rg)),
            "Rogan–Gladen {}",
            rate(rg)
        );
        // The judge is biased (it passes 0.3·0.85 + 0.7·0.2 = 0.395): its own figure is off.
        assert!(rate(naive) < 0.01, "naive {}", rate(naive));
        // And the judge's scores narrow the interval against the humans' alone.
        assert!(widths.0 < widths.1, "{widths:?}");
    }

    #[test]
    fn ratings_and_win_rates_are_covered_too() {
        // A rating judge that is noisy and biased (+0.5 on a 1–5 scale, rounded).
        let mut rng = SplitMix64::new(7);
        let runs = 2000;
        let mut covered = 0;
        let truth = 3.0;
        for _ in 0..runs {
            let mut draw = |count: usize| -> Vec<(f64, f64)> {
                (0..count)
                    .map(|_| {
                        let y = (1 + (rng.uniform() * 5.0) as i64).min(5) as f64;
                        let noise = if rng.uniform() < 0.3 { 1.0 } else { 0.0 };
                        (y, (y + 0.5 + noise).round().min(5.0))
                    })
                    .collect()
            };
            let labelled = draw(200);
            let unlabelled = draw(2000);
            let y: Vec<f64> = labelled.iter().map(|p| p.0).collect();
            let f: Vec<f64> = labelled.iter().map(|p| p.1).collect();
            let fu: Vec<f64> = unlabelled.iter().map(|p| p.1).collect();
            let c = ppi_mean(&y, &f, &fu, 0.95).unwrap();
            covered += usize::from(c.ci[0] <= truth && truth <= c.ci[1]);
        }
        let rate = covered as f64 / runs as f64;
        assert!((0.94..=0.96).contains(&rate), "{rate}");
    }

    #[test]
    fn the_planner_reaches_the_width_it_promises() {
        let mut rng = SplitMix64::new(11);
        let (labels, preds, unlabelled) = world(&mut rng, 0.3, 0.85, 0.8, 200, 5000);
        let y: Vec<f64> = labels.iter().map(|&l| f64::from(u8::from(l))).collect();
        let f: Vec<f64> = preds.iter().map(|&l| f64::from(u8::from(l))).collect();
        let fu: Vec<f64> = unlabelled.iter().map(|&l| f64::from(u8::from(l))).collect();
        let need = ppi_labels_needed(&y, &f, &fu, 0.08, 0.95).unwrap();
        // Labelling that many from the same world gives about that width.
        let (labels2, preds2, _) = world(&mut rng, 0.3, 0.85, 0.8, need, 0);
        let y2: Vec<f64> = labels2.iter().map(|&l| f64::from(u8::from(l))).collect();
        let f2: Vec<f64> = preds2.iter().map(|&l| f64::from(u8::from(l))).collect();
        let c = ppi_mean(&y2, &f2, &fu, 0.95).unwrap();
        let width = c.ci[1] - c.ci[0];
        assert!((width - 0.08).abs() < 0.01, "{need} labels: width {width}");
        let rg = rogan_gladen_labels_needed(&labels, &preds, &unlabelled, 0.1).unwrap();
        assert!(rg > 100 && rg < 2000, "{rg}");
        // With few unlabelled items the judge helps little: about as many labels as the
        // humans' mean alone needs (4·z²·Var(Y)/w²).
        let alone = (4.0 * 1.96f64.powi(2) * var(&y) / 0.05f64.powi(2)).ceil() as usize;
        let few = ppi_labels_needed(&y, &f, &fu[..10], 0.05, 0.95).unwrap();
        assert!(
            few <= alone && few as f64 > 0.95 * alone as f64,
            "{few} vs {alone}"
        );
        // The unlabelled items' own spread bounds a pass rate's width: below it, no number
        // of labels does.
        assert_eq!(
            rogan_gladen_labels_needed(&labels, &preds, &unlabelled[..50], 0.1),
            None
        );
    }
}
