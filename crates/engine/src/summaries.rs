//! The summaries of `input_strategy = "summary"` ([`judgelab_core::cut`]): each input over
//! a budget summarised once by its summariser, at temperature 0 and at most the budget's
//! tokens, stored the moment it arrives under a key that hashes the summariser and the
//! request, and read back by every trial, run and experiment that asks the same.
//!
//! A summariser that cannot read an input whole (longer than its context) leaves it to be
//! cut head and tail (an empty summary, stored as such, says so); any other failed call
//! stops the run with its error, keeping what was written.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use judgelab_core::cut;
use judgelab_core::experiment::{NamedJudge, Price};
use judgelab_core::hash::sha256_hex;
use judgelab_core::judge::Message;
use judgelab_core::judge::{Judge, JudgeRequest, Sampling, StopReason};
use judgelab_core::record::Written;
use judgelab_core::{Experiment, TrialParams};
use judgelab_store::{Store, StoredSummary};

use crate::resolve::ResolvedJudge;
use crate::EngineError;

/// Who writes summaries: its name in the experiment, what identifies its model (the key's
/// part) and its price.
pub(crate) struct Summariser {
    pub name: String,
    pub identity: String,
    pub price: Option<Price>,
}

impl Summariser {
    /// `judge` as a summariser: a local model by its file's sha256, a remote one by its
    /// model and endpoint.
    pub fn of(judge: &ResolvedJudge) -> Summariser {
        Summariser::named(&judge.judge, &judge.sha256)
    }

    /// `judge` as a summariser, its local model file's sha256 `sha256`.
    fn named(judge: &NamedJudge, sha256: &str) -> Summariser {
        let (identity, price) = match judge.remote() {
            Some(r) => (format!("{}@{}", r.model, r.endpoint.base_url), r.price),
            None => (format!("sha256:{sha256}"), None),
        };
        Summariser {
            name: judge.name.clone(),
            identity,
            price,
        }
    }

    /// Who wrote the summaries a stored trial showed: the experiment's summariser (its
    /// model file read again), or the trial's judge (the file it was judged with).
    pub fn of_stored(
        experiment: &Experiment,
        params: &TrialParams,
        model_sha256: Option<&str>,
    ) -> Result<Summariser, EngineError> {
        if let Some(j) = &experiment.summariser {
            return Ok(Summariser::of(&crate::resolve::stored_summariser(j)));
        }
        let judge = experiment
            .judge_named(&params.judge)
            .ok_or_else(|| EngineError::Invalid {
                path: experiment.name.clone(),
                message: format!(
                    "a trial names the judge {:?}, which the experiment has not",
                    params.judge
                ),
            })?;
        Ok(Summariser::named(judge, model_sha256.unwrap_or_default()))
    }

    /// The stored summary's key of `text` at `level`: this summariser and the request.
    fn key(&self, text: &str, level: u32) -> String {
        let request = serde_json::json!({
            "summariser": self.identity,
            "messages": summary_prompt(text, level),
            "max_tokens": level,
        });
        sha256_hex(request.to_string())
    }
}

/// Summaries of the inputs over a budget, and what writing each cost, by the input.
#[derive(Default)]
pub(crate) struct Summarised {
    pub texts: cut::Summaries,
    pub written: HashMap<String, Written>,
}

/// The stored summaries of `texts` at `level` by `summariser`, and the texts that have none.
pub(crate) async fn stored(
    store: &Store,
    summariser: &Summariser,
    texts: &[String],
    level: u32,
) -> Result<(Summarised, Vec<String>), EngineError> {
    let keys: Vec<String> = texts.iter().map(|t| summariser.key(t, level)).collect();
    let found = store.summaries(&keys).await?;
    let mut out = Summarised::default();
    let mut missing = Vec::new();
    for (text, key) in texts.iter().zip(&keys) {
        match found.get(key) {
            Some(s) => out.add(text.clone(), s),
            None => missing.push(text.clone()),
        }
    }
    Ok((out, missing))
}

impl Summarised {
    fn add(&mut self, text: String, s: &StoredSummary) {
        let written = Written {
            calls: 1,
            prompt_tokens: s.prompt_tokens,
            completion_tokens: s.completion_tokens,
            cost_usd: s.cost_usd,
        };
        self.written.insert(text.clone(), written);
        self.texts.insert(text, s.summary.clone());
    }
}

/// What writing summaries found beyond the summaries: inputs the summariser could not
/// read whole, left to be cut head and tail.
pub(crate) struct WriteNotes {
    pub n_too_long: usize,
}

/// Writes summaries of `texts` at `level` with `judge` (the `summariser`'s model), storing
/// each as it arrives and adding it to `into`; `on_progress(done, total)` as they come.
pub(crate) async fn write(
    store: &Store,
    (judge, summariser): (Arc<dyn Judge>, &Summariser),
    texts: Vec<String>,
    level: u32,
    cancel: &Arc<AtomicBool>,
    on_progress: &mut (dyn FnMut(usize, usize) + Send),
    into: &mut Summarised,
) -> Result<WriteNotes, EngineError> {
    let total = texts.len();
    let sampling = Sampling {
        temperature: 0.0,
        top_p: 1.0,
        max_tokens: level,
        seed: 0,
    };
    let requests: Vec<JudgeRequest> = texts
        .iter()
        .enumerate()
        .map(|(i, text)| JudgeRequest::new(i, summary_prompt(text, level), sampling))
        .collect();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let worker_cancel = Arc::clone(cancel);
    let worker = tokio::task::spawn_blocking(move || {
        judge.judge_batch(requests, &worker_cancel, &mut |r| {
            let _ = tx.send(r);
        });
    });
    let (mut done, mut n_too_long) = (0, 0);
    let mut failed: Vec<String> = Vec::new();
    while let Some(response) = rx.recv().await {
        done += 1;
        let text = &texts[response.key];
        match response.result {
            Ok(c) => {
                let too_long = c.stop == StopReason::PromptTooLong;
                n_too_long += usize::from(too_long);
                let s = StoredSummary {
                    key: summariser.key(text, level),
                    summariser: summariser.name.clone(),
                    max_tokens: level,
                    input_sha256: sha256_hex(text),
                    summary: if too_long {
                        String::new()
                    } else {
                        c.text.trim().to_string()
                    },
                    prompt_tokens: c.prompt_tokens,
                    completion_tokens: c.completion_tokens,
                    latency_ms: Some(c.latency_ms),
                    cost_usd: summariser
                        .price
                        .map(|p| p.cost(c.prompt_tokens, c.completion_tokens)),
                };
                store.insert_summary(&s).await?;
                into.add(text.clone(), &s);
            }
            Err(e) => failed.push(e.message),
        }
        on_progress(done, total);
    }
    worker
        .await
        .map_err(|e| EngineError::Judge(format!("summarising panicked: {e}")))?;
    let written = done - failed.len();
    let why = match (failed.first(), done < total) {
        (Some(error), _) => format!("{} of its calls failed, first: {error}", failed.len()),
        (None, true) => "the run was cancelled".to_string(),
        (None, false) => return Ok(WriteNotes { n_too_long }),
    };
    Err(EngineError::Judge(format!(
        "{:?} wrote {written} of the {total} summaries to {level} tokens the trials need ({why}); those written are stored: run again to write the rest",
        summariser.name
    )))
}

/// The inputs of `items` over `level` tokens as `judge` counts them, each once, in a
/// stable order.
pub(crate) async fn over_budget<L: Clone + Send + Sync + 'static>(
    judge: Arc<dyn Judge>,
    items: Vec<judgelab_core::Item<L>>,
    level: u32,
) -> Result<Vec<String>, EngineError> {
    tokio::task::spawn_blocking(move || {
        let mut starts = |text: &str| judge.token_starts(text);
        let mut seen: HashMap<String, ()> = HashMap::new();
        let mut out = Vec::new();
        for item in &items {
            for text in cut::over(item, level as usize, &mut starts)? {
                if seen.insert(text.clone(), ()).is_none() {
                    out.push(text);
                }
            }
        }
        Ok(out)
    })
    .await
    .map_err(|e| EngineError::Judge(format!("counting inputs panicked: {e}")))?
    .map_err(|e: String| EngineError::Judge(format!("while counting inputs: {e}")))
}

/// What a summariser is asked to write of `text`: a faithful summary of at most
/// `max_tokens` of its tokens (asked in words, which a model can count, and held to the
/// tokens by the call's `max_tokens`), keeping what a judgement of it needs.
pub(crate) fn summary_prompt(text: &str, max_tokens: u32) -> Vec<Message> {
    // About three words in four tokens of English.
    let words = (max_tokens * 3 / 4).max(8);
    vec![
        Message {
            role: "system".into(),
            content: "You summarise texts for a judge who will assess them. Keep what an assessment needs: the text's claims, its steps and its conclusion, and its mistakes as they are. Do not correct, praise or criticise it.".into(),
        },
        Message {
            role: "user".into(),
            content: format!("Summarise this text in at most {words} words. Write only the summary.\n\n{text}"),
        },
    ]
}
