//! How much an experiment judges, and how it chooses: `[limits]` (the items, the dev and
//! test splits, the budgets that stop a run) and `[selection]` (the metric that ranks
//! trials, a grid or a race, and what the test split confirms).
//!
//! ```toml
//! [limits]
//! dev = 120          # items that rank the trials
//! test = 80          # items judged only by the trials the selection keeps
//! pool = 16          # few-shot examples reserved, for sweep.few_shot_set to draw from
//! max_calls = 5000   # stop cleanly once this many calls are stored
//! [selection]
//! metric = "kappa"
//! strategy = "race"  # judge in rounds, dropping trials clearly worse than the leader
//! confirm = 3        # the best three judge the test split
//! ```
//!
//! What changes which calls are made is part of the experiment's identity, and left out of
//! it while unset, so that experiments written before these keys keep theirs; the budgets
//! are not (raising one and running again resumes the same experiment).

use serde::{Deserialize, Serialize};

use super::{ExperimentError, Invalid};
use crate::metrics::Quality;

#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Limits {
    /// Judge a seeded subset of this many items (the dev and test splits together, where
    /// they are set).
    pub items: Option<usize>,
    /// Items that rank the trials; by default all that the test split leaves.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dev: Option<usize>,
    /// Items judged only by the trials the selection keeps; none: no test split, and a pick
    /// that is not confirmed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub test: Option<usize>,
    /// Items reserved as few-shot examples, for example sets to draw from
    /// (`sweep.few_shot_set`); by default as many as the most a trial shows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pool: Option<usize>,
    #[serde(skip)]
    pub budget: Budget,
}

/// What stops a run cleanly, with what it has; running again (with a larger budget)
/// resumes it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Budget {
    /// Calls stored for the experiment, over all its runs (answers from the response cache
    /// are not calls).
    pub max_calls: Option<u64>,
    /// Dollars spent by the experiment's stored calls.
    pub max_usd: Option<f64>,
    /// Seconds of this run.
    pub max_seconds: Option<f64>,
}

impl Budget {
    pub fn is_set(&self) -> bool {
        *self != Budget::default()
    }
}

/// How the trials are chosen among.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Selection {
    /// What ranks the trials (the pick, the race, the confirmation).
    pub metric: Quality,
    pub strategy: Strategy,
    /// A race drops no trial before this many dev items.
    pub min_items: usize,
    /// Dev items per round of a race.
    pub round: usize,
    /// The family-wise error of each round's drops (Holm over the comparisons with the
    /// leader).
    pub alpha: f64,
    /// The best this many judge the test split; none: the pick and the trials its paired
    /// interval cannot tell from it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub confirm: Option<usize>,
}

impl Default for Selection {
    fn default() -> Self {
        Selection {
            metric: Quality::Kappa,
            strategy: Strategy::Grid,
            min_items: 40,
            round: 20,
            alpha: 0.05,
            confirm: None,
        }
    }
}

impl Selection {
    pub fn is_default(&self) -> bool {
        *self == Selection::default()
    }

    pub fn is_race(&self) -> bool {
        self.strategy == Strategy::Race
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Strategy {
    /// Every trial judges every dev item.
    #[default]
    Grid,
    /// Dev items in rounds; after each, trials clearly worse than the leader are dropped.
    Race,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawLimits {
    items: Option<i64>,
    dev: Option<i64>,
    test: Option<i64>,
    pool: Option<i64>,
    max_calls: Option<i64>,
    max_usd: Option<f64>,
    max_seconds: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSelection {
    metric: Option<String>,
    strategy: Option<String>,
    min_items: Option<i64>,
    round: Option<i64>,
    alpha: Option<f64>,
    confirm: Option<i64>,
}

fn at_least_one(
    key: &str,
    value: Option<i64>,
    invalid: &Invalid<'_>,
) -> Result<Option<usize>, ExperimentError> {
    match value {
        None => Ok(None),
        Some(n) if n >= 1 => Ok(Some(n as usize)),
        Some(n) => Err(invalid(key, format!("{n} must be at least 1"))),
    }
}

fn positive(
    key: &str,
    value: Option<f64>,
    invalid: &Invalid<'_>,
) -> Result<Option<f64>, ExperimentError> {
    match value {
        Some(v) if !(v.is_finite() && v > 0.0) => {
            Err(invalid(key, format!("{v} must be a positive number")))
        }
        v => Ok(v),
    }
}

pub(super) fn limits(raw: RawLimits, invalid: &Invalid<'_>) -> Result<Limits, ExperimentError> {
    let items = at_least_one("limits.items", raw.items, invalid)?;
    let dev = at_least_one("limits.dev", raw.dev, invalid)?;
    let test = at_least_one("limits.test", raw.test, invalid)?;
    if let (Some(items), Some(dev), Some(test)) = (items, dev, test) {
        if dev + test != items {
            return Err(invalid(
                "limits.items",
                format!("{items} is not dev + test = {dev} + {test}; leave one of the three out"),
            ));
        }
    }
    if let (Some(items), Some(part), None) | (Some(items), None, Some(part)) = (items, dev, test) {
        if part >= items {
            let key = if dev.is_some() {
                "limits.dev"
            } else {
                "limits.test"
            };
            return Err(invalid(
                key,
                format!("{part} leaves none of limits.items = {items} for the other split"),
            ));
        }
    }
    let pool = at_least_one("limits.pool", raw.pool, invalid)?;
    let max_calls = at_least_one("limits.max_calls", raw.max_calls, invalid)?.map(|n| n as u64);
    let budget = Budget {
        max_calls,
        max_usd: positive("limits.max_usd", raw.max_usd, invalid)?,
        max_seconds: positive("limits.max_seconds", raw.max_seconds, invalid)?,
    };
    Ok(Limits {
        items,
        dev,
        test,
        pool,
        budget,
    })
}

pub(super) fn selection(
    raw: RawSelection,
    invalid: &Invalid<'_>,
) -> Result<Selection, ExperimentError> {
    let d = Selection::default();
    let metric = match raw.metric {
        None => d.metric,
        Some(name) => name
            .parse::<Quality>()
            .ok()
            .filter(|q| q.ranks())
            .ok_or_else(|| {
                let names: Vec<&str> = Quality::ALL
                    .iter()
                    .filter(|q| q.ranks())
                    .map(|q| q.name())
                    .collect();
                invalid(
                    "selection.metric",
                    format!(
                        "{name:?} is not a metric that ranks trials (expected one of {})",
                        names.join(", ")
                    ),
                )
            })?,
    };
    let strategy = match raw.strategy.as_deref() {
        None | Some("grid") => Strategy::Grid,
        Some("race") => Strategy::Race,
        Some(other) => {
            return Err(invalid(
                "selection.strategy",
                format!("{other:?} is not a strategy (expected \"grid\" or \"race\")"),
            ))
        }
    };
    let min_items =
        at_least_one("selection.min_items", raw.min_items, invalid)?.unwrap_or(d.min_items);
    let round = at_least_one("selection.round", raw.round, invalid)?.unwrap_or(d.round);
    let alpha = match raw.alpha {
        None => d.alpha,
        Some(a) if a > 0.0 && a < 0.5 => a,
        Some(a) => {
            return Err(invalid(
                "selection.alpha",
                format!("{a} must lie between 0 and 0.5"),
            ))
        }
    };
    let confirm = at_least_one("selection.confirm", raw.confirm, invalid)?;
    let race_only = [
        ("min_items", raw.min_items.is_some()),
        ("round", raw.round.is_some()),
        ("alpha", raw.alpha.is_some()),
    ];
    if strategy == Strategy::Grid {
        if let Some((key, _)) = race_only.iter().find(|(_, set)| *set) {
            return Err(invalid(
                &format!("selection.{key}"),
                "applies to a race: set strategy = \"race\"".into(),
            ));
        }
    }
    Ok(Selection {
        metric,
        strategy,
        min_items,
        round,
        alpha,
        confirm,
    })
}
