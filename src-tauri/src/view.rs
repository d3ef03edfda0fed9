//! The results view, computed from an experiment's summary without Tauri: the trials table
//! with intervals and baselines, and the Pareto charts as the report's own SVG with where
//! each trial was drawn. The commands and the results benchmark share it.

use judgelab_core::annotation::humans::HumanAgreement;
use judgelab_core::metrics::{Estimate, Quality};
use judgelab_core::results::ExperimentSummary;
use judgelab_core::sweep::Axis;
use judgelab_report::analysis::{cascade_label, panel_label, Analysis};
use judgelab_report::findings::{Finding, Findings, Kind, Subject};
use judgelab_report::{Chart, ParetoChart};

use judgelab_report::table::{
    Cell as TableValue, Output, ResultsTable, Row, RowKind, SectionTable, Style, Unit,
};

use crate::dto::{
    CascadeView, Cell, ChartView, Column, ContributionView, CriterionChoice, FigureView,
    FindingKind, FindingView, Hotspot, HumansView, JudgeWithRaterView, LabelsView, LoadLevelView,
    LoadView, PanelView, Param, RaterPairView, RaterView, Results, SectionRowView,
    SectionTableView, SelectionView, TableCell, TableColumn, TableRow, TableRowKind, TableUnit,
    TableView, TrialView, TrustView,
};
use crate::error::AppResult;

/// The chart size the app shows (the reports' SVG size).
const CHART: (u32, u32) = judgelab_report::SVG_SIZE;

/// The results view of `summary`, its fronts and recommendation by `q`.
pub fn results(summary: &ExperimentSummary, q: Quality) -> AppResult<Results> {
    let a = Analysis::new(summary, q);
    let findings = Findings::new(&a);
    let task = a.task;
    // The metrics the view can be read by (an error such as MAE ranks nothing).
    let qualities = Quality::ranking(task);
    let e = &summary.experiment;
    Ok(Results {
        name: e.name.clone(),
        dataset: e.dataset.clone(),
        task: e.task.to_string(),
        n_items: e.n_items as u32,
        n_expected: e.n_expected as u32,
        n_stored: e.n_stored as u32,
        spec: e.spec.clone(),
        metric: q.name().to_string(),
        columns: qualities
            .iter()
            .map(|q| Column {
                key: q.name().to_string(),
                title: q.title(task).to_string(),
            })
            .collect(),
        table: table_view(&ResultsTable::new(&a, &[]), |_| true),
        trials: (0..summary.trials.len())
            .map(|i| trial_view(&a, i))
            .collect(),
        findings: findings.of(&Kind::PICK).map(finding_view).collect(),
        pareto_cost: chart_view(summary, a.pareto_chart(a.cost))?,
        pareto_latency: chart_view(summary, a.pareto_chart(a.latency))?,
        cost_title: a.cost.title(task),
        resamples: summary.bootstrap.resamples,
        load: load_view(&a)?,
        selection: selection_view(&a, &findings)?,
        trust: trust_view(&a, &findings)?,
        panels: (0..summary.panels.len())
            .map(|i| panel_view(&a, &findings, i))
            .collect(),
        labels: labels_view(summary),
        humans: summary.humans.as_ref().map(|h| humans_view(h, q)),
    })
}

fn labels_view(summary: &ExperimentSummary) -> LabelsView {
    let l = &summary.labels;
    LabelsView {
        kind: l.labels.kind().to_string(),
        annotator: l.labels.annotator().map(str::to_string),
        description: l.description.clone(),
        annotators: l.annotators.clone(),
        n_labelled: l.n_labelled as u32,
        criteria: l
            .criteria
            .iter()
            .map(|c| CriterionChoice {
                name: c.name.clone(),
                title: c.describe(),
            })
            .collect(),
        criterion: l.criterion.as_ref().map(|c| c.name.clone()),
    }
}

fn humans_view(h: &HumanAgreement, q: Quality) -> HumansView {
    HumansView {
        raters: h
            .raters
            .iter()
            .map(|r| RaterView {
                name: r.name.clone(),
                n_items: r.n_items as u32,
            })
            .collect(),
        pairs: h
            .pairs
            .iter()
            .map(|p| RaterPairView {
                first: p.first.clone(),
                second: p.second.clone(),
                n_items: p.n_items as u32,
                quality: cell(p.quality.get(q)),
            })
            .collect(),
        alpha: cell(h.alpha),
        alpha_raters: h.alpha_raters as u32,
        combined: h.combined,
        level: match h.level {
            judgelab_core::metrics::alpha::Level::Nominal => "nominal",
            judgelab_core::metrics::alpha::Level::Ordinal => "ordinal",
            judgelab_core::metrics::alpha::Level::Interval => "interval",
        }
        .to_string(),
        n_shared: h.n_shared as u32,
        judge: h
            .judge
            .iter()
            .map(|j| JudgeWithRaterView {
                rater: j.rater.clone(),
                trial_id: j.trial_id as u32,
                n_items: j.n_items as u32,
                quality: cell(j.quality.get(q)),
            })
            .collect(),
    }
}

/// A panel as the trials table and the panels card show it.
fn panel_view(a: &Analysis<'_>, findings: &Findings, i: usize) -> PanelView {
    let p = &a.summary.panels[i];
    let subject = Subject::Panel(p.name.clone());
    PanelView {
        name: p.name.clone(),
        label: panel_label(p),
        members: p.members.iter().map(|&m| m as u32).collect(),
        rule: p.rule.name().to_string(),
        ties: p.ties.map(|t| t.name().to_string()),
        from_file: a
            .summary
            .experiment
            .parsed
            .panels
            .iter()
            .any(|f| f.name == p.name),
        members_alpha: cell(p.members_agreement.alpha),
        members_n: p.members_agreement.n as u32,
        contributions: p
            .contributions
            .iter()
            .map(|c| ContributionView {
                member: c.member as u32,
                without: cell(c.without),
                difference: cell(c.difference),
            })
            .collect(),
        reading: reading(findings, Kind::Panel, &subject),
    }
}

/// The report's "How far to trust it" section, as data.
fn trust_view(a: &Analysis<'_>, findings: &Findings) -> AppResult<TrustView> {
    let target = a.summary.experiment.parsed.trust.target;
    let svg = |chart: Option<judgelab_report::LineChart>| -> AppResult<Option<String>> {
        chart
            .map(|c| judgelab_report::svg(&Chart::Lines(c), CHART.0, CHART.1))
            .transpose()
            .map_err(Into::into)
    };
    let cascades = a
        .summary
        .cascades
        .iter()
        .map(|c| CascadeView {
            label: cascade_label(c),
            cheap: c.cheap as u32,
            strong: c.strong as u32,
            threshold: c.threshold,
            escalated: c.escalated,
            quality: cell(c.metrics.estimate(a.quality)),
            cost: a.cost.value(&c.metrics),
            reading: reading(
                findings,
                Kind::Cascade,
                &Subject::Cascade {
                    cheap: c.cheap,
                    strong: c.strong,
                    threshold: c.threshold,
                },
            ),
        })
        .collect();
    Ok(TrustView {
        agreement: target.agreement,
        risk: target.risk,
        readings: findings
            .of(&[Kind::Trust])
            .map(|f| f.text.clone())
            .collect(),
        table: section_view(&SectionTable::trust(a)),
        cascades,
        reliability_svg: svg(a.reliability_chart())?,
        coverage_svg: svg(a.coverage_chart())?,
    })
}

/// The report's "Is the pick confirmed?" section, as data.
fn selection_view(a: &Analysis<'_>, findings: &Findings) -> AppResult<SelectionView> {
    let e = &a.summary.experiment;
    let kept = if e.selected && e.n_test_items > 0 {
        SectionTable::confirmation(a)
    } else {
        SectionTable {
            rows: Vec::new(),
            ..SectionTable::confirmation(a)
        }
    };
    Ok(SelectionView {
        findings: [Kind::Confirmation, Kind::Selection, Kind::Race]
            .iter()
            .flat_map(|kind| findings.of(std::slice::from_ref(kind)))
            .map(finding_view)
            .collect(),
        kept: section_view(&kept),
        dropped: section_view(&SectionTable::dropped(a)),
        race_svg: a
            .race_chart()
            .map(|chart| judgelab_report::svg(&Chart::Lines(chart), CHART.0, CHART.1))
            .transpose()?,
    })
}

/// The latest ramp, with the report's two charts of it.
fn load_view(a: &Analysis<'_>) -> AppResult<Option<LoadView>> {
    let (Some(r), Some((latency, throughput))) = (a.summary.load_ramps.last(), a.load_charts())
    else {
        return Ok(None);
    };
    let svg = |chart: judgelab_report::LineChart| {
        judgelab_report::svg(&Chart::Lines(chart), CHART.0, CHART.1)
    };
    Ok(Some(LoadView {
        trial_id: r.trial_id as u32,
        trial_label: a
            .summary
            .trial_index(r.trial_id)
            .map_or_else(|_| format!("#{}", r.trial_id), |i| a.labels[i].clone()),
        created_at: r.created_at.clone(),
        requests: r.requests as u32,
        knee: r.ramp.knee,
        knee_reason: r.ramp.knee_reason.clone(),
        slo_ms: r.ramp.slo_ms,
        levels: r
            .ramp
            .levels
            .iter()
            .map(|l| LoadLevelView {
                concurrency: l.concurrency,
                requests: l.requests as u32,
                throughput_vps: l.throughput_vps,
                ttft_p50: l.ttft_ms.p50,
                ttft_p95: l.ttft_ms.p95,
                ttft_p99: l.ttft_ms.p99,
                latency_p50: l.latency_ms.p50,
                latency_p95: l.latency_ms.p95,
                latency_p99: l.latency_ms.p99,
                stream_p95: l.stream_ms.p95,
                errors: l.errors as u32,
                retried: l.retried as u32,
            })
            .collect(),
        cold_ttft_ms: r.ramp.warmup.ttft_ms,
        cold_latency_ms: r.ramp.warmup.latency_ms,
        latency_svg: svg(latency)?,
        throughput_svg: svg(throughput)?,
    }))
}

pub(crate) fn cell(e: Estimate) -> Cell {
    Cell {
        value: e.value,
        low: e.ci.map(|c| c.0),
        high: e.ci.map(|c| c.1),
    }
}

/// Trial `i` as the app's pieces name it; its figures are its row of the table.
pub(crate) fn trial_view(a: &Analysis<'_>, i: usize) -> TrialView {
    let t = &a.summary.trials[i];
    TrialView {
        id: t.id as u32,
        label: a.labels[i].clone(),
        params: Axis::ALL
            .into_iter()
            .map(|p| Param {
                name: p.key().to_string(),
                value: p.label(&t.params),
            })
            .collect(),
        batched: a
            .summary
            .experiment
            .parsed
            .judge_named(&t.params.judge)
            .is_some_and(|j| j.local().is_some()),
    }
}

/// The results table's rows that `keep` keeps (and every baseline), with every column:
/// a renderer, which formats nothing of its own.
pub(crate) fn table_view(table: &ResultsTable, keep: impl Fn(&Row) -> bool) -> TableView {
    let row = |r: &Row| TableRow {
        kind: r.kind.into(),
        id: r.id.map(|id| id as u32),
        name: r.name.clone(),
        label: r.label.clone(),
        description: r.description.clone(),
        best: r.best,
        recommended: r.recommended,
        cells: r
            .cells
            .iter()
            .zip(&table.columns)
            .map(|(c, column)| table_cell(c, column))
            .collect(),
    };
    TableView {
        ranking: table.ranking.clone(),
        columns: table
            .columns
            .iter()
            .map(|c| table_column(c, c.shown_in(Output::App)))
            .collect(),
        rows: table.rows.iter().filter(|r| keep(r)).map(row).collect(),
        baselines: table.baselines.iter().map(row).collect(),
    }
}

/// A cell's figure as the report writes it, its interval apart.
fn table_cell(c: &TableValue, column: &judgelab_report::table::Column) -> TableCell {
    let ci = match c {
        TableValue::Estimate(e) => e.ci,
        _ => None,
    };
    let figure = match c {
        TableValue::Estimate(e) => TableValue::Estimate(Estimate {
            value: e.value,
            ci: None,
        }),
        c => c.clone(),
    };
    TableCell {
        text: figure.text(column, Style::Report),
        interval: c.interval(column, Style::Report).unwrap_or_default(),
        value: c.number(),
        low: ci.map(|c| c.0),
        high: ci.map(|c| c.1),
    }
}

fn chart_view(summary: &ExperimentSummary, chart: ParetoChart) -> AppResult<ChartView> {
    let (svg, spots) = judgelab_report::svg_with_hotspots(&Chart::Pareto(chart), CHART.0, CHART.1)?;
    Ok(ChartView {
        svg,
        width: CHART.0,
        height: CHART.1,
        // Trials only: the points after them are cascades and panels, which have no trial
        // to open.
        hotspots: spots
            .into_iter()
            .filter_map(|s| {
                Some(Hotspot {
                    trial_id: summary.trials.get(s.index)?.id as u32,
                    x: s.x,
                    y: s.y,
                    r: s.r,
                })
            })
            .collect(),
    })
}

impl From<Unit> for TableUnit {
    fn from(unit: Unit) -> TableUnit {
        match unit {
            Unit::Text => TableUnit::Text,
            Unit::Param => TableUnit::Param,
            Unit::Count => TableUnit::Count,
            Unit::Estimate => TableUnit::Estimate,
            Unit::Difference => TableUnit::Difference,
            Unit::Share => TableUnit::Share,
            Unit::Tokens => TableUnit::Tokens,
            Unit::Milliseconds => TableUnit::Milliseconds,
            Unit::Usd => TableUnit::Usd,
            Unit::Number => TableUnit::Number,
            Unit::Probability => TableUnit::Probability,
            Unit::Standing => TableUnit::Standing,
            Unit::Role => TableUnit::Role,
        }
    }
}

/// A report column as the app's tables name it; `shown` in the table, or read only.
fn table_column(c: &judgelab_report::table::Column, shown: bool) -> TableColumn {
    TableColumn {
        key: c.key.clone(),
        title: c.title.clone(),
        unit: c.unit.into(),
        shown,
    }
}

/// A section's table as the app shows it.
fn section_view(t: &SectionTable) -> SectionTableView {
    SectionTableView {
        subject: t.subject.clone(),
        columns: t.columns.iter().map(|c| table_column(c, true)).collect(),
        rows: t
            .rows
            .iter()
            .map(|r| SectionRowView {
                name: r.name.clone(),
                cells: r
                    .cells
                    .iter()
                    .zip(&t.columns)
                    .map(|(cell, c)| table_cell(cell, c))
                    .collect(),
            })
            .collect(),
    }
}

/// The sentence of the finding of `kind` on `subject`; empty where there is none.
fn reading(findings: &Findings, kind: Kind, subject: &Subject) -> String {
    findings
        .of(&[kind])
        .find(|f| f.subject == *subject)
        .map_or_else(String::new, |f| f.text.clone())
}

/// A finding as the app shows it.
fn finding_view(f: &Finding) -> FindingView {
    FindingView {
        kind: f.kind.into(),
        subject: f.subject.label(),
        figures: f
            .figures
            .iter()
            .map(|g| FigureView {
                name: g.name.clone(),
                cell: cell(g.estimate),
            })
            .collect(),
        text: f.text.clone(),
    }
}

impl From<Kind> for FindingKind {
    fn from(kind: Kind) -> FindingKind {
        match kind {
            Kind::Undecided => FindingKind::Undecided,
            Kind::NotReady => FindingKind::NotReady,
            Kind::Pick => FindingKind::Pick,
            Kind::Selection => FindingKind::Selection,
            Kind::Caveat => FindingKind::Caveat,
            Kind::Confirmation => FindingKind::Confirmation,
            Kind::Race => FindingKind::Race,
            Kind::Labels => FindingKind::Labels,
            Kind::Humans => FindingKind::Humans,
            Kind::Trust => FindingKind::Trust,
            Kind::Cascade => FindingKind::Cascade,
            Kind::Panel => FindingKind::Panel,
            Kind::CriterionWeights => FindingKind::CriterionWeights,
            Kind::ItemWeights => FindingKind::ItemWeights,
            Kind::Drift => FindingKind::Drift,
            Kind::Wording => FindingKind::Wording,
        }
    }
}

impl From<RowKind> for TableRowKind {
    fn from(kind: RowKind) -> TableRowKind {
        match kind {
            RowKind::Trial => TableRowKind::Trial,
            RowKind::Cascade => TableRowKind::Cascade,
            RowKind::Panel => TableRowKind::Panel,
            RowKind::Baseline => TableRowKind::Baseline,
        }
    }
}
