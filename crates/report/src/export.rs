//! Writes a whole report into a folder: HTML, Markdown, CSVs, every chart as SVG and PNG,
//! and the experiment file that reproduces the run.

use std::path::{Path, PathBuf};

use judgelab_core::metrics::Quality;
use judgelab_core::results::ExperimentSummary;

use crate::analysis::Analysis;
use crate::charts::{self, Chart};
use crate::table::ResultsTable;
use crate::{html, markdown, tables, ReportError};

/// Where a report file's bytes go.
type Sink<'a> = dyn FnMut(&str, &[u8]) -> Result<(), ReportError> + 'a;

/// SVG charts are drawn at this size (they scale); PNGs at twice it, for print.
pub const SVG_SIZE: (u32, u32) = (800, 600);
pub const PNG_SIZE: (u32, u32) = (1600, 1200);

#[derive(Debug, Clone, Copy)]
pub struct ReportOptions {
    /// The quality metric of the fronts and the recommendation.
    pub quality: Quality,
}

impl Default for ReportOptions {
    fn default() -> Self {
        ReportOptions {
            quality: Quality::Kappa,
        }
    }
}

/// Writes the report of `summary` into `dir` (created if missing); returns the files written.
pub fn write_report(
    summary: &ExperimentSummary,
    dir: &Path,
    options: &ReportOptions,
) -> Result<Vec<PathBuf>, ReportError> {
    if !judgelab_core::metrics::Quality::for_task(summary.experiment.task_kind)
        .contains(&options.quality)
    {
        return Err(ReportError::Metric {
            metric: options.quality.name(),
            task: summary.experiment.task,
        });
    }
    std::fs::create_dir_all(dir).map_err(|source| ReportError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let a = Analysis::new(summary, options.quality);
    let table = ResultsTable::new(&a, &[]);
    let mut written = Vec::new();
    let mut write = |name: &str, bytes: &[u8]| -> Result<(), ReportError> {
        let path = dir.join(name);
        std::fs::write(&path, bytes).map_err(|source| ReportError::Io {
            path: path.display().to_string(),
            source,
        })?;
        written.push(path);
        Ok(())
    };
    // Each chart is written as SVG and PNG; the HTML embeds the SVG.
    let mut pngs: Vec<(String, String)> = Vec::new();
    let mut draw = |stem: &str,
                    caption: &str,
                    chart: Chart,
                    write: &mut Sink<'_>|
     -> Result<String, ReportError> {
        let svg = charts::svg(&chart, SVG_SIZE.0, SVG_SIZE.1)?;
        write(&format!("{stem}.svg"), svg.as_bytes())?;
        write(
            &format!("{stem}.png"),
            &charts::png(&chart, PNG_SIZE.0, PNG_SIZE.1)?,
        )?;
        pngs.push((format!("{stem}.png"), caption.to_string()));
        Ok(strip_prolog(svg))
    };
    let pareto_cost = draw(
        "pareto-quality-cost",
        "quality against cost, with the Pareto front",
        Chart::Pareto(a.pareto_chart(a.cost)),
        &mut write,
    )?;
    let pareto_latency = draw(
        "pareto-quality-latency",
        "quality against p95 latency, with the Pareto front",
        Chart::Pareto(a.pareto_chart(a.latency)),
        &mut write,
    )?;
    let parameter = match a.parameter_chart() {
        Some((param, chart)) => Some(draw(
            &format!("quality-vs-{}", param.key().replace('_', "-")),
            &format!("quality against {}", param.title()),
            Chart::Lines(chart),
            &mut write,
        )?),
        None => None,
    };
    let latency = draw(
        "latency-cdf",
        "latency per call, cumulative",
        Chart::Cdf(a.latency_chart()),
        &mut write,
    )?;
    let shown = a.recommended.or(a.best).unwrap_or(0);
    let confusion = match summary.trials.get(shown) {
        Some(t) => draw(
            &format!("confusion-trial-{}", t.id),
            "confusion matrix of the recommended trial",
            Chart::Confusion(a.confusion_chart(shown)),
            &mut write,
        )?,
        None => String::new(),
    };
    let load = match a.load_charts() {
        Some((latency, throughput)) => Some((
            draw(
                "load-latency",
                "TTFT and latency per request against requests in flight",
                Chart::Lines(latency),
                &mut write,
            )?,
            draw(
                "load-throughput",
                "throughput against requests in flight, and the knee",
                Chart::Lines(throughput),
                &mut write,
            )?,
        )),
        None => None,
    };
    let race = match a.race_chart() {
        Some(chart) => Some(draw(
            "race",
            "a race's survivors against its leader, round by round",
            Chart::Lines(chart),
            &mut write,
        )?),
        None => None,
    };
    let reliability = match a.reliability_chart() {
        Some(chart) => Some(draw(
            "reliability",
            "reliability diagram: share of right verdicts against their confidence",
            Chart::Lines(chart),
            &mut write,
        )?),
        None => None,
    };
    let coverage = match a.coverage_chart() {
        Some(chart) => Some(draw(
            "coverage-agreement",
            "selective judging: agreement of the decided verdicts against the share decided",
            Chart::Lines(chart),
            &mut write,
        )?),
        None => None,
    };
    let figures = html::Figures {
        pareto_cost,
        pareto_latency,
        parameter,
        latency,
        confusion,
        load,
        race,
        trust: reliability.zip(coverage),
    };
    write("report.html", html::render(&a, &table, &figures).as_bytes())?;
    write("report.md", markdown::render(&a, &table, &pngs).as_bytes())?;
    write("trials.csv", &tables::trials_csv(&table)?)?;
    write("verdicts.csv", &tables::verdicts_csv(&a)?)?;
    write("experiment.toml", summary.experiment.spec.as_bytes())?;
    Ok(written)
}

/// An SVG document without its XML declaration, to embed in HTML.
fn strip_prolog(svg: String) -> String {
    match svg.find("<svg") {
        Some(start) => svg[start..].to_string(),
        None => svg,
    }
}
