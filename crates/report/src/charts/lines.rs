//! Line charts of a metric against a sweep parameter, and empirical CDFs of latencies.

use super::axes::{self, finite_extent, pad_range, FrameSpec, XAxis};
use super::colors::PALETTE;
use super::legend::{
    draw_error_bar, error_bar_color, reference_entries, Glyph, LegendEntry, Marker, MarkerShape,
};
use super::placement::Placer;
use super::rect::Rect;
use super::scene::Scene;
use super::{CdfChart, LineChart, LinePoint};

/// Colour, marker and dash of the `i`th series; past the palette, lines are dashed so that
/// series sharing a colour still differ.
fn series_style(i: usize, k: f64) -> (Marker, bool) {
    let marker = Marker {
        shape: MarkerShape::CYCLE[i % MarkerShape::CYCLE.len()],
        color: PALETTE[i % PALETTE.len()],
        filled: true,
        r: 4.5 * k,
    };
    (marker, i >= PALETTE.len())
}

/// A point in pixels: x, y, and the pixel rows of its interval's ends.
type Mark = (f64, f64, Option<(f64, f64)>);

fn interval(p: &LinePoint) -> Option<(f64, f64)> {
    let (a, b) = p.ci?;
    (a.is_finite() && b.is_finite()).then(|| (a.min(b), a.max(b)))
}

pub(crate) fn draw_lines(scene: &mut Scene, chart: &LineChart) {
    let k = scene.k;
    let series: Vec<(&str, Vec<&LinePoint>)> = chart
        .series
        .iter()
        .map(|s| {
            let mut pts: Vec<&LinePoint> = s
                .points
                .iter()
                .filter(|p| p.x.is_finite() && p.y.is_finite())
                .collect();
            pts.sort_by(|a, b| a.x.total_cmp(&b.x));
            (s.name.as_str(), pts)
        })
        .filter(|(_, pts)| !pts.is_empty())
        .collect();
    let all = || series.iter().flat_map(|(_, pts)| pts.iter().copied());
    let Some(x_extent) = finite_extent(all().map(|p| p.x)) else {
        return axes::draw_no_data(scene, &chart.title);
    };
    let y_extent = finite_extent(
        all()
            .flat_map(|p| {
                let (lo, hi) = interval(p).unwrap_or((p.y, p.y));
                [p.y, lo, hi]
            })
            .chain(chart.baselines.iter().map(|b| b.value)),
    )
    .unwrap_or((0.0, 1.0));

    let categories = categories(chart, x_extent);
    let x_axis = match &categories {
        Some(names) => XAxis::Categorical(names),
        None => {
            let (lo, hi) = pad_range(x_extent, 0.05);
            XAxis::Numeric(lo, hi)
        }
    };

    let any_ci = all().any(|p| interval(p).is_some());
    let legend = legend(chart, &series, any_ci, k);

    let frame = axes::draw_frame(
        scene,
        FrameSpec {
            title: &chart.title,
            x_label: &chart.x_label,
            y_label: &chart.y_label,
            x: x_axis,
            y: pad_range(y_extent, 0.08),
            legend,
        },
    );

    // Series are nudged apart along x so that error bars at the same x stay separate; the nudge
    // is a fixed number of pixels, at most a fifth of the narrowest gap between x values.
    let mut xs: Vec<f64> = all().map(|p| frame.px(p.x)).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup_by(|a, b| (*a - *b).abs() < 0.5);
    let min_gap = xs
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    let n = series.len() as f64;
    let step = if any_ci && n > 1.0 {
        (7.0 * k).min(0.4 * min_gap / (n - 1.0))
    } else {
        0.0
    };

    let mut placer = Placer::new(frame.plot.inflate(-3.0 * k));
    let mut marks: Vec<(Marker, bool, Vec<Mark>, Vec<usize>)> = Vec::new();
    for (i, (_, pts)) in series.iter().enumerate() {
        // On a categorical axis a line joins neighbouring categories only: a category
        // without a value breaks it.
        let breaks: Vec<usize> = (1..pts.len())
            .filter(|&j| categories.is_some() && pts[j].x - pts[j - 1].x > 1.5)
            .collect();
        let (marker, dashed) = series_style(i, k);
        let offset = (i as f64 - (n - 1.0) / 2.0) * step;
        let pixels: Vec<Mark> = pts
            .iter()
            .map(|p| {
                let ci = interval(p).map(|(lo, hi)| (frame.py(lo), frame.py(hi)));
                (frame.px(p.x) + offset, frame.py(p.y), ci)
            })
            .collect();
        for &(x, y, ci) in &pixels {
            placer.add_hard(marker.bounds((x, y)));
            if let Some((lo, hi)) = ci {
                placer.add_hard(Rect::new(x - 3.0 * k, hi, x + 3.0 * k, lo));
            }
        }
        marks.push((marker, dashed, pixels, breaks));
    }
    axes::draw_references(scene, &frame, &chart.baselines, &mut placer);
    draw_marks(scene, &marks);
}

/// The series' entries in the legend, then intervals and baselines.
fn legend(
    chart: &LineChart,
    series: &[(&str, Vec<&LinePoint>)],
    any_ci: bool,
    k: f64,
) -> Vec<LegendEntry> {
    let mut legend: Vec<LegendEntry> = series
        .iter()
        .enumerate()
        .map(|(i, (name, _))| {
            let (marker, dashed) = series_style(i, k);
            LegendEntry::new(
                Glyph::Line {
                    color: marker.color,
                    width: 2.0 * k,
                    dashed,
                    marker: Some(marker),
                },
                *name,
            )
        })
        .collect();
    let any_baseline = chart.baselines.iter().any(|b| b.value.is_finite());
    legend.extend(reference_entries(
        any_ci,
        any_baseline.then_some(chart.reference_kind.as_str()),
        k,
    ));

    legend
}

/// A categorical axis has a slot per tick label, and as many more as points reach past
/// them; none for a numeric axis.
fn categories(chart: &LineChart, x_extent: (f64, f64)) -> Option<Vec<String>> {
    chart.x_ticks.as_ref().map(|names| {
        let n = names.len().max(
            (x_extent.1.round().max(0.0) as usize)
                .saturating_add(1)
                .min(1000),
        );
        (0..n)
            .map(|i| names.get(i).cloned().unwrap_or_default())
            .collect()
    })
}

/// Each series' line, then the error bars, then the markers on top.
/// Each series' line (in pieces, where `breaks` says a piece starts), its error bars, then
/// its markers on top.
fn draw_marks(scene: &mut Scene, marks: &[(Marker, bool, Vec<Mark>, Vec<usize>)]) {
    let k = scene.k;
    for (marker, dashed, pixels, breaks) in marks {
        let starts = std::iter::once(0).chain(breaks.iter().copied());
        let ends = breaks.iter().copied().chain(std::iter::once(pixels.len()));
        for (start, end) in starts.zip(ends) {
            let line: Vec<(f64, f64)> =
                pixels[start..end].iter().map(|&(x, y, _)| (x, y)).collect();
            if *dashed {
                scene.dashed(&line, marker.color, 2.0 * k, (8.0 * k, 4.0 * k));
            } else {
                scene.path(line, marker.color, 2.0 * k);
            }
        }
    }
    for (marker, _, pixels, _) in marks {
        for &(x, _, ci) in pixels {
            if let Some((lo, hi)) = ci {
                draw_error_bar(scene, x, lo, hi, error_bar_color(marker.color), 3.0 * k);
            }
        }
    }
    for (marker, _, pixels, _) in marks {
        for &(x, y, _) in pixels {
            marker.draw(scene, (x, y));
        }
    }
}

pub(crate) fn draw_cdf(scene: &mut Scene, chart: &CdfChart) {
    let k = scene.k;
    let series: Vec<(&str, Vec<f64>)> = chart
        .series
        .iter()
        .map(|(name, values)| {
            let mut v: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
            v.sort_by(f64::total_cmp);
            (name.as_str(), v)
        })
        .filter(|(_, v)| !v.is_empty())
        .collect();
    let Some((min, max)) = finite_extent(series.iter().flat_map(|(_, v)| v.iter().copied())) else {
        return axes::draw_no_data(scene, &chart.title);
    };
    // Latencies read best from zero, unless they all sit far from it and zero would squash them.
    let (lo, hi) = pad_range((min, max), 0.04);
    let lo = if min >= 0.0 && min <= 0.5 * max {
        0.0
    } else {
        lo
    };

    let legend = series
        .iter()
        .enumerate()
        .map(|(i, (name, v))| {
            let (marker, dashed) = series_style(i, k);
            LegendEntry::new(
                Glyph::Line {
                    color: marker.color,
                    width: 2.0 * k,
                    dashed,
                    marker: None,
                },
                format!("{name} (n={})", v.len()),
            )
        })
        .collect();
    let frame = axes::draw_frame(
        scene,
        FrameSpec {
            title: &chart.title,
            x_label: &chart.x_label,
            y_label: "fraction of calls",
            x: XAxis::Numeric(lo, hi),
            y: (-0.02, 1.02),
            legend,
        },
    );
    for (i, (_, values)) in series.iter().enumerate() {
        let (marker, dashed) = series_style(i, k);
        let n = values.len() as f64;
        let mut pts = vec![(frame.px(lo), frame.py(0.0))];
        for (j, v) in values.iter().enumerate() {
            let x = frame.px(*v);
            pts.push((x, frame.py(j as f64 / n)));
            pts.push((x, frame.py((j + 1) as f64 / n)));
        }
        pts.push((frame.px(hi), frame.py(1.0)));
        // Equal values make zero-length segments; dropping them keeps the dashes even.
        pts.dedup_by(|a, b| (a.0 - b.0).abs() < 0.01 && (a.1 - b.1).abs() < 0.01);
        if dashed {
            scene.dashed(&pts, marker.color, 2.0 * k, (8.0 * k, 4.0 * k));
        } else {
            scene.path(pts, marker.color, 2.0 * k);
        }
    }
}
