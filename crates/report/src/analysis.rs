//! What a report says about an experiment: which parameters vary, where each trial stands
//! against the Pareto fronts, how every trial compares with the best one, and which
//! configuration to pick and why. Everything the HTML, Markdown and CSV writers print
//! comes from here, so that they never disagree.

use judgelab_core::metrics::baseline::Baseline;
use judgelab_core::metrics::paired::{self, PairedComparison};
use judgelab_core::metrics::{Estimate, Quality, TrialMetrics};
use judgelab_core::panel::Panel;
use judgelab_core::pareto::{self, Cost, FrontStatus, Objective};
use judgelab_core::results::weighted::LearnedWeights;
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
    /// The recommendation and the caveats, in sentences.
    pub findings: Vec<String>,
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
        let mut analysis = Analysis {
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
            findings: Vec::new(),
        };
        analysis.findings = analysis.explain();
        analysis
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

    fn explain(&self) -> Vec<String> {
        let mut out = Vec::new();
        let (Some(best), Some(pick)) = (self.best, self.recommended) else {
            out.push(format!(
                "No trial has a defined {} yet: run the experiment (or check its errors) before choosing.",
                self.quality_title()
            ));
            return out;
        };
        let q = self.quality_title();
        let metrics = |i: usize| &self.trial(i).metrics;
        let cost_text = |i: usize| cost_text(self.cost, metrics(i));
        let m = metrics(pick);
        // Ready means the best's whole interval lies above every baseline: a judge that does
        // not beat "always the common label" or "the longer answer" measures nothing useful.
        let strongest = self
            .summary
            .baselines
            .values()
            .filter_map(|b| Some((b, b.quality.get(self.quality).value?)))
            .max_by(|x, y| x.1.total_cmp(&y.1));
        let ready = clears_baselines(metrics(best), self.quality, strongest.map(|s| s.1));
        let verb = if ready {
            "Pick".to_string()
        } else {
            let (b, value) = strongest.expect("not ready means a baseline");
            out.push(format!(
                "Not ready: no configuration clearly beats the baselines. The best, trial {}, has {q} {}, which does not clearly beat the baseline “{}” ({value:.3}). Try a stronger model, another template or few-shot examples, or judge more items.",
                self.name(best),
                estimate_text(metrics(best).estimate(self.quality)),
                baseline_title(b),
            ));
            "If you must pick one now, take".to_string()
        };
        if pick == best {
            out.push(format!(
                "{verb} trial {}: it has the highest {q}, {}, at {}{}.",
                self.name(best),
                estimate_text(metrics(best).estimate(self.quality)),
                cost_text(best),
                self.tie_text(best)
            ));
        } else {
            let c = self.versus_best[pick]
                .as_ref()
                .expect("compared with the best");
            let ratio = match (
                self.cost.value(metrics(best)),
                self.cost.value(metrics(pick)),
            ) {
                (Some(b), Some(p)) if p > 0.0 => format!("{:.1}× less", b / p),
                _ => "less".into(),
            };
            out.push(format!(
                "{verb} trial {}: its {q} is {}, and the data cannot tell it from the best trial {} ({}): the paired difference is {} (95% bootstrap interval over the same items, which includes 0; McNemar p = {:.2}). It costs {ratio} ({} against {}).",
                self.name(pick),
                estimate_text(m.estimate(self.quality)),
                self.name(best),
                estimate_text(metrics(best).estimate(self.quality)),
                estimate_text(c.difference),
                c.mcnemar_p,
                cost_text(pick),
                cost_text(best),
            ));
        }
        if let Some(c) = self.selection.filter(|c| c.n_trials > 1) {
            if let (Some(naive), Some(optimism)) = (c.naive, c.optimism) {
                out.push(format!(
                    "Trial {} was picked as the best of {} on the same items, so its {q} of {naive:.3} overstates what it will score on new items: picking again on bootstrap resamples and scoring each pick on the items left out gives {}, {optimism:.3} less (bootstrap bias-corrected out-of-bag estimate, Tsamardinos et al. 2018).",
                    self.name(best),
                    c.n_trials,
                    estimate_text(Estimate {
                        value: c.value,
                        ci: c.ci
                    }),
                ));
            }
        }
        out.extend(self.caveats(pick, ready));
        out
    }

    /// What to know about the pick `pick`: how it stands against each baseline (once it is
    /// `ready`; "not ready" has named the one that matters), its parse failures, failed
    /// calls and position bias, and too few items.
    fn caveats(&self, pick: usize, ready: bool) -> Vec<String> {
        let mut out = Vec::new();
        let q = self.quality_title();
        let m = &self.trial(pick).metrics;
        let ci = m.estimate(self.quality).ci;
        for b in self.summary.baselines.values().filter(|_| ready) {
            let Some(value) = b.quality.get(self.quality).value else {
                continue;
            };
            let baseline = format!("the baseline “{}” ({q} {value:.3})", baseline_title(b));
            match ci {
                Some((lo, _)) if lo > value => out.push(format!(
                    "It beats {baseline}: its whole interval lies above it."
                )),
                Some((_, hi)) if hi < value => out.push(format!(
                    "It is worse than {baseline}: its whole interval lies below it."
                )),
                _ => out.push(format!(
                    "It does not clearly beat {baseline}: the interval includes the baseline's value."
                )),
            }
        }
        if let Some(rate) = m.parse_failure_rate.filter(|&r| r > 0.05) {
            out.push(format!(
                "{:.0}% of its outputs did not parse (each counted as wrong): raise max_tokens if they were truncated, or constrain the output.",
                rate * 100.0
            ));
        }
        if m.n_errors > 0 {
            out.push(format!(
                "{} of its calls failed and are not scored; `judgelab run` retries them.",
                m.n_errors
            ));
        }
        if let Some(position) = &m.position {
            if let Some(c) = position.consistency {
                out.push(format!(
                    "Judged in both answer orders, its verdict survived the swap {:.0}% of the time (MT-Bench: GPT-4 65%).",
                    c * 100.0
                ));
            }
            if let Some(f) = position
                .first_preferred
                .filter(|_| position.n_verdicts >= 10)
            {
                if !(0.35..=0.65).contains(&f) {
                    let advice = if self.trial(pick).params.order == Order::Both {
                        "judging both orders turns its flips into ties"
                    } else if self.has_orders() {
                        "compare it with the trials judged in both orders"
                    } else {
                        "sweep `order = [\"ab\", \"both\"]` to measure it and turn flips into ties"
                    };
                    out.push(format!(
                        "It preferred the answer shown first in {:.0}% of its verdicts, a position bias: {advice}.",
                        f * 100.0
                    ));
                }
            }
        }
        let n = self.summary.experiment.n_items;
        if n < 100 {
            out.push(format!(
                "Only {n} items were judged, so the intervals are wide; judge more items (limits.items) to separate close configurations."
            ));
        }
        out
    }

    /// The trials tied with `best` as shown, and what broke the tie: "; trial #3 ties
    /// with it as shown, and has more parse failures"; nothing without a tie.
    fn tie_text(&self, best: usize) -> String {
        let shown = |i: usize| {
            self.trial(i)
                .metrics
                .value(self.quality)
                .map(|v| format!("{v:.3}"))
        };
        let tied: Vec<usize> = (0..self.summary.trials.len())
            .filter(|&i| i != best && shown(i).is_some() && shown(i) == shown(best))
            .collect();
        if tied.is_empty() {
            return String::new();
        }
        let failures = |i: usize| self.trial(i).metrics.parse_failure_rate.unwrap_or(0.0);
        let more_failures = tied.iter().all(|&i| failures(i) > failures(best));
        let names: Vec<String> = tied
            .iter()
            .map(|&i| format!("#{}", self.trial(i).id))
            .collect();
        format!(
            "; {} {} with it as shown, {}",
            names.join(", "),
            if tied.len() == 1 { "ties" } else { "tie" },
            if more_failures {
                format!(
                    "with more parse failures ({:.0}% against its {:.0}%)",
                    tied.iter()
                        .map(|&i| failures(i))
                        .fold(f64::INFINITY, f64::min)
                        * 100.0,
                    failures(best) * 100.0
                )
            } else {
                "and the rule breaks the tie: fewer parse failures, then lower cost, then lower latency, then the earlier trial".into()
            }
        )
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
fn clears_baselines(m: &TrialMetrics, quality: Quality, baseline: Option<f64>) -> bool {
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

impl Analysis<'_> {
    /// What a cascade achieves, in a sentence: "#2 decides 64% of verdicts (confidence ≥
    /// 0.930) and #5 the rest: Cohen's kappa 0.610 [0.520, 0.700] at 120 tokens per item,
    /// against #5 alone at 0.630 […] and 300 tokens per item".
    pub fn cascade_reading(&self, c: &Cascade) -> String {
        let q = self.quality;
        let value = |m: &TrialMetrics| estimate_text(m.estimate(q));
        let cost = |m: &TrialMetrics| cost_text(self.cost, m);
        let strong = self.summary.trials.iter().find(|t| t.id == c.strong);
        let mut out = format!(
            "#{} decides {} of verdicts (confidence ≥ {:.3}) and #{} the rest: {} {} at {}",
            c.cheap,
            c.escalated
                .map_or("—".into(), |e| format!("{:.0}%", 100.0 * (1.0 - e))),
            c.threshold,
            c.strong,
            self.quality_title(),
            value(&c.metrics),
            cost(&c.metrics),
        );
        if let Some(s) = strong {
            out.push_str(&format!(
                ", against #{} alone at {} and {}",
                s.id,
                value(&s.metrics),
                cost(&s.metrics)
            ));
        }
        if let Some(test) = c
            .split_scores
            .test
            .as_ref()
            .and_then(|t| t.quality.get(q).value)
        {
            out.push_str(&format!("; {test:.3} on the test split"));
        }
        out
    }
}

impl Analysis<'_> {
    /// What a panel achieves, in a sentence: "majority of #1, #2, #3: Cohen's kappa 0.610
    /// [0.520, 0.700] at 900 tokens per item; against the best trial #2 +0.050 [-0.02,
    /// 0.12]; its members agree at Krippendorff's alpha 0.410 [0.300, 0.520]; without #1
    /// 0.580 […], …".
    pub fn panel_reading(&self, i: usize) -> String {
        let p = &self.summary.panels[i];
        let q = self.quality;
        let members: Vec<String> = p.members.iter().map(|m| format!("#{m}")).collect();
        let mut out = format!(
            "{} of {}{}: {} {} at {}",
            p.rule.name(),
            members.join(", "),
            p.ties
                .map_or(String::new(), |t| format!(" (a split vote: {})", t.name())),
            self.quality_title(),
            estimate_text(p.metrics.estimate(q)),
            cost_text(self.cost, &p.metrics),
        );
        if let (Some(c), Some(b)) = (&self.panel_versus_best[i], self.best) {
            out.push_str(&format!(
                "; against the best trial #{} {}",
                self.summary.trials[b].id,
                signed_text(c.difference)
            ));
        }
        if let Some(test) = p
            .split_scores
            .test
            .as_ref()
            .and_then(|t| t.quality.get(q).value)
        {
            out.push_str(&format!("; {test:.3} on the test split"));
        }
        out.push_str(&format!(
            "; its members agree at Krippendorff's alpha {} over {} verdicts",
            estimate_text(p.members_agreement.alpha),
            p.members_agreement.n
        ));
        let without: Vec<String> = p
            .contributions
            .iter()
            .map(|c| {
                format!(
                    "without #{} {} {} (the panel {})",
                    c.member,
                    p.contribution_metric.name(),
                    estimate_text(c.without),
                    signed_text(c.difference)
                )
            })
            .collect();
        if !without.is_empty() {
            out.push_str(&format!("; {}", without.join(", ")));
        }
        out
    }
}

impl Analysis<'_> {
    /// Whose labels the figures are against, where not the dataset's: "Every figure is
    /// against ann's labels (5 items carry one)."
    pub fn labels_reading(&self) -> Option<String> {
        let l = &self.summary.labels;
        (l.labels != judgelab_core::annotation::Labels::Original).then(|| {
            format!(
                "Every figure is against {} ({} items carry one).",
                l.description, l.n_labelled
            )
        })
    }

    /// The human ceiling in sentences, once anyone has labelled in the queue or the file
    /// keeps each person's labels: each pair of raters, alpha over them, and the pick with
    /// each rater, in the report's metric.
    pub fn humans_readings(&self) -> Vec<String> {
        let Some(h) = &self.summary.humans else {
            return Vec::new();
        };
        let q = self.quality;
        let title = self.quality_title();
        let mut out: Vec<String> = h
            .pairs
            .iter()
            .map(|p| {
                format!(
                    "{} and {}: {title} {} on the {} items both labelled",
                    p.first,
                    p.second,
                    estimate_text(p.quality.get(q)),
                    p.n_items
                )
            })
            .collect();
        out.push(format!(
            "{} {} raters{}: Krippendorff's alpha {} on {} items labelled twice or more",
            if h.combined { "the" } else { "all" },
            h.alpha_raters,
            if h.combined {
                " the file keeps (the dataset's label combines theirs, so it is left out)"
            } else {
                ""
            },
            estimate_text(h.alpha),
            h.n_shared
        ));
        out.extend(h.judge.iter().map(|j| {
            format!(
                "the pick (trial #{}) and {}: {title} {} on the {} items {} labelled",
                j.trial_id,
                j.rater,
                estimate_text(j.quality.get(q)),
                j.n_items,
                if j.rater == judgelab_core::annotation::humans::DATASET {
                    "the dataset"
                } else {
                    "they"
                }
            )
        }));
        out
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
    format!("#{}→#{} cascade ≥{:.2}", c.cheap, c.strong, c.threshold)
}

/// Each trial's learned criterion weights in words
/// ([`judgelab_core::results::weighted`]): the weights, how often each criterion's value
/// varies, and the weighted aggregate against the unweighted one in the report's metric —
/// on the test split where there is one, else on the dev split it was fitted on, said so.
pub fn weights_text(a: &Analysis<'_>) -> Vec<String> {
    fitted_text(a, |t| t.weights.as_ref())
}

/// Each trial held against its reference in a sentence: the share of the reference's
/// verdicts it keeps (with the flip rate's interval), its agreement beside the
/// reference's, and where both are local model files, the share of the memory its weights
/// take and how fast it prefills: "Q4_0 keeps 99% of verdicts at 60% of the memory".
pub fn drift_text(a: &Analysis<'_>) -> Vec<String> {
    let s = a.summary;
    let q = a.quality;
    s.trials
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let d = t.drift.as_ref()?;
            let r = s.trials.iter().position(|r| r.id == d.reference)?;
            let reference = &s.trials[r];
            let flips = d.flip_rate.value?;
            let interval = d.flip_rate.ci.map_or(String::new(), |(lo, hi)| {
                format!(
                    ", flip rate {:.1}% [{:.1}%, {:.1}%]",
                    100.0 * flips,
                    100.0 * lo,
                    100.0 * hi
                )
            });
            let value = |t: &TrialSummary| {
                t.metrics
                    .value(q)
                    .map_or("undefined".to_string(), |v| format!("{v:.3}"))
            };
            let mut line = format!(
                "{} keeps {:.1}% of {}'s verdicts on {} calls{interval}; {} {} vs {}",
                a.labels[i],
                100.0 * (1.0 - flips),
                a.labels[r].split(' ').next().unwrap_or(""),
                d.n_pairs,
                q.name(),
                value(t),
                value(reference)
            );
            if let Some(kl) = d.kl_mean.value {
                line += &format!("; mean KL {kl:.4} nats");
            }
            // Memory and speed where the model file is another one (a quantisation): the
            // same file's prefill differs by prompt length and noise alone.
            let other_file = t.model_sha256 != reference.model_sha256;
            if let (true, Some(b), Some(rb)) = (other_file, t.model_bytes, reference.model_bytes) {
                line += &format!(
                    "; at {:.0}% of the memory ({:.1} MB)",
                    100.0 * b as f64 / rb as f64,
                    b as f64 / 1e6
                );
            }
            if let (true, Some(p), Some(rp)) = (
                other_file,
                t.metrics.prefill_tokens_per_s,
                reference.metrics.prefill_tokens_per_s,
            ) {
                line += &format!(", prefilling {:.2}× as fast ({p:.0} tokens/s)", p / rp);
            }
            Some(line)
        })
        .collect()
}

/// Each paraphrase group in a sentence: its templates and trials, the share of items no
/// rewording changes with its interval, and the least stable items with their verdicts.
pub fn wording_text(a: &Analysis<'_>) -> Vec<String> {
    a.summary
        .robustness
        .iter()
        .map(|g| {
            let ids: Vec<String> = g.trials.iter().map(|id| format!("#{id}")).collect();
            let share = g.stable.value.map_or("undefined".into(), |v| {
                let ci = g.stable.ci.map_or(String::new(), |(lo, hi)| {
                    format!(" [{:.1}%, {:.1}%]", 100.0 * lo, 100.0 * hi)
                });
                format!("{:.1}%{ci}", 100.0 * v)
            });
            let stable = g
                .stable
                .value
                .map_or(0, |v| (v * g.n_items as f64).round() as usize);
            let mut line = format!(
                "{} ({}){}: {stable} of {} items keep their verdict whatever the wording ({share})",
                g.templates.join(" / "),
                ids.join(", "),
                varying(a, g.trials[0]),
                g.n_items
            );
            let shown: Vec<String> = g
                .least_stable
                .iter()
                .take(3)
                .map(|i| {
                    format!(
                        "{} (humans {}: {})",
                        i.item_id,
                        i.human,
                        i.verdicts.join(" | ")
                    )
                })
                .collect();
            if !shown.is_empty() {
                line += &format!("; least stable: {}", shown.join(", "));
            }
            line
        })
        .collect()
}

/// What sets a paraphrase group apart from the others: the varying axes but the template,
/// as ` at temp=0`; empty where none.
fn varying(a: &Analysis<'_>, trial_id: i64) -> String {
    let Some(t) = a.summary.trials.iter().find(|t| t.id == trial_id) else {
        return String::new();
    };
    let parts: Vec<String> = a
        .varying
        .iter()
        .filter(|&&axis| axis != Axis::Template)
        .map(|axis| format!("{}={}", axis.short(), axis.label(&t.params)))
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" at {}", parts.join(" "))
    }
}

/// A checklist's yes/no items' weights per trial, as [`weights_text`] says criteria's, each
/// item with how its answers rank with the humans' labels on its criterion: which items
/// carry information.
pub fn item_weights_text(a: &Analysis<'_>) -> Vec<String> {
    fitted_text(a, |t| t.item_weights.as_ref())
}

fn fitted_text(
    a: &Analysis<'_>,
    fitted: fn(&TrialSummary) -> Option<&LearnedWeights>,
) -> Vec<String> {
    let q = a.quality;
    a.summary
        .trials
        .iter()
        .enumerate()
        .filter_map(|(i, t)| {
            let w = fitted(t)?;
            let criteria: Vec<String> = w
                .weights
                .iter()
                .map(|(name, weight)| {
                    let varies = w.varies.get(name).copied().unwrap_or(0.0);
                    let rank = match (judgelab_core::rubric::items::of(name), w.spearman.get(name)) {
                        (Some((criterion, _)), Some(Some(rho))) => {
                            format!(", Spearman {rho:.2} with {criterion}")
                        }
                        (Some((criterion, _)), _) => format!(", no Spearman with {criterion}"),
                        (None, _) => String::new(),
                    };
                    let question = w
                        .questions
                        .get(name)
                        .map_or(String::new(), |q| format!(" \"{q}\""));
                    format!(
                        "{name}{question} {weight:.3} (varies in {:.0}%{rank})",
                        varies * 100.0
                    )
                })
                .collect();
            let compared = match (&w.test, &t.split_scores.test) {
                (Some(weighted), Some(unweighted)) => format!(
                    "on the test split, {} {} weighted against {} unweighted",
                    a.quality_title(),
                    estimate_text(weighted.quality.get(q)),
                    estimate_text(unweighted.quality.get(q))
                ),
                _ => format!(
                    "on the dev split it was fitted on (in-sample, so optimistic; a test split confirms it), {} {} weighted against {} unweighted",
                    a.quality_title(),
                    estimate_text(w.dev.quality.get(q)),
                    estimate_text(t.split_scores.dev.quality.get(q))
                ),
            };
            // The minimum aggregate on the split the weighted one is compared on.
            let minimum = match (&w.minimum, &w.test) {
                (Some((_, Some(test))), Some(_)) => Some(test),
                (Some((dev, _)), _) => Some(dev),
                _ => None,
            };
            let minimum = minimum.map_or(String::new(), |m| {
                format!(
                    " The minimum aggregate (a verdict is its worst criterion): {}.",
                    estimate_text(m.quality.get(q))
                )
            });
            Some(format!(
                "{}: {}; intercept {:.3}; {} ({} verdicts). {}{}.{minimum}",
                a.labels[i],
                criteria.join(", "),
                w.intercept,
                w.method,
                w.n_fit,
                compared[..1].to_uppercase(),
                &compared[1..]
            ))
        })
        .collect()
}
