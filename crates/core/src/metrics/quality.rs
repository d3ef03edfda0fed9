//! The agreement metrics a trial is judged by, named so that reports, charts and Pareto
//! objectives can refer to them, and computed together over one set of verdicts (the whole
//! trial, or one bootstrap resample of it).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};

use crate::dataset::{Choice, Label, Task};
use crate::metrics::agreement::{self, Weights};
use crate::metrics::alpha::{self, Level};

/// An agreement metric: higher is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quality {
    /// Share of verdicts equal to the human label; a parse failure counts as wrong. Ratings:
    /// only where every label and verdict is a whole point of the scale — exact agreement
    /// with a mean of several annotators (3.67), or with an aggregate of criteria, means
    /// nothing.
    Accuracy,
    /// Ratings where a label or verdict is not a whole point: share of verdicts within half
    /// a point of the human label (inclusive); a parse failure counts as a miss.
    WithinHalfPoint,
    /// Pairwise: accuracy over verdicts where neither the human nor the judge says tie
    /// (MT-Bench's "without tie").
    AgreementWithoutTies,
    /// Cohen's kappa for pairwise labels, a parse failure being a category of its own;
    /// quadratic-weighted kappa (over parsed verdicts) for ratings.
    Kappa,
    /// Linear-weighted kappa (ratings).
    KappaLinear,
    AlphaNominal,
    AlphaOrdinal,
    AlphaInterval,
    Spearman,
    Kendall,
    Pearson,
    /// Ratings: the mean absolute difference between the judge's rating and the human's,
    /// on parsed verdicts (parse failures have their own rate). An error, lower is better:
    /// shown beside the agreement metrics, it never ranks trials ([`Quality::ranks`]).
    #[serde(rename = "mae", alias = "mean_absolute_error")]
    MeanAbsoluteError,
}

crate::names!(Quality {
    Accuracy => "accuracy",
    WithinHalfPoint => "within_half_point",
    AgreementWithoutTies => "agreement_without_ties",
    Kappa => "kappa",
    KappaLinear => "kappa_linear",
    AlphaNominal => "alpha_nominal",
    AlphaOrdinal => "alpha_ordinal",
    AlphaInterval => "alpha_interval",
    Spearman => "spearman",
    Kendall => "kendall",
    Pearson => "pearson",
    MeanAbsoluteError => "mae",
});

impl Quality {
    /// Whether higher is better, so that the metric can rank trials (select, race, draw a
    /// front): every agreement metric, not an error.
    pub fn ranks(self) -> bool {
        self != Quality::MeanAbsoluteError
    }

    /// The metrics of a task that can rank its trials ([`Quality::ranks`]), most important
    /// first: the choices of a selection metric, a report's or a view's.
    pub fn ranking(task: Task) -> Vec<Quality> {
        Quality::for_task(task)
            .iter()
            .copied()
            .filter(|q| q.ranks())
            .collect()
    }

    /// The metrics defined for a task, most important first.
    pub fn for_task(task: Task) -> &'static [Quality] {
        match task {
            Task::Pairwise => &[
                Quality::Accuracy,
                Quality::Kappa,
                Quality::AgreementWithoutTies,
                Quality::AlphaNominal,
            ],
            Task::Single { .. } => &[
                Quality::Accuracy,
                Quality::WithinHalfPoint,
                Quality::Kappa,
                Quality::KappaLinear,
                Quality::AlphaOrdinal,
                Quality::AlphaInterval,
                Quality::Spearman,
                Quality::Kendall,
                Quality::Pearson,
                Quality::MeanAbsoluteError,
            ],
        }
    }

    /// A human title, for axis labels and table headers.
    pub fn title(self, task: Task) -> &'static str {
        match (self, task) {
            (Quality::Accuracy, _) => "accuracy",
            (Quality::WithinHalfPoint, _) => "within half a point",
            (Quality::AgreementWithoutTies, _) => "agreement without ties",
            (Quality::Kappa, Task::Pairwise) => "Cohen's kappa",
            (Quality::Kappa, Task::Single { .. }) => "quadratic-weighted kappa",
            (Quality::KappaLinear, _) => "linear-weighted kappa",
            (Quality::AlphaNominal, _) => "Krippendorff's alpha (nominal)",
            (Quality::AlphaOrdinal, _) => "Krippendorff's alpha (ordinal)",
            (Quality::AlphaInterval, _) => "Krippendorff's alpha (interval)",
            (Quality::Spearman, _) => "Spearman's rho",
            (Quality::Kendall, _) => "Kendall's tau-b",
            (Quality::Pearson, _) => "Pearson's r",
            (Quality::MeanAbsoluteError, _) => "mean absolute error (lower is better)",
        }
    }
}

/// One judged verdict reduced to numbers: categories (pairwise choices, or ratings rounded
/// onto the scale) and raw values (the ratings themselves).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scored {
    pub human: (i64, f64),
    /// `None` for a parse failure.
    pub judge: Option<(i64, f64)>,
}

/// The category code of a pairwise tie.
pub const TIE: i64 = 2;
/// The category of a parse failure in pairwise kappa.
const FAILED: i64 = -1;

impl Scored {
    pub fn new(task: Task, human: Label, judge: Option<Label>) -> Scored {
        let numbers = |label: Label| match (task, label) {
            (_, Label::Choice(c)) => {
                let code = match c {
                    Choice::A => 0,
                    Choice::B => 1,
                    Choice::Tie => TIE,
                };
                (code, code as f64)
            }
            (
                Task::Single {
                    scale_min,
                    scale_max,
                },
                Label::Rating(r),
            ) => ((r.round() as i64).clamp(scale_min, scale_max), r),
            (Task::Pairwise, Label::Rating(r)) => (r.round() as i64, r),
        };
        Scored {
            human: numbers(human),
            judge: judge.map(numbers),
        }
    }

    pub fn correct(&self) -> bool {
        self.judge.is_some_and(|j| j.0 == self.human.0)
    }
}

/// Scored verdicts as their distinct values and how often each occurs. Every metric here
/// depends on the verdicts only through these counts, so a bootstrap resample is a recount
/// of a few dozen values (see [`Distinct`]), not a copy of every verdict: on 100,000
/// verdicts, 1,000 resamples went from about 22 s to under 2. Counts are whole numbers and
/// the metrics add them as they would add the verdicts one by one, so the values are those
/// of the verdicts listed (to the last bit, but for sums of non-integer ratings).
#[derive(Debug, Clone, Copy)]
pub struct Tally<'a> {
    pub values: &'a [Scored],
    /// How often each of `values` occurs (zero counts allowed).
    pub counts: &'a [f64],
}

impl Tally<'_> {
    fn iter(&self) -> impl Iterator<Item = (Scored, f64)> + Clone + '_ {
        self.values
            .iter()
            .copied()
            .zip(self.counts.iter().copied())
            .filter(|(_, c)| *c > 0.0)
    }

    fn total(&self) -> f64 {
        self.counts.iter().sum()
    }
}

/// Numbers the distinct [`Scored`] values it is shown, so that verdicts can be counted by
/// value ([`Tally`]).
#[derive(Debug, Clone, Default)]
pub struct Distinct {
    values: Vec<Scored>,
    // Keyed by a fast hash: every verdict of a million is looked up here.
    index: HashMap<ScoredKey, u32, foldhash::fast::RandomState>,
}

type ScoredKey = ((i64, u64), Option<(i64, u64)>);

impl Distinct {
    /// The number of `s`, given it when first seen.
    pub fn id(&mut self, s: Scored) -> u32 {
        let bits = |x: (i64, f64)| (x.0, x.1.to_bits());
        let key = (bits(s.human), s.judge.map(bits));
        *self.index.entry(key).or_insert_with(|| {
            self.values.push(s);
            (self.values.len() - 1) as u32
        })
    }

    pub fn values(&self) -> &[Scored] {
        &self.values
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// Every metric of `task` over `scored` (`None` where undefined), in
/// [`Quality::for_task`] order.
pub fn compute(task: Task, scored: &[Scored]) -> Vec<(Quality, Option<f64>)> {
    let (distinct, counts) = tally(scored);
    compute_tally(task, distinct.as_tally(&counts))
}

/// One metric of `task` over `scored`; `None` where undefined (or not a metric of `task`).
pub fn value(task: Task, scored: &[Scored], q: Quality) -> Option<f64> {
    let (distinct, counts) = tally(scored);
    value_tally(task, distinct.as_tally(&counts), q)
}

fn tally(scored: &[Scored]) -> (Distinct, Vec<f64>) {
    let mut distinct = Distinct::default();
    let mut counts = Vec::new();
    for &s in scored {
        let id = distinct.id(s) as usize;
        if id == counts.len() {
            counts.push(0.0);
        }
        counts[id] += 1.0;
    }
    (distinct, counts)
}

impl Distinct {
    /// Its values with these counts.
    pub fn as_tally<'a>(&'a self, counts: &'a [f64]) -> Tally<'a> {
        Tally {
            values: &self.values,
            counts,
        }
    }
}

/// Every metric of `task` over a tally, in [`Quality::for_task`] order.
pub fn compute_tally(task: Task, tally: Tally<'_>) -> Vec<(Quality, Option<f64>)> {
    Quality::for_task(task)
        .iter()
        .map(|&q| (q, value_tally(task, tally, q)))
        .collect()
}

/// One metric of `task` over a tally; `None` where undefined (or not a metric of `task`).
pub fn value_tally(task: Task, tally: Tally<'_>, q: Quality) -> Option<f64> {
    let n = tally.total();
    let share = |hits: f64, of: f64| (of > 0.0).then(|| hits / of);
    let parsed = || {
        tally
            .iter()
            .filter_map(|(s, c)| s.judge.map(|j| (s.human, j, c)))
    };
    let raws = || -> Vec<(f64, f64, f64)> { parsed().map(|(h, j, c)| (h.1, j.1, c)).collect() };
    // One unit per distinct value for alpha: the human's value and the judge's, unless it
    // failed to parse (a missing value).
    let units = |raw: bool| -> Vec<(Unit, f64)> {
        let value = |x: (i64, f64)| if raw { x.1 } else { x.0 as f64 };
        tally
            .iter()
            .map(|(s, c)| match s.judge {
                Some(j) => (Unit([value(s.human), value(j)], 2), c),
                None => (Unit([value(s.human), f64::NAN], 1), c),
            })
            .collect()
    };
    let hits = |keep: &dyn Fn(&Scored) -> bool| -> (f64, f64) {
        tally
            .iter()
            .filter(|(s, _)| keep(s))
            .fold((0.0, 0.0), |(h, of), (s, c)| {
                (h + if s.correct() { c } else { 0.0 }, of + c)
            })
    };
    // Ratings all on whole points, among every value the tally can count (so that each
    // bootstrap resample of a set decides as the set does).
    let whole = || {
        tally
            .values
            .iter()
            .all(|s| s.human.1.fract() == 0.0 && s.judge.is_none_or(|j| j.1.fract() == 0.0))
    };
    match (q, task) {
        (Quality::Accuracy, Task::Single { .. }) if !whole() => None,
        (Quality::Accuracy, _) => share(hits(&|_| true).0, n),
        (Quality::WithinHalfPoint, Task::Single { .. }) if !whole() => {
            let within = tally
                .iter()
                .filter(|(s, _)| {
                    s.judge
                        .is_some_and(|j| (j.1 - s.human.1).abs() <= 0.5 + 1e-9)
                })
                // From +0: an empty float sum is -0, which would print as "-0.000".
                .fold(0.0, |sum, (_, c)| sum + c);
            share(within, n)
        }
        (Quality::WithinHalfPoint, _) => None,
        (Quality::AgreementWithoutTies, _) => {
            let (right, of) = hits(&|s| s.human.0 != TIE && s.judge.is_none_or(|j| j.0 != TIE));
            share(right, of)
        }
        (Quality::Kappa, Task::Pairwise) => {
            // A parse failure is a category of its own that matches no human label:
            // failing often must not score well by being right on the rest.
            agreement::cohen_kappa_counted(
                tally
                    .iter()
                    .map(|(s, c)| (s.human.0, s.judge.map_or(FAILED, |j| j.0), c)),
            )
        }
        (
            Quality::Kappa | Quality::KappaLinear,
            Task::Single {
                scale_min,
                scale_max,
            },
        ) => {
            let weights = if q == Quality::Kappa {
                Weights::Quadratic
            } else {
                Weights::Linear
            };
            agreement::weighted_kappa_counted(
                parsed().map(|(h, j, c)| (h.0, j.0, c)),
                scale_min,
                scale_max,
                weights,
            )
        }
        (Quality::AlphaNominal, _) => {
            alpha::krippendorff_alpha_counted(&units(false), Level::Nominal)
        }
        (Quality::AlphaOrdinal, _) => {
            alpha::krippendorff_alpha_counted(&units(false), Level::Ordinal)
        }
        (Quality::AlphaInterval, _) => {
            alpha::krippendorff_alpha_counted(&units(true), Level::Interval)
        }
        (Quality::Spearman, _) => agreement::spearman_counted(&raws()),
        (Quality::Kendall, _) => agreement::kendall_tau_b_counted(&raws()),
        (Quality::Pearson, _) => agreement::pearson_counted(&raws()),
        (Quality::KappaLinear, Task::Pairwise) => None,
        (Quality::MeanAbsoluteError, Task::Single { .. }) => {
            let (sum, of) = parsed().fold((0.0, 0.0), |(sum, of), (h, j, c)| {
                (sum + (j.1 - h.1).abs() * c, of + c)
            });
            share(sum, of)
        }
        (Quality::MeanAbsoluteError, Task::Pairwise) => None,
    }
}

/// One item's values for alpha: the human's, and the judge's unless it failed to parse.
struct Unit([f64; 2], usize);

impl AsRef<[f64]> for Unit {
    fn as_ref(&self) -> &[f64] {
        &self.0[..self.1]
    }
}
