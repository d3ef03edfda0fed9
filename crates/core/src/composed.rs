//! What a composed trial (a cascade, a panel) takes of each stored trial it is made of:
//! its verdicts on each split, its timed requests and its metrics. A composed trial makes
//! no call; it reads these.

use crate::metrics::{Observation, TrialMetrics};

/// A stored trial as a composition takes it.
#[derive(Debug, Clone, Copy)]
pub struct Part<'a> {
    /// Its store id.
    pub id: i64,
    pub dev: &'a [Observation],
    /// Empty where it did not judge the test split.
    pub test: &'a [Observation],
    pub latencies: &'a [f64],
    pub metrics: &'a TrialMetrics,
}
