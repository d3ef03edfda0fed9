//! `[robustness]`: templates that are paraphrases of one another, worded differently to
//! mean the same: how often a verdict changes with the wording alone
//! ([`crate::results::robustness`]).
//!
//! ```toml
//! [robustness]
//! paraphrases = ["pairwise", "pairwise_paraphrase_1", "pairwise_paraphrase_2"]
//! ```
//!
//! Each name is a template of the sweep, at least two of them. Outside the experiment's
//! identity: it changes what the results read, never which calls are made.

use serde::Deserialize;

use super::{ExperimentError, Invalid};

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRobustness {
    paraphrases: Option<Vec<String>>,
}

/// Checks each paraphrase is a template of the sweep, and that there are two or more.
pub(super) fn paraphrases(
    raw: RawRobustness,
    templates: &[String],
    invalid: &Invalid<'_>,
) -> Result<Vec<String>, ExperimentError> {
    let Some(names) = raw.paraphrases else {
        return Ok(Vec::new());
    };
    let key = "robustness.paraphrases";
    let mut seen: Vec<String> = Vec::new();
    for name in names {
        if !templates.contains(&name) {
            return Err(invalid(
                key,
                format!(
                    "{name:?} is not a template of the sweep ({})",
                    templates.join(", ")
                ),
            ));
        }
        if seen.contains(&name) {
            return Err(invalid(key, format!("{name:?} is named twice")));
        }
        seen.push(name);
    }
    if seen.len() < 2 {
        return Err(invalid(
            key,
            "needs two or more templates that mean the same, worded otherwise".into(),
        ));
    }
    Ok(seen)
}
