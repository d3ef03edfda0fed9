//! The Pareto chart: quality against cost of every trial, the front as a staircase, labelled points.

use plotters::style::RGBColor;

use super::axes::{self, finite_extent, pad_range, Frame, FrameSpec, XAxis};
use super::colors::{INK, MUTED, WHITE};
use super::legend::{
    draw_error_bar, error_bar_color, reference_entries, Glyph, LegendEntry, Marker, MarkerShape,
};
use super::placement::{short_label, Anchor, Fit, Placer, PointLabels, Spot};
use super::rect::Rect;
use super::scene::{Hotspot, Scene};
use super::text::fit_text;
use super::{FrontStatus, ParetoChart, ParetoPoint};

const FRONT: RGBColor = RGBColor(0x00, 0x72, 0xB2);
const CLOSE: RGBColor = RGBColor(0xE6, 0x9F, 0x00);
const DOMINATED: RGBColor = RGBColor(0x9a, 0x9a, 0x9a);
const COMPOSED: RGBColor = RGBColor(0xCC, 0x79, 0xA7);
const LEADER: RGBColor = RGBColor(0x8a, 0x8a, 0x8a);

fn marker(status: FrontStatus, k: f64) -> Marker {
    match status {
        FrontStatus::Front => Marker {
            shape: MarkerShape::Circle,
            color: FRONT,
            filled: true,
            r: 5.5 * k,
        },
        FrontStatus::Indistinguishable => Marker {
            shape: MarkerShape::Diamond,
            color: CLOSE,
            filled: true,
            r: 5.0 * k,
        },
        FrontStatus::Dominated => Marker {
            shape: MarkerShape::Circle,
            color: DOMINATED,
            filled: false,
            r: 4.5 * k,
        },
        FrontStatus::Composed => Marker {
            shape: MarkerShape::Square,
            color: COMPOSED,
            filled: true,
            r: 4.5 * k,
        },
    }
}

/// The 95% interval of a point, ordered, or `None` unless both ends are finite.
fn interval(p: &ParetoPoint) -> Option<(f64, f64)> {
    let (a, b) = p.y_ci?;
    (a.is_finite() && b.is_finite()).then(|| (a.min(b), a.max(b)))
}

pub(crate) fn draw(scene: &mut Scene, chart: &ParetoChart) {
    let k = scene.k;
    let (indexes, points): (Vec<usize>, Vec<&ParetoPoint>) = chart
        .points
        .iter()
        .enumerate()
        .filter(|(_, p)| p.x.is_finite() && p.y.is_finite())
        .unzip();
    let Some(x_extent) = finite_extent(points.iter().map(|p| p.x)) else {
        return axes::draw_no_data(scene, &chart.title);
    };
    let y_values = points
        .iter()
        .flat_map(|p| {
            let (lo, hi) = interval(p).unwrap_or((p.y, p.y));
            [p.y, lo, hi]
        })
        .chain(chart.baselines.iter().map(|b| b.value));
    let y_extent = finite_extent(y_values).unwrap_or((0.0, 1.0));
    let mut front: Vec<&ParetoPoint> = points
        .iter()
        .copied()
        .filter(|p| p.status == FrontStatus::Front)
        .collect();
    front.sort_by(|a, b| a.x.total_cmp(&b.x));

    let legend = legend(chart, &points, !front.is_empty(), k);

    let frame = axes::draw_frame(
        scene,
        FrameSpec {
            title: &chart.title,
            x_label: &chart.x_label,
            y_label: &chart.y_label,
            x: {
                let (lo, hi) = pad_range(x_extent, 0.07);
                XAxis::Numeric(lo, hi)
            },
            y: pad_range(y_extent, 0.08),
            legend,
        },
    );
    let mut placer = Placer::new(frame.plot.inflate(-3.0 * k));
    let pixel = |p: &ParetoPoint| (frame.px(p.x), frame.py(p.y));

    // Markers and error bars are known before any text goes down, so that no label covers them.
    let cap = 3.5 * k;
    let anchors = anchors(&points, &frame, k, cap);
    for a in &anchors {
        for r in &a.own {
            placer.add_hard(*r);
        }
    }

    axes::draw_references(scene, &frame, &chart.baselines, &mut placer);

    // The staircase: from each front point right to the next one's cost, then up to its quality.
    let mut stairs: Vec<(f64, f64)> = Vec::new();
    for p in &front {
        let here = pixel(p);
        if let Some(&(_, prev_y)) = stairs.last() {
            stairs.push((here.0, prev_y));
        }
        stairs.push(here);
    }
    for pair in stairs.windows(2) {
        placer.add_soft(Rect::new(pair[0].0, pair[0].1, pair[1].0, pair[1].1).inflate(1.5 * k));
    }
    scene.path(stairs, FRONT, 2.0 * k);

    draw_points(scene, &points, &indexes, &frame, cap);

    let mut labels = PointLabels {
        placer,
        anchors,
        gap: 3.5 * k,
    };
    draw_labels(scene, &points, &mut labels, frame.plot.width() * 0.45);
}

/// The legend's entries: the front, each kind of point present, intervals and baselines.
fn legend(
    chart: &ParetoChart,
    points: &[&ParetoPoint],
    any_front: bool,
    k: f64,
) -> Vec<LegendEntry> {
    let mut legend = Vec::new();
    if any_front {
        legend.push(LegendEntry::new(
            Glyph::Line {
                color: FRONT,
                width: 2.0 * k,
                dashed: false,
                marker: Some(marker(FrontStatus::Front, k)),
            },
            "Pareto front",
        ));
    }
    if points
        .iter()
        .any(|p| p.status == FrontStatus::Indistinguishable)
    {
        legend.push(LegendEntry::new(
            Glyph::Marker(marker(FrontStatus::Indistinguishable, k)),
            "indistinguishable from front",
        ));
    }
    if points.iter().any(|p| p.status == FrontStatus::Dominated) {
        legend.push(LegendEntry::new(
            Glyph::Marker(marker(FrontStatus::Dominated, k)),
            "dominated",
        ));
    }
    if points.iter().any(|p| p.status == FrontStatus::Composed) {
        legend.push(LegendEntry::new(
            Glyph::Marker(marker(FrontStatus::Composed, k)),
            "composed from stored verdicts (cascade, panel)",
        ));
    }
    let any_ci = points.iter().any(|p| interval(p).is_some());
    let any_baseline = chart.baselines.iter().any(|b| b.value.is_finite());
    legend.extend(reference_entries(
        any_ci,
        any_baseline.then_some("baseline"),
        k,
    ));

    legend
}

/// Each point's marker and error bar, as what labels must not cover.
fn anchors(points: &[&ParetoPoint], frame: &Frame, k: f64, cap: f64) -> Vec<Anchor> {
    points
        .iter()
        .map(|p| {
            let (x, y) = (frame.px(p.x), frame.py(p.y));
            let m = marker(p.status, k);
            let mut own = vec![m.bounds((x, y)).inflate(1.5 * k)];
            let (mut top, mut bottom) = (y, y);
            if let Some((lo, hi)) = interval(p) {
                (top, bottom) = (frame.py(hi).min(y), frame.py(lo).max(y));
                own.push(Rect::new(x - cap, top, x + cap, bottom).inflate(1.0 * k));
            }
            Anchor {
                x,
                y,
                r: m.bounds((x, y)).width() / 2.0,
                top,
                bottom,
                own,
            }
        })
        .collect()
}

/// The error bars, then the markers (each a hotspot, `indexes` saying which point of the
/// chart it is).
fn draw_points(
    scene: &mut Scene,
    points: &[&ParetoPoint],
    indexes: &[usize],
    frame: &Frame,
    cap: f64,
) {
    let k = scene.k;
    // Dominated points go down first and front points last, so the front is never hidden.
    let mut by_rank: Vec<usize> = (0..points.len()).collect();
    by_rank.sort_by_key(|&i| match points[i].status {
        FrontStatus::Dominated => 0,
        FrontStatus::Indistinguishable | FrontStatus::Composed => 1,
        FrontStatus::Front => 2,
    });
    for &i in &by_rank {
        let p = points[i];
        if let Some((lo, hi)) = interval(p) {
            let color = error_bar_color(marker(p.status, k).color);
            draw_error_bar(scene, frame.px(p.x), frame.py(lo), frame.py(hi), color, cap);
        }
    }
    for &i in &by_rank {
        let m = marker(points[i].status, k);
        let (x, y) = (frame.px(points[i].x), frame.py(points[i].y));
        m.draw(scene, (x, y));
        scene.hotspots.push(Hotspot {
            index: indexes[i],
            x,
            y,
            r: m.r,
        });
    }
}

/// Labels points in order of importance: the front from cheap to expensive, then the rest from
/// best to worst, each in the first free spot.
fn draw_labels(
    scene: &mut Scene,
    points: &[&ParetoPoint],
    labels: &mut PointLabels,
    max_width: f64,
) {
    let k = scene.k;
    let rank = |p: &ParetoPoint| match p.status {
        FrontStatus::Front => 0,
        FrontStatus::Indistinguishable | FrontStatus::Composed => 1,
        FrontStatus::Dominated => 2,
    };
    let mut order: Vec<usize> = (0..points.len()).collect();
    order.sort_by(|&a, &b| {
        let (a, b) = (points[a], points[b]);
        rank(a).cmp(&rank(b)).then_with(|| match a.status {
            FrontStatus::Front => a.x.total_cmp(&b.x),
            _ => b.y.total_cmp(&a.y),
        })
    });
    let size = 11.5 * k;
    for idx in order {
        let p = points[idx];
        let color = match p.status {
            FrontStatus::Dominated => MUTED,
            _ => INK,
        };
        let full = Some(fit_text(p.label.trim(), size, size, max_width).0);
        let short = short_label(&p.label).map(str::to_string);
        // Front points keep their full label where it fits at all, if need be with a leader
        // line; the others make do with their short form beside the point.
        let attempts = if p.status == FrontStatus::Dominated {
            vec![
                (&full, Spot::Near),
                (&short, Spot::Near),
                (&full, Spot::BeyondBar),
                (&short, Spot::BeyondBar),
            ]
        } else {
            vec![
                (&full, Spot::Near),
                (&full, Spot::BeyondBar),
                (&full, Spot::Leader),
                (&short, Spot::Near),
                (&short, Spot::Leader),
                (&short, Spot::LongLeader),
                (&short, Spot::BeyondBar),
            ]
        };
        for (text, spot) in attempts {
            let Some(text) = text.as_deref().filter(|t| !t.is_empty()) else {
                continue;
            };
            if let Some(placed) = labels.place(idx, text, spot, size, color) {
                if placed.fit == Fit::OverLine {
                    scene.rect(placed.text.bounds(), Some(WHITE), None);
                }
                if let Some((a, b)) = placed.leader {
                    scene.line(a, b, LEADER, 0.9 * k);
                }
                scene.text(placed.text);
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::charts::scene::Shape;
    use crate::charts::text::{ensure_font, Text};
    use crate::charts::Reference;

    /// A crowded chart: 40 trials on a grid of costs, with wide intervals.
    fn crowded() -> ParetoChart {
        let points = (0..40)
            .map(|i| {
                let x = 150.0 + 20.0 * f64::from(i % 8) + 90.0 * f64::from(i / 8);
                let y = -0.1 + 0.017 * f64::from((i * 7) % 40);
                let status = match i % 5 {
                    0 => FrontStatus::Front,
                    1 => FrontStatus::Indistinguishable,
                    _ => FrontStatus::Dominated,
                };
                ParetoPoint {
                    label: format!("#{} temp=0.{} few_shot={}", i + 1, i % 10, i % 4),
                    x,
                    y,
                    y_ci: Some((y - 0.1, y + 0.1)),
                    status,
                }
            })
            .collect();
        ParetoChart {
            title: "crowded".to_string(),
            x_label: "tokens per item".to_string(),
            y_label: "Cohen's kappa".to_string(),
            points,
            baselines: vec![Reference {
                name: "majority class 0.30".to_string(),
                value: 0.3,
            }],
        }
    }

    #[test]
    fn point_labels_overlap_neither_each_other_nor_markers() {
        ensure_font().unwrap();
        for (w, h) in [(800, 600), (1600, 1200), (300, 250)] {
            let mut scene = Scene::new(w, h);
            draw(&mut scene, &crowded());
            let labels: Vec<Rect> = scene
                .texts()
                .filter(|t| t.text.starts_with('#'))
                .map(Text::bounds)
                .collect();
            assert!(labels.len() >= 3, "only {} labels at {w}x{h}", labels.len());
            let markers: Vec<Rect> = scene
                .shapes
                .iter()
                .filter_map(|s| match s {
                    Shape::Circle { x, y, r, .. } => Some(Rect::around(*x, *y, *r)),
                    Shape::Polygon { points, .. } => {
                        let xs = points.iter().map(|p| p.0);
                        let ys = points.iter().map(|p| p.1);
                        Some(Rect::new(
                            xs.clone().fold(f64::INFINITY, f64::min),
                            ys.clone().fold(f64::INFINITY, f64::min),
                            xs.fold(f64::NEG_INFINITY, f64::max),
                            ys.fold(f64::NEG_INFINITY, f64::max),
                        ))
                    }
                    _ => None,
                })
                .collect();
            for (i, a) in labels.iter().enumerate() {
                for b in &labels[i + 1..] {
                    assert!(!a.intersects(b), "labels overlap at {w}x{h}: {a:?} {b:?}");
                }
                for m in &markers {
                    assert!(
                        !a.intersects(m),
                        "label on a marker at {w}x{h}: {a:?} {m:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn front_points_are_labelled_first() {
        ensure_font().unwrap();
        let mut scene = Scene::new(800, 600);
        draw(&mut scene, &crowded());
        // Front points are every fifth trial, #1, #6, #11, …; the cheapest is labelled first.
        let first = scene.texts().find(|t| t.text.starts_with('#')).unwrap();
        let number: u32 = first.text[1..].split(' ').next().unwrap().parse().unwrap();
        assert_eq!(number % 5, 1, "{}", first.text);
    }
}
