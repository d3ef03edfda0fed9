//! Seeded splits: the few-shot pool an experiment reserves, the items it judges, and the
//! examples each trial shows.
//!
//! Candidates are ordered once per seed, label-stratified: each label's items are shuffled,
//! then the labels take turns, in an order shuffled each round. The pool is the smallest prefix-by-rank that holds enough
//! examples for every few-shot length limit of the sweep; the items to judge are drawn from
//! the rest, so no item is ever both an example and judged. A trial's examples depend only
//! on its few-shot count, length limit and example set, so trials that differ only in
//! sampling parameters show the same examples.

use std::collections::BTreeMap;

use crate::dataset::Item;
use crate::rng::SplitMix64;

/// Item indices of the pool and of the items to judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    /// Few-shot pool, by stratified rank.
    pub pool: Vec<usize>,
    /// Items every trial judges (the dev split, where there is a test split): in dataset
    /// order, or by stratified rank where [`Sizes::stratified`] (a race's rounds are its
    /// prefixes, each with the labels in proportion).
    pub judged: Vec<usize>,
    /// The test split, judged only by the trials the selection keeps (by stratified rank);
    /// empty without one.
    pub test: Vec<usize>,
}

/// How many items to judge, and how.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Sizes {
    /// Judged items in all (`limits.items`).
    pub items: Option<usize>,
    pub dev: Option<usize>,
    pub test: Option<usize>,
    /// Order the judged items by stratified rank rather than dataset order: set with a
    /// split or a race (unset, items are drawn as before these existed).
    pub stratified: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SplitError {
    #[error("only {available} items have few-shot examples of at most {limit} tokens; the sweep needs {needed}")]
    NotEnoughShortExamples {
        limit: u32,
        available: usize,
        needed: usize,
    },
    #[error("the dataset has {n_items} items with a human label: too few to reserve {pool} few-shot examples and still judge any")]
    NothingToJudge { n_items: usize, pool: usize },
    #[error("{key} = {asked} exceeds the {available} items left after reserving {pool} few-shot examples")]
    TooManyItems {
        key: &'static str,
        asked: usize,
        available: usize,
        pool: usize,
    },
}

/// Every item index, label-stratified and shuffled by `seed`.
pub fn stratified_order(items: &[Item], seed: u64) -> Vec<usize> {
    stratified(items, 0..items.len(), seed)
}

/// The item indices `among`, label-stratified and shuffled by `seed`.
fn stratified(items: &[Item], among: impl Iterator<Item = usize>, seed: u64) -> Vec<usize> {
    let mut by_label: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for idx in among {
        by_label
            .entry(items[idx].human_label.category())
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
/// draws the items to judge as `sizes` says. `example_tokens[idx]` is item idx's length as
/// an example; it is only consulted for limits that are set.
pub fn reserve(
    items: &[Item],
    seed: u64,
    pool_size: usize,
    limits: &[Option<u32>],
    example_tokens: &dyn Fn(usize) -> usize,
    sizes: Sizes,
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
    let too_many = |key, asked| SplitError::TooManyItems {
        key,
        asked,
        available: rest.len(),
        pool: pool.len(),
    };
    if !sizes.stratified {
        if let Some(n) = sizes.items {
            if n > rest.len() {
                return Err(too_many("limits.items", n));
            }
            SplitMix64::new(seed ^ 0x17E3_5E1E).shuffle(&mut rest);
            rest.truncate(n);
            rest.sort_unstable();
        }
        return Ok(Split {
            pool,
            judged: rest,
            test: Vec::new(),
        });
    }
    // The test split first, then the dev split, each a prefix of the rest's stratified
    // order, so that both hold the labels in proportion and a race's rounds do too.
    let remaining: Vec<Item> = rest.iter().map(|&i| items[i].clone()).collect();
    let order: Vec<usize> = stratified_order(&remaining, seed ^ 0xDE5_7E57)
        .into_iter()
        .map(|r| rest[r])
        .collect();
    let n_test = sizes.test.unwrap_or(0);
    let n_dev = match (sizes.dev, sizes.items) {
        (Some(dev), _) => dev,
        (None, Some(items)) => items.saturating_sub(n_test),
        (None, None) => order.len().saturating_sub(n_test),
    };
    if n_test + n_dev > order.len() {
        let (key, asked) = match (sizes.items, sizes.dev, sizes.test) {
            (Some(items), _, _) => ("limits.items", items),
            (None, Some(_), Some(_)) => ("limits.dev + limits.test", n_dev + n_test),
            (None, Some(dev), None) => ("limits.dev", dev),
            (None, None, _) => ("limits.test", n_test),
        };
        return Err(too_many(key, asked));
    }
    if n_dev == 0 {
        return Err(SplitError::NothingToJudge {
            n_items: items.len(),
            pool: pool.len() + n_test,
        });
    }
    Ok(Split {
        pool,
        judged: order[n_test..n_test + n_dev].to_vec(),
        test: order[..n_test].to_vec(),
    })
}

/// The examples a trial shows: `k` pool items within `limit` tokens. Set 0 is the
/// pool's first (by stratified rank); another set draws them from the whole pool, again
/// label-stratified, by a shuffle seeded with the experiment's `seed` and the set, so that
/// each set is a different choice of examples and the same set is the same choice forever.
pub fn examples(
    items: &[Item],
    pool: &[usize],
    k: usize,
    limit: Option<u32>,
    set: u32,
    seed: u64,
    example_tokens: &dyn Fn(usize) -> usize,
) -> Vec<usize> {
    let fits = pool
        .iter()
        .copied()
        .filter(|&i| limit.is_none_or(|l| example_tokens(i) <= l as usize));
    if set == 0 {
        return fits.take(k).collect();
    }
    let mut drawn = stratified(items, fits, crate::rng::mix(&[seed, 0x5E7, u64::from(set)]));
    drawn.truncate(k);
    drawn
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
                human_labels: Default::default(),
                meta: serde_json::Value::Null,
            })
            .collect()
    }

    fn items_(n: usize) -> Sizes {
        Sizes {
            items: Some(n),
            ..Sizes::default()
        }
    }

    #[test]
    fn dev_and_test_splits_are_disjoint_stratified_prefixes() {
        let items = items("AAAAAAAAAAAABBBBBBBBBBBB");
        let len = |_| 0;
        let sizes = Sizes {
            dev: Some(10),
            test: Some(8),
            stratified: true,
            ..Sizes::default()
        };
        let split = reserve(&items, 5, 2, &[None], &len, sizes).unwrap();
        assert_eq!(
            (split.pool.len(), split.judged.len(), split.test.len()),
            (2, 10, 8)
        );
        let mut all: Vec<usize> = [&split.pool, &split.judged, &split.test]
            .into_iter()
            .flatten()
            .copied()
            .collect();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), 20);
        // Labels in proportion in the test split and in every even prefix of the dev split.
        let a = |idxs: &[usize]| {
            idxs.iter()
                .filter(|&&i| items[i].human_label.category() == "A")
                .count()
        };
        assert_eq!(a(&split.test), 4);
        for k in [2, 4, 6, 8, 10] {
            assert_eq!(a(&split.judged[..k]), k / 2, "{k}");
        }
        assert_eq!(split, reserve(&items, 5, 2, &[None], &len, sizes).unwrap());
        // The dev split defaults to what the test split leaves (of limits.items, if set).
        let rest = Sizes { dev: None, ..sizes };
        assert_eq!(
            reserve(&items, 5, 2, &[None], &len, rest)
                .unwrap()
                .judged
                .len(),
            14
        );
        let of_items = Sizes {
            items: Some(12),
            ..rest
        };
        let split = reserve(&items, 5, 2, &[None], &len, of_items).unwrap();
        assert_eq!((split.judged.len(), split.test.len()), (4, 8));
        let too_many = Sizes {
            dev: Some(20),
            ..sizes
        };
        assert_eq!(
            reserve(&items, 5, 2, &[None], &len, too_many).unwrap_err().to_string(),
            "limits.dev + limits.test = 28 exceeds the 22 items left after reserving 2 few-shot examples"
        );
    }

    #[test]
    fn pool_is_stratified_and_disjoint_from_judged_items() {
        let items = items("AAAAAAAABB");
        let len = |i: usize| i;
        let split = reserve(&items, 1, 4, &[None], &len, items_(5)).unwrap();
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
            reserve(&items, 1, 4, &[None], &len, items_(5)).unwrap()
        );
        assert_ne!(
            split,
            reserve(&items, 2, 4, &[None], &len, items_(5)).unwrap()
        );
    }

    #[test]
    fn length_limits_reserve_enough_short_examples() {
        let items = items("ABABABABABABABAB");
        let len = |i: usize| i * 10; // item i is i*10 tokens long
        let split = reserve(&items, 3, 2, &[Some(35), None], &len, Sizes::default()).unwrap();
        let short = examples(&items, &split.pool, 2, Some(35), 0, 0, &len);
        assert_eq!(short.len(), 2);
        assert!(short.iter().all(|&i| i * 10 <= 35));
        assert_eq!(
            examples(&items, &split.pool, 2, None, 0, 0, &len),
            split.pool[..2].to_vec()
        );
        assert_eq!(split.judged.len(), items.len() - split.pool.len());
        let err = reserve(&items, 3, 5, &[Some(35)], &len, Sizes::default()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "only 4 items have few-shot examples of at most 35 tokens; the sweep needs 5"
        );
    }

    #[test]
    fn example_sets_are_stratified_seeded_draws_from_the_pool() {
        let items = items("AAAAAAAAAAAABBBBBBBBBBBB");
        let len = |_| 0;
        let split = reserve(&items, 7, 12, &[None], &len, Sizes::default()).unwrap();
        let set = |s, seed| examples(&items, &split.pool, 4, None, s, seed, &len);
        assert_eq!(set(0, 7), split.pool[..4].to_vec());
        let draws: Vec<Vec<usize>> = (1..=5).map(|s| set(s, 7)).collect();
        for d in &draws {
            assert_eq!(d.len(), 4);
            assert!(d.iter().all(|i| split.pool.contains(i)));
            let a = d.iter().filter(|&&i| i < 12).count();
            assert_eq!(a, 2, "two of each label: {d:?}");
        }
        // Different sets choose differently; the same set chooses alike, per seed.
        assert!(draws.iter().any(|d| *d != draws[0]));
        assert_eq!(set(3, 7), draws[2]);
        assert_ne!(set(3, 8), draws[2]);
        // A set never shows more than the pool holds within the limit.
        assert_eq!(
            examples(&items, &split.pool, 40, None, 2, 7, &len).len(),
            12
        );
    }

    #[test]
    fn too_few_items() {
        let items = items("AB");
        let len = |_| 0;
        assert!(matches!(
            reserve(&items, 0, 2, &[None], &len, Sizes::default()),
            Err(SplitError::NothingToJudge { .. })
        ));
        assert_eq!(
            reserve(&items, 0, 1, &[None], &len, items_(3))
                .unwrap_err()
                .to_string(),
            "limits.items = 3 exceeds the 1 items left after reserving 1 few-shot examples"
        );
    }
}
