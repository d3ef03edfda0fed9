//! What a judge believed of one call's verdict: its probabilities over the verdicts, from
//! an exact trial's logits or from returned log-probabilities, and the kind of source
//! (see [`crate::trust::confidence`] for how they become confidences).

use serde::{Deserialize, Serialize};

use crate::dataset::{Choice, Label, Task};
use crate::metrics::quality::Scored;
use crate::sampling::VerdictDistribution;
use crate::verdict::{self, OutputKind, Verdict};

/// Where a trial's confidences come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConfidenceKind {
    Exact,
    Logprobs,
    Repeats,
}

crate::names!(ConfidenceKind {
    Exact => "exact",
    Logprobs => "logprobs",
    Repeats => "repeats",
});

/// One call's probabilities over the verdicts, in the dataset's frame, summing to 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Belief {
    pub kind: ConfidenceKind,
    pub labels: Vec<(Label, f64)>,
    /// The judge's probability of an output that is no verdict, which `labels` leave out
    /// (known for exact verdicts; 0 elsewhere): what drift's divergence adds back.
    pub failed: f64,
}

impl Belief {
    /// An exact trial's belief: its distribution at temperature 1 over the verdicts alone.
    pub fn exact(d: &VerdictDistribution) -> Option<Belief> {
        let verdicts: f64 = d.labels.iter().map(|(_, p)| p).sum();
        let failed = d.failed / (verdicts + d.failed);
        Belief::normalised(ConfidenceKind::Exact, d.labels.clone()).map(|b| Belief { failed, ..b })
    }

    /// The belief in a judge's returned log-probabilities (OpenAI's `logprobs.content`: a
    /// list of `{token, logprob, top_logprobs: [{token, logprob}]}`), at the first token
    /// that reads as `verdict` on its own; `swapped` says the call showed the answers in
    /// swapped order (the tokens are in its frame, `verdict` in the dataset's). None where
    /// no such token has its alternatives listed.
    pub fn from_logprobs(json: &str, task: Task, swapped: bool, verdict: Label) -> Option<Belief> {
        // Typed and borrowed: read for every verdict of every summary, so no `Value` tree.
        let entries: Vec<Entry<'_>> = serde_json::from_str(json).ok()?;
        let read =
            |token: &str| match verdict::parse(OutputKind::default_for(task), task, token, false) {
                Verdict::Parsed(label) => Some(in_frame(label, swapped)),
                Verdict::Failed(_) => None,
            };
        let entry = entries.iter().find(|e| {
            e.token
                .as_deref()
                .and_then(read)
                .is_some_and(|l| same(task, l, verdict))
        })?;
        let mut labels: Vec<(Label, f64)> = Vec::new();
        for t in &entry.top_logprobs {
            let (Some(token), Some(logprob)) = (t.token.as_deref(), t.logprob) else {
                continue;
            };
            let Some(label) = read(token) else { continue };
            match labels.iter_mut().find(|(l, _)| same(task, *l, label)) {
                Some((_, p)) => *p += logprob.exp(),
                None => labels.push((label, logprob.exp())),
            }
        }
        Belief::normalised(ConfidenceKind::Logprobs, labels)
    }

    pub(crate) fn normalised(kind: ConfidenceKind, labels: Vec<(Label, f64)>) -> Option<Belief> {
        let mass: f64 = labels.iter().map(|(_, p)| p).sum();
        (mass > 0.0 && mass.is_finite()).then(|| Belief {
            kind,
            labels: labels.into_iter().map(|(l, p)| (l, p / mass)).collect(),
            failed: 0.0,
        })
    }

    /// The probability of `label` (ratings by category, as everywhere in `metrics`).
    pub fn p(&self, task: Task, label: Label) -> f64 {
        self.labels
            .iter()
            .filter(|(l, _)| same(task, *l, label))
            .map(|(_, p)| p)
            .sum()
    }
}

/// One position of OpenAI's `logprobs.content`, as far as a belief reads it (other fields,
/// such as `bytes`, are skipped).
#[derive(Deserialize)]
struct Entry<'a> {
    #[serde(borrow, default)]
    token: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    top_logprobs: Vec<Alternative<'a>>,
}

#[derive(Deserialize)]
struct Alternative<'a> {
    #[serde(borrow, default)]
    token: Option<std::borrow::Cow<'a, str>>,
    #[serde(default)]
    logprob: Option<f64>,
}

/// A swapped call's label in the dataset's frame (and back: swapping is its own inverse).
fn in_frame(label: Label, swapped: bool) -> Label {
    match (label, swapped) {
        (Label::Choice(Choice::A), true) => Label::Choice(Choice::B),
        (Label::Choice(Choice::B), true) => Label::Choice(Choice::A),
        _ => label,
    }
}

/// Two labels are the same verdict: equal choices, or ratings in the same category.
pub(crate) fn same(task: Task, a: Label, b: Label) -> bool {
    let s = Scored::new(task, a, Some(b));
    s.correct()
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Label = Label::Choice(Choice::A);
    const B: Label = Label::Choice(Choice::B);

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    #[test]
    fn logprobs_are_read_at_the_verdicts_token_in_the_dataset_frame() {
        let json = r#"[{"token":"{\"","logprob":-0.01,"top_logprobs":[{"token":"{\"","logprob":-0.01}]},
            {"token":" B","logprob":-0.2,"top_logprobs":[{"token":" B","logprob":-0.2},
              {"token":"B","logprob":-2.5},{"token":" A","logprob":-1.9},{"token":"The","logprob":-3.0}]}]"#;
        // Shown swapped: the call's B is the dataset's A.
        let b = Belief::from_logprobs(json, Task::Pairwise, true, A).unwrap();
        let (pb, pa) = ((-0.2f64).exp() + (-2.5f64).exp(), (-1.9f64).exp());
        close(b.p(Task::Pairwise, A), pb / (pa + pb));
        close(b.p(Task::Pairwise, B), pa / (pa + pb));
        assert_eq!(b.kind, ConfidenceKind::Logprobs);
        // The token that reads as the verdict has no alternatives listed: nothing to say.
        let bare = r#"[{"token":"A","logprob":-0.1,"top_logprobs":[]}]"#;
        assert_eq!(Belief::from_logprobs(bare, Task::Pairwise, false, A), None);
        assert_eq!(
            Belief::from_logprobs("not json", Task::Pairwise, false, A),
            None
        );
    }
}
