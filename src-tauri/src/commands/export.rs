//! Export: the report folder (HTML, Markdown, CSVs, every chart, the pairs of judges
//! compared), or one chart as SVG or PNG, at the sizes the CLI's report writes.

use std::path::{Path, PathBuf};

use judgelab_core::pareto::Objective;
use judgelab_report::analysis::Analysis;
use judgelab_report::{Chart, Format, ReportOptions};
use tauri::State;

use super::results::{compared, quality, summary};
use crate::dto::{ChartKind, ComparedPair};
use crate::error::{AppError, AppResult};
use crate::state::AppState;

#[tauri::command]
#[specta::specta]
pub async fn export_report(
    state: State<'_, AppState>,
    name: String,
    dir: String,
    metric: Option<String>,
    resamples: u32,
    compare: Vec<ComparedPair>,
) -> AppResult<Vec<String>> {
    let summary = summary(&state, &name, resamples.min(10_000)).await?;
    let quality = quality(&summary, metric.as_deref())?;
    let mut comparisons = Vec::new();
    for pair in &compare {
        // By the report's metric, whatever the second experiment's default.
        comparisons.push(compared(&state, pair, Some(quality.name()), resamples).await?);
    }
    let dir = PathBuf::from(dir);
    let options = ReportOptions {
        quality,
        comparisons,
        alignment: state.store.align_outcome(&name).await?,
    };
    let files = tauri::async_runtime::spawn_blocking(move || {
        judgelab_report::write_report(&summary, &dir, &options)
    })
    .await
    .map_err(|e| AppError::internal(e.to_string()))??;
    Ok(files.iter().map(|p| p.display().to_string()).collect())
}

/// A trial's judge card, written as `judge.json` and `judge.md` into `dir`: their paths.
#[tauri::command]
#[specta::specta]
pub async fn export_judge(
    state: State<'_, AppState>,
    name: String,
    trial: i64,
    dir: String,
) -> AppResult<Vec<String>> {
    let card = judgelab_engine::export_judge(&state.store, &name, trial).await?;
    let dir = PathBuf::from(dir);
    let files = judgelab_report::card::write(&card, &dir).map_err(|e| {
        AppError::internal(format!("cannot write the card into {}: {e}", dir.display()))
    })?;
    Ok(files.iter().map(|p| p.display().to_string()).collect())
}

#[tauri::command]
#[specta::specta]
pub async fn export_chart(
    state: State<'_, AppState>,
    name: String,
    chart: ChartKind,
    path: String,
    metric: Option<String>,
    resamples: u32,
) -> AppResult<String> {
    let summary = summary(&state, &name, resamples.min(10_000)).await?;
    let q = quality(&summary, metric.as_deref())?;
    let path = PathBuf::from(path);
    let format = match path.extension().and_then(|x| x.to_str()) {
        Some(x) if x.eq_ignore_ascii_case("svg") => Format::Svg,
        Some(x) if x.eq_ignore_ascii_case("png") => Format::Png,
        _ => {
            return Err(AppError::invalid(format!(
                "{}: a chart is saved as .svg or .png",
                path.display()
            )))
        }
    };
    let a = Analysis::new(&summary, q);
    let drawn = match chart {
        ChartKind::ParetoCost => Chart::Pareto(a.pareto_chart(a.cost)),
        ChartKind::ParetoLatency => {
            Chart::Pareto(a.pareto_chart(Objective::Cost(judgelab_core::pareto::Cost::LatencyP95)))
        }
        ChartKind::Parameter => match a.parameter_chart() {
            Some((_, c)) => Chart::Lines(c),
            None => return Err(AppError::invalid("no parameter varies in this experiment")),
        },
        ChartKind::LatencyCdf => Chart::Cdf(a.latency_chart()),
    };
    let (w, h) = match format {
        Format::Svg => judgelab_report::SVG_SIZE,
        Format::Png => judgelab_report::PNG_SIZE,
    };
    let bytes = judgelab_report::render(&drawn, format, w, h)?;
    write(&path, &bytes)?;
    Ok(path.display().to_string())
}

fn write(path: &Path, bytes: &[u8]) -> AppResult<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| AppError::internal(format!("cannot create {}: {e}", dir.display())))?;
    }
    std::fs::write(path, bytes)
        .map_err(|e| AppError::internal(format!("cannot write {}: {e}", path.display())))
}
