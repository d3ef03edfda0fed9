//! `input_strategy = "summary"` with a scripted judge that summarises for itself: a failed
//! summary call stops the run before anything is judged, keeping the summaries written; the
//! next run writes only what is missing; an input longer than the summariser can read is
//! cut head and tail instead, and the run says so.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use judgelab_core::judge::{CallError, Completion, ModelIdentity, StopReason};
use judgelab_core::{Judge, JudgeRequest, JudgeResponse, Message};
use judgelab_engine::{run_experiment, EngineError, JudgeLoader, ModelSpec, RunEvent, RunOptions};
use judgelab_store::Store;

/// A word a token. Asked to summarise, it answers `summary of <the text's first word>`
/// (or fails while `failures` lasts, or cannot read a text with `overlong` in it); asked
/// for a verdict, `A`. It keeps every text it was asked to summarise and every verdict
/// prompt.
struct Summariser {
    identity: ModelIdentity,
    failures: AtomicUsize,
    summarised: Mutex<Vec<String>>,
    prompts: Mutex<Vec<String>>,
}

const ASKED: &str = "Summarise this text in at most ";

impl Judge for Summariser {
    fn identity(&self) -> &ModelIdentity {
        &self.identity
    }

    fn count_tokens(&self, messages: &[Message]) -> Result<usize, String> {
        Ok(messages
            .iter()
            .map(|m| m.content.split_whitespace().count())
            .sum())
    }

    fn token_starts(&self, text: &str) -> Result<Vec<usize>, String> {
        let mut starts = Vec::new();
        let mut in_word = false;
        for (i, c) in text.char_indices() {
            if !c.is_whitespace() && !in_word {
                starts.push(i);
            }
            in_word = !c.is_whitespace();
        }
        Ok(starts)
    }

    fn judge_batch(
        &self,
        requests: Vec<JudgeRequest>,
        cancel: &Arc<AtomicBool>,
        on_response: &mut dyn FnMut(JudgeResponse),
    ) {
        for request in requests {
            if cancel.load(Ordering::SeqCst) {
                return;
            }
            let asked = request.messages.last().unwrap().content.clone();
            let (text, stop) = match asked.split_once("\n\n") {
                Some((head, text)) if head.starts_with(ASKED) => {
                    self.summarised.lock().unwrap().push(text.to_string());
                    let failed = self
                        .failures
                        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
                        .is_ok();
                    if failed {
                        on_response(JudgeResponse {
                            key: request.key,
                            result: Err(CallError::after(1, "HTTP 503 from the summariser")),
                        });
                        continue;
                    }
                    match text.contains("overlong") {
                        true => (String::new(), StopReason::PromptTooLong),
                        false => {
                            let first = text.split_whitespace().next().unwrap_or_default();
                            (format!("summary of {first}"), StopReason::EndOfTurn)
                        }
                    }
                }
                _ => {
                    self.prompts.lock().unwrap().push(asked.clone());
                    ("A".to_string(), StopReason::EndOfTurn)
                }
            };
            on_response(JudgeResponse {
                key: request.key,
                result: Ok(Completion {
                    completion_tokens: text.split_whitespace().count() as u32,
                    text,
                    prompt_tokens: asked.split_whitespace().count() as u32,
                    latency_ms: 1.0,
                    ttft_ms: None,
                    stop,
                    cached_tokens: None,
                    attempts: 1,
                    logprobs: None,
                    decoded_tokens: None,
                    endpoint: None,
                    logits: None,
                    top_logprobs: None,
                }),
            });
        }
    }
}

struct Loader(Arc<Summariser>);

impl JudgeLoader for Loader {
    fn load(&self, _: &ModelSpec) -> Result<Arc<dyn Judge>, EngineError> {
        Ok(self.0.clone())
    }
}

#[tokio::test]
async fn a_failed_summary_stops_the_run_and_the_next_writes_only_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    // Three items whose questions run to 40 words; the first one's the summariser cannot
    // read whole. Their answers are short: nothing of theirs is summarised.
    let lines: Vec<String> = (0..3)
        .map(|i| {
            let words: Vec<String> = (0..40).map(|w| format!("q{i}w{w}")).collect();
            let question = if i == 0 { format!("overlong {}", words.join(" ")) } else { words.join(" ") };
            format!(r#"{{"id":"i{i}","task":"pairwise","question":"{question}","answer_a":"a","answer_b":"b","human_label":"A"}}"#)
        })
        .collect();
    std::fs::write(dir.path().join("items.jsonl"), lines.join("\n")).unwrap();
    std::fs::write(dir.path().join("q.jinja"), "{{ question }}").unwrap();
    std::fs::write(dir.path().join("fake.gguf"), "GGUF and nothing else").unwrap();
    let experiment = dir.path().join("e.toml");
    std::fs::write(
        &experiment,
        "name = \"e\"\ndataset = \"items.jsonl\"\n[judge]\nmodel = \"fake.gguf\"\ntemplate = \"q.jinja\"\n[sweep]\nmax_tokens = 4\ninput_max_tokens = 16\ninput_strategy = \"summary\"\n",
    )
    .unwrap();
    let store = Store::open(&dir.path().join("j.db")).await.unwrap();
    let judge = Arc::new(Summariser {
        identity: ModelIdentity {
            name: "scripted".into(),
            location: "memory".into(),
            sha256: None,
        },
        failures: AtomicUsize::new(1),
        summarised: Mutex::new(Vec::new()),
        prompts: Mutex::new(Vec::new()),
    });
    let options = || RunOptions {
        judges: Some(Arc::new(Loader(judge.clone()))),
        timed_calls: 0,
        ..RunOptions::default()
    };

    let err = run_experiment(&store, &experiment, options(), &mut |_| {})
        .await
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("wrote 2 of the 3 summaries to 16 tokens the trials need (1 of its calls failed, first: HTTP 503 from the summariser); those written are stored: run again to write the rest"),
        "{err}"
    );
    assert!(
        judge.prompts.lock().unwrap().is_empty(),
        "nothing is judged"
    );
    assert_eq!(judge.summarised.lock().unwrap().len(), 3);

    let mut notes = Vec::new();
    let summary = run_experiment(&store, &experiment, options(), &mut |e| {
        if let RunEvent::Note { message, .. } = e {
            notes.push(message);
        }
    })
    .await
    .unwrap();
    assert_eq!(summary.judged_now, 3);
    // Only the summary that failed is asked again: it is the one it cannot read.
    let summarised = judge.summarised.lock().unwrap().clone();
    assert_eq!(summarised.len(), 4);
    assert!(summarised[3].starts_with("overlong"));
    assert_eq!(
        notes,
        ["could not read 1 inputs whole to summarise them (longer than its context): they are cut head and tail to 16 tokens"]
    );
    let prompts = judge.prompts.lock().unwrap().clone();
    assert!(
        prompts
            .iter()
            .any(|p| p.starts_with("overlong") && p.contains("tokens cut")),
        "{prompts:?}"
    );
    assert!(
        prompts.contains(&"summary of q1w0".to_string()),
        "{prompts:?}"
    );
    assert!(
        prompts.contains(&"summary of q2w0".to_string()),
        "{prompts:?}"
    );

    // Each item's one call carries its summary's cost: one call, its tokens.
    let trial = store.trials(1).await.unwrap()[0].id;
    let verdicts = store.verdicts(trial).await.unwrap();
    for v in &verdicts {
        let written = v.summaries.unwrap();
        assert_eq!(written.calls, 1, "{v:?}");
        assert!(written.prompt_tokens > 40, "{v:?}");
        assert!(v.input_cut.unwrap() > 0);
    }
}
