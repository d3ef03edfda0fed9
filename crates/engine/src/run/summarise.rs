//! A run's summaries for the trials whose strategy is `summary`: the inputs over each
//! trial's budget, counted in its judge's tokens, summarised by the experiment's
//! summariser (or the trial's own judge) where the store has no summary of them yet
//! ([`crate::summaries`]).

use judgelab_core::Item;
use judgelab_store::Store;

use super::interface::RunEvent;
use super::loaded::Judges;
use crate::resolve::Trial;
use crate::summaries::{self, Summarised, Summariser};
use crate::EngineError;

/// The summaries trial `t` shows of `items`: read from the store, the missing ones written.
pub(crate) async fn summaries<L: Clone + Send + Sync + 'static>(
    store: &Store,
    t: &Trial<'_>,
    items: &[&Item<L>],
    judges: &mut Judges<'_>,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<Summarised, EngineError> {
    let Some(level) = t.params.input_max_tokens else {
        return Ok(Summarised::default());
    };
    let judge = judges.get(t.judge, on_event).await?;
    let owned = items.iter().map(|&i| i.clone()).collect();
    let texts = summaries::over_budget(judge, owned, level).await?;
    let resolved = judges.resolved().summariser.as_ref().unwrap_or(t.judge);
    let summariser = Summariser::of(resolved);
    let (mut found, missing) = summaries::stored(store, &summariser, &texts, level).await?;
    if missing.is_empty() {
        return Ok(found);
    }
    let name = summariser.name.clone();
    let event = |done, total| RunEvent::Summarising {
        judge: name.clone(),
        level,
        done,
        total,
    };
    on_event(event(0, missing.len()));
    let writer = judges.get(resolved, on_event).await?;
    let cancel = judges.cancel();
    let notes = summaries::write(
        store,
        (writer, &summariser),
        missing,
        level,
        cancel,
        &mut |done, total| on_event(event(done, total)),
        &mut found,
    )
    .await?;
    if notes.n_too_long > 0 {
        on_event(RunEvent::Note {
            judge: summariser.name.clone(),
            message: format!(
                "could not read {} inputs whole to summarise them (longer than its context): they are cut head and tail to {level} tokens",
                notes.n_too_long
            ),
        });
    }
    Ok(found)
}
