//! `report.md`: the same reading as the HTML report, for a README, a pull request or a
//! paper draft; charts are linked as the PNG files beside it.

use std::fmt::Write;

use judgelab_core::metrics::Quality;

use crate::analysis::{baseline_title, cascade_label, cost_text, estimate_text, Analysis};

/// `charts` lists (file name, caption) of the PNGs written beside the report.
pub fn render(a: &Analysis<'_>, charts: &[(String, String)]) -> String {
    let e = &a.summary.experiment;
    let q = a.quality_title();
    let mut m = String::new();
    let _ = writeln!(m, "# Judgelab report: {}\n", e.name);
    let _ = writeln!(
        m,
        "Dataset **{}** ({} task), {} items judged by each of {} trials, {} repeat(s); {}/{} calls stored. Intervals are 95% bootstrap percentile intervals over items ({} resamples, seed {}).\n",
        e.dataset,
        e.task,
        e.n_items,
        a.summary.trials.len(),
        e.repeats,
        e.n_stored,
        e.n_expected,
        a.summary.bootstrap.resamples,
        a.summary.bootstrap.seed
    );
    m.push_str("## Which configuration to pick\n\n");
    if let Some(l) = a.labels_reading() {
        let _ = writeln!(m, "**{l}**\n");
    }
    for f in &a.findings {
        let _ = writeln!(m, "- {f}");
    }
    let humans = a.humans_readings();
    if !humans.is_empty() {
        m.push_str("\nPeople and the judge (the human ceiling):\n\n");
        for r in &humans {
            let _ = writeln!(m, "- {r}");
        }
    }
    m.push_str("\n## Is the pick confirmed?\n\n");
    if e.n_test_items == 0 {
        m.push_str("Not confirmed: no test split (`[limits] test = N`), so every score comes from the items that ranked the trials.\n");
    } else if !e.selected {
        let _ = writeln!(
            m,
            "Not yet: the {} test items are judged once the dev split is complete.",
            e.n_test_items
        );
    } else {
        let _ = writeln!(
            m,
            "| trial | kept as | dev {q} | test {q} | dev − test |\n|---|---|---|---|---|"
        );
        for c in a.confirmed() {
            let _ = writeln!(
                m,
                "| #{} | {} | {} | {} | {} |",
                c.trial.id,
                c.role,
                estimate_text(c.dev),
                estimate_text(c.test),
                c.gap.map_or("—".into(), |g| format!("{g:+.3}"))
            );
        }
    }
    let dropped: Vec<String> = a
        .summary
        .trials
        .iter()
        .filter_map(|t| Some(format!("#{} after round {}", t.id, t.dropped?.round)))
        .collect();
    if !a.summary.race.is_empty() {
        let _ = writeln!(
            m,
            "\nRaced: {} of {} trials dropped ({}).",
            dropped.len(),
            a.summary.trials.len(),
            if dropped.is_empty() {
                "none".into()
            } else {
                dropped.join(", ")
            }
        );
    }
    let trusted = a.trusted();
    if !trusted.is_empty() {
        m.push_str("\n## How far to trust it\n\n");
        for &i in &trusted {
            let t = &a.summary.trials[i];
            let (Some(c), Some(s)) = (&t.calibration, &t.selective) else {
                continue;
            };
            let num = |x: Option<f64>| x.map_or("—".into(), |v| format!("{v:.3}"));
            let _ = writeln!(
                m,
                "- Trial #{} ({} confidence, {} verdicts): ECE {}, Brier {}; {}.",
                t.id,
                c.confidence_kind.name(),
                c.n,
                num(c.ece),
                num(c.brier),
                s.reading()
            );
        }
        for c in &a.summary.cascades {
            let _ = writeln!(m, "- {}: {}.", cascade_label(c), a.cascade_reading(c));
        }
    }
    m.push_str("\n## Trials\n\n");
    let _ = writeln!(
        m,
        "★ marks the best trial: {}. “(pick)” marks the recommendation.\n",
        a.ranking()
    );
    let mut header: Vec<String> = vec!["trial".into()];
    header.extend(a.varying.iter().map(|p| p.key().to_string()));
    header.extend([
        "n".to_string(),
        q.to_string(),
        "accuracy".into(),
        "vs best".into(),
        "McNemar p".into(),
        "parse failures".into(),
        "cost".into(),
        a.axis_title(a.latency),
        "quality–cost front".into(),
        "quality–latency front".into(),
    ]);
    let _ = writeln!(m, "| {} |", header.join(" | "));
    let _ = writeln!(m, "|{}", "---|".repeat(header.len()));
    for (i, t) in a.summary.trials.iter().enumerate() {
        let mm = &t.metrics;
        let mut row: Vec<String> = vec![format!(
            "#{}{}{}",
            t.id,
            if Some(i) == a.best { " ★" } else { "" },
            if Some(i) == a.recommended {
                " (pick)"
            } else {
                ""
            }
        )];
        row.extend(a.varying.iter().map(|p| p.label(&t.params)));
        let (vs, p) = match &a.versus_best[i] {
            Some(c) => (estimate_text(c.difference), format!("{:.3}", c.mcnemar_p)),
            None => ("best".into(), String::new()),
        };
        row.extend([
            mm.n.to_string(),
            estimate_text(mm.estimate(a.quality)),
            estimate_text(mm.estimate(Quality::Accuracy)),
            vs,
            p,
            mm.parse_failure_rate
                .map_or("—".into(), |r| format!("{:.1}%", r * 100.0)),
            cost_text(a.cost, mm),
            mm.latency_ms.p95.map_or("—".into(), |v| format!("{v:.0}")),
            a.front_cost[i].as_str().to_string(),
            a.front_latency[i].as_str().to_string(),
        ]);
        let _ = writeln!(m, "| {} |", row.join(" | "));
    }
    for c in &a.summary.cascades {
        let mm = &c.metrics;
        let mut row: Vec<String> = vec![format!("#{}→#{} (cascade)", c.cheap, c.strong)];
        row.extend(a.varying.iter().map(|_| String::new()));
        row.extend([
            mm.n.to_string(),
            estimate_text(mm.estimate(a.quality)),
            estimate_text(mm.estimate(Quality::Accuracy)),
            "—".into(),
            String::new(),
            mm.parse_failure_rate
                .map_or("—".into(), |r| format!("{:.1}%", r * 100.0)),
            cost_text(a.cost, mm),
            mm.latency_ms.p95.map_or("—".into(), |v| format!("{v:.0}")),
            "composed".into(),
            "composed".into(),
        ]);
        let _ = writeln!(m, "| {} |", row.join(" | "));
    }
    for (i, panel) in a.summary.panels.iter().enumerate() {
        let mm = &panel.metrics;
        let mut row: Vec<String> = vec![format!("{} (panel)", panel.name)];
        row.extend(a.varying.iter().map(|_| String::new()));
        let (vs, p) = match &a.panel_versus_best[i] {
            Some(c) => (estimate_text(c.difference), format!("{:.3}", c.mcnemar_p)),
            None => ("—".into(), String::new()),
        };
        row.extend([
            mm.n.to_string(),
            estimate_text(mm.estimate(a.quality)),
            estimate_text(mm.estimate(Quality::Accuracy)),
            vs,
            p,
            mm.parse_failure_rate
                .map_or("—".into(), |r| format!("{:.1}%", r * 100.0)),
            cost_text(a.cost, mm),
            mm.latency_ms.p95.map_or("—".into(), |v| format!("{v:.0}")),
            "composed".into(),
            "composed".into(),
        ]);
        let _ = writeln!(m, "| {} |", row.join(" | "));
    }
    if !a.summary.panels.is_empty() {
        m.push_str("\nPanels (composed from the members' stored verdicts, no new call; cost: the members' sum; latency: the slowest member's):\n\n");
        for (i, panel) in a.summary.panels.iter().enumerate() {
            let _ = writeln!(m, "- {}: {}.", panel.name, a.panel_reading(i));
        }
    }
    m.push_str("\nBaselines (over the same items):\n\n");
    for b in a.summary.baselines.values() {
        let _ = writeln!(
            m,
            "- {}: {q} {}, accuracy {}",
            baseline_title(b),
            estimate_text(b.quality.get(a.quality)),
            estimate_text(b.quality.get(Quality::Accuracy))
        );
    }
    m.push_str("\n## Charts\n\n");
    for (file, caption) in charts {
        let _ = writeln!(m, "![{caption}]({file})\n");
    }
    let _ = writeln!(
        m,
        "## Reproduce this run\n\n`judgelab run experiment.toml`, then `judgelab report {} --out report`, with this `experiment.toml`:\n\n```toml\n{}\n```",
        e.name,
        e.spec.trim_end()
    );
    m
}
