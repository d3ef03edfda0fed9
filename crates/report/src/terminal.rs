//! The results table as the CLI prints it (`run`, `show`): the terminal's columns in a
//! fixed-width grid, text to the left and figures to the right.

use crate::table::{Output, ResultsTable, SectionTable, Style, Unit};

/// One line per row (trials, cascades, panels) under a header of short column names.
pub fn grid(table: &ResultsTable) -> String {
    let columns = table.shown(Output::Terminal);
    let mut lines: Vec<Vec<String>> = Vec::with_capacity(table.rows.len() + 1);
    let mut header = vec!["trial".to_string()];
    header.extend(columns.iter().map(|&c| table.columns[c].short.clone()));
    lines.push(header);
    for row in &table.rows {
        let mut line = vec![row.name.clone()];
        line.extend(
            columns
                .iter()
                .map(|&c| row.cells[c].text(&table.columns[c], Style::Terminal)),
        );
        lines.push(line);
    }
    let left: Vec<bool> = std::iter::once(true)
        .chain(columns.iter().map(|&c| {
            matches!(
                table.columns[c].unit,
                Unit::Param | Unit::Text | Unit::Role | Unit::Standing
            )
        }))
        .collect();
    aligned(&lines, &left)
}

/// A section's table as the terminal prints it: indented two spaces, its rows' names to
/// the left, text to the left and figures to the right.
pub fn section(t: &SectionTable) -> String {
    let mut lines = vec![std::iter::once(t.subject.clone())
        .chain(t.columns.iter().map(|c| c.title.clone()))
        .collect::<Vec<_>>()];
    for row in &t.rows {
        lines.push(
            std::iter::once(row.name.clone())
                .chain(
                    row.cells
                        .iter()
                        .zip(&t.columns)
                        .map(|(cell, c)| cell.text(c, Style::Terminal)),
                )
                .collect(),
        );
    }
    let left: Vec<bool> = std::iter::once(true)
        .chain(
            t.columns
                .iter()
                .map(|c| matches!(c.unit, Unit::Text | Unit::Role)),
        )
        .collect();
    aligned(&lines, &left)
        .lines()
        .map(|l| format!("  {l}\n"))
        .collect()
}

/// `lines` as a fixed-width grid, two spaces between columns: a column to the left where
/// `left` says so, else to the right.
pub fn aligned(lines: &[Vec<String>], left: &[bool]) -> String {
    let widths: Vec<usize> = (0..left.len())
        .map(|c| {
            lines
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for line in lines {
        let cells: Vec<String> = line
            .iter()
            .zip(&widths)
            .zip(left)
            .map(|((cell, &w), &left)| {
                let pad = " ".repeat(w - cell.chars().count());
                if left {
                    format!("{cell}{pad}")
                } else {
                    format!("{pad}{cell}")
                }
            })
            .collect();
        out.push_str(cells.join("  ").trim_end());
        out.push('\n');
    }
    out
}
