//! The results table: one reading of an experiment's trials, cascades and panels that
//! every output renders. Its columns come from the axis registry (`core::sweep`), the
//! task's metrics (`Quality::for_task`) and the figures present ([`columns`]); its rows are
//! the trials, then the cascades, then the panels, each cell a typed value ([`Cell`]) whose
//! column says its unit ([`Unit`]). The CLI's table, `report.md`, `report.html`,
//! `trials.csv`, `show --json` and the app's results view are renderers of it: none of
//! them computes a figure, chooses a column or builds a row. A new column is one entry in
//! [`columns`].
//!
//! Which outputs show a column is part of the column ([`Outputs`]): every column is in the
//! exports (CSV, JSON); the terminal, the report and the app show the columns that say so
//! for this experiment (a Spearman column for ratings, an ECE column where a trial is
//! calibrated, the parameters that vary).

mod cell;
mod columns;
mod section;

use serde::ser::{SerializeMap, SerializeStruct};
use serde::{Serialize, Serializer};

use judgelab_core::pareto::Objective;

use crate::analysis::{baseline_title, cascade_label, panel_label, Analysis};

pub use cell::{Cell, Style};
pub(crate) use section::column;
pub use section::{SectionRow, SectionTable};

/// What a row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowKind {
    Trial,
    /// Composed from two trials' stored verdicts ([`judgelab_core::trust::cascade`]).
    Cascade,
    /// Composed from its members' stored verdicts ([`judgelab_core::panel`]).
    Panel,
    /// A rule that needs no judge (`core::metrics::baseline`): its agreement over the
    /// same items, nothing else.
    Baseline,
}

judgelab_core::names!(RowKind {
    Trial => "trial",
    Cascade => "cascade",
    Panel => "panel",
    Baseline => "baseline",
});

/// What a column's values are, and so how each output writes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    Text,
    /// A trial's parameter, as its axis labels it.
    Param,
    Count,
    /// An agreement metric, with its interval.
    Estimate,
    /// A paired difference, signed, with its interval.
    Difference,
    /// A share of 0–1, shown as a percentage.
    Share,
    Tokens,
    Milliseconds,
    /// US dollars per 1,000 items.
    Usd,
    /// A plain number (an error, an entropy in bits, a threshold).
    Number,
    /// A p-value or a significance level, in scientific notation (`3.20e-7`).
    Probability,
    /// Where a row stands against a Pareto front.
    Standing,
    /// Why a trial judged the test split, or where a race dropped it.
    Role,
}

// Its name in `show --json` and the app: `estimate`, `share`, `milliseconds`, …
judgelab_core::names!(Unit {
    Text => "text",
    Param => "param",
    Count => "count",
    Estimate => "estimate",
    Difference => "difference",
    Share => "share",
    Tokens => "tokens",
    Milliseconds => "milliseconds",
    Usd => "usd",
    Number => "number",
    Probability => "probability",
    Standing => "standing",
    Role => "role",
});

/// A row's kind and a column's unit are written by their names, one home for each.
impl Serialize for RowKind {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl Serialize for Unit {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

/// Where a column is shown.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Outputs {
    /// `trials.csv` and `show --json`: every column but the report's own summaries.
    pub export: bool,
    /// The CLI's table (`run`, `show`).
    pub terminal: bool,
    /// `report.md` and `report.html`.
    pub report: bool,
    /// The app's results table.
    pub app: bool,
}

/// An output that renders the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Terminal,
    Report,
    App,
    Export,
}

/// One column: its name in exports, its headers, its unit and where it is shown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Column {
    /// Its name in `trials.csv` and `show --json`, e.g. `kappa`, `latency_p95_ms`.
    pub key: String,
    /// Its header in the terminal, e.g. `p95_ms`.
    pub short: String,
    /// Its header in the report and the app, e.g. `Cohen's kappa`.
    pub title: String,
    pub unit: Unit,
    /// Decimals shown.
    pub digits: usize,
    /// Its values carry an interval (exports write it as `…_ci_low`, `…_ci_high`).
    pub interval: bool,
    #[serde(skip)]
    pub outputs: Outputs,
}

impl Column {
    pub fn shown_in(&self, output: Output) -> bool {
        match output {
            Output::Terminal => self.outputs.terminal,
            Output::Report => self.outputs.report,
            Output::App => self.outputs.app,
            Output::Export => self.outputs.export,
        }
    }

    /// Its interval's export names: `kappa_ci_low`, `latency_p95_ci_low_ms`.
    pub fn interval_keys(&self) -> (String, String) {
        let (stem, unit) = match self.key.strip_suffix("_ms") {
            Some(stem) => (stem, "_ms"),
            None => (self.key.as_str(), ""),
        };
        (
            format!("{stem}_ci_low{unit}"),
            format!("{stem}_ci_high{unit}"),
        )
    }
}

/// One row: a trial, a cascade or a panel, with one cell per column.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub kind: RowKind,
    /// The trial's store id (none for a composed row).
    pub id: Option<i64>,
    /// `#3`, `#2→#5`, `vote3`.
    pub name: String,
    /// The name with what sets it apart: `#3 temp=0.7`, `#2→#5 cascade ≥0.93`, `vote3
    /// panel`.
    pub label: String,
    /// What a composed row is made of, in words; none for a trial.
    pub description: Option<String>,
    /// The best trial by the selection rule ([`judgelab_core::selection::pick`]).
    pub best: bool,
    /// The configuration the report recommends.
    pub recommended: bool,
    pub cells: Vec<Cell>,
}

/// The results table of an experiment.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultsTable {
    pub columns: Vec<Column>,
    pub rows: Vec<Row>,
    /// The baselines over the same items, in rows of their own: beside the table, never
    /// in it.
    pub baselines: Vec<Row>,
    /// How the trials rank, in words (the report's rule).
    pub ranking: String,
}

impl ResultsTable {
    /// The table of `a`'s experiment; `front` asks for a column of each trial's place on
    /// the Pareto front of those objectives (none: no such column).
    pub fn new(a: &Analysis<'_>, front: &[Objective]) -> ResultsTable {
        let columns = columns::all(a, front);
        let rows = columns::Subject::all(a)
            .iter()
            .map(|s| {
                let (name, label, description) = identity(a, s.kind, s.index);
                let trial = |at: Option<usize>| s.kind == RowKind::Trial && at == Some(s.index);
                Row {
                    kind: s.kind,
                    id: s.trial.map(|t| t.id),
                    name,
                    label,
                    description,
                    best: trial(a.best),
                    recommended: trial(a.recommended),
                    cells: columns.iter().map(|c| (c.value)(s)).collect(),
                }
            })
            .collect();
        let baselines = a
            .summary
            .baselines
            .values()
            .map(|b| Row {
                kind: RowKind::Baseline,
                id: None,
                name: "baseline".into(),
                label: baseline_title(b),
                description: Some(baseline_title(b)),
                best: false,
                recommended: false,
                cells: columns
                    .iter()
                    .map(|c| c.baseline.as_ref().map_or(Cell::Blank, |f| f(b)))
                    .collect(),
            })
            .collect();
        ResultsTable {
            columns: columns.into_iter().map(|c| c.column).collect(),
            rows,
            baselines,
            ranking: a.ranking(),
        }
    }

    /// The indexes of the columns `output` shows, in order.
    pub fn shown(&self, output: Output) -> Vec<usize> {
        (0..self.columns.len())
            .filter(|&c| self.columns[c].shown_in(output))
            .collect()
    }

    /// The index of the column named `key`.
    pub fn column(&self, key: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.key == key)
    }

    /// The exact-agreement column: accuracy, or within half a point where the ratings are
    /// not all whole points (then accuracy is not defined, and shown nowhere).
    pub fn exact_agreement(&self) -> Option<usize> {
        ["accuracy", "within_half_point"]
            .into_iter()
            .filter_map(|key| self.column(key))
            .find(|&c| self.columns[c].shown_in(Output::Report))
    }

    /// The rows of one kind.
    pub fn rows_of(&self, kind: RowKind) -> impl Iterator<Item = &Row> {
        self.rows.iter().filter(move |r| r.kind == kind)
    }
}

/// A row's name, its label and, for a composed row, what it is made of.
fn identity(a: &Analysis<'_>, kind: RowKind, i: usize) -> (String, String, Option<String>) {
    match kind {
        RowKind::Trial => (
            format!("#{}", a.summary.trials[i].id),
            a.labels[i].clone(),
            None,
        ),
        RowKind::Cascade => {
            let c = &a.summary.cascades[i];
            let escalated = c
                .escalated
                .map_or("—".into(), |e| format!("{:.0}% escalated", 100.0 * e));
            (
                format!("#{}→#{}", c.cheap, c.strong),
                cascade_label(c),
                Some(format!(
                    "cascade: #{} decides at confidence ≥ {:.3}, #{} the rest ({escalated})",
                    c.cheap, c.threshold, c.strong
                )),
            )
        }
        RowKind::Panel => {
            let p = &a.summary.panels[i];
            let members: Vec<String> = p.members.iter().map(|m| format!("#{m}")).collect();
            (
                p.name.clone(),
                panel_label(p),
                Some(format!(
                    "panel: {} of {}",
                    p.rule.name(),
                    members.join(", ")
                )),
            )
        }
        // Baselines are built apart, from the baselines themselves.
        RowKind::Baseline => ("baseline".into(), String::new(), None),
    }
}

/// `show --json`'s `table`: the rule that ranks the rows, the exported columns, then each
/// row as an object of its cells by column key (an estimate as `{"value", "ci"}`, a missing figure as null).
impl Serialize for ResultsTable {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        struct Cells<'a>(&'a ResultsTable, &'a Row);
        impl Serialize for Cells<'_> {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let mut map = serializer.serialize_map(Some(self.0.columns.len() + 5))?;
                map.serialize_entry("kind", &self.1.kind)?;
                map.serialize_entry("name", &self.1.name)?;
                map.serialize_entry("label", &self.1.label)?;
                map.serialize_entry("best", &self.1.best)?;
                map.serialize_entry("recommended", &self.1.recommended)?;
                for c in self.0.shown(Output::Export) {
                    map.serialize_entry(&self.0.columns[c].key, &self.1.cells[c].json())?;
                }
                map.end()
            }
        }
        let rows: Vec<Cells<'_>> = self.rows.iter().map(|r| Cells(self, r)).collect();
        let mut s = serializer.serialize_struct("ResultsTable", 3)?;
        s.serialize_field("ranking", &self.ranking)?;
        let columns: Vec<&Column> = self
            .shown(Output::Export)
            .into_iter()
            .map(|c| &self.columns[c])
            .collect();
        s.serialize_field("columns", &columns)?;
        s.serialize_field("rows", &rows)?;
        s.end()
    }
}
