//! Charts of a sweep (Pareto front, metric curves, latency CDFs, confusion matrices) rendered to SVG or PNG.
//!
//! Every chart is first laid out into a [`scene::Scene`], a display list in pixel coordinates, and
//! only then replayed onto a plotters backend. Layout decisions such as where a point label fits
//! are therefore made once, on measured text, and look the same in both formats.

mod axes;
mod colors;
mod confusion;
mod legend;
mod lines;
mod output;
mod pareto;
mod placement;
mod rect;
mod scene;
mod text;

pub use scene::Hotspot;

/// The file format of a rendered chart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Scalable vector graphics, as UTF-8 bytes.
    Svg,
    /// An encoded PNG file, RGB without alpha.
    Png,
}

/// One chart of a report.
#[derive(Debug, Clone, PartialEq)]
pub enum Chart {
    Pareto(ParetoChart),
    Lines(LineChart),
    Cdf(CdfChart),
    Confusion(ConfusionChart),
}

/// Quality against cost of every trial, with the Pareto front highlighted.
#[derive(Debug, Clone, PartialEq)]
pub struct ParetoChart {
    pub title: String,
    /// The cost axis with its unit, e.g. "prompt + completion tokens per item"; lower is better.
    pub x_label: String,
    /// The quality axis, e.g. "Cohen's kappa"; higher is better.
    pub y_label: String,
    pub points: Vec<ParetoPoint>,
    /// Horizontal dashed reference lines, labelled with their name, e.g. "majority class 0.52".
    pub baselines: Vec<Reference>,
}

/// One trial on a Pareto chart.
#[derive(Debug, Clone, PartialEq)]
pub struct ParetoPoint {
    /// E.g. "#3 temp=0.7 few_shot=1"; when space is short only the part before the first space is shown.
    pub label: String,
    /// Cost or latency, minimised.
    pub x: f64,
    /// Quality, maximised.
    pub y: f64,
    /// The 95% confidence interval of `y`, drawn as a vertical error bar.
    pub y_ci: Option<(f64, f64)>,
    pub status: FrontStatus,
}

/// Where a trial stands relative to the Pareto front.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrontStatus {
    /// On the front: no other trial is at least as cheap and at least as good.
    Front,
    /// Dominated by a point estimate, but statistically indistinguishable from the front.
    Indistinguishable,
    /// Clearly dominated.
    Dominated,
    /// Not a trial: a cascade or a panel, composed from trials' stored verdicts.
    Composed,
}

/// A named horizontal reference value, such as a baseline's score.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub name: String,
    pub value: f64,
}

/// A metric against one sweep parameter, one line per value of another parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct LineChart {
    pub title: String,
    pub x_label: String,
    pub y_label: String,
    /// Categorical x axis: points have x = 0, 1, 2, … and these are the tick labels.
    pub x_ticks: Option<Vec<String>>,
    pub series: Vec<Series>,
    pub baselines: Vec<Reference>,
    /// What the dashed reference lines are, for the legend: "baseline", "SLO", …
    pub reference_kind: String,
}

/// One line of a [`LineChart`].
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    pub name: String,
    pub points: Vec<LinePoint>,
}

/// One point of a [`Series`], with an optional 95% confidence interval of `y`.
#[derive(Debug, Clone, PartialEq)]
pub struct LinePoint {
    pub x: f64,
    pub y: f64,
    pub ci: Option<(f64, f64)>,
}

/// Empirical cumulative distribution of each series' values, e.g. latencies in milliseconds.
///
/// The y axis is the fraction of calls. The legend wraps onto as many rows as it needs and
/// shrinks its font past about a dozen series, so any number of series fits, but beyond ten the
/// colours repeat (with dashes) and the chart stops being easy to read.
#[derive(Debug, Clone, PartialEq)]
pub struct CdfChart {
    pub title: String,
    /// The value axis with its unit, e.g. "latency per call (ms)".
    pub x_label: String,
    /// Name and values of each series; NaN and infinite values are skipped.
    pub series: Vec<(String, Vec<f64>)>,
}

/// Human labels against judge verdicts.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfusionChart {
    pub title: String,
    /// Human labels, one per row (y axis, "human label").
    pub rows: Vec<String>,
    /// Judge verdicts, one per column (x axis, "judge verdict"); the last is usually "parse failure".
    pub cols: Vec<String>,
    /// `rows.len()` rows of `cols.len()` counts each.
    pub counts: Vec<Vec<u64>>,
}

/// Why a chart could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum ChartError {
    #[error("chart size {width}x{height} is out of range: each side must be {min}..={max} pixels")]
    InvalidSize {
        width: u32,
        height: u32,
        min: u32,
        max: u32,
    },
    #[error("invalid chart data: {0}")]
    InvalidData(String),
    #[error("embedded font could not be loaded")]
    Font,
    #[error("drawing failed: {0}")]
    Backend(String),
    #[error("png encoding failed: {0}")]
    PngEncode(String),
}

/// The smallest side of a chart that still leaves room for its text.
pub const MIN_SIDE: u32 = 200;
/// The largest side of a chart; beyond it the raster buffer would take gigabytes.
pub const MAX_SIDE: u32 = 8192;

/// Renders a chart; SVG as UTF-8 bytes, PNG as an encoded PNG file of exactly `width`×`height`.
pub fn render(
    chart: &Chart,
    format: Format,
    width: u32,
    height: u32,
) -> Result<Vec<u8>, ChartError> {
    let scene = layout(chart, width, height)?;
    match format {
        Format::Svg => output::to_svg(&scene).map(String::into_bytes),
        Format::Png => output::to_png(&scene),
    }
}

/// Renders a chart as an SVG document.
pub fn svg(chart: &Chart, width: u32, height: u32) -> Result<String, ChartError> {
    output::to_svg(&layout(chart, width, height)?)
}

/// Renders a chart as an SVG document, with where each of its data points was drawn (for
/// hover and click in the app, which shows the very SVG the reports export).
pub fn svg_with_hotspots(
    chart: &Chart,
    width: u32,
    height: u32,
) -> Result<(String, Vec<Hotspot>), ChartError> {
    let scene = layout(chart, width, height)?;
    Ok((output::to_svg(&scene)?, scene.hotspots))
}

/// Renders a chart as an encoded PNG file of exactly `width`×`height` pixels.
pub fn png(chart: &Chart, width: u32, height: u32) -> Result<Vec<u8>, ChartError> {
    output::to_png(&layout(chart, width, height)?)
}

fn layout(chart: &Chart, width: u32, height: u32) -> Result<scene::Scene, ChartError> {
    if !(MIN_SIDE..=MAX_SIDE).contains(&width) || !(MIN_SIDE..=MAX_SIDE).contains(&height) {
        return Err(ChartError::InvalidSize {
            width,
            height,
            min: MIN_SIDE,
            max: MAX_SIDE,
        });
    }
    text::ensure_font()?;
    let mut scene = scene::Scene::new(width, height);
    match chart {
        Chart::Pareto(c) => pareto::draw(&mut scene, c),
        Chart::Lines(c) => lines::draw_lines(&mut scene, c),
        Chart::Cdf(c) => lines::draw_cdf(&mut scene, c),
        Chart::Confusion(c) => confusion::draw(&mut scene, c)?,
    }
    Ok(scene)
}
