//! The frame of an x–y chart: title, padded data ranges, nice ticks, axes, grid and legend slot.

use plotters::style::RGBColor;

use super::colors::{INK, MUTED};
use super::legend::{self, LegendEntry};
use super::rect::Rect;
use super::scene::Scene;
use super::text::{fit_text, line_height, text_width, HAlign, Text, VAlign};

const AXIS: RGBColor = RGBColor(0x44, 0x44, 0x44);
const GRID: RGBColor = RGBColor(0xe5, 0xe5, 0xe5);

/// Font sizes and spacings at an 800×600 chart, in pixels; the layout multiplies them by `k`.
pub(crate) const TITLE_SIZE: f64 = 19.0;
pub(crate) const AXIS_TITLE_SIZE: f64 = 15.0;
pub(crate) const TICK_SIZE: f64 = 13.0;
pub(crate) const PAD: f64 = 14.0;

/// The smallest and largest finite value, or `None` when there is none.
pub(crate) fn finite_extent(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}

/// Widens `(lo, hi)` by `frac` of its span on each side; a zero span becomes a small window
/// around the value, so a single point or identical values still get a usable axis.
pub(crate) fn pad_range((lo, hi): (f64, f64), frac: f64) -> (f64, f64) {
    let span = hi - lo;
    if span > f64::EPSILON * lo.abs().max(hi.abs()).max(1.0) {
        (lo - span * frac, hi + span * frac)
    } else {
        let half = (lo.abs() * 0.1).max(0.05);
        (lo - half, hi + half)
    }
}

/// One axis: its value range and its labelled ticks.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Axis {
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<(f64, String)>,
}

/// Tick positions at 1, 2 or 5 times a power of ten, at most about `max_n` of them, labelled with
/// just enough decimals to tell them apart.
pub(crate) fn nice_ticks(lo: f64, hi: f64, max_n: usize) -> Vec<(f64, String)> {
    let span = hi - lo;
    if !span.is_finite() || span <= 0.0 {
        return vec![(lo, format_number(lo, 2))];
    }
    let raw = span / max_n.max(2) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw * 0.999)
        .unwrap_or(10.0 * mag);
    let decimals = (-step.log10().floor()).max(0.0) as usize;
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    (first..=last)
        .map(|i| {
            let v = i as f64 * step;
            (v, format_number(v, decimals))
        })
        .collect()
}

/// Formats a tick value without a negative zero.
pub(crate) fn format_number(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.starts_with('-') && s[1..].chars().all(|c| c == '0' || c == '.') {
        s[1..].to_string()
    } else {
        s
    }
}

/// What to put on the x axis.
pub(crate) enum XAxis<'a> {
    Numeric(f64, f64),
    /// Positions 0, 1, 2, … labelled with these names; the range is −0.5..n−0.5.
    Categorical(&'a [String]),
}

/// Everything around the plot area of an x–y chart.
pub(crate) struct FrameSpec<'a> {
    pub title: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub x: XAxis<'a>,
    pub y: (f64, f64),
    pub legend: Vec<LegendEntry>,
}

/// The plot area and the mapping from data to pixels.
#[derive(Debug, Clone)]
pub(crate) struct Frame {
    pub plot: Rect,
    pub x: Axis,
    pub y: Axis,
}

impl Frame {
    pub(crate) fn px(&self, x: f64) -> f64 {
        self.plot.x0 + (x - self.x.lo) / (self.x.hi - self.x.lo) * self.plot.width()
    }

    pub(crate) fn py(&self, y: f64) -> f64 {
        self.plot.y1 - (y - self.y.lo) / (self.y.hi - self.y.lo) * self.plot.height()
    }
}

/// Draws the title and returns the y where content below it may start.
pub(crate) fn draw_title(scene: &mut Scene, title: &str) -> f64 {
    let k = scene.k;
    let top = PAD * k;
    if title.trim().is_empty() {
        return top;
    }
    let (text, size) = fit_text(title, TITLE_SIZE * k, 13.0 * k, scene.w() - 2.0 * PAD * k);
    let bounds = scene
        .text(Text::new(text, scene.w() / 2.0, top, size, INK).align(HAlign::Center, VAlign::Top));
    bounds.y1 + 12.0 * k
}

/// Lays out and draws title, legend, axes, ticks and grid; data is drawn on top by the caller.
pub(crate) fn draw_frame(scene: &mut Scene, spec: FrameSpec<'_>) -> Frame {
    let k = scene.k;
    let (w, h) = (scene.w(), scene.h());
    let top = draw_title(scene, spec.title) + 4.0 * k;

    let legend_bottom = h - PAD * k;
    let legend_top = legend::draw_rows(scene, &spec.legend, PAD * k, w - PAD * k, legend_bottom);
    let below_axis_title = if spec.legend.is_empty() {
        legend_bottom
    } else {
        legend_top - 10.0 * k
    };

    let axis_title = AXIS_TITLE_SIZE * k;
    let tick_size = TICK_SIZE * k;
    let tick_len = 5.0 * k;
    let x_title_top = below_axis_title - line_height(axis_title);
    let plot_bottom =
        (x_title_top - 8.0 * k - line_height(tick_size) - 4.0 * k - tick_len).max(top + 20.0);

    // The y ticks depend only on the plot's height, and their widest label sets the left margin.
    let (y_lo, y_hi) = spec.y;
    let y_ticks = nice_ticks(
        y_lo,
        y_hi,
        ((plot_bottom - top) / (55.0 * k)).floor().max(2.0) as usize,
    );
    let widest_y = y_ticks
        .iter()
        .map(|(_, s)| text_width(s, tick_size))
        .fold(0.0, f64::max);
    let y_title_w = if spec.y_label.trim().is_empty() {
        0.0
    } else {
        line_height(axis_title) + 10.0 * k
    };
    let left = PAD * k + y_title_w + widest_y + 6.0 * k + tick_len;
    let right = (w - PAD * k - 14.0 * k).max(left + 20.0);
    let plot = Rect::new(left, top, right, plot_bottom);

    let x_axis = match spec.x {
        XAxis::Numeric(lo, hi) => numeric_x_axis(lo, hi, plot.width(), tick_size),
        XAxis::Categorical(names) => Axis {
            lo: -0.5,
            hi: names.len().max(1) as f64 - 0.5,
            ticks: names
                .iter()
                .enumerate()
                .map(|(i, n)| (i as f64, n.clone()))
                .collect(),
        },
    };
    let frame = Frame {
        plot,
        x: x_axis,
        y: Axis {
            lo: y_lo,
            hi: y_hi,
            ticks: y_ticks,
        },
    };

    draw_axes(scene, &frame, &spec.x, tick_len, tick_size);
    draw_axis_titles(scene, &spec, &frame.plot, x_title_top);
    frame
}

/// The grid, the axes, and their ticks with labels.
fn draw_axes(scene: &mut Scene, frame: &Frame, x_axis: &XAxis<'_>, tick_len: f64, tick_size: f64) {
    let k = scene.k;
    let plot = frame.plot;
    // Grid first, so that data and axes are drawn over it.
    for (v, _) in &frame.y.ticks {
        let y = frame.py(*v);
        scene.line((plot.x0, y), (plot.x1, y), GRID, 1.0 * k);
    }
    for (v, _) in &frame.x.ticks {
        let x = frame.px(*v);
        scene.line((x, plot.y0), (x, plot.y1), GRID, 1.0 * k);
    }
    scene.line((plot.x0, plot.y1), (plot.x1, plot.y1), AXIS, 1.2 * k);
    scene.line((plot.x0, plot.y0), (plot.x0, plot.y1), AXIS, 1.2 * k);

    for (v, label) in &frame.y.ticks {
        let y = frame.py(*v);
        scene.line((plot.x0 - tick_len, y), (plot.x0, y), AXIS, 1.2 * k);
        scene.text(
            Text::new(
                label.clone(),
                plot.x0 - tick_len - 4.0 * k,
                y,
                tick_size,
                INK,
            )
            .align(HAlign::Right, VAlign::Middle),
        );
    }
    let slot = frame.plot.width() / frame.x.ticks.len().max(1) as f64;
    for (v, label) in &frame.x.ticks {
        let x = frame.px(*v);
        scene.line((x, plot.y1), (x, plot.y1 + tick_len), AXIS, 1.2 * k);
        let (label, size) = match x_axis {
            // Category names can be long; they share the width of the axis equally.
            XAxis::Categorical(_) => fit_text(label, tick_size, 10.0 * k, slot - 6.0 * k),
            XAxis::Numeric(..) => (label.clone(), tick_size),
        };
        scene.text(
            Text::new(label, x, plot.y1 + tick_len + 4.0 * k, size, INK)
                .align(HAlign::Center, VAlign::Top),
        );
    }
}

/// The axes' titles: under the plot, and along its left side.
fn draw_axis_titles(scene: &mut Scene, spec: &FrameSpec<'_>, plot: &Rect, x_title_top: f64) {
    let k = scene.k;
    let w = scene.w();
    let axis_title = AXIS_TITLE_SIZE * k;
    if !spec.x_label.trim().is_empty() {
        let (text, size) = fit_text(spec.x_label, axis_title, 11.0 * k, w - 2.0 * PAD * k);
        // Centred under the plot, but never hanging off the image.
        let half = text_width(&text, size) / 2.0;
        let cx = ((plot.x0 + plot.x1) / 2.0)
            .min(w - PAD * k - half)
            .max(PAD * k + half);
        scene.text(Text::new(text, cx, x_title_top, size, INK).align(HAlign::Center, VAlign::Top));
    }
    if !spec.y_label.trim().is_empty() {
        let (text, size) = fit_text(spec.y_label, axis_title, 11.0 * k, plot.height());
        scene.text(
            Text::new(text, PAD * k, (plot.y0 + plot.y1) / 2.0, size, INK)
                .align(HAlign::Center, VAlign::Top)
                .vertical(),
        );
    }
}

/// Numeric ticks as dense as the labels allow without touching each other.
fn numeric_x_axis(lo: f64, hi: f64, plot_width: f64, tick_size: f64) -> Axis {
    let mut n = ((plot_width / (7.0 * tick_size)).floor() as usize).max(2);
    loop {
        let ticks = nice_ticks(lo, hi, n);
        let widest = ticks
            .iter()
            .map(|(_, s)| text_width(s, tick_size))
            .fold(0.0, f64::max);
        let spacing = match ticks.as_slice() {
            [a, b, ..] => plot_width * (b.0 - a.0) / (hi - lo),
            _ => f64::INFINITY,
        };
        if n <= 2 || spacing >= widest + 1.5 * tick_size {
            return Axis { lo, hi, ticks };
        }
        n -= 1;
    }
}

/// A "no data" chart: the title, an empty frame and a centred notice.
pub(crate) fn draw_no_data(scene: &mut Scene, title: &str) {
    let k = scene.k;
    let top = draw_title(scene, title);
    let area = Rect::new(PAD * k, top, scene.w() - PAD * k, scene.h() - PAD * k);
    scene.rect(area, None, Some((GRID, 1.5 * k)));
    scene.text(
        Text::new(
            "no data",
            (area.x0 + area.x1) / 2.0,
            (area.y0 + area.y1) / 2.0,
            20.0 * k,
            MUTED,
        )
        .align(HAlign::Center, VAlign::Middle),
    );
}

/// Draws each reference value as a dashed line across the plot with its name near the right
/// edge, above the line where there is room; lines and names become obstacles in `avoid`.
pub(crate) fn draw_references(
    scene: &mut Scene,
    frame: &Frame,
    references: &[super::Reference],
    avoid: &mut super::placement::Placer,
) {
    let k = scene.k;
    let size = 12.0 * k;
    let gap = 3.0 * k;
    for r in references.iter().filter(|r| r.value.is_finite()) {
        let y = frame.py(r.value);
        scene.dashed(
            &[(frame.plot.x0, y), (frame.plot.x1, y)],
            MUTED,
            1.4 * k,
            (7.0 * k, 4.0 * k),
        );
        avoid.add_soft(Rect::new(frame.plot.x0, y - k, frame.plot.x1, y + k));
    }
    for r in references
        .iter()
        .filter(|r| r.value.is_finite() && !r.name.trim().is_empty())
    {
        let y = frame.py(r.value);
        let (text, size) = fit_text(&r.name, size, 10.0 * k, frame.plot.width() * 0.6);
        let (xr, xl) = (frame.plot.x1 - 6.0 * k, frame.plot.x0 + 8.0 * k);
        let candidates = [
            Text::new(text.clone(), xr, y - gap, size, MUTED).align(HAlign::Right, VAlign::Bottom),
            Text::new(text.clone(), xr, y + gap, size, MUTED).align(HAlign::Right, VAlign::Top),
            Text::new(text.clone(), xl, y - gap, size, MUTED).align(HAlign::Left, VAlign::Bottom),
            Text::new(text.clone(), xl, y + gap, size, MUTED).align(HAlign::Left, VAlign::Top),
        ];
        let boxes: Vec<Rect> = candidates.iter().map(Text::bounds).collect();
        // A reference name must be shown, so if every spot is taken it goes on the first one.
        let chosen = avoid.place(&boxes).map(|(i, _)| i).unwrap_or(0);
        avoid.add_hard(boxes[chosen]);
        scene.rect(
            boxes[chosen].inflate(1.0 * k),
            Some(RGBColor(255, 255, 255)),
            None,
        );
        scene.text(candidates[chosen].clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_ticks_use_round_steps_and_enough_decimals() {
        let ticks: Vec<String> = nice_ticks(-0.13, 0.71, 6)
            .into_iter()
            .map(|t| t.1)
            .collect();
        assert_eq!(ticks, ["0.0", "0.2", "0.4", "0.6"]);
        let ticks: Vec<String> = nice_ticks(-0.23, 0.71, 6)
            .into_iter()
            .map(|t| t.1)
            .collect();
        assert_eq!(ticks, ["-0.2", "0.0", "0.2", "0.4", "0.6"]);
        let ticks: Vec<String> = nice_ticks(120.0, 930.0, 5)
            .into_iter()
            .map(|t| t.1)
            .collect();
        assert_eq!(ticks, ["200", "400", "600", "800"]);
    }

    #[test]
    fn padding_never_leaves_an_empty_range() {
        assert_eq!(pad_range((0.0, 0.0), 0.1), (-0.05, 0.05));
        let (lo, hi) = pad_range((500.0, 500.0), 0.1);
        assert!(lo < 500.0 && hi > 500.0);
        assert_eq!(pad_range((0.0, 1.0), 0.1), (-0.1, 1.1));
    }

    #[test]
    fn negative_zero_is_printed_as_zero() {
        assert_eq!(format_number(-0.0001, 2), "0.00");
        assert_eq!(format_number(-0.5, 1), "-0.5");
    }
}
