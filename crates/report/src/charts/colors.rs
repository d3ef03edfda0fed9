//! The colours every chart shares: text, muted text, white, and the series palette.

use plotters::style::RGBColor;

pub(crate) const INK: RGBColor = RGBColor(0x22, 0x22, 0x22);
pub(crate) const MUTED: RGBColor = RGBColor(0x55, 0x55, 0x55);
pub(crate) const WHITE: RGBColor = RGBColor(255, 255, 255);

/// Okabe–Ito colours (yellow left out: too pale on white), then three Tableau colours; all stay
/// distinguishable with the common colour-vision deficiencies.
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(0x00, 0x72, 0xB2),
    RGBColor(0xD5, 0x5E, 0x00),
    RGBColor(0x00, 0x9E, 0x73),
    RGBColor(0xCC, 0x79, 0xA7),
    RGBColor(0xE6, 0x9F, 0x00),
    RGBColor(0x56, 0xB4, 0xE9),
    RGBColor(0x00, 0x00, 0x00),
    RGBColor(0x8C, 0x56, 0x4B),
    RGBColor(0xBC, 0xBD, 0x22),
    RGBColor(0x7F, 0x7F, 0x7F),
];
