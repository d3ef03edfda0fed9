//! Reports of Judgelab runs: charts rendered to SVG or PNG without system fonts, and the
//! report folder (`report.html`, `report.md`, `trials.csv`, `verdicts.csv`, every chart)
//! that tells a researcher which judge configuration to pick and why; and two judges
//! compared in words ([`comparison`]).

pub mod alignment;
pub mod analysis;
pub mod card;
pub mod charts;
pub mod comparison;
mod escape;
mod export;
mod figures;
pub mod findings;
mod html;
mod markdown;
pub mod table;
pub mod tables;
pub mod terminal;

pub use charts::{
    png, render, svg, svg_with_hotspots, CdfChart, Chart, ChartError, ConfusionChart, Format,
    FrontStatus, Hotspot, LineChart, LinePoint, ParetoChart, ParetoPoint, Reference, Series,
    MAX_SIDE, MIN_SIDE,
};
pub use export::{write_report, ReportOptions, PNG_SIZE, SVG_SIZE};

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("{metric} does not rank the trials of {task} data (these do: {ranking})")]
    Metric {
        metric: &'static str,
        task: &'static str,
        ranking: String,
    },
    #[error("cannot draw a chart")]
    Chart(#[from] ChartError),
    #[error("cannot write CSV: {0}")]
    Csv(String),
    #[error("cannot write {path}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

impl ReportError {
    /// True when the user asked for something the experiment does not have.
    pub fn is_invalid_input(&self) -> bool {
        matches!(self, ReportError::Metric { .. })
    }
}

impl From<csv::Error> for ReportError {
    fn from(e: csv::Error) -> Self {
        ReportError::Csv(e.to_string())
    }
}
