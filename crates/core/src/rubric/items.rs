//! A checklist's yes/no items: a criterion a template declares with `items` is asked as
//! those questions, a call each, instead of its value.
//!
//! ```jinja
//! {"name": "groundedness", "definition": "Does it use the facts given?",
//!  "items": ["Does it state a fact from the knowledge?", "Is every fact it states there?"]}
//! ```
//!
//! Each item is asked as a criterion of its own on a 0-1 scale, named `CRITERION/k` (k from
//! 1), its question the template's `rubric[0].item`. The stated rule ([`combine`]): the
//! criterion's value is the share of its items answered yes, put on the criterion's scale
//! (`min + share × (max − min)`), over the items whose answer parsed — an answer that does
//! not parse fails that item only; where none parsed, the criterion fails as the first did.

use super::{Asked, Declared};
use crate::dataset::{Label, Task};
use crate::verdict::{FailureKind, Verdict};

/// The task of an item: yes (1) or no (0).
pub const YES_NO: Task = Task::Single {
    scale_min: 0,
    scale_max: 1,
};

/// The calls a checklist makes of `asked`: each criterion without items as it is, each
/// item of one with items as a 0-1 criterion `NAME/k` asking its question.
pub fn calls(asked: &[Asked]) -> Vec<Asked> {
    asked
        .iter()
        .flat_map(|a| {
            if a.items.is_empty() {
                return vec![a.clone()];
            }
            a.items
                .iter()
                .enumerate()
                .map(|(k, question)| Asked {
                    name: name(&a.name, k + 1),
                    definition: a.definition.clone(),
                    task: YES_NO,
                    items: Vec::new(),
                    item: Some(question.clone()),
                })
                .collect()
        })
        .collect()
}

/// The name of the call asking item `k` (from 1) of `criterion`.
fn name(criterion: &str, k: usize) -> String {
    format!("{criterion}/{k}")
}

/// Each yes/no question `declared` asks in a checklist, by the name of its call.
pub fn questions(declared: &[Declared]) -> impl Iterator<Item = (String, String)> + '_ {
    declared.iter().flat_map(|d| {
        d.items
            .iter()
            .enumerate()
            .map(|(k, q)| (name(&d.name, k + 1), q.clone()))
    })
}

/// The criterion and item number (from 1) a call named `name` asks, where it asks an
/// item.
pub fn of(name: &str) -> Option<(&str, usize)> {
    let (criterion, k) = name.rsplit_once('/')?;
    Some((criterion, k.parse().ok().filter(|&k| k >= 1)?))
}

/// The criterion's name a call named `name` answers: its own, or its item's criterion.
pub fn criterion(name: &str) -> &str {
    of(name).map_or(name, |(c, _)| c)
}

/// A criterion's value from its items' answers, by the stated rule (see the module doc).
pub fn combine(task: Task, answers: &[Verdict]) -> Verdict {
    let yes: Vec<f64> = answers
        .iter()
        .filter_map(|v| match v {
            Verdict::Parsed(Label::Rating(x)) => Some(*x),
            _ => None,
        })
        .collect();
    if yes.is_empty() {
        return match answers.first() {
            Some(Verdict::Failed(kind)) => Verdict::Failed(*kind),
            _ => Verdict::Failed(FailureKind::NoLabel),
        };
    }
    let share = yes.iter().sum::<f64>() / yes.len() as f64;
    match task {
        Task::Single {
            scale_min,
            scale_max,
        } => Verdict::Parsed(Label::Rating(
            scale_min as f64 + share * (scale_max - scale_min) as f64,
        )),
        Task::Pairwise => Verdict::Failed(FailureKind::NoLabel),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rated(x: f64) -> Verdict {
        Verdict::Parsed(Label::Rating(x))
    }

    #[test]
    fn items_are_asked_one_by_one_and_combined_by_the_stated_rule() {
        let scale = Task::Single {
            scale_min: 1,
            scale_max: 3,
        };
        let asked = [
            Asked {
                name: "coherence".into(),
                definition: "Does it follow?".into(),
                task: scale,
                items: Vec::new(),
                item: None,
            },
            Asked {
                name: "grounded".into(),
                definition: "Does it use the facts?".into(),
                task: scale,
                items: vec!["One?".into(), "Two?".into(), "Three?".into()],
                item: None,
            },
        ];
        let calls = calls(&asked);
        let names: Vec<&str> = calls.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(
            names,
            ["coherence", "grounded/1", "grounded/2", "grounded/3"]
        );
        assert_eq!(calls[2].item.as_deref(), Some("Two?"));
        assert_eq!(calls[2].task, YES_NO);
        assert_eq!(of("grounded/2"), Some(("grounded", 2)));
        assert_eq!(
            (of("coherence"), criterion("grounded/3")),
            (None, "grounded")
        );
        // Two yes of three: 1 + 2/3 × 2 on 1-3.
        let v = combine(scale, &[rated(1.0), rated(0.0), rated(1.0)]);
        assert_eq!(v, rated(1.0 + 2.0 / 3.0 * 2.0));
        // An item that did not parse is left out; the others decide.
        let failed = Verdict::Failed(FailureKind::NoLabel);
        assert_eq!(
            combine(scale, &[rated(1.0), failed, rated(1.0)]),
            rated(3.0)
        );
        assert_eq!(combine(scale, &[failed, failed]), failed);
    }
}
