//! The input budget: a trial with `input_max_tokens` shows its judge the question and each
//! answer cut to at most that many of the judge's own tokens. A long input keeps its start
//! and its end (where a question states its task and an answer its conclusion), with a
//! visible marker, in the place of the middle, of how many tokens were cut
//! ([`head_tail`]). The reference is shown whole: it is what the answers are held to.
//!
//! The judge's tokeniser is handed in as where each token of a text starts
//! ([`crate::judge::Judge::token_starts`]), so that this module stays pure and a remote
//! judge without a tokeniser cuts by an estimate.

use serde::{Deserialize, Serialize};

use crate::dataset::Item;
use crate::record::VerdictRecord;

/// What stands in the place of the tokens cut from the middle of an input.
pub fn marker(n_cut: usize) -> String {
    format!("\n[… {n_cut} tokens cut …]\n")
}

/// An input cut to its budget, and how many of its tokens were cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cut {
    pub text: String,
    pub n_cut: usize,
}

/// Where each token of a text starts, in bytes, in the judge's tokeniser.
pub type Starts<'a> = dyn FnMut(&str) -> Result<Vec<usize>, String> + 'a;

/// `text` cut to at most `max_tokens` tokens (as `starts` counts them): its first tokens
/// and its last, half and half, with [`marker`] between them; `None` where it fits. The cut
/// text is counted again and cut further where its pieces tokenise longer joined; a budget
/// too small for the marker keeps the start alone.
pub fn head_tail(
    text: &str,
    max_tokens: usize,
    starts: &mut Starts<'_>,
) -> Result<Option<Cut>, String> {
    let s = starts(text)?;
    let total = s.len();
    if total <= max_tokens {
        return Ok(None);
    }
    let mut keep = max_tokens.saturating_sub(starts(&marker(total))?.len());
    loop {
        let head = keep.div_ceil(2);
        let tail = keep / 2;
        let n_cut = total - keep;
        let at = |i: usize| boundary(text, if i < total { s[i] } else { text.len() });
        let cut = format!(
            "{}{}{}",
            &text[..at(head)],
            marker(n_cut),
            &text[at(total - tail)..]
        );
        let n = starts(&cut)?.len();
        if n <= max_tokens {
            return Ok(Some(Cut { text: cut, n_cut }));
        }
        if keep == 0 {
            // No room for the marker: the start alone, within the budget.
            let text = text[..at(max_tokens)].to_string();
            return Ok(Some(Cut {
                text,
                n_cut: total - max_tokens,
            }));
        }
        keep -= (n - max_tokens).min(keep);
    }
}

/// The char boundary at or before `at`.
fn boundary(text: &str, at: usize) -> usize {
    let mut at = at.min(text.len());
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// `item` with its question and each answer cut to `max_tokens` ([`head_tail`]), and how
/// many tokens were cut from them in all.
pub fn cut_item<L: Clone>(
    item: &Item<L>,
    max_tokens: usize,
    starts: &mut Starts<'_>,
) -> Result<(Item<L>, usize), String> {
    let mut out = item.clone();
    let mut n_cut = 0;
    let mut cut = |text: &mut String| -> Result<(), String> {
        if let Some(c) = head_tail(text, max_tokens, starts)? {
            n_cut += c.n_cut;
            *text = c.text;
        }
        Ok(())
    };
    cut(&mut out.question)?;
    for answer in [&mut out.answer_a, &mut out.answer_b, &mut out.answer]
        .into_iter()
        .flatten()
    {
        cut(answer)?;
    }
    Ok((out, n_cut))
}

/// Characters a token, where a judge's tokeniser is not at hand (a remote judge's prompts
/// and cuts, a plan without a local model).
pub const CHARS_PER_TOKEN: usize = 4;

/// Where each token starts at [`CHARS_PER_TOKEN`] characters a token: an estimate for
/// judges whose tokeniser is not at hand.
pub fn estimated_starts(text: &str) -> Vec<usize> {
    text.char_indices()
        .step_by(CHARS_PER_TOKEN)
        .map(|(i, _)| i)
        .collect()
}

/// How much of a trial's inputs its budget cut, over the items it judged.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Cuts {
    pub n_items: usize,
    /// Items with some input cut.
    pub n_cut: usize,
    /// Tokens cut from an item's inputs, on average over every item.
    pub mean_tokens_cut: f64,
}

impl Cuts {
    /// Of a trial's records; none for a trial without an input budget.
    pub fn of(verdicts: &[VerdictRecord]) -> Option<Cuts> {
        let mut items = std::collections::HashMap::new();
        for v in verdicts {
            if let Some(n) = v.input_cut {
                items.entry(v.item_id.as_str()).or_insert(n);
            }
        }
        let n_items = items.len();
        (n_items > 0).then(|| Cuts {
            n_items,
            n_cut: items.values().filter(|&&n| n > 0).count(),
            mean_tokens_cut: items.values().map(|&n| f64::from(n)).sum::<f64>() / n_items as f64,
        })
    }

    /// The share of items with some input cut.
    pub fn share(&self) -> f64 {
        self.n_cut as f64 / self.n_items as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A word a token, each with the space before it.
    fn words(text: &str) -> Result<Vec<usize>, String> {
        let mut out: Vec<usize> = text.match_indices(' ').map(|(i, _)| i).collect();
        if !text.is_empty() && out.first() != Some(&0) {
            out.insert(0, 0);
        }
        Ok(out)
    }

    #[test]
    fn a_long_input_keeps_its_start_and_end_within_its_budget() {
        let text: String = (0..100).map(|i| format!(" w{i}")).collect();
        let cut = head_tail(&text, 30, &mut words).unwrap().unwrap();
        assert!(cut.text.starts_with(" w0 w1"), "{}", cut.text);
        assert!(cut.text.ends_with(" w98 w99"), "{}", cut.text);
        assert!(cut
            .text
            .contains(&format!("[… {} tokens cut …]", cut.n_cut)));
        let n = words(&cut.text).unwrap().len();
        assert!(n <= 30, "{n} tokens: {}", cut.text);
        assert!(n >= 25, "{n} tokens: {}", cut.text);
        assert_eq!(words(&text).unwrap().len(), 100);
    }

    #[test]
    fn an_input_that_fits_is_left_whole() {
        assert_eq!(head_tail("a b c", 3, &mut words).unwrap(), None);
        assert_eq!(head_tail("", 16, &mut words).unwrap(), None);
    }

    #[test]
    fn cuts_fall_on_characters_and_an_item_counts_its_cuts() {
        let text = "é".repeat(400);
        let mut by_bytes = |t: &str| Ok((0..t.len()).step_by(3).collect());
        let cut = head_tail(&text, 40, &mut by_bytes).unwrap().unwrap();
        assert!(cut.text.starts_with('é') && cut.text.ends_with('é'));
        let item: Item<()> = Item {
            id: "x".into(),
            question: "short".into(),
            answer_a: Some(text.clone()),
            answer_b: Some("short too".into()),
            answer: None,
            reference: Some(text.clone()),
            human_label: (),
            human_labels: Default::default(),
            meta: serde_json::Value::Null,
        };
        let mut estimate = |t: &str| Ok(estimated_starts(t));
        let (cut, n_cut) = cut_item(&item, 40, &mut estimate).unwrap();
        assert_eq!(cut.question, "short");
        assert_eq!(cut.answer_b.as_deref(), Some("short too"));
        assert_eq!(cut.reference, item.reference, "the reference is whole");
        assert!(cut.answer_a.unwrap().contains("tokens cut"));
        assert!(n_cut > 0);
    }

    #[test]
    fn a_trial_counts_each_item_once() {
        let record = |item: &str, repeat: u32, cut: Option<u32>| VerdictRecord {
            input_cut: cut,
            ..VerdictRecord::new(
                1,
                item,
                repeat,
                false,
                0,
                "h",
                crate::record::Outcome::CallFailed("x".into()),
            )
        };
        let verdicts = [
            record("a", 0, Some(10)),
            record("a", 1, Some(10)),
            record("b", 0, Some(0)),
            record("c", 0, Some(2)),
        ];
        let c = Cuts::of(&verdicts).unwrap();
        assert_eq!((c.n_items, c.n_cut), (3, 2));
        assert!((c.mean_tokens_cut - 4.0).abs() < 1e-12);
        assert!((c.share() - 2.0 / 3.0).abs() < 1e-12);
        assert_eq!(Cuts::of(&[record("a", 0, None)]), None);
    }
}
