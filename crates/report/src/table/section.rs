//! The tables a report section shows beside the results table — the kept trials' dev and
//! test scores, the trusted trials' calibration, latency per trial and under load — as
//! columns and named rows of typed cells
//! ([`Cell`]), built once here and written by each output as the results table's cells
//! are ([`Cell::text`]), so that no output formats a figure of its own.

use judgelab_core::metrics::drift::{Drift, Moved};
use judgelab_core::metrics::latency::Percentiles;
use judgelab_core::metrics::{Estimate, Quality};

use super::{Cell, Column, Outputs, Unit};
use crate::analysis::Analysis;

/// A section's table.
#[derive(Debug, Clone, PartialEq)]
pub struct SectionTable {
    /// The first column's header (its cells are the rows' names).
    pub subject: String,
    pub columns: Vec<Column>,
    pub rows: Vec<SectionRow>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SectionRow {
    /// `#3`.
    pub name: String,
    pub cells: Vec<Cell>,
}

/// A column of a section's table: shown wherever the table is.
pub(crate) fn column(key: &str, title: String, unit: Unit, digits: usize) -> Column {
    Column {
        key: key.into(),
        short: key.into(),
        title,
        unit,
        digits,
        interval: matches!(unit, Unit::Estimate | Unit::Number),
        outputs: Outputs {
            export: true,
            terminal: true,
            report: true,
            app: true,
        },
    }
}

impl SectionTable {
    /// The trials that judged the test split: each one's role, its dev and test scores by
    /// the report's metric, and the dev score's excess over the test score (the optimism
    /// of choosing it).
    pub fn confirmation(a: &Analysis<'_>) -> SectionTable {
        let q = a.quality_title();
        SectionTable {
            subject: "trial".into(),
            columns: vec![
                column("kept_as", "kept as".into(), Unit::Role, 0),
                column("dev", format!("dev {q}"), Unit::Estimate, 3),
                column("test", format!("test {q}"), Unit::Estimate, 3),
                column("gap", "dev − test".into(), Unit::Difference, 3),
            ],
            rows: a
                .confirmed()
                .into_iter()
                .map(|c| SectionRow {
                    name: format!("#{}", c.trial.id),
                    cells: vec![
                        Cell::Text(c.role.to_string()),
                        Cell::Estimate(c.dev),
                        Cell::Estimate(c.test),
                        Cell::Estimate(Estimate {
                            value: c.gap,
                            ci: None,
                        }),
                    ],
                })
                .collect(),
        }
    }

    /// The trusted trials ([`Analysis::trusted`]): each one's confidence, its calibration
    /// (ECE and Brier with their intervals) and what it decides alone at the experiment's
    /// target, on the dev split and, where one judged it, the test split.
    pub fn trust(a: &Analysis<'_>) -> SectionTable {
        let share = |key: &str, title: &str| column(key, title.into(), Unit::Share, 0);
        // The test split's columns, where a trial judged it.
        let tested = a.trusted().into_iter().any(|i| {
            let t = &a.summary.trials[i];
            t.calibration.is_some() && t.selective.as_ref().is_some_and(|s| s.test.is_some())
        });
        let rows = a
            .trusted()
            .into_iter()
            .filter_map(|i| {
                let t = &a.summary.trials[i];
                let c = t.calibration.as_ref()?;
                let s = t.selective.as_ref();
                let (dev, test) = (s.and_then(|s| s.dev), s.and_then(|s| s.test));
                let with = |value: Option<f64>, ci: Option<[f64; 2]>| {
                    Cell::Estimate(Estimate {
                        value,
                        ci: ci.map(|[lo, hi]| (lo, hi)),
                    })
                };
                let mut cells = vec![
                    Cell::Text(c.confidence_kind.name().to_string()),
                    Cell::Count(Some(c.n as u64)),
                    with(c.ece, c.ece_ci),
                    with(c.brier, c.brier_ci),
                    Cell::Value(s.and_then(|s| s.threshold)),
                    Cell::Value(dev.map(|d| d.coverage)),
                    Cell::Value(dev.and_then(|d| d.agreement)),
                ];
                if tested {
                    cells.push(Cell::Value(test.map(|d| d.coverage)));
                    cells.push(Cell::Value(test.and_then(|d| d.agreement)));
                }
                Some(SectionRow {
                    name: format!("#{}", t.id),
                    cells,
                })
            })
            .collect();
        let mut columns = vec![
            column("confidence", "confidence".into(), Unit::Text, 0),
            column("verdicts", "verdicts".into(), Unit::Count, 0),
            column("ece", "ECE".into(), Unit::Number, 3),
            column("brier", "Brier".into(), Unit::Number, 3),
            column("threshold", "threshold".into(), Unit::Number, 3),
            share("coverage", "decides (dev)"),
            share("agreement", "agreement (dev)"),
        ];
        if tested {
            columns.push(share("test_coverage", "decides (test)"));
            columns.push(share("test_agreement", "agreement (test)"));
        }
        SectionTable {
            subject: "trial".into(),
            columns,
            rows,
        }
    }

    /// Each trial's latency per request at the load it was timed at, with the percentiles'
    /// intervals over calls, and its tokens per item.
    pub fn latency(a: &Analysis<'_>) -> SectionTable {
        let rows = a
            .summary
            .trials
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let m = &t.metrics;
                SectionRow {
                    name: a.labels[i].clone(),
                    cells: vec![
                        Cell::Count(m.latency_concurrency.map(u64::from)),
                        Cell::Count(Some(m.latency_ms.n as u64)),
                        percentile(&m.latency_ms, m.latency_ms.p50, m.latency_ms.p50_ci),
                        percentile(&m.latency_ms, m.latency_ms.p95, m.latency_ms.p95_ci),
                        percentile(&m.latency_ms, m.latency_ms.p99, m.latency_ms.p99_ci),
                        Cell::Value(m.ttft_ms.p50),
                        Cell::Value(m.ttft_ms.p95),
                        Cell::Value(m.prompt_tokens_per_item),
                        Cell::Value(m.completion_tokens_per_item),
                    ],
                }
            })
            .collect();
        let ms = |key: &str, title: &str| column(key, title.into(), Unit::Number, 0);
        SectionTable {
            subject: "trial".into(),
            columns: vec![
                column("concurrency", "requests in flight".into(), Unit::Count, 0),
                column("timed", "calls timed".into(), Unit::Count, 0),
                ms("p50", "p50 (ms)"),
                ms("p95", "p95 (ms)"),
                ms("p99", "p99 (ms)"),
                ms("ttft_p50", "TTFT p50"),
                ms("ttft_p95", "TTFT p95"),
                ms("prompt_tokens", "prompt tokens / item"),
                column(
                    "completion_tokens",
                    "completion tokens / item".into(),
                    Unit::Number,
                    1,
                ),
            ],
            rows,
        }
    }

    /// The latest load ramp, a row per level of requests in flight: throughput, the
    /// percentiles of time to first token, latency and the stream after it, errors and
    /// retries; none without a ramp.
    pub fn load(a: &Analysis<'_>) -> Option<SectionTable> {
        let r = a.summary.load_ramps.last()?;
        let rows = r
            .ramp
            .levels
            .iter()
            .map(|l| SectionRow {
                name: l.concurrency.to_string(),
                cells: vec![
                    Cell::Count(Some(l.requests as u64)),
                    Cell::Value(Some(l.throughput_vps)),
                    Cell::Value(Some(l.tokens_per_s)),
                    Cell::Value(l.ttft_ms.p50),
                    Cell::Value(l.ttft_ms.p95),
                    l.ttft_ms
                        .needs(l.ttft_ms.p99)
                        .map_or(Cell::Value(l.ttft_ms.p99), Cell::Text),
                    Cell::Value(l.latency_ms.p50),
                    Cell::Value(l.latency_ms.p95),
                    Cell::Value(l.stream_ms.p95),
                    Cell::Count(Some(l.errors as u64)),
                    Cell::Count(Some(l.retried as u64)),
                    Cell::Value(l.retried_latency_ms.p50),
                ],
            })
            .collect();
        let ms = |key: &str, title: &str| column(key, title.into(), Unit::Number, 0);
        Some(SectionTable {
            subject: "requests in flight".into(),
            columns: vec![
                column("requests", "requests".into(), Unit::Count, 0),
                column("throughput", "verdicts / s".into(), Unit::Number, 2),
                ms("tokens_per_s", "tokens / s"),
                ms("ttft_p50", "TTFT p50"),
                ms("ttft_p95", "TTFT p95"),
                ms("ttft_p99", "TTFT p99"),
                ms("latency_p50", "latency p50"),
                ms("latency_p95", "latency p95"),
                ms("stream_p95", "after first token p95"),
                column("errors", "errors".into(), Unit::Count, 0),
                column("retried", "retried".into(), Unit::Count, 0),
                ms("retried_p50", "retried latency p50"),
            ],
            rows,
        })
    }
}

impl SectionTable {
    /// The trials a race dropped: the round after which it dropped each, the dev items
    /// judged by then, the difference from the round's leader, its p-value and the Holm
    /// level that p fell below.
    pub fn dropped(a: &Analysis<'_>) -> SectionTable {
        let rows = a
            .summary
            .trials
            .iter()
            .filter_map(|t| {
                let d = t.dropped?;
                Some(SectionRow {
                    name: format!("#{}", t.id),
                    cells: vec![
                        Cell::Count(Some(u64::from(d.round))),
                        Cell::Count(Some(d.n_items as u64)),
                        Cell::Value(d.difference),
                        Cell::Value(d.p_value),
                        Cell::Value(d.threshold),
                    ],
                })
            })
            .collect();
        SectionTable {
            subject: "trial".into(),
            columns: vec![
                column("round", "dropped after round".into(), Unit::Count, 0),
                column("dev_items", "dev items".into(), Unit::Count, 0),
                column("difference", "difference".into(), Unit::Number, 3),
                column("p", "p".into(), Unit::Probability, 2),
                column("holm", "Holm level".into(), Unit::Probability, 2),
            ],
            rows,
        }
    }

    /// Position bias of the trials that showed answers in both orders: how often an
    /// item's two verdicts agree, how often a verdict chose the answer shown first, and
    /// the verdicts.
    pub fn position(a: &Analysis<'_>) -> SectionTable {
        let rows = a
            .summary
            .trials
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                let p = t.metrics.position.as_ref()?;
                Some(SectionRow {
                    name: a.labels[i].clone(),
                    cells: vec![
                        Cell::Value(p.consistency),
                        Cell::Value(p.first_preferred),
                        Cell::Count(Some(p.n_verdicts as u64)),
                    ],
                })
            })
            .collect();
        SectionTable {
            subject: "trial".into(),
            columns: vec![
                column("consistency", "consistency".into(), Unit::Share, 0),
                column("first_preferred", "first preferred".into(), Unit::Share, 0),
                column("verdicts", "verdicts".into(), Unit::Count, 0),
            ],
            rows,
        }
    }

    /// Every agreement metric of the task for every trial, with its interval: exact
    /// agreement where some trial has it, within half a point where ratings are not whole
    /// points.
    pub fn every_metric(a: &Analysis<'_>) -> SectionTable {
        let trials = &a.summary.trials;
        let qualities: Vec<Quality> = Quality::for_task(a.task)
            .iter()
            .copied()
            .filter(|&q| {
                !matches!(q, Quality::Accuracy | Quality::WithinHalfPoint)
                    || trials.iter().any(|t| t.metrics.value(q).is_some())
            })
            .collect();
        SectionTable {
            subject: "trial".into(),
            columns: qualities
                .iter()
                .map(|q| column(q.name(), q.title(a.task).into(), Unit::Estimate, 3))
                .collect(),
            rows: trials
                .iter()
                .enumerate()
                .map(|(i, t)| SectionRow {
                    name: a.labels[i].clone(),
                    cells: qualities
                        .iter()
                        .map(|&q| Cell::Estimate(t.metrics.estimate(q)))
                        .collect(),
                })
                .collect(),
        }
    }

    /// Trial `i`'s confusion matrix: a row per human label, a column per verdict (a parse
    /// failure its own), each cell the verdicts.
    pub fn confusion(a: &Analysis<'_>, i: usize) -> SectionTable {
        let c = &a.summary.trials[i].metrics.confusion;
        matrix(
            "human \\ judge",
            &c.columns,
            &c.labels,
            c.counts.iter().cloned(),
        )
    }
}

impl SectionTable {
    /// Two judges' flip matrix: a row per verdict of the first, a column per verdict of
    /// the second, each cell the calls; none without calls both made.
    pub fn flips(d: &Drift) -> Option<SectionTable> {
        (!d.categories.is_empty()).then(|| {
            let counts = d
                .matrix
                .iter()
                .map(|row| row.iter().map(|&n| n as u64).collect());
            matrix("", &d.categories, &d.categories, counts)
        })
    }

    /// The calls whose beliefs moved most between two judges, `first` and `second`: the
    /// human label, each judge's verdict, and how far the belief moved (KL, infinite where
    /// the second gives no weight to what the first believed; Jensen–Shannon); none where
    /// no belief was compared.
    pub fn moved(d: &Drift, first: &str, second: &str) -> Option<SectionTable> {
        let moved = d.divergence.as_ref().map_or(&[][..], |v| &v.moved);
        (!moved.is_empty()).then(|| SectionTable {
            subject: "item".into(),
            columns: vec![
                column("human", "human".into(), Unit::Text, 0),
                column("first", first.into(), Unit::Text, 0),
                column("second", second.into(), Unit::Text, 0),
                column("kl", "KL".into(), Unit::Number, 3),
                column("js", "JS".into(), Unit::Number, 3),
            ],
            rows: moved
                .iter()
                .map(|m| SectionRow {
                    name: format!("{}{}", m.item_id, slot(m)),
                    cells: vec![
                        Cell::Text(m.human.clone()),
                        Cell::Text(m.first.clone()),
                        Cell::Text(m.second.clone()),
                        m.kl.map_or(Cell::Text("∞".into()), |k| Cell::Value(Some(k))),
                        Cell::Value(Some(m.js)),
                    ],
                })
                .collect(),
        })
    }
}

/// A matrix of counts under `subject`: a row per name of `rows`, with its `counts`, a
/// column per name of `columns`.
fn matrix(
    subject: &str,
    columns: &[String],
    rows: &[String],
    counts: impl Iterator<Item = Vec<u64>>,
) -> SectionTable {
    SectionTable {
        subject: subject.into(),
        columns: columns
            .iter()
            .map(|name| column(name, name.clone(), Unit::Count, 0))
            .collect(),
        rows: rows
            .iter()
            .zip(counts)
            .map(|(name, counts)| SectionRow {
                name: name.clone(),
                cells: counts.into_iter().map(|n| Cell::Count(Some(n))).collect(),
            })
            .collect(),
    }
}

/// A latency percentile with its interval; where it is blank for want of calls, why.
fn percentile(p: &Percentiles, value: Option<f64>, ci: Option<[f64; 2]>) -> Cell {
    match p.needs(value) {
        Some(why) => Cell::Text(why),
        None => Cell::Estimate(Estimate {
            value,
            ci: ci.map(|[lo, hi]| (lo, hi)),
        }),
    }
}

/// A call's answer order and repeat, where they are not the first.
fn slot(m: &Moved) -> String {
    let mut out = String::new();
    if m.swapped {
        out += " (B first)";
    }
    if m.repeat > 0 {
        out += &format!(" repeat {}", m.repeat);
    }
    out
}
