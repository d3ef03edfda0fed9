//! `judgelab compare`: two judges on the items both judged — two trials of one experiment
//! (`EXP 3 4`), or trials of two experiments on the same dataset (`EXP:3 OTHER:1`; an
//! experiment alone stands for its pick). Prints the flip matrix, the flips toward and
//! away from the humans, the flip rate with its interval, kappa between the judges,
//! McNemar's exact test, the paired difference in a metric and, where the verdicts carry
//! beliefs, their divergence with the calls that moved most; `--json` carries the same.

use std::process::ExitCode;

use anyhow::Result;
use judgelab_core::annotation::Labels;
use judgelab_core::metrics::{BootstrapSpec, Quality};
use judgelab_core::results::comparison::{self, Comparison};
use judgelab_core::results::ExperimentSummary;
use judgelab_core::Task;
use judgelab_engine::EngineError;
use judgelab_store::Store;

use crate::args::{experiment_name, parse_quality, BootstrapArgs};

/// `judgelab compare`'s arguments.
#[derive(clap::Args)]
pub struct Args {
    /// The two judges: `EXP FIRST SECOND` (two trial ids of one experiment, as `show`
    /// prints them), or `EXP:TRIAL EXP:TRIAL` (an experiment name or .toml file and a trial
    /// id; `EXP` alone is its pick). The first is the reference
    #[arg(num_args = 2..=3, required = true, value_name = "JUDGE")]
    judges: Vec<String>,
    #[arg(long, default_value = "kappa", value_parser = parse_quality)]
    metric: Quality,
    /// Print JSON instead of sentences
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    bootstrap: BootstrapArgs,
}

/// One side as written: an experiment, and a trial of it or its pick.
pub struct Side {
    experiment: String,
    trial: Option<i64>,
}

impl Side {
    /// `EXP:TRIAL` or `EXP` (its pick); where `within` names an experiment, a bare number
    /// is a trial of it.
    pub fn parse(text: &str, within: Option<&str>) -> Result<Side> {
        if let (Some(experiment), Ok(trial)) = (within, text.parse::<i64>()) {
            return Ok(Side {
                experiment: experiment.to_string(),
                trial: Some(trial),
            });
        }
        // A name or a path may hold colons: the trial is after the last one, if a number.
        Ok(match text.rsplit_once(':') {
            Some((experiment, trial)) if trial.parse::<i64>().is_ok() => Side {
                experiment: experiment_name(experiment)?,
                trial: Some(id(trial)?),
            },
            _ => Side {
                experiment: experiment_name(text)?,
                trial: None,
            },
        })
    }
}

fn id(text: &str) -> Result<i64> {
    text.parse().map_err(|_| {
        anyhow::anyhow!(EngineError::Invalid {
            path: "judgelab compare".into(),
            message: format!("{text:?} is not a trial id (a number, as `show` prints it)"),
        })
    })
}

fn sides(judges: &[String]) -> Result<(Side, Side)> {
    Ok(match judges {
        [experiment, first, second] => {
            let experiment = experiment_name(experiment)?;
            let trial = |text: &str| -> Result<Side> {
                Ok(Side {
                    experiment: experiment.clone(),
                    trial: Some(id(text)?),
                })
            };
            (trial(first)?, trial(second)?)
        }
        [first, second] => (Side::parse(first, None)?, Side::parse(second, None)?),
        _ => unreachable!("clap takes two or three"),
    })
}

pub async fn command(store: &Store, args: Args) -> Result<ExitCode> {
    let (first, second) = sides(&args.judges)?;
    let (c, task) = resolve(
        store,
        (&first, &second),
        (args.metric, (&Labels::Original, None)),
        &args.bootstrap.spec(),
        &[],
    )
    .await?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        print!("{}", judgelab_report::comparison::text(&c, task));
    }
    Ok(ExitCode::SUCCESS)
}

/// The comparison of two sides by `metric`, and their task, each experiment read against
/// `labels` (the labels and the criterion; both sides judge one dataset); an experiment
/// among `known` is not summarised again (the report's own).
pub async fn resolve(
    store: &Store,
    (first, second): (&Side, &Side),
    (metric, labels): (Quality, (&Labels, Option<&str>)),
    spec: &BootstrapSpec,
    known: &[&ExperimentSummary],
) -> Result<(Comparison, Task)> {
    let mut summaries: Vec<ExperimentSummary> = Vec::new();
    for side in [first, second] {
        let have = known.iter().any(|s| s.experiment.name == side.experiment)
            || summaries
                .iter()
                .any(|s| s.experiment.name == side.experiment);
        if !have {
            let (labels, criterion) = labels;
            let name = &side.experiment;
            summaries.push(
                judgelab_engine::summarize_against(store, name, spec, labels, criterion).await?,
            );
        }
    }
    let find = |side: &Side| -> &ExperimentSummary {
        known
            .iter()
            .copied()
            .chain(&summaries)
            .find(|s| s.experiment.name == side.experiment)
            .expect("every side was summarised")
    };
    let (sa, sb) = (find(first), find(second));
    let trial = |s: &ExperimentSummary, side: &Side| -> Result<i64> {
        match side.trial {
            Some(id) => Ok(id),
            None => {
                let metric = s.check_metric(metric).map_err(EngineError::from)?;
                let pick = s.pick(metric).ok_or_else(|| {
                    anyhow::anyhow!(EngineError::Invalid {
                        path: "judgelab compare".into(),
                        message: format!(
                            "experiment {:?} has no trial with a {metric} to pick: name one as {}:ID",
                            s.experiment.name, s.experiment.name
                        ),
                    })
                })?;
                Ok(s.trials[pick].id)
            }
        }
    };
    let c = comparison::compare((sa, trial(sa, first)?), (sb, trial(sb, second)?), metric)
        .map_err(EngineError::from)?;
    Ok((c, sa.experiment.task_kind))
}
