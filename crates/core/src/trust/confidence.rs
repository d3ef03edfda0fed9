//! How sure the judge was of each verdict, from what it gives:
//! - **exact**: the model's own next-token distribution over the verdicts (temperature 1,
//!   no top_p, after a grammar's mask), which an exact trial reads from the logits it
//!   judges from (`VerdictRecord::belief`). Not the trial's sampling distribution: at
//!   temperature 0 that is certain of every verdict;
//! - **logprobs**: the top log-probabilities of a generation (a local judge's always, a
//!   remote judge's where asked with `top_logprobs`) at the first output token that reads
//!   as the verdict;
//! - **repeats**: where neither exists and the sweep repeats each call, the share of the
//!   item's repeats that gave the same verdict.
//!
//! A call's confidence is the probability of its verdict among the verdicts (the mass of
//! tokens that are no verdict left out): the judge's belief that this verdict, rather than
//! another, is the answer. A pairwise item judged in both orders has the probability that
//! the two orders combine ([`position::combine`]) into its verdict, the orders drawn
//! independently; one judged `debiased`, its averaged belief in it ([`position::averaged`]). A parse failure has no confidence; it is never a verdict to accept.

use crate::dataset::{Label, Task};
use crate::metrics::position;
use crate::metrics::quality::Scored;
use crate::metrics::{self, Observation};
use crate::sweep::Order;
use crate::trust::belief::{same, ConfidenceKind};
use crate::verdict::Verdict;

/// One verdict (the calls on one item and repeat) as selective judging sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judged {
    /// The item, numbered as in the observations, and the repeat.
    pub unit: usize,
    pub repeat: u32,
    /// The judge gave a verdict (not a parse failure).
    pub parsed: bool,
    /// The verdict equals the human label (by category for ratings).
    pub correct: bool,
    /// `None` for a parse failure, or where the trial has no confidence.
    pub confidence: Option<f64>,
}

/// A trial's verdicts with their confidences, and where those come from (none: the trial
/// has no confidence). Verdicts whose call failed are left out, as the metrics leave them.
pub fn judged(task: Task, observations: &[Observation]) -> (Option<ConfidenceKind>, Vec<Judged>) {
    let groups = metrics::group(observations);
    let believed = observations
        .iter()
        .find_map(|o| o.belief.as_ref().map(|b| b.kind));
    let repeats = observations.iter().any(|o| o.repeat > 0);
    let kind = believed.or(repeats.then_some(ConfidenceKind::Repeats));
    // For repeats: each item's verdicts, to count those that agree.
    let mut by_unit: std::collections::HashMap<usize, Vec<Option<Label>>> = Default::default();
    if kind == Some(ConfidenceKind::Repeats) {
        for g in &groups {
            if let Some(v) = g.verdict {
                by_unit.entry(g.unit).or_default().push(v.label());
            }
        }
    }
    let out = groups
        .iter()
        .filter_map(|g| {
            let verdict = g.verdict?;
            let human = g.calls[0].human;
            let label = verdict.label();
            let confidence = label.and_then(|v| match kind? {
                ConfidenceKind::Repeats => {
                    let all = &by_unit[&g.unit];
                    let agree = all
                        .iter()
                        .filter(|l| l.is_some_and(|l| same(task, l, v)))
                        .count();
                    Some(agree as f64 / all.len() as f64)
                }
                _ => combined(task, &g.calls, v),
            });
            Some(Judged {
                unit: g.unit,
                repeat: g.calls[0].repeat,
                parsed: label.is_some(),
                correct: Scored::new(task, human, label).correct(),
                confidence,
            })
        })
        .collect();
    (kind, out)
}

/// The probability that the calls of one verdict give `verdict`: one call's belief in it,
/// or for both answer orders, that the two combine into it.
fn combined(task: Task, calls: &[&Observation], verdict: Label) -> Option<f64> {
    match calls {
        [one] => Some(one.belief.as_ref()?.p(task, verdict)),
        [first, second] if first.order == Order::Debiased => {
            let (x, y) = (first.belief.as_ref()?, second.belief.as_ref()?);
            let avg =
                position::averaged((verdict_of(first), Some(x)), (verdict_of(second), Some(y)))?;
            Some(
                avg.iter()
                    .filter(|(l, _)| *l == verdict)
                    .map(|(_, p)| p)
                    .sum(),
            )
        }
        [first, second] => {
            let (x, y) = (first.belief.as_ref()?, second.belief.as_ref()?);
            let mut p = 0.0;
            for &(a, pa) in &x.labels {
                for &(b, pb) in &y.labels {
                    let c = position::combine(Verdict::Parsed(a), Verdict::Parsed(b));
                    if c.label().is_some_and(|c| same(task, c, verdict)) {
                        p += pa * pb;
                    }
                }
            }
            Some(p)
        }
        _ => None,
    }
}

/// A call's verdict for [`position::averaged`], which reads its belief instead.
fn verdict_of(o: &Observation) -> Verdict {
    o.verdict
        .unwrap_or(Verdict::Failed(crate::verdict::FailureKind::NoLabel))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::Choice;
    use crate::trust::Belief;

    const A: Label = Label::Choice(Choice::A);
    const B: Label = Label::Choice(Choice::B);

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    fn observation(
        unit: usize,
        swapped: bool,
        verdict: Label,
        belief: &[(Label, f64)],
    ) -> Observation {
        Observation {
            swapped,
            belief: Belief::normalised(ConfidenceKind::Exact, belief.to_vec()),
            ..Observation::verdict(unit, A, verdict)
        }
    }

    #[test]
    fn two_orders_combine_their_beliefs() {
        let obs = [
            observation(0, false, A, &[(A, 0.8), (B, 0.2)]),
            observation(0, true, A, &[(A, 0.6), (B, 0.4)]),
            observation(1, false, A, &[(A, 0.8), (B, 0.2)]),
            observation(1, true, B, &[(A, 0.3), (B, 0.7)]),
        ];
        let (kind, judged) = judged(Task::Pairwise, &obs);
        assert_eq!(kind, Some(ConfidenceKind::Exact));
        close(judged[0].confidence.unwrap(), 0.8 * 0.6);
        assert!(judged[0].correct);
        // Disagreeing orders are a tie: every pair that is not A-A or B-B.
        close(judged[1].confidence.unwrap(), 1.0 - 0.8 * 0.3 - 0.2 * 0.7);
        assert!(!judged[1].correct);
    }

    #[test]
    fn debiased_orders_are_as_sure_as_their_averaged_beliefs() {
        let debiased = |o: Observation| Observation {
            order: Order::Debiased,
            ..o
        };
        let obs = [
            observation(0, false, A, &[(A, 0.8), (B, 0.2)]),
            observation(0, true, A, &[(A, 0.6), (B, 0.4)]),
            observation(1, false, A, &[(A, 0.8), (B, 0.2)]),
            observation(1, true, B, &[(A, 0.3), (B, 0.7)]),
        ]
        .map(debiased);
        let (_, judged) = judged(Task::Pairwise, &obs);
        close(judged[0].confidence.unwrap(), 0.7);
        // The orders disagree, but A is the likelier on average (0.55): no tie.
        close(judged[1].confidence.unwrap(), 0.55);
        assert!(judged[0].correct && judged[1].correct);
    }

    #[test]
    fn repeats_agree_or_not_and_failures_have_no_confidence() {
        let task = Task::Pairwise;
        let mut obs: Vec<Observation> = [A, A, B]
            .iter()
            .enumerate()
            .map(|(r, &v)| Observation {
                repeat: r as u32,
                ..Observation::verdict(0, A, v)
            })
            .collect();
        obs.push(Observation {
            repeat: 3,
            verdict: Some(Verdict::Failed(crate::FailureKind::NoLabel)),
            ..Observation::verdict(0, A, A)
        });
        let (kind, judged) = judged(task, &obs);
        assert_eq!(kind, Some(ConfidenceKind::Repeats));
        let c: Vec<Option<f64>> = judged.iter().map(|j| j.confidence).collect();
        assert_eq!(c, vec![Some(0.5), Some(0.5), Some(0.25), None]);
        assert!(!judged[3].parsed);
        // One call per item and nothing believed: no confidence at all.
        let (kind, judged) = super::judged(task, &obs[..1]);
        assert_eq!((kind, judged[0].confidence), (None, None));
    }
}
