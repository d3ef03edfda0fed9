//! The inputs a run shows its judges: each item as it is, or, for a trial with an input
//! budget (`input_max_tokens`), cut to it in its judge's tokens ([`judgelab_core::cut`]).
//! Items are cut once per (judge, level) before anything is judged, so that every call of
//! a trial, in any group or pass, shows the same text, and each verdict records how many
//! tokens its inputs lost.

use std::collections::HashMap;
use std::sync::Arc;

use judgelab_core::cut;
use judgelab_core::judge::Judge;
use judgelab_core::{Item, ItemText, Label, TrialParams};

use crate::resolve::Trial;
use crate::EngineError;

/// The items cut to each (judge, level) the trials ask for, with the tokens cut from each;
/// labelled items, or (`L = ()`) an estimate's unlabelled ones.
pub(crate) struct Inputs<L = Label> {
    cut: HashMap<(String, u32), CutItems<L>>,
}

/// The items cut to one level, by id, each with the tokens cut from it.
type CutItems<L> = HashMap<String, (Item<L>, u32)>;

impl<L> Default for Inputs<L> {
    fn default() -> Self {
        Inputs {
            cut: HashMap::new(),
        }
    }
}

impl<L: Clone + Send + Sync + 'static> Inputs<L> {
    /// The first trial of each (judge, level) of `trials`: whose judges cut the items.
    pub fn cutting<'t, 'r>(trials: &'t [Trial<'r>]) -> Vec<&'t Trial<'r>> {
        let mut seen = std::collections::HashSet::new();
        trials
            .iter()
            .filter(|t| {
                let level = t.params.input_max_tokens;
                level.is_some() && seen.insert((t.params.judge.as_str(), level))
            })
            .collect()
    }

    /// Cuts `items` as trial `t` shows them, in `judge`'s tokens (the judge of `t`).
    pub async fn cut(
        &mut self,
        t: &Trial<'_>,
        judge: Arc<dyn Judge>,
        items: &[&Item<L>],
    ) -> Result<(), EngineError> {
        let Some(level) = t.params.input_max_tokens else {
            return Ok(());
        };
        let owned: Vec<Item<L>> = items.iter().map(|&i| i.clone()).collect();
        let cut = tokio::task::spawn_blocking(move || {
            let mut starts = |text: &str| judge.token_starts(text);
            owned
                .iter()
                .map(|item| {
                    let (cut, n_cut) = cut::cut_item(item, level as usize, &mut starts)?;
                    Ok((item.id.clone(), (cut, n_cut as u32)))
                })
                .collect::<Result<HashMap<_, _>, String>>()
        })
        .await
        .map_err(|e| EngineError::Judge(format!("cutting inputs panicked: {e}")))?
        .map_err(|e| EngineError::Judge(format!("while cutting inputs to {level} tokens: {e}")))?;
        self.cut.insert((t.params.judge.clone(), level), cut);
        Ok(())
    }

    /// What a trial shows of `item`, and the tokens cut from it (none without a budget).
    pub fn shown<'a>(
        &'a self,
        params: &TrialParams,
        item: &'a Item<L>,
    ) -> (ItemText<'a>, Option<u32>) {
        let Some(level) = params.input_max_tokens else {
            return (item.text(), None);
        };
        match self
            .cut
            .get(&(params.judge.clone(), level))
            .and_then(|items| items.get(&item.id))
        {
            Some((cut, n_cut)) => (cut.text(), Some(*n_cut)),
            // Cut for the items the run was started with; none other reaches here.
            None => {
                debug_assert!(false, "item {} was not cut for its trial", item.id);
                (item.text(), Some(0))
            }
        }
    }
}

/// Where each token of `text` starts: in `judge`'s tokens, or without one (a plan with no
/// local model) about four characters a token.
pub(crate) fn starts_in(judge: Option<&dyn Judge>, text: &str) -> Result<Vec<usize>, String> {
    match judge {
        Some(j) => j.token_starts(text),
        None => Ok(cut::estimated_starts(text)),
    }
}

/// `item` as a trial with `params` shows it: cut to its input budget in `judge`'s tokens
/// (or without one, about four characters a token, as a remote judge cuts); whole without
/// a budget.
pub(crate) fn shown_by(
    params: &TrialParams,
    item: &Item,
    judge: Option<&dyn Judge>,
) -> Result<Item, EngineError> {
    let Some(level) = params.input_max_tokens else {
        return Ok(item.clone());
    };
    let mut starts = |text: &str| starts_in(judge, text);
    let (cut, _) = cut::cut_item(item, level as usize, &mut starts).map_err(EngineError::Judge)?;
    Ok(cut)
}

/// For the plan: how many of `items` each level of `input_max_tokens` cuts, in a sentence
/// each, counted in `judge`'s tokens (the first local judge's), or without one estimated.
pub(crate) fn plan_lines(
    levels: &[Option<u32>],
    items: &[&Item],
    judge: Option<&dyn Judge>,
) -> Result<Vec<String>, EngineError> {
    let mut lines = Vec::new();
    for &level in levels.iter().flatten() {
        let mut starts = |text: &str| starts_in(judge, text);
        let mut n_cut = 0;
        for item in items {
            let (_, cut) =
                cut::cut_item(*item, level as usize, &mut starts).map_err(EngineError::Judge)?;
            n_cut += usize::from(cut > 0);
        }
        let counted = match judge {
            Some(_) => "in the first local judge's tokens",
            None => "estimated at four characters a token",
        };
        lines.push(format!(
            "input_max_tokens = {level}: cuts the question or an answer of {n_cut} of {} items ({counted}), keeping each one's start and end",
            items.len()
        ));
    }
    Ok(lines)
}
