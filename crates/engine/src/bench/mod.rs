//! `judgelab bench`: one sweep judged two ways in one process, against the floor of
//! Judgelab's own build and the floor of the hardware (`floor`); and, with a peer server,
//! the zero-shot grid judged as a one-call-per-cell tool does it (`peer`).
//!
//! The workload: LLMBar Natural (12 items by default), the pairwise template, two few-shot
//! examples, temperature {0, 0.3, 0.7, 1.0} × top_p {0.8, 0.9, 1.0}, one-token verdicts.
//!
//! - **Naive**: a hand-written loop, as promptfoo or a script would do it: every (trial,
//!   item) rendered and decoded from scratch by a judge that shares nothing (one sequence,
//!   no kept prefix), one call at a time. Nothing is stored, which only flatters it.
//! - **Planned**: `run_experiment` with exact verdicts, into a fresh SQLite file: one pass
//!   per item for the whole grid, the few-shot prefix decoded once, sequences batched.
//! - **Floors** (`floor`): a plain llama.cpp loop decodes the same prompts whole, over
//!   Judgelab's build and over llama.cpp built for this machine (when a `floor_tool` is
//!   given), measured right after the planned run and before the naive one. The ratio
//!   that counts is against the hardware's: `floor_wall_s` is the hardware's where it was
//!   measured, else the build's (`floor` says which). It is a strict floor: a suffix's
//!   tokens come after the prefix and attend over it, so they cost more than a whole
//!   prompt's average token.
//!
//! Greedy verdicts (temperature 0) of the two ways are compared. Decoding a suffix on a
//! copied prefix, or several sequences in one batch, changes the floating-point summation
//! order, so a verdict may flip where its two best readings are close: a flip counts as
//! a near tie when the naive pass's best logits of the two leading verdicts (each label,
//! and "no verdict" for the best other token) are within [`NEAR_TIE`].

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Instant;

use judgelab_core::verdict::{self, Verdict};
use judgelab_core::{Item, Judge, JudgeRequest, Label, Sampling};
use judgelab_llama::{LlamaJudge, LlamaOptions};
use judgelab_store::Store;
use serde::Serialize;

use crate::calls::seed;
use crate::prompt::PromptInput;
use crate::resolve::resolve;
use crate::run::{run_experiment, RunOptions};
use crate::EngineError;

mod floor;
pub mod latency;
pub mod peer;
pub mod race;
pub mod saturation;

pub use floor::Floors;

/// Logit gap under which a flipped greedy verdict is a near tie.
pub const NEAR_TIE: f32 = 0.25;

/// What to bench.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    /// The LLMBar Natural file.
    pub dataset: PathBuf,
    pub items: usize,
    /// The GGUF file; default: the default model.
    pub model: Option<PathBuf>,
    pub threads: Option<usize>,
    /// `judgelab-floor`, llama.cpp built for this machine (`cargo xtask bench` builds it).
    pub floor_tool: Option<PathBuf>,
}

/// What one way cost.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Way {
    pub wall_s: f64,
    pub prompt_tokens_decoded: u64,
    pub model_calls: usize,
}

/// The comparison; its JSON is `judgelab bench --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BenchReport {
    pub naive: Way,
    pub planned: Way,
    /// Naive wall time over planned.
    pub speedup: f64,
    /// Greedy (trial, item) verdicts compared, and how many differ.
    pub greedy_compared: usize,
    pub greedy_flips: usize,
    pub greedy_flips_not_near_tie: usize,
    /// Greedy verdicts whose two leading readings are within [`NEAR_TIE`].
    pub near_ties: usize,
    /// The floors of the planned run's prompts, measured right after it.
    #[serde(flatten)]
    pub floors: Floors,
    pub n_items: usize,
    pub n_trials: usize,
}

/// Progress: which phase, and calls done of the naive way.
#[derive(Debug, Clone, PartialEq)]
pub enum BenchEvent {
    Phase(&'static str),
    Naive { done: usize, total: usize },
}

/// The benchmarks' sweep of LLMBar Natural: the pairwise template, temperature
/// {0, 0.3, 0.7, 1.0} × top_p {0.8, 0.9, 1.0}, one-token exact verdicts.
struct Grid<'a> {
    name: &'a str,
    dataset: &'a Path,
    model: String,
    few_shot: usize,
    items: usize,
    /// A server of the model (its `base_url` and the `concurrency` to keep in flight) that
    /// judges it remotely, exact from its log-probabilities; none: the local model.
    remote: Option<(&'a str, usize)>,
}

impl Grid<'_> {
    fn toml(&self) -> String {
        format!(
            r#"name = {name:?}
dataset = {dataset:?}

[judge]
model = {model:?}
template = "pairwise"
exact = true{remote}

[sweep]
temperature = [0.0, 0.3, 0.7, 1.0]
top_p = [0.8, 0.9, 1.0]
max_tokens = 1
few_shot = {few_shot}
seed = 42

[limits]
items = {items}
"#,
            name = self.name,
            dataset = self.dataset.display().to_string(),
            model = self.model,
            few_shot = self.few_shot,
            items = self.items,
            remote = self.remote.map_or(String::new(), |(base_url, concurrency)| format!(
                "\nbackend = \"openai\"\nbase_url = {base_url:?}\nstream = false\nconcurrency = {concurrency}"
            )),
        )
    }

    /// Writes the experiment into `dir` with a fresh database beside it, and times
    /// `run_experiment` on it: the planned way.
    async fn planned(
        &self,
        dir: &Path,
        threads: Option<usize>,
    ) -> Result<(Store, PathBuf, Way), EngineError> {
        let store = Store::open(&dir.join(format!("{}.sqlite", self.name))).await?;
        let file = dir.join(format!("{}.toml", self.name));
        std::fs::write(&file, self.toml()).map_err(|source| EngineError::Io {
            path: file.display().to_string(),
            source,
        })?;
        let start = Instant::now();
        // The benchmark times the sweep itself: no calls timed alone after it.
        let run_options = RunOptions {
            threads,
            timed_calls: 0,
            ..RunOptions::default()
        };
        let summary = run_experiment(&store, &file, run_options, &mut |_| {}).await?;
        let way = Way {
            wall_s: start.elapsed().as_secs_f64(),
            prompt_tokens_decoded: summary.prompt_tokens_decoded,
            model_calls: summary.model_calls,
        };
        Ok((store, file, way))
    }
}

/// Runs the benchmark in `dir` (a fresh database and experiment file go there).
pub async fn bench(
    options: &BenchOptions,
    dir: &Path,
    on_event: &mut (dyn FnMut(BenchEvent) + Send),
) -> Result<BenchReport, EngineError> {
    on_event(BenchEvent::Phase("planned"));
    let grid = Grid {
        name: "bench",
        dataset: &options.dataset,
        model: options
            .model
            .as_ref()
            .map_or("default".to_string(), |p| p.display().to_string()),
        few_shot: 2,
        items: options.items,
        remote: None,
    };
    let (store, file, planned) = grid.planned(dir, options.threads).await?;

    let sweep = Stored::load(&store, &file).await?;
    let (r, trials, items) = (&sweep.r, &sweep.trials, sweep.items());
    let model_path = r.judges[0].path.clone();

    // The floors next, while the host is as it was for the planned run.
    let floors = sweep
        .floors(
            options.threads,
            options.floor_tool.as_deref(),
            dir,
            &mut |phase| on_event(BenchEvent::Phase(phase)),
        )
        .await?;

    // The same trials, items and examples, judged the naive way.
    on_event(BenchEvent::Phase("naive"));
    let start = Instant::now();
    let judge = LlamaJudge::load(LlamaOptions {
        threads: options.threads,
        sha256: Some(r.judges[0].sha256.clone()),
        parallel: 1,
        share_prefix: false,
        ..LlamaOptions::new("default", &model_path)
    })?;
    let vocabulary = judge.vocabulary().expect("a llama judge has a vocabulary");
    let token_verdicts = verdict::token_verdicts(r.output, r.dataset.task, &vocabulary);
    let cancel = Arc::new(AtomicBool::new(false));
    let total = trials.len() * items.len();
    let mut naive = Way {
        wall_s: 0.0,
        prompt_tokens_decoded: 0,
        model_calls: 0,
    };
    // (trial id, item id) → (verdict, near tie) of greedy calls.
    let mut greedy: HashMap<(i64, &str), (Option<Label>, bool)> = HashMap::new();
    for trial in trials {
        let p = &trial.params;
        for &item in &items {
            let mut request = sweep.request(trial, item)?;
            request.logits = p.temperature == 0.0;
            let mut response = None;
            judge.judge_batch(vec![request], &cancel, &mut |r| response = Some(r));
            let completion = response
                .ok_or_else(|| EngineError::Judge("no response".into()))?
                .result
                .map_err(|e| EngineError::Judge(e.message))?;
            naive.model_calls += 1;
            naive.prompt_tokens_decoded += u64::from(completion.prompt_tokens);
            if let Some(logits) = &completion.logits {
                let v = verdict::parse(r.output, r.dataset.task, &completion.text, false);
                greedy.insert(
                    (trial.id, item.id.as_str()),
                    (v.label(), near_tie(logits, &token_verdicts)),
                );
            }
            on_event(BenchEvent::Naive {
                done: naive.model_calls,
                total,
            });
        }
    }
    naive.wall_s = start.elapsed().as_secs_f64();
    drop(judge);

    let mut greedy_compared = 0;
    let mut greedy_flips = 0;
    let mut greedy_flips_not_near_tie = 0;
    let mut near_ties = 0;
    for trial in trials.iter().filter(|t| t.params.temperature == 0.0) {
        for v in store.verdicts(trial.id).await? {
            let Some((naive_label, near)) = greedy.get(&(trial.id, v.item_id.as_str())) else {
                continue;
            };
            greedy_compared += 1;
            near_ties += usize::from(*near);
            let planned_label = v.outcome.label();
            if planned_label != *naive_label {
                greedy_flips += 1;
                greedy_flips_not_near_tie += usize::from(!near);
            }
        }
    }

    store.close().await;
    Ok(BenchReport {
        naive,
        planned,
        speedup: naive.wall_s / planned.wall_s.max(1e-9),
        greedy_compared,
        greedy_flips,
        greedy_flips_not_near_tie,
        near_ties,
        floors,
        n_items: items.len(),
        n_trials: trials.len(),
    })
}

/// A bench experiment as stored: its resolution, its trials and the items it judged, and
/// the request of each (trial, item) as the engine renders it.
pub(crate) struct Stored {
    pub r: crate::resolve::Resolved,
    pub trials: Vec<judgelab_store::TrialRow>,
    judged: Vec<String>,
}

impl Stored {
    pub(crate) async fn load(store: &Store, file: &Path) -> Result<Stored, EngineError> {
        let r = resolve(store, file).await?;
        let name = r.experiment.name.clone();
        let row = store
            .experiment_by_name(&name)
            .await?
            .ok_or(EngineError::UnknownExperiment(name))?;
        let trials = store.trials(row.id).await?;
        Ok(Stored {
            r,
            trials,
            judged: row.judged,
        })
    }

    fn item(&self, id: &str) -> &Item {
        self.r
            .dataset
            .items
            .iter()
            .chain(&self.r.card_examples)
            .find(|i| i.id == id)
            .expect("a stored experiment judges items of its dataset, or its card's examples")
    }

    /// The floors of the judged items' prompts (the first trial's, in the first answer
    /// order), with the experiment's model.
    pub(crate) async fn floors(
        &self,
        threads: Option<usize>,
        tool: Option<&Path>,
        dir: &Path,
        on_phase: &mut (dyn FnMut(&'static str) + Send),
    ) -> Result<Floors, EngineError> {
        let prompts = self
            .items()
            .into_iter()
            .map(|item| self.request(&self.trials[0], item).map(|r| r.messages))
            .collect::<Result<Vec<_>, _>>()?;
        floor::measure(
            &self.r.judges[0].path,
            prompts,
            threads,
            tool,
            dir,
            on_phase,
        )
        .await
    }

    /// The judged items, in the experiment's order.
    pub(crate) fn items(&self) -> Vec<&Item> {
        self.judged.iter().map(|id| self.item(id)).collect()
    }

    /// The call of `trial` on `item` (first answer order, first repeat) as the engine
    /// renders it, with the trial's examples and sampling; no logits, no grammar.
    pub(crate) fn request(
        &self,
        trial: &judgelab_store::TrialRow,
        item: &Item,
    ) -> Result<JudgeRequest, EngineError> {
        let examples: Vec<&Item> = trial.examples.iter().map(|id| self.item(id)).collect();
        let p = &trial.params;
        let messages = PromptInput {
            task: self.r.dataset.task,
            output: self.r.output,
            allow_tie: self.r.allow_tie(),
            template: &self.r.templates[0].1,
            examples: &examples,
            rubric: crate::prompt::Asking::of(p.style, &self.r.rubric),
        }
        .render(item.text(), false)?;
        Ok(JudgeRequest {
            key: 0,
            messages,
            sampling: Sampling {
                temperature: p.temperature,
                top_p: p.top_p,
                max_tokens: p.max_tokens,
                seed: seed(&self.r, &item.id, 0, false),
            },
            logits: false,
            grammar: None,
            uncached: false,
        })
    }
}

/// Whether the two leading readings of a pass — each label's best token, and the best
/// token that is no verdict — are within [`NEAR_TIE`] of each other.
fn near_tie(logits: &[f32], token_verdicts: &[Verdict]) -> bool {
    let mut best: Vec<(Option<Label>, f32)> = Vec::new();
    for (token, &logit) in logits.iter().enumerate() {
        let label = token_verdicts.get(token).and_then(Verdict::label);
        match best.iter_mut().find(|(l, _)| *l == label) {
            Some((_, b)) => *b = b.max(logit),
            None => best.push((label, logit)),
        }
    }
    best.sort_by(|a, b| b.1.total_cmp(&a.1));
    best.len() >= 2 && best[0].1 - best[1].1 < NEAR_TIE
}
