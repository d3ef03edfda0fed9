//! Replay of a scene onto the plotters SVG and bitmap backends, and PNG encoding.
//!
//! The PNG is drawn at twice its size and averaged down, because the plotters rasteriser does not
//! anti-alias lines and markers.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::rect::Rect;
use super::scene::{Scene, Shape};
use super::text::{Text, FAMILY, PNG_SIZE_PER_EM, SVG_SIZE_PER_EM};
use super::ChartError;

fn backend_error(e: impl std::fmt::Display) -> ChartError {
    ChartError::Backend(e.to_string())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Target {
    Svg,
    Png,
}

/// Replays the scene onto `area`, with every coordinate and size multiplied by `f`.
fn replay<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    scene: &Scene,
    f: f64,
    target: Target,
) -> Result<(), ChartError> {
    let p = |(x, y): (f64, f64)| ((x * f).round() as i32, (y * f).round() as i32);
    let stroke_px = |w: f64| ((w * f).round() as u32).max(1);
    for shape in &scene.shapes {
        match shape {
            Shape::Path {
                points,
                color,
                width,
            } => {
                let pts: Vec<(i32, i32)> = points.iter().map(|&q| p(q)).collect();
                area.draw(&PathElement::new(
                    pts,
                    color.stroke_width(stroke_px(*width)),
                ))
                .map_err(backend_error)?;
            }
            Shape::Rect { rect, fill, stroke } => {
                let corners = [p((rect.x0, rect.y0)), p((rect.x1, rect.y1))];
                if let Some(c) = fill {
                    area.draw(&Rectangle::new(corners, c.filled()))
                        .map_err(backend_error)?;
                }
                if let Some((c, w)) = stroke {
                    // plotters strokes rectangles one pixel wide and joins wide paths unevenly,
                    // so a wide outline is four filled bands centred on the edges.
                    let h = w / 2.0;
                    let edges = [
                        Rect::new(rect.x0 - h, rect.y0 - h, rect.x1 + h, rect.y0 + h),
                        Rect::new(rect.x0 - h, rect.y1 - h, rect.x1 + h, rect.y1 + h),
                        Rect::new(rect.x0 - h, rect.y0 - h, rect.x0 + h, rect.y1 + h),
                        Rect::new(rect.x1 - h, rect.y0 - h, rect.x1 + h, rect.y1 + h),
                    ];
                    for e in edges {
                        let corners = [p((e.x0, e.y0)), p((e.x1, e.y1))];
                        area.draw(&Rectangle::new(corners, c.filled()))
                            .map_err(backend_error)?;
                    }
                }
            }
            Shape::Circle {
                x,
                y,
                r,
                fill,
                stroke,
            } => {
                let radius = (r * f).round().max(1.0) as u32;
                if let Some(c) = fill {
                    area.draw(&Circle::new(p((*x, *y)), radius, c.filled()))
                        .map_err(backend_error)?;
                }
                if let Some((c, w)) = stroke {
                    area.draw(&Circle::new(
                        p((*x, *y)),
                        radius,
                        c.stroke_width(stroke_px(*w)),
                    ))
                    .map_err(backend_error)?;
                }
            }
            Shape::Polygon {
                points,
                fill,
                stroke,
            } => {
                let pts: Vec<(i32, i32)> = points.iter().map(|&q| p(q)).collect();
                if let Some(c) = fill {
                    area.draw(&Polygon::new(pts.clone(), c.filled()))
                        .map_err(backend_error)?;
                }
                if let Some((c, w)) = stroke {
                    let mut ring = pts.clone();
                    ring.extend(pts.iter().take(2));
                    area.draw(&PathElement::new(ring, c.stroke_width(stroke_px(*w))))
                        .map_err(backend_error)?;
                }
            }
            Shape::Text(t) => draw_text(area, t, f, target)?,
        }
    }
    Ok(())
}

fn draw_text<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    t: &Text,
    f: f64,
    target: Target,
) -> Result<(), ChartError> {
    // Both backends are asked to anchor at the top left of the text, and each puts the baseline
    // a fixed fraction of the em below that anchor; undoing that offset here makes PNG and SVG
    // text land where the layout measured it.
    let (plotters_size, top_to_baseline) = match target {
        Target::Png => (t.size * PNG_SIZE_PER_EM, 0.5 * PNG_SIZE_PER_EM),
        Target::Svg => (t.size * SVG_SIZE_PER_EM, 0.76),
    };
    let (dx, baseline) = t.local_origin();
    let across = baseline - top_to_baseline * t.size;
    let (x, y) = if t.vertical {
        (t.x + across, t.y - dx)
    } else {
        (t.x + dx, t.y + across)
    };
    let mut style = FontDesc::new(
        FontFamily::Name(FAMILY),
        plotters_size * f,
        FontStyle::Normal,
    )
    .color(&t.color)
    .pos(Pos::new(HPos::Left, VPos::Top));
    if t.vertical {
        style = style.transform(FontTransform::Rotate270);
    }
    area.draw_text(
        &t.text,
        &style,
        ((x * f).round() as i32, (y * f).round() as i32),
    )
    .map_err(backend_error)
}

pub(crate) fn to_svg(scene: &Scene) -> Result<String, ChartError> {
    let mut out = String::new();
    {
        let root =
            SVGBackend::with_string(&mut out, (scene.width, scene.height)).into_drawing_area();
        root.fill(&WHITE).map_err(backend_error)?;
        replay(&root, scene, 1.0, Target::Svg)?;
        root.present().map_err(backend_error)?;
    }
    Ok(out)
}

/// The largest chart drawn at twice its size before averaging down; bigger ones are drawn as is.
const MAX_SUPERSAMPLED_PIXELS: u64 = 2048 * 2048;

pub(crate) fn to_png(scene: &Scene) -> Result<Vec<u8>, ChartError> {
    let (w, h) = (scene.width, scene.height);
    let factor: u32 = if u64::from(w) * u64::from(h) <= MAX_SUPERSAMPLED_PIXELS {
        2
    } else {
        1
    };
    let (big_w, big_h) = (w * factor, h * factor);
    let mut big = vec![255u8; big_w as usize * big_h as usize * 3];
    {
        let root = BitMapBackend::with_buffer(&mut big, (big_w, big_h)).into_drawing_area();
        replay(&root, scene, f64::from(factor), Target::Png)?;
        root.present().map_err(backend_error)?;
    }
    let pixels = downsample(&big, big_w as usize, big_h as usize, factor as usize);
    let mut out = Vec::new();
    image::ImageEncoder::write_image(
        image::codecs::png::PngEncoder::new(&mut out),
        &pixels,
        w,
        h,
        image::ExtendedColorType::Rgb8,
    )
    .map_err(|e| ChartError::PngEncode(e.to_string()))?;
    Ok(out)
}

/// Averages `factor`×`factor` blocks of an RGB buffer.
fn downsample(big: &[u8], big_w: usize, big_h: usize, factor: usize) -> Vec<u8> {
    if factor == 1 {
        return big.to_vec();
    }
    let (w, h) = (big_w / factor, big_h / factor);
    let n = (factor * factor) as u32;
    let mut out = vec![0u8; w * h * 3];
    for y in 0..h {
        for x in 0..w {
            for c in 0..3 {
                let mut sum = 0u32;
                for dy in 0..factor {
                    let row = (y * factor + dy) * big_w;
                    for dx in 0..factor {
                        sum += u32::from(big[(row + x * factor + dx) * 3 + c]);
                    }
                }
                out[(y * w + x) * 3 + c] = ((sum + n / 2) / n) as u8;
            }
        }
    }
    out
}
