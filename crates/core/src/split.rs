//! Seeded splits: the few-shot pool an experiment reserves, the items it judges, and the
//! examples each trial shows.
//!
//! Candidates are ordered once per seed, label-stratified: each label's items are shuffled,
//! then the labels take turns, in an order shuffled each round. The pool is the smallest prefix-by-rank that holds enough
//! examples for every few-shot length limit of the sweep; the items to judge are drawn from
//! the rest, so no item is ever both an example and judged. A trial's examples depend only
//! on its few-shot count and length limit, so trials that differ only in sampling
//! parameters show the same examples.

use std::collections::BTreeMap;

use crate::dataset::Item;
use crate::rng::SplitMix64;

/// Item indices of the pool and of the items to judge (both in rank / dataset order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Few-shot pool, by stratified rank.
    pub pool: Vec<usize>,
    /// Items to judge, in dataset order.
    pub judged: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SplitError {
    #[error("only {available} items have few-shot examples of at most {limit} tokens; the sweep needs {needed}")]
    NotEnoughShortExamples {
        limit: u32,
        available: usize,
        needed: usize,
    },
    #[error("the dataset has {n_items} items: too few to reserve {pool} few-shot examples and still judge any")]
    NothingToJudge { n_items: usize, pool: usize },
    #[error("limits.items = {asked} exceeds the {available} items left after reserving {pool} few-shot examples")]
    TooManyItems {
        asked: usize,
        available: usize,
        pool: usize,
    },
}

/// Every item index, label-stratified and shuffled by `seed`.
pub fn stratified_order(items: &[Item], seed: u64) -> Vec<usize> {
    let mut by_label: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (idx, item) in items.iter().enumerate() {
        by_label
            .entry(item.human_label.category())
            .or_default()
            .push(idx);
    }
    let mut rng = SplitMix64::new(seed ^ 0x5EED_F00D);
    let mut groups: Vec<Vec<usize>> = by_label.into_values().collect();
    for g in &mut groups {
        rng.shuffle(g);
    }
    // The labels take turns in an order shuffled anew each round, so that neither the first
    // example's label nor the last one's is fixed by how labels sort.
    let mut order = Vec::with_capacity(items.len());
    let mut turns: Vec<usize> = (0..groups.len()).collect();
    for round in 0.. {
        let before = order.len();
        rng.shuffle(&mut turns);
        order.extend(turns.iter().filter_map(|&g| groups[g].get(round).copied()));
        if order.len() == before {
            break;
        }
    }
    order
}

/// Reserves the pool (`pool_size` examples under each of `limits`; `None` is no limit) and
/// draws the items to judge. `example_tokens[idx]` is item idx's length as an example; it
/// is only consulted for limits that are set.
pub fn reserve(
    items: &[Item],
    seed: u64,
    pool_size: usize,
    limits: &[Option<u32>],
    example_tokens: &dyn Fn(usize) -> usize,
    n_judged: Option<usize>,
) -> Result<Split, SplitError> {
    let order = stratified_order(items, seed);
    let mut in_pool = vec![false; items.len()];
    if pool_size > 0 {
        let mut limits: Vec<Option<u32>> = limits.to_vec();
        limits.sort_by_key(|l| l.unwrap_or(u32::MAX));
        for limit in limits {
            let fits = |idx: usize| limit.is_none_or(|l| example_tokens(idx) <= l as usize);
            let mut have = order.iter().filter(|&&i| in_pool[i] && fits(i)).count();
            for &idx in &order {
                if have >= pool_size {
                    break;
                }
                if !in_pool[idx] && fits(idx) {
                    in_pool[idx] = true;
                    have += 1;
                }
            }
            if have < pool_size {
                return Err(SplitError::NotEnoughShortExamples {
                    limit: limit.unwrap_or(u32::MAX),
                    available: have,
                    needed: pool_size,
                });
            }
        }
    }
    let pool: Vec<usize> = order.iter().copied().filter(|&i| in_pool[i]).collect();
    let mut rest: Vec<usize> = (0..items.len()).filter(|&i| !in_pool[i]).collect();
    if rest.is_empty() {
        return Err(SplitError::NothingToJudge {
            n_items: items.len(),
            pool: pool.len(),
        });
    }
    if let Some(n) = n_judged {
        if n > rest.len() {
            return Err(SplitError::TooManyItems {
                asked: n,
                available: rest.len(),
                pool: pool.len(),
            });
        }
        SplitMix64::new(seed ^ 0x17E3_5E1E).shuffle(&mut rest);
        rest.truncate(n);
        rest.sort_unstable();
    }
    Ok(Split { pool, judged: rest })
}

/// The examples a trial shows: the first `k` pool items within `limit` tokens.
pub fn examples(
    pool: &[usize],
    k: usize,
    limit: Option<u32>,
    example_tokens: &dyn Fn(usize) -> usize,
) -> Vec<usize> {
    pool.iter()
        .copied()
        .filter(|&i| limit.is_none_or(|l| example_tokens(i) <= l as usize))
        .take(k)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dataset::{Choice, Label};

    fn items(labels: &str) -> Vec<Item> {
        labels
            .chars()
            .enumerate()
            .map(|(i, c)| Item {
                id: format!("i{i}"),
                question: "q".repeat(i + 1),
                answer_a: Some("a".into()),
                answer_b: Some("b".into()),
                answer: None,
                reference: None,
                human_label: Label::Choice(if c == 'A' { Choice::A } else { Choice::B }),
                meta: serde_json::Value::Null,
            })
            .collect()
    }

    #[test]
    fn pool_is_stratified_and_disjoint_from_judged_items() {
        let items = items("AAAAAAAABB");
        let len = |i: usize| i;
        let split = reserve(&items, 1, 4, &[None], &len, Some(5)).unwrap();
        assert_eq!(split.pool.len(), 4);
        let mut labels: Vec<_> = split
            .pool
            .iter()
            .map(|&i| items[i].human_label.category())
            .collect();
        labels[..2].sort();
        labels[2..].sort();
        assert_eq!(labels, ["A", "B", "A", "B"]);
        // Across seeds, each label leads sometimes.
        let firsts: std::collections::BTreeSet<String> = (0..20)
            .map(|seed| {
                items[stratified_order(&items, seed)[0]]
                    .human_label
                    .category()
            })
            .collect();
        assert_eq!(firsts.len(), 2);
        assert_eq!(split.judged.len(), 5);
        assert!(split.judged.iter().all(|i| !split.pool.contains(i)));
        assert!(split.judged.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            split,
            reserve(&items, 1, 4, &[None], &len, Some(5)).unwrap()
        );
        assert_ne!(
            split,
            reserve(&items, 2, 4, &[None], &len, Some(5)).unwrap()
        );
    }

    #[test]
    fn length_limits_reserve_enough_short_examples() {
        let items = items("ABABABABABABABAB");
        let len = |i: usize| i * 10; // item i is i*10 tokens long
        let split = reserve(&items, 3, 2, &[Some(35), None], &len, None).unwrap();
        let short = examples(&split.pool, 2, Some(35), &len);
        assert_eq!(short.len(), 2);
        assert!(short.iter().all(|&i| i * 10 <= 35));
        assert_eq!(
            examples(&split.pool, 2, None, &len),
            split.pool[..2].to_vec()
        );
        assert_eq!(split.judged.len(), items.len() - split.pool.len());
        let err = reserve(&items, 3, 5, &[Some(35)], &len, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "only 4 items have few-shot examples of at most 35 tokens; the sweep needs 5"
        );
    }

    #[test]
    fn too_few_items() {
        let items = items("AB");
        let len = |_| 0;
        assert!(matches!(
            reserve(&items, 0, 2, &[None], &len, None),
            Err(SplitError::NothingToJudge { .. })
        ));
        assert_eq!(
            reserve(&items, 0, 1, &[None], &len, Some(3))
                .unwrap_err()
                .to_string(),
            "limits.items = 3 exceeds the 1 items left after reserving 1 few-shot examples"
        );
    }
}
