//! Greedy placement of point labels among markers, error bars, lines and earlier labels.
//!
//! Each label takes the first free spot of a fixed list: beside its point, then past the ends of
//! its error bar, then further out with a leader line. A spot must be nearer its own point than
//! any other, so that no label can be read as belonging to the wrong point.

use plotters::style::RGBColor;

use super::rect::Rect;
use super::text::{HAlign, Text, VAlign};

/// The free space for labels within `bounds`.
///
/// Hard obstacles (markers, error bars, placed labels) are never covered. Soft obstacles (thin
/// lines) are avoided when possible, and covered only when a label has no other place.
#[derive(Debug, Clone)]
pub(crate) struct Placer {
    bounds: Rect,
    hard: Vec<Rect>,
    soft: Vec<Rect>,
}

/// How a label was placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fit {
    /// Touches nothing.
    Clear,
    /// Crosses a line; the label gets a background so that it stays readable.
    OverLine,
}

impl Placer {
    pub(crate) fn new(bounds: Rect) -> Self {
        Self {
            bounds,
            hard: Vec::new(),
            soft: Vec::new(),
        }
    }

    pub(crate) fn add_hard(&mut self, r: Rect) {
        self.hard.push(r);
    }

    pub(crate) fn add_soft(&mut self, r: Rect) {
        self.soft.push(r);
    }

    fn is_free(&self, r: &Rect, avoid_soft: bool) -> bool {
        self.bounds.contains(r)
            && !self.hard.iter().any(|o| o.intersects(r))
            && !(avoid_soft && self.soft.iter().any(|o| o.intersects(r)))
    }

    /// The first candidate that touches nothing, else the first that only crosses lines; the
    /// caller adds the chosen rectangle as a hard obstacle once it draws there.
    pub(crate) fn place(&self, candidates: &[Rect]) -> Option<(usize, Fit)> {
        if let Some(i) = candidates.iter().position(|r| self.is_free(r, true)) {
            return Some((i, Fit::Clear));
        }
        candidates
            .iter()
            .position(|r| self.is_free(r, false))
            .map(|i| (i, Fit::OverLine))
    }

    /// Whether the segment from `a` to `b` stays off every hard obstacle but those in `own`.
    fn segment_is_clear(&self, a: (f64, f64), b: (f64, f64), own: &[Rect]) -> bool {
        let len = (b.0 - a.0).hypot(b.1 - a.1);
        let n = (len / 2.0).ceil().max(1.0) as usize;
        (0..=n).all(|s| {
            let t = s as f64 / n as f64;
            let p = Rect::around(a.0 + (b.0 - a.0) * t, a.1 + (b.1 - a.1) * t, 0.5);
            !self
                .hard
                .iter()
                .any(|o| o.intersects(&p) && !own.contains(o))
        })
    }
}

/// A point to label: its centre, marker radius, error bar rows, and the obstacles it added
/// itself, its marker first.
#[derive(Debug, Clone)]
pub(crate) struct Anchor {
    pub x: f64,
    pub y: f64,
    pub r: f64,
    pub top: f64,
    pub bottom: f64,
    pub own: Vec<Rect>,
}

/// Where around its point a label may go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spot {
    /// Beside the point: right, left, above, below, then diagonally.
    Near,
    /// Past either end of the error bar.
    BeyondBar,
    /// Further out on rings around the point, joined to it by a short leader line.
    Leader,
    /// Like `Leader`, but on the outer rings.
    LongLeader,
}

/// A leader line from near a point to its label, as start and end.
pub(crate) type Leader = ((f64, f64), (f64, f64));

/// A label's text set at a point with an alignment.
type LabelAt<'a> = dyn Fn(f64, f64, HAlign, VAlign) -> Text + 'a;

/// A label that found a place.
#[derive(Debug, Clone)]
pub(crate) struct Placed {
    pub text: Text,
    pub fit: Fit,
    pub leader: Option<Leader>,
}

/// Places labels of the points in `anchors`, one at a time.
pub(crate) struct PointLabels {
    pub placer: Placer,
    pub anchors: Vec<Anchor>,
    /// The gap between a marker's edge and a label beside it.
    pub gap: f64,
}

impl PointLabels {
    /// Finds a spot for `text` as the label of anchor `idx`, and reserves it.
    pub(crate) fn place(
        &mut self,
        idx: usize,
        text: &str,
        spot: Spot,
        size: f64,
        color: RGBColor,
    ) -> Option<Placed> {
        let t =
            |x: f64, y: f64, h: HAlign, v: VAlign| Text::new(text, x, y, size, color).align(h, v);
        let options = match spot {
            Spot::Near | Spot::BeyondBar => self.beside(idx, spot, &t),
            Spot::Leader | Spot::LongLeader => self.with_leader(idx, spot, &t),
        };
        self.reserve(options)
    }

    /// The label's places beside anchor `idx` (`Near`), or past its error bar
    /// (`BeyondBar`), each nearer its own point than any other.
    fn beside(&self, idx: usize, spot: Spot, t: &LabelAt<'_>) -> Vec<(Text, Option<Leader>)> {
        let a = &self.anchors[idx];
        let d = a.r + self.gap;
        // Beside the point a label must be nearer its point than any other point or error bar;
        // past the bar it is further away, so others must be twice as far.
        let clearance = if spot == Spot::BeyondBar { 2.0 } else { 1.0 };
        let unambiguous = |b: &Rect| {
            let own = distance_to_segment((a.x, a.y, a.y), b);
            self.anchors
                .iter()
                .enumerate()
                .filter(|(j, _)| *j != idx)
                .all(|(_, o)| distance_to_segment((o.x, o.top, o.bottom), b) >= own * clearance)
        };
        let mut options: Vec<(Text, Option<Leader>)> = Vec::new();
        if spot == Spot::Near {
            let diag = d * 0.75;
            for c in [
                t(a.x + d, a.y, HAlign::Left, VAlign::Middle),
                t(a.x - d, a.y, HAlign::Right, VAlign::Middle),
                t(a.x, a.y - d, HAlign::Center, VAlign::Bottom),
                t(a.x, a.y + d, HAlign::Center, VAlign::Top),
                t(a.x + diag, a.y - diag, HAlign::Left, VAlign::Bottom),
                t(a.x + diag, a.y + diag, HAlign::Left, VAlign::Top),
                t(a.x - diag, a.y - diag, HAlign::Right, VAlign::Bottom),
                t(a.x - diag, a.y + diag, HAlign::Right, VAlign::Top),
            ] {
                if unambiguous(&c.bounds()) {
                    options.push((c, None));
                }
            }
        } else {
            if a.top < a.y || a.bottom > a.y {
                let (gap, nudge) = (self.gap, d * 0.4);
                for (y, v) in [(a.top - gap, VAlign::Bottom), (a.bottom + gap, VAlign::Top)] {
                    for c in [
                        t(a.x, y, HAlign::Center, v),
                        t(a.x - nudge, y, HAlign::Left, v),
                        t(a.x + nudge, y, HAlign::Right, v),
                    ] {
                        if unambiguous(&c.bounds()) {
                            options.push((c, None));
                        }
                    }
                }
            }
        }
        options
    }

    /// The label's places on rings around anchor `idx`, each joined to it by a leader line
    /// that crosses nothing but the marker.
    fn with_leader(&self, idx: usize, spot: Spot, t: &LabelAt<'_>) -> Vec<(Text, Option<Leader>)> {
        let a = &self.anchors[idx];
        let d = a.r + self.gap;
        let mut options: Vec<(Text, Option<Leader>)> = Vec::new();
        // Up and to the sides first: above a Pareto front there is usually empty space.
        let angles = [-90.0, -135.0, -45.0, 180.0, 0.0, 135.0, 45.0, 90.0_f64];
        let rings: &[f64] = if spot == Spot::Leader {
            &[2.5, 4.0]
        } else {
            &[6.0, 8.0]
        };
        for &ring in rings {
            for angle in angles {
                let (sin, cos) = angle.to_radians().sin_cos();
                let (x, y) = (a.x + ring * d * cos, a.y + ring * d * sin);
                let h = if cos > 0.38 {
                    HAlign::Left
                } else if cos < -0.38 {
                    HAlign::Right
                } else {
                    HAlign::Center
                };
                let v = if sin < -0.38 {
                    VAlign::Bottom
                } else if sin > 0.38 {
                    VAlign::Top
                } else {
                    VAlign::Middle
                };
                let c = t(x, y, h, v);
                let b = c.bounds();
                let end = (a.x.clamp(b.x0, b.x1), a.y.clamp(b.y0, b.y1));
                let len = (end.0 - a.x).hypot(end.1 - a.y);
                if len <= d {
                    continue;
                }
                // With a leader the label may be far off, but never hard by another point.
                let crowded = self.anchors.iter().enumerate().any(|(j, o)| {
                    j != idx && distance_to_segment((o.x, o.top, o.bottom), &b) < o.r + self.gap
                });
                if crowded {
                    continue;
                }
                let (ux, uy) = ((end.0 - a.x) / len, (end.1 - a.y) / len);
                let start = (a.x + ux * (a.r + 1.0), a.y + uy * (a.r + 1.0));
                let stop = (end.0 - ux * 2.0, end.1 - uy * 2.0);
                // Only the marker itself may be crossed: a leader along the error bar
                // would read as part of the bar. The check starts a gap away from the
                // marker, where a slanted leader has left the bar's caps behind.
                let check = (a.x + ux * d, a.y + uy * d);
                if self
                    .placer
                    .segment_is_clear(check, stop, &a.own[..a.own.len().min(1)])
                {
                    options.push((c, Some((start, stop))));
                }
            }
        }
        options
    }

    /// Takes the first of `options` the placer fits, and reserves it (and its leader).
    fn reserve(&mut self, mut options: Vec<(Text, Option<Leader>)>) -> Option<Placed> {
        let boxes: Vec<Rect> = options.iter().map(|(c, _)| c.bounds()).collect();
        let (i, fit) = self.placer.place(&boxes)?;
        self.placer.add_hard(boxes[i]);
        let (text, leader) = options.swap_remove(i);
        if let Some((s, e)) = leader {
            // Later labels must not cover the leader, or it would point at them.
            let n = ((e.0 - s.0).hypot(e.1 - s.1) / 3.0).ceil().max(1.0) as usize;
            for step in 0..=n {
                let f = step as f64 / n as f64;
                self.placer.add_hard(Rect::around(
                    s.0 + (e.0 - s.0) * f,
                    s.1 + (e.1 - s.1) * f,
                    1.5,
                ));
            }
        }
        Some(Placed { text, fit, leader })
    }
}

/// The distance from a vertical segment `(x, top, bottom)` to a rectangle; zero when they touch.
pub(crate) fn distance_to_segment((x, top, bottom): (f64, f64, f64), r: &Rect) -> f64 {
    let dx = (r.x0 - x).max(x - r.x1).max(0.0);
    let dy = (r.y0 - bottom).max(top - r.y1).max(0.0);
    dx.hypot(dy)
}

/// The part of a point label that identifies the trial, "#3" of "#3 temp=0.7 few_shot=1"; `None`
/// when the label is a single word and cannot be shortened.
pub(crate) fn short_label(label: &str) -> Option<&str> {
    let trimmed = label.trim();
    let (head, rest) = trimmed.split_once(char::is_whitespace)?;
    (!head.is_empty() && !rest.trim().is_empty()).then_some(head)
}

#[cfg(test)]
mod tests {
    use super::super::text::ensure_font;
    use super::*;

    #[test]
    fn places_on_first_free_candidate_and_prefers_missing_lines() {
        let mut placer = Placer::new(Rect::new(0.0, 0.0, 100.0, 100.0));
        placer.add_hard(Rect::new(0.0, 0.0, 50.0, 50.0));
        placer.add_soft(Rect::new(50.0, 60.0, 100.0, 61.0));
        let taken = Rect::new(10.0, 10.0, 20.0, 20.0);
        let outside = Rect::new(90.0, 90.0, 110.0, 95.0);
        let on_line = Rect::new(60.0, 55.0, 70.0, 65.0);
        let clear = Rect::new(60.0, 70.0, 70.0, 80.0);
        assert_eq!(
            placer.place(&[taken, outside, on_line, clear]),
            Some((3, Fit::Clear))
        );
        assert_eq!(placer.place(&[taken, on_line]), Some((1, Fit::OverLine)));
        assert_eq!(placer.place(&[taken, outside]), None);
    }

    #[test]
    fn distance_to_segment_measures_the_gap() {
        let r = Rect::new(10.0, 10.0, 20.0, 20.0);
        assert_eq!(distance_to_segment((15.0, 0.0, 30.0), &r), 0.0);
        assert_eq!(distance_to_segment((25.0, 12.0, 14.0), &r), 5.0);
        assert_eq!(distance_to_segment((23.0, 0.0, 6.0), &r), 5.0);
    }

    fn anchor(x: f64, y: f64) -> Anchor {
        let own = vec![Rect::around(x, y, 5.0)];
        Anchor {
            x,
            y,
            r: 4.0,
            top: y,
            bottom: y,
            own,
        }
    }

    #[test]
    fn labels_go_beside_their_point_and_never_on_one_another() {
        ensure_font().unwrap();
        let anchors = vec![anchor(100.0, 100.0), anchor(100.0, 112.0)];
        let mut placer = Placer::new(Rect::new(0.0, 0.0, 400.0, 300.0));
        for a in &anchors {
            placer.add_hard(a.own[0]);
        }
        let mut labels = PointLabels {
            placer,
            anchors,
            gap: 3.0,
        };
        let black = RGBColor(0, 0, 0);
        let first = labels
            .place(0, "#1 first", Spot::Near, 11.0, black)
            .unwrap();
        let second = labels
            .place(1, "#2 second", Spot::Near, 11.0, black)
            .unwrap();
        assert!(first.text.bounds().x0 > 100.0, "{first:?}");
        assert!(!first.text.bounds().intersects(&second.text.bounds()));
    }

    #[test]
    fn a_crowded_point_gets_a_leader_line() {
        ensure_font().unwrap();
        let mut anchors = vec![anchor(200.0, 150.0)];
        let mut placer = Placer::new(Rect::new(0.0, 0.0, 400.0, 300.0));
        // Neighbours close on every side but straight up leave no unambiguous spot beside the
        // point, and a gap for a leader line.
        for (dx, dy) in [
            (14.0, 0.0),
            (-14.0, 0.0),
            (0.0, 14.0),
            (10.0, 10.0),
            (-10.0, -10.0),
            (10.0, -10.0),
            (-10.0, 10.0),
        ] {
            anchors.push(anchor(200.0 + dx, 150.0 + dy));
        }
        for a in &anchors {
            placer.add_hard(a.own[0]);
        }
        let mut labels = PointLabels {
            placer,
            anchors,
            gap: 3.0,
        };
        let black = RGBColor(0, 0, 0);
        assert!(labels.place(0, "#1", Spot::Near, 11.0, black).is_none());
        let placed = labels.place(0, "#1", Spot::Leader, 11.0, black).unwrap();
        assert!(placed.leader.is_some());
    }

    #[test]
    fn short_label_is_the_first_word() {
        assert_eq!(short_label("#3 temp=0.7 few_shot=1"), Some("#3"));
        assert_eq!(short_label("#12"), None);
        assert_eq!(short_label("  "), None);
    }
}
