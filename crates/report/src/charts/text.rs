//! Text on charts: the embedded font, its metrics, and lines of text anchored in pixels.
//!
//! Text is measured with the embedded DejaVu Sans, so layout never depends on system fonts.

use std::sync::OnceLock;

use plotters::style::{FontDesc, FontFamily, FontStyle, RGBColor};

use super::rect::Rect;
use super::ChartError;

/// The font family written into SVG text; the embedded font is registered under this name too.
///
/// Verdana has metrics close to DejaVu Sans, so SVGs viewed without DejaVu keep their layout.
pub(crate) const FAMILY: &str = "DejaVu Sans, Verdana, sans-serif";

static FONT: &[u8] = include_bytes!("../../fonts/DejaVuSans.ttf");

/// DejaVu Sans' (ascent − descent) in em; ab_glyph scales fonts so that this spans the pixel size.
pub(crate) const PNG_SIZE_PER_EM: f64 = 2384.0 / 2048.0;
/// plotters writes `font-size = size / 1.24` into SVG text.
pub(crate) const SVG_SIZE_PER_EM: f64 = 1.24;
/// Where a text box's top (accents included) and bottom (descenders) lie around the baseline, in em.
const BOX_ASCENT: f64 = 0.76;
const BOX_DESCENT: f64 = 0.24;
/// A `Middle` anchor puts the baseline this far below the anchor, so digits and capitals look centred.
const MIDDLE_BASELINE: f64 = 0.34;

/// Registers the embedded font once; both SVG layout and PNG rasterising measure with it.
pub(crate) fn ensure_font() -> Result<(), ChartError> {
    static REGISTERED: OnceLock<bool> = OnceLock::new();
    let ok = *REGISTERED.get_or_init(|| {
        plotters::style::register_font("sans-serif", FontStyle::Normal, FONT).is_ok()
            && plotters::style::register_font(FAMILY, FontStyle::Normal, FONT).is_ok()
    });
    if ok {
        Ok(())
    } else {
        Err(ChartError::Font)
    }
}

/// The advance width of `text` at a font size of `size` pixels per em.
pub(crate) fn text_width(text: &str, size: f64) -> f64 {
    if text.is_empty() || size <= 0.0 {
        return 0.0;
    }
    let font = FontDesc::new(
        FontFamily::Name(FAMILY),
        size * PNG_SIZE_PER_EM,
        FontStyle::Normal,
    );
    // The font is registered before any layout starts, so a failure here can only mean an
    // unusual glyph; a rough width keeps the layout going.
    font.box_size(text)
        .map(|(w, _)| f64::from(w))
        .unwrap_or(text.chars().count() as f64 * size * 0.6)
}

/// The height of one line of text, from accent top to descender bottom.
pub(crate) fn line_height(size: f64) -> f64 {
    (BOX_ASCENT + BOX_DESCENT) * size
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HAlign {
    Left,
    Center,
    Right,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VAlign {
    /// The anchor is the top of the text box.
    Top,
    /// The anchor is the visual middle of digits and capitals.
    Middle,
    /// The anchor is the bottom of the text box, below descenders.
    Bottom,
}

/// One line of text; `vertical` text reads bottom to top, as on a y axis.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Text {
    pub text: String,
    pub x: f64,
    pub y: f64,
    pub size: f64,
    pub color: RGBColor,
    pub h: HAlign,
    pub v: VAlign,
    pub vertical: bool,
}

impl Text {
    pub(crate) fn new(text: impl Into<String>, x: f64, y: f64, size: f64, color: RGBColor) -> Self {
        Self {
            text: text.into(),
            x,
            y,
            size,
            color,
            h: HAlign::Left,
            v: VAlign::Top,
            vertical: false,
        }
    }

    pub(crate) fn align(mut self, h: HAlign, v: VAlign) -> Self {
        self.h = h;
        self.v = v;
        self
    }

    pub(crate) fn vertical(mut self) -> Self {
        self.vertical = true;
        self
    }

    /// Where the text's origin lies along and across its own writing direction, relative to the
    /// anchor: (offset of the left end, offset of the baseline).
    pub(crate) fn local_origin(&self) -> (f64, f64) {
        let w = text_width(&self.text, self.size);
        let dx = match self.h {
            HAlign::Left => 0.0,
            HAlign::Center => -w / 2.0,
            HAlign::Right => -w,
        };
        let baseline = match self.v {
            VAlign::Top => BOX_ASCENT * self.size,
            VAlign::Middle => MIDDLE_BASELINE * self.size,
            VAlign::Bottom => -BOX_DESCENT * self.size,
        };
        (dx, baseline)
    }

    /// The rectangle the text covers on the page.
    pub(crate) fn bounds(&self) -> Rect {
        let w = text_width(&self.text, self.size);
        let (dx, baseline) = self.local_origin();
        let (along0, along1) = (dx, dx + w);
        let (across0, across1) = (
            baseline - BOX_ASCENT * self.size,
            baseline + BOX_DESCENT * self.size,
        );
        if self.vertical {
            // Rotated by 270°: along the text is up the page, across it is to the right.
            Rect::new(
                self.x + across0,
                self.y - along1,
                self.x + across1,
                self.y - along0,
            )
        } else {
            Rect::new(
                self.x + along0,
                self.y + across0,
                self.x + along1,
                self.y + across1,
            )
        }
    }
}

/// `text` shortened with an ellipsis, and if need be its size reduced down to `min_size`, so that
/// it fits in `max_width`; returns the text and the size to draw it at.
pub(crate) fn fit_text(text: &str, size: f64, min_size: f64, max_width: f64) -> (String, f64) {
    let w = text_width(text, size);
    if w <= max_width {
        return (text.to_string(), size);
    }
    let shrunk = (size * max_width / w).max(min_size).min(size);
    if text_width(text, shrunk) <= max_width {
        return (text.to_string(), shrunk);
    }
    let chars: Vec<char> = text.chars().collect();
    // Binary search on the number of kept characters; widths grow with the prefix length.
    let (mut lo, mut hi) = (0usize, chars.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        let candidate: String = chars[..mid]
            .iter()
            .collect::<String>()
            .trim_end()
            .to_string()
            + "…";
        if text_width(&candidate, shrunk) <= max_width {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    if lo == 0 {
        return (String::new(), shrunk);
    }
    let kept: String = chars[..lo].iter().collect();
    (kept.trim_end().to_string() + "…", shrunk)
}

#[cfg(test)]
mod tests {
    use plotters::style::BLACK;

    use super::*;

    #[test]
    fn fit_text_keeps_short_text_and_ellipsises_long_text() {
        ensure_font().unwrap();
        assert_eq!(
            fit_text("abc", 12.0, 10.0, 500.0),
            ("abc".to_string(), 12.0)
        );
        let (text, size) = fit_text("a rather long axis title that cannot fit", 12.0, 10.0, 80.0);
        assert!(text.ends_with('…'), "{text}");
        assert!(text_width(&text, size) <= 80.0);
        assert_eq!(fit_text("wide", 12.0, 12.0, 1.0).0, "");
    }

    #[test]
    fn vertical_text_bounds_are_tall_and_narrow() {
        ensure_font().unwrap();
        let t = Text::new("human label", 50.0, 300.0, 14.0, BLACK)
            .align(HAlign::Center, VAlign::Middle)
            .vertical();
        let b = t.bounds();
        assert!(b.height() > 3.0 * b.width(), "{b:?}");
        assert!((b.y0 + b.y1) / 2.0 - 300.0 < 1.0);
    }
}
