//! Which configuration to pick: the recommendation (or why there is none yet), the best's
//! score corrected for having been picked, and what to know about the pick.

use judgelab_core::metrics::Estimate;
use judgelab_core::Order;

use super::{Figure, Finding, Kind, Subject};
use crate::analysis::{baseline_title, clears_baselines, cost_text, estimate_text, Analysis};

pub(super) fn findings(a: &Analysis<'_>) -> Vec<Finding> {
    let (Some(best), Some(pick)) = (a.best, a.recommended) else {
        return vec![Finding {
            kind: Kind::Undecided,
            subject: Subject::Experiment,
            figures: Vec::new(),
            text: format!(
                "No trial has a defined {} yet: run the experiment (or check its errors) before choosing.",
                a.quality_title()
            ),
        }];
    };
    let mut out = Vec::new();
    let q = a.quality_title();
    let metrics = |i: usize| &a.trial(i).metrics;
    let quality = |i: usize| metrics(i).estimate(a.quality);
    // Ready means the best's whole interval lies above every baseline: a judge that does
    // not beat "always the common label" or "the longer answer" measures nothing useful.
    let strongest = a
        .summary
        .baselines
        .values()
        .filter_map(|b| Some((b, b.quality.get(a.quality).value?)))
        .max_by(|x, y| x.1.total_cmp(&y.1));
    let ready = clears_baselines(metrics(best), a.quality, strongest.map(|s| s.1));
    let verb = if ready {
        "Pick".to_string()
    } else {
        let (b, value) = strongest.expect("not ready means a baseline");
        out.push(Finding {
            kind: Kind::NotReady,
            subject: Subject::Trial(a.trial(best).id),
            figures: vec![
                Figure::new(a.quality.name(), quality(best)),
                Figure::point(format!("baseline {}", b.name), Some(value)),
            ],
            text: format!(
                "Not ready: no configuration clearly beats the baselines. The best, trial {}, has {q} {}, which does not clearly beat the baseline “{}” ({value:.3}). Try a stronger model, another template or few-shot examples, or judge more items.",
                a.name(best),
                estimate_text(quality(best)),
                baseline_title(b),
            ),
        });
        "If you must pick one now, take".to_string()
    };
    out.push(recommendation(a, &verb, best, pick));
    out.extend(selection(a, best));
    out.extend(caveats(a, pick, ready));
    out
}

/// The best's score corrected for having been picked among the trials (BBC), where it was
/// picked among several.
fn selection(a: &Analysis<'_>, best: usize) -> Option<Finding> {
    let c = a.selection.filter(|c| c.n_trials > 1)?;
    let (naive, optimism) = (c.naive?, c.optimism?);
    let q = a.quality_title();
    let corrected = Estimate {
        value: c.value,
        ci: c.ci,
    };
    Some(Finding {
        kind: Kind::Selection,
        subject: Subject::Trial(a.trial(best).id),
        figures: vec![
            Figure::point(a.quality.name(), Some(naive)),
            Figure::new("selection-corrected", corrected),
            Figure::point("optimism", Some(optimism)),
        ],
        text: if optimism >= 0.0005 {
            format!(
                "Trial {} was picked as the best of {} on the same items, so its {q} of {naive:.3} overstates what it will score on new items: picking again on bootstrap resamples and scoring each pick on the items left out gives {}, {optimism:.3} less (bootstrap bias-corrected out-of-bag estimate, Tsamardinos et al. 2018).",
                a.name(best),
                c.n_trials,
                estimate_text(corrected),
            )
        } else {
            format!(
                "Trial {} was picked as the best of {} on the same items; picking again on bootstrap resamples and scoring each pick on the items left out gives {}, no less than its {q} of {naive:.3}: the choice did not inflate it (bootstrap bias-corrected out-of-bag estimate, Tsamardinos et al. 2018).",
                a.name(best),
                c.n_trials,
                estimate_text(corrected),
            )
        },
    })
}

/// The pick: the best, or a cheaper trial the data cannot tell from it.
fn recommendation(a: &Analysis<'_>, verb: &str, best: usize, pick: usize) -> Finding {
    let q = a.quality_title();
    let metrics = |i: usize| &a.trial(i).metrics;
    let quality = |i: usize| metrics(i).estimate(a.quality);
    let cost = |i: usize| Figure::point(a.cost.title(a.task), a.cost.value(metrics(i)));
    let cost_text = |i: usize| cost_text(a.cost, metrics(i));
    if pick == best {
        return Finding {
            kind: Kind::Pick,
            subject: Subject::Trial(a.trial(best).id),
            figures: vec![Figure::new(a.quality.name(), quality(best)), cost(best)],
            text: format!(
                "{verb} trial {}: it has the highest {q}, {}, at {}{}.",
                a.name(best),
                estimate_text(quality(best)),
                cost_text(best),
                tie_text(a, best)
            ),
        };
    }
    let c = a.versus_best[pick]
        .as_ref()
        .expect("compared with the best");
    let ratio = match (a.cost.value(metrics(best)), a.cost.value(metrics(pick))) {
        (Some(b), Some(p)) if p > 0.0 => format!("{:.1}× less", b / p),
        _ => "less".into(),
    };
    Finding {
        kind: Kind::Pick,
        subject: Subject::Trial(a.trial(pick).id),
        figures: vec![
            Figure::new(a.quality.name(), quality(pick)),
            cost(pick),
            Figure::new("difference from the best", c.difference),
            Figure::point("McNemar p", Some(c.mcnemar_p)),
        ],
        text: format!(
            "{verb} trial {}: its {q} is {}, and the data cannot tell it from the best trial {} ({}): the paired difference is {} (95% bootstrap interval over the same items, which includes 0; McNemar p = {:.2}). It costs {ratio} ({} against {}).",
            a.name(pick),
            estimate_text(quality(pick)),
            a.name(best),
            estimate_text(quality(best)),
            estimate_text(c.difference),
            c.mcnemar_p,
            cost_text(pick),
            cost_text(best),
        ),
    }
}

/// What to know about the pick `pick`: how it stands against each baseline (once it is
/// `ready`; "not ready" has named the one that matters), its parse failures, failed
/// calls and position bias, and too few items.
fn caveats(a: &Analysis<'_>, pick: usize, ready: bool) -> Vec<Finding> {
    let mut out = Vec::new();
    let subject = Subject::Trial(a.trial(pick).id);
    let mut say = |figures: Vec<Figure>, text: String| {
        out.push(Finding {
            kind: Kind::Caveat,
            subject: subject.clone(),
            figures,
            text,
        });
    };
    let q = a.quality_title();
    let m = &a.trial(pick).metrics;
    let ci = m.estimate(a.quality).ci;
    for b in a.summary.baselines.values().filter(|_| ready) {
        let Some(value) = b.quality.get(a.quality).value else {
            continue;
        };
        let baseline = format!("the baseline “{}” ({q} {value:.3})", baseline_title(b));
        let figures = vec![
            Figure::new(a.quality.name(), m.estimate(a.quality)),
            Figure::point(format!("baseline {}", b.name), Some(value)),
        ];
        let text = match ci {
            Some((lo, _)) if lo > value => {
                format!("It beats {baseline}: its whole interval lies above it.")
            }
            Some((_, hi)) if hi < value => {
                format!("It is worse than {baseline}: its whole interval lies below it.")
            }
            _ => format!(
                "It does not clearly beat {baseline}: the interval includes the baseline's value."
            ),
        };
        say(figures, text);
    }
    if let Some(rate) = m.parse_failure_rate.filter(|&r| r > 0.05) {
        say(
            vec![Figure::point("parse failures", Some(rate))],
            format!(
                "{:.0}% of its outputs did not parse (each counted as wrong): raise max_tokens if they were truncated, or constrain the output.",
                rate * 100.0
            ),
        );
    }
    if m.n_errors > 0 {
        say(
            vec![Figure::point("failed calls", Some(m.n_errors as f64))],
            format!(
                "{} of its calls failed and are not scored; `judgelab run` retries them.",
                m.n_errors
            ),
        );
    }
    if let Some(position) = &m.position {
        if let Some(c) = position.consistency {
            say(
                vec![Figure::point("consistency", Some(c))],
                format!(
                    "Judged in both answer orders, its verdict survived the swap {:.0}% of the time (MT-Bench: GPT-4 65%).",
                    c * 100.0
                ),
            );
        }
        if let Some(f) = position
            .first_preferred
            .filter(|_| position.n_verdicts >= 10)
            .filter(|f| !(0.35..=0.65).contains(f))
        {
            let advice = if a.trial(pick).params.order == Order::Both {
                "judging both orders turns its flips into ties"
            } else if a.trial(pick).params.order == Order::Debiased {
                "judging both orders and averaging their probabilities evens it out"
            } else if a.has_orders() {
                "compare it with the trials judged in both orders"
            } else {
                "sweep `order = [\"ab\", \"debiased\"]` to measure it and average both orders out"
            };
            say(
                vec![Figure::point("first preferred", Some(f))],
                format!(
                    "It preferred the answer shown first in {:.0}% of its verdicts, a position bias: {advice}.",
                    f * 100.0
                ),
            );
        }
    }
    let n = a.summary.experiment.n_items;
    if n < 100 {
        say(
            vec![Figure::point("items", Some(n as f64))],
            format!(
                "Only {n} items were judged, so the intervals are wide; judge more items (limits.items) to separate close configurations."
            ),
        );
    }
    out
}

/// The trials tied with `best` as shown, and what broke the tie: "; trial #3 ties with it
/// as shown, and has more parse failures"; nothing without a tie.
fn tie_text(a: &Analysis<'_>, best: usize) -> String {
    let shown = |i: usize| {
        a.trial(i)
            .metrics
            .value(a.quality)
            .map(|v| format!("{v:.3}"))
    };
    let tied: Vec<usize> = (0..a.summary.trials.len())
        .filter(|&i| i != best && shown(i).is_some() && shown(i) == shown(best))
        .collect();
    if tied.is_empty() {
        return String::new();
    }
    let failures = |i: usize| a.trial(i).metrics.parse_failure_rate.unwrap_or(0.0);
    let more_failures = tied.iter().all(|&i| failures(i) > failures(best));
    let names: Vec<String> = tied
        .iter()
        .map(|&i| format!("#{}", a.trial(i).id))
        .collect();
    format!(
        "; {} {} with it as shown, {}",
        names.join(", "),
        if tied.len() == 1 { "ties" } else { "tie" },
        if more_failures {
            format!(
                "with more parse failures ({:.0}% against its {:.0}%)",
                tied.iter()
                    .map(|&i| failures(i))
                    .fold(f64::INFINITY, f64::min)
                    * 100.0,
                failures(best) * 100.0
            )
        } else {
            "and the rule breaks the tie: fewer parse failures, then lower cost, then lower latency, then the earlier trial".into()
        }
    )
}
