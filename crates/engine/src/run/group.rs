//! Judging one group of trials ([`calls::groups`](crate::calls::groups)) in named steps:
//! load its judge and, for exact verdicts, the reader of its first-token distributions;
//! replay what the response cache already has; send the rest to the judge on a worker
//! thread, in batches; record every response the moment it arrives, and record a call the
//! judge left unanswered as failed, to be retried by the next run.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

use judgelab_core::judge::{CallError, Completion};
use judgelab_core::{Item, Judge, JudgeRequest, JudgeResponse};
use judgelab_store::Store;
use tokio::sync::mpsc::UnboundedReceiver;

use super::interface::{RunEvent, RunOptions};
use super::loaded::Judges;
use crate::calls::{prepare, rows, Group, Pending};
use crate::exact::Readers;
use crate::resolve::Resolved;
use crate::EngineError;

/// What every group of a run shares.
pub(crate) struct Run<'a> {
    pub store: &'a Store,
    pub r: &'a Resolved,
    pub options: &'a RunOptions,
    pub index: &'a HashMap<&'a str, &'a Item>,
    /// What each trial shows of the items (cut to its input budget).
    pub inputs: &'a crate::inputs::Inputs,
    /// Calls the experiment needs in all, as it stands (a race's drops lower it), and the
    /// verdicts they make (fewer where a checklist asks a call per criterion).
    pub total: AtomicUsize,
    pub verdicts: AtomicUsize,
    pub budget: Budget,
    /// What judges have noted ([`Judge::notes`]) and the run has said, by judge.
    pub noted: std::sync::Mutex<std::collections::HashSet<(String, String)>>,
}

impl Run<'_> {
    /// What the experiment needs now, as [`super::needed`] counts it: (calls, calls
    /// missing, verdicts).
    pub fn restate(&self, (calls, _, verdicts): (usize, usize, usize)) {
        self.total.store(calls, Ordering::SeqCst);
        self.verdicts.store(verdicts, Ordering::SeqCst);
    }
}

/// The experiment's budgets (`limits.max_calls`, `max_usd`, `max_seconds`) and what is
/// spent of them. Once one is reached, the run stops as if cancelled, after the calls in
/// flight, and says which.
pub(crate) struct Budget {
    limits: judgelab_core::experiment::Budget,
    /// Calls and dollars of the experiment stored before this run.
    calls_before: u64,
    usd_before: f64,
    started: Instant,
    reached: OnceLock<String>,
}

impl Budget {
    pub async fn start(
        store: &Store,
        r: &Resolved,
        row: &judgelab_store::ExperimentRow,
    ) -> Result<Budget, EngineError> {
        let limits = r.experiment.limits.budget;
        let (calls_before, usd_before) = if limits.is_set() {
            store.spent(row.id).await?
        } else {
            (0, 0.0)
        };
        Ok(Budget {
            limits,
            calls_before,
            usd_before,
            started: Instant::now(),
            reached: OnceLock::new(),
        })
    }

    /// Which budget this run reached, as the key and its value.
    pub fn reached(&self) -> Option<String> {
        self.reached.get().cloned()
    }

    /// Checks the budgets after a response; true once one is reached.
    fn check(&self, tally: &Tally) -> bool {
        let calls = self.calls_before + tally.model_calls as u64;
        let usd = self.usd_before + tally.spent_usd;
        let seconds = self.started.elapsed().as_secs_f64();
        let reached = match self.limits {
            judgelab_core::experiment::Budget {
                max_calls: Some(max),
                ..
            } if calls >= max => Some(format!("limits.max_calls = {max} (calls made: {calls})")),
            judgelab_core::experiment::Budget {
                max_usd: Some(max), ..
            } if usd >= max => Some(format!("limits.max_usd = {max} (spent: ${usd:.4})")),
            judgelab_core::experiment::Budget {
                max_seconds: Some(max),
                ..
            } if seconds >= max => Some(format!(
                "limits.max_seconds = {max} (this run: {seconds:.0} s)"
            )),
            _ => None,
        };
        if let Some(why) = reached {
            let _ = self.reached.set(why);
        }
        self.reached.get().is_some()
    }
}

/// The run's counts so far.
#[derive(Default)]
pub(crate) struct Tally {
    /// Verdicts the experiment has (failed calls not counted).
    pub done: usize,
    pub judged_now: usize,
    pub n_errors: usize,
    pub cache_hits: usize,
    pub model_calls: usize,
    pub prompt_tokens_decoded: u64,
    /// Dollars this run's calls cost (answers from the response cache cost nothing).
    pub spent_usd: f64,
    /// How many failed calls recorded each error.
    pub errors: std::collections::BTreeMap<String, usize>,
}

/// Judges the missing calls of `group`, recording each verdict as it arrives.
pub(super) async fn judge_group(
    run: &Run<'_>,
    judges: &mut Judges<'_>,
    group: &Group<'_>,
    tally: &mut Tally,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<(), EngineError> {
    let judge = judges.get(group.first().judge, on_event).await?;
    let reader = if group.exact {
        Some(reader(run.r, group, judge.as_ref())?)
    } else {
        None
    };
    let (pending, requests) = prepare(run.r, group, run.index)?;
    let (hits, misses) = replay(run, &pending, requests).await?;
    let remote = group.first().judge.remote();
    let misses = match remote {
        Some(remote) => in_rounds(misses, &pending, remote.endpoint.calls.concurrency),
        None => misses,
    };
    if !misses.is_empty() {
        if let Some(device) = judge.device() {
            for (trial, _) in &group.trials {
                run.store.record_device(trial.id, &device).await?;
            }
        }
    }
    let (worker, rx) = send(run, Arc::clone(&judge), misses, remote.is_some());
    let responses = Responses::new(hits, rx, pending.len());
    record(
        run,
        group,
        &pending,
        reader.as_ref(),
        responses,
        tally,
        on_event,
    )
    .await?;
    worker
        .await
        .map_err(|e| EngineError::Judge(format!("the judge thread panicked: {e}")))?;
    let name = &group.first().params.judge;
    for note in judge.notes() {
        let new = run
            .noted
            .lock()
            .expect("never poisoned")
            .insert((name.clone(), note.clone()));
        if let (true, Some(remote)) = (
            note == judgelab_openai::ONE_AT_A_TIME,
            group.first().judge.remote(),
        ) {
            crate::server::keep_one_at_a_time(run.store, remote).await?;
        }
        if new {
            on_event(RunEvent::Note {
                judge: name.clone(),
                message: note,
            });
        }
    }
    Ok(())
}

/// What reads an exact group's verdicts from the judge's first-token logits, or from the
/// most likely first tokens a remote judge's server returns.
fn reader(r: &Resolved, group: &Group<'_>, judge: &dyn Judge) -> Result<Readers, EngineError> {
    let model = &group.first().params.judge;
    let invalid = |message: String| EngineError::Invalid {
        path: match r.experiment.single_form {
            true => "judge.exact".into(),
            false => format!("judges.{model}.exact"),
        },
        message,
    };
    let vocabulary = match (judge.vocabulary(), group.first().judge.remote()) {
        (Some(vocabulary), _) => Some(vocabulary),
        (None, Some(_)) => None,
        (None, None) => {
            return Err(invalid(format!(
                "the judge of model {model:?} cannot return logits"
            )))
        }
    };
    Readers::new(vocabulary, r, &group.first().params)
        .map_err(|message| invalid(format!("model {model:?}: {message}")))
}

/// Splits `requests` into the responses the cache already has and the requests still to
/// send. Remote calls already answered (by this experiment before a `--replace`, or by
/// another one) are replayed from the cache: nothing is paid for twice.
async fn replay(
    run: &Run<'_>,
    pending: &[Pending],
    requests: Vec<JudgeRequest>,
) -> Result<(Vec<JudgeResponse>, Vec<JudgeRequest>), EngineError> {
    let mut hits = Vec::new();
    let mut misses = Vec::with_capacity(requests.len());
    for request in requests {
        let cached = match pending[request.key].cache_key.as_deref() {
            Some(key) if !run.options.no_cache => run.store.cached_response(key).await?,
            _ => None,
        };
        match cached.and_then(|json| serde_json::from_str::<Completion>(&json).ok()) {
            Some(completion) => hits.push(JudgeResponse {
                key: request.key,
                result: Ok(completion),
            }),
            None => misses.push(request),
        }
    }
    Ok((hits, misses))
}

/// A remote judge's requests in the order that lets a server's prompt cache answer the
/// calls that share a prompt (repeats, and trials that differ only in sampling): prompts
/// taken `width` (the calls in flight) at a time, each one's calls in rounds. The first
/// round decodes `width` prompts in as many slots; as each call returns, the next call
/// of its prompt goes out and finds it in the slot it just left. Sent as they come, the
/// calls of one prompt would be decoded side by side in several slots, each from
/// nothing, and a trial's second pass over more prompts than the cache holds would miss
/// on every one.
fn in_rounds(requests: Vec<JudgeRequest>, pending: &[Pending], width: usize) -> Vec<JudgeRequest> {
    let mut by_prompt: Vec<Vec<JudgeRequest>> = Vec::new();
    let mut slot: HashMap<&str, usize> = HashMap::new();
    for request in requests {
        let hash = pending[request.key].prompt_hash.as_str();
        let i = *slot.entry(hash).or_insert_with(|| {
            by_prompt.push(Vec::new());
            by_prompt.len() - 1
        });
        by_prompt[i].push(request);
    }
    let mut out = Vec::new();
    for block in by_prompt.chunks_mut(width.max(1)) {
        let rounds = block.iter().map(Vec::len).max().unwrap_or(0);
        let mut calls: Vec<std::vec::IntoIter<JudgeRequest>> = block
            .iter_mut()
            .map(|c| std::mem::take(c).into_iter())
            .collect();
        for _ in 0..rounds {
            out.extend(calls.iter_mut().filter_map(Iterator::next));
        }
    }
    out
}

/// Sends `requests` to `judge` on a blocking thread, `batch_size` at a time, until they
/// are done or the run is cancelled; responses come back on the channel. A remote judge
/// gets them all at once: it keeps its `concurrency` calls in flight, starting one as each
/// returns, where batches would leave the endpoint idle as each one drains.
fn send(
    run: &Run<'_>,
    judge: Arc<dyn Judge>,
    requests: Vec<JudgeRequest>,
    remote: bool,
) -> (
    tokio::task::JoinHandle<()>,
    UnboundedReceiver<JudgeResponse>,
) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<JudgeResponse>();
    let cancel = Arc::clone(&run.options.cancel);
    let batch_size = if remote {
        requests.len().max(1)
    } else {
        run.r.experiment.judge.batch_size
    };
    let worker = tokio::task::spawn_blocking(move || {
        let mut requests = requests.into_iter().peekable();
        while requests.peek().is_some() && !cancel.load(Ordering::SeqCst) {
            let batch: Vec<JudgeRequest> = requests.by_ref().take(batch_size).collect();
            judge.judge_batch(batch, &cancel, &mut |response| {
                let _ = tx.send(response);
            });
        }
    });
    (worker, rx)
}

/// Where a response came from.
#[derive(Clone, Copy, PartialEq)]
enum Source {
    /// Replayed from the response cache.
    Cache,
    Judge,
    /// A call the judge returned without answering.
    Unanswered,
}

/// The responses of one group: replayed ones first, then the judge's as they come. A
/// judge that stops without answering every request (a crashed worker) must not drop
/// calls silently: what is unanswered when it returns, uncancelled, comes back as a failed
/// call.
struct Responses {
    replayed: Vec<JudgeResponse>,
    rx: UnboundedReceiver<JudgeResponse>,
    answered: Vec<bool>,
    unanswered: Vec<JudgeResponse>,
    flushed: bool,
}

impl Responses {
    fn new(
        replayed: Vec<JudgeResponse>,
        rx: UnboundedReceiver<JudgeResponse>,
        n_calls: usize,
    ) -> Self {
        Responses {
            replayed,
            rx,
            answered: vec![false; n_calls],
            unanswered: Vec::new(),
            flushed: false,
        }
    }

    /// The next response to a call not answered before; `None` once every call is
    /// answered or the run is cancelled.
    async fn next(&mut self, cancel: &AtomicBool) -> Option<(JudgeResponse, Source)> {
        loop {
            let (response, source) = if let Some(r) = self.replayed.pop() {
                (r, Source::Cache)
            } else if let Some(r) = self.unanswered.pop() {
                (r, Source::Unanswered)
            } else {
                match self.rx.recv().await {
                    Some(r) => (r, Source::Judge),
                    None if self.flushed || cancel.load(Ordering::SeqCst) => return None,
                    None => {
                        self.flushed = true;
                        self.unanswered = (0..self.answered.len())
                            .filter(|&key| !self.answered[key])
                            .map(|key| JudgeResponse {
                                key,
                                result: Err(CallError::untried(
                                    "the judge returned no response for this call",
                                )),
                            })
                            .collect();
                        continue;
                    }
                }
            };
            match self.answered.get_mut(response.key) {
                Some(answered) if !*answered => {
                    *answered = true;
                    return Some((response, source));
                }
                // A key the group never sent, or a second answer to one call.
                _ => continue,
            }
        }
    }
}

/// Records every response of the group as it arrives: its verdicts, and a fresh remote
/// completion in the response cache.
async fn record(
    run: &Run<'_>,
    group: &Group<'_>,
    pending: &[Pending],
    reader: Option<&Readers>,
    mut responses: Responses,
    tally: &mut Tally,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<(), EngineError> {
    let cancel = &run.options.cancel;
    while let Some((response, source)) = responses.next(cancel).await {
        if source == Source::Judge {
            tally.model_calls += 1;
            if let Ok(c) = &response.result {
                tally.prompt_tokens_decoded +=
                    u64::from(c.decoded_tokens.unwrap_or(c.prompt_tokens));
            }
        }
        let p = &pending[response.key];
        let hit = source == Source::Cache;
        if !hit {
            keep(run, group, p, &response).await?;
        }
        let mut answered = rows(run.r, group, p, &response, reader);
        // An exact call's price is on every row it answers, and paid once.
        let mut call_usd = 0.0f64;
        for (_, row) in &mut answered {
            row.cache_hit = hit;
            tally.cache_hits += usize::from(hit);
            if let Some(error) = row.outcome.error() {
                tally.n_errors += 1;
                match tally.errors.get_mut(error) {
                    Some(n) => *n += 1,
                    None => {
                        tally.errors.insert(error.to_string(), 1);
                    }
                }
            }
            let usd = row.cost_usd.unwrap_or(0.0);
            call_usd = match group.exact {
                true => call_usd.max(usd),
                false => call_usd + usd,
            };
        }
        if !hit {
            tally.spent_usd += call_usd;
        }
        // A call's verdicts are stored together: a run stopped meanwhile makes it again
        // whole, never for part of its trials.
        let (trials, records): (Vec<usize>, Vec<_>) = answered.into_iter().unzip();
        let written = match run.store.record_verdicts(&records).await {
            Ok(written) => written,
            Err(e) => {
                cancel.store(true, Ordering::SeqCst);
                return Err(e.into());
            }
        };
        for ((trial_idx, row), written) in trials.iter().zip(&records).zip(written) {
            // Not written: another process stored this verdict first; it counts once.
            tally.judged_now += usize::from(written);
            if !row.outcome.is_call_failure() {
                tally.done += 1;
            }
            on_event(RunEvent::Verdict {
                trial_idx: group.trials[*trial_idx].0.trial_idx,
                done: tally.done,
                total: run.total.load(Ordering::SeqCst),
                failed: row.outcome.label().is_none(),
            });
        }
        if source == Source::Judge && run.budget.check(tally) {
            // Stops the judge after the calls in flight, as a cancel does.
            cancel.store(true, Ordering::SeqCst);
        }
    }
    Ok(())
}

/// Keeps a fresh remote completion in the response cache. An exact pass the server
/// answered without log-probabilities is no answer to keep: a later run, against a fixed
/// server, asks again.
async fn keep(
    run: &Run<'_>,
    group: &Group<'_>,
    p: &Pending,
    response: &JudgeResponse,
) -> Result<(), EngineError> {
    let (Some(key), Ok(completion)) = (&p.cache_key, &response.result) else {
        return Ok(());
    };
    let unread = group.exact
        && completion.top_logprobs.is_none()
        && completion.stop != judgelab_core::judge::StopReason::PromptTooLong;
    if !unread {
        let json = serde_json::to_string(completion).expect("completions serialise");
        run.store.cache_response(key, &json).await?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use judgelab_core::Sampling;

    #[test]
    fn calls_sharing_a_prompt_go_out_in_rounds_of_the_calls_in_flight() {
        // Prompts a, b, c, each called three times, in the order a sweep makes them.
        let prompts = ["a", "a", "a", "b", "b", "b", "c", "c", "c"];
        let pending: Vec<Pending> = prompts
            .iter()
            .map(|p| Pending {
                item_id: p.to_string(),
                swapped: false,
                criterion: None,
                prompt_hash: p.to_string(),
                cache_key: None,
                targets: Vec::new(),
            })
            .collect();
        let requests = |n: usize| -> Vec<JudgeRequest> {
            (0..n)
                .map(|key| JudgeRequest {
                    key,
                    messages: Vec::new(),
                    sampling: Sampling {
                        temperature: 0.0,
                        top_p: 1.0,
                        max_tokens: 1,
                        seed: 0,
                    },
                    logits: false,
                    grammar: None,
                    uncached: false,
                })
                .collect()
        };
        let order = |width: usize| -> String {
            in_rounds(requests(9), &pending, width)
                .iter()
                .map(|r| prompts[r.key])
                .collect()
        };
        assert_eq!(order(2), "ababab".to_string() + "ccc");
        assert_eq!(order(4), "abcabcabc");
        assert_eq!(order(1), "aaabbbccc");
        // Every call once.
        let mut keys: Vec<usize> = in_rounds(requests(9), &pending, 2)
            .iter()
            .map(|r| r.key)
            .collect();
        keys.sort();
        assert_eq!(keys, (0..9).collect::<Vec<_>>());
    }
}
