//! The people behind the labels: whose labels the figures are against, and the human
//! ceiling (how much people agree with each other, and the pick with each of them).

use judgelab_core::annotation::{humans::DATASET, Labels};

use super::{Figure, Finding, Kind, Subject};
use crate::analysis::{estimate_text, Analysis};

/// Whose labels the figures are against, where not the dataset's own on the item:
/// "Every figure is against ann's labels (5 items carry one)."
pub(super) fn labels(a: &Analysis<'_>) -> Option<Finding> {
    let l = &a.summary.labels;
    (l.labels != Labels::Original || l.criterion.is_some()).then(|| Finding {
        kind: Kind::Labels,
        subject: Subject::Experiment,
        figures: vec![Figure::point("items labelled", Some(l.n_labelled as f64))],
        text: format!(
            "Every figure is against {} ({} items carry one).",
            l.description, l.n_labelled
        ),
    })
}

/// The human ceiling, once anyone has labelled in the queue or the file keeps each
/// person's labels: each pair of raters, alpha over them, and the pick with each rater,
/// in the report's metric.
pub(super) fn humans(a: &Analysis<'_>) -> Vec<Finding> {
    let Some(h) = &a.summary.humans else {
        return Vec::new();
    };
    let (q, name) = (a.quality, a.quality.name());
    let title = a.quality_title();
    let mut out: Vec<Finding> = h
        .pairs
        .iter()
        .map(|p| Finding {
            kind: Kind::Humans,
            subject: Subject::Raters(vec![p.first.clone(), p.second.clone()]),
            figures: vec![Figure::new(name, p.quality.get(q))],
            text: format!(
                "{} and {}: {title} {} on the {} items both labelled",
                p.first,
                p.second,
                estimate_text(p.quality.get(q)),
                p.n_items
            ),
        })
        .collect();
    out.push(Finding {
        kind: Kind::Humans,
        subject: Subject::Raters(Vec::new()),
        figures: vec![Figure::new("alpha", h.alpha)],
        text: format!(
            "{} {} raters{}: Krippendorff's alpha {} on {} items labelled twice or more",
            if h.combined { "the" } else { "all" },
            h.alpha_raters,
            if h.combined {
                " the file keeps (the dataset's label combines theirs, so it is left out)"
            } else {
                ""
            },
            estimate_text(h.alpha),
            h.n_shared
        ),
    });
    out.extend(h.judge.iter().map(|j| Finding {
        kind: Kind::Humans,
        subject: Subject::Raters(vec![j.rater.clone()]),
        figures: vec![Figure::new(name, j.quality.get(q))],
        text: format!(
            "the pick (trial #{}) and {}: {title} {} on the {} items {} labelled",
            j.trial_id,
            j.rater,
            estimate_text(j.quality.get(q)),
            j.n_items,
            if j.rater == DATASET {
                "the dataset"
            } else {
                "they"
            }
        ),
    }));
    out
}
