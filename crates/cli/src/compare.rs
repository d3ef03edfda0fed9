//! `judgelab compare`: two judges on the items both judged — two trials of one experiment
//! (`EXP 3 4`), or trials of two experiments on the same dataset (`EXP:3 OTHER:1`; an
//! experiment alone stands for its pick). Prints the flip matrix, the flips toward and
//! away from the humans, the flip rate with its interval, kappa between the judges,
//! McNemar's exact test, the paired difference in a metric and, where the verdicts carry
//! beliefs, their divergence with the calls that moved most; `--json` carries the same.

use std::process::ExitCode;

use anyhow::Result;
use judgelab_core::metrics::drift::Drift;
use judgelab_core::metrics::Quality;
use judgelab_core::results::comparison::{self, Comparison};
use judgelab_core::results::ExperimentSummary;
use judgelab_core::Task;
use judgelab_engine::EngineError;
use judgelab_store::Store;

use crate::{experiment_name, parse_quality, BootstrapArgs};

/// `judgelab compare`'s arguments.
#[derive(clap::Args)]
pub struct CompareArgs {
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
struct Side {
    experiment: String,
    trial: Option<i64>,
}

fn sides(judges: &[String]) -> Result<(Side, Side)> {
    let id = |text: &str| -> Result<i64> {
        text.parse().map_err(|_| {
            anyhow::anyhow!(EngineError::Invalid {
                path: "judgelab compare".into(),
                message: format!("{text:?} is not a trial id (a number, as `show` prints it)"),
            })
        })
    };
    let side = |text: &str| -> Result<Side> {
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
    };
    Ok(match judges {
        [experiment, first, second] => {
            let experiment = experiment_name(experiment)?;
            (
                Side {
                    experiment: experiment.clone(),
                    trial: Some(id(first)?),
                },
                Side {
                    experiment,
                    trial: Some(id(second)?),
                },
            )
        }
        [first, second] => (side(first)?, side(second)?),
        _ => unreachable!("clap takes two or three"),
    })
}

pub async fn command(store: &Store, args: CompareArgs) -> Result<ExitCode> {
    let (first, second) = sides(&args.judges)?;
    let spec = args.bootstrap.spec();
    let sa = judgelab_engine::summarize(store, &first.experiment, &spec).await?;
    let sb = if second.experiment == first.experiment {
        None
    } else {
        Some(judgelab_engine::summarize(store, &second.experiment, &spec).await?)
    };
    let sb_ref = sb.as_ref().unwrap_or(&sa);
    let trial = |s: &ExperimentSummary, side: &Side| -> Result<i64> {
        match side.trial {
            Some(id) => Ok(id),
            None => {
                let metric = s.check_metric(args.metric).map_err(EngineError::from)?;
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
    let c = comparison::compare(
        (&sa, trial(&sa, &first)?),
        (sb_ref, trial(sb_ref, &second)?),
        args.metric,
    )
    .map_err(EngineError::from)?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&c)?);
    } else {
        print!("{}", render(&c, sa.experiment.task_kind));
    }
    Ok(ExitCode::SUCCESS)
}

/// The comparison in sentences and a matrix.
pub fn render(c: &Comparison, task: Task) -> String {
    let mut out = String::new();
    let name = |s: &comparison::Compared| format!("{}:{}", s.experiment, s.trial);
    let (a, b) = (name(&c.first), name(&c.second));
    let d = &c.drift;
    out += &format!("{a}  {}\n{b}  {}\n", c.first.params, c.second.params);
    out += &format!(
        "on {} calls of {} items both judged{}\n",
        d.n_pairs,
        d.n_items,
        left_out(d, &a, &b)
    );
    out += &flips(d);
    out += &matrix(d, &a, &b);
    out += &paired(c, task);
    out += &divergence(d);
    out
}

fn left_out(d: &Drift, a: &str, b: &str) -> String {
    let mut parts = Vec::new();
    if d.only_first > 0 {
        parts.push(format!("{} calls only {a} made", d.only_first));
    }
    if d.only_second > 0 {
        parts.push(format!("{} only {b} made", d.only_second));
    }
    if d.failed_calls > 0 {
        parts.push(format!("{} where a call failed", d.failed_calls));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!(" (left out: {})", parts.join(", "))
    }
}

fn percent(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

fn flips(d: &Drift) -> String {
    let rate = match (d.flip_rate.value, d.flip_rate.ci) {
        (Some(r), Some((lo, hi))) => format!(
            "{}, 95% bootstrap interval over items [{}, {}]",
            percent(r),
            percent(lo),
            percent(hi)
        ),
        (Some(r), None) => percent(r),
        (None, _) => "undefined".into(),
    };
    let between = d.flips - d.toward_humans - d.away_from_humans;
    let mut out = format!(
        "flips: {} of {} calls ({rate}): {} toward the humans, {} away from them, {between} from one wrong verdict to another\n",
        d.flips, d.n_pairs, d.toward_humans, d.away_from_humans
    );
    let kappa = d.kappa.map_or("undefined".into(), |k| format!("{k:.3}"));
    out += &format!("kappa between the two judges: {kappa}\n");
    for h in &d.by_human {
        out += &format!(
            "  humans said {}: {} flips in {} calls ({} toward, {} away)\n",
            h.human, h.flips, h.n_pairs, h.toward_humans, h.away_from_humans
        );
    }
    out
}

/// The flip matrix: rows the first judge's verdicts, columns the second's.
fn matrix(d: &Drift, a: &str, b: &str) -> String {
    if d.categories.is_empty() {
        return String::new();
    }
    let width = d
        .categories
        .iter()
        .map(String::len)
        .chain(d.matrix.iter().flatten().map(|n| n.to_string().len()))
        .max()
        .unwrap_or(1)
        .max(4);
    let mut out = format!("flip matrix (rows: {a}, columns: {b})\n  {:>width$}", "");
    for c in &d.categories {
        out += &format!(" {c:>width$}");
    }
    out.push('\n');
    for (c, row) in d.categories.iter().zip(&d.matrix) {
        out += &format!("  {c:>width$}");
        for n in row {
            out += &format!(" {n:>width$}");
        }
        out.push('\n');
    }
    out
}

fn paired(c: &Comparison, task: Task) -> String {
    let p = &c.paired;
    let value = |v: Option<f64>| v.map_or("undefined".into(), |v| format!("{v:.3}"));
    let difference = match (p.difference.value, p.difference.ci) {
        (Some(d), Some((lo, hi))) => format!(
            "{d:+.3}, 95% paired bootstrap interval [{lo:+.3}, {hi:+.3}]{}",
            if lo > 0.0 || hi < 0.0 {
                ": a real difference"
            } else {
                ": includes 0, no clear difference"
            }
        ),
        (Some(d), None) => format!("{d:+.3}"),
        (None, _) => "undefined".into(),
    };
    format!(
        "{}: {} vs {} (each over its dev verdicts); difference on the {} shared verdicts {difference}\n\
         right where the other is wrong: the first {} times, the second {} times; McNemar exact p = {:.4}\n",
        p.metric.title(task),
        value(c.first.value),
        value(c.second.value),
        p.n_pairs,
        p.first_only,
        p.second_only,
        p.mcnemar_p
    )
}

fn divergence(d: &Drift) -> String {
    let Some(v) = &d.divergence else {
        return "no divergence: the verdicts carry no belief (exact trials and judges that return log-probabilities do)\n".into();
    };
    let kl = match (v.kl_mean.value, v.kl_p95) {
        (Some(m), Some(p)) => format!(
            "mean KL {m:.4} nats{} (p95 {p:.4})",
            v.kl_mean
                .ci
                .map_or(String::new(), |(lo, hi)| format!(" [{lo:.4}, {hi:.4}]"))
        ),
        _ => "KL undefined".into(),
    };
    let infinite = if v.kl_infinite > 0 {
        format!(
            "; {} calls where the second rules out a verdict the first allows (KL infinite, left out of KL)",
            v.kl_infinite
        )
    } else {
        String::new()
    };
    let mut out = format!(
        "beliefs over the verdicts on {} calls: {kl}, mean Jensen–Shannon {:.4} (p95 {:.4}){infinite}\n",
        v.n_pairs, v.js_mean, v.js_p95
    );
    if !v.moved.is_empty() {
        out += "moved most:\n";
        for m in &v.moved {
            let kl = m.kl.map_or("∞".into(), |k| format!("{k:.3}"));
            out += &format!(
                "  {}{}{}  humans {}: {} → {}  KL {kl}  JS {:.3}\n",
                m.item_id,
                if m.swapped { " (B first)" } else { "" },
                if m.repeat > 0 {
                    format!(" repeat {}", m.repeat)
                } else {
                    String::new()
                },
                m.human,
                m.first,
                m.second,
                m.js
            );
        }
    }
    out
}
