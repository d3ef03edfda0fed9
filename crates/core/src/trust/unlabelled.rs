//! What a trial's judge says of items no human labelled, corrected with the items it judged
//! that humans did label: the quantity a task's verdicts measure ([`Quantity`]), each item's
//! score from its calls, and the estimate ([`Population`]) by PPI++ or Rogan–Gladen
//! ([`super::estimate`]) beside the judge's own figure, with the labels an interval width
//! needs.
//!
//! An item's score is the same function of the judge's calls on both sides, which is what
//! keeps the correction unbiased: the calls of one repeat combine across answer orders as
//! the metrics combine them, the repeats are averaged, and a parse failure scores the
//! quantity's fallback (the middle of the scale; a fail for a pass rate), so that an item
//! the judge cannot parse is never left out on one side only. Only an item whose every call
//! failed (an error the next run retries) has no score; it is left out and counted.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::dataset::{Choice, Label, Task};
use crate::metrics::position;
use crate::sweep::Order;
use crate::trust::belief::Belief;
use crate::trust::estimate::{self, Corrected, EstimateError};
use crate::verdict::Verdict;

/// What the estimate is of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Quantity {
    /// Pairwise: how often answer A is the better, a tie counted half (PPI++).
    WinRate,
    /// Ratings: the mean rating (PPI++).
    MeanRating,
    /// Ratings on a 0..1 scale with every human label 0 or 1: the share that passes
    /// (Rogan–Gladen).
    PassRate,
}

impl Quantity {
    /// The quantity of `task`, whose labelled items carry `humans`.
    pub fn of(task: Task, humans: &[Label]) -> Quantity {
        match task {
            Task::Pairwise => Quantity::WinRate,
            Task::Single {
                scale_min: 0,
                scale_max: 1,
            } if humans
                .iter()
                .all(|h| matches!(h, Label::Rating(r) if *r == 0.0 || *r == 1.0)) =>
            {
                Quantity::PassRate
            }
            Task::Single { .. } => Quantity::MeanRating,
        }
    }

    /// What it measures, in the reader's words.
    pub fn title(self) -> &'static str {
        match self {
            Quantity::WinRate => "win rate of answer A (ties count half)",
            Quantity::MeanRating => "mean rating",
            Quantity::PassRate => "pass rate",
        }
    }

    /// The correction it takes.
    pub fn method(self) -> &'static str {
        match self {
            Quantity::PassRate => "Rogan–Gladen",
            Quantity::WinRate | Quantity::MeanRating => "PPI++",
        }
    }

    /// A label as a number.
    fn value(self, label: Label) -> f64 {
        match label {
            Label::Choice(Choice::A) => 1.0,
            Label::Choice(Choice::Tie) => 0.5,
            Label::Choice(Choice::B) => 0.0,
            Label::Rating(r) => r,
        }
    }

    /// The values it can take: the estimate is cut there ([`Corrected::within`]).
    fn range(self, task: Task) -> (f64, f64) {
        match (self, task) {
            (
                Quantity::MeanRating,
                Task::Single {
                    scale_min,
                    scale_max,
                },
            ) => (scale_min as f64, scale_max as f64),
            _ => (0.0, 1.0),
        }
    }

    /// What a parse failure scores.
    fn fallback(self, task: Task) -> f64 {
        match (self, task) {
            (Quantity::PassRate, _) => 0.0,
            (
                _,
                Task::Single {
                    scale_min,
                    scale_max,
                },
            ) => (scale_min + scale_max) as f64 / 2.0,
            (_, Task::Pairwise) => 0.5,
        }
    }
}

/// One call of the judge on an item.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The item, numbered by the caller.
    pub unit: usize,
    pub repeat: u32,
    pub swapped: bool,
    /// `None`: the call failed.
    pub verdict: Option<Verdict>,
    /// What the judge believed of the verdicts, where it says.
    pub belief: Option<Belief>,
    /// The trial's answer order: how its two orders' calls combine.
    pub order: Order,
}

/// An estimate of a population the judge scored, corrected with the labelled items.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Population {
    pub quantity: Quantity,
    /// "PPI++" or "Rogan–Gladen".
    pub method: &'static str,
    /// The intervals' level.
    pub level: f64,
    #[serde(flatten)]
    pub corrected: Corrected,
    /// Items asked for without a label, and those left out because every call on them
    /// failed (the next run retries them).
    pub n_unlabelled_items: usize,
    pub n_without_verdict: usize,
    /// Items scored with the fallback because their verdicts did not parse, on each side.
    pub n_parse_failures_labelled: usize,
    pub n_parse_failures_unlabelled: usize,
    /// What a parse failure scores.
    pub fallback: f64,
    /// The interval width asked for, and the labelled items that would give it (none where
    /// no number of labels can).
    pub width: Option<f64>,
    pub labels_needed: Option<usize>,
}

impl Population {
    /// The estimate in the reader's words: "the pass rate is 0.412 [0.35, 0.47] (Rogan–Gladen,
    /// 120 labelled items); the judge alone says 0.530 [0.50, 0.56]".
    pub fn reading(&self) -> String {
        let c = &self.corrected;
        format!(
            "the {} on {} items without a label is {:.3} [{:.3}, {:.3}] ({}, corrected with {} labelled items); the judge alone says {:.3} [{:.3}, {:.3}], as if it were never wrong",
            self.quantity.title(),
            c.n_unlabelled,
            c.value,
            c.ci[0],
            c.ci[1],
            self.method,
            c.n_labelled,
            c.naive,
            c.naive_ci[0],
            c.naive_ci[1],
        )
    }

    /// The planner's answer in the reader's words, where a width was asked for.
    pub fn plan_reading(&self) -> Option<String> {
        let width = self.width?;
        Some(match self.labels_needed {
            Some(n) => format!(
                "an interval {width} wide needs about {n} labelled items (there are {})",
                self.corrected.n_labelled
            ),
            None => format!(
                "no number of labelled items gives an interval {width} wide with {} items without a label",
                self.corrected.n_unlabelled
            ),
        })
    }
}

/// Each item's score from its calls, and how many items had a parse failure among them.
fn scores(quantity: Quantity, task: Task, calls: &[Call]) -> (BTreeMap<usize, f64>, usize) {
    // Each item and repeat's call in each order.
    type Orders<'a> = (Option<&'a Call>, Option<&'a Call>);
    let mut repeats: BTreeMap<(usize, u32), Orders<'_>> = BTreeMap::new();
    for c in calls.iter().filter(|c| c.verdict.is_some()) {
        let slot = repeats.entry((c.unit, c.repeat)).or_default();
        if c.swapped {
            slot.1 = Some(c);
        } else {
            slot.0 = Some(c);
        }
    }
    fn believed(c: &Call) -> Option<position::Believed<'_>> {
        c.verdict.map(|v| (v, c.belief.as_ref()))
    }
    let mut sums: BTreeMap<usize, (f64, usize, bool)> = BTreeMap::new();
    for ((unit, _), orders) in repeats {
        let verdict = match orders {
            (Some(ab), Some(ba)) => match (believed(ab), believed(ba)) {
                (Some(x), Some(y)) => position::combine_as(ab.order, x, y),
                _ => continue,
            },
            (Some(one), None) | (None, Some(one)) => match one.verdict {
                Some(v) => v,
                None => continue,
            },
            (None, None) => continue,
        };
        let (score, failed) = match verdict.label() {
            Some(l) => (quantity.value(l), false),
            None => (quantity.fallback(task), true),
        };
        let s = sums.entry(unit).or_default();
        s.0 += score;
        s.1 += 1;
        s.2 |= failed;
    }
    let n_failed = sums.values().filter(|s| s.2).count();
    let scores = sums
        .into_iter()
        .map(|(unit, (sum, n, _))| (unit, sum / n as f64))
        .collect();
    (scores, n_failed)
}

/// The estimate of `task`'s quantity over the items of `unlabelled` (`n_unlabelled_items`
/// asked for), corrected with `labelled`: the judge's calls on items humans labelled, each
/// unit's label in `humans`. `width`, where given, asks the planner for the labels an
/// interval that wide needs, at the same `level`.
pub fn population(
    task: Task,
    labelled: &[Call],
    humans: &BTreeMap<usize, Label>,
    unlabelled: &[Call],
    n_unlabelled_items: usize,
    width: Option<f64>,
    level: f64,
) -> Result<Population, EstimateError> {
    let all_humans: Vec<Label> = humans.values().copied().collect();
    let quantity = Quantity::of(task, &all_humans);
    let (f_labelled, n_failed_labelled) = scores(quantity, task, labelled);
    let (f_unlabelled, n_failed_unlabelled) = scores(quantity, task, unlabelled);
    let (y, f): (Vec<f64>, Vec<f64>) = f_labelled
        .iter()
        .filter_map(|(unit, &f)| Some((quantity.value(*humans.get(unit)?), f)))
        .unzip();
    let fu: Vec<f64> = f_unlabelled.values().copied().collect();
    let (corrected, labels_needed) = match quantity {
        Quantity::PassRate => {
            // An item passes where more of its repeats passed than failed.
            let pass = |v: &f64| *v > 0.5;
            let labels: Vec<bool> = y.iter().map(pass).collect();
            let preds: Vec<bool> = f.iter().map(pass).collect();
            let rest: Vec<bool> = fu.iter().map(pass).collect();
            let c = estimate::rogan_gladen(&labels, &preds, &rest, level)?;
            let need =
                width.and_then(|w| estimate::rogan_gladen_labels_needed(&labels, &preds, &rest, w));
            (c, need)
        }
        Quantity::WinRate | Quantity::MeanRating => {
            let c = estimate::ppi_mean(&y, &f, &fu, level)?;
            let need = width.and_then(|w| estimate::ppi_labels_needed(&y, &f, &fu, w, level));
            (c, need)
        }
    };
    let (lo, hi) = quantity.range(task);
    Ok(Population {
        quantity,
        method: quantity.method(),
        level,
        corrected: corrected.within(lo, hi),
        n_unlabelled_items,
        n_without_verdict: n_unlabelled_items.saturating_sub(fu.len()),
        n_parse_failures_labelled: n_failed_labelled,
        n_parse_failures_unlabelled: n_failed_unlabelled,
        fallback: quantity.fallback(task),
        width,
        labels_needed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verdict::FailureKind;

    const A: Label = Label::Choice(Choice::A);
    const B: Label = Label::Choice(Choice::B);
    const TIE: Label = Label::Choice(Choice::Tie);

    fn call(unit: usize, repeat: u32, swapped: bool, verdict: Option<Label>) -> Call {
        Call {
            unit,
            repeat,
            swapped,
            verdict: Some(verdict.map_or(Verdict::Failed(FailureKind::NoLabel), Verdict::Parsed)),
            belief: None,
            order: Order::Both,
        }
    }

    #[test]
    fn an_item_scores_its_combined_orders_averaged_over_repeats() {
        let calls = [
            // Both orders agree on A in repeat 0; they disagree (a tie) in repeat 1.
            call(0, 0, false, Some(A)),
            call(0, 0, true, Some(A)),
            call(0, 1, false, Some(A)),
            call(0, 1, true, Some(B)),
            // A parse failure scores the middle; a failed call is no verdict at all.
            call(1, 0, false, None),
            Call {
                unit: 2,
                repeat: 0,
                swapped: false,
                verdict: None,
                belief: None,
                order: Order::Both,
            },
        ];
        let (s, failed) = scores(Quantity::WinRate, Task::Pairwise, &calls);
        assert_eq!(s, BTreeMap::from([(0, 0.75), (1, 0.5)]));
        assert_eq!(failed, 1);
    }

    #[test]
    fn the_quantity_follows_the_task_and_the_labels() {
        let binary = Task::Single {
            scale_min: 0,
            scale_max: 1,
        };
        assert_eq!(Quantity::of(Task::Pairwise, &[A, TIE]), Quantity::WinRate);
        let labels = [Label::Rating(0.0), Label::Rating(1.0)];
        assert_eq!(Quantity::of(binary, &labels), Quantity::PassRate);
        // The mean of several annotators is no pass or fail: its mean is estimated.
        let means = [Label::Rating(0.0), Label::Rating(0.67)];
        assert_eq!(Quantity::of(binary, &means), Quantity::MeanRating);
        let five = Task::Single {
            scale_min: 1,
            scale_max: 5,
        };
        assert_eq!(Quantity::fallback(Quantity::MeanRating, five), 3.0);
    }

    /// The estimate is the statistics' own on the items' scores.
    #[test]
    fn a_population_is_the_estimate_of_its_scores() {
        let humans = BTreeMap::from([(0, A), (1, B), (2, A), (3, TIE)]);
        let labelled = [
            call(0, 0, false, Some(A)),
            call(1, 0, false, Some(B)),
            call(2, 0, false, Some(B)),
            call(3, 0, false, None),
        ];
        let unlabelled = [
            call(0, 0, false, Some(A)),
            call(1, 0, false, Some(A)),
            call(2, 0, false, Some(B)),
        ];
        let p = population(
            Task::Pairwise,
            &labelled,
            &humans,
            &unlabelled,
            4,
            Some(0.5),
            0.95,
        )
        .unwrap();
        let want = estimate::ppi_mean(
            &[1.0, 0.0, 1.0, 0.5],
            &[1.0, 0.0, 0.0, 0.5],
            &[1.0, 1.0, 0.0],
            0.95,
        )
        .unwrap()
        .within(0.0, 1.0);
        assert_eq!(p.corrected, want);
        assert_eq!((p.n_without_verdict, p.n_parse_failures_labelled), (1, 1));
        assert_eq!(p.method, "PPI++");
        assert!(p.labels_needed.is_some());
    }

    /// Few labels give a normal interval past the quantity's range; it is cut there.
    #[test]
    fn an_interval_stays_within_what_the_quantity_can_be() {
        let humans = BTreeMap::from([(0, A), (1, A), (2, B)]);
        let labelled = [
            call(0, 0, false, Some(A)),
            call(1, 0, false, Some(B)),
            call(2, 0, false, Some(B)),
        ];
        let unlabelled = [call(0, 0, false, Some(A)), call(1, 0, false, Some(A))];
        let raw =
            estimate::ppi_mean(&[1.0, 1.0, 0.0], &[1.0, 0.0, 0.0], &[1.0, 1.0], 0.95).unwrap();
        assert!(raw.ci[1] > 1.0, "{raw:?}");
        let p = population(
            Task::Pairwise,
            &labelled,
            &humans,
            &unlabelled,
            2,
            None,
            0.95,
        )
        .unwrap();
        assert_eq!(p.corrected.ci, [raw.ci[0].max(0.0), 1.0]);
        assert_eq!(p.corrected.value, raw.value.min(1.0));
    }

    #[test]
    fn a_pass_rate_takes_rogan_gladen() {
        let binary = Task::Single {
            scale_min: 0,
            scale_max: 1,
        };
        let (pass, fail) = (Label::Rating(1.0), Label::Rating(0.0));
        let humans: BTreeMap<usize, Label> = [pass, pass, pass, fail, fail, fail]
            .into_iter()
            .enumerate()
            .collect();
        let judged = [pass, pass, fail, fail, fail, pass];
        let labelled: Vec<Call> = judged
            .iter()
            .enumerate()
            .map(|(u, &v)| call(u, 0, false, Some(v)))
            .collect();
        let unlabelled: Vec<Call> = [pass, fail, fail, pass, pass]
            .iter()
            .enumerate()
            .map(|(u, &v)| call(u, 0, false, Some(v)))
            .collect();
        let p = population(binary, &labelled, &humans, &unlabelled, 5, None, 0.95).unwrap();
        let want = estimate::rogan_gladen(
            &[true, true, true, false, false, false],
            &[true, true, false, false, false, true],
            &[true, false, false, true, true],
            0.95,
        )
        .unwrap()
        .within(0.0, 1.0);
        assert_eq!((p.quantity, p.corrected), (Quantity::PassRate, want));
    }
}
