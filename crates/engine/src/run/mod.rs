//! One run of an experiment: create it (split, trials) or resume it, then judge every
//! (trial, item, repeat, answer order) that has no successful verdict yet, in batches, recording each
//! verdict the moment it arrives. A cancelled run keeps everything judged so far; running
//! it again judges only what is missing.

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use judgelab_core::judge::Completion;
use judgelab_core::split;
use judgelab_core::template::ExampleContext;
use judgelab_core::{Item, JudgeRequest, JudgeResponse, Message};
use judgelab_store::{ExperimentRow, NewExperiment, NewTrial, Store, TrialRow};

pub(crate) mod interface;
mod loaded;

pub use interface::{RunEvent, RunOptions, RunSummary};
use loaded::Judges;

use crate::calls::{groups, prepare, rows, Call};
use crate::exact::Reader;
use crate::resolve::{resolve, Resolved};
use crate::EngineError;

/// Runs (or resumes) the experiment in the file at `path`.
pub async fn run_experiment(
    store: &Store,
    path: &Path,
    options: RunOptions,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<RunSummary, EngineError> {
    let r = resolve(store, path).await?;
    if r.imported {
        on_event(RunEvent::Imported {
            dataset: r.dataset.name.clone(),
            n_items: r.dataset.items.len(),
        });
    }
    // A replaced experiment is deleted only in the transaction that stores its successor.
    let (existing, replacing) = match store.experiment_by_name(&r.experiment.name).await? {
        Some(e) if e.content_hash == r.content_hash => (Some(e), None),
        Some(e) if options.replace => (None, Some(e.id)),
        Some(e) => {
            return Err(EngineError::Changed {
                name: e.name,
                n_verdicts: store.count_verdicts(e.id).await?,
            })
        }
        None => (None, None),
    };
    let resumed = existing.is_some();
    let mut judges = Judges::new(&r, &options);
    let row = match existing {
        Some(row) => row,
        None => create(store, &r, &mut judges, replacing, on_event).await?,
    };
    let trials = store.trials(row.id).await?;
    let index: HashMap<&str, &Item> = r.dataset.items.iter().map(|i| (i.id.as_str(), i)).collect();
    let repeats = r.experiment.sweep.repeats;
    // A call per item, repeat and answer order of each trial.
    let calls = |t: &TrialRow| row.judged.len() * repeats as usize * t.params.order.calls().len();
    let total: usize = trials.iter().map(calls).sum();

    // What is missing, per trial, in trial order.
    let mut missing: Vec<(&TrialRow, Vec<Call<'_>>)> = Vec::new();
    for trial in &trials {
        let done = store.done_keys(trial.id).await?;
        let mut todo = Vec::new();
        for id in &row.judged {
            for repeat in 0..repeats {
                for &swapped in trial.params.order.calls() {
                    if !done.contains(&(id.clone(), repeat, swapped)) {
                        todo.push(Call {
                            item: index[id.as_str()],
                            repeat,
                            swapped,
                        });
                    }
                }
            }
        }
        missing.push((trial, todo));
    }
    let n_missing: usize = missing.iter().map(|(_, todo)| todo.len()).sum();
    let mut done = total - n_missing;
    let already_done = done;
    on_event(RunEvent::Started {
        experiment: row.name.clone(),
        resumed,
        n_trials: trials.len(),
        total,
        done,
        pool: row.pool.clone(),
        n_judged_items: row.judged.len(),
    });

    let exact = |t: &TrialRow| r.judge(&t.params.judge).exact() && !options.naive;
    let mut judged_now = 0;
    let mut n_errors = 0;
    let mut cache_hits = 0;
    let mut model_calls = 0;
    let mut prompt_tokens_decoded = 0u64;
    for group in groups(missing, exact) {
        if options.cancel.load(Ordering::SeqCst) {
            break;
        }
        let model = &group.first().params.judge;
        let judge = judges.get(model, on_event).await?;
        let reader = if group.exact {
            let vocabulary = judge.vocabulary().ok_or_else(|| EngineError::Invalid {
                path: "judge.exact".into(),
                message: format!("the judge of model {model:?} cannot return logits"),
            })?;
            let reader = Reader::new(
                vocabulary,
                r.output,
                r.dataset.task,
                r.allow_tie(),
                group.first().params.constraint,
            )
            .map_err(|message| EngineError::Invalid {
                path: "judge.exact".into(),
                message: format!("model {model:?}: {message}"),
            })?;
            Some(reader)
        } else {
            None
        };
        let (pending, requests) = prepare(&r, &group, &index)?;
        // Remote calls already answered (by this experiment before a --replace, or by
        // another one) are replayed from the response cache: nothing is paid for twice.
        let mut from_cache = vec![false; pending.len()];
        let mut hits = Vec::new();
        let mut misses = Vec::with_capacity(requests.len());
        for request in requests {
            let cached = match pending[request.key].cache_key.as_deref() {
                Some(key) if !options.no_cache => store.cached_response(key).await?,
                _ => None,
            };
            match cached.and_then(|json| serde_json::from_str::<Completion>(&json).ok()) {
                Some(completion) => {
                    from_cache[request.key] = true;
                    hits.push(JudgeResponse {
                        key: request.key,
                        result: Ok(completion),
                    });
                }
                None => misses.push(request),
            }
        }
        let requests = misses;
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<JudgeResponse>();
        let cancel = Arc::clone(&options.cancel);
        let batch_size = r.experiment.judge.batch_size;
        let worker = tokio::task::spawn_blocking(move || {
            let mut requests = requests.into_iter().peekable();
            while requests.peek().is_some() && !cancel.load(Ordering::SeqCst) {
                let batch: Vec<JudgeRequest> = requests.by_ref().take(batch_size).collect();
                judge.judge_batch(batch, &cancel, &mut |response| {
                    let _ = tx.send(response);
                });
            }
        });
        // A judge that stops without answering every request (a crashed worker) must not
        // drop calls silently: what is unanswered when it returns, uncancelled, is recorded
        // as a failed call, to be retried by the next run.
        let mut answered = vec![false; pending.len()];
        let mut backlog: Vec<JudgeResponse> = hits;
        let mut flushed = false;
        loop {
            let response = match backlog.pop() {
                Some(r) => r,
                None => match rx.recv().await {
                    Some(r) => {
                        model_calls += 1;
                        if let Ok(c) = &r.result {
                            prompt_tokens_decoded +=
                                u64::from(c.decoded_tokens.unwrap_or(c.prompt_tokens));
                        }
                        r
                    }
                    None if flushed || options.cancel.load(Ordering::SeqCst) => break,
                    None => {
                        flushed = true;
                        backlog = (0..pending.len())
                            .filter(|&key| !answered[key])
                            .map(|key| JudgeResponse {
                                key,
                                result: Err("the judge returned no response for this call".into()),
                            })
                            .collect();
                        continue;
                    }
                },
            };
            let Some(p) = pending
                .get(response.key)
                .filter(|_| !answered[response.key])
            else {
                continue;
            };
            answered[response.key] = true;
            let hit = from_cache[response.key];
            if let (Some(key), Ok(completion), false) = (&p.cache_key, &response.result, hit) {
                let json = serde_json::to_string(completion).expect("completions serialise");
                store.cache_response(key, &json).await?;
            }
            for (trial_idx, mut row) in rows(&r, &group, p, &response, reader.as_ref()) {
                row.cache_hit = hit;
                cache_hits += usize::from(hit);
                let failed = row.outcome.label().is_none();
                n_errors += usize::from(row.outcome.is_call_failure());
                let written = match store.record_verdict(&row).await {
                    Ok(written) => written,
                    Err(e) => {
                        options.cancel.store(true, Ordering::SeqCst);
                        return Err(e.into());
                    }
                };
                // Not written: another process stored this verdict first; it counts once.
                judged_now += usize::from(written);
                if !row.outcome.is_call_failure() {
                    done += 1;
                }
                on_event(RunEvent::Verdict {
                    trial_idx: group.trials[trial_idx].0.trial_idx,
                    done,
                    total,
                    failed,
                });
            }
        }
        worker
            .await
            .map_err(|e| EngineError::Judge(format!("the judge thread panicked: {e}")))?;
    }
    Ok(RunSummary {
        experiment: row.name.clone(),
        experiment_id: row.id,
        resumed,
        n_trials: trials.len(),
        total,
        already_done,
        judged_now,
        n_errors,
        cache_hits,
        model_calls,
        prompt_tokens_decoded,
        interrupted: done < total && options.cancel.load(Ordering::SeqCst),
    })
}

/// The length of an item shown as a few-shot example, in the judge's tokens: its question,
/// answers and label.
fn example_text(item: &Item) -> Message {
    let e = ExampleContext::new(item);
    let parts = [
        Some(e.question),
        e.answer_a,
        e.answer_b,
        e.answer,
        e.reference,
    ];
    let mut content: Vec<&str> = parts.into_iter().flatten().collect();
    content.push(&e.label);
    Message {
        role: "user".into(),
        content: content.join("\n"),
    }
}

/// Reserves the few-shot pool, draws the items to judge, and stores the experiment with
/// its trials.
async fn create(
    store: &Store,
    r: &Resolved,
    judges: &mut Judges<'_>,
    replacing: Option<i64>,
    on_event: &mut (dyn FnMut(RunEvent) + Send),
) -> Result<ExperimentRow, EngineError> {
    let e = &r.experiment;
    let items = &r.dataset.items;
    let limits = &e.sweep.few_shot_max_tokens;
    let lengths: Vec<usize> = if e.max_few_shot() > 0 && limits.iter().any(Option::is_some) {
        // Lengths in the first judge's tokens.
        let judge = judges.get(&e.judges[0].name, on_event).await?;
        let messages: Vec<Message> = items.iter().map(example_text).collect();
        tokio::task::spawn_blocking(move || {
            messages
                .iter()
                .map(|m| judge.count_tokens(std::slice::from_ref(m)))
                .collect::<Result<Vec<_>, _>>()
        })
        .await
        .map_err(|e| EngineError::Judge(format!("tokenising panicked: {e}")))?
        .map_err(EngineError::Judge)?
    } else {
        vec![0; items.len()]
    };
    let length = |idx: usize| lengths[idx];
    let s = split::reserve(
        items,
        e.sweep.seed,
        e.max_few_shot(),
        limits,
        &length,
        e.limits.items,
    )?;
    let ids =
        |idxs: &[usize]| -> Vec<String> { idxs.iter().map(|&i| items[i].id.clone()).collect() };
    let mut trials = Vec::new();
    for params in e.trials() {
        let (_, template) = r
            .templates
            .iter()
            .find(|(n, _)| *n == params.template)
            .expect("resolved");
        let (path, sha256) = r.model_file(&params.judge);
        let examples = split::examples(
            &s.pool,
            params.few_shot as usize,
            params.few_shot_max_tokens,
            &length,
        );
        let (model_path, model_sha256) = match r.judge(&params.judge).remote() {
            Some(remote) => (
                format!("{}#{}", remote.endpoint.base_url, remote.model),
                None,
            ),
            None => (path.display().to_string(), Some(sha256.clone())),
        };
        trials.push(NewTrial {
            template_hash: template.hash.clone(),
            model_path,
            model_sha256,
            examples: ids(&examples),
            params,
        });
    }
    for (_, template) in &r.templates {
        store.save_template(template).await?;
    }
    let row = store
        .create_experiment(
            &NewExperiment {
                name: e.name.clone(),
                content_hash: r.content_hash.clone(),
                spec: r.spec.clone(),
                dataset_id: r.dataset_info.id,
                pool: ids(&s.pool),
                judged: ids(&s.judged),
            },
            &trials,
            replacing,
        )
        .await?;
    Ok(row)
}
