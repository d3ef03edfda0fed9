//! `[reference]`: the trial each trial's verdicts are held against, for the drift columns
//! (flip rate, mean divergence) of the results table.
//!
//! ```toml
//! [reference]
//! template = "pairwise"   # each trial against the trial like it but with this template
//! ```
//!
//! A key is an axis of the sweep and its value one the sweep has: a trial's reference is
//! the trial with these values on these axes and the trial's own on every other. The
//! reference itself, and a trial whose reference was not run, has no drift figures.
//! Without the table, a sweep over quantisations is held against its most precise level
//! (the source where it is one).
//! Outside the experiment's identity: it changes what the results read, never which calls
//! are made.

use super::{Experiment, ExperimentError, Invalid};
use crate::quantization::{self, Quantization};
use crate::sweep::Axis;
use crate::TrialParams;

/// The `[reference]` table, validated: each axis with the value (as the axis writes it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reference {
    pub values: Vec<(Axis, String)>,
}

impl Reference {
    /// Whether a reference was declared.
    pub fn is_declared(&self) -> bool {
        !self.values.is_empty()
    }

    /// Whether `q` is `p`'s reference: the reference's values on its axes, `p`'s own on
    /// the rest, and not `p` itself.
    pub fn is_reference_of(&self, q: &TrialParams, p: &TrialParams) -> bool {
        let named = |a: Axis| self.values.iter().find(|(x, _)| *x == a);
        self.is_declared()
            && Axis::ALL.into_iter().all(|a| match named(a) {
                Some((_, value)) => a.text(q) == *value,
                None => a.same(p, q),
            })
            && self.values.iter().any(|(a, value)| a.text(p) != *value)
    }

    /// The `[reference]` line as written back: `template = "pairwise"`.
    pub fn describe(&self) -> String {
        self.values
            .iter()
            .map(|(a, v)| format!("{} = {v:?}", a.key()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Checks each key is an axis and each value one of the sweep's on it.
pub(super) fn reference(
    raw: Option<toml::Table>,
    experiment: &Experiment,
    invalid: &Invalid<'_>,
) -> Result<Reference, ExperimentError> {
    let Some(raw) = raw else {
        let levels: Vec<Quantization> = experiment
            .sweep
            .quantization
            .iter()
            .flatten()
            .copied()
            .collect();
        return Ok(match quantization::most_precise(&levels) {
            Some(best) if levels.len() > 1 => Reference {
                values: vec![(Axis::Quantization, best.name().to_string())],
            },
            _ => Reference::default(),
        });
    };
    let trials = experiment.trials();
    let mut values = Vec::new();
    for (key, value) in raw {
        let at = format!("reference.{key}");
        let axis = Axis::from_key(&key).ok_or_else(|| {
            let keys: Vec<&str> = Axis::ALL.iter().map(|a| a.key()).collect();
            invalid(
                &at,
                format!("is not an axis of the sweep (one of {})", keys.join(", ")),
            )
        })?;
        let mut swept: Vec<String> = trials.iter().map(|t| axis.text(t)).collect();
        swept.sort();
        swept.dedup();
        let matches = |t: &TrialParams| match &value {
            toml::Value::String(s) => axis.text(t) == *s,
            toml::Value::Integer(n) => axis.number(t) == Some(*n as f64),
            toml::Value::Float(x) => axis.number(t) == Some(*x),
            _ => false,
        };
        let text = trials.iter().find(|t| matches(t)).map(|t| axis.text(t));
        let text = text.ok_or_else(|| {
            invalid(
                &at,
                format!(
                    "{value} is not a value the sweep has on {key} ({})",
                    swept.join(", ")
                ),
            )
        })?;
        values.push((axis, text));
    }
    Ok(Reference { values })
}
