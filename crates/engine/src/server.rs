//! What a run learns of a remote judge's server, kept in the response cache under the
//! endpoint and model, so that the plan can say it without calling and later runs need
//! not learn it again.
//!
//! - Whether it returns log-probabilities, so that the judge's one-token verdicts can be
//!   exact (one call per prompt serves a whole temperature × top_p grid). A judge whose
//!   `exact` is unwritten asks once, before its trials are created: one exact call of one
//!   token on a short prompt. A server that returns none (or refuses them) leaves the
//!   judge's trials generating, and the run says so; `exact = true` then fails its calls
//!   with why.
//! - Whether it serves one request at a time (a new request ends the stream in flight, as
//!   llama-cpp-python's server does), which the judge finds out and goes on at one
//!   ([`judgelab_openai::ONE_AT_A_TIME`]); a later run starts at one.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use judgelab_core::experiment::RemoteJudge;
use judgelab_core::{Judge, JudgeRequest, Message, Sampling};
use judgelab_store::Store;

use crate::EngineError;

/// What is known of a server's log-probabilities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Logprobs {
    /// It returns the first token's most likely tokens.
    Returned,
    /// It answered without them, or refused the request: why.
    NotReturned(String),
}

/// The response cache's key of what is known of `remote`'s endpoint and model: `what`.
fn key_of(remote: &RemoteJudge, what: &str) -> String {
    judgelab_core::hash::sha256_hex(
        serde_json::json!({
            "probe": what,
            "base_url": remote.endpoint.base_url,
            "model": remote.model,
        })
        .to_string(),
    )
}

fn key(remote: &RemoteJudge) -> String {
    key_of(remote, "logprobs")
}

/// Keeps that `remote`'s server serves one request at a time.
pub(crate) async fn keep_one_at_a_time(
    store: &Store,
    remote: &RemoteJudge,
) -> Result<(), EngineError> {
    Ok(store
        .cache_response(&key_of(remote, "one request at a time"), "found")
        .await?)
}

/// Whether an earlier run found that `remote`'s server serves one request at a time.
pub(crate) async fn one_at_a_time(
    store: &Store,
    remote: &RemoteJudge,
) -> Result<bool, EngineError> {
    Ok(store
        .cached_response(&key_of(remote, "one request at a time"))
        .await?
        .is_some())
}

/// What an earlier run learnt of `remote`'s server, if any.
pub(crate) async fn known(
    store: &Store,
    remote: &RemoteJudge,
) -> Result<Option<Logprobs>, EngineError> {
    Ok(store.cached_response(&key(remote)).await?.map(|answer| {
        match answer.strip_prefix("not returned: ") {
            Some(why) => Logprobs::NotReturned(why.to_string()),
            None => Logprobs::Returned,
        }
    }))
}

/// Asks `judge`, the loaded `remote`, unless an earlier run did; the answer is kept. A
/// call that fails (the server unreachable) keeps nothing: the next run asks again.
pub(crate) async fn ask(
    store: &Store,
    remote: &RemoteJudge,
    judge: Arc<dyn Judge>,
) -> Result<Logprobs, EngineError> {
    if let Some(known) = known(store, remote).await? {
        return Ok(known);
    }
    let request = JudgeRequest {
        logits: true,
        ..JudgeRequest::new(
            0,
            vec![Message {
                role: "user".into(),
                content: "Answer with one letter: A or B?".into(),
            }],
            Sampling {
                temperature: 0.0,
                top_p: 1.0,
                max_tokens: 0,
                seed: 0,
            },
        )
    };
    let response = tokio::task::spawn_blocking(move || {
        let mut answer = None;
        judge.judge_batch(vec![request], &Arc::new(AtomicBool::new(false)), &mut |r| {
            answer = Some(r.result)
        });
        answer
    })
    .await
    .map_err(|e| EngineError::Judge(format!("asking for log-probabilities panicked: {e}")))?;
    let base_url = &remote.endpoint.base_url;
    let refused = matches!(&response, Some(Err(_)));
    let answer = match response {
        Some(Ok(c)) if c.top_logprobs.is_some() => Logprobs::Returned,
        Some(Ok(_)) => Logprobs::NotReturned(format!(
            "{base_url} answered a call asking for logprobs and top_logprobs without them"
        )),
        // A server that refuses the fields says so with a 400 no retry changes.
        Some(Err(e)) if e.message.contains("HTTP 400") || e.message.contains("HTTP 422") => {
            Logprobs::NotReturned(format!("{base_url} refused logprobs: {}", e.message))
        }
        Some(Err(e)) => {
            return Err(EngineError::Judge(format!(
                "cannot ask {base_url} whether it returns log-probabilities (for exact \
                 verdicts; exact = false in the judge's table, [judge] or [[judges]], \
                 generates without asking): {}",
                e.message
            )))
        }
        None => {
            return Err(EngineError::Judge(format!(
                "{base_url} gave no answer when asked whether it returns log-probabilities"
            )))
        }
    };
    // A refusal may be of these settings (more top_logprobs than the server allows): it is
    // asked again by the next run, not kept.
    if !refused {
        let kept = match &answer {
            Logprobs::Returned => "returned".to_string(),
            Logprobs::NotReturned(why) => format!("not returned: {why}"),
        };
        store.cache_response(&key(remote), &kept).await?;
    }
    Ok(answer)
}

/// What the plan says of each remote judge from what an earlier run learnt of its server
/// (nothing is asked here): that it serves one request at a time, and whether its
/// one-token trials are exact; trials of a server known to return no log-probabilities
/// are marked as generating, so that the plan counts their calls.
pub(crate) async fn plan_lines(
    store: &Store,
    e: &judgelab_core::Experiment,
    trials: &mut [judgelab_core::TrialParams],
) -> Result<Vec<String>, EngineError> {
    let mut lines = Vec::new();
    for judge in &e.judges {
        let Some(remote) = judge.remote() else {
            continue;
        };
        if remote.endpoint.calls.concurrency > 1 && one_at_a_time(store, remote).await? {
            lines.push(format!(
                "judge {:?}: its server serves one request at a time (an earlier run found it: a new request ends the stream in flight), so its calls go one at a time; concurrency = 1 in the judge's table ([judge] or [[judges]]) says so",
                judge.name
            ));
        }
        let exact: Vec<&mut judgelab_core::TrialParams> = trials
            .iter_mut()
            .filter(|t| t.judge == judge.name && t.exact)
            .collect();
        if exact.is_empty() {
            continue;
        }
        let n = exact.len();
        let k = remote
            .endpoint
            .top_logprobs
            .filter(|&k| k > 0)
            .unwrap_or(judgelab_openai::wire::EXACT_TOP_LOGPROBS);
        let known = match judge.exact_as_written() {
            Some(true) => Some(Logprobs::Returned),
            _ => known(store, remote).await?,
        };
        lines.push(match known {
            Some(Logprobs::Returned) => format!(
                "judge {:?}: exact verdicts from its server's log-probabilities (the first token's {k} most likely tokens): one call per item and answer order serves its {n} one-token trials",
                judge.name
            ),
            Some(Logprobs::NotReturned(why)) => {
                for t in exact {
                    t.exact = false;
                }
                format!(
                    "judge {:?}: its {n} one-token trials generate, one call each, because its server returns no log-probabilities ({why})",
                    judge.name
                )
            }
            None => format!(
                "judge {:?}: exact verdicts if its server returns log-probabilities (the first token's {k} most likely tokens), which the run asks first with one short call: then one call per item and answer order serves its {n} one-token trials; if not, they generate, one call each, and the run says so",
                judge.name
            ),
        });
    }
    Ok(lines)
}
