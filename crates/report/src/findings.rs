//! Findings: what a report says about an experiment, each one typed — its [`Kind`], its
//! [`Subject`], the figures it rests on with their intervals, and its sentence — and
//! computed once from the [`Analysis`], beside the results table. The terminal, Markdown,
//! HTML and the app lay them out; none composes a sentence of its own.
//!
//! A new kind of finding is a file in `findings/` (when it holds, its figures, its
//! sentence), its [`Kind`] with the section it belongs to, and its snapshot in
//! `tests/it/findings.rs`. A sentence marks code as Markdown does (`` `judgelab run` ``):
//! HTML and the app show it as code.

mod confirmation;
mod drift;
mod panels;
mod people;
mod pick;
mod trust;
mod weights;
mod wording;

use judgelab_core::metrics::Estimate;

use crate::analysis::Analysis;

/// One thing a report says.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub kind: Kind,
    pub subject: Subject,
    /// The figures it rests on, each with its interval where it has one.
    pub figures: Vec<Figure>,
    /// The sentence every output shows; a panel's and a cascade's are read after their
    /// subject's name ([`Finding::line`]).
    pub text: String,
}

impl Finding {
    /// The finding as one line of a list: a panel or a cascade named first.
    pub fn line(&self) -> String {
        match self.kind {
            Kind::Panel | Kind::Cascade => format!("{}: {}.", self.subject.label(), self.text),
            _ => self.text.clone(),
        }
    }
}

/// What a finding says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// No trial has a figure to choose by yet.
    Undecided,
    /// No configuration clearly beats the baselines.
    NotReady,
    /// The configuration to take, and why.
    Pick,
    /// The best's score corrected for having been picked among many.
    Selection,
    /// What to know about the pick: baselines, parse failures, failed calls, position
    /// bias, too few items.
    Caveat,
    /// Whether a test split confirmed the pick.
    Confirmation,
    /// What a race dropped, and the calls it saved.
    Race,
    /// Whose labels the figures are against.
    Labels,
    /// How much people agree, with each other and with the pick.
    Humans,
    /// A trial's calibration and what it decides alone.
    Trust,
    /// What a cascade decides and at what cost.
    Cascade,
    /// What a panel scores, how its members agree, what each adds.
    Panel,
    /// The criterion weights learned from the item's label.
    CriterionWeights,
    /// A checklist's yes/no items' weights.
    ItemWeights,
    /// A trial against its reference trial.
    Drift,
    /// How often the wording alone changes a verdict.
    Wording,
}

judgelab_core::names!(Kind {
    Undecided => "undecided",
    NotReady => "not ready",
    Pick => "pick",
    Selection => "selection",
    Caveat => "caveat",
    Confirmation => "confirmation",
    Race => "race",
    Labels => "labels",
    Humans => "humans",
    Trust => "trust",
    Cascade => "cascade",
    Panel => "panel",
    CriterionWeights => "criterion weights",
    ItemWeights => "item weights",
    Drift => "drift",
    Wording => "wording",
});

impl Kind {
    /// The kinds that answer "which configuration to pick", in the order they are read.
    pub const PICK: [Kind; 5] = [
        Kind::Undecided,
        Kind::NotReady,
        Kind::Pick,
        Kind::Selection,
        Kind::Caveat,
    ];
}

/// What a finding is about.
#[derive(Debug, Clone, PartialEq)]
pub enum Subject {
    /// The experiment as a whole.
    Experiment,
    /// A trial, by its id.
    Trial(i64),
    /// Trials read together: a paraphrase group.
    Trials(Vec<i64>),
    /// A cascade: its cheap trial decides at `threshold` and up, its strong one the rest.
    Cascade {
        cheap: i64,
        strong: i64,
        threshold: f64,
    },
    /// A panel, by its name.
    Panel(String),
    /// People who labelled the items: a pair, or every rater.
    Raters(Vec<String>),
}

impl Subject {
    /// How outputs name it: `#3`, `#2, #5`, `#2→#5 cascade ≥0.93`, `vote3`, `ann and bob`,
    /// `experiment`.
    pub fn label(&self) -> String {
        let ids = |ids: &[i64]| {
            ids.iter()
                .map(|id| format!("#{id}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        match self {
            Subject::Experiment => "experiment".into(),
            Subject::Trial(id) => format!("#{id}"),
            Subject::Trials(list) => ids(list),
            Subject::Cascade {
                cheap,
                strong,
                threshold,
            } => crate::analysis::cascade_name(*cheap, *strong, *threshold),
            Subject::Panel(name) => name.clone(),
            Subject::Raters(names) => names.join(" and "),
        }
    }
}

/// A figure a finding cites: what it measures, and its value with its interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Figure {
    pub name: String,
    pub estimate: Estimate,
}

impl Figure {
    pub fn new(name: impl Into<String>, estimate: Estimate) -> Figure {
        Figure {
            name: name.into(),
            estimate,
        }
    }

    /// A figure without an interval.
    pub fn point(name: impl Into<String>, value: Option<f64>) -> Figure {
        Figure::new(name, Estimate { value, ci: None })
    }
}

/// Every finding of an analysis, in the order a report reads them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Findings {
    pub list: Vec<Finding>,
}

impl Findings {
    pub fn new(a: &Analysis<'_>) -> Findings {
        let mut list = Vec::new();
        list.extend(people::labels(a));
        list.extend(pick::findings(a));
        list.extend(people::humans(a));
        list.extend(confirmation::findings(a));
        list.extend(trust::findings(a));
        list.extend(panels::findings(a));
        list.extend(weights::findings(a));
        list.extend(drift::findings(a));
        list.extend(wording::findings(a));
        Findings { list }
    }

    /// The findings of `kinds`, in order.
    pub fn of<'f>(&'f self, kinds: &'f [Kind]) -> impl Iterator<Item = &'f Finding> + 'f {
        self.list.iter().filter(move |f| kinds.contains(&f.kind))
    }

    /// Whether any finding is of `kinds`.
    pub fn any(&self, kinds: &[Kind]) -> bool {
        self.of(kinds).next().is_some()
    }
}
