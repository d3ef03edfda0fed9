//! How much of a remote judge's first-token distribution its server returned: a trial's
//! exact verdicts read from the most likely tokens only ([`crate::sampling::Ranked::top`])
//! are off by at most the mass the server left out (at temperatures up to 1), and a label
//! none of the returned tokens reads as has its probability counted as zero.

use serde::{Deserialize, Serialize};

use crate::dataset::{Choice, Label, Task};
use crate::record::VerdictRecord;

/// A trial's calls' uncovered mass, where they have one (a remote judge's exact passes).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    /// Calls with an uncovered mass (verdicts that share a pass, one).
    pub n_calls: usize,
    /// The mean and the largest mass left out.
    pub mean: f64,
    pub max: f64,
    /// Calls whose returned tokens read as no label of some verdict the task has (A or B;
    /// each rating of the scale): that verdict's probability is read as zero, and is at
    /// most the least likely returned token's. A checklist's calls, each on its
    /// criterion's own scale, are left out of it.
    pub n_missing_label: usize,
}

impl Coverage {
    /// Of a trial's records; none where no call has an uncovered mass.
    pub fn of(task: Task, verdicts: &[VerdictRecord]) -> Option<Coverage> {
        let labels: Vec<Label> = match task {
            Task::Pairwise => vec![Label::Choice(Choice::A), Label::Choice(Choice::B)],
            Task::Single {
                scale_min,
                scale_max,
            } => (scale_min..=scale_max)
                .map(|x| Label::Rating(x as f64))
                .collect(),
        };
        let mut c = Coverage {
            n_calls: 0,
            mean: 0.0,
            max: 0.0,
            n_missing_label: 0,
        };
        let mut passes = std::collections::HashSet::new();
        for v in verdicts {
            let Some(u) = v.uncovered else {
                continue;
            };
            if !passes.insert((v.prompt_hash.as_str(), v.swapped)) {
                continue;
            }
            c.n_calls += 1;
            c.mean += u;
            c.max = c.max.max(u);
            let missing = v.criterion.is_empty()
                && v.belief
                    .as_ref()
                    .is_some_and(|b| labels.iter().any(|l| b.p(l) <= 0.0));
            c.n_missing_label += usize::from(missing);
        }
        (c.n_calls > 0).then(|| Coverage {
            mean: c.mean / c.n_calls as f64,
            ..c
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Outcome;
    use crate::sampling::VerdictDistribution;

    #[test]
    fn the_mass_left_out_and_the_labels_missing() {
        let record = |hash: &str, uncovered: Option<f64>, labels: &[(Label, f64)]| VerdictRecord {
            uncovered,
            belief: Some(VerdictDistribution {
                labels: labels.to_vec(),
                failed: 0.0,
            }),
            ..VerdictRecord::new(
                1,
                hash,
                0,
                false,
                0,
                hash,
                Outcome::CallFailed(String::new()),
            )
        };
        let (a, b) = (Label::Choice(Choice::A), Label::Choice(Choice::B));
        let rows = [
            record("h1", Some(0.1), &[(a, 0.5), (b, 0.4)]),
            record("h2", Some(0.3), &[(a, 0.7)]),
            // A second trial's verdict from the same pass: the same call.
            record("h2", Some(0.3), &[(a, 0.7)]),
            record("h3", None, &[(a, 1.0)]),
        ];
        let c = Coverage::of(Task::Pairwise, &rows).unwrap();
        assert_eq!((c.n_calls, c.n_missing_label), (2, 1));
        assert!((c.mean - 0.2).abs() < 1e-12 && (c.max - 0.3).abs() < 1e-12);
        assert_eq!(Coverage::of(Task::Pairwise, &rows[3..]), None);
        // A checklist's call is on its criterion's scale: not read against the item's.
        let criterion = VerdictRecord {
            criterion: "clarity".into(),
            ..record("h4", Some(0.2), &[(a, 1.0)])
        };
        assert_eq!(
            Coverage::of(Task::Pairwise, &[criterion])
                .unwrap()
                .n_missing_label,
            0
        );
    }
}
