//! What a report says about an experiment: which parameters vary, where each trial stands
//! against the Pareto fronts, how every trial compares with the best one, and which
//! configuration to pick and why. Everything the HTML, Markdown and CSV writers print
//! comes from here, so that they never disagree.

use judgelab_core::metrics::baseline::Baseline;
use judgelab_core::metrics::paired::{self, PairedComparison};
use judgelab_core::metrics::{Estimate, Quality, TrialMetrics};
use judgelab_core::panel::Panel;
use judgelab_core::pareto::{self, Cost, FrontStatus, Objective};
use judgelab_core::results::{ExperimentSummary, TrialSummary};
use judgelab_core::selection::Corrected;
use judgelab_core::trust::cascade::Cascade;
use judgelab_core::{Order, Task};

use judgelab_core::sweep::Axis;

/// A trial that judged the test split, as the report shows it.
pub struct Confirmed<'a> {
    pub trial: &'a TrialSummary,
    pub role: &'a str,
    pub dev: Estimate,
    pub test: Estimate,
    /// Dev minus test: the optimism of choosing it.
    pub gap: Option<f64>,
}

/// The report's reading of an experiment.
pub struct Analysis<'a> {
    pub summary: &'a ExperimentSummary,
    pub task: Task,
    /// The quality metric the fronts and the recommendation use.
    pub quality: Quality,
    pub cost: Objective,
    pub latency: Objective,
    /// Parameters with more than one value, in grid order.
    pub varying: Vec<Axis>,
    /// Per trial (in summary order): its label, and its standing on each front.
    pub labels: Vec<String>,
    pub front_cost: Vec<FrontStatus>,
    pub front_latency: Vec<FrontStatus>,
    /// Indexes into the trials.
    pub best: Option<usize>,
    pub recommended: Option<usize>,
    /// The best trial's quality corrected for having been picked among all of them.
    pub selection: Option<Corrected>,
    /// Each trial against the best one (`None` for the best itself).
    pub versus_best: Vec<Option<PairedComparison>>,
    /// Each panel against the best trial.
    pub panel_versus_best: Vec<Option<PairedComparison>>,
}

impl<'a> Analysis<'a> {
    pub fn new(summary: &'a ExperimentSummary, quality: Quality) -> Analysis<'a> {
        let task = summary.experiment.task_kind;
        let trials = &summary.trials;
        let metrics: Vec<&TrialMetrics> = trials.iter().map(|t| &t.metrics).collect();
        let cost = summary.cost_objective();
        let latency = Objective::Cost(Cost::LatencyP95);
        let q = Objective::Quality(quality);
        let varying: Vec<Axis> = Axis::ALL
            .into_iter()
            .filter(|p| {
                let mut values: Vec<String> = trials.iter().map(|t| p.label(&t.params)).collect();
                values.sort();
                values.dedup();
                values.len() > 1
            })
            .collect();
        let labels = trials
            .iter()
            .map(|t| {
                let mut label = format!("#{}", t.id);
                for p in &varying {
                    label.push_str(&format!(" {}={}", p.short(), p.label(&t.params)));
                }
                label
            })
            .collect();
        let front_cost = pareto::front(&metrics, &[q, cost]);
        let front_latency = pareto::front(&metrics, &[q, latency]);
        let best = summary.pick(quality);
        let (selection, versus_best, panel_versus_best) = compare(summary, best, quality);
        let recommended = best
            .map(|b| recommend(summary, quality, cost, b, &front_cost, &versus_best).unwrap_or(b));
        Analysis {
            summary,
            task,
            quality,
            cost,
            latency,
            varying,
            labels,
            front_cost,
            front_latency,
            best,
            recommended,
            selection,
            versus_best,
            panel_versus_best,
        }
    }

    /// The trials that judged the test split: each one's role, dev and test scores by the
    /// report's metric, and the dev score's excess over the test score.
    pub fn confirmed(&self) -> Vec<Confirmed<'a>> {
        self.summary
            .trials
            .iter()
            .filter_map(|t| {
                let role = t.test_role.as_deref()?;
                let dev = t.split_scores.dev.quality.get(self.quality);
                let test = t.test_score(self.quality).unwrap_or_default();
                let gap = dev.value.zip(test.value).map(|(d, t)| d - t);
                Some(Confirmed {
                    trial: t,
                    role,
                    dev,
                    test,
                    gap,
                })
            })
            .collect()
    }

    pub fn trial(&self, i: usize) -> &TrialSummary {
        &self.summary.trials[i]
    }

    /// A trial named with its parameters, e.g. `#3 (temp=0.7, shots=1)`.
    pub fn name(&self, i: usize) -> String {
        let t = self.trial(i);
        let params: Vec<String> = self
            .varying
            .iter()
            .map(|p| format!("{}={}", p.short(), p.label(&t.params)))
            .collect();
        if params.is_empty() {
            format!("#{}", t.id)
        } else {
            format!("#{} ({})", t.id, params.join(", "))
        }
    }

    /// How the trials rank, in a sentence's clause: "the highest Cohen's kappa as shown
    /// (three decimals); on a tie, the fewest parse failures, …".
    pub fn ranking(&self) -> String {
        judgelab_core::selection::RULE.replacen("quality", self.quality_title(), 1)
    }

    pub fn quality_title(&self) -> &'static str {
        self.quality.title(self.task)
    }

    /// An objective's axis title; a latency's says at which load it was measured.
    pub fn axis_title(&self, objective: Objective) -> String {
        let title = objective.title(self.task);
        match objective {
            Objective::Cost(Cost::LatencyP95 | Cost::TtftP95) => {
                let load = self.summary.latency_load();
                match title.strip_suffix(" (ms)") {
                    Some(head) if !load.is_empty() => format!("{head} {load} (ms)"),
                    _ => title,
                }
            }
            _ => title,
        }
    }

    /// Whether any trial judged with the answers swapped.
    pub fn has_orders(&self) -> bool {
        self.summary
            .trials
            .iter()
            .any(|t| t.params.order != Order::Ab)
    }
}

/// The best's selection-corrected estimate; each trial against the best; each panel.
type Comparisons = (
    Option<Corrected>,
    Vec<Option<PairedComparison>>,
    Vec<Option<PairedComparison>>,
);

/// The selection-corrected estimate of the best, and every trial and panel against the
/// best: bootstrap intervals each, computed side by side.
fn compare(summary: &ExperimentSummary, best: Option<usize>, quality: Quality) -> Comparisons {
    let task = summary.experiment.task_kind;
    let trials = &summary.trials;
    let against_best = |observations: &[judgelab_core::metrics::Observation]| {
        let b = best?;
        Some(paired::compare(
            task,
            observations,
            &trials[b].observations,
            quality,
            &summary.bootstrap,
        ))
    };
    std::thread::scope(|scope| {
        let selection = scope.spawn(|| summary.selection(quality));
        let panels = scope.spawn(|| {
            summary
                .panels
                .iter()
                .map(|p| against_best(&p.observations))
                .collect::<Vec<_>>()
        });
        let versus_best = judgelab_core::parallel::map((0..trials.len()).collect(), |i| {
            best.filter(|&b| b != i)?;
            against_best(&trials[i].observations)
        });
        (
            selection
                .join()
                .expect("the selection estimate does not panic"),
            versus_best,
            panels.join().expect("the panels' comparisons do not panic"),
        )
    })
}

/// A cheaper trial on the quality–cost front that the data cannot tell from the best `b`
/// (its paired interval of the difference includes zero), saving at least a tenth of the
/// cost, and clearing the baselines as the best does; of those, the one with the highest
/// quality (a tenth of a token is no reason to take a worse point estimate). None: the
/// best itself is the recommendation, since when nothing is ready the most promising
/// configuration is the one to develop, not the cheapest.
fn recommend(
    summary: &ExperimentSummary,
    quality: Quality,
    cost: Objective,
    b: usize,
    front_cost: &[FrontStatus],
    versus_best: &[Option<PairedComparison>],
) -> Option<usize> {
    let metrics: Vec<&TrialMetrics> = summary.trials.iter().map(|t| &t.metrics).collect();
    let strongest = summary
        .baselines
        .values()
        .filter_map(|b| b.quality.get(quality).value)
        .fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))));
    if !clears_baselines(metrics[b], quality, strongest) {
        return None;
    }
    let best_cost = cost.value(metrics[b])?;
    let cheaper = |i: usize| cost.value(metrics[i]).is_some_and(|c| c <= 0.9 * best_cost);
    let indistinguishable = |i: usize| {
        versus_best[i]
            .as_ref()
            .and_then(|c| c.difference.ci)
            .is_some_and(|(lo, hi)| lo <= 0.0 && 0.0 <= hi)
    };
    (0..metrics.len())
        .filter(|&i| i != b && front_cost[i] == FrontStatus::Front && cheaper(i))
        .filter(|&i| clears_baselines(metrics[i], quality, strongest) && indistinguishable(i))
        .max_by(|&i, &j| {
            let (qi, qj) = (metrics[i].value(quality), metrics[j].value(quality));
            let (ci, cj) = (cost.value(metrics[i]), cost.value(metrics[j]));
            qi.partial_cmp(&qj)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(cj.partial_cmp(&ci).unwrap_or(std::cmp::Ordering::Equal))
        })
}

/// Whether a trial's whole interval (its value, without one) lies above `baseline`.
pub(crate) fn clears_baselines(m: &TrialMetrics, quality: Quality, baseline: Option<f64>) -> bool {
    let Some(baseline) = baseline else {
        return true;
    };
    match (m.estimate(quality).ci, m.value(quality)) {
        (Some((lo, _)), _) => lo > baseline,
        (None, Some(v)) => v > baseline,
        (None, None) => false,
    }
}

/// A baseline as readers know it: "majority class (always B)", "the longer answer wins".
pub fn baseline_title(b: &Baseline) -> String {
    match b.name {
        "majority" => format!("majority class ({})", b.description),
        _ => b.description.clone(),
    }
}

/// `0.412 [0.301, 0.520]`, or `—`.
pub fn estimate_text(e: Estimate) -> String {
    match (e.value, e.ci) {
        (Some(v), Some((lo, hi))) => format!("{v:.3} [{lo:.3}, {hi:.3}]"),
        (Some(v), None) => format!("{v:.3}"),
        (None, _) => "—".into(),
    }
}

pub fn cost_text(cost: Objective, m: &TrialMetrics) -> String {
    match (cost, cost.value(m)) {
        (Objective::Cost(Cost::Usd), Some(v)) => format!("${v:.3} per 1,000 items"),
        (_, Some(v)) => format!("{v:.0} tokens per item"),
        (_, None) => "unknown cost".into(),
    }
}

/// A difference with its sign and interval: "+0.050 [-0.020, 0.120]".
pub fn signed_text(e: Estimate) -> String {
    match (e.value, e.ci) {
        (Some(v), Some((lo, hi))) => format!("{v:+.3} [{lo:+.3}, {hi:+.3}]"),
        (Some(v), None) => format!("{v:+.3}"),
        (None, _) => "undefined".into(),
    }
}

/// A panel as charts and tables name it: "vote3 panel".
pub fn panel_label(p: &Panel) -> String {
    format!("{} panel", p.name)
}

/// A cascade as charts and tables name it: "#2→#5 cascade ≥0.93" (the cheap trial, the
/// strong one, and the confidence at which the cheap one decides).
pub fn cascade_label(c: &Cascade) -> String {
    cascade_name(c.cheap, c.strong, c.threshold)
}

/// [`cascade_label`] from its parts: the cheap trial, the strong one, the threshold.
pub fn cascade_name(cheap: i64, strong: i64, threshold: f64) -> String {
    format!("#{cheap}→#{strong} cascade ≥{threshold:.2}")
}
