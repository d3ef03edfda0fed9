//! Two judges compared on the items both judged: two trials of one experiment, or trials of
//! two experiments on the same dataset (`judgelab compare`, the report's and the app's
//! compare view). One value holds the answer: McNemar's exact test and the paired
//! difference in a metric ([`paired`]), and how the verdicts drifted ([`drift`]).

use std::collections::HashMap;

use serde::Serialize;

use crate::metrics::drift::{self, Call, Drift};
use crate::metrics::paired::{self, PairedComparison};
use crate::metrics::{Estimate, Observation, Quality};
use crate::sweep;

use super::{ExperimentSummary, ResultsError, TrialSummary};

/// `first` against `second`: the first is the reference (KL is measured from it).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Comparison {
    pub first: Compared,
    pub second: Compared,
    /// McNemar's exact test on correctness and the paired difference in `metric`, over the
    /// verdicts (item and repeat, both answer orders combined) both have.
    #[serde(flatten)]
    pub paired: PairedComparison,
    /// How the verdicts moved, call by call (item, answer order and repeat).
    pub drift: Drift,
}

/// One side of a comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Compared {
    pub experiment: String,
    pub trial: i64,
    /// Its parameters, as `axis=value` (those a table shows).
    pub params: String,
    /// Its `metric` over all its verdicts on the dev split.
    pub value: Option<f64>,
}

/// Trial `first.1` of `first.0` against trial `second.1` of `second.0`, by `metric`.
/// The experiments must judge the same dataset; items only one of them judged are counted
/// in the drift and left out of every figure.
pub fn compare<'a>(
    first: (&'a ExperimentSummary, i64),
    second: (&'a ExperimentSummary, i64),
    metric: Quality,
) -> Result<Comparison, ResultsError> {
    let ((sa, ia), (sb, ib)) = (first, second);
    if sa.experiment.dataset != sb.experiment.dataset {
        return Err(ResultsError::OtherDataset {
            first: sa.experiment.name.clone(),
            first_dataset: sa.experiment.dataset.clone(),
            second: sb.experiment.name.clone(),
            second_dataset: sb.experiment.dataset.clone(),
        });
    }
    let metric = sa.check_metric(metric)?;
    let (ta, tb) = (sa.trial(ia)?, sb.trial(ib)?);
    let (ca, cb) = (sa.calls(ta), sb.calls(tb));
    // The paired test groups calls into verdicts by unit: number the items once for both.
    let mut units: HashMap<&str, usize> = HashMap::new();
    let mut renumbered = |calls: &[Call<'a>]| -> Vec<Observation> {
        calls
            .iter()
            .map(|c| {
                let next = units.len();
                let unit = *units.entry(c.item_id).or_insert(next);
                Observation {
                    unit,
                    ..c.observation.clone()
                }
            })
            .collect()
    };
    let (oa, ob) = (renumbered(&ca), renumbered(&cb));
    let task = sa.experiment.task_kind;
    let compared = |s: &ExperimentSummary, t: &TrialSummary| Compared {
        experiment: s.experiment.name.clone(),
        trial: t.id,
        params: sweep::describe(&t.params),
        value: t.metrics.value(metric),
    };
    Ok(Comparison {
        first: compared(sa, ta),
        second: compared(sb, tb),
        paired: paired::compare(task, &oa, &ob, metric, &sa.bootstrap),
        drift: drift::drift(task, &ca, &cb, &sa.bootstrap),
    })
}

/// A trial's verdicts against its experiment's reference trial (`[reference]`): the
/// results table's drift columns.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AgainstReference {
    /// The reference trial's id.
    pub reference: i64,
    /// Calls both made with an output.
    pub n_pairs: usize,
    pub flip_rate: Estimate,
    /// Mean KL(reference ‖ trial) where both calls carry a belief, with its interval, and
    /// the mean Jensen–Shannon divergence.
    pub kl_mean: Estimate,
    pub js_mean: Option<f64>,
}

impl ExperimentSummary {
    /// Each trial's verdicts against its reference, where the experiment names one and
    /// the trial is not its own.
    pub(super) fn hold_to_reference(&mut self) {
        let reference = &self.experiment.parsed.reference;
        let task = self.experiment.task_kind;
        let found: Vec<Option<AgainstReference>> = self
            .trials
            .iter()
            .map(|t| {
                let r = self
                    .trials
                    .iter()
                    .find(|r| reference.is_reference_of(&r.params, &t.params))?;
                let d = drift::drift(task, &self.calls(r), &self.calls(t), &self.bootstrap);
                Some(AgainstReference {
                    reference: r.id,
                    n_pairs: d.n_pairs,
                    flip_rate: d.flip_rate,
                    kl_mean: d
                        .divergence
                        .as_ref()
                        .map_or(Estimate::default(), |v| v.kl_mean),
                    js_mean: d.divergence.as_ref().map(|v| v.js_mean),
                })
            })
            .collect();
        for (t, f) in self.trials.iter_mut().zip(found) {
            t.drift = f;
        }
    }

    /// A trial's calls on labelled items, dev and test, each with its item's id.
    pub fn calls<'a>(&'a self, trial: &'a TrialSummary) -> Vec<Call<'a>> {
        let named = |ids: &'a [String], observations: &'a [Observation]| {
            observations.iter().map(move |o| Call {
                item_id: ids[o.unit].as_str(),
                observation: o,
            })
        };
        named(&self.experiment.judged, &trial.observations)
            .chain(named(&self.experiment.test, &trial.test_observations))
            .collect()
    }
}
