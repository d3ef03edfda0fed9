//! Calibration of a trial's confidences: does a verdict given with confidence 0.8 agree
//! with the human 80% of the time?
//!
//! - The **reliability curve** bins the verdicts by confidence into ten equal-width bins, as
//!   scikit-learn's `calibration_curve(strategy="uniform")` does (a confidence on an edge
//!   falls in the bin below it; empty bins are left out), and gives each bin's mean
//!   confidence and share of correct verdicts.
//! - The **expected calibration error** is the mean gap between the two, bins weighted by
//!   their verdicts (Guo et al. 2017).
//! - The **Brier score** is the mean squared gap between each confidence and whether its
//!   verdict is right (scikit-learn's `brier_score_loss`).
//!
//! Only parsed verdicts with a confidence are counted; `n` says how many. Intervals
//! resample items, as every interval in `metrics` does.

use serde::Serialize;

use crate::metrics::BootstrapSpec;
use crate::trust::belief::ConfidenceKind;
use crate::trust::confidence::Judged;

/// Bins of the reliability curve.
pub const BINS: usize = 10;

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Calibration {
    pub confidence_kind: ConfidenceKind,
    /// Verdicts with a confidence.
    pub n: usize,
    pub ece: Option<f64>,
    pub ece_ci: Option<[f64; 2]>,
    pub brier: Option<f64>,
    pub brier_ci: Option<[f64; 2]>,
    /// The reliability curve's non-empty bins, lowest confidence first.
    pub bins: Vec<Bin>,
}

/// One bin of the reliability curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Bin {
    pub low: f64,
    pub high: f64,
    pub n: usize,
    /// The mean confidence of its verdicts.
    pub confidence: f64,
    /// The share of them that are right.
    pub accuracy: f64,
}

/// Sums of the points in one bin, or in all of them.
#[derive(Debug, Clone, Copy, Default)]
struct Sums {
    n: usize,
    confidence: f64,
    right: usize,
    /// The squared gaps of the Brier score.
    squared: f64,
}

impl Sums {
    fn add(&mut self, other: &Sums) {
        self.n += other.n;
        self.confidence += other.confidence;
        self.right += other.right;
        self.squared += other.squared;
    }
}

/// numpy's `linspace(0, 1, BINS + 1)`, edge for edge.
fn edge(i: usize) -> f64 {
    i as f64 * (1.0 / BINS as f64)
}

/// The bin of a confidence: numpy's `searchsorted(edges[1:-1], c)`, side left (the first
/// inner edge at or above it).
fn bin_of(c: f64) -> usize {
    (1..BINS).position(|i| edge(i) >= c).unwrap_or(BINS - 1)
}

/// Points summed by bin.
fn binned(points: &[(f64, bool)]) -> [Sums; BINS] {
    let mut bins = [Sums::default(); BINS];
    for &(c, right) in points {
        let gap = c - f64::from(u8::from(right));
        bins[bin_of(c)].add(&Sums {
            n: 1,
            confidence: c,
            right: usize::from(right),
            squared: gap * gap,
        });
    }
    bins
}

fn curve_of(bins: &[Sums; BINS]) -> Vec<Bin> {
    bins.iter()
        .enumerate()
        .filter(|(_, s)| s.n > 0)
        .map(|(i, s)| Bin {
            low: edge(i),
            high: if i + 1 == BINS { 1.0 } else { edge(i + 1) },
            n: s.n,
            confidence: s.confidence / s.n as f64,
            accuracy: s.right as f64 / s.n as f64,
        })
        .collect()
}

fn ece_of(bins: &[Sums; BINS]) -> Option<f64> {
    let n: usize = bins.iter().map(|s| s.n).sum();
    (n > 0).then(|| {
        curve_of(bins)
            .iter()
            .map(|b| b.n as f64 / n as f64 * (b.accuracy - b.confidence).abs())
            .sum()
    })
}

fn brier_of(bins: &[Sums; BINS]) -> Option<f64> {
    let n: usize = bins.iter().map(|s| s.n).sum();
    (n > 0).then(|| bins.iter().map(|s| s.squared).sum::<f64>() / n as f64)
}

/// The reliability curve of (confidence, right) points.
pub fn reliability(points: &[(f64, bool)]) -> Vec<Bin> {
    curve_of(&binned(points))
}

/// The expected calibration error of (confidence, right) points.
pub fn ece(points: &[(f64, bool)]) -> Option<f64> {
    ece_of(&binned(points))
}

/// The Brier score of (confidence, right) points.
pub fn brier(points: &[(f64, bool)]) -> Option<f64> {
    brier_of(&binned(points))
}

/// A trial's calibration, from its verdicts with their confidences (`kind` says where
/// they come from); none where no verdict has one.
pub fn calibration(
    kind: ConfidenceKind,
    verdicts: &[Judged],
    spec: &BootstrapSpec,
) -> Option<Calibration> {
    // Points summed by item and bin, so that a resample adds up the items it draws.
    let mut units: std::collections::BTreeMap<usize, Vec<(f64, bool)>> = Default::default();
    for v in verdicts {
        if let (true, Some(c)) = (v.parsed, v.confidence) {
            units.entry(v.unit).or_default().push((c, v.correct));
        }
    }
    let units: Vec<Vec<(usize, Sums)>> = units
        .into_values()
        .map(|points| {
            binned(&points)
                .into_iter()
                .enumerate()
                .filter(|(_, s)| s.n > 0)
                .collect()
        })
        .collect();
    let total = |idx: &mut dyn Iterator<Item = usize>| {
        let mut bins = [Sums::default(); BINS];
        for u in idx {
            for (b, s) in &units[u] {
                bins[*b].add(s);
            }
        }
        bins
    };
    let all = total(&mut (0..units.len()));
    let n: usize = all.iter().map(|s| s.n).sum();
    if n == 0 {
        return None;
    }
    let (mut eces, mut briers) = (Vec::new(), Vec::new());
    spec.for_each_resample(units.len(), |idx| {
        let bins = total(&mut idx.iter().copied());
        eces.push(ece_of(&bins));
        briers.push(brier_of(&bins));
    });
    let ci = |values: Vec<Option<f64>>| {
        (spec.resamples > 0)
            .then(|| spec.interval(values))
            .flatten()
            .map(|(l, h)| [l, h])
    };
    Some(Calibration {
        confidence_kind: kind,
        n,
        ece: ece_of(&all),
        ece_ci: ci(eces),
        brier: brier_of(&all),
        brier_ci: ci(briers),
        bins: curve_of(&all),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_fall_in_the_bin_below_and_empty_bins_are_left_out() {
        let points = [
            (0.0, false),
            (0.1, true),
            (0.15, false),
            (1.0, true),
            (0.95, false),
        ];
        let bins = reliability(&points);
        let counts: Vec<(f64, usize)> = bins.iter().map(|b| (b.low, b.n)).collect();
        assert_eq!(counts, vec![(0.0, 2), (0.1, 1), (0.9, 2)]);
        assert!((bins[0].confidence - 0.05).abs() < 1e-15);
        assert_eq!(bins[0].accuracy, 0.5);
        // Bin 0: |0.5 - 0.05| * 2/5; bin 1: |0 - 0.15| / 5; bin 9: |0.5 - 0.975| * 2/5.
        let want = 0.45 * 0.4 + 0.15 * 0.2 + 0.475 * 0.4;
        assert!((ece(&points).unwrap() - want).abs() < 1e-12);
        let b = (0.0 + 0.81 + 0.0225 + 0.0 + 0.9025) / 5.0;
        assert!((brier(&points).unwrap() - b).abs() < 1e-12);
        assert_eq!(ece(&[]), None);
    }
}
