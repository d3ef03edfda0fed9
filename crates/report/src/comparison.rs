//! Two judges compared ([`Comparison`]) in words: the sentences `judgelab compare` prints
//! and the report's "Compared" sections show (what was left out, the flips toward and away
//! from the humans, kappa between the judges, McNemar's exact test and the paired
//! difference, how far the beliefs moved), each side named `experiment:trial`, and the
//! terminal's text. The flip matrix and the calls that moved most are section tables
//! ([`SectionTable::flips`], [`SectionTable::moved`]); `markdown` and `html` lay out their
//! own "Compared" sections from these sentences and tables.

use judgelab_core::metrics::drift::Drift;
use judgelab_core::results::comparison::{Compared, Comparison};
use judgelab_core::Task;

use crate::table::SectionTable;

/// A side's name: `experiment:trial`.
pub fn side(s: &Compared) -> String {
    format!("{}:{}", s.experiment, s.trial)
}

/// The comparison as the terminal prints it: sentences, the matrix, the calls that moved.
pub fn text(c: &Comparison, task: Task) -> String {
    let (a, b) = (side(&c.first), side(&c.second));
    let d = &c.drift;
    let mut out = format!("{a}  {}\n{b}  {}\n", c.first.params, c.second.params);
    out += &format!("{}\n{}\n", calls(d, &a, &b), flips(d));
    for line in by_human(d) {
        out += &format!("  {line}\n");
    }
    if let Some(flips) = SectionTable::flips(d) {
        out += &format!("flip matrix (rows: {a}, columns: {b})\n");
        out += &crate::terminal::section(&flips);
    }
    for line in paired(c, task) {
        out += &format!("{line}\n");
    }
    out += &format!("{}\n", divergence(d));
    if let Some(moved) = SectionTable::moved(d, &a, &b) {
        out += "moved most:\n";
        out += &crate::terminal::section(&moved);
    }
    out
}

/// On how many calls, and what was left out.
pub(crate) fn calls(d: &Drift, a: &str, b: &str) -> String {
    let mut parts = Vec::new();
    if d.only_first > 0 {
        parts.push(format!("{} calls only {a} made", d.only_first));
    }
    if d.only_second > 0 {
        parts.push(format!("{} only {b} made", d.only_second));
    }
    if d.failed_calls > 0 {
        parts.push(format!("{} where a call failed", d.failed_calls));
    }
    let left = if parts.is_empty() {
        String::new()
    } else {
        format!(" (left out: {})", parts.join(", "))
    };
    format!(
        "on {} calls of {} items both judged{left}",
        d.n_pairs, d.n_items
    )
}

fn percent(x: f64) -> String {
    format!("{:.1}%", 100.0 * x)
}

/// The flips, with their rate and direction, and kappa between the judges.
pub(crate) fn flips(d: &Drift) -> String {
    let rate = match (d.flip_rate.value, d.flip_rate.ci) {
        (Some(r), Some((lo, hi))) => format!(
            "{}, 95% bootstrap interval over items [{}, {}]",
            percent(r),
            percent(lo),
            percent(hi)
        ),
        (Some(r), None) => percent(r),
        (None, _) => "undefined".into(),
    };
    let between = d.flips - d.toward_humans - d.away_from_humans;
    let kappa = d.kappa.map_or("undefined".into(), |k| format!("{k:.3}"));
    format!(
        "flips: {} of {} calls ({rate}): {} toward the humans, {} away from them, {between} from one wrong verdict to another; kappa between the two judges: {kappa}",
        d.flips, d.n_pairs, d.toward_humans, d.away_from_humans
    )
}

/// The flips on the items of each human label.
pub(crate) fn by_human(d: &Drift) -> Vec<String> {
    d.by_human
        .iter()
        .map(|h| {
            format!(
                "humans said {}: {} flip{} in {} calls ({} toward, {} away)",
                h.human,
                h.flips,
                if h.flips == 1 { "" } else { "s" },
                h.n_pairs,
                h.toward_humans,
                h.away_from_humans
            )
        })
        .collect()
}

/// The metric on each side and their paired difference; McNemar's exact test.
pub(crate) fn paired(c: &Comparison, task: Task) -> [String; 2] {
    let p = &c.paired;
    let value = |v: Option<f64>| v.map_or("undefined".into(), |v| format!("{v:.3}"));
    let difference = match (p.difference.value, p.difference.ci) {
        (Some(d), Some((lo, hi))) => format!(
            "{d:+.3}, 95% paired bootstrap interval [{lo:+.3}, {hi:+.3}]{}",
            if lo > 0.0 || hi < 0.0 {
                ": a real difference"
            } else {
                ": includes 0, no clear difference"
            }
        ),
        (Some(d), None) => format!("{d:+.3}"),
        (None, _) => "undefined".into(),
    };
    [
        format!(
            "{}: {} vs {} (each over its dev verdicts); difference on the {} shared verdicts {difference}",
            p.metric.title(task),
            value(c.first.value),
            value(c.second.value),
            p.n_pairs,
        ),
        format!(
            "right where the other is wrong: the first {} times, the second {} times; McNemar exact p = {:.4}",
            p.first_only, p.second_only, p.mcnemar_p
        ),
    ]
}

/// How far the beliefs moved, where the verdicts carry them.
pub(crate) fn divergence(d: &Drift) -> String {
    let Some(v) = &d.divergence else {
        return "no divergence: the verdicts carry no belief (exact trials and judges that return log-probabilities do)".into();
    };
    let kl = match (v.kl_mean.value, v.kl_p95) {
        (Some(m), Some(p)) => format!(
            "mean KL {m:.4} nats{} (p95 {p:.4})",
            v.kl_mean
                .ci
                .map_or(String::new(), |(lo, hi)| format!(" [{lo:.4}, {hi:.4}]"))
        ),
        _ => "KL undefined".into(),
    };
    let infinite = if v.kl_infinite > 0 {
        format!(
            "; {} calls where the second rules out a verdict the first allows (KL infinite, left out of KL)",
            v.kl_infinite
        )
    } else {
        String::new()
    };
    format!(
        "beliefs over the verdicts on {} calls: {kl}, mean Jensen–Shannon {:.4} (p95 {:.4}){infinite}",
        v.n_pairs, v.js_mean, v.js_p95
    )
}
