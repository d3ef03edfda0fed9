//! Confusion matrices: human label against the judge's verdict, with parse failures as a
//! column of their own so that they are seen, not scored as some label.

use serde::{Deserialize, Serialize};

use crate::dataset::{Choice, Task};
use crate::metrics::quality::{Scored, TIE};

/// Rows are human labels, columns the judge's verdicts followed by "parse failure".
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Confusion {
    pub labels: Vec<String>,
    pub columns: Vec<String>,
    pub counts: Vec<Vec<u64>>,
}

pub const PARSE_FAILURE: &str = "parse failure";

impl Confusion {
    pub fn new(task: Task, scored: &[Scored]) -> Confusion {
        // Ties get a row and a column only where someone said tie: most pairwise datasets
        // have none, and an empty row would only take room.
        let ties = scored
            .iter()
            .any(|s| s.human.0 == TIE || s.judge.is_some_and(|j| j.0 == TIE));
        let labels: Vec<String> = match task {
            Task::Pairwise => [Choice::A, Choice::B, Choice::Tie][..if ties { 3 } else { 2 }]
                .iter()
                .map(|c| c.name().to_string())
                .collect(),
            Task::Single {
                scale_min,
                scale_max,
            } => (scale_min..=scale_max).map(|r| r.to_string()).collect(),
        };
        let offset = match task {
            Task::Pairwise => 0,
            Task::Single { scale_min, .. } => scale_min,
        };
        let k = labels.len();
        let mut counts = vec![vec![0; k + 1]; k];
        let index = |cat: i64| usize::try_from(cat - offset).ok().filter(|&i| i < k);
        for s in scored {
            let Some(row) = index(s.human.0) else {
                continue;
            };
            let col = s.judge.and_then(|j| index(j.0)).unwrap_or(k);
            counts[row][col] += 1;
        }
        let mut columns = labels.clone();
        columns.push(PARSE_FAILURE.to_string());
        Confusion {
            labels,
            columns,
            counts,
        }
    }
}
