//! Selective judging: accept the verdicts given with confidence at least a threshold and
//! send the rest to humans. The **coverage** is the share of items the judge decides (a
//! parse failure is never accepted), the **agreement** the share of accepted verdicts
//! equal to the human label.
//!
//! The threshold for a target agreement α at risk δ is chosen on the dev split by
//! fixed-sequence testing (Jung et al. 2024, "Trust or Escalate"): thresholds are tried
//! from 1 down a grid fixed in advance, each a one-sided exact binomial test of "the
//! agreement of the verdicts it accepts is below α" at level δ, and the lowest threshold
//! before the first test that fails to reject is chosen. Then, with probability at least
//! 1 − δ over the dev items, the accepted verdicts agree with humans at least α of the
//! time on new items like them. The test split says what it achieved. (Thresholds that
//! accept too few verdicts for any test to pass, near the top of the grid, are passed
//! over rather than tested; a simulation holds the guarantee with that rule.)

use serde::{Deserialize, Serialize};

use crate::trust::confidence::Judged;

/// The thresholds tried, in order: 1, 0.999, …, 0.001, 0 (a grid fixed before any data,
/// as fixed-sequence testing needs).
const GRID: usize = 1000;

/// What selective judging is asked for.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Target {
    /// α: the agreement the accepted verdicts must reach.
    pub agreement: f64,
    /// δ: the probability of missing it that is allowed.
    pub risk: f64,
}

impl Default for Target {
    fn default() -> Self {
        Target {
            agreement: 0.9,
            risk: 0.1,
        }
    }
}

/// The verdicts one threshold accepts.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Accepted {
    /// Verdicts (items and repeats) on the split.
    pub n: usize,
    pub n_accepted: usize,
    pub coverage: f64,
    /// Of the accepted verdicts, the share equal to the human label; none if none is.
    pub agreement: Option<f64>,
}

/// One point of the coverage–agreement curve.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct CurvePoint {
    pub threshold: f64,
    pub coverage: f64,
    pub agreement: f64,
}

/// A trial's selective judging.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Selective {
    pub target: Target,
    /// The threshold chosen on the dev split; none: no threshold reaches the target with
    /// that confidence, and humans check every item.
    pub threshold: Option<f64>,
    /// Verdicts on the dev split.
    pub n_dev: usize,
    pub dev: Option<Accepted>,
    /// Where the trial judged the test split: what the threshold achieved there.
    pub test: Option<Accepted>,
    /// Coverage against agreement on the dev split, one point per distinct confidence
    /// (highest first), thinned to at most [`CURVE_POINTS`].
    pub curve: Vec<CurvePoint>,
}

/// Points kept of a coverage–agreement curve.
pub const CURVE_POINTS: usize = 200;

impl Selective {
    /// What it says, in the reader's terms: "at 90% agreement (risk 0.1), this judge
    /// decides 64% of items; humans check 36% …".
    pub fn reading(&self) -> String {
        let (alpha, delta) = (100.0 * self.target.agreement, self.target.risk);
        let percent = |x: f64| format!("{:.0}%", 100.0 * x);
        match (self.threshold, self.dev) {
            (Some(t), Some(dev)) => {
                let mut out = format!(
                    "at {alpha:.0}% agreement (risk {delta}), this judge decides {} of items; humans check {} (confidence at least {t:.3}, chosen on {} dev verdicts",
                    percent(dev.coverage),
                    percent(1.0 - dev.coverage),
                    self.n_dev
                );
                match self.test {
                    Some(test) => match test.agreement {
                        Some(agreement) => out.push_str(&format!(
                            "; on {} test verdicts it decided {} at {} agreement)",
                            test.n,
                            percent(test.coverage),
                            percent(agreement)
                        )),
                        None => out.push_str(&format!(
                            "; on {} test verdicts it decided none)",
                            test.n
                        )),
                    },
                    None => out.push_str("; not confirmed on a test split)"),
                }
                out
            }
            _ => format!(
                "no confidence threshold shows {alpha:.0}% agreement at risk {delta} on {} dev verdicts: humans check every item",
                self.n_dev
            ),
        }
    }
}

/// What `threshold` accepts of `verdicts`.
pub fn accepted(verdicts: &[Judged], threshold: f64) -> Accepted {
    let n = verdicts.len();
    let (mut n_accepted, mut right) = (0, 0);
    for v in verdicts {
        if v.parsed && v.confidence.is_some_and(|c| c >= threshold) {
            n_accepted += 1;
            right += usize::from(v.correct);
        }
    }
    Accepted {
        n,
        n_accepted,
        coverage: if n > 0 {
            n_accepted as f64 / n as f64
        } else {
            0.0
        },
        agreement: (n_accepted > 0).then(|| right as f64 / n_accepted as f64),
    }
}

/// The coverage–agreement curve of `verdicts`: the threshold at each distinct confidence,
/// highest first.
pub fn curve(verdicts: &[Judged]) -> Vec<CurvePoint> {
    let n = verdicts.len();
    let mut points: Vec<(f64, bool)> = verdicts
        .iter()
        .filter(|v| v.parsed)
        .filter_map(|v| Some((v.confidence?, v.correct)))
        .collect();
    points.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut out = Vec::new();
    let (mut accepted, mut right) = (0usize, 0usize);
    for (i, &(c, ok)) in points.iter().enumerate() {
        accepted += 1;
        right += usize::from(ok);
        if points.get(i + 1).is_some_and(|next| next.0 == c) {
            continue;
        }
        out.push(CurvePoint {
            threshold: c,
            coverage: accepted as f64 / n as f64,
            agreement: right as f64 / accepted as f64,
        });
    }
    thin(out)
}

/// At most [`CURVE_POINTS`] of a curve, evenly spaced in order, its last point kept.
fn thin(points: Vec<CurvePoint>) -> Vec<CurvePoint> {
    let len = points.len();
    if len <= CURVE_POINTS {
        return points;
    }
    (0..CURVE_POINTS)
        .map(|i| points[(i * (len - 1)) / (CURVE_POINTS - 1)])
        .collect()
}

/// The threshold fixed-sequence testing chooses on `dev` for `target`; none where even
/// the first threshold that accepts enough verdicts to be tested fails its test.
pub fn threshold(dev: &[Judged], target: Target) -> Option<f64> {
    let mut points: Vec<(f64, bool)> = dev
        .iter()
        .filter(|v| v.parsed)
        .filter_map(|v| Some((v.confidence?, v.correct)))
        .collect();
    points.sort_by(|a, b| b.0.total_cmp(&a.0));
    let untestable = (target.risk.ln() / target.agreement.ln()).ceil().max(1.0) as usize;
    let (mut n, mut wrong) = (0, 0);
    let mut chosen = None;
    let mut last: Option<(usize, bool)> = None;
    for j in 0..=GRID {
        let lambda = 1.0 - j as f64 / GRID as f64;
        while n < points.len() && points[n].0 >= lambda {
            wrong += usize::from(!points[n].1);
            n += 1;
        }
        // A threshold that accepts too few verdicts for any test to pass (α^n > δ even
        // with none wrong) is not tested: the grid's top accepts a handful, and stopping
        // there would end every sequence before it began.
        if n < untestable {
            continue;
        }
        // Neighbouring thresholds often accept the same verdicts: the same test.
        let rejected = match last {
            Some((ln, r)) if ln == n => r,
            _ => binomial_cdf(wrong, n, 1.0 - target.agreement) <= target.risk,
        };
        last = Some((n, rejected));
        if !rejected {
            break;
        }
        chosen = Some(lambda);
    }
    chosen
}

/// P(X ≤ k) for X ~ Binomial(n, p): the p-value of seeing at most k disagreements among n
/// accepted verdicts if their disagreement rate were p.
pub fn binomial_cdf(k: usize, n: usize, p: f64) -> f64 {
    if k >= n || p <= 0.0 {
        return 1.0;
    }
    if p >= 1.0 {
        return 0.0;
    }
    // Terms in log space, from ln P(X = 0) = n ln(1 - p), each the one before times
    // (n - i) / (i + 1) · p / (1 - p); summed relative to the largest.
    let (ln_p, ln_q) = (p.ln(), (-p).ln_1p());
    let mut terms = Vec::with_capacity(k + 1);
    let mut ln_term = n as f64 * ln_q;
    for i in 0..=k {
        terms.push(ln_term);
        ln_term += ((n - i) as f64).ln() - ((i + 1) as f64).ln() + ln_p - ln_q;
    }
    let max = terms.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (max + terms.iter().map(|t| (t - max).exp()).sum::<f64>().ln())
        .exp()
        .min(1.0)
}

/// Selective judging of a trial: the threshold chosen on `dev` for `target`, what it
/// accepts there and (where the trial judged it) on `test`, and the dev curve. None where
/// no dev verdict has a confidence.
pub fn selective(dev: &[Judged], test: Option<&[Judged]>, target: Target) -> Option<Selective> {
    if !dev.iter().any(|v| v.confidence.is_some()) {
        return None;
    }
    let threshold = threshold(dev, target);
    Some(Selective {
        target,
        threshold,
        n_dev: dev.len(),
        dev: threshold.map(|t| accepted(dev, t)),
        test: threshold.zip(test).map(|(t, test)| accepted(test, t)),
        curve: curve(dev),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(confidence: f64, correct: bool) -> Judged {
        Judged {
            repeat: 0,
            unit: 0,
            parsed: true,
            correct,
            confidence: Some(confidence),
        }
    }

    #[test]
    fn binomial_cdf_matches_direct_sums() {
        // P(X <= 2), n = 10, p = 0.3: 0.7^10 + 10·0.3·0.7^9 + 45·0.09·0.7^8.
        let want = 0.7f64.powi(10) + 10.0 * 0.3 * 0.7f64.powi(9) + 45.0 * 0.09 * 0.7f64.powi(8);
        assert!((binomial_cdf(2, 10, 0.3) - want).abs() < 1e-12);
        assert_eq!(binomial_cdf(10, 10, 0.3), 1.0);
        // Far in the tail, without underflow to a NaN.
        let tiny = binomial_cdf(0, 5000, 0.1);
        assert!((0.0..1e-200).contains(&tiny), "{tiny}");
    }

    #[test]
    fn the_threshold_stops_where_agreement_can_no_longer_be_shown() {
        // 200 verdicts at 0.95 all right, then 200 at 0.5 half right.
        let mut dev: Vec<Judged> = (0..200).map(|_| judged(0.95, true)).collect();
        dev.extend((0..200).map(|i| judged(0.5, i % 2 == 0)));
        let t = threshold(&dev, Target::default()).unwrap();
        // Every threshold down to 0.95 accepts only the right ones; below 0.5 the
        // agreement is 0.75, which cannot pass 0.9.
        assert!((0.5..=0.95).contains(&t) && t > 0.5, "{t}");
        let a = accepted(&dev, t);
        assert_eq!(
            (a.n_accepted, a.coverage, a.agreement),
            (200, 0.5, Some(1.0))
        );
        // A judge that is always wrong gets no threshold.
        let bad: Vec<Judged> = (0..100).map(|_| judged(0.99, false)).collect();
        assert_eq!(threshold(&bad, Target::default()), None);
        let c = curve(&dev);
        assert_eq!(c.len(), 2);
        assert_eq!((c[1].coverage, c[1].agreement), (1.0, 0.75));
    }

    /// Over 2,000 simulated dev splits of 1,000 verdicts whose confidence overstates them
    /// (confidence c uniform on [0.5, 1], right with probability c²), the threshold chosen
    /// for 90% agreement at risk 0.1 accepts verdicts whose true agreement reaches 90% in
    /// at least 90% of them.
    #[test]
    fn the_guarantee_holds_in_simulation() {
        let target = Target::default();
        // The true agreement of the verdicts at confidence t or more: the mean of c² over
        // [max(t, 0.5), 1].
        let truth = |t: f64| {
            let t = t.max(0.5);
            (1.0 + t + t * t) / 3.0
        };
        let mut rng = crate::rng::SplitMix64::new(5);
        let mut uniform = || rng.uniform();
        let (n_sets, mut held, mut chosen, mut coverage) = (2000, 0, 0, 0.0);
        for _ in 0..n_sets {
            let dev: Vec<Judged> = (0..1000)
                .map(|_| {
                    let c = 0.5 + 0.5 * uniform();
                    judged(c, uniform() < c * c)
                })
                .collect();
            match threshold(&dev, target) {
                Some(t) => {
                    chosen += 1;
                    held += usize::from(truth(t) >= target.agreement);
                    coverage += accepted(&dev, t).coverage;
                }
                // Humans check every item: the target cannot be missed.
                None => held += 1,
            }
        }
        let rate = held as f64 / n_sets as f64;
        assert!(rate >= 1.0 - target.risk, "held in {rate}");
        // And it is no empty promise: most of the time a threshold, deciding about a tenth
        // of the items (the true threshold, 0.896, accepts 21%; one wrong verdict among
        // the first few dozen ends a sequence, as fixed-sequence testing must).
        assert!(chosen > n_sets * 7 / 10, "chosen {chosen}");
        let coverage = coverage / chosen as f64;
        assert!((0.07..0.21).contains(&coverage), "coverage {coverage}");
    }
}
