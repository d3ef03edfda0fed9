//! Benchmark: a run of 100,000 verdicts opens in its results view in under a second.
//!
//! It stores a real experiment (4 trials × 25,000 LLMBar-shaped items, judged through the
//! engine by a scripted judge) in a fresh SQLite file, then times what the Results screen
//! asks for, the way the app asks: first the view without intervals (trials table, fronts,
//! recommendation, both Pareto SVGs), which opens the screen, then with 1,000-resample
//! intervals, which fill in after. Run it with `cargo xtask bench`.

use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use judgelab_core::judge::{Completion, ModelIdentity, StopReason};
use judgelab_core::metrics::{BootstrapSpec, Quality};
use judgelab_core::{Judge, JudgeRequest, JudgeResponse, Message};
use judgelab_engine::{EngineError, JudgeLoader, ModelSpec, RunOptions};
use judgelab_store::Store;

const N_ITEMS: usize = 25_000;
const BUDGET_MS: f64 = 1000.0;

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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> anyhow::Result<()> {
    let rt = tokio::runtime::Runtime::new()?;
    let tmp = tempfile::tempdir()?;
    let data = tmp.path().join("items.jsonl");
    let mut out = std::io::BufWriter::new(std::fs::File::create(&data)?);
    for i in 0..N_ITEMS {
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
    let experiment = tmp.path().join("bench.toml");
    std::fs::write(
        &experiment,
        "name = \"bench-100k\"\ndataset = \"items.jsonl\"\n[judge]\nmodel = \"default\"\ntemplate = \"pairwise\"\nbatch_size = 256\n[sweep]\ntemperature = [0.0, 0.7]\nmax_tokens = [4, 8]\n",
    )?;
    // `JUDGELAB_BENCH_DB` keeps the stored run between benchmark runs (it takes a while).
    let db = std::env::var_os("JUDGELAB_BENCH_DB")
        .map_or_else(|| tmp.path().join("bench.sqlite"), std::path::PathBuf::from);
    let t = Instant::now();
    let run = rt.block_on(async {
        let store = Store::open(&db).await?;
        let options = RunOptions {
            judges: Some(Arc::new(Loader)),
            ..RunOptions::default()
        };
        let run = judgelab_engine::run_experiment(&store, &experiment, options, &mut |_| {}).await;
        store.close().await;
        anyhow::Ok(run?)
    })?;
    eprintln!(
        "{} verdicts of {} trials stored ({} now) in {:.1} s",
        run.total,
        run.n_trials,
        run.judged_now,
        t.elapsed().as_secs_f64()
    );

    let view = |resamples: u32| -> anyhow::Result<f64> {
        rt.block_on(async {
            // As the app does on opening an experiment: a fresh connection, nothing cached.
            let store = Store::open(&db).await?;
            let t = Instant::now();
            let spec = BootstrapSpec {
                resamples,
                ..BootstrapSpec::default()
            };
            let summary = judgelab_engine::summarize(&store, "bench-100k", &spec).await?;
            let summarized = t.elapsed().as_secs_f64() * 1000.0;
            let results = judgelab_app::view::results(&summary, Quality::Kappa)
                .map_err(|e| anyhow::anyhow!("{}", e.message))?;
            let ms = t.elapsed().as_secs_f64() * 1000.0;
            eprintln!(
                "  {resamples} resamples: summary {summarized:.0} ms, view {:.0} ms",
                ms - summarized
            );
            assert_eq!(results.trials.len(), 4);
            assert_eq!(results.pareto_cost.hotspots.len(), 4);
            store.close().await;
            anyhow::Ok(ms)
        })
    };
    if std::env::var_os("JUDGELAB_BENCH_PARTS").is_some() {
        rt.block_on(async {
            let store = Store::open(&db).await?;
            let e = store
                .experiment_by_name("bench-100k")
                .await?
                .expect("stored");
            let t = Instant::now();
            let info = store.datasets().await?.remove(0);
            let _d = store.load_dataset(&info).await?;
            eprintln!(
                "  load_dataset {:.0} ms",
                t.elapsed().as_secs_f64() * 1000.0
            );
            let t = Instant::now();
            for trial in store.trials(e.id).await? {
                let _v = store.verdicts(trial.id).await?;
            }
            eprintln!("  verdicts {:.0} ms", t.elapsed().as_secs_f64() * 1000.0);
            anyhow::Ok(())
        })?;
    }
    let open = median((0..5).map(|_| view(0)).collect::<anyhow::Result<_>>()?);
    let full = median((0..3).map(|_| view(1000)).collect::<anyhow::Result<_>>()?);
    println!(
        "results view of {} verdicts: {open:.0} ms to open (no intervals), {full:.0} ms with 1,000-resample intervals ({:.1}× as long)",
        run.total,
        full / open
    );
    let verdict = if open < BUDGET_MS { "within" } else { "OVER" };
    println!("opening is {verdict} the {BUDGET_MS:.0} ms budget");
    if open >= BUDGET_MS {
        std::process::exit(1);
    }
    Ok(())
}
