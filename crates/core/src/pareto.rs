//! Pareto fronts over trials: the configurations no other trial beats on every chosen
//! objective at once, and the dominated ones that the confidence intervals cannot tell
//! apart from them.

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::dataset::Task;
use crate::metrics::{Quality, TrialMetrics};

/// Something to maximise (a quality metric) or minimise (cost, latency).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", untagged)]
pub enum Objective {
    Quality(Quality),
    Cost(Cost),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cost {
    /// Prompt plus completion tokens per verdict.
    Tokens,
    /// Dollars per 1,000 verdicts (judges with a price only).
    Usd,
    LatencyP95,
    TtftP95,
}

crate::names!(Cost {
    Tokens => "tokens",
    Usd => "usd",
    LatencyP95 => "latency_p95",
    TtftP95 => "ttft_p95",
});

impl Objective {
    /// Its name: a cost's, or a quality metric's.
    pub fn name(self) -> &'static str {
        match self {
            Objective::Quality(q) => q.name(),
            Objective::Cost(c) => c.name(),
        }
    }

    /// An axis label, with units.
    pub fn title(self, task: Task) -> String {
        match self {
            Objective::Quality(q) => q.title(task).to_string(),
            Objective::Cost(Cost::Tokens) => "prompt + completion tokens per item".into(),
            Objective::Cost(Cost::Usd) => "cost ($ per 1,000 items)".into(),
            Objective::Cost(Cost::LatencyP95) => "p95 latency per request (ms)".into(),
            Objective::Cost(Cost::TtftP95) => "p95 time to first token (ms)".into(),
        }
    }

    pub fn maximise(self) -> bool {
        matches!(self, Objective::Quality(_))
    }

    pub fn value(self, m: &TrialMetrics) -> Option<f64> {
        match self {
            Objective::Quality(q) => m.value(q),
            Objective::Cost(Cost::Tokens) => m.tokens_per_item(),
            Objective::Cost(Cost::Usd) => m.usd_per_1k_items,
            Objective::Cost(Cost::LatencyP95) => m.latency_ms.p95,
            Objective::Cost(Cost::TtftP95) => m.ttft_ms.p95,
        }
        .filter(|v| v.is_finite())
    }

    pub fn ci(self, m: &TrialMetrics) -> Option<(f64, f64)> {
        match self {
            Objective::Quality(q) => m.estimate(q).ci,
            Objective::Cost(_) => None,
        }
    }
}

/// As `show`, `report` and the app accept it: a cost, or a quality metric that ranks trials
/// (an error, lower is better, is no objective to maximise).
impl std::str::FromStr for Objective {
    type Err = crate::names::UnknownName;

    fn from_str(name: &str) -> Result<Objective, Self::Err> {
        if let Ok(cost) = name.parse() {
            return Ok(Objective::Cost(cost));
        }
        match name.parse::<Quality>() {
            Ok(q) if q.ranks() => Ok(Objective::Quality(q)),
            _ => {
                let ranking = Quality::ALL.into_iter().filter(|q| q.ranks());
                let names: Vec<&str> = Cost::ALL
                    .into_iter()
                    .map(Cost::name)
                    .chain(ranking.map(Quality::name))
                    .collect();
                Err(crate::names::UnknownName::new(name, &names))
            }
        }
    }
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a trial stands against the front.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FrontStatus {
    /// No other trial is at least as good on every objective and better on one.
    Front,
    /// Dominated, but its intervals overlap those of every front trial that dominates it:
    /// the data cannot say it is worse.
    Indistinguishable,
    Dominated,
    /// An objective is undefined for this trial (no verdicts, no price…).
    Unavailable,
}

crate::names!(FrontStatus {
    Front => "front",
    Indistinguishable => "indistinguishable",
    Dominated => "dominated",
    Unavailable => "unavailable",
});

/// The status of each trial (in order) against the front of `objectives`.
pub fn front(trials: &[&TrialMetrics], objectives: &[Objective]) -> Vec<FrontStatus> {
    // Every objective turned into "more is better", so that dominance is one comparison.
    let points: Vec<Option<Vec<f64>>> = trials
        .iter()
        .map(|m| {
            objectives
                .iter()
                .map(|o| o.value(m).map(|v| if o.maximise() { v } else { -v }))
                .collect()
        })
        .collect();
    let dominates = |a: &[f64], b: &[f64]| {
        a.iter().zip(b).all(|(x, y)| x >= y) && a.iter().zip(b).any(|(x, y)| x > y)
    };
    let on_front: Vec<bool> = points
        .iter()
        .map(|p| {
            p.as_ref()
                .is_some_and(|p| !points.iter().flatten().any(|q| dominates(q, p)))
        })
        .collect();
    let overlap = |a: &TrialMetrics, b: &TrialMetrics| {
        let mut any_ci = false;
        let all = objectives.iter().all(|o| match (o.ci(a), o.ci(b)) {
            (Some(x), Some(y)) => {
                any_ci = true;
                x.0 <= y.1 && y.0 <= x.1
            }
            _ => !o.maximise(),
        });
        all && any_ci
    };
    points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let Some(p) = p else {
                return FrontStatus::Unavailable;
            };
            if on_front[i] {
                return FrontStatus::Front;
            }
            let close = (0..trials.len())
                .filter(|&j| on_front[j] && points[j].as_ref().is_some_and(|q| dominates(q, p)))
                .all(|j| overlap(trials[i], trials[j]));
            if close {
                FrontStatus::Indistinguishable
            } else {
                FrontStatus::Dominated
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{Estimate, Qualities};

    fn trial(kappa: f64, ci: f64, tokens: f64) -> TrialMetrics {
        let mut m = TrialMetrics {
            prompt_tokens_per_item: Some(tokens),
            completion_tokens_per_item: Some(0.0),
            quality: Qualities::default(),
            ..TrialMetrics::default()
        };
        let estimate = Estimate {
            value: Some(kappa),
            ci: Some((kappa - ci, kappa + ci)),
        };
        m.quality.0.insert(Quality::Kappa, estimate);
        m
    }

    #[test]
    fn front_and_indistinguishable() {
        let trials = [
            trial(0.5, 0.05, 100.0),  // front: cheapest
            trial(0.7, 0.05, 300.0),  // front: best
            trial(0.4, 0.04, 200.0),  // dominated by the first, clearly worse
            trial(0.68, 0.05, 400.0), // dominated by the second, but within its interval
            trial(0.7, 0.05, 300.0),  // a tie with the best is on the front too
            TrialMetrics::default(),  // nothing judged
        ];
        let refs: Vec<&TrialMetrics> = trials.iter().collect();
        let objectives = [
            Objective::Quality(Quality::Kappa),
            Objective::Cost(Cost::Tokens),
        ];
        use FrontStatus::*;
        assert_eq!(
            front(&refs, &objectives),
            vec![
                Front,
                Front,
                Dominated,
                Indistinguishable,
                Front,
                Unavailable
            ]
        );
    }

    #[test]
    fn three_objectives_and_names() {
        let mut fast = trial(0.5, 0.01, 300.0);
        fast.latency_ms.p95 = Some(10.0);
        let mut cheap = trial(0.5, 0.01, 100.0);
        cheap.latency_ms.p95 = Some(50.0);
        let objectives = [
            Objective::Quality(Quality::Kappa),
            Objective::Cost(Cost::Tokens),
            Objective::Cost(Cost::LatencyP95),
        ];
        let statuses = front(&[&fast, &cheap], &objectives);
        assert_eq!(statuses, vec![FrontStatus::Front, FrontStatus::Front]);
        for o in objectives {
            assert_eq!(o.name().parse(), Ok(o));
        }
        assert!("speed".parse::<Objective>().is_err());
        assert!("mae".parse::<Objective>().is_err());
    }
}
