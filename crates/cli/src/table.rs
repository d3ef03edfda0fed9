//! The trials table printed by `run` and `show`.

use judgelab_core::pareto::Objective;
use judgelab_core::results::ExperimentSummary;
use judgelab_core::trust::unlabelled::Population;
use judgelab_report::analysis::Analysis;
use judgelab_report::findings::{Findings, Kind};
use judgelab_report::table::{Output, ResultsTable, Style};

/// The experiment's results table (`report::table`) as the terminal shows it, with a
/// header line and the notes its columns need; `front` adds each trial's place on the
/// Pareto front of those objectives.
pub fn trials(s: &ExperimentSummary, front: &[Objective]) -> String {
    let e = &s.experiment;
    let a = Analysis::new(s, e.parsed.selection.metric);
    let table = ResultsTable::new(&a, front);
    let shown = |key: &str| {
        table
            .column(key)
            .is_some_and(|c| table.columns[c].shown_in(Output::Terminal))
    };
    let mut out = format!(
        "experiment {:?} on {} ({} items judged, {} repeat{}, few-shot pool {}; {}/{} verdicts)\n",
        e.name,
        e.dataset,
        e.n_items,
        e.repeats,
        if e.repeats == 1 { "" } else { "s" },
        e.few_shot_pool.len(),
        e.n_stored,
        e.n_expected
    );
    out.push_str(&judgelab_report::terminal::grid(&table));
    // Exact agreement, or within half a point where the ratings are means.
    let exact = table
        .exact_agreement()
        .map(|c| &table.columns[c])
        .map_or(("accuracy", "accuracy"), |c| {
            (c.key.as_str(), c.title.as_str())
        });
    for b in &table.baselines {
        let cell = |key: &str| {
            table.column(key).map_or("—".into(), |c| {
                b.cells[c].text(&table.columns[c], Style::Terminal)
            })
        };
        out.push_str(&format!(
            "baseline {}: {} {}, kappa {}\n",
            b.label,
            exact.1,
            cell(exact.0),
            cell("kappa")
        ));
    }
    let findings = Findings::new(&a);
    let say = |out: &mut String, kinds: &[Kind], prefix: &str| {
        for f in findings.of(kinds) {
            out.push_str(&format!("{prefix}{}\n", f.line()));
        }
    };
    say(&mut out, &[Kind::Selection], "selection: ");
    say(&mut out, &[Kind::Cascade], "");
    say(&mut out, &[Kind::Panel], "panel ");
    let criteria: Vec<&str> = s
        .rated_criteria()
        .into_iter()
        .map(|c| c.name.as_str())
        .collect();
    if !criteria.is_empty() {
        out.push_str(&format!(
            "criteria {}: the table reads each verdict's aggregate; `show --criterion NAME` reads one criterion, `--json` and the report give each trial's agreement on each\n",
            criteria.join(", ")
        ));
    }
    say(&mut out, &[Kind::CriterionWeights], "criterion weights of ");
    say(&mut out, &[Kind::ItemWeights], "checklist item weights of ");
    say(&mut out, &[Kind::Drift], "against the reference: ");
    say(&mut out, &[Kind::Wording], "paraphrases ");
    say(&mut out, &[Kind::Labels], "");
    say(&mut out, &[Kind::Humans], "people: ");
    if shown("ece") {
        out.push_str("ece: expected calibration error of the verdicts' confidence on the dev split (10 bins; report shows the reliability diagram)\n");
    }
    if shown("expected_accuracy") {
        out.push_str(
            "E[…]: expected under each verdict's exact distribution (no sampling noise); H_bits: mean verdict entropy\n",
        );
    }
    out.push_str(&latency_note(s));
    if s.bootstrap.resamples > 0 {
        out.push_str(&format!(
            "[low, high]: {:.0}% bootstrap intervals over items ({} resamples)\n",
            s.bootstrap.level * 100.0,
            s.bootstrap.resamples
        ));
    }
    out
}

/// What the latency columns are: per request, at the concurrency in `conc`, and which
/// calls they come from.
fn latency_note(s: &ExperimentSummary) -> String {
    let remote = |t: &&judgelab_core::results::TrialSummary| {
        s.experiment
            .parsed
            .judge_named(&t.params.judge)
            .is_some_and(|j| j.remote().is_some())
    };
    let calls = |timed: Vec<usize>| match (timed.iter().min(), timed.iter().max()) {
        (Some(lo), Some(hi)) if lo == hi => Some(format!("{lo} calls")),
        (Some(lo), Some(hi)) => Some(format!("{lo}–{hi} calls")),
        _ => None,
    };
    let timed = |keep: &dyn Fn(&&judgelab_core::results::TrialSummary) -> bool| {
        calls(
            s.trials
                .iter()
                .filter(|t| t.metrics.latency_concurrency.is_some())
                .filter(keep)
                .map(|t| t.metrics.latency_ms.n)
                .collect(),
        )
    };
    let mut sources = Vec::new();
    if let Some(n) = timed(&|t| !remote(t)) {
        sources.push(format!("a local trial's: {n} timed alone, one at a time"));
    }
    if let Some(n) = timed(&|t| remote(t) && t.params.concurrency.is_some()) {
        sources.push(format!(
            "a remote trial at a swept concurrency: {n} made again at that load"
        ));
    }
    let note = "p50_ms, p95_ms, ttft_p50: per request, with `conc` requests in flight";
    match sources.is_empty() {
        true => format!("{note}\n"),
        false => format!("{note} ({})\n", sources.join("; ")),
    }
}

/// A load ramp, one row per level, then the knee and the cold start.
pub fn load(experiment: &str, r: &judgelab_core::load::StoredRamp) -> String {
    let ms = |p: &judgelab_core::metrics::Percentiles, x: Option<f64>| match x {
        Some(v) => format!("{v:.0}"),
        None => p.needs(x).unwrap_or_else(|| "—".into()),
    };
    let mut rows = vec![[
        "conc",
        "requests",
        "verdicts/s",
        "tokens/s",
        "ttft_p50",
        "ttft_p95",
        "ttft_p99",
        "p50_ms",
        "p95_ms",
        "p99_ms",
        "stream_p95",
        "errors",
        "retried",
    ]
    .map(String::from)
    .to_vec()];
    for l in &r.ramp.levels {
        rows.push(vec![
            l.concurrency.to_string(),
            l.requests.to_string(),
            format!("{:.2}", l.throughput_vps),
            format!("{:.0}", l.tokens_per_s),
            ms(&l.ttft_ms, l.ttft_ms.p50),
            ms(&l.ttft_ms, l.ttft_ms.p95),
            ms(&l.ttft_ms, l.ttft_ms.p99),
            ms(&l.latency_ms, l.latency_ms.p50),
            ms(&l.latency_ms, l.latency_ms.p95),
            ms(&l.latency_ms, l.latency_ms.p99),
            ms(&l.stream_ms, l.stream_ms.p95),
            l.errors.to_string(),
            l.retried.to_string(),
        ]);
    }
    let mut out = format!(
        "load ramp {} of trial {} of {:?}: {} timed requests per level, per request in milliseconds\n",
        r.id, r.trial_id, experiment, r.requests
    );
    out.push_str(&judgelab_report::terminal::aligned(
        &rows,
        &vec![false; rows[0].len()],
    ));
    out.push_str("stream_p95: from the first token to the end of the answer (a stalled stream shows here, not in TTFT)\n");
    if r.sent() > r.ramp.distinct_prompts {
        out.push_str(&format!(
            "note: {} requests drawn from {} distinct prompts of the trial; none answered from a prompt cache (a remote ramp's requests go out uncached, a local one's repeats within a level), so each pays its whole prefill\n",
            r.sent(),
            r.ramp.distinct_prompts
        ));
    }
    match r.ramp.knee {
        Some(k) => out.push_str(&format!("knee: {k} ({})\n", r.ramp.knee_reason)),
        None => out.push_str(&format!("knee: none ({})\n", r.ramp.knee_reason)),
    }
    let w = &r.ramp.warmup;
    if let (Some(ttft), Some(latency)) = (w.ttft_ms, w.latency_ms) {
        out.push_str(&format!(
            "cold start: the first request took {latency:.0} ms (TTFT {ttft:.0} ms); {} warm-up requests left out of the levels\n",
            w.requests
        ));
    }
    out
}

/// A race's calls against the full grid's: the dev verdicts it stored, of those every
/// trial on every dev item would need.
pub fn calls_against_grid(s: &ExperimentSummary) -> Option<String> {
    let (stored, grid) = s.race_verdicts()?;
    let dropped = s.trials.iter().filter(|t| t.dropped.is_some()).count();
    Some(format!(
        "the race judged {stored} of the full grid's {grid} dev verdicts ({:.0}%), dropping {dropped} of {} trials",
        100.0 * stored as f64 / grid.max(1) as f64,
        s.trials.len()
    ))
}

/// `run --plan`: what the run will cost, before any call.
pub fn plan(p: &judgelab_engine::Plan) -> String {
    let mut out = format!(
        "{:?} on {:?}: {} trials × {} items: {} verdicts in {} calls, about {:.0} prompt tokens\n",
        p.experiment, p.dataset, p.n_trials, p.n_items, p.n_verdicts, p.n_calls, p.prompt_tokens
    );
    if p.conflicts {
        out += "a stored experiment of this name has other content: run with --replace to discard it\n";
    } else if p.n_done > 0 {
        out += &format!(
            "{} verdicts already stored: a run resumes from them\n",
            p.n_done
        );
    }
    if let Some(r) = &p.race {
        out += &format!(
            "race: {} rounds; every trial judges the first {} dev items, then trials clearly worse than the leader stop: between {} calls ({:.0}% of the full grid's) and all {}\n",
            r.n_rounds,
            r.first_decision,
            r.min_calls,
            100.0 * r.min_calls as f64 / p.n_calls.max(1) as f64,
            p.n_calls
        );
    }
    if p.n_exact_trials > 0 {
        let serves = if p.n_exact_passes == 1 {
            format!("one pass per item serves {} trials", p.n_exact_trials)
        } else {
            format!(
                "{} passes per item serve {} trials",
                p.n_exact_passes, p.n_exact_trials
            )
        };
        out += &format!(
            "exact verdicts: {serves} (their one-token verdict's distribution is computed from the pass, and seeded samples are drawn from it: equal in law to llama.cpp's sampler; exact = false generates instead)\n"
        );
    }
    for line in p
        .quantization
        .iter()
        .chain(&p.reference)
        .chain(&p.remote_exact)
        .chain(&p.input_budget)
    {
        out += line;
        out.push('\n');
    }
    if p.n_bit_for_bit + p.n_up_to_near_ties > 0 {
        out += &format!(
            "reproducible: {} trial{} bit for bit (seeded samples, each decoded alone), {} up to near-ties (greedy generations and exact passes, decoded in batches: two tokens within a few hundredths may read otherwise after a resume or with another `parallel`)\n",
            p.n_bit_for_bit,
            if p.n_bit_for_bit == 1 { "" } else { "s" },
            p.n_up_to_near_ties,
        );
    }
    if p.timing.n_calls > 0 {
        let t = &p.timing;
        out += &format!(
            "timing: {} calls timed alone after judging, for latency at concurrency 1: {} request shape{} serving {} local trial{}, warm-ups included{}\n",
            t.n_calls,
            t.n_shapes,
            if t.n_shapes == 1 { "" } else { "s" },
            t.n_trials,
            if t.n_trials == 1 { "" } else { "s" },
            t.est_seconds
                .map_or(String::new(), |s| format!(", about {}", duration(s)))
        );
    }
    if p.n_test > 0 {
        out += &format!(
            "test split: {} items, judged only by the trials the selection keeps: up to {} calls each\n",
            p.n_test, p.test_calls_per_trial
        );
    }
    out += &match p.est_seconds {
        Some(s) if p.race.is_some() => format!(
            "estimated time: at most {} (the full grid's calls, at this machine's measured speed)\n",
            duration(s)
        ),
        Some(s) => format!(
            "estimated time: {} (at this machine's measured speed, timing included)\n",
            duration(s)
        ),
        None => "estimated time: measured after the first run of this model\n".into(),
    };
    out
}

/// Seconds as `1h 02m`, `3m 20s` or `12s`.
fn duration(seconds: f64) -> String {
    let s = seconds.round() as u64;
    match s {
        0..=59 => format!("{s}s"),
        60..=3599 => format!("{}m {:02}s", s / 60, s % 60),
        _ => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
    }
}

/// `estimate`'s answer: the corrected figure beside the judge's own, what went into it, and
/// the planner's.
pub fn population(run: &judgelab_engine::UnlabelledRun, p: &Population) -> String {
    let c = &p.corrected;
    let pending = match p.n_without_verdict {
        0 => String::new(),
        n => format!(" ({n} more have no verdict yet: their calls failed or were not made)"),
    };
    let mut out = format!(
        "trial #{} of {:?} on {} items of {:?} without a label{pending}\n",
        run.trial_id, run.experiment, c.n_unlabelled, run.dataset
    );
    let interval = |v: f64, ci: [f64; 2]| format!("{v:.3} [{:.3}, {:.3}]", ci[0], ci[1]);
    out.push_str(&format!("{}:\n", p.quantity.title()));
    out.push_str(&format!(
        "  corrected  {}  {}, with {} labelled items",
        interval(c.value, c.ci),
        p.method,
        c.n_labelled
    ));
    if let Some(l) = c.lambda {
        out.push_str(&format!(" (λ {l:.3})"));
    }
    if let (Some(tpr), Some(tnr)) = (c.tpr, c.tnr) {
        out.push_str(&format!(" (TPR {tpr:.3}, TNR {tnr:.3})"));
    }
    out.push('\n');
    out.push_str(&format!(
        "  naive      {}  the judge's own, as if it were never wrong\n",
        interval(c.naive, c.naive_ci)
    ));
    let (fl, fu) = (p.n_parse_failures_labelled, p.n_parse_failures_unlabelled);
    if fl + fu > 0 {
        out.push_str(&format!(
            "  verdicts that did not parse score {} on both sides: {fl} labelled and {fu} unlabelled items\n",
            p.fallback
        ));
    }
    if let Some(plan) = p.plan_reading() {
        out.push_str(&format!("  {plan}\n"));
    }
    out
}
