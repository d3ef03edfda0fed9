//! `[summary]`: who writes the summaries of `input_strategy = "summary"` (see
//! [`crate::cut`]).
//!
//! ```toml
//! [summary]
//! judge = "cheap"   # a judge of [[judges]], swept or not; default: each trial's own judge
//! ```
//!
//! In the experiment's identity where it is written: another summariser shows the judges
//! other text.

use serde::Deserialize;

use super::{ExperimentError, Invalid, NamedJudge};
use crate::sweep::{Shortening, Sweep};

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawSummary {
    judge: Option<String>,
}

/// The judge `[summary] judge` names among those `declared`, checked against what the
/// sweep shortens by: `None` where each trial's judge summarises for itself.
pub(super) fn summariser(
    raw: Option<RawSummary>,
    declared: &[NamedJudge],
    sweep: &Sweep,
    invalid: &Invalid<'_>,
) -> Result<Option<NamedJudge>, ExperimentError> {
    let summarises = sweep.input_strategy.contains(&Shortening::Summary);
    if summarises && sweep.input_max_tokens.iter().all(Option::is_none) {
        return Err(invalid(
            "sweep.input_strategy",
            "\"summary\" shortens the inputs over input_max_tokens: give it some levels (e.g. input_max_tokens = [\"none\", 256])".into(),
        ));
    }
    let Some(name) = raw.and_then(|r| r.judge) else {
        return Ok(None);
    };
    if !summarises {
        return Err(invalid(
            "summary.judge",
            "writes the summaries of input_strategy = \"summary\", which the sweep does not have"
                .into(),
        ));
    }
    match declared.iter().find(|j| j.name == name) {
        Some(j) => Ok(Some(j.clone())),
        None => {
            let known: Vec<String> = declared.iter().map(|j| format!("{:?}", j.name)).collect();
            Err(invalid(
                "summary.judge",
                format!(
                    "{name:?} is not a judge of [[judges]] ({})",
                    known.join(", ")
                ),
            ))
        }
    }
}
