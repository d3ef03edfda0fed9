//! The log-probabilities of a local generation's first tokens, in the shape of OpenAI's
//! `logprobs.content` (`[{token, logprob, top_logprobs: [{token, logprob}]}]`), so that a
//! local trial's verdicts carry a confidence as a remote judge's do
//! (`core::trust::belief`). They are the model's own distribution at each position (its
//! raw logits at temperature 1, before top_p or a grammar's mask), whatever the call
//! samples with: reading them changes no verdict.
//!
//! Kept from the first generated token up to the first that has a letter or a digit in it
//! (where a verdict starts), at most [`MAX_ENTRIES`], so that a verdict's record stays
//! small.

use llama_cpp_2::token::LlamaToken;
use llama_cpp_2::vocab::LlamaVocab;
use serde_json::{json, Value};

/// Alternatives listed per position: a rating's ten digits fit.
pub(crate) const TOP: usize = 10;
/// Positions kept at most.
pub(crate) const MAX_ENTRIES: usize = 8;

#[derive(Default)]
pub(crate) struct Logprobs {
    entries: Vec<Value>,
    done: bool,
}

impl Logprobs {
    /// Whether the next position is still wanted.
    pub(crate) fn open(&self) -> bool {
        !self.done
    }

    /// Records one position: its logits, and the token the call chose there.
    pub(crate) fn record(&mut self, vocab: &LlamaVocab<'_>, logits: &[f32], chosen: LlamaToken) {
        if self.done {
            return;
        }
        let piece = |t: LlamaToken| {
            String::from_utf8_lossy(&vocab.token_to_piece(t, false, None)).into_owned()
        };
        let (top, log_z) = top_log_softmax(logits, TOP);
        let logprob = |i: usize| f64::from(logits[i]) - log_z;
        let chosen_text = piece(chosen);
        let done = chosen_text.chars().any(char::is_alphanumeric);
        self.entries.push(json!({
            "token": chosen_text,
            "logprob": logprob(chosen.0 as usize),
            "top_logprobs": top
                .iter()
                .map(|&i| json!({"token": piece(LlamaToken(i as i32)), "logprob": logprob(i)}))
                .collect::<Vec<Value>>(),
        }));
        self.done = done || self.entries.len() >= MAX_ENTRIES;
    }

    /// The entries as JSON; none before any token was generated.
    pub(crate) fn json(self) -> Option<String> {
        (!self.entries.is_empty()).then(|| Value::Array(self.entries).to_string())
    }
}

/// The indexes of the `k` largest logits, largest first, and the log of the softmax's
/// normaliser (so that a token's log-probability is its logit minus it).
pub(crate) fn top_log_softmax(logits: &[f32], k: usize) -> (Vec<usize>, f64) {
    let max = logits.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let sum: f64 = logits.iter().map(|&l| f64::from(l - max).exp()).sum();
    let log_z = f64::from(max) + sum.ln();
    let mut top: Vec<usize> = Vec::with_capacity(k + 1);
    for (i, &l) in logits.iter().enumerate() {
        if top.len() == k && l <= logits[top[k - 1]] {
            continue;
        }
        let at = top.partition_point(|&j| logits[j] >= l);
        top.insert(at, i);
        top.truncate(k);
    }
    (top, log_z)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_logits_come_first_and_the_probabilities_sum_to_one() {
        let logits = [0.5f32, 3.0, -1.0, 2.0, 3.0, 0.0];
        let (top, log_z) = top_log_softmax(&logits, 3);
        assert_eq!(top, vec![1, 4, 3]);
        let total: f64 = logits.iter().map(|&l| (f64::from(l) - log_z).exp()).sum();
        assert!((total - 1.0).abs() < 1e-12, "{total}");
        let (all, _) = top_log_softmax(&logits, 10);
        assert_eq!(all.len(), logits.len());
    }
}
