//! Wording robustness: how often a verdict changes when only the template's wording does.
//! The experiment's paraphrases (`[robustness]`) group its trials that differ in nothing
//! but which paraphrase they use. On each item, the group's calls are matched by answer
//! order and repeat; a call slot is stable where every paraphrase gives the same verdict
//! (by category, a parse failure a category of its own, as [`crate::metrics::drift`]
//! compares), an item where all its slots are. Per group: the share of stable items with
//! a bootstrap interval over items; per item: the share of its paraphrases' verdicts that
//! differ from its slot's most common one.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::metrics::drift::{category_name, Category};
use crate::metrics::{BootstrapSpec, Estimate, Scored};
use crate::sweep;
use crate::Task;

use super::ExperimentSummary;

/// How many of a group's least stable items are listed.
pub const ITEMS_SHOWN: usize = 10;

/// The trials that differ only in their paraphrase, and how stable their verdicts are.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WordingGroup {
    /// Its trials' ids, in the paraphrases' order.
    pub trials: Vec<i64>,
    /// The templates, in the same order.
    pub templates: Vec<String>,
    /// What the trials share: their parameters but the template (`axis=value`).
    pub params: String,
    /// Items every paraphrase judged (on at least one common call slot).
    pub n_items: usize,
    /// The share of those items on which no verdict changes with the wording.
    pub stable: Estimate,
    /// The items whose verdicts change most, at most [`ITEMS_SHOWN`].
    pub least_stable: Vec<ItemWording>,
}

/// One item's verdicts across the paraphrases.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ItemWording {
    pub item_id: String,
    pub human: String,
    /// The share of its paraphrases' verdicts that are not its slot's most common one.
    pub changed: f64,
    /// Each call slot's verdicts, a paraphrase each: `A B A`.
    pub verdicts: Vec<String>,
}

impl ExperimentSummary {
    /// Its paraphrase groups; none where it declares no paraphrases.
    pub(super) fn wording_groups(&self) -> Vec<WordingGroup> {
        let paraphrases = &self.experiment.parsed.paraphrases;
        if paraphrases.is_empty() {
            return Vec::new();
        }
        // Trials by their parameters but the template.
        let mut groups: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, t) in self.trials.iter().enumerate() {
            if !paraphrases.contains(&t.params.template) {
                continue;
            }
            let mut rest = t.params.clone();
            rest.template = String::new();
            let key = serde_json::to_string(&rest).expect("parameters serialise");
            groups.entry(key).or_default().push(i);
        }
        groups
            .into_values()
            .filter(|members| members.len() >= 2)
            .map(|mut members| {
                let rank = |i: &usize| {
                    paraphrases
                        .iter()
                        .position(|p| *p == self.trials[*i].params.template)
                };
                members.sort_by_key(rank);
                self.wording_group(&members)
            })
            .collect()
    }

    fn wording_group(&self, members: &[usize]) -> WordingGroup {
        let task = self.experiment.task_kind;
        // Per item: its human label's category, and per call slot each member's verdict.
        type Slots = BTreeMap<(bool, u32), Vec<Option<Category>>>;
        let mut items: BTreeMap<&str, (i64, Slots)> = BTreeMap::new();
        for (m, &i) in members.iter().enumerate() {
            let t = &self.trials[i];
            for call in self.calls(t) {
                let o = call.observation;
                let Some(verdict) = o.verdict else {
                    continue;
                };
                let scored = Scored::new(task, o.human, verdict.label());
                let entry = items
                    .entry(call.item_id)
                    .or_insert_with(|| (scored.human.0, BTreeMap::new()));
                let slot = entry
                    .1
                    .entry((o.swapped, o.repeat))
                    .or_insert_with(|| vec![None; members.len()]);
                slot[m] = Some(scored.judge.map(|j| j.0));
            }
        }
        // Only the slots every member judged.
        let judged: Vec<Judged<'_>> = items
            .into_iter()
            .filter_map(|(item_id, (human, slots))| {
                let slots: Vec<Vec<Category>> = slots
                    .into_values()
                    .filter_map(|v| v.into_iter().collect::<Option<Vec<_>>>())
                    .collect();
                (!slots.is_empty()).then_some(Judged {
                    item_id,
                    human,
                    slots,
                })
            })
            .collect();
        let (stable, least_stable) = stability(task, &judged, &self.bootstrap);
        let mut shared = self.trials[members[0]].params.clone();
        shared.template = String::new();
        WordingGroup {
            trials: members.iter().map(|&i| self.trials[i].id).collect(),
            templates: members
                .iter()
                .map(|&i| self.trials[i].params.template.clone())
                .collect(),
            params: sweep::describe(&shared)
                .split(' ')
                .filter(|p| !p.starts_with("tpl="))
                .collect::<Vec<_>>()
                .join(" "),
            n_items: judged.len(),
            stable,
            least_stable,
        }
    }
}

/// An item every paraphrase judged: its human label, and per call slot (answer order and
/// repeat) each paraphrase's verdict.
struct Judged<'a> {
    item_id: &'a str,
    human: i64,
    slots: Vec<Vec<Category>>,
}

/// The share of `judged` items no rewording changes (with its bootstrap interval over
/// items), and the items that change most.
fn stability(
    task: Task,
    judged: &[Judged<'_>],
    bootstrap: &BootstrapSpec,
) -> (Estimate, Vec<ItemWording>) {
    // Per item, the share of its verdicts off its slot's most common one.
    let changed: Vec<f64> = judged
        .iter()
        .map(|j| {
            let (off, n) = j.slots.iter().fold((0, 0), |(off, n), v| {
                (off + v.len() - most_common(v), n + v.len())
            });
            off as f64 / n as f64
        })
        .collect();
    let stable = |idx: &mut dyn Iterator<Item = usize>| {
        let (s, n) = idx.fold((0, 0), |(s, n), i| {
            (s + usize::from(changed[i] == 0.0), n + 1)
        });
        (n > 0).then(|| s as f64 / n as f64)
    };
    let ci = (bootstrap.resamples > 0 && !judged.is_empty())
        .then(|| bootstrap.ci(judged.len(), |idx| stable(&mut idx.iter().copied())))
        .flatten();
    let mut least: Vec<ItemWording> = judged
        .iter()
        .zip(&changed)
        .filter(|(_, &c)| c > 0.0)
        .map(|(j, &c)| ItemWording {
            item_id: j.item_id.to_string(),
            human: category_name(task, Some(j.human)),
            changed: c,
            verdicts: j
                .slots
                .iter()
                .map(|v| {
                    v.iter()
                        .map(|&c| category_name(task, c))
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect(),
        })
        .collect();
    least.sort_by(|a, b| {
        b.changed
            .total_cmp(&a.changed)
            .then(a.item_id.cmp(&b.item_id))
    });
    least.truncate(ITEMS_SHOWN);
    let value = stable(&mut (0..judged.len()));
    (Estimate { value, ci }, least)
}

/// How many of `verdicts` are the most common one.
fn most_common(verdicts: &[Category]) -> usize {
    let mut counts: BTreeMap<Category, usize> = BTreeMap::new();
    for v in verdicts {
        *counts.entry(*v).or_default() += 1;
    }
    counts.into_values().max().unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: Category = Some(0);
    const B: Category = Some(1);

    /// Three paraphrases on five items, worked by hand: an item is stable where every slot's
    /// verdicts agree (a failure, the same every time, included); its changed share is the
    /// verdicts off each slot's most common one over all its verdicts.
    #[test]
    fn an_item_is_stable_where_no_rewording_changes_a_verdict() {
        let item = |item_id, human, slots: &[[Category; 3]]| Judged {
            item_id,
            human,
            slots: slots.iter().map(|s| s.to_vec()).collect(),
        };
        let judged = [
            item("i1", 0, &[[A, A, A], [B, B, B]]),
            item("i2", 1, &[[A, B, A]]),
            item("i3", 0, &[[A, A, A], [A, A, B]]),
            item("i4", 1, &[[None, None, None]]),
            item("i5", 0, &[[A, B, None]]),
        ];
        let spec = BootstrapSpec::default();
        let (stable, least) = stability(Task::Pairwise, &judged, &spec);
        assert_eq!(stable.value, Some(0.4));
        let (lo, hi) = stable.ci.expect("an interval");
        assert!(
            (0.0..=0.4).contains(&lo) && (0.4..=1.0).contains(&hi),
            "{lo} {hi}"
        );
        let shown: Vec<(&str, f64, Vec<&str>)> = least
            .iter()
            .map(|w| {
                let verdicts = w.verdicts.iter().map(String::as_str).collect();
                (w.item_id.as_str(), w.changed, verdicts)
            })
            .collect();
        assert_eq!(
            shown,
            [
                ("i5", 2.0 / 3.0, vec!["A B failed"]),
                ("i2", 1.0 / 3.0, vec!["A B A"]),
                ("i3", 1.0 / 6.0, vec!["A A A", "A A B"]),
            ]
        );
        assert_eq!(least[1].human, "B");
        // No resamples, no interval; no item, no share.
        let none = BootstrapSpec {
            resamples: 0,
            ..spec
        };
        assert_eq!(stability(Task::Pairwise, &judged, &none).0.ci, None);
        assert_eq!(stability(Task::Pairwise, &[], &spec).0, Estimate::default());
    }
}
