//! The tables a report section shows beside the results table — the kept trials' dev and
//! test scores, the trusted trials' calibration — as columns and named rows of typed cells
//! ([`Cell`]), built once here and written by each output as the results table's cells
//! are ([`Cell::text`]), so that no output formats a figure of its own.

use judgelab_core::metrics::Estimate;

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
fn column(key: &str, title: String, unit: Unit, digits: usize) -> Column {
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
    /// target, on the dev split and, where it judged one, the test split.
    pub fn trust(a: &Analysis<'_>) -> SectionTable {
        let share = |key: &str, title: &str| column(key, title.into(), Unit::Share, 0);
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
                Some(SectionRow {
                    name: format!("#{}", t.id),
                    cells: vec![
                        Cell::Text(c.confidence_kind.name().to_string()),
                        Cell::Count(Some(c.n as u64)),
                        with(c.ece, c.ece_ci),
                        with(c.brier, c.brier_ci),
                        Cell::Value(s.and_then(|s| s.threshold)),
                        Cell::Value(dev.map(|d| d.coverage)),
                        Cell::Value(dev.and_then(|d| d.agreement)),
                        Cell::Value(test.map(|d| d.coverage)),
                        Cell::Value(test.and_then(|d| d.agreement)),
                    ],
                })
            })
            .collect();
        SectionTable {
            subject: "trial".into(),
            columns: vec![
                column("confidence", "confidence".into(), Unit::Text, 0),
                column("verdicts", "verdicts".into(), Unit::Count, 0),
                column("ece", "ECE".into(), Unit::Number, 3),
                column("brier", "Brier".into(), Unit::Number, 3),
                column("threshold", "threshold".into(), Unit::Number, 3),
                share("coverage", "decides (dev)"),
                share("agreement", "agreement (dev)"),
                share("test_coverage", "decides (test)"),
                share("test_agreement", "agreement (test)"),
            ],
            rows,
        }
    }
}
