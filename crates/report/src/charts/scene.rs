//! The display list of a chart: shapes and text in pixel coordinates, with colour helpers.

use plotters::style::RGBColor;

use super::rect::Rect;
use super::text::Text;

/// One drawing primitive; colours are opaque, strokes are in pixels.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Shape {
    Path {
        points: Vec<(f64, f64)>,
        color: RGBColor,
        width: f64,
    },
    Rect {
        rect: Rect,
        fill: Option<RGBColor>,
        stroke: Option<(RGBColor, f64)>,
    },
    Circle {
        x: f64,
        y: f64,
        r: f64,
        fill: Option<RGBColor>,
        stroke: Option<(RGBColor, f64)>,
    },
    Polygon {
        points: Vec<(f64, f64)>,
        fill: Option<RGBColor>,
        stroke: Option<(RGBColor, f64)>,
    },
    Text(Text),
}

/// A chart laid out in pixels, ready to be replayed onto a backend.
#[derive(Debug, Clone)]
pub(crate) struct Scene {
    pub width: u32,
    pub height: u32,
    /// How much bigger than an 800×600 chart this one is; every size in the layout scales by it.
    pub k: f64,
    pub shapes: Vec<Shape>,
    /// Where each data point landed, for hit-testing in an interactive view.
    pub hotspots: Vec<Hotspot>,
}

/// Where one data point of a chart was drawn, in the chart's pixels.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hotspot {
    /// The point's index in the chart's input (e.g. [`super::ParetoChart::points`]).
    pub index: usize,
    pub x: f64,
    pub y: f64,
    /// The radius of its marker.
    pub r: f64,
}

impl Scene {
    pub(crate) fn new(width: u32, height: u32) -> Self {
        let k = (f64::from(width) / 800.0)
            .min(f64::from(height) / 600.0)
            .clamp(0.55, 6.0);
        Self {
            width,
            height,
            k,
            shapes: Vec::new(),
            hotspots: Vec::new(),
        }
    }

    pub(crate) fn w(&self) -> f64 {
        f64::from(self.width)
    }

    pub(crate) fn h(&self) -> f64 {
        f64::from(self.height)
    }

    pub(crate) fn path(&mut self, points: Vec<(f64, f64)>, color: RGBColor, width: f64) {
        if points.len() >= 2 {
            self.shapes.push(Shape::Path {
                points,
                color,
                width,
            });
        }
    }

    pub(crate) fn line(&mut self, a: (f64, f64), b: (f64, f64), color: RGBColor, width: f64) {
        self.path(vec![a, b], color, width);
    }

    /// A dashed polyline; the pattern runs on across vertices so corners stay evenly dashed.
    pub(crate) fn dashed(
        &mut self,
        points: &[(f64, f64)],
        color: RGBColor,
        width: f64,
        (on, off): (f64, f64),
    ) {
        if !(on > 0.0 && off > 0.0) {
            return self.path(points.to_vec(), color, width);
        }
        // `left` is what remains of the current dash or gap; each step ends a segment or a dash,
        // so the loop always advances, whatever rounding does to the lengths.
        let (mut drawing, mut left) = (true, on);
        let mut current: Vec<(f64, f64)> = Vec::new();
        for pair in points.windows(2) {
            let (a, b) = (pair[0], pair[1]);
            let len = ((b.0 - a.0).powi(2) + (b.1 - a.1).powi(2)).sqrt();
            let at = |t: f64| (a.0 + (b.0 - a.0) * t / len, a.1 + (b.1 - a.1) * t / len);
            let mut t = 0.0;
            while len - t > 1e-6 {
                let step = left.min(len - t);
                if drawing {
                    if current.is_empty() {
                        current.push(at(t));
                    }
                    current.push(at(t + step));
                }
                t += step;
                left -= step;
                if left <= 1e-6 {
                    if drawing {
                        self.path(std::mem::take(&mut current), color, width);
                    }
                    drawing = !drawing;
                    left = if drawing { on } else { off };
                }
            }
        }
        self.path(current, color, width);
    }

    pub(crate) fn rect(
        &mut self,
        rect: Rect,
        fill: Option<RGBColor>,
        stroke: Option<(RGBColor, f64)>,
    ) {
        self.shapes.push(Shape::Rect { rect, fill, stroke });
    }

    pub(crate) fn circle(
        &mut self,
        (x, y): (f64, f64),
        r: f64,
        fill: Option<RGBColor>,
        stroke: Option<(RGBColor, f64)>,
    ) {
        self.shapes.push(Shape::Circle {
            x,
            y,
            r,
            fill,
            stroke,
        });
    }

    pub(crate) fn polygon(
        &mut self,
        points: Vec<(f64, f64)>,
        fill: Option<RGBColor>,
        stroke: Option<(RGBColor, f64)>,
    ) {
        self.shapes.push(Shape::Polygon {
            points,
            fill,
            stroke,
        });
    }

    /// Adds a line of text and returns the rectangle it covers.
    pub(crate) fn text(&mut self, text: Text) -> Rect {
        let bounds = text.bounds();
        if !text.text.is_empty() {
            self.shapes.push(Shape::Text(text));
        }
        bounds
    }

    /// The texts of the scene, for tests that check labels for overlaps.
    #[cfg(test)]
    pub(crate) fn texts(&self) -> impl Iterator<Item = &Text> {
        self.shapes.iter().filter_map(|s| match s {
            Shape::Text(t) => Some(t),
            _ => None,
        })
    }
}

/// Mixes `a` towards `b`; `t = 0` is `a`, `t = 1` is `b`.
pub(crate) fn mix(a: RGBColor, b: RGBColor, t: f64) -> RGBColor {
    let t = t.clamp(0.0, 1.0);
    let m = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * t).round() as u8;
    RGBColor(m(a.0, b.0), m(a.1, b.1), m(a.2, b.2))
}

/// Relative luminance in 0..=1, to pick a text colour that contrasts with a fill.
pub(crate) fn luminance(c: RGBColor) -> f64 {
    let lin = |v: u8| {
        let s = f64::from(v) / 255.0;
        if s <= 0.04045 {
            s / 12.92
        } else {
            ((s + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * lin(c.0) + 0.7152 * lin(c.1) + 0.0722 * lin(c.2)
}

#[cfg(test)]
mod tests {
    use plotters::style::BLACK;

    use super::*;

    #[test]
    fn dashes_cover_about_half_of_a_line() {
        let mut scene = Scene::new(800, 600);
        scene.dashed(&[(0.0, 0.0), (100.0, 0.0)], BLACK, 1.0, (5.0, 5.0));
        assert_eq!(scene.shapes.len(), 10);
    }
}
