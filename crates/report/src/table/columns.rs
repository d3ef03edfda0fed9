//! The results table's columns, each declared once: its export key, its headers, its unit,
//! the outputs that show it for this experiment, and its value for any row. The
//! parameters come from the axis registry and the agreement metrics from
//! `Quality::for_task`; the rest are listed here in the order every output shows them.
//! Adding a column is adding one entry to [`all`].

use judgelab_core::metrics::baseline::Baseline;
use judgelab_core::metrics::paired::PairedComparison;
use judgelab_core::metrics::{Estimate, Quality, SplitScores, TrialMetrics};
use judgelab_core::pareto::{self, FrontStatus, Objective};
use judgelab_core::results::comparison::AgainstReference;
use judgelab_core::results::{TrialSummary, EXPORT_SCHEMA_VERSION};
use judgelab_core::sweep::{self, Axis};
use judgelab_core::trust::calibration::Calibration;
use judgelab_core::{Order, Task};

use super::{Cell, Column, Outputs, RowKind, Unit};
use crate::analysis::Analysis;

/// What a row is made of, as its columns read it.
pub(super) struct Subject<'a> {
    pub kind: RowKind,
    /// Its index among the rows of its kind.
    pub index: usize,
    pub metrics: &'a TrialMetrics,
    pub trial: Option<&'a TrialSummary>,
    pub split_scores: &'a SplitScores,
    pub calibration: Option<&'a Calibration>,
    pub versus_best: Option<&'a PairedComparison>,
    pub front_cost: Option<FrontStatus>,
    pub front_latency: Option<FrontStatus>,
}

impl<'a> Subject<'a> {
    /// The trials, then the cascades, then the panels.
    pub fn all(a: &'a Analysis<'a>) -> Vec<Subject<'a>> {
        let s = a.summary;
        let trials = s.trials.iter().enumerate().map(|(i, t)| Subject {
            kind: RowKind::Trial,
            index: i,
            metrics: &t.metrics,
            trial: Some(t),
            split_scores: &t.split_scores,
            calibration: t.calibration.as_ref(),
            versus_best: a.versus_best[i].as_ref(),
            front_cost: Some(a.front_cost[i]),
            front_latency: Some(a.front_latency[i]),
        });
        let cascades = s.cascades.iter().enumerate().map(|(i, c)| Subject {
            kind: RowKind::Cascade,
            index: i,
            metrics: &c.metrics,
            trial: None,
            split_scores: &c.split_scores,
            calibration: None,
            versus_best: None,
            front_cost: None,
            front_latency: None,
        });
        let panels = s.panels.iter().enumerate().map(|(i, p)| Subject {
            kind: RowKind::Panel,
            index: i,
            metrics: &p.metrics,
            trial: None,
            split_scores: &p.split_scores,
            calibration: p.calibration.as_ref(),
            versus_best: a.panel_versus_best[i].as_ref(),
            front_cost: None,
            front_latency: None,
        });
        trials.chain(cascades).chain(panels).collect()
    }
}

/// A column and how to fill it, for a row and for a baseline (which has only its
/// agreement and the items it covers).
pub(super) struct Def<'a> {
    pub column: Column,
    pub value: RowValue<'a>,
    pub baseline: Option<BaselineValue<'a>>,
}

/// A column's value for a row, and for a baseline.
type RowValue<'a> = Box<dyn Fn(&Subject<'a>) -> Cell + 'a>;
type BaselineValue<'a> = Box<dyn Fn(&Baseline) -> Cell + 'a>;

impl<'a> Def<'a> {
    fn new(key: &str, unit: Unit, value: impl Fn(&Subject<'a>) -> Cell + 'a) -> Def<'a> {
        Def {
            column: Column {
                key: key.to_string(),
                short: key.to_string(),
                title: key.replace('_', " "),
                unit,
                digits: match unit {
                    Unit::Estimate | Unit::Difference | Unit::Number | Unit::Usd => 3,
                    Unit::Share => 1,
                    _ => 0,
                },
                interval: matches!(unit, Unit::Estimate | Unit::Difference),
                outputs: Outputs {
                    export: true,
                    ..Outputs::default()
                },
            },
            value: Box::new(value),
            baseline: None,
        }
    }

    fn baseline(mut self, value: impl Fn(&Baseline) -> Cell + 'a) -> Self {
        self.baseline = Some(Box::new(value));
        self
    }

    fn short(mut self, short: &str) -> Self {
        self.column.short = short.to_string();
        self
    }

    fn title(mut self, title: impl Into<String>) -> Self {
        self.column.title = title.into();
        self
    }

    fn digits(mut self, digits: usize) -> Self {
        self.column.digits = digits;
        self
    }

    fn interval(mut self) -> Self {
        self.column.interval = true;
        self
    }

    /// Shown in the terminal, the report and the app where each is true (every column is
    /// in the exports).
    fn shown(mut self, terminal: bool, report: bool, app: bool) -> Self {
        self.column.outputs = Outputs {
            terminal,
            report,
            app,
            export: true,
        };
        self
    }

    /// Shown in the report and the app, not exported: a summary of figures the exports
    /// have under their own names (the cost, as tokens or dollars).
    fn summary(mut self) -> Self {
        self.column.outputs = Outputs {
            report: true,
            app: true,
            ..Outputs::default()
        };
        self
    }
}

/// What about an experiment decides which columns its outputs show.
struct Present {
    task: Task,
    metric: Quality,
    orders: bool,
    exact: bool,
    /// A remote judge's exact trials, with the mass its server left out.
    covered: bool,
    /// Trials with an input budget.
    cut: bool,
    priced: bool,
    errors: bool,
    tested: bool,
    selecting: bool,
    calibrated: bool,
    /// Some trial is held against a reference trial (`[reference]`), and with the
    /// divergence of its beliefs.
    drift: bool,
    /// Paraphrase groups (`[robustness]`).
    wording: bool,
    divergence: bool,
    /// Ratings that are not all whole points (means of several annotators, a rubric's
    /// aggregate): agreement within half a point is shown where exact agreement is not
    /// defined.
    means: bool,
}

impl Present {
    fn of(a: &Analysis<'_>) -> Present {
        let s = a.summary;
        let metrics = || {
            s.trials
                .iter()
                .map(|t| &t.metrics)
                .chain(s.cascades.iter().map(|c| &c.metrics))
                .chain(s.panels.iter().map(|p| &p.metrics))
        };
        Present {
            task: a.task,
            metric: a.quality,
            orders: s.trials.iter().any(|t| t.params.order != Order::Ab),
            exact: s.trials.iter().any(|t| t.metrics.expected.is_some()),
            covered: s.trials.iter().any(|t| t.coverage.is_some()),
            cut: s.trials.iter().any(|t| t.inputs_cut.is_some()),
            priced: s
                .trials
                .iter()
                .any(|t| t.metrics.usd_per_1k_items.is_some()),
            errors: metrics().any(|m| m.n_errors > 0),
            tested: s.experiment.n_test_items > 0,
            selecting: s.experiment.n_test_items > 0 || !s.race.is_empty(),
            calibrated: s.trials.iter().any(|t| t.calibration.is_some())
                || s.panels.iter().any(|p| p.calibration.is_some()),
            means: metrics().any(|m| m.value(Quality::WithinHalfPoint).is_some()),
            drift: s.trials.iter().any(|t| t.drift.is_some()),
            wording: !s.robustness.is_empty(),
            divergence: s
                .trials
                .iter()
                .any(|t| t.drift.as_ref().is_some_and(|d| d.kl_mean.value.is_some())),
        }
    }
}

/// Every column of `a`'s table, in order; `front` adds each trial's place on the front of
/// those objectives.
pub(super) fn all<'a>(a: &'a Analysis<'a>, front: &[Objective]) -> Vec<Def<'a>> {
    let p = Present::of(a);
    let n_items = a.summary.experiment.n_items;
    let mut out = vec![
        Def::new("trial_id", Unit::Count, |s| {
            s.trial
                .map_or(Cell::Blank, |t| Cell::Count(Some(t.id as u64)))
        }),
        Def::new("trial_idx", Unit::Count, |s| {
            s.trial
                .map_or(Cell::Blank, |t| Cell::Count(Some(t.trial_idx as u64)))
        }),
    ];
    out.extend(parameters(a));
    out.extend([
        Def::new("n", Unit::Count, |s| Cell::Count(Some(s.metrics.n as u64)))
            .baseline(move |_| Cell::Count(Some(n_items as u64)))
            .shown(true, true, false),
        Def::new("n_errors", Unit::Count, |s| {
            Cell::Count(Some(s.metrics.n_errors as u64))
        })
        .short("err")
        .title("failed calls")
        .shown(p.errors, p.errors, p.errors),
    ]);
    out.extend(qualities(&p));
    out.extend(criteria(a));
    out.extend(expected(&p));
    out.extend(coverage(&p));
    out.extend(inputs_cut(&p));
    out.extend(drift(&p));
    out.push(wording(a, &p));
    out.extend(spend(a, &p));
    out.extend(latency(a));
    out.extend(footprint(a));
    out.extend(fronts(a, front));
    out.extend(selection(a, &p));
    out.extend(trust(&p));
    out.extend(composition(a));
    out.push(Def::new("schema_version", Unit::Count, |_| {
        Cell::Count(Some(u64::from(EXPORT_SCHEMA_VERSION)))
    }));
    out
}

/// One column per axis of the registry: the terminal shows those `sweep::shown` keeps
/// (but the load, which is `conc`'s), the report and the app those that vary.
fn parameters<'a>(a: &'a Analysis<'a>) -> Vec<Def<'a>> {
    let params: Vec<_> = a.summary.trials.iter().map(|t| &t.params).collect();
    let shown = sweep::shown(&params);
    Axis::ALL
        .into_iter()
        .map(|axis| {
            let terminal = shown.contains(&axis) && axis != Axis::Concurrency;
            let varying = a.varying.contains(&axis);
            Def::new(axis.export(), Unit::Param, move |s| {
                s.trial.map_or(Cell::Blank, |t| Cell::Param {
                    text: axis.text(&t.params),
                    label: axis.label(&t.params),
                })
            })
            .short(axis.short())
            .title(axis.key())
            .shown(terminal, varying, false)
        })
        .collect()
}

/// The task's agreement metrics with their intervals: the terminal shows accuracy (within
/// half a point and the mean absolute error where the ratings are means), kappa, Spearman
/// and the selection metric, the report the selection metric and accuracy (or within half
/// a point and MAE); the one of accuracy and within half a point that is not defined is
/// shown nowhere.
fn qualities<'a>(p: &Present) -> Vec<Def<'a>> {
    let exact = if p.means {
        Quality::WithinHalfPoint
    } else {
        Quality::Accuracy
    };
    Quality::for_task(p.task)
        .iter()
        .map(|&q| {
            let chosen = q == p.metric;
            let defined = !matches!(q, Quality::Accuracy | Quality::WithinHalfPoint) || q == exact;
            // Labels that are means are read on continuous metrics: MAE beside the rest.
            let error = p.means && q == Quality::MeanAbsoluteError;
            let terminal =
                chosen || error || q == exact || matches!(q, Quality::Kappa | Quality::Spearman);
            Def::new(q.name(), Unit::Estimate, move |s| {
                Cell::Estimate(s.metrics.estimate(q))
            })
            .baseline(move |b| Cell::Estimate(b.quality.get(q)))
            .title(q.title(p.task))
            .shown(
                defined && terminal,
                defined && (chosen || error || q == exact),
                defined,
            )
        })
        .collect()
}

/// Each criterion a rubric's trials ask: its rank correlation and interval alpha (for
/// ratings; accuracy and nominal alpha for pairwise criteria) with their intervals, and
/// the share of calls that gave it no value. A trial that does not ask it, a composed row
/// and a baseline have none.
fn criteria<'a>(a: &'a Analysis<'a>) -> Vec<Def<'a>> {
    let mut out = Vec::new();
    for c in a.summary.rated_criteria() {
        let metrics = match c.task {
            Task::Single { .. } => [Quality::Spearman, Quality::AlphaInterval],
            Task::Pairwise => [Quality::Accuracy, Quality::AlphaNominal],
        };
        let name = c.name.as_str();
        for q in metrics {
            let shown = q == metrics[0];
            out.push(
                Def::new(
                    &format!("criterion_{name}_{}", q.name()),
                    Unit::Estimate,
                    move |s| {
                        s.trial
                            .and_then(|t| t.criteria.get(name))
                            .map_or(Cell::Blank, |c| Cell::Estimate(c.dev.quality.get(q)))
                    },
                )
                .short(&format!("{name} {}", q.name()))
                .title(format!("{name}: {}", q.title(c.task)))
                .shown(false, shown, shown),
            );
        }
        out.push(
            Def::new(
                &format!("criterion_{name}_parse_failure_rate"),
                Unit::Share,
                move |s| {
                    s.trial
                        .and_then(|t| t.criteria.get(name))
                        .map_or(Cell::Blank, |c| Cell::Value(c.parse_failure_rate))
                },
            )
            .title(format!("{name}: parse failures")),
        );
    }
    out
}

/// A remote judge's exact trials: the mass of the first token's distribution its server
/// left out, on average and at most, which bounds how far each verdict's distribution is
/// off (at temperatures up to 1), and the share of calls whose returned tokens lack a
/// verdict the task has.
fn coverage<'a>(p: &Present) -> Vec<Def<'a>> {
    type Pick = fn(&judgelab_core::results::coverage::Coverage) -> f64;
    let columns: [(&str, &str, &str, Pick); 3] = [
        (
            "uncovered_mean",
            "uncov",
            "mass the server left out (mean)",
            |c| c.mean,
        ),
        (
            "uncovered_max",
            "uncov_max",
            "mass the server left out (most)",
            |c| c.max,
        ),
        (
            "missing_label_rate",
            "no_label",
            "calls missing a verdict's token",
            |c| c.n_missing_label as f64 / c.n_calls as f64,
        ),
    ];
    columns
        .into_iter()
        .map(|(key, short, title, pick)| {
            Def::new(key, Unit::Share, move |s| {
                Cell::Value(s.trial.and_then(|t| t.coverage.as_ref()).map(pick))
            })
            .short(short)
            .title(title)
            .shown(p.covered && key == "uncovered_mean", p.covered, p.covered)
        })
        .collect()
}

/// Trials with an input budget: the share of items whose inputs it cut, and the tokens it
/// cut from an item on average.
fn inputs_cut<'a>(p: &Present) -> Vec<Def<'a>> {
    vec![
        Def::new("inputs_cut", Unit::Share, |s| {
            Cell::Value(s.trial.and_then(|t| t.inputs_cut).map(|c| c.share()))
        })
        .short("cut")
        .title("share of inputs cut")
        .shown(p.cut, p.cut, p.cut),
        Def::new("tokens_cut_per_item", Unit::Tokens, |s| {
            Cell::Value(
                s.trial
                    .and_then(|t| t.inputs_cut)
                    .map(|c| c.mean_tokens_cut),
            )
        })
        .short("cut_tok")
        .title("tokens cut / item")
        .shown(false, p.cut, p.cut),
    ]
}

/// What exact trials expect under each verdict's distribution.
fn expected<'a>(p: &Present) -> Vec<Def<'a>> {
    type Pick = fn(&judgelab_core::metrics::expected::Expected) -> Option<f64>;
    let mut columns: Vec<(&str, &str, &str, usize, Pick)> = vec![
        ("expected_accuracy", "E[acc]", "expected accuracy", 3, |e| {
            e.accuracy
        }),
        ("expected_kappa", "E[kappa]", "expected kappa", 3, |e| {
            e.kappa
        }),
        ("entropy_bits", "H_bits", "verdict entropy (bits)", 2, |e| {
            e.entropy_bits
        }),
    ];
    if matches!(p.task, Task::Single { .. }) {
        columns.push(("geval_spearman", "geval_rho", "G-Eval Spearman", 3, |e| {
            e.geval_spearman
        }));
    }
    columns
        .into_iter()
        .map(|(key, short, title, digits, pick)| {
            Def::new(key, Unit::Number, move |s| {
                Cell::Value(s.metrics.expected.as_ref().and_then(pick))
            })
            .short(short)
            .title(title)
            .digits(digits)
            .shown(p.exact, false, false)
        })
        .collect()
}

/// Each trial against the experiment's reference trial: its flip rate and the mean
/// divergence of its beliefs (exact trials), with intervals.
fn drift<'a>(p: &Present) -> Vec<Def<'a>> {
    fn against<'s>(s: &Subject<'s>) -> Option<&'s AgainstReference> {
        s.trial.and_then(|t| t.drift.as_ref())
    }
    vec![
        Def::new("reference_trial", Unit::Count, move |s| {
            against(s).map_or(Cell::Blank, |d| Cell::Count(Some(d.reference as u64)))
        })
        .short("ref")
        .title("reference trial")
        .shown(p.drift, p.drift, p.drift),
        Def::new("flip_rate", Unit::Share, move |s| {
            against(s).map_or(Cell::Blank, |d| Cell::Estimate(d.flip_rate))
        })
        .short("flips")
        .title("flips vs reference")
        .interval()
        .shown(p.drift, p.drift, p.drift),
        Def::new("kl_mean", Unit::Number, move |s| {
            against(s).map_or(Cell::Blank, |d| Cell::Estimate(d.kl_mean))
        })
        .short("KL")
        .title("mean KL vs reference (nats)")
        .digits(4)
        .interval()
        .shown(p.divergence, p.divergence, p.divergence),
        Def::new("js_mean", Unit::Number, move |s| {
            Cell::Value(against(s).and_then(|d| d.js_mean))
        })
        .title("mean Jensen–Shannon vs reference (nats)")
        .digits(4),
    ]
}

/// Each trial of a paraphrase group: the share of items whose verdict no rewording of
/// the template changes (the group's, on each of its trials).
fn wording<'a>(a: &'a Analysis<'a>, p: &Present) -> Def<'a> {
    let groups = &a.summary.robustness;
    Def::new("wording_stable", Unit::Share, move |s| {
        s.trial
            .and_then(|t| groups.iter().find(|g| g.trials.contains(&t.id)))
            .map_or(Cell::Blank, |g| Cell::Estimate(g.stable))
    })
    .short("stable")
    .title("items stable across paraphrases")
    .interval()
    .shown(p.wording, p.wording, p.wording)
}

/// Answer order, parse failures, tokens and money.
fn spend<'a>(a: &'a Analysis<'a>, p: &Present) -> Vec<Def<'a>> {
    let cost = a.cost;
    let usd = matches!(cost, Objective::Cost(pareto::Cost::Usd));
    vec![
        Def::new("position_consistency", Unit::Share, move |s| {
            Cell::Value(s.metrics.position.as_ref().and_then(|p| p.consistency))
        })
        .short("consistent")
        .title("consistent across orders")
        .digits(0)
        .shown(p.orders, false, false),
        Def::new("first_preferred", Unit::Share, move |s| {
            Cell::Value(s.metrics.position.as_ref().and_then(|p| p.first_preferred))
        })
        .title("first answer preferred")
        .digits(0),
        Def::new("parse_failure_rate", Unit::Share, |s| {
            Cell::Value(s.metrics.parse_failure_rate)
        })
        .short("parse_fail")
        .title("parse failures")
        .shown(true, true, true),
        Def::new("prompt_tokens_per_item", Unit::Tokens, |s| {
            Cell::Value(s.metrics.prompt_tokens_per_item)
        })
        .short("tok_in")
        .title("prompt tokens / item")
        .shown(true, false, false),
        Def::new("completion_tokens_per_item", Unit::Tokens, |s| {
            Cell::Value(s.metrics.completion_tokens_per_item)
        })
        .short("tok_out")
        .title("completion tokens / item")
        .digits(1)
        .shown(true, false, false),
        Def::new(
            "cost",
            if usd { Unit::Usd } else { Unit::Tokens },
            move |s| Cell::Value(cost.value(s.metrics)),
        )
        .title(if usd {
            "$ / 1,000 items"
        } else {
            "tokens / item"
        })
        .digits(if usd { 3 } else { 0 })
        .summary(),
        Def::new("usd_per_1k_items", Unit::Usd, |s| {
            Cell::Value(s.metrics.usd_per_1k_items)
        })
        .short("usd_per_1k")
        .title("$ / 1,000 items")
        .shown(p.priced, false, p.priced && !usd),
    ]
}

/// Per-request latency and time to first token, at the load in `conc`.
fn latency<'a>(a: &'a Analysis<'a>) -> Vec<Def<'a>> {
    let interval = |ci: Option<[f64; 2]>| ci.map(|[l, h]| (l, h));
    vec![
        Def::new("latency_concurrency", Unit::Count, |s| {
            Cell::Count(s.metrics.latency_concurrency.map(u64::from))
        })
        .short("conc")
        .title("requests in flight")
        .shown(true, false, false),
        Def::new("latency_p50_ms", Unit::Milliseconds, |s| {
            Cell::Value(s.metrics.latency_ms.p50)
        })
        .short("p50_ms")
        .title("p50 latency (ms)")
        .shown(true, false, false),
        Def::new("latency_p95_ms", Unit::Milliseconds, move |s| {
            let l = &s.metrics.latency_ms;
            Cell::Estimate(Estimate {
                value: l.p95,
                ci: interval(l.p95_ci),
            })
        })
        .short("p95_ms")
        .title(a.axis_title(a.latency))
        .interval()
        .shown(true, true, true),
        Def::new("latency_p99_ms", Unit::Milliseconds, |s| {
            Cell::Value(s.metrics.latency_ms.p99)
        })
        .short("p99_ms")
        .title("p99 latency (ms)"),
        Def::new("ttft_p50_ms", Unit::Milliseconds, |s| {
            Cell::Value(s.metrics.ttft_ms.p50)
        })
        .short("ttft_p50")
        .title("p50 time to first token (ms)")
        .shown(true, false, false),
        Def::new("ttft_p95_ms", Unit::Milliseconds, |s| {
            Cell::Value(s.metrics.ttft_ms.p95)
        })
        .short("ttft_p95")
        .title("p95 time to first token (ms)"),
        Def::new("ttft_p99_ms", Unit::Milliseconds, |s| {
            Cell::Value(s.metrics.ttft_ms.p99)
        })
        .short("ttft_p99")
        .title("p99 time to first token (ms)"),
        Def::new("latency_n", Unit::Count, |s| {
            Cell::Count(Some(s.metrics.latency_ms.n as u64))
        })
        .title("timed calls"),
    ]
}

/// What a local judge's model file costs beside what it does: its size (with llama.cpp's
/// memory map, what its weights take in memory) and how fast it prefills prompts. Shown
/// where the experiment sweeps quantisations; exported always.
fn footprint<'a>(a: &'a Analysis<'a>) -> Vec<Def<'a>> {
    let swept = a.varying.contains(&Axis::Quantization);
    vec![
        Def::new("model_mb", Unit::Number, |s| {
            Cell::Value(s.trial.and_then(|t| t.model_bytes).map(|b| b as f64 / 1e6))
        })
        .short("model_MB")
        .title("model file = weights in memory (MB)")
        .digits(1)
        .shown(swept, swept, swept),
        Def::new("prefill_tokens_per_s", Unit::Number, |s| {
            Cell::Value(s.metrics.prefill_tokens_per_s)
        })
        .short("prefill_tok/s")
        .title("prefill tokens / s (timed calls)")
        .digits(0)
        .shown(swept, swept, swept),
    ]
}

/// Each trial's standing on the quality–cost and quality–latency fronts, and on the front
/// of the objectives asked for (`show --front`).
fn fronts<'a>(a: &'a Analysis<'a>, front: &[Objective]) -> Vec<Def<'a>> {
    let mut out = vec![
        Def::new("front_quality_cost", Unit::Standing, |s| {
            Cell::Standing(s.front_cost)
        })
        .short("front_cost")
        .title("quality–cost front")
        .shown(false, true, true),
        Def::new("front_quality_latency", Unit::Standing, |s| {
            Cell::Standing(s.front_latency)
        })
        .short("front_latency")
        .title("quality–latency front")
        .shown(false, true, false),
    ];
    if !front.is_empty() {
        let metrics: Vec<&TrialMetrics> = a.summary.trials.iter().map(|t| &t.metrics).collect();
        let statuses = pareto::front(&metrics, front);
        let names: Vec<&str> = front.iter().map(|o| o.name()).collect();
        out.push(
            Def::new("front", Unit::Standing, move |s| {
                Cell::Standing(s.trial.map(|_| statuses[s.index]))
            })
            .title(format!("front of {}", names.join(", ")))
            .shown(true, false, false),
        );
    }
    out
}

/// Each row against the best trial, its score on the test split and why it judged it.
fn selection<'a>(a: &'a Analysis<'a>, p: &Present) -> Vec<Def<'a>> {
    let metric = p.metric;
    vec![
        Def::new(
            &format!("{}_minus_best", metric.name()),
            Unit::Difference,
            |s| {
                s.versus_best
                    .map_or(Cell::Blank, |c| Cell::Estimate(c.difference))
            },
        )
        .short("vs_best")
        .title("vs best")
        .shown(false, true, true),
        Def::new("mcnemar_p_vs_best", Unit::Number, |s| {
            s.versus_best
                .map_or(Cell::Blank, |c| Cell::Value(Some(c.mcnemar_p)))
        })
        .title("McNemar p")
        .shown(false, true, false),
        Def::new(
            &format!("test_{}", metric.name()),
            Unit::Estimate,
            move |s| {
                let test = s.split_scores.test.as_ref();
                Cell::Estimate(test.map(|t| t.quality.get(metric)).unwrap_or_default())
            },
        )
        .title(format!("test {}", metric.title(a.task)))
        .shown(p.tested, false, p.tested),
        Def::new("selection", Unit::Role, |s| match s.kind {
            RowKind::Trial => s
                .trial
                .and_then(TrialSummary::selection)
                .map_or(Cell::Value(None), Cell::Text),
            kind => Cell::Text(kind.name().to_string()),
        })
        .title("selection")
        .shown(p.selecting, false, p.selecting),
    ]
}

/// How far to trust each row's verdicts: calibration and selective judging.
fn trust<'a>(p: &Present) -> Vec<Def<'a>> {
    vec![
        Def::new("confidence_kind", Unit::Text, move |s| {
            s.calibration.map_or(Cell::Blank, |c| {
                Cell::Text(c.confidence_kind.name().to_string())
            })
        })
        .title("confidence"),
        Def::new("ece", Unit::Number, move |s| match s.kind {
            RowKind::Cascade => Cell::Blank,
            _ => Cell::Value(s.calibration.and_then(|c| c.ece)),
        })
        .title("ECE")
        .shown(p.calibrated, false, false),
        Def::new("brier", Unit::Number, move |s| {
            Cell::Value(s.calibration.and_then(|c| c.brier))
        })
        .title("Brier score"),
        Def::new("selective_threshold", Unit::Number, move |s| {
            Cell::Value(
                s.trial
                    .and_then(|t| t.selective.as_ref())
                    .and_then(|x| x.threshold),
            )
        }),
        Def::new("selective_coverage", Unit::Share, move |s| {
            Cell::Value(
                s.trial
                    .and_then(|t| t.selective.as_ref())
                    .and_then(|x| x.dev)
                    .map(|d| d.coverage),
            )
        }),
        Def::new("selective_agreement", Unit::Share, move |s| {
            Cell::Value(
                s.trial
                    .and_then(|t| t.selective.as_ref())
                    .and_then(|x| x.dev?.agreement),
            )
        }),
        Def::new("selective_test_coverage", Unit::Share, move |s| {
            Cell::Value(
                s.trial
                    .and_then(|t| t.selective.as_ref())
                    .and_then(|x| x.test)
                    .map(|d| d.coverage),
            )
        }),
        Def::new("selective_test_agreement", Unit::Share, move |s| {
            Cell::Value(
                s.trial
                    .and_then(|t| t.selective.as_ref())
                    .and_then(|x| x.test?.agreement),
            )
        }),
    ]
}

/// What a cascade or a panel is composed of.
fn composition<'a>(a: &'a Analysis<'a>) -> Vec<Def<'a>> {
    let cascade =
        |s: &Subject<'_>| (s.kind == RowKind::Cascade).then(|| &a.summary.cascades[s.index]);
    let panel = |s: &Subject<'_>| (s.kind == RowKind::Panel).then(|| &a.summary.panels[s.index]);
    vec![
        Def::new("cascade_cheap", Unit::Count, move |s| {
            cascade(s).map_or(Cell::Blank, |c| Cell::Count(Some(c.cheap as u64)))
        }),
        Def::new("cascade_strong", Unit::Count, move |s| {
            cascade(s).map_or(Cell::Blank, |c| Cell::Count(Some(c.strong as u64)))
        }),
        Def::new("cascade_threshold", Unit::Number, move |s| {
            cascade(s).map_or(Cell::Blank, |c| Cell::Value(Some(c.threshold)))
        }),
        Def::new("cascade_escalated", Unit::Share, move |s| {
            cascade(s).map_or(Cell::Blank, |c| Cell::Value(c.escalated))
        }),
        Def::new("panel", Unit::Text, move |s| {
            panel(s).map_or(Cell::Blank, |p| Cell::Text(p.name.clone()))
        }),
        Def::new("panel_rule", Unit::Text, move |s| {
            panel(s).map_or(Cell::Blank, |p| Cell::Text(p.rule.name().to_string()))
        }),
        Def::new("panel_members", Unit::Text, move |s| {
            panel(s).map_or(Cell::Blank, |p| {
                let members: Vec<String> = p.members.iter().map(i64::to_string).collect();
                Cell::Text(members.join(" "))
            })
        }),
        Def::new("panel_members_alpha", Unit::Number, move |s| {
            panel(s).map_or(Cell::Blank, |p| {
                Cell::Value(p.members_agreement.alpha.value)
            })
        }),
    ]
}
