//! Writes a whole report into a folder: HTML, Markdown, CSVs, every chart as SVG and PNG,
//! and the experiment file that reproduces the run.

use std::path::{Path, PathBuf};

use judgelab_core::align::outcome::AlignOutcome;
use judgelab_core::metrics::Quality;
use judgelab_core::results::comparison::Comparison;
use judgelab_core::results::ExperimentSummary;

use crate::analysis::Analysis;
use crate::charts::{self, Chart};
use crate::findings::Findings;
use crate::table::ResultsTable;
use crate::{html, markdown, tables, ReportError};

/// SVG charts are drawn at this size (they scale); PNGs at twice it, for print.
pub const SVG_SIZE: (u32, u32) = (800, 600);
pub const PNG_SIZE: (u32, u32) = (1600, 1200);

#[derive(Debug, Clone)]
pub struct ReportOptions {
    /// The quality metric of the fronts and the recommendation.
    pub quality: Quality,
    /// Pairs of judges to compare, a section each (`report --compare`).
    pub comparisons: Vec<Comparison>,
    /// The search's outcome, where the experiment is an alignment (`judgelab align`): its
    /// "Alignment" section.
    pub alignment: Option<AlignOutcome>,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            quality: Quality::Kappa,
            comparisons: Vec::new(),
            alignment: None,
        }
    }
}

/// Writes the report of `summary` into `dir` (created if missing); returns the files written.
pub fn write_report(
    summary: &ExperimentSummary,
    dir: &Path,
    options: &ReportOptions,
) -> Result<Vec<PathBuf>, ReportError> {
    if !judgelab_core::metrics::Quality::ranking(summary.experiment.task_kind)
        .contains(&options.quality)
    {
        return Err(ReportError::Metric {
            metric: options.quality.name(),
            task: summary.experiment.task,
            ranking: judgelab_core::metrics::Quality::ranking(summary.experiment.task_kind)
                .iter()
                .map(|q| q.name())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let a = Analysis::new(summary, options.quality);
    let table = ResultsTable::new(&a, &[]);
    let findings = Findings::new(&a);
    let mut folder = Folder {
        dir,
        written: Vec::new(),
        pngs: Vec::new(),
    };
    let mut figures = figures(&a, &mut folder)?;
    figures.alignment = folder.lines(
        "alignment",
        "the alignment's best dev score by generation",
        options
            .alignment
            .as_ref()
            .and_then(|o| crate::alignment::chart(o, a.task)),
    )?;
    let html = html::render(&a, &table, &findings, &figures, options);
    let md = markdown::render(&a, &table, &findings, &folder.pngs, options);
    folder.write("report.html", html.as_bytes())?;
    folder.write("report.md", md.as_bytes())?;
    folder.write("trials.csv", &tables::trials_csv(&table)?)?;
    folder.write("verdicts.csv", &tables::verdicts_csv(&a)?)?;
    folder.write("experiment.toml", summary.experiment.spec.as_bytes())?;
    Ok(folder.written)
}

/// The report's folder as it is written: the files so far, and each chart's PNG with its
/// caption (for the Markdown).
struct Folder<'d> {
    dir: &'d Path,
    written: Vec<PathBuf>,
    pngs: Vec<(String, String)>,
}

impl Folder<'_> {
    fn write(&mut self, name: &str, bytes: &[u8]) -> Result<(), ReportError> {
        let path = self.dir.join(name);
        std::fs::write(&path, bytes).map_err(|source| ReportError::Io {
            path: path.display().to_string(),
            source,
        })?;
        self.written.push(path);
        Ok(())
    }

    /// Writes `chart` as `{stem}.svg` and `{stem}.png`; the SVG is what the HTML embeds.
    fn chart(&mut self, stem: &str, caption: &str, chart: Chart) -> Result<String, ReportError> {
        let svg = charts::svg(&chart, SVG_SIZE.0, SVG_SIZE.1)?;
        self.write(&format!("{stem}.svg"), svg.as_bytes())?;
        let png = charts::png(&chart, PNG_SIZE.0, PNG_SIZE.1)?;
        self.write(&format!("{stem}.png"), &png)?;
        self.pngs.push((format!("{stem}.png"), caption.to_string()));
        Ok(strip_prolog(svg))
    }

    /// [`Folder::chart`] of a line chart the experiment may not have.
    fn lines(
        &mut self,
        stem: &str,
        caption: &str,
        chart: Option<crate::LineChart>,
    ) -> Result<Option<String>, ReportError> {
        chart
            .map(|c| self.chart(stem, caption, Chart::Lines(c)))
            .transpose()
    }
}

/// Every chart of the report, written into `folder`.
fn figures(a: &Analysis<'_>, folder: &mut Folder<'_>) -> Result<html::Figures, ReportError> {
    let pareto_cost = folder.chart(
        "pareto-quality-cost",
        "quality against cost, with the Pareto front",
        Chart::Pareto(a.pareto_chart(a.cost)),
    )?;
    let pareto_latency = folder.chart(
        "pareto-quality-latency",
        "quality against p95 latency, with the Pareto front",
        Chart::Pareto(a.pareto_chart(a.latency)),
    )?;
    let parameter = match a.parameter_chart() {
        Some((param, chart)) => folder.lines(
            &format!("quality-vs-{}", param.key().replace('_', "-")),
            &format!("quality against {}", param.title()),
            Some(chart),
        )?,
        None => None,
    };
    let criteria = folder.lines(
        "criteria",
        "agreement on each criterion, per trial",
        a.criteria_chart(),
    )?;
    let drift = folder.lines(
        "drift",
        "agreement against the verdicts flipped from the reference trial",
        a.drift_chart(),
    )?;
    let latency = folder.chart(
        "latency-cdf",
        "latency per call, cumulative",
        Chart::Cdf(a.latency_chart()),
    )?;
    let shown = a.recommended.or(a.best).unwrap_or(0);
    let confusion = match a.summary.trials.get(shown) {
        Some(t) => folder.chart(
            &format!("confusion-trial-{}", t.id),
            "confusion matrix of the recommended trial",
            Chart::Confusion(a.confusion_chart(shown)),
        )?,
        None => String::new(),
    };
    let race = folder.lines(
        "race",
        "a race's survivors against its leader, round by round",
        a.race_chart(),
    )?;
    Ok(html::Figures {
        pareto_cost,
        pareto_latency,
        parameter,
        criteria,
        drift,
        latency,
        confusion,
        load: load_figures(a, folder)?,
        race,
        trust: trust_figures(a, folder)?,
        alignment: None,
    })
}

/// A load ramp's charts: latency, and throughput with the knee.
fn load_figures(
    a: &Analysis<'_>,
    folder: &mut Folder<'_>,
) -> Result<Option<(String, String)>, ReportError> {
    let (load_latency, load_throughput) = a.load_charts().unzip();
    let load_latency = folder.lines(
        "load-latency",
        "TTFT and latency per request against requests in flight",
        load_latency,
    )?;
    let load_throughput = folder.lines(
        "load-throughput",
        "throughput against requests in flight, and the knee",
        load_throughput,
    )?;
    Ok(load_latency.zip(load_throughput))
}

/// The trust charts: the reliability diagram, and selective judging's coverage.
fn trust_figures(
    a: &Analysis<'_>,
    folder: &mut Folder<'_>,
) -> Result<Option<(String, String)>, ReportError> {
    let reliability = folder.lines(
        "reliability",
        "reliability diagram: share of right verdicts against their confidence",
        a.reliability_chart(),
    )?;
    let coverage = folder.lines(
        "coverage-agreement",
        "selective judging: agreement of the decided verdicts against the share decided",
        a.coverage_chart(),
    )?;
    Ok(reliability.zip(coverage))
}

/// An SVG document without its XML declaration, to embed in HTML.
fn strip_prolog(svg: String) -> String {
    match svg.find("<svg") {
        Some(start) => svg[start..].to_string(),
        None => svg,
    }
}
