//! Exact sampling distributions: the probability of every token under a (temperature,
//! top_p) setting, as llama.cpp's sampler chain in `crates/llama` draws it, computed from
//! one forward pass's logits instead of from samples.
//!
//! The chain, in llama.cpp's order:
//! 1. **top_p** on the softmax of the raw logits (temperature 1): tokens sorted by logit,
//!    keep the shortest prefix whose cumulative probability reaches `top_p` (at least one
//!    token); `top_p >= 1` keeps all.
//! 2. **temperature**: the kept logits are divided by it.
//! 3. **dist**: a softmax over the kept tokens, then a draw.
//!
//! Temperature 0 is greedy decoding: the highest logit (the lowest token id on a tie) with
//! probability 1.
//!
//! A grammar, when the chain has one, comes before all three: the tokens it does not
//! admit have their logits set to -inf, which [`Ranked`] leaves out.

use crate::dataset::Label;
use crate::verdict::Verdict;

/// Logits ranked once, so that every (temperature, top_p) of a sweep costs a pass over the
/// kept prefix only.
#[derive(Debug, Clone)]
pub struct Ranked {
    /// Token ids, highest logit first (ties by token id).
    order: Vec<usize>,
    /// Their logits, in that order.
    logits: Vec<f64>,
    /// Cumulative softmax probability at temperature 1, in that order.
    cumulative: Vec<f64>,
    /// For a server's most likely tokens ([`Ranked::top`]): the mass they leave out, read
    /// as one token past them (id: how many were given).
    tail: Option<Tail>,
}

/// The tokens a server left out, as flat as they can be: each as likely as the least
/// likely token it returned (their total `mass` at temperature 1).
#[derive(Debug, Clone, Copy)]
struct Tail {
    id: usize,
    mass: f64,
    /// The least likely returned token's log-probability, which each of them is at most.
    logprob: f64,
}

impl Ranked {
    /// Ranks a full-vocabulary logit vector. Non-finite logits never win a draw.
    pub fn new(logits: &[f32]) -> Ranked {
        let mut order: Vec<usize> = (0..logits.len())
            .filter(|&i| logits[i].is_finite())
            .collect();
        order.sort_by(|&a, &b| logits[b].total_cmp(&logits[a]).then(a.cmp(&b)));
        let sorted: Vec<f64> = order.iter().map(|&i| f64::from(logits[i])).collect();
        let max = sorted.first().copied().unwrap_or(0.0);
        let weights: Vec<f64> = sorted.iter().map(|l| (l - max).exp()).collect();
        let total: f64 = weights.iter().sum();
        let mut running = 0.0;
        let cumulative = weights
            .iter()
            .map(|w| {
                running += w / total;
                running
            })
            .collect();
        Ranked {
            order,
            logits: sorted,
            cumulative,
            tail: None,
        }
    }

    /// Ranks the most likely tokens of a distribution a server returned, by their
    /// natural-log probabilities over the whole vocabulary (token ids: their indexes in
    /// `logprobs`). The tokens it left out, the uncovered mass `1 - covered()`, are one
    /// more token (id `logprobs.len()`, the tail), which a caller reads as a failure: a
    /// verdict's few spellings are among the likeliest tokens wherever they matter.
    ///
    /// Top_p cuts by the true probabilities, so a cut inside the returned tokens is exact,
    /// and so is every distribution at temperature 1. Elsewhere the tail is taken as flat
    /// as it can be: tokens each as likely as the least likely returned one. Cooling (T <
    /// 1) shrinks the true tail's share at least as fast as this one's, so the tail's
    /// share here is at most the uncovered mass, and the error at most that; warming (T >
    /// 1) grows a tail of many unlikelier tokens faster, which no returned token bounds.
    pub fn top(logprobs: &[f64]) -> Ranked {
        let mut order: Vec<usize> = (0..logprobs.len())
            .filter(|&i| logprobs[i].is_finite())
            .collect();
        order.sort_by(|&a, &b| logprobs[b].total_cmp(&logprobs[a]).then(a.cmp(&b)));
        let sorted: Vec<f64> = order.iter().map(|&i| logprobs[i].min(0.0)).collect();
        let mut running = 0.0;
        let cumulative: Vec<f64> = sorted
            .iter()
            .map(|l| {
                running = (running + l.exp()).min(1.0);
                running
            })
            .collect();
        let tail = sorted.last().map(|&logprob| Tail {
            id: logprobs.len(),
            mass: 1.0 - running,
            logprob,
        });
        Ranked {
            order,
            logits: sorted,
            cumulative,
            tail: tail.filter(|t| t.mass > 0.0),
        }
    }

    /// The probability of the ranked tokens at temperature 1: 1 for a full vocabulary's
    /// logits, less for a server's most likely tokens ([`Ranked::top`]).
    pub fn covered(&self) -> f64 {
        self.cumulative.last().copied().unwrap_or(0.0)
    }

    /// How many of the highest tokens top_p keeps (all of them where it reaches into a
    /// server's tail).
    fn kept(&self, top_p: f64) -> usize {
        if top_p >= 1.0 {
            return self.order.len();
        }
        self.cumulative
            .iter()
            .position(|&c| c >= top_p)
            .map_or(self.order.len(), |i| i + 1)
            .max(1)
            .min(self.order.len())
    }

    /// Every token with a non-zero probability, `(token id, probability)`, highest first
    /// (a server's tail last, [`Ranked::top`]).
    pub fn distribution(&self, temperature: f64, top_p: f64) -> Vec<(usize, f64)> {
        if self.order.is_empty() {
            return Vec::new();
        }
        if temperature <= 0.0 {
            return vec![(self.order[0], 1.0)];
        }
        let kept = self.kept(top_p);
        let max = self.logits[0] / temperature;
        let mut weights: Vec<(usize, f64)> = self.order[..kept]
            .iter()
            .zip(&self.logits[..kept])
            .map(|(&token, l)| (token, (l / temperature - max).exp()))
            .collect();
        // What top_p keeps of the tail, at temperature 1, as tokens of its flat reading.
        if let Some(tail) = self.tail.filter(|_| kept == self.order.len()) {
            let kept_mass = (top_p.min(1.0) - self.covered()).clamp(0.0, tail.mass);
            let tokens = match top_p >= 1.0 {
                true => tail.mass,
                false => kept_mass,
            } / tail.logprob.exp();
            let w = tokens * (tail.logprob / temperature - max).exp();
            if w > 0.0 {
                weights.push((tail.id, w));
            }
        }
        let total: f64 = weights.iter().map(|(_, w)| w).sum();
        weights
            .into_iter()
            .map(|(token, w)| (token, w / total))
            .filter(|(_, p)| *p > 0.0)
            .collect()
    }

    /// The probability that the draw is one of `tokens`.
    pub fn mass(&self, temperature: f64, top_p: f64, tokens: &[usize]) -> f64 {
        self.distribution(temperature, top_p)
            .into_iter()
            .filter(|(t, _)| tokens.contains(t))
            .map(|(_, p)| p)
            .sum()
    }
}

/// The token a uniform draw `u` in [0, 1) picks from a distribution (the inverse of its
/// cumulative distribution, in the distribution's order).
pub fn pick(distribution: &[(usize, f64)], u: f64) -> Option<usize> {
    let mut running = 0.0;
    for &(token, p) in distribution {
        running += p;
        if u < running {
            return Some(token);
        }
    }
    // Rounding can leave the total a hair under 1.
    distribution.last().map(|&(token, _)| token)
}

/// A uniform draw in [0, 1) from a seed.
pub fn unit(seed: u64) -> f64 {
    (crate::rng::SplitMix64::new(seed).next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// The exact distribution of a one-token verdict.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct VerdictDistribution {
    /// Each label with a non-zero probability, in the order first met (most likely first).
    pub labels: Vec<(Label, f64)>,
    /// The probability of a token that is no verdict: a parse failure.
    pub failed: f64,
}

impl VerdictDistribution {
    /// Sums a token distribution by the verdict each token reads as.
    pub fn new(distribution: &[(usize, f64)], token_verdicts: &[Verdict]) -> VerdictDistribution {
        let mut out = VerdictDistribution::default();
        for &(token, p) in distribution {
            match token_verdicts.get(token).and_then(Verdict::label) {
                Some(label) => match out.labels.iter_mut().find(|(l, _)| *l == label) {
                    Some((_, q)) => *q += p,
                    None => out.labels.push((label, p)),
                },
                None => out.failed += p,
            }
        }
        out
    }

    pub fn p(&self, label: &Label) -> f64 {
        self.labels
            .iter()
            .find(|(l, _)| l == label)
            .map_or(0.0, |(_, p)| *p)
    }

    /// Shannon entropy in bits, a failure counting as one more outcome.
    pub fn entropy(&self) -> f64 {
        self.labels
            .iter()
            .map(|(_, p)| *p)
            .chain(std::iter::once(self.failed))
            .filter(|p| *p > 0.0)
            .map(|p| -p * p.log2())
            // Folded from +0, so that a certain verdict has entropy 0, not -0.
            .fold(0.0, |total, h| total + h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-12, "{a} != {b}");
    }

    #[test]
    fn top_p_then_temperature_as_llama_cpp() {
        // Logits 2, 1, 0, -inf: softmax at T=1 is e^2, e^1, e^0 over their sum.
        let ranked = Ranked::new(&[0.0, 2.0, 1.0, f32::NEG_INFINITY]);
        let z = 1f64.exp().powi(2) + 1f64.exp() + 1.0;
        let (p1, p2) = (1f64.exp().powi(2) / z, 1f64.exp() / z);
        // top_p below the first token's mass keeps it alone.
        assert_eq!(ranked.distribution(1.0, p1 - 0.01), vec![(1, 1.0)]);
        // Reaching p1 + p2 keeps two; temperature 0.5 then doubles their logit gap.
        let two = ranked.distribution(0.5, p1 + p2 - 1e-9);
        let (w1, w2) = (4f64.exp(), 2f64.exp());
        assert_eq!(two.len(), 2);
        close(two[0].1, w1 / (w1 + w2));
        close(two[1].1, w2 / (w1 + w2));
        // top_p = 1 is the plain softmax of logits / T; -inf never wins.
        let all = ranked.distribution(1.0, 1.0);
        assert_eq!(all.len(), 3);
        close(all.iter().map(|(_, p)| p).sum::<f64>(), 1.0);
        close(ranked.mass(1.0, 1.0, &[2, 0]), (1f64.exp() + 1.0) / z);
    }

    #[test]
    fn verdicts_sum_their_tokens_and_draws_invert_the_cdf() {
        use crate::dataset::{Choice, Task};
        use crate::verdict::{parse, OutputKind};
        let pieces = ["A", " B", "The", " A", "", "B"];
        let verdicts: Vec<Verdict> = pieces
            .iter()
            .map(|p| parse(OutputKind::Label, Task::Pairwise, p, false))
            .collect();
        let distribution = [(0, 0.4), (3, 0.2), (1, 0.15), (2, 0.15), (4, 0.1)];
        let v = VerdictDistribution::new(&distribution, &verdicts);
        close(v.p(&Label::Choice(Choice::A)), 0.6);
        close(v.p(&Label::Choice(Choice::B)), 0.15);
        close(v.failed, 0.25);
        assert_eq!(v.labels[0].0, Label::Choice(Choice::A));
        let h = -(0.6f64 * 0.6f64.log2() + 0.15 * 0.15f64.log2() + 0.25 * 0.25f64.log2());
        close(v.entropy(), h);
        assert_eq!(pick(&distribution, 0.0), Some(0));
        assert_eq!(pick(&distribution, 0.39), Some(0));
        assert_eq!(pick(&distribution, 0.4), Some(3));
        assert_eq!(pick(&distribution, 0.9999), Some(4));
        assert_eq!(pick(&[], 0.5), None);
        let u = unit(7);
        assert!((0.0..1.0).contains(&u));
        assert_eq!(u, unit(7));
    }

    #[test]
    fn temperature_zero_is_greedy_with_ties_to_the_lowest_id() {
        let ranked = Ranked::new(&[3.0, 5.0, 5.0]);
        assert_eq!(ranked.distribution(0.0, 0.9), vec![(1, 1.0)]);
        assert!(Ranked::new(&[]).distribution(1.0, 1.0).is_empty());
    }

    #[test]
    fn a_servers_top_tokens_cut_by_their_true_mass_and_leave_out_the_rest() {
        // A full vocabulary, and the top 3 of it as a server returns them.
        let logits: Vec<f32> = vec![3.0, 2.5, 1.0, 0.5, 0.2, -1.0, -2.0];
        let full = Ranked::new(&logits);
        let z: f64 = logits.iter().map(|&l| f64::from(l).exp()).sum();
        let logprobs: Vec<f64> = logits[..3].iter().map(|&l| f64::from(l) - z.ln()).collect();
        // Given out of order, as a set.
        let top = Ranked::top(&[logprobs[2], logprobs[0], logprobs[1]]);
        let covered: f64 = logprobs.iter().map(|l| l.exp()).sum();
        close(top.covered(), covered);
        close(full.covered(), 1.0);
        // A cut inside the returned tokens is the full vocabulary's, exactly.
        let p = logprobs[0].exp() + 0.01;
        let (a, b) = (full.distribution(0.7, p), top.distribution(0.7, p));
        assert_eq!(a.len(), 2);
        close(a[0].1, b[0].1);
        assert_eq!(b[0].0, 1, "ids are indexes into what the server returned");
        // Past them, the rest is one more token (id 3): exact at temperature 1, and off
        // by at most the uncovered mass at temperatures up to 1 (total variation, the
        // tokens left out taken together).
        for (t, p) in [(0.0, 1.0), (0.3, 1.0), (0.7, 1.0), (1.0, 1.0), (0.7, 0.97)] {
            let (a, b) = (full.distribution(t, p), top.distribution(t, p));
            let by_rank = |d: &[(usize, f64)], ids: [usize; 3], k: usize| {
                d.iter()
                    .find(|(id, _)| *id == ids[k])
                    .map_or(0.0, |(_, p)| *p)
            };
            let tail = |d: &[(usize, f64)]| -> f64 {
                d.iter().filter(|(id, _)| *id >= 3).map(|(_, p)| p).sum()
            };
            let tv: f64 = ((0..3)
                .map(|k| (by_rank(&a, [0, 1, 2], k) - by_rank(&b, [1, 2, 0], k)).abs())
                .sum::<f64>()
                + (tail(&a) - tail(&b)).abs())
                / 2.0;
            assert!(tv <= 1.0 - covered + 1e-12, "T {t} top_p {p}: {tv}");
            if t == 1.0 && p == 1.0 {
                assert!(tv < 1e-12, "exact at temperature 1: {tv}");
            }
        }
    }
}
