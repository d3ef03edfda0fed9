//! Verdict drift between two judges on the same calls: which verdicts flipped (the flip
//! matrix, split by the human label into flips toward the humans and away from them), the
//! flip rate with a bootstrap interval over items, Cohen's kappa between the two judges,
//! and — where both calls carry the judge's belief (exact trials at temperature 1; judges
//! that return log-probabilities) — the per-call KL and Jensen–Shannon divergence of the
//! beliefs, with the calls that moved most.
//!
//! The rules, for every number here:
//! - Calls are matched by item, answer order and repeat. A call only one judge made, or
//!   one that failed (no output) on either side, is counted and left out.
//! - Verdicts are compared by category, as accuracy and kappa compare them (pairwise
//!   choices; ratings rounded onto the scale); a parse failure is a category of its own,
//!   so a parsed verdict turning into a failure is a flip.
//! - A flip **toward the humans** is wrong (in the first) made right (in the second),
//!   **away** the reverse; the other flips change one wrong verdict into another.
//! - KL is KL(first ‖ second) in nats over the verdicts (the first is the reference),
//!   infinite where the second rules out a verdict the first gives mass: such calls are
//!   counted and left out of KL's mean and p95, which Jensen–Shannon (always finite, at
//!   most ln 2) is not. A belief is the whole distribution: over the verdicts, and where
//!   it is known (exact verdicts), on outputs that are none. Percentiles interpolate as
//!   numpy's default does.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::dataset::Task;
use crate::metrics::latency::percentile;
use crate::metrics::quality::TIE;
use crate::metrics::{agreement, BootstrapSpec, Estimate, Observation, Scored};
use crate::trust::belief::Belief;

/// How many of the calls that moved most are listed.
pub const MOVED_SHOWN: usize = 10;

/// One judge's call on a named item, as drift matches it.
#[derive(Debug, Clone, Copy)]
pub struct Call<'a> {
    pub item_id: &'a str,
    pub observation: &'a Observation,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Drift {
    /// Calls both judges made with an output.
    pub n_pairs: usize,
    /// Items among them (the bootstrap's units).
    pub n_items: usize,
    /// Calls only one of the judges made, left out.
    pub only_first: usize,
    pub only_second: usize,
    /// Calls both made where either failed (no output), left out.
    pub failed_calls: usize,
    /// The verdict categories, in the matrices' row and column order (`failed` last).
    pub categories: Vec<String>,
    /// `matrix[i][j]`: calls the first judge answered `categories[i]` and the second
    /// `categories[j]`.
    pub matrix: Vec<Vec<usize>>,
    /// The same, for the calls on items of each human label.
    pub by_human: Vec<HumanFlips>,
    pub flips: usize,
    /// Flips per matched call, with its bootstrap interval over items.
    pub flip_rate: Estimate,
    pub toward_humans: usize,
    pub away_from_humans: usize,
    /// Cohen's kappa between the two judges' verdicts (a failure a category of its own).
    pub kappa: Option<f64>,
    /// Where both calls of a pair carry a belief.
    pub divergence: Option<Divergence>,
}

/// The flips on the items whose human label is `human`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HumanFlips {
    pub human: String,
    pub n_pairs: usize,
    pub flips: usize,
    pub toward_humans: usize,
    pub away_from_humans: usize,
    pub matrix: Vec<Vec<usize>>,
}

/// How far the judges' beliefs moved, over the pairs where both have one.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Divergence {
    pub n_pairs: usize,
    /// Over the pairs with a finite KL, the mean with its bootstrap interval over items.
    pub kl_mean: Estimate,
    pub kl_p95: Option<f64>,
    /// Pairs whose KL is infinite (the second judge rules out a verdict the first allows).
    pub kl_infinite: usize,
    pub js_mean: f64,
    pub js_p95: f64,
    /// The pairs that moved most (by Jensen–Shannon), at most [`MOVED_SHOWN`].
    pub moved: Vec<Moved>,
}

/// One call whose belief moved.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Moved {
    pub item_id: String,
    pub swapped: bool,
    pub repeat: u32,
    pub human: String,
    pub first: String,
    pub second: String,
    /// None where infinite.
    pub kl: Option<f64>,
    pub js: f64,
}

/// A verdict's category: `None` for a parse failure.
pub(crate) type Category = Option<i64>;

/// One matched pair of calls.
struct Pair<'a> {
    item_id: &'a str,
    first: &'a Observation,
    second: &'a Observation,
    human: i64,
    a: Category,
    b: Category,
    a_right: bool,
    b_right: bool,
}

/// Drift from the `first` judge's calls to the `second`'s.
pub fn drift<'a>(
    task: Task,
    first: &[Call<'a>],
    second: &[Call<'a>],
    spec: &BootstrapSpec,
) -> Drift {
    fn key<'a>(c: &Call<'a>) -> (&'a str, bool, u32) {
        (c.item_id, c.observation.swapped, c.observation.repeat)
    }
    let second_by_key: BTreeMap<_, &Observation> =
        second.iter().map(|c| (key(c), c.observation)).collect();
    let first_keys: std::collections::BTreeSet<_> = first.iter().map(key).collect();
    let only_second = second_by_key
        .keys()
        .filter(|k| !first_keys.contains(k))
        .count();
    let (mut only_first, mut failed_calls) = (0, 0);
    let mut pairs = Vec::new();
    for c in first {
        let Some(&other) = second_by_key.get(&key(c)) else {
            only_first += 1;
            continue;
        };
        let (Some(va), Some(vb)) = (c.observation.verdict, other.verdict) else {
            failed_calls += 1;
            continue;
        };
        let (sa, sb) = (
            Scored::new(task, c.observation.human, va.label()),
            Scored::new(task, other.human, vb.label()),
        );
        pairs.push(Pair {
            item_id: c.item_id,
            first: c.observation,
            second: other,
            human: sa.human.0,
            a: sa.judge.map(|j| j.0),
            b: sb.judge.map(|j| j.0),
            a_right: sa.correct(),
            b_right: sb.correct(),
        });
    }
    let mut codes: Vec<Category> = pairs
        .iter()
        .flat_map(|p| [Some(p.human), p.a, p.b])
        .collect();
    // Parse failures last: `None` sorts first, so order by (is failure, code).
    codes.sort_by_key(|c| (c.is_none(), *c));
    codes.dedup();
    let matrix_of = |subset: &mut dyn Iterator<Item = &Pair<'_>>| {
        let mut m = vec![vec![0; codes.len()]; codes.len()];
        for p in subset {
            let at = |c: Category| codes.iter().position(|x| *x == c).unwrap();
            m[at(p.a)][at(p.b)] += 1;
        }
        m
    };
    let mut humans: Vec<i64> = pairs.iter().map(|p| p.human).collect();
    humans.sort_unstable();
    humans.dedup();
    let by_human = humans
        .iter()
        .map(|&h| {
            let of = || pairs.iter().filter(move |p| p.human == h);
            let counts = Counts::of(of());
            HumanFlips {
                human: category_name(task, Some(h)),
                n_pairs: counts.pairs,
                flips: counts.flips,
                toward_humans: counts.toward,
                away_from_humans: counts.away,
                matrix: matrix_of(&mut of()),
            }
        })
        .collect();
    let counts = Counts::of(pairs.iter());
    let units = units(&pairs);
    let flip_rate = Estimate {
        value: (counts.pairs > 0).then(|| counts.flips as f64 / counts.pairs as f64),
        ci: (spec.resamples > 0 && !units.is_empty())
            .then(|| {
                spec.ci(units.len(), |idx| {
                    let (flips, n) = idx
                        .iter()
                        .fold((0, 0), |(f, n), &i| (f + units[i].0, n + units[i].1));
                    (n > 0).then(|| flips as f64 / n as f64)
                })
            })
            .flatten(),
    };
    Drift {
        n_pairs: counts.pairs,
        n_items: units.len(),
        only_first,
        only_second,
        failed_calls,
        categories: codes.iter().map(|&c| category_name(task, c)).collect(),
        matrix: matrix_of(&mut pairs.iter()),
        by_human,
        flips: counts.flips,
        flip_rate,
        toward_humans: counts.toward,
        away_from_humans: counts.away,
        kappa: agreement::cohen_kappa(
            &pairs.iter().map(|p| p.a).collect::<Vec<_>>(),
            &pairs.iter().map(|p| p.b).collect::<Vec<_>>(),
        ),
        divergence: divergence(task, &pairs, spec),
    }
}

/// Pairs, flips, and flips toward and away from the humans.
struct Counts {
    pairs: usize,
    flips: usize,
    toward: usize,
    away: usize,
}

impl Counts {
    fn of<'p, 'a: 'p>(pairs: impl Iterator<Item = &'p Pair<'a>>) -> Counts {
        let mut c = Counts {
            pairs: 0,
            flips: 0,
            toward: 0,
            away: 0,
        };
        for p in pairs {
            c.pairs += 1;
            c.flips += usize::from(p.a != p.b);
            c.toward += usize::from(!p.a_right && p.b_right);
            c.away += usize::from(p.a_right && !p.b_right);
        }
        c
    }
}

/// Each item's (flips, pairs), items in the order first met.
fn units(pairs: &[Pair<'_>]) -> Vec<(usize, usize)> {
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut units: Vec<(usize, usize)> = Vec::new();
    for p in pairs {
        let i = *index.entry(p.item_id).or_insert_with(|| {
            units.push((0, 0));
            units.len() - 1
        });
        units[i].0 += usize::from(p.a != p.b);
        units[i].1 += 1;
    }
    units
}

fn divergence(task: Task, pairs: &[Pair<'_>], spec: &BootstrapSpec) -> Option<Divergence> {
    let mut moved: Vec<Moved> = pairs
        .iter()
        .filter_map(|p| {
            let (a, b) = (p.first.belief.as_ref()?, p.second.belief.as_ref()?);
            // The whole distribution: the verdicts' share, and a failure's.
            let on_codes = |b: &Belief| -> BTreeMap<Category, f64> {
                let mut m = BTreeMap::new();
                for (l, q) in &b.labels {
                    *m.entry(Some(Scored::new(task, *l, None).human.0))
                        .or_default() += q * (1.0 - b.failed);
                }
                if b.failed > 0.0 {
                    m.insert(None, b.failed);
                }
                m
            };
            let (pa, pb) = (on_codes(a), on_codes(b));
            let mut support: Vec<Category> = pa.keys().chain(pb.keys()).copied().collect();
            support.sort_unstable();
            support.dedup();
            let at = |m: &BTreeMap<Category, f64>| -> Vec<f64> {
                support
                    .iter()
                    .map(|c| m.get(c).copied().unwrap_or(0.0))
                    .collect()
            };
            let (va, vb) = (at(&pa), at(&pb));
            Some(Moved {
                item_id: p.item_id.to_string(),
                swapped: p.first.swapped,
                repeat: p.first.repeat,
                human: category_name(task, Some(p.human)),
                first: category_name(task, p.a),
                second: category_name(task, p.b),
                kl: Some(kl(&va, &vb)).filter(|k| k.is_finite()),
                js: js(&va, &vb),
            })
        })
        .collect();
    if moved.is_empty() {
        return None;
    }
    // Each item's (sum of finite KL, how many), items in the order first met.
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    let mut units: Vec<(f64, usize)> = Vec::new();
    for m in &moved {
        let i = *index.entry(m.item_id.as_str()).or_insert_with(|| {
            units.push((0.0, 0));
            units.len() - 1
        });
        if let Some(k) = m.kl {
            units[i].0 += k;
            units[i].1 += 1;
        }
    }
    let kl_ci = (spec.resamples > 0)
        .then(|| {
            spec.ci(units.len(), |idx| {
                let (sum, n) = idx
                    .iter()
                    .fold((0.0, 0), |(s, n), &i| (s + units[i].0, n + units[i].1));
                (n > 0).then(|| sum / n as f64)
            })
        })
        .flatten();
    let mut finite: Vec<f64> = moved.iter().filter_map(|m| m.kl).collect();
    finite.sort_by(f64::total_cmp);
    let mut jss: Vec<f64> = moved.iter().map(|m| m.js).collect();
    jss.sort_by(f64::total_cmp);
    let n_pairs = moved.len();
    let mean = |v: &[f64]| (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
    let divergence = Divergence {
        n_pairs,
        kl_mean: Estimate {
            value: mean(&finite),
            ci: kl_ci,
        },
        kl_p95: percentile(&finite, 0.95),
        kl_infinite: n_pairs - finite.len(),
        js_mean: mean(&jss).unwrap_or(0.0),
        js_p95: percentile(&jss, 0.95).unwrap_or(0.0),
        moved: Vec::new(),
    };
    moved.sort_by(|x, y| {
        y.js.total_cmp(&x.js)
            .then_with(|| x.item_id.cmp(&y.item_id))
            .then(x.swapped.cmp(&y.swapped))
            .then(x.repeat.cmp(&y.repeat))
    });
    moved.truncate(MOVED_SHOWN);
    Some(Divergence {
        moved,
        ..divergence
    })
}

/// KL(p ‖ q) in nats (scipy's `entropy(p, q)` on normalised vectors): infinite where `q`
/// is 0 and `p` is not.
pub fn kl(p: &[f64], q: &[f64]) -> f64 {
    let (sp, sq): (f64, f64) = (p.iter().sum(), q.iter().sum());
    p.iter()
        .zip(q)
        .map(|(&x, &y)| {
            let (x, y) = (x / sp, y / sq);
            match (x > 0.0, y > 0.0) {
                (false, _) => 0.0,
                (true, false) => f64::INFINITY,
                (true, true) => x * (x / y).ln(),
            }
        })
        .sum()
}

/// The Jensen–Shannon divergence of `p` and `q` in nats (scipy's
/// `jensenshannon(p, q) ** 2`): the mean KL of each to their midpoint.
pub fn js(p: &[f64], q: &[f64]) -> f64 {
    let (sp, sq): (f64, f64) = (p.iter().sum(), q.iter().sum());
    let (p, q): (Vec<f64>, Vec<f64>) = (
        p.iter().map(|x| x / sp).collect(),
        q.iter().map(|y| y / sq).collect(),
    );
    let m: Vec<f64> = p.iter().zip(&q).map(|(x, y)| (x + y) / 2.0).collect();
    ((kl(&p, &m) + kl(&q, &m)) / 2.0).max(0.0)
}

/// A category as the reader knows it: `A`, `B`, `tie`, a scale point, or `failed`.
pub(crate) fn category_name(task: Task, c: Category) -> String {
    match (task, c) {
        (_, None) => "failed".into(),
        (Task::Pairwise, Some(0)) => "A".into(),
        (Task::Pairwise, Some(1)) => "B".into(),
        (Task::Pairwise, Some(TIE)) => "tie".into(),
        (_, Some(code)) => code.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::dataset::Choice;
    use crate::dataset::Label;
    use crate::metrics::paired::mcnemar_exact;
    use crate::reference::{close, floats};
    use crate::trust::ConfidenceKind;
    use crate::verdict::{FailureKind, Verdict};

    const REFERENCE: &str = include_str!("testdata/drift.json");

    fn choice(s: &str) -> Option<Label> {
        Some(Label::Choice(match s {
            "A" => Choice::A,
            "B" => Choice::B,
            "tie" => Choice::Tie,
            _ => return None,
        }))
    }

    /// One side's calls of the reference case, as observations.
    fn side(calls: &[Value], which: &str) -> Vec<(String, Observation)> {
        calls
            .iter()
            .map(|c| {
                let verdict = choice(c[which].as_str().unwrap())
                    .map_or(Verdict::Failed(FailureKind::NoLabel), Verdict::Parsed);
                let mut o = Observation::verdict(
                    0,
                    choice(c["human"].as_str().unwrap()).unwrap(),
                    Label::Rating(0.0),
                );
                o.verdict = Some(verdict);
                o.swapped = c["swapped"].as_bool().unwrap();
                // A, B, tie and a failure.
                let p = floats(&c[format!("{which}_belief")]);
                o.belief = Some(Belief {
                    kind: ConfidenceKind::Exact,
                    labels: ["A", "B", "tie"]
                        .iter()
                        .zip(&p)
                        .map(|(l, q)| (choice(l).unwrap(), q / (1.0 - p[3])))
                        .collect(),
                    failed: p[3],
                });
                (c["item"].as_str().unwrap().to_string(), o)
            })
            .collect()
    }

    fn calls(side: &[(String, Observation)]) -> Vec<Call<'_>> {
        side.iter()
            .map(|(item_id, observation)| Call {
                item_id,
                observation,
            })
            .collect()
    }

    fn matrix(v: &Value) -> Vec<Vec<usize>> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|r| floats(r).into_iter().map(|x| x as usize).collect())
            .collect()
    }

    #[test]
    fn drift_matches_the_reference() {
        let r: Value = serde_json::from_str(REFERENCE).unwrap();
        let case = &r["case"];
        let spec = BootstrapSpec {
            resamples: case["resamples"].as_u64().unwrap() as u32,
            level: case["level"].as_f64().unwrap(),
            seed: case["seed"].as_u64().unwrap(),
        };
        let all = case["calls"].as_array().unwrap();
        let (a, b) = (side(all, "first"), side(all, "second"));
        let d = drift(Task::Pairwise, &calls(&a), &calls(&b), &spec);
        let count = |k: &str| case[k].as_u64().unwrap() as usize;
        assert_eq!(d.n_pairs, count("n_pairs"));
        assert_eq!(d.n_items, count("n_items"));
        assert_eq!(d.flips, count("flips"));
        assert_eq!(d.toward_humans, count("toward_humans"));
        assert_eq!(d.away_from_humans, count("away_from_humans"));
        let categories: Vec<&str> = case["categories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap())
            .collect();
        assert_eq!(d.categories, categories);
        assert_eq!(d.matrix, matrix(&case["matrix"]));
        for (got, want) in d.by_human.iter().zip(case["by_human"].as_array().unwrap()) {
            assert_eq!(got.human, want["human"].as_str().unwrap());
            assert_eq!(got.n_pairs, want["n_pairs"].as_u64().unwrap() as usize);
            assert_eq!(got.flips, want["flips"].as_u64().unwrap() as usize);
            assert_eq!(
                got.toward_humans,
                want["toward_humans"].as_u64().unwrap() as usize
            );
            assert_eq!(
                got.away_from_humans,
                want["away_from_humans"].as_u64().unwrap() as usize
            );
            assert_eq!(got.matrix, matrix(&want["matrix"]));
        }
        close("flip rate", d.flip_rate.value, &case["flip_rate"]);
        let ci = d.flip_rate.ci;
        close("flip rate ci", ci.map(|c| c.0), &case["flip_rate_ci"][0]);
        close("flip rate ci", ci.map(|c| c.1), &case["flip_rate_ci"][1]);
        close("kappa", d.kappa, &case["kappa"]);
        let (mb, mc) = (
            case["mcnemar_b"].as_u64().unwrap(),
            case["mcnemar_c"].as_u64().unwrap(),
        );
        assert_eq!(
            (d.away_from_humans as u64, d.toward_humans as u64),
            (mb, mc)
        );
        close("mcnemar", Some(mcnemar_exact(mb, mc)), &case["mcnemar_p"]);
        let div = d.divergence.expect("both sides carry beliefs");
        assert_eq!(div.n_pairs, count("n_pairs"));
        assert_eq!(div.kl_infinite, 0);
        close("kl mean", div.kl_mean.value, &case["kl_mean"]);
        let ci = div.kl_mean.ci;
        close("kl mean ci", ci.map(|c| c.0), &case["kl_mean_ci"][0]);
        close("kl mean ci", ci.map(|c| c.1), &case["kl_mean_ci"][1]);
        close("kl p95", div.kl_p95, &case["kl_p95"]);
        close("js mean", Some(div.js_mean), &case["js_mean"]);
        close("js p95", Some(div.js_p95), &case["js_p95"]);
        assert_eq!(div.moved.len(), MOVED_SHOWN);
        assert!(div.moved.windows(2).all(|w| w[0].js >= w[1].js));
    }

    #[test]
    fn divergences_and_mcnemar_match_scipy_and_statsmodels() {
        let r: Value = serde_json::from_str(REFERENCE).unwrap();
        for case in r["divergences"].as_array().unwrap() {
            let (p, q) = (floats(&case["p"]), floats(&case["q"]));
            close(
                "kl",
                Some(kl(&p, &q)).filter(|k| k.is_finite()),
                &case["kl"],
            );
            close("js", Some(js(&p, &q)), &case["js"]);
        }
        crate::reference::check_mcnemar(&r["mcnemar"]);
    }

    /// Calls only one judge made, and calls that failed, are counted and left out.
    #[test]
    fn unmatched_and_failed_calls_are_counted_and_left_out() {
        let r: Value = serde_json::from_str(REFERENCE).unwrap();
        let all = r["case"]["calls"].as_array().unwrap();
        let (a, mut b) = (side(all, "first"), side(all, "second"));
        b.truncate(70);
        b[0].1.verdict = None;
        b.push(("elsewhere".into(), b[1].1.clone()));
        let d = drift(
            Task::Pairwise,
            &calls(&a),
            &calls(&b),
            &BootstrapSpec::default(),
        );
        assert_eq!((d.only_first, d.only_second, d.failed_calls), (10, 1, 1));
        assert_eq!(d.n_pairs, 69);
        assert_eq!(d.matrix.iter().flatten().sum::<usize>(), 69);
    }
}
