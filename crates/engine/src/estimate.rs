//! Estimates on items no human labelled (`judgelab estimate`, the app's Results screen):
//! judge them with a trial's configuration ([`judge_unlabelled`]), then correct what the
//! judge says of them with its verdicts on the labelled items
//! ([`ExperimentSummary::population`]).

use judgelab_core::metrics::BootstrapSpec;
use judgelab_core::results::ExperimentSummary;
use judgelab_core::trust::unlabelled::Population;
use judgelab_store::Store;

use crate::run::{judge_unlabelled, UnlabelledRequest, UnlabelledRun};
use crate::{summarize, EngineError, RunEvent, RunOptions};

/// The level of an estimate's intervals.
pub const LEVEL: f64 = 0.95;

/// What to estimate: the items, and the interval width to plan the labels for.
#[derive(Debug, Clone, PartialEq)]
pub struct EstimateRequest {
    pub items: UnlabelledRequest,
    pub width: Option<f64>,
}

/// An estimate and how its items were judged.
#[derive(Debug, Clone)]
pub struct Estimated {
    pub run: UnlabelledRun,
    pub population: Population,
    /// The experiment as it stands after judging.
    pub summary: ExperimentSummary,
}

/// Judges what the items still need (an interrupted estimate resumes), then estimates over
/// every item that has a verdict.
pub async fn estimate(
    store: &Store,
    experiment: &str,
    request: &EstimateRequest,
    options: RunOptions,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<Estimated, EngineError> {
    if let Some(w) = request.width.filter(|w| !(*w > 0.0 && *w < 1e9)) {
        return Err(EngineError::Invalid {
            path: "width".into(),
            message: format!("{w} is no interval width: it must be above 0"),
        });
    }
    let run = judge_unlabelled(store, experiment, &request.items, options, on_event).await?;
    let summary = summarize(store, &run.experiment, &BootstrapSpec::default()).await?;
    let population = summary.population(run.trial_id, &run.item_ids, request.width, LEVEL)?;
    Ok(Estimated {
        run,
        population,
        summary,
    })
}
