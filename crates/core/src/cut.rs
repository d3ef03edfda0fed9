//! The input budget: a trial with `input_max_tokens` shows its judge the question and each
//! answer cut to at most that many of the judge's own tokens. A long input keeps its start
//! and its end (where a question states its task and an answer its conclusion), with a
//! visible marker, in the place of the middle, of how many tokens were cut
//! ([`head_tail`]). The reference is shown whole: it is what the answers are held to.
//!
//! Or (`input_strategy = "summary"`) an input over its budget is replaced by a summary a
//! summariser wrote of it first (at most the budget's tokens of its own), cut head and
//! tail where the judge counts it longer still.
//!
//! The judge's tokeniser is handed in as where each token of a text starts
//! ([`crate::judge::Judge::token_starts`]), so that this module stays pure and a remote
//! judge without a tokeniser cuts by an estimate; summaries are handed in written.

use serde::{Deserialize, Serialize};

use std::collections::HashMap;

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

/// Summaries written of inputs, by the input: what `input_strategy = "summary"` shows in
/// their place.
pub type Summaries = HashMap<String, String>;

/// `item` with its question and each answer over `max_tokens` shortened to it, and how
/// many tokens were cut from them in all: by [`head_tail`], or with `summaries` by the
/// summary of each ([`shorten`]).
pub fn cut_item<L: Clone>(
    item: &Item<L>,
    max_tokens: usize,
    starts: &mut Starts<'_>,
    summaries: Option<&Summaries>,
) -> Result<(Item<L>, usize), String> {
    let mut out = item.clone();
    let mut n_cut = 0;
    for text in inputs(&mut out) {
        if let Some(c) = shorten(text, max_tokens, starts, summaries)? {
            n_cut += c.n_cut;
            *text = c.text;
        }
    }
    Ok((out, n_cut))
}

/// What a budget shortens of an item: its question and each answer, not its reference.
pub fn inputs<L>(item: &mut Item<L>) -> impl Iterator<Item = &mut String> {
    std::iter::once(&mut item.question).chain(
        [&mut item.answer_a, &mut item.answer_b, &mut item.answer]
            .into_iter()
            .flatten(),
    )
}

/// The inputs of `item` over `max_tokens`: those a summary strategy needs summaries of.
pub fn over<L: Clone>(
    item: &Item<L>,
    max_tokens: usize,
    starts: &mut Starts<'_>,
) -> Result<Vec<String>, String> {
    let mut item = item.clone();
    let mut out = Vec::new();
    for text in inputs(&mut item) {
        if starts(text)?.len() > max_tokens {
            out.push(std::mem::take(text));
        }
    }
    Ok(out)
}

/// `text` shortened to `max_tokens`, `None` where it fits: its summary where `summaries`
/// are given (cut by [`head_tail`] where the judge counts it longer than the budget), or
/// itself cut head and tail. A summary that is missing is an error; an empty one (the
/// summariser wrote nothing) leaves the text to [`head_tail`].
pub fn shorten(
    text: &str,
    max_tokens: usize,
    starts: &mut Starts<'_>,
    summaries: Option<&Summaries>,
) -> Result<Option<Cut>, String> {
    let Some(summaries) = summaries else {
        return head_tail(text, max_tokens, starts);
    };
    let total = starts(text)?.len();
    if total <= max_tokens {
        return Ok(None);
    }
    let summary = summaries
        .get(text)
        .ok_or_else(|| format!("no summary was written of an input of {total} tokens"))?;
    if summary.trim().is_empty() {
        return head_tail(text, max_tokens, starts);
    }
    let shown = match head_tail(summary, max_tokens, starts)? {
        Some(cut) => cut.text,
        None => summary.clone(),
    };
    let n = starts(&shown)?.len();
    Ok(Some(Cut {
        text: shown,
        n_cut: total.saturating_sub(n),
    }))
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
        let (cut, n_cut) = cut_item(&item, 40, &mut estimate, None).unwrap();
        assert_eq!(cut.question, "short");
        assert_eq!(cut.answer_b.as_deref(), Some("short too"));
        assert_eq!(cut.reference, item.reference, "the reference is whole");
        assert!(cut.answer_a.unwrap().contains("tokens cut"));
        assert!(n_cut > 0);
    }

    #[test]
    fn a_summary_takes_the_place_of_a_long_input_and_is_cut_where_still_too_long() {
        let long: String = (0..100).map(|i| format!(" w{i}")).collect();
        let mut summaries = Summaries::new();
        summaries.insert(long.clone(), " a short summary".into());
        let cut = shorten(&long, 30, &mut words, Some(&summaries))
            .unwrap()
            .unwrap();
        assert_eq!(
            cut,
            Cut {
                text: " a short summary".into(),
                n_cut: 97
            }
        );
        // A summary longer than the budget in the judge's tokens: its start and end.
        let wordy: String = (0..50).map(|i| format!(" s{i}")).collect();
        summaries.insert(long.clone(), wordy);
        let cut = shorten(&long, 30, &mut words, Some(&summaries))
            .unwrap()
            .unwrap();
        assert!(cut.text.starts_with(" s0") && cut.text.contains("tokens cut"));
        assert!(words(&cut.text).unwrap().len() <= 30);
        // An empty summary: the input's own start and end.
        summaries.insert(long.clone(), "  ".into());
        let cut = shorten(&long, 30, &mut words, Some(&summaries))
            .unwrap()
            .unwrap();
        assert!(cut.text.starts_with(" w0"));
        // What fits needs none; what does not and has none is an error.
        assert_eq!(
            shorten(" a b", 30, &mut words, Some(&Summaries::new())).unwrap(),
            None
        );
        let missing = shorten(&long, 30, &mut words, Some(&Summaries::new())).unwrap_err();
        assert_eq!(missing, "no summary was written of an input of 100 tokens");
        let item: Item<()> = Item {
            id: "x".into(),
            question: " q".into(),
            answer_a: None,
            answer_b: None,
            answer: Some(long.clone()),
            reference: Some(long.clone()),
            human_label: (),
            human_labels: Default::default(),
            meta: serde_json::Value::Null,
        };
        assert_eq!(over(&item, 30, &mut words).unwrap(), [long]);
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
