//! The agreement metrics a trial is judged by, named so that reports, charts and Pareto
//! objectives can refer to them, and computed together over one set of verdicts (the whole
//! trial, or one bootstrap resample of it).

use std::fmt;

use serde::{Deserialize, Serialize};

use crate::dataset::{Choice, Label, Task};
use crate::metrics::agreement::{self, Weights};
use crate::metrics::alpha::{self, Level};

/// An agreement metric: higher is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Quality {
    /// Share of verdicts equal to the human label; a parse failure counts as wrong.
    Accuracy,
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
}

impl Quality {
    pub const ALL: [Quality; 10] = [
        Quality::Accuracy,
        Quality::AgreementWithoutTies,
        Quality::Kappa,
        Quality::KappaLinear,
        Quality::AlphaNominal,
        Quality::AlphaOrdinal,
        Quality::AlphaInterval,
        Quality::Spearman,
        Quality::Kendall,
        Quality::Pearson,
    ];

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
                Quality::Kappa,
                Quality::KappaLinear,
                Quality::AlphaOrdinal,
                Quality::AlphaInterval,
                Quality::Spearman,
                Quality::Kendall,
                Quality::Pearson,
            ],
        }
    }

    /// The snake_case name used in JSON, CSV columns and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Quality::Accuracy => "accuracy",
            Quality::AgreementWithoutTies => "agreement_without_ties",
            Quality::Kappa => "kappa",
            Quality::KappaLinear => "kappa_linear",
            Quality::AlphaNominal => "alpha_nominal",
            Quality::AlphaOrdinal => "alpha_ordinal",
            Quality::AlphaInterval => "alpha_interval",
            Quality::Spearman => "spearman",
            Quality::Kendall => "kendall",
            Quality::Pearson => "pearson",
        }
    }

    pub fn from_name(name: &str) -> Option<Quality> {
        Quality::ALL.into_iter().find(|q| q.name() == name)
    }

    /// A human title, for axis labels and table headers.
    pub fn title(self, task: Task) -> &'static str {
        match (self, task) {
            (Quality::Accuracy, _) => "accuracy",
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
        }
    }
}

impl fmt::Display for Quality {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
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

/// One item's values for alpha: the human's, and the judge's unless it failed to parse.
/// Held inline, not in a `Vec` of its own: alpha is recomputed on each bootstrap resample.
struct Unit([f64; 2], usize);

impl AsRef<[f64]> for Unit {
    fn as_ref(&self) -> &[f64] {
        &self.0[..self.1]
    }
}

/// A human's and a judge's (category, value).
type Pair = ((i64, f64), (i64, f64));

/// Every metric of `task` over `scored` (`None` where undefined), in
/// [`Quality::for_task`] order.
pub fn compute(task: Task, scored: &[Scored]) -> Vec<(Quality, Option<f64>)> {
    Quality::for_task(task)
        .iter()
        .map(|&q| (q, value(task, scored, q)))
        .collect()
}

/// One metric of `task` over `scored`; `None` where undefined (or not a metric of `task`).
pub fn value(task: Task, scored: &[Scored], q: Quality) -> Option<f64> {
    let n = scored.len();
    let parsed: Vec<Pair> = scored
        .iter()
        .filter_map(|s| s.judge.map(|j| (s.human, j)))
        .collect();
    let share = |hits: usize, of: usize| (of > 0).then(|| hits as f64 / of as f64);
    let cats = |f: fn(&Pair) -> i64| parsed.iter().map(f).collect::<Vec<_>>();
    let raws = |f: fn(&Pair) -> f64| parsed.iter().map(f).collect::<Vec<_>>();
    let units = |raw: bool| -> Vec<Unit> {
        scored
            .iter()
            .map(|s| {
                let value = |x: (i64, f64)| if raw { x.1 } else { x.0 as f64 };
                match s.judge {
                    Some(j) => Unit([value(s.human), value(j)], 2),
                    None => Unit([value(s.human), f64::NAN], 1),
                }
            })
            .collect()
    };
    match (q, task) {
        (Quality::Accuracy, _) => share(scored.iter().filter(|s| s.correct()).count(), n),
        (Quality::AgreementWithoutTies, _) => {
            let no_ties: Vec<&Scored> = scored
                .iter()
                .filter(|s| s.human.0 != TIE && s.judge.is_none_or(|j| j.0 != TIE))
                .collect();
            share(
                no_ties.iter().filter(|s| s.correct()).count(),
                no_ties.len(),
            )
        }
        (Quality::Kappa, Task::Pairwise) => {
            // A parse failure is a category of its own that matches no human label:
            // failing often must not score well by being right on the rest.
            let humans: Vec<i64> = scored.iter().map(|s| s.human.0).collect();
            let judges: Vec<i64> = scored
                .iter()
                .map(|s| s.judge.map_or(FAILED, |j| j.0))
                .collect();
            agreement::cohen_kappa(&humans, &judges)
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
            agreement::weighted_kappa(
                &cats(|p| p.0 .0),
                &cats(|p| p.1 .0),
                scale_min,
                scale_max,
                weights,
            )
        }
        (Quality::AlphaNominal, _) => alpha::krippendorff_alpha(&units(false), Level::Nominal),
        (Quality::AlphaOrdinal, _) => alpha::krippendorff_alpha(&units(false), Level::Ordinal),
        (Quality::AlphaInterval, _) => alpha::krippendorff_alpha(&units(true), Level::Interval),
        (Quality::Spearman, _) => agreement::spearman(&raws(|p| p.0 .1), &raws(|p| p.1 .1)),
        (Quality::Kendall, _) => agreement::kendall_tau_b(&raws(|p| p.0 .1), &raws(|p| p.1 .1)),
        (Quality::Pearson, _) => agreement::pearson(&raws(|p| p.0 .1), &raws(|p| p.1 .1)),
        (Quality::KappaLinear, Task::Pairwise) => None,
    }
}
