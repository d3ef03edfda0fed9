//! A results table's cell: a typed value, written by each output as its column's unit
//! says (a share as a percentage, a difference with its sign, an estimate with its
//! interval), so that no renderer formats a figure of its own.

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use judgelab_core::metrics::Estimate;
use judgelab_core::pareto::FrontStatus;

use super::{Column, Unit};

/// A cell's value. A missing figure (no verdicts, no price) is `None` inside its kind;
/// `Blank` is a cell that does not apply to its row (a cascade's parameters).
#[derive(Debug, Clone, PartialEq)]
pub enum Cell {
    Blank,
    Text(String),
    /// A trial's parameter: as exported (`text`) and as a label shows it (`label`, e.g. a
    /// model file by its stem).
    Param {
        text: String,
        label: String,
    },
    Count(Option<u64>),
    /// A figure with its interval (an agreement metric, a difference, a p95 latency).
    Estimate(Estimate),
    Value(Option<f64>),
    /// Where a trial stands on a front; a composed row has no standing (`None`).
    Standing(Option<FrontStatus>),
}

/// How an output writes figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// The CLI's table: intervals to two decimals.
    Terminal,
    /// Markdown and the app: intervals to three decimals.
    Report,
    /// HTML: the interval in small print on a second line.
    Html,
}

impl Cell {
    /// The text `style` shows for this cell in `column`: `—` for a missing figure.
    pub fn text(&self, column: &Column, style: Style) -> String {
        let digits = column.digits;
        match self {
            Cell::Blank => String::new(),
            Cell::Text(s) => s.clone(),
            Cell::Param { label, .. } => label.clone(),
            Cell::Count(n) => n.map_or("—".into(), |n| n.to_string()),
            Cell::Value(v) => v.map_or("—".into(), |v| number(column.unit, v, digits)),
            Cell::Standing(Some(s)) => s.name().to_string(),
            Cell::Standing(None) => "composed".into(),
            Cell::Estimate(e) => {
                let Some(v) = e.value else {
                    return "—".into();
                };
                let value = if column.unit == Unit::Difference {
                    format!("{v:+.digits$}")
                } else {
                    number(column.unit, v, digits)
                };
                // Latency intervals are the app's and the exports'; the tables show the
                // percentile alone.
                if column.unit == Unit::Milliseconds {
                    return value;
                }
                match (self.interval(column, style), style) {
                    (None, _) => value,
                    (Some(ci), Style::Html) => format!("{value}<br><small>{ci}</small>"),
                    (Some(ci), _) => format!("{value} {ci}"),
                }
            }
        }
    }

    /// An estimate's interval as `style` writes it, `[0.30, 0.52]` (a latency's to its
    /// column's decimals); none without one.
    pub fn interval(&self, column: &Column, style: Style) -> Option<String> {
        let Cell::Estimate(Estimate {
            value: Some(_),
            ci: Some((lo, hi)),
        }) = self
        else {
            return None;
        };
        let digits = match (column.unit, style) {
            (Unit::Estimate | Unit::Difference, Style::Report) => 3,
            (Unit::Estimate | Unit::Difference, _) => 2,
            _ => column.digits,
        };
        Some(if column.unit == Unit::Difference {
            format!("[{lo:+.digits$}, {hi:+.digits$}]")
        } else {
            format!(
                "[{}, {}]",
                number(column.unit, *lo, digits),
                number(column.unit, *hi, digits)
            )
        })
    }

    /// Its fields in `trials.csv`: one, or the value and its interval for a column with
    /// one; empty where missing.
    pub fn csv(&self, column: &Column) -> Vec<String> {
        let opt = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
        let mut out = match self {
            Cell::Blank => vec![String::new()],
            Cell::Text(s) | Cell::Param { text: s, .. } => vec![s.clone()],
            Cell::Count(n) => vec![n.map_or(String::new(), |n| n.to_string())],
            Cell::Value(v) => vec![opt(*v)],
            Cell::Standing(_) => vec![self.text(column, Style::Report)],
            Cell::Estimate(e) => vec![opt(e.value), opt(e.ci.map(|c| c.0)), opt(e.ci.map(|c| c.1))],
        };
        out.resize(if column.interval { 3 } else { 1 }, String::new());
        out
    }

    /// The value as a number, for sorting and charts: an estimate's point, a count.
    pub fn number(&self) -> Option<f64> {
        match self {
            Cell::Count(n) => n.map(|n| n as f64),
            Cell::Value(v) => *v,
            Cell::Estimate(e) => e.value,
            _ => None,
        }
    }

    /// The value as `show --json` writes it.
    pub fn json(&self) -> Json<'_> {
        Json(self)
    }
}

/// A figure in `unit` to `digits` decimals: a share as a percentage.
fn number(unit: Unit, v: f64, digits: usize) -> String {
    match unit {
        Unit::Share => format!("{:.digits$}%", v * 100.0),
        Unit::Probability => format!("{v:.digits$e}"),
        _ => format!("{v:.digits$}"),
    }
}

/// A cell in `show --json`: null where blank or missing, a number, a string, or an
/// estimate as `{"value", "ci"}`.
pub struct Json<'a>(&'a Cell);

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Cell::Blank => serializer.serialize_none(),
            Cell::Text(s) | Cell::Param { text: s, .. } => serializer.serialize_str(s),
            Cell::Count(n) => n.serialize(serializer),
            Cell::Value(v) => v.serialize(serializer),
            Cell::Standing(s) => serializer.serialize_str(s.map_or("composed", |s| s.name())),
            Cell::Estimate(e) => {
                let mut s = serializer.serialize_struct("Estimate", 2)?;
                s.serialize_field("value", &e.value)?;
                s.serialize_field("ci", &e.ci)?;
                s.end()
            }
        }
    }
}
