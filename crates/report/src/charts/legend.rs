//! Point markers, the colour palette, and the legend that explains them below the plot.

use plotters::style::RGBColor;

use super::colors::{INK, MUTED, WHITE};
use super::rect::Rect;
use super::scene::{mix, Scene};
use super::text::{fit_text, text_width, HAlign, Text, VAlign};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MarkerShape {
    Circle,
    Square,
    TriangleUp,
    Diamond,
    TriangleDown,
}

impl MarkerShape {
    /// Shapes cycled through per series, so series differ by more than colour.
    pub(crate) const CYCLE: [MarkerShape; 5] = [
        MarkerShape::Circle,
        MarkerShape::Square,
        MarkerShape::TriangleUp,
        MarkerShape::Diamond,
        MarkerShape::TriangleDown,
    ];
}

/// A point marker; `r` is the radius of a circle of about the same visual weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Marker {
    pub shape: MarkerShape,
    pub color: RGBColor,
    pub filled: bool,
    pub r: f64,
}

impl Marker {
    /// The rectangle the marker covers, for label placement.
    pub(crate) fn bounds(&self, (x, y): (f64, f64)) -> Rect {
        let extent = match self.shape {
            MarkerShape::Circle | MarkerShape::Square => self.r,
            _ => self.r * 1.3,
        };
        Rect::around(x, y, extent)
    }

    pub(crate) fn draw(&self, scene: &mut Scene, (x, y): (f64, f64)) {
        let k = scene.k;
        // Filled markers get a thin white rim so that overlapping markers stay countable; hollow
        // ones a white fill so that lines behind them do not show through.
        let (fill, stroke) = if self.filled {
            (self.color, (WHITE, 0.9 * k))
        } else {
            (WHITE, (self.color, 1.6 * k))
        };
        let r = self.r;
        match self.shape {
            MarkerShape::Circle => {
                scene.circle((x, y), r, Some(fill), None);
                scene.circle((x, y), r, None, Some(stroke));
            }
            shape => {
                let pts = match shape {
                    MarkerShape::Square => {
                        let s = r * 0.9;
                        vec![
                            (x - s, y - s),
                            (x + s, y - s),
                            (x + s, y + s),
                            (x - s, y + s),
                        ]
                    }
                    MarkerShape::TriangleUp => {
                        let s = r * 1.3;
                        vec![
                            (x, y - s),
                            (x + s * 0.87, y + s * 0.5),
                            (x - s * 0.87, y + s * 0.5),
                        ]
                    }
                    MarkerShape::TriangleDown => {
                        let s = r * 1.3;
                        vec![
                            (x, y + s),
                            (x - s * 0.87, y - s * 0.5),
                            (x + s * 0.87, y - s * 0.5),
                        ]
                    }
                    _ => {
                        let s = r * 1.3;
                        vec![(x, y - s), (x + s, y), (x, y + s), (x - s, y)]
                    }
                };
                scene.polygon(pts, Some(fill), Some(stroke));
            }
        }
    }
}

/// A vertical error bar with caps from `lo` to `hi` (pixel y values) at `x`.
/// The legend entries every x–y chart ends with: the interval bars and the dashed reference
/// lines (named `references`, e.g. "baseline"), each only when the chart draws some.
pub(crate) fn reference_entries(
    any_ci: bool,
    references: Option<&str>,
    k: f64,
) -> Vec<LegendEntry> {
    let mut entries = Vec::new();
    if any_ci {
        entries.push(LegendEntry::new(Glyph::ErrorBar(MUTED), "95% CI"));
    }
    if let Some(references) = references {
        entries.push(LegendEntry::new(
            Glyph::Line {
                color: MUTED,
                width: 1.4 * k,
                dashed: true,
                marker: None,
            },
            references,
        ));
    }
    entries
}

pub(crate) fn draw_error_bar(
    scene: &mut Scene,
    x: f64,
    lo: f64,
    hi: f64,
    color: RGBColor,
    cap: f64,
) -> Rect {
    let k = scene.k;
    let width = 1.3 * k;
    scene.line((x, lo), (x, hi), color, width);
    scene.line((x - cap, lo), (x + cap, lo), color, width);
    scene.line((x - cap, hi), (x + cap, hi), color, width);
    Rect::new(x - cap, lo.min(hi), x + cap, lo.max(hi))
}

/// A lighter, opaque version of a colour for error bars, so they recede behind the markers.
pub(crate) fn error_bar_color(c: RGBColor) -> RGBColor {
    mix(c, WHITE, 0.35)
}

/// What a legend entry shows next to its text.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Glyph {
    Marker(Marker),
    Line {
        color: RGBColor,
        width: f64,
        dashed: bool,
        marker: Option<Marker>,
    },
    ErrorBar(RGBColor),
    Swatch {
        fill: RGBColor,
        stroke: Option<(RGBColor, f64)>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LegendEntry {
    pub glyph: Glyph,
    pub label: String,
}

impl LegendEntry {
    pub(crate) fn new(glyph: Glyph, label: impl Into<String>) -> Self {
        Self {
            glyph,
            label: label.into(),
        }
    }
}

/// The legend never takes more than this share of the chart's height; extra entries are cut.
const MAX_HEIGHT_SHARE: f64 = 0.3;

struct Layout {
    size: f64,
    /// Column width when the entries form a grid; `None` when they all fit on one row.
    column: Option<f64>,
    rows: Vec<Vec<usize>>,
}

/// Legends up to this many rows keep a comfortable font; longer ones shrink it first.
const COMFORTABLE_ROWS: usize = 4;

fn layout(entries: &[LegendEntry], width: f64, k: f64) -> Layout {
    let mut last = None;
    for size in [13.0 * k, 12.0 * k, 11.0 * k] {
        let widths: Vec<f64> = entries.iter().map(|e| entry_width(e, size)).collect();
        let gap = 1.6 * size;
        let total: f64 = widths.iter().sum::<f64>() + gap * (widths.len().saturating_sub(1)) as f64;
        if total <= width {
            return Layout {
                size,
                column: None,
                rows: vec![(0..entries.len()).collect()],
            };
        }
        // Several rows: a grid with equal columns keeps entries aligned and easy to scan.
        let column = widths.iter().fold(0.0, |a: f64, b| a.max(*b)) + gap;
        let n_cols = ((width + gap) / column).floor().max(1.0) as usize;
        let rows: Vec<Vec<usize>> = (0..entries.len())
            .collect::<Vec<_>>()
            .chunks(n_cols)
            .map(<[usize]>::to_vec)
            .collect();
        let done = rows.len() <= COMFORTABLE_ROWS;
        last = Some(Layout {
            size,
            column: Some(column.min(width / n_cols as f64)),
            rows,
        });
        if done {
            break;
        }
    }
    last.unwrap_or(Layout {
        size: 13.0 * k,
        column: None,
        rows: Vec::new(),
    })
}

fn glyph_width(size: f64) -> f64 {
    2.4 * size
}

fn entry_width(e: &LegendEntry, size: f64) -> f64 {
    glyph_width(size) + 0.5 * size + text_width(&e.label, size)
}

fn row_height(size: f64) -> f64 {
    1.55 * size
}

/// Draws the legend centred between `x0` and `x1`, ending at `bottom`; returns its top, which is
/// `bottom` when there are no entries.
pub(crate) fn draw_rows(
    scene: &mut Scene,
    entries: &[LegendEntry],
    x0: f64,
    x1: f64,
    bottom: f64,
) -> f64 {
    if entries.is_empty() {
        return bottom;
    }
    let k = scene.k;
    let mut entries = entries.to_vec();
    let mut lay = layout(&entries, x1 - x0, k);
    let max_rows = ((scene.h() * MAX_HEIGHT_SHARE) / row_height(lay.size))
        .floor()
        .max(1.0) as usize;
    if lay.rows.len() > max_rows {
        let per_row = lay.rows[0].len();
        let keep = (per_row * max_rows).saturating_sub(1);
        let cut = entries.len() - keep;
        entries.truncate(keep);
        entries.push(LegendEntry::new(
            Glyph::Swatch {
                fill: WHITE,
                stroke: None,
            },
            format!("… and {cut} more"),
        ));
        lay = layout(&entries, x1 - x0, k);
        lay.rows.truncate(max_rows);
    }
    let size = lay.size;
    let rh = row_height(size);
    let top = bottom - rh * lay.rows.len() as f64;
    for (row_idx, row) in lay.rows.iter().enumerate() {
        let widths: Vec<f64> = row
            .iter()
            .map(|&i| {
                lay.column
                    .unwrap_or_else(|| entry_width(&entries[i], size) + 1.6 * size)
            })
            .collect();
        let row_w: f64 = match lay.column {
            Some(c) => c * lay.rows[0].len() as f64 - 1.6 * size,
            None => widths.iter().sum::<f64>() - 1.6 * size,
        };
        let mut x = (x0 + x1 - row_w) / 2.0;
        let cy = top + rh * (row_idx as f64 + 0.5);
        for (&i, w) in row.iter().zip(&widths) {
            // On a narrow chart a single entry can be wider than the legend; it is ellipsised.
            let max_text =
                (w.min(x1 - x0) - 1.6 * size - glyph_width(size) - 0.5 * size).max(0.0) + 0.5;
            draw_entry(scene, &entries[i], x.max(x0), cy, size, max_text);
            x += w;
        }
    }
    top
}

fn draw_entry(scene: &mut Scene, e: &LegendEntry, x: f64, cy: f64, size: f64, max_text: f64) {
    let gw = glyph_width(size);
    let mid = (x + gw / 2.0, cy);
    match &e.glyph {
        Glyph::Marker(m) => m.draw(scene, mid),
        Glyph::Line {
            color,
            width,
            dashed,
            marker,
        } => {
            let pts = [(x, cy), (x + gw, cy)];
            if *dashed {
                scene.dashed(&pts, *color, *width, (0.45 * size, 0.3 * size));
            } else {
                scene.path(pts.to_vec(), *color, *width);
            }
            if let Some(m) = marker {
                m.draw(scene, mid);
            }
        }
        Glyph::ErrorBar(color) => {
            let h = 0.55 * size;
            draw_error_bar(scene, mid.0, cy - h, cy + h, *color, 0.3 * size);
        }
        Glyph::Swatch { fill, stroke } => {
            if *fill != WHITE || stroke.is_some() {
                let s = 0.5 * size;
                scene.rect(Rect::around(mid.0, mid.1, s), Some(*fill), *stroke);
            }
        }
    }
    let (label, size) = fit_text(&e.label, size, size, max_text);
    scene.text(
        Text::new(label, x + gw + 0.5 * size, cy, size, INK).align(HAlign::Left, VAlign::Middle),
    );
}
