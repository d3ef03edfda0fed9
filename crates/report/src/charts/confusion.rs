//! The confusion matrix: human labels against judge verdicts as a heat map of counts.

use plotters::style::RGBColor;

use super::axes::{self, AXIS_TITLE_SIZE, PAD};
use super::colors::{INK, MUTED, WHITE};
use super::legend::{self, Glyph, LegendEntry};
use super::rect::Rect;
use super::scene::{luminance, mix, Scene};
use super::text::{fit_text, line_height, text_width, HAlign, Text, VAlign};
use super::{ChartError, ConfusionChart};

/// Sequential scales from white, in three stops so that mid shares stay distinguishable.
const BLUES: [RGBColor; 3] = [
    RGBColor(0xf4, 0xf8, 0xfc),
    RGBColor(0x6b, 0xae, 0xd6),
    RGBColor(0x08, 0x30, 0x6b),
];
const ORANGES: [RGBColor; 3] = [
    RGBColor(0xfd, 0xf5, 0xec),
    RGBColor(0xfd, 0x8d, 0x3c),
    RGBColor(0x7f, 0x27, 0x04),
];

fn shade(scale: &[RGBColor; 3], t: f64) -> RGBColor {
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    if t < 0.5 {
        mix(scale[0], scale[1], t * 2.0)
    } else {
        mix(scale[1], scale[2], (t - 0.5) * 2.0)
    }
}

/// Columns for verdicts the judge failed to give get their own colour scale.
fn is_failure(col: &str) -> bool {
    let c = col.to_lowercase();
    c.contains("parse") || c.contains("fail")
}

fn same_label(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// Splits a column name over two lines when it is too wide for its column.
fn column_lines(name: &str, size: f64, min_size: f64, width: f64) -> (Vec<String>, f64) {
    if text_width(name, size) <= width {
        return (vec![name.to_string()], size);
    }
    // Split at the space that makes the wider of the two lines narrowest.
    let widest_of =
        |i: usize| text_width(name[..i].trim(), size).max(text_width(name[i..].trim(), size));
    let split = name
        .match_indices(' ')
        .map(|(i, _)| i)
        .min_by(|&i, &j| widest_of(i).total_cmp(&widest_of(j)));
    if let Some(split) = split {
        let (a, b) = (name[..split].trim(), name[split..].trim());
        let widest = widest_of(split);
        let size = if widest > width {
            (size * width / widest).max(min_size)
        } else {
            size
        };
        return (
            vec![
                fit_text(a, size, size, width).0,
                fit_text(b, size, size, width).0,
            ],
            size,
        );
    }
    let (text, size) = fit_text(name, size, min_size, width);
    (vec![text], size)
}

/// Draws the chart in named steps: the title, the legend, the cells, their labels and the
/// colour bar, each placed by one [`Layout`].
pub(crate) fn draw(scene: &mut Scene, chart: &ConfusionChart) -> Result<(), ChartError> {
    check(chart)?;
    if chart.rows.is_empty() || chart.cols.is_empty() {
        axes::draw_no_data(scene, &chart.title);
        return Ok(());
    }
    let k = scene.k;
    let top = axes::draw_title(scene, &chart.title) + 6.0 * k;
    let bottom = draw_legend(scene, chart) - 12.0 * k;
    let layout = Layout::new(scene, chart, top, bottom);
    draw_cells(scene, chart, &layout);
    draw_labels(scene, chart, &layout);
    draw_colour_bar(scene, &layout);
    Ok(())
}

/// The counts must form a matrix with a row per human label and a column per verdict.
fn check(chart: &ConfusionChart) -> Result<(), ChartError> {
    if chart.counts.len() != chart.rows.len() {
        return Err(ChartError::InvalidData(format!(
            "confusion matrix has {} rows of counts for {} row labels",
            chart.counts.len(),
            chart.rows.len()
        )));
    }
    if let Some((i, row)) = chart
        .counts
        .iter()
        .enumerate()
        .find(|(_, row)| row.len() != chart.cols.len())
    {
        return Err(ChartError::InvalidData(format!(
            "confusion matrix row {i} has {} counts for {} column labels",
            row.len(),
            chart.cols.len()
        )));
    }
    Ok(())
}

/// The legend along the bottom, with an entry only for what the chart shows; returns its
/// top edge.
fn draw_legend(scene: &mut Scene, chart: &ConfusionChart) -> f64 {
    let k = scene.k;
    let any_failure = chart.cols.iter().any(|c| is_failure(c));
    let any_diagonal = chart
        .rows
        .iter()
        .any(|r| chart.cols.iter().any(|c| same_label(r, c)));
    let mut entries = Vec::new();
    if any_diagonal {
        entries.push(LegendEntry::new(
            Glyph::Swatch {
                fill: WHITE,
                stroke: Some((INK, 2.2 * k)),
            },
            "agreement (same label)",
        ));
    }
    entries.push(LegendEntry::new(
        Glyph::Swatch {
            fill: shade(&BLUES, 0.6),
            stroke: None,
        },
        "share of the human label's items",
    ));
    if any_failure {
        entries.push(LegendEntry::new(
            Glyph::Swatch {
                fill: shade(&ORANGES, 0.6),
                stroke: None,
            },
            "parse failures (own scale)",
        ));
    }
    let (w, h) = (scene.w(), scene.h());
    legend::draw_rows(scene, &entries, PAD * k, w - PAD * k, h - PAD * k)
}

/// Where everything goes: the grid between the title and the legend, centred with the row
/// labels on its left and the row totals and colour bar on its right.
struct Layout {
    k: f64,
    grid: Rect,
    cell_w: f64,
    cell_h: f64,
    row_labels: Vec<String>,
    row_size: f64,
    label_size: f64,
    axis_title: f64,
    totals: Vec<u64>,
    total_texts: Vec<String>,
    total_size: f64,
    totals_w: f64,
    left_w: f64,
    col_labels_h: f64,
    bar_w: f64,
    bar_ticks_w: f64,
}

impl Layout {
    fn new(scene: &Scene, chart: &ConfusionChart, top: f64, bottom: f64) -> Layout {
        let k = scene.k;
        let w = scene.w();
        let (n_rows, n_cols) = (chart.rows.len(), chart.cols.len());
        let axis_title = AXIS_TITLE_SIZE * k;
        let label_size = 13.0 * k;
        let total_size = 12.0 * k;
        let x_title_h = line_height(axis_title);
        // Room for column names of up to two lines, with gaps above and below them.
        let col_labels_h = 7.0 * k + 2.0 * line_height(label_size) + 10.0 * k;

        // Horizontal budget: y title, row labels, grid, row totals, colour bar with its ticks.
        let (row_labels, row_size) = row_labels(chart, label_size, 10.0 * k, w * 0.22);
        let row_labels_w = row_labels
            .iter()
            .map(|r| text_width(r, row_size))
            .fold(0.0, f64::max);
        let totals: Vec<u64> = chart.counts.iter().map(|r| r.iter().sum()).collect();
        let total_texts: Vec<String> = totals.iter().map(|t| format!("n={t}")).collect();
        let totals_w = total_texts
            .iter()
            .map(|t| text_width(t, total_size))
            .fold(0.0, f64::max);
        let bar_w = 14.0 * k;
        let bar_ticks_w = text_width("100%", 11.0 * k);
        let left_w = line_height(axis_title) + 10.0 * k + row_labels_w + 8.0 * k;
        let right_w = 10.0 * k
            + totals_w
            + 18.0 * k
            + bar_w
            + 5.0 * k
            + bar_ticks_w
            + 8.0 * k
            + line_height(11.5 * k);
        let avail_w = (w - 2.0 * PAD * k - left_w - right_w).max(n_cols as f64 * 10.0);
        let avail_h = (bottom - top - col_labels_h - x_title_h - 6.0 * k).max(n_rows as f64 * 10.0);
        let cell_h = (avail_h / n_rows as f64).min(avail_w / n_cols as f64);
        // Cells may be wider than tall, which leaves room for long verdict names.
        let cell_w = (avail_w / n_cols as f64).min(cell_h * 1.6);
        let grid_w = cell_w * n_cols as f64;
        let grid_h = cell_h * n_rows as f64;
        let block_w = left_w + grid_w + right_w;
        let x0 = (w - block_w) / 2.0 + left_w;
        let block_h = grid_h + col_labels_h + x_title_h;
        let y0 = top + ((bottom - top - block_h) / 2.0).max(0.0);
        Layout {
            k,
            grid: Rect::new(x0, y0, x0 + grid_w, y0 + grid_h),
            cell_w,
            cell_h,
            row_labels,
            row_size,
            label_size,
            axis_title,
            totals,
            total_texts,
            total_size,
            totals_w,
            left_w,
            col_labels_h,
            bar_w,
            bar_ticks_w,
        }
    }

    fn cell(&self, i: usize, j: usize) -> Rect {
        Rect::new(
            self.grid.x0 + j as f64 * self.cell_w,
            self.grid.y0 + i as f64 * self.cell_h,
            self.grid.x0 + (j + 1) as f64 * self.cell_w,
            self.grid.y0 + (i + 1) as f64 * self.cell_h,
        )
    }
}

/// The human labels fitted into `max_w`, all at the size the longest of them needs.
fn row_labels(chart: &ConfusionChart, size: f64, min_size: f64, max_w: f64) -> (Vec<String>, f64) {
    let fitted: Vec<(String, f64)> = chart
        .rows
        .iter()
        .map(|r| fit_text(r, size, min_size, max_w))
        .collect();
    let size = fitted.iter().map(|f| f.1).fold(size, f64::min);
    (
        fitted
            .into_iter()
            .map(|f| fit_text(&f.0, size, size, max_w).0)
            .collect(),
        size,
    )
}

/// Each cell shaded by its share of the row, with its count (and share, where it fits);
/// white gaps between cells, then the agreement outlines on top of them.
fn draw_cells(scene: &mut Scene, chart: &ConfusionChart, l: &Layout) {
    let k = l.k;
    let (grid, cell_w, cell_h) = (l.grid, l.cell_w, l.cell_h);
    let count_size = (cell_h * 0.24).clamp(10.0 * k, 22.0 * k);
    let share_size = count_size * 0.72;
    let show_share = cell_h >= 2.8 * count_size;
    for (i, row) in chart.counts.iter().enumerate() {
        for (j, &count) in row.iter().enumerate() {
            let total = l.totals[i];
            let share = if total == 0 {
                0.0
            } else {
                count as f64 / total as f64
            };
            let scale = if is_failure(&chart.cols[j]) {
                &ORANGES
            } else {
                &BLUES
            };
            let fill = shade(scale, share);
            let r = l.cell(i, j);
            scene.rect(r, Some(fill), None);
            let ink = if luminance(fill) < 0.4 { WHITE } else { INK };
            let (cx, cy) = ((r.x0 + r.x1) / 2.0, (r.y0 + r.y1) / 2.0);
            let count_text = fit_text(&count.to_string(), count_size, 8.0 * k, cell_w - 6.0 * k);
            // A human label without items has no shares; a dash says so better than "0%".
            let share_text = if total == 0 {
                "–".to_string()
            } else {
                format!("{:.0}%", share * 100.0)
            };
            if show_share && text_width(&share_text, share_size) <= cell_w - 6.0 * k {
                scene.text(
                    Text::new(count_text.0, cx, cy - 0.1 * count_size, count_text.1, ink)
                        .align(HAlign::Center, VAlign::Bottom),
                );
                scene.text(
                    Text::new(share_text, cx, cy + 0.25 * count_size, share_size, ink)
                        .align(HAlign::Center, VAlign::Top),
                );
            } else {
                scene.text(
                    Text::new(count_text.0, cx, cy, count_text.1, ink)
                        .align(HAlign::Center, VAlign::Middle),
                );
            }
        }
    }
    for i in 1..chart.rows.len() {
        let y = grid.y0 + i as f64 * cell_h;
        scene.line((grid.x0, y), (grid.x1, y), WHITE, 2.0 * k);
    }
    for j in 1..chart.cols.len() {
        let x = grid.x0 + j as f64 * cell_w;
        scene.line((x, grid.y0), (x, grid.y1), WHITE, 2.0 * k);
    }
    for (i, row) in chart.rows.iter().enumerate() {
        for (j, col) in chart.cols.iter().enumerate() {
            if same_label(row, col) {
                scene.rect(l.cell(i, j).inflate(-1.6 * k), None, Some((INK, 2.2 * k)));
            }
        }
    }
}

/// Row labels and totals, column names, and the two axis titles.
fn draw_labels(scene: &mut Scene, chart: &ConfusionChart, l: &Layout) {
    let (k, grid) = (l.k, l.grid);
    for (i, label) in l.row_labels.iter().enumerate() {
        let r = l.cell(i, 0);
        scene.text(
            Text::new(
                label.clone(),
                grid.x0 - 8.0 * k,
                (r.y0 + r.y1) / 2.0,
                l.row_size,
                INK,
            )
            .align(HAlign::Right, VAlign::Middle),
        );
        scene.text(
            Text::new(
                l.total_texts[i].clone(),
                grid.x1 + 10.0 * k,
                (r.y0 + r.y1) / 2.0,
                l.total_size,
                MUTED,
            )
            .align(HAlign::Left, VAlign::Middle),
        );
    }
    // One size for all column names, the smallest any of them needs, so they read as a set.
    let width = l.cell_w - 6.0 * k;
    let col_size = chart
        .cols
        .iter()
        .map(|c| column_lines(c, l.label_size, 9.0 * k, width).1)
        .fold(l.label_size, f64::min);
    for (j, col) in chart.cols.iter().enumerate() {
        let r = l.cell(0, j);
        let (lines, size) = column_lines(col, col_size, col_size, width);
        for (n, line) in lines.into_iter().enumerate() {
            let y = grid.y1 + 7.0 * k + n as f64 * line_height(size);
            scene.text(
                Text::new(line, (r.x0 + r.x1) / 2.0, y, size, INK)
                    .align(HAlign::Center, VAlign::Top),
            );
        }
    }
    scene.text(
        Text::new(
            "judge verdict",
            (grid.x0 + grid.x1) / 2.0,
            grid.y1 + l.col_labels_h,
            l.axis_title,
            INK,
        )
        .align(HAlign::Center, VAlign::Top),
    );
    scene.text(
        Text::new(
            "human label",
            grid.x0 - l.left_w + 2.0 * k,
            (grid.y0 + grid.y1) / 2.0,
            l.axis_title,
            INK,
        )
        .align(HAlign::Center, VAlign::Top)
        .vertical(),
    );
}

/// The colour bar of the main scale; the failure scale is explained in the legend.
fn draw_colour_bar(scene: &mut Scene, l: &Layout) {
    let (k, grid) = (l.k, l.grid);
    let x0 = grid.x1 + 10.0 * k + l.totals_w + 18.0 * k;
    let bar = Rect::new(x0, grid.y0, x0 + l.bar_w, grid.y1);
    let steps = 64;
    for s in 0..steps {
        let t0 = s as f64 / steps as f64;
        let t1 = (s + 1) as f64 / steps as f64;
        let band = Rect::new(
            bar.x0,
            bar.y1 - t1 * bar.height(),
            bar.x1,
            bar.y1 - t0 * bar.height() + 0.5,
        );
        scene.rect(band, Some(shade(&BLUES, (t0 + t1) / 2.0)), None);
    }
    scene.rect(bar, None, Some((MUTED, 1.0 * k)));
    for (t, label) in [(0.0, "0%"), (0.5, "50%"), (1.0, "100%")] {
        let y = bar.y1 - t * bar.height();
        scene.line((bar.x1, y), (bar.x1 + 4.0 * k, y), MUTED, 1.0 * k);
        scene.text(
            Text::new(label, bar.x1 + 6.0 * k, y, 11.0 * k, INK)
                .align(HAlign::Left, VAlign::Middle),
        );
    }
    scene.text(
        Text::new(
            "share of row",
            bar.x1 + 6.0 * k + l.bar_ticks_w + 8.0 * k,
            (bar.y0 + bar.y1) / 2.0,
            11.5 * k,
            INK,
        )
        .align(HAlign::Center, VAlign::Top)
        .vertical(),
    );
}
