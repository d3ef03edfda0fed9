//! The inputs a run shows its judges: each item as it is, or, for a trial with an input
//! budget (`input_max_tokens`), shortened to it in its judge's tokens
//! ([`judgelab_core::cut`]): cut head and tail, or replaced by summaries written first
//! (`crate::run::summaries`). Items are shortened once per (judge, level, strategy) before
//! anything is judged, so that every call of a trial, in any group or pass, shows the same
//! text, and each verdict records how many tokens its inputs lost (and the first of each
//! item what its summaries cost).

use std::collections::HashMap;
use std::sync::Arc;

use judgelab_core::cut;
use judgelab_core::experiment::Shortening;
use judgelab_core::judge::Judge;
use judgelab_core::record::Written;
use judgelab_core::{Item, ItemText, Label, TrialParams};

use crate::resolve::Trial;
use crate::summaries::{self, Summarised};
use crate::EngineError;

/// The items shortened to each (judge, level, strategy) the trials ask for, with the
/// tokens cut from each; labelled items, or (`L = ()`) an estimate's unlabelled ones.
pub(crate) struct Inputs<L = Label> {
    cut: HashMap<(String, u32, Shortening), CutItems<L>>,
}

/// The items shortened one way, by id, each with what was shortened.
type CutItems<L> = HashMap<String, (Item<L>, Shortened)>;

/// What a trial's budget shortened of an item.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Shortened {
    /// Tokens cut from its inputs (0: none).
    pub cut: u32,
    /// What writing the summaries shown in their place cost; none where none is shown.
    pub written: Option<Written>,
}

/// A trial's key among the items shortened: its judge, level and strategy.
fn key(params: &TrialParams, level: u32) -> (String, u32, Shortening) {
    (params.judge.clone(), level, params.input_strategy)
}

impl<L> Default for Inputs<L> {
    fn default() -> Self {
        Inputs {
            cut: HashMap::new(),
        }
    }
}

impl<L: Clone + Send + Sync + 'static> Inputs<L> {
    /// The first trial of each (judge, level, strategy) of `trials`: whose judges shorten
    /// the items.
    pub fn cutting<'t, 'r>(trials: &'t [Trial<'r>]) -> Vec<&'t Trial<'r>> {
        let mut seen = std::collections::HashSet::new();
        trials
            .iter()
            .filter(|t| match t.params.input_max_tokens {
                Some(level) => seen.insert(key(&t.params, level)),
                None => false,
            })
            .collect()
    }

    /// Shortens `items` as trial `t` shows them, in `judge`'s tokens (the judge of `t`):
    /// by their `summaries` where its strategy is `summary`.
    pub async fn cut(
        &mut self,
        t: &Trial<'_>,
        judge: Arc<dyn Judge>,
        items: &[&Item<L>],
        summaries: Option<Summarised>,
    ) -> Result<(), EngineError> {
        let Some(level) = t.params.input_max_tokens else {
            return Ok(());
        };
        let owned: Vec<Item<L>> = items.iter().map(|&i| i.clone()).collect();
        let cut = tokio::task::spawn_blocking(move || {
            let mut starts = |text: &str| judge.token_starts(text);
            let texts = summaries.as_ref().map(|s| &s.texts);
            owned
                .iter()
                .map(|item| {
                    let max = level as usize;
                    let (cut, n_cut) = cut::cut_item(item, max, &mut starts, texts)?;
                    let written = match &summaries {
                        Some(s) => Some(
                            cut::over(item, max, &mut starts)?
                                .iter()
                                .filter_map(|text| s.written.get(text).copied())
                                .fold(Written::default(), Written::add),
                        ),
                        None => None,
                    };
                    let cut_now = n_cut as u32;
                    Ok((
                        item.id.clone(),
                        (
                            cut,
                            Shortened {
                                cut: cut_now,
                                written,
                            },
                        ),
                    ))
                })
                .collect::<Result<HashMap<_, _>, String>>()
        })
        .await
        .map_err(|e| EngineError::Judge(format!("cutting inputs panicked: {e}")))?
        .map_err(|e| EngineError::Judge(format!("while cutting inputs to {level} tokens: {e}")))?;
        self.cut.insert(key(&t.params, level), cut);
        Ok(())
    }

    /// What a trial shows of `item`, and what was shortened of it (none without a budget).
    pub fn shown<'a>(
        &'a self,
        params: &TrialParams,
        item: &'a Item<L>,
    ) -> (ItemText<'a>, Option<Shortened>) {
        let Some(level) = params.input_max_tokens else {
            return (item.text(), None);
        };
        match self
            .cut
            .get(&key(params, level))
            .and_then(|items| items.get(&item.id))
        {
            Some((cut, shortened)) => (cut.text(), Some(*shortened)),
            // Cut for the items the run was started with; none other reaches here.
            None => {
                debug_assert!(false, "item {} was not cut for its trial", item.id);
                let none = Shortened {
                    cut: 0,
                    written: None,
                };
                (item.text(), Some(none))
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

/// `item` as a trial with `params` shows it: shortened to its input budget in `judge`'s
/// tokens (or without one, about four characters a token, as a remote judge cuts), by
/// `summaries` where given, else head and tail; whole without a budget.
pub(crate) fn shown_by(
    params: &TrialParams,
    item: &Item,
    judge: Option<&dyn Judge>,
    summaries: Option<&cut::Summaries>,
) -> Result<Item, EngineError> {
    let Some(level) = params.input_max_tokens else {
        return Ok(item.clone());
    };
    let mut starts = |text: &str| starts_in(judge, text);
    let (cut, _) =
        cut::cut_item(item, level as usize, &mut starts, summaries).map_err(EngineError::Judge)?;
    Ok(cut)
}

/// For the plan: how many of `items` each level of `input_max_tokens` shortens, in a
/// sentence each, counted in `judge`'s tokens (the first local judge's), or without one
/// estimated; with the strategies the sweep has, and for summaries how many inputs need
/// one and how many of those `store` holds already (written by the experiment's
/// summariser, or the first judge where each trial's judge summarises for itself).
pub(crate) async fn plan_lines(
    store: &judgelab_store::Store,
    r: &crate::resolve::Resolved,
    items: &[&Item],
    judge: Option<&dyn Judge>,
) -> Result<Vec<String>, EngineError> {
    let sweep = &r.experiment.sweep;
    let summariser = r.summariser.as_ref().or(r.judges.first());
    let who = match &r.experiment.summariser {
        Some(j) => format!("{:?}", j.name),
        None => "each trial's judge".to_string(),
    };
    let summarised = sweep.input_strategy.contains(&Shortening::Summary);
    let mut lines = Vec::new();
    for &level in sweep.input_max_tokens.iter().flatten() {
        let mut starts = |text: &str| starts_in(judge, text);
        let (mut n_cut, mut over) = (0, Vec::new());
        let mut seen = std::collections::HashSet::new();
        for item in items {
            let texts =
                cut::over(*item, level as usize, &mut starts).map_err(EngineError::Judge)?;
            n_cut += usize::from(!texts.is_empty());
            over.extend(texts.into_iter().filter(|t| seen.insert(t.clone())));
        }
        let counted = match judge {
            Some(_) => "in the first local judge's tokens",
            None => "estimated at four characters a token",
        };
        let how = match (sweep.input_strategy.as_slice(), summarised) {
            (_, false) => "keeping each one's start and end".to_string(),
            ([_], true) => format!("each replaced by a summary {who} writes first"),
            (_, true) => {
                format!("each kept head and tail, or replaced by a summary {who} writes first")
            }
        };
        let mut line = format!(
            "input_max_tokens = {level}: shortens the question or an answer of {n_cut} of {} items ({counted}), {how}",
            items.len()
        );
        if let (true, Some(s)) = (summarised, summariser) {
            let s = summaries::Summariser::of(s);
            let (found, _) = summaries::stored(store, &s, &over, level).await?;
            line += &format!(
                "; {} summaries, each written once and stored ({} of them stored already)",
                over.len(),
                found.texts.len()
            );
        }
        lines.push(line);
    }
    Ok(lines)
}
