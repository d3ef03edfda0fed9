//! The charts of a report, built from its [`Analysis`]: the Pareto fronts, quality against
//! a swept parameter, each trial's agreement per criterion, latency CDFs, a confusion
//! matrix, the latest load ramp, a race's rounds, and the trust section's reliability
//! diagram and coverage–agreement curves.

use judgelab_core::load::LoadLevel;
use judgelab_core::metrics::Quality;
use judgelab_core::pareto::{FrontStatus, Objective};
use judgelab_core::results::TrialSummary;
use judgelab_core::Task;

use crate::analysis::{baseline_title, cascade_label, panel_label, Analysis};
use crate::charts;
use judgelab_core::sweep::Axis;

/// A value of a load level, with its interval.
type Pick = dyn Fn(&LoadLevel) -> (Option<f64>, Option<[f64; 2]>);

impl Analysis<'_> {
    /// The Pareto chart of quality against `objective` (cost or latency).
    pub fn pareto_chart(&self, objective: Objective) -> charts::ParetoChart {
        let statuses = if objective == self.latency {
            &self.front_latency
        } else {
            &self.front_cost
        };
        let points = self
            .summary
            .trials
            .iter()
            .zip(statuses)
            .zip(&self.labels)
            .filter_map(|((t, status), label)| {
                let m = &t.metrics;
                Some(charts::ParetoPoint {
                    label: label.clone(),
                    x: objective.value(m)?,
                    y: m.value(self.quality)?,
                    y_ci: m.estimate(self.quality).ci,
                    status: match status {
                        FrontStatus::Front => charts::FrontStatus::Front,
                        FrontStatus::Indistinguishable => charts::FrontStatus::Indistinguishable,
                        _ => charts::FrontStatus::Dominated,
                    },
                })
            })
            .chain(self.summary.cascades.iter().filter_map(|c| {
                Some(charts::ParetoPoint {
                    label: cascade_label(c),
                    x: objective.value(&c.metrics)?,
                    y: c.metrics.value(self.quality)?,
                    y_ci: c.metrics.estimate(self.quality).ci,
                    status: charts::FrontStatus::Composed,
                })
            }))
            .chain(self.summary.panels.iter().filter_map(|p| {
                Some(charts::ParetoPoint {
                    label: panel_label(p),
                    x: objective.value(&p.metrics)?,
                    y: p.metrics.value(self.quality)?,
                    y_ci: p.metrics.estimate(self.quality).ci,
                    status: charts::FrontStatus::Composed,
                })
            }))
            .collect();
        let what = if objective == self.latency {
            "latency"
        } else {
            "cost"
        };
        charts::ParetoChart {
            title: format!(
                "{}: {} vs {what}",
                self.summary.experiment.name,
                self.quality_title()
            ),
            x_label: self.axis_title(objective),
            y_label: self.quality_title().to_string(),
            points,
            baselines: self.references(),
        }
    }

    /// The baselines as reference lines on the quality axis.
    pub fn references(&self) -> Vec<charts::Reference> {
        self.summary
            .baselines
            .values()
            .filter_map(|b| {
                let value = b.quality.get(self.quality).value?;
                Some(charts::Reference {
                    name: baseline_title(b),
                    value,
                })
            })
            .collect()
    }

    /// Quality against the numeric parameter with the most values (or a categorical one),
    /// one line per combination of the other varying parameters. The load latency is
    /// measured at (`concurrency`) leaves the verdicts as they are: its levels would be
    /// the same line again, so only the first level's trials are drawn.
    pub fn parameter_chart(&self) -> Option<(Axis, charts::LineChart)> {
        let first = self.summary.trials.first()?.params.concurrency;
        let trials: Vec<&TrialSummary> = self
            .summary
            .trials
            .iter()
            .filter(|t| t.params.concurrency == first)
            .collect();
        let trials = &trials;
        let distinct = |p: Axis| {
            let mut v: Vec<String> = trials.iter().map(|t| p.label(&t.params)).collect();
            v.sort();
            v.dedup();
            v.len()
        };
        let numeric = |p: Axis| trials.iter().all(|t| p.number(&t.params).is_some());
        let x = self
            .varying
            .iter()
            .copied()
            .filter(|&p| p != Axis::Concurrency)
            .filter(|&p| p != Axis::Order || self.varying.len() == 1)
            .max_by_key(|&p| (numeric(p), distinct(p)))?;
        let mut categories: Vec<String> = Vec::new();
        if !numeric(x) {
            for t in trials {
                let v = x.label(&t.params);
                if !categories.contains(&v) {
                    categories.push(v);
                }
            }
        }
        let others: Vec<Axis> = self
            .varying
            .iter()
            .copied()
            .filter(|&p| p != x && p != Axis::Concurrency)
            .collect();
        let mut series: Vec<charts::Series> = Vec::new();
        for t in trials {
            let name = if others.is_empty() {
                self.quality_title().to_string()
            } else {
                others
                    .iter()
                    .map(|p| format!("{}={}", p.short(), p.label(&t.params)))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let Some(y) = t.metrics.value(self.quality) else {
                continue;
            };
            let xv = match x.number(&t.params) {
                Some(v) => v,
                None => categories.iter().position(|c| *c == x.label(&t.params))? as f64,
            };
            let point = charts::LinePoint {
                x: xv,
                y,
                ci: t.metrics.estimate(self.quality).ci,
            };
            match series.iter_mut().find(|s| s.name == name) {
                Some(s) => s.points.push(point),
                None => series.push(charts::Series {
                    name,
                    points: vec![point],
                }),
            }
        }
        for s in &mut series {
            s.points.sort_by(|a, b| a.x.total_cmp(&b.x));
        }
        series.truncate(8);
        Some((
            x,
            charts::LineChart {
                title: format!("{} vs {}", self.quality_title(), x.title()),
                x_label: x.title().to_string(),
                y_label: self.quality_title().to_string(),
                x_ticks: (!categories.is_empty()).then_some(categories),
                series,
                baselines: self.references(),
                reference_kind: "baseline".into(),
            },
        ))
    }

    /// Each trial's agreement on each criterion its verdicts rate (Spearman's rho for
    /// ratings, accuracy for pairwise criteria, with 95% intervals): the criteria along x,
    /// a line per trial (at most eight), so that a rubric and a checklist compare
    /// criterion by criterion. None where no trial rates a criterion.
    pub fn criteria_chart(&self) -> Option<charts::LineChart> {
        let s = self.summary;
        let criteria = s.rated_criteria();
        if criteria.is_empty() {
            return None;
        }
        let quality = |task: Task| match task {
            Task::Single { .. } => Quality::Spearman,
            Task::Pairwise => Quality::Accuracy,
        };
        let y_label = if criteria.iter().all(|c| c.task != Task::Pairwise) {
            "Spearman's rho".to_string()
        } else {
            "Spearman's rho (ratings), accuracy (pairwise)".to_string()
        };
        let series = s
            .trials
            .iter()
            .enumerate()
            .filter(|(_, t)| !t.criteria.is_empty())
            .take(8)
            .map(|(i, t)| charts::Series {
                name: self.labels[i].clone(),
                points: criteria
                    .iter()
                    .enumerate()
                    .filter_map(|(x, c)| {
                        let e = t.criteria.get(&c.name)?.dev.quality.get(quality(c.task));
                        Some(charts::LinePoint {
                            x: x as f64,
                            y: e.value?,
                            ci: e.ci,
                        })
                    })
                    .collect(),
            })
            .collect();
        Some(charts::LineChart {
            title: "agreement on each criterion".into(),
            x_label: "criterion".into(),
            y_label,
            x_ticks: Some(criteria.iter().map(|c| c.name.clone()).collect()),
            series,
            baselines: Vec::new(),
            reference_kind: "baseline".into(),
        })
    }

    /// Agreement against the flip rate from the reference trial (`[reference]`): each
    /// trial held against one at its flip rate with its interval on agreement, and each
    /// reference at 0. None without a reference. At most twelve trials.
    pub fn drift_chart(&self) -> Option<charts::LineChart> {
        let s = self.summary;
        let references: Vec<i64> = s
            .trials
            .iter()
            .filter_map(|t| Some(t.drift.as_ref()?.reference))
            .collect();
        if references.is_empty() {
            return None;
        }
        let series = s
            .trials
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                let x = match &t.drift {
                    Some(d) => d.flip_rate.value?,
                    None if references.contains(&t.id) => 0.0,
                    None => return None,
                };
                let e = t.metrics.estimate(self.quality);
                Some(charts::Series {
                    name: self.labels[i].clone(),
                    points: vec![charts::LinePoint {
                        x: 100.0 * x,
                        y: e.value?,
                        ci: e.ci,
                    }],
                })
            })
            .take(12)
            .collect();
        Some(charts::LineChart {
            title: format!("{} against verdicts flipped", self.quality_title()),
            x_label: "verdicts flipped from the reference trial (%)".into(),
            y_label: self.quality_title().to_string(),
            x_ticks: None,
            series,
            baselines: self.references(),
            reference_kind: "baseline".into(),
        })
    }

    /// A race's standings by round: each surviving trial's selection metric minus the
    /// round's leader's (95% interval from the paired jackknife error), against the dev
    /// items judged by then; a trial's line ends at the round that dropped it. At most ten
    /// trials: the dropped ones (up to five, the last dropped first), then the survivors
    /// closest to the leader at the last round that compared them.
    pub fn race_chart(&self) -> Option<charts::LineChart> {
        let race = &self.summary.race;
        if race.is_empty() {
            return None;
        }
        let metric = self.summary.experiment.parsed.selection.metric;
        let ids = self.race_chart_trials();
        let series = ids
            .iter()
            .map(|&(i, id)| charts::Series {
                name: self.labels[i].clone(),
                points: race
                    .iter()
                    .filter(|s| s.trial_id == id)
                    .filter_map(|s| {
                        let d = if s.leader { 0.0 } else { s.difference? };
                        Some(charts::LinePoint {
                            x: s.n_items as f64,
                            y: d,
                            ci: s.std_error.map(|se| (d - 1.96 * se, d + 1.96 * se)),
                        })
                    })
                    .collect(),
            })
            .filter(|s: &charts::Series| !s.points.is_empty())
            .collect();
        let title = metric.title(self.task);
        Some(charts::LineChart {
            title: format!("race: {title} against the leader, round by round"),
            x_label: "dev items judged".into(),
            y_label: format!("{title} minus the leader's"),
            x_ticks: None,
            series,
            baselines: vec![charts::Reference {
                name: "the leader".into(),
                value: 0.0,
            }],
            reference_kind: "reference".into(),
        })
    }

    /// The trials a race's chart draws, by index and id: the dropped ones (up to five,
    /// the last dropped first), then the survivors closest to the leader at the last round
    /// that compared them; ten at most, in the table's order.
    fn race_chart_trials(&self) -> Vec<(usize, i64)> {
        let race = &self.summary.race;
        let last_round = |id: i64| {
            race.iter()
                .filter(|s| s.trial_id == id)
                .map(|s| s.round)
                .max()
        };
        // A survivor's difference at the last round that tested it (the leader's is 0).
        let last_difference = |id: i64| {
            race.iter()
                .filter(|s| s.trial_id == id && (s.leader || s.difference.is_some()))
                .max_by_key(|s| s.round)
                .map_or(f64::NEG_INFINITY, |s| {
                    if s.leader {
                        0.0
                    } else {
                        s.difference.unwrap_or(f64::NEG_INFINITY)
                    }
                })
        };
        let raced: Vec<(usize, &judgelab_core::results::TrialSummary)> = self
            .summary
            .trials
            .iter()
            .enumerate()
            .filter(|(_, t)| last_round(t.id).is_some())
            .collect();
        let mut dropped: Vec<(usize, i64)> = raced
            .iter()
            .filter(|(_, t)| t.dropped.is_some())
            .map(|&(i, t)| (i, t.id))
            .collect();
        dropped.sort_by_key(|&(i, id)| (std::cmp::Reverse(last_round(id)), i));
        dropped.truncate(5);
        let mut survivors: Vec<(usize, i64)> = raced
            .iter()
            .filter(|(_, t)| t.dropped.is_none())
            .map(|&(i, t)| (i, t.id))
            .collect();
        survivors.sort_by(|&(i, a), &(j, b)| {
            last_difference(b)
                .total_cmp(&last_difference(a))
                .then(i.cmp(&j))
        });
        survivors.truncate(10 - dropped.len());
        let mut ids: Vec<(usize, i64)> = dropped.into_iter().chain(survivors).collect();
        ids.sort_unstable();
        ids
    }

    /// The trials whose verdicts have a confidence, as the trust section shows them: the
    /// recommended and the best first, then the best calibrated; five at most.
    pub fn trusted(&self) -> Vec<usize> {
        let trials = &self.summary.trials;
        let has = |i: usize| trials[i].calibration.is_some();
        let mut out: Vec<usize> = [self.recommended, self.best]
            .into_iter()
            .flatten()
            .filter(|&i| has(i))
            .collect();
        out.dedup();
        let mut rest: Vec<usize> = (0..trials.len())
            .filter(|&i| has(i) && !out.contains(&i))
            .collect();
        let ece = |i: usize| {
            trials[i]
                .calibration
                .as_ref()
                .and_then(|c| c.ece)
                .unwrap_or(f64::INFINITY)
        };
        rest.sort_by(|&a, &b| ece(a).total_cmp(&ece(b)).then(a.cmp(&b)));
        out.extend(rest);
        out.truncate(5);
        out
    }

    /// The reliability diagram of the [`Self::trusted`] trials: each confidence bin's share
    /// of right verdicts against its mean confidence, beside the diagonal of perfect
    /// calibration.
    pub fn reliability_chart(&self) -> Option<charts::LineChart> {
        let trusted = self.trusted();
        if trusted.is_empty() {
            return None;
        }
        // The trials first, so that each has the colour it has on the coverage chart.
        let mut series: Vec<charts::Series> = trusted
            .iter()
            .filter_map(|&i| {
                let c = self.summary.trials[i].calibration.as_ref()?;
                Some(charts::Series {
                    name: self.labels[i].clone(),
                    points: c
                        .bins
                        .iter()
                        .map(|b| charts::LinePoint {
                            x: b.confidence,
                            y: b.accuracy,
                            ci: None,
                        })
                        .collect(),
                })
            })
            .collect();
        series.push(charts::Series {
            name: "perfectly calibrated".into(),
            points: [0.0, 1.0]
                .map(|x| charts::LinePoint { x, y: x, ci: None })
                .to_vec(),
        });
        Some(charts::LineChart {
            title: "reliability: how often a verdict of each confidence is right".into(),
            x_label: "confidence of the verdict (mean of its bin)".into(),
            y_label: "share of verdicts that agree with the human".into(),
            x_ticks: None,
            series,
            baselines: vec![],
            reference_kind: "reference".into(),
        })
    }

    /// Coverage against agreement of the [`Self::trusted`] trials on the dev split (accept
    /// the verdicts above a threshold, send the rest to humans), with the target agreement.
    pub fn coverage_chart(&self) -> Option<charts::LineChart> {
        let trusted = self.trusted();
        if trusted.is_empty() {
            return None;
        }
        let target = self.summary.experiment.parsed.trust.target;
        let series = trusted
            .iter()
            .filter_map(|&i| {
                let s = self.summary.trials[i].selective.as_ref()?;
                Some(charts::Series {
                    name: self.labels[i].clone(),
                    points: s
                        .curve
                        .iter()
                        .map(|p| charts::LinePoint {
                            x: p.coverage,
                            y: p.agreement,
                            ci: None,
                        })
                        .collect(),
                })
            })
            .collect();
        Some(charts::LineChart {
            title: "selective judging: agreement of the verdicts the judge decides".into(),
            x_label: "share of items the judge decides (the rest go to humans)".into(),
            y_label: "agreement of the decided verdicts with humans".into(),
            x_ticks: None,
            series,
            baselines: vec![charts::Reference {
                name: format!("target {:.0}%", 100.0 * target.agreement),
                value: target.agreement,
            }],
            reference_kind: "target".into(),
        })
    }

    /// Latency CDFs of up to ten trials: the recommended and best first, then the front.
    pub fn latency_chart(&self) -> charts::CdfChart {
        let mut chosen: Vec<usize> = self.recommended.into_iter().chain(self.best).collect();
        chosen.extend(
            (0..self.summary.trials.len()).filter(|&i| self.front_latency[i] == FrontStatus::Front),
        );
        chosen.extend(0..self.summary.trials.len());
        let mut seen = Vec::new();
        for i in chosen {
            if !seen.contains(&i) && seen.len() < 10 {
                seen.push(i);
            }
        }
        seen.sort_unstable();
        let load = self.summary.latency_load();
        charts::CdfChart {
            title: format!("latency per request {load}").trim_end().to_string(),
            x_label: format!("latency per request {load} (ms)").replace("  ", " "),
            series: seen
                .into_iter()
                .map(|i| (self.labels[i].clone(), self.trial(i).latencies.clone()))
                .collect(),
        }
    }

    /// The latest load ramp's charts: TTFT and latency per request against requests in
    /// flight (95% intervals, the SLO as a line), and throughput with the knee's rule.
    pub fn load_charts(&self) -> Option<(charts::LineChart, charts::LineChart)> {
        let r = self.summary.load_ramps.last()?;
        let label = self
            .summary
            .trial_index(r.trial_id)
            .map_or_else(|_| format!("#{}", r.trial_id), |i| self.labels[i].clone());
        let levels = &r.ramp.levels;
        let ticks: Vec<String> = levels.iter().map(|l| l.concurrency.to_string()).collect();
        let series = |name: &str, f: &Pick| charts::Series {
            name: name.to_string(),
            points: levels
                .iter()
                .enumerate()
                .filter_map(|(i, l)| {
                    let (y, ci) = f(l);
                    Some(charts::LinePoint {
                        x: i as f64,
                        y: y?,
                        ci: ci.map(|[lo, hi]| (lo, hi)),
                    })
                })
                .collect(),
        };
        let mut latency = vec![
            series("TTFT p50", &|l| (l.ttft_ms.p50, l.ttft_ms.p50_ci)),
            series("TTFT p95", &|l| (l.ttft_ms.p95, l.ttft_ms.p95_ci)),
            series("TTFT p99", &|l| (l.ttft_ms.p99, l.ttft_ms.p99_ci)),
            series("latency p50", &|l| (l.latency_ms.p50, l.latency_ms.p50_ci)),
            series("latency p95", &|l| (l.latency_ms.p95, l.latency_ms.p95_ci)),
        ];
        latency.retain(|s| !s.points.is_empty());
        let best = levels.iter().map(|l| l.throughput_vps).fold(0.0, f64::max);
        let knee = r
            .ramp
            .knee
            .map_or("no knee".to_string(), |k| format!("knee at {k}"));
        Some((
            charts::LineChart {
                title: format!("{label}: per request, against requests in flight"),
                x_label: "requests in flight (concurrency)".into(),
                y_label: "milliseconds".into(),
                x_ticks: Some(ticks.clone()),
                series: latency,
                reference_kind: "SLO".into(),
                baselines: r
                    .ramp
                    .slo_ms
                    .map(|slo| charts::Reference {
                        name: format!("SLO {slo:.0} ms"),
                        value: slo,
                    })
                    .into_iter()
                    .collect(),
            },
            charts::LineChart {
                title: format!("{label}: throughput against requests in flight ({knee})"),
                x_label: "requests in flight (concurrency)".into(),
                y_label: "verdicts per second".into(),
                x_ticks: Some(ticks),
                series: vec![series("verdicts/s", &|l| (Some(l.throughput_vps), None))],
                reference_kind: "the knee's rule".into(),
                baselines: vec![charts::Reference {
                    name: "90% of the best: the knee's rule".into(),
                    value: 0.9 * best,
                }],
            },
        ))
    }

    pub fn confusion_chart(&self, i: usize) -> charts::ConfusionChart {
        let c = &self.trial(i).metrics.confusion;
        charts::ConfusionChart {
            title: format!("confusion matrix of trial {}", self.name(i)),
            rows: c.labels.clone(),
            cols: c.columns.clone(),
            counts: c.counts.clone(),
        }
    }
}
