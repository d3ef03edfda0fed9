//! `[trust]`: what selective judging is asked for (see [`crate::trust::selective`]), and
//! where cascades hand over ([`crate::trust::cascade`]).
//!
//! ```toml
//! [trust]
//! agreement = 0.9          # the accepted verdicts must agree with humans this often
//! risk = 0.1               # with probability at least 1 - risk
//! cascade_threshold = 0.8  # cascades escalate below this confidence (default: the cheap
//!                          # trial's selective threshold, and no cascade without one)
//! ```
//!
//! Outside the experiment's identity: it changes what the report reads from the verdicts,
//! never which calls are made.

use serde::Deserialize;

use super::{ExperimentError, Invalid};
use crate::trust::Target;

/// The `[trust]` table.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Trust {
    pub target: Target,
    /// The confidence below which every cascade escalates; none: each cheap trial's
    /// selective threshold.
    pub cascade_threshold: Option<f64>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTrust {
    agreement: Option<f64>,
    risk: Option<f64>,
    cascade_threshold: Option<f64>,
}

pub(super) fn trust(raw: RawTrust, invalid: &Invalid<'_>) -> Result<Trust, ExperimentError> {
    let d = Target::default();
    let fraction = |key: &str, value: Option<f64>, default: f64| match value {
        None => Ok(default),
        Some(x) if x > 0.0 && x < 1.0 => Ok(x),
        Some(x) => Err(invalid(
            &format!("trust.{key}"),
            format!("{x} must lie between 0 and 1"),
        )),
    };
    let cascade_threshold = match raw.cascade_threshold {
        None => None,
        Some(x) if (0.0..=1.0).contains(&x) => Some(x),
        Some(x) => {
            return Err(invalid(
                "trust.cascade_threshold",
                format!("{x} must lie between 0 and 1"),
            ))
        }
    };
    Ok(Trust {
        target: Target {
            agreement: fraction("agreement", raw.agreement, d.agreement)?,
            risk: fraction("risk", raw.risk, d.risk)?,
        },
        cascade_threshold,
    })
}
