//! `[trust]`: what selective judging is asked for (see [`crate::trust::selective`]).
//!
//! ```toml
//! [trust]
//! agreement = 0.9   # the accepted verdicts must agree with humans this often
//! risk = 0.1        # with probability at least 1 - risk
//! ```
//!
//! Outside the experiment's identity: it changes what the report reads from the verdicts,
//! never which calls are made.

use serde::Deserialize;

use super::{ExperimentError, Invalid};
use crate::trust::Target;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTrust {
    agreement: Option<f64>,
    risk: Option<f64>,
}

pub(super) fn trust(raw: RawTrust, invalid: &Invalid<'_>) -> Result<Target, ExperimentError> {
    let d = Target::default();
    let fraction = |key: &str, value: Option<f64>, default: f64| match value {
        None => Ok(default),
        Some(x) if x > 0.0 && x < 1.0 => Ok(x),
        Some(x) => Err(invalid(
            &format!("trust.{key}"),
            format!("{x} must lie between 0 and 1"),
        )),
    };
    Ok(Target {
        agreement: fraction("agreement", raw.agreement, d.agreement)?,
        risk: fraction("risk", raw.risk, d.risk)?,
    })
}
