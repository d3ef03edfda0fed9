//! Baselines shown beside every trial, so that a judge that only counts words is exposed:
//! always answering the most common human label, and (pairwise) "the longer answer wins",
//! which already reaches 62% agreement on AlpacaEval.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::dataset::{Choice, Item, Label, Task};
use crate::metrics::{estimates, BootstrapSpec, Qualities, Scored};

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Baseline {
    /// `majority` or `longer_answer`.
    pub name: &'static str,
    /// What it answers, e.g. "always B".
    pub description: String,
    #[serde(flatten)]
    pub quality: Qualities,
}

/// The baselines of `task` over `items` (the judged items, one unit each, in order).
pub fn baselines(task: Task, items: &[&Item], spec: &BootstrapSpec) -> Vec<Baseline> {
    let mut out = vec![majority(task, items, spec)];
    if task == Task::Pairwise {
        out.push(longer_answer(items, spec));
    }
    out
}

fn score(
    task: Task,
    items: &[&Item],
    answer: impl Fn(&Item) -> Label,
    spec: &BootstrapSpec,
) -> Qualities {
    let units: Vec<Vec<Scored>> = items
        .iter()
        .map(|item| vec![Scored::new(task, item.human_label, Some(answer(item)))])
        .collect();
    estimates(task, &units, spec)
}

/// Always the most common human label (by category; the first in label order on a tie).
pub fn majority(task: Task, items: &[&Item], spec: &BootstrapSpec) -> Baseline {
    let mut counts: BTreeMap<i64, (usize, Label)> = BTreeMap::new();
    for item in items {
        let s = Scored::new(task, item.human_label, None);
        let label = match item.human_label {
            Label::Rating(_) => Label::Rating(s.human.0 as f64),
            choice => choice,
        };
        counts.entry(s.human.0).or_insert((0, label)).0 += 1;
    }
    let best = counts
        .values()
        .copied()
        .fold(None, |best: Option<(usize, Label)>, c| match best {
            Some(b) if b.0 >= c.0 => Some(b),
            _ => Some(c),
        });
    let label = best.map_or(Label::Choice(Choice::A), |b| b.1);
    Baseline {
        name: "majority",
        description: format!("always {label}"),
        quality: score(task, items, |_| label, spec),
    }
}

/// The longer answer (in characters) wins; equal lengths are a tie.
pub fn longer_answer(items: &[&Item], spec: &BootstrapSpec) -> Baseline {
    let pick = |item: &Item| {
        let len = |a: &Option<String>| a.as_deref().map_or(0, |s| s.chars().count());
        Label::Choice(match len(&item.answer_a).cmp(&len(&item.answer_b)) {
            std::cmp::Ordering::Greater => Choice::A,
            std::cmp::Ordering::Less => Choice::B,
            std::cmp::Ordering::Equal => Choice::Tie,
        })
    };
    Baseline {
        name: "longer_answer",
        description: "the longer answer wins".to_string(),
        quality: score(Task::Pairwise, items, pick, spec),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::Quality;

    fn item(a: &str, b: &str, label: Choice) -> Item {
        Item {
            id: String::new(),
            question: String::new(),
            answer_a: Some(a.into()),
            answer_b: Some(b.into()),
            answer: None,
            reference: None,
            human_label: Label::Choice(label),
            human_labels: Default::default(),
            meta: serde_json::Value::Null,
        }
    }

    #[test]
    fn pairwise_baselines() {
        let items = [
            item("long answer", "short", Choice::A),
            item("x", "longer", Choice::B),
            item("y", "longer", Choice::B),
            item("same", "same", Choice::A),
        ];
        let refs: Vec<&Item> = items.iter().collect();
        let spec = BootstrapSpec::default();
        let [majority, longer] = baselines(Task::Pairwise, &refs, &spec).try_into().unwrap();
        // A and B are both 2: the first in label order wins.
        assert_eq!(majority.description, "always A");
        assert_eq!(majority.quality.get(Quality::Accuracy).value, Some(0.5));
        assert_eq!(longer.quality.get(Quality::Accuracy).value, Some(0.75));
        assert!(longer.quality.get(Quality::Accuracy).ci.is_some());
    }
}
