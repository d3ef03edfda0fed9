//! A stored run to open, shared by the results benchmark and the app's view test: 4
//! trials (temperature × max_tokens) of LLMBar-shaped pairwise items, judged through the
//! engine by a scripted judge that answers at once ("A" or "B" from the prompt's hash,
//! sometimes nothing parsable), into a real SQLite file.

use std::io::Write;
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use judgelab_core::judge::{Completion, ModelIdentity, StopReason};
use judgelab_core::{Judge, JudgeRequest, JudgeResponse, Message};
use judgelab_engine::{EngineError, JudgeLoader, ModelSpec, RunOptions};
use judgelab_store::Store;

pub const NAME: &str = "bench-results";

/// Answers at once: "A" or "B" from the prompt's hash, sometimes nothing parsable.
struct Scripted(ModelIdentity);

impl Judge for Scripted {
    fn identity(&self) -> &ModelIdentity {
        &self.0
    }

    fn count_tokens(&self, messages: &[Message]) -> Result<usize, String> {
        Ok(messages.iter().map(|m| m.content.len() / 4).sum())
    }

    fn judge_batch(
        &self,
        requests: Vec<JudgeRequest>,
        _cancel: &Arc<AtomicBool>,
        on_response: &mut dyn FnMut(JudgeResponse),
    ) {
        for r in requests {
            let h =
                judgelab_core::hash::stable_u64(&format!("{:?}{}", r.messages, r.sampling.seed));
            let text = match h % 10 {
                0 => "The answer",
                1..=5 => "A",
                _ => "B",
            };
            on_response(JudgeResponse {
                key: r.key,
                result: Ok(Completion {
                    text: text.into(),
                    prompt_tokens: 300 + (h % 97) as u32,
                    completion_tokens: 1 + (h % 3) as u32,
                    latency_ms: 200.0 + (h % 1000) as f64,
                    ttft_ms: Some(150.0 + (h % 500) as f64),
                    stop: StopReason::EndOfTurn,
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

struct Loader;

impl JudgeLoader for Loader {
    fn load(&self, spec: &ModelSpec) -> Result<Arc<dyn Judge>, EngineError> {
        let ModelSpec::Local(spec) = spec else {
            unreachable!("the benchmark's judge is local")
        };
        Ok(Arc::new(Scripted(ModelIdentity {
            name: spec.name.clone(),
            location: spec.path.display().to_string(),
            sha256: Some(spec.sha256.clone()),
        })))
    }
}

/// Writes the items and the experiment beside them and runs it into `db` (judging only
/// what `db` does not hold yet).
pub fn store(db: &Path, n_items: usize, dir: &Path) -> anyhow::Result<judgelab_engine::RunSummary> {
    let data = dir.join("items.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&data)?);
    for i in 0..n_items {
        let label = ["A", "B", "A", "B", "tie"][i % 5];
        let long = "and a longer explanation ".repeat(i % 7);
        writeln!(
            out,
            "{}",
            serde_json::json!({
                "id": format!("item-{i}"),
                "task": "pairwise",
                "question": format!("Question {i}: which answer follows the instruction?"),
                "answer_a": format!("Answer A to {i} {long}"),
                "answer_b": format!("Answer B to {i}"),
                "human_label": label,
            })
        )?;
    }
    out.flush()?;
    drop(out);
    let experiment = dir.join("bench.toml");
    std::fs::write(
        &experiment,
        format!("name = \"{NAME}\"\ndataset = \"items.jsonl\"\n[judge]\nmodel = \"default\"\ntemplate = \"pairwise\"\nbatch_size = 256\n[sweep]\ntemperature = [0.0, 0.7]\nmax_tokens = [4, 8]\n"),
    )?;
    let rt = tokio::runtime::Runtime::new()?;
    rt.block_on(async {
        let store = Store::open(db).await?;
        let options = RunOptions {
            judges: Some(Arc::new(Loader)),
            ..RunOptions::default()
        };
        let run = judgelab_engine::run_experiment(&store, &experiment, options, &mut |_| {}).await;
        store.close().await;
        anyhow::Ok(run?)
    })
}
