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
        }
    }

    /// How many of the highest tokens top_p keeps.
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

    /// Every token with a non-zero probability, `(token id, probability)`, highest first.
    pub fn distribution(&self, temperature: f64, top_p: f64) -> Vec<(usize, f64)> {
        if self.order.is_empty() {
            return Vec::new();
        }
        if temperature <= 0.0 {
            return vec![(self.order[0], 1.0)];
        }
        let kept = self.kept(top_p);
        let max = self.logits[0] / temperature;
        let weights: Vec<f64> = self.logits[..kept]
            .iter()
            .map(|l| (l / temperature - max).exp())
            .collect();
        let total: f64 = weights.iter().sum();
        self.order[..kept]
            .iter()
            .zip(weights)
            .map(|(&token, w)| (token, w / total))
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
    fn temperature_zero_is_greedy_with_ties_to_the_lowest_id() {
        let ranked = Ranked::new(&[3.0, 5.0, 5.0]);
        assert_eq!(ranked.distribution(0.0, 0.9), vec![(1, 1.0)]);
        assert!(Ranked::new(&[]).distribution(1.0, 1.0).is_empty());
    }
}
