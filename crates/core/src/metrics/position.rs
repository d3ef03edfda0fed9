//! Position bias in pairwise judging: does the verdict survive swapping the answers, and
//! how often does the judge prefer whichever answer it reads first?
//!
//! Verdicts here are in the dataset's frame (`A` is the dataset's answer A, whichever
//! position it was shown in); `swapped` says it was shown second.

use serde::{Deserialize, Serialize};

use crate::dataset::{Choice, Label};
use crate::sweep::Order;
use crate::trust::belief::Belief;
use crate::verdict::Verdict;

/// Position statistics of a trial (MT-Bench reports both: GPT-4 was 65% consistent).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PositionBias {
    /// Items (and repeats) judged in both orders with both verdicts parsed.
    pub n_both: usize,
    /// Share of those whose two verdicts agree.
    pub consistency: Option<f64>,
    /// Parsed verdicts, in any order.
    pub n_verdicts: usize,
    /// Share of parsed verdicts that chose the answer shown first (a tie chooses neither).
    pub first_preferred: Option<f64>,
}

/// The verdict kept from judging an item in both orders, as MT-Bench keeps it: the label
/// when the two agree, a tie when they do not, and a failure if either failed.
pub fn combine(ab: Verdict, ba: Verdict) -> Verdict {
    match (ab, ba) {
        (Verdict::Failed(kind), _) | (_, Verdict::Failed(kind)) => Verdict::Failed(kind),
        (Verdict::Parsed(x), Verdict::Parsed(y)) if x == y => Verdict::Parsed(x),
        _ => Verdict::Parsed(Label::Choice(Choice::Tie)),
    }
}

/// The verdict of an item judged in both orders, as the trial's `order` combines them: by
/// probability for `debiased` ([`debias`]), by agreement otherwise ([`combine`]).
pub fn combine_as(order: Order, ab: Believed<'_>, ba: Believed<'_>) -> Verdict {
    match order {
        Order::Debiased => debias(ab, ba),
        Order::Ab | Order::Ba | Order::Both => combine(ab.0, ba.0),
    }
}

/// One order's call as [`debias`] reads it: its verdict, and its belief where it has one.
pub type Believed<'a> = (Verdict, Option<&'a Belief>);

/// The two orders' beliefs in A, B and tie, averaged (in the dataset's frame): a call
/// without a belief is certain of its verdict. `None` where a call has neither a belief nor
/// a parsed verdict.
pub fn averaged(ab: Believed<'_>, ba: Believed<'_>) -> Option<[(Label, f64); 3]> {
    let mut out = [Choice::A, Choice::B, Choice::Tie].map(|c| (Label::Choice(c), 0.0));
    for (verdict, belief) in [ab, ba] {
        match (belief, verdict) {
            (Some(b), _) => {
                for (label, p) in &mut out {
                    *p += b.p(crate::dataset::Task::Pairwise, *label) / 2.0;
                }
            }
            (None, Verdict::Parsed(label)) => {
                for (l, p) in &mut out {
                    *p += if *l == label { 0.5 } else { 0.0 };
                }
            }
            (None, Verdict::Failed(_)) => return None,
        }
    }
    Some(out)
}

/// The verdict of an item judged in both orders and combined by probability (the order
/// axis's `debiased`): the most likely of A, B and tie under the two orders' averaged
/// beliefs ([`averaged`]); where two are equally likely, a tie, so that two calls without
/// beliefs combine as [`combine`] does. A parse failure without a belief makes it a failure.
pub fn debias(ab: Believed<'_>, ba: Believed<'_>) -> Verdict {
    let Some(p) = averaged(ab, ba) else {
        let failed = [ab.0, ba.0]
            .into_iter()
            .find(|v| matches!(v, Verdict::Failed(_)));
        return failed.unwrap_or(ab.0);
    };
    let best = p.iter().map(|&(_, p)| p).fold(f64::NEG_INFINITY, f64::max);
    let mut most = p.iter().filter(|&&(_, q)| q == best);
    match (most.next(), most.next()) {
        (Some(&(label, _)), None) => Verdict::Parsed(label),
        _ => Verdict::Parsed(Label::Choice(Choice::Tie)),
    }
}

/// Whether a verdict chose the answer shown first.
fn chose_first(label: Label, swapped: bool) -> bool {
    matches!(
        (label, swapped),
        (Label::Choice(Choice::A), false) | (Label::Choice(Choice::B), true)
    )
}

/// Position statistics over groups of calls on one item and repeat: `(swapped, verdict)`
/// per call.
pub fn position_bias<'a>(
    groups: impl IntoIterator<Item = &'a [(bool, Option<Label>)]>,
) -> PositionBias {
    let (mut n_both, mut consistent, mut n_verdicts, mut first) = (0, 0, 0, 0);
    for calls in groups {
        for &(swapped, label) in calls {
            if let Some(label) = label {
                n_verdicts += 1;
                first += usize::from(chose_first(label, swapped));
            }
        }
        let in_order = |s: bool| calls.iter().find(|c| c.0 == s).and_then(|c| c.1);
        if let (Some(ab), Some(ba)) = (in_order(false), in_order(true)) {
            n_both += 1;
            consistent += usize::from(ab == ba);
        }
    }
    let share = |k: usize, n: usize| (n > 0).then(|| k as f64 / n as f64);
    PositionBias {
        n_both,
        consistency: share(consistent, n_both),
        n_verdicts,
        first_preferred: share(first, n_verdicts),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::FailureKind;

    const A: Label = Label::Choice(Choice::A);
    const B: Label = Label::Choice(Choice::B);
    const TIE: Label = Label::Choice(Choice::Tie);

    #[test]
    fn combine_keeps_agreement_and_ties_disagreement() {
        assert_eq!(
            combine(Verdict::Parsed(A), Verdict::Parsed(A)),
            Verdict::Parsed(A)
        );
        assert_eq!(
            combine(Verdict::Parsed(A), Verdict::Parsed(B)),
            Verdict::Parsed(TIE)
        );
        let failed = Verdict::Failed(FailureKind::NoLabel);
        assert_eq!(combine(Verdict::Parsed(A), failed), failed);
    }

    fn belief(a: f64, b: f64, tie: f64) -> Belief {
        Belief {
            kind: crate::trust::belief::ConfidenceKind::Exact,
            labels: vec![(A, a), (B, b), (TIE, tie)],
            failed: 0.0,
        }
    }

    #[test]
    fn debias_takes_the_most_likely_of_the_averaged_beliefs() {
        let p = |v| Verdict::Parsed(v);
        // Each order prefers the answer shown first, the first (A) more strongly: averaged,
        // A 0.525, B 0.425, tie 0.05. Agreement would call it a tie.
        let (ab, ba) = (belief(0.8, 0.15, 0.05), belief(0.25, 0.7, 0.05));
        assert_eq!(debias((p(A), Some(&ab)), (p(B), Some(&ba))), p(A));
        assert_eq!(combine(p(A), p(B)), p(TIE));
        let avg = averaged((p(A), Some(&ab)), (p(B), Some(&ba))).unwrap();
        assert!((avg[0].1 - 0.525).abs() < 1e-12 && (avg[1].1 - 0.425).abs() < 1e-12);
        // Without beliefs: agreement kept, disagreement a tie, as `combine` has it.
        assert_eq!(debias((p(B), None), (p(B), None)), p(B));
        assert_eq!(debias((p(A), None), (p(B), None)), p(TIE));
        // A failure with a belief is read by its belief; without one, it is the verdict.
        let failed = Verdict::Failed(FailureKind::NoLabel);
        assert_eq!(debias((failed, Some(&ab)), (p(A), None)), p(A));
        assert_eq!(debias((p(A), Some(&ab)), (failed, None)), failed);
        // One order's belief against the other's certainty: A 0.1 + 0.5, B 0.4 (the
        // sampled verdict of a call with a belief is not read).
        assert_eq!(
            debias((p(B), Some(&belief(0.2, 0.8, 0.0))), (p(A), None)),
            p(A)
        );
        assert_eq!(
            debias((p(A), Some(&belief(0.0, 1.0, 0.0))), (p(A), None)),
            p(TIE)
        );
    }

    #[test]
    fn consistency_and_first_preference() {
        // Item 1: A in both orders (consistent; first shown once). Item 2: the judge always
        // picks the first answer (A, then B when swapped): inconsistent. Item 3: one order.
        let groups: Vec<Vec<(bool, Option<Label>)>> = vec![
            vec![(false, Some(A)), (true, Some(A))],
            vec![(false, Some(A)), (true, Some(B))],
            vec![(false, Some(TIE)), (true, None)],
        ];
        let bias = position_bias(groups.iter().map(Vec::as_slice));
        assert_eq!(bias.n_both, 2);
        assert_eq!(bias.consistency, Some(0.5));
        assert_eq!(bias.n_verdicts, 5);
        assert_eq!(bias.first_preferred, Some(3.0 / 5.0));
    }
}
