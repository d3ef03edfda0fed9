//! Whether a remote judge's server returns log-probabilities, so that its one-token
//! verdicts can be exact (one call per prompt serves a whole temperature × top_p grid).
//!
//! A judge whose `exact` is unwritten is asked once, before its trials are created: one
//! exact call of one token on a short prompt. The answer is kept in the response cache
//! under the endpoint and model, so that the plan can say it without calling and later
//! runs do not ask again. A server that returns none (or an error) leaves the judge's
//! trials generating, and the run says so; `exact = true` then fails its calls with why.

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

/// The response cache's key of the answer for `remote`'s endpoint and model.
fn key(remote: &RemoteJudge) -> String {
    judgelab_core::hash::sha256_hex(
        serde_json::json!({
            "probe": "logprobs",
            "base_url": remote.endpoint.base_url,
            "model": remote.model,
        })
        .to_string(),
    )
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
                 verdicts; set the judge's exact = false to generate without asking): {}",
                e.message
            )))
        }
        None => {
            return Err(EngineError::Judge(format!(
                "{base_url} gave no answer when asked whether it returns log-probabilities"
            )))
        }
    };
    let kept = match &answer {
        Logprobs::Returned => "returned".to_string(),
        Logprobs::NotReturned(why) => format!("not returned: {why}"),
    };
    store.cache_response(&key(remote), &kept).await?;
    Ok(answer)
}
