//! Position bias in pairwise judging: does the verdict survive swapping the answers, and
//! how often does the judge prefer whichever answer it reads first?
//!
//! Verdicts here are in the dataset's frame (`A` is the dataset's answer A, whichever
//! position it was shown in); `swapped` says it was shown second.

use serde::{Deserialize, Serialize};

use crate::dataset::{Choice, Label};
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
