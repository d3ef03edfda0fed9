//! `judgelab bench --peer URL`: the zero-shot temperature × top_p grid judged in one run
//! two ways, Judgelab's and a one-call-per-cell tool's.
//!
//! The workload: LLMBar Natural (24 items by default), the pairwise template, no few-shot
//! example, temperature {0, 0.3, 0.7, 1.0} × top_p {0.8, 0.9, 1.0}, one-token verdicts.
//!
//! - **Judgelab**: `run_experiment` with exact verdicts on the local model, into a fresh
//!   SQLite file, model loading included.
//! - **Peer**: an OpenAI-compatible server of the same model file (llama.cpp's server, or
//!   llama-cpp-python's), sent one chat completion per (trial, item) as promptfoo sends
//!   them: `concurrency` requests in flight (promptfoo's default is 4), each with its
//!   trial's temperature, top_p and max_tokens. Everything favours the peer: the server
//!   has loaded its model before the clock starts and answers one untimed request first;
//!   the twelve trials of an item are sent one after another, so the server's prompt
//!   cache serves all but the first; nothing is stored.
//! - **Floors** (`floor`), measured between the two: the grid's least work (the prompts'
//!   shared prefix once, each item's suffix once) at the speed of a plain llama.cpp loop,
//!   over Judgelab's build and over llama.cpp built for this machine. Judgelab decodes
//!   exactly that work; the server's prompt cache lets the peer decode about as little
//!   (its first call of an item reuses the shared prefix of the item before), so the two
//!   ways differ by how fast each decodes it and by what each call costs beyond it, and
//!   their ratio to the floor says which.
//!
//! - **Judgelab, remote exact**: the same grid through the peer's server, as a remote
//!   judge with exact verdicts: one call per item, with the first token's `top_logprobs`,
//!   serves the twelve trials, where the peer makes twelve.
//!
//! Greedy verdicts (temperature 0) are compared: both ways judge the same prompts, so they
//! agree except where two builds of llama.cpp round differently on a near tie.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use judgelab_core::verdict;
use judgelab_core::Judge;
use judgelab_openai::{Endpoint, OpenAiJudge};
use serde::Serialize;

use super::{Floors, Grid, Stored, Way};
use crate::EngineError;

/// What to compare with.
#[derive(Debug, Clone)]
pub struct PeerOptions {
    /// The LLMBar Natural file.
    pub dataset: PathBuf,
    pub items: usize,
    /// The peer server, up to `/v1`.
    pub base_url: String,
    /// The model name the server knows (its alias of the default model).
    pub model: String,
    /// CPU threads of Judgelab's local model (default: all cores); give the server as many.
    pub threads: Option<usize>,
    /// Requests in flight to the peer.
    pub concurrency: usize,
    /// `judgelab-floor`, llama.cpp built for this machine, for the hardware's floor.
    pub floor_tool: Option<PathBuf>,
}

/// The comparison; its JSON is `judgelab bench --peer URL --json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PeerReport {
    pub judgelab: Way,
    /// `prompt_tokens_decoded` is what the server says each prompt was (its usage), which
    /// counts the tokens its prompt cache served.
    pub peer: Way,
    /// Judgelab judging the same grid through the peer server, as a remote judge with
    /// exact verdicts (`exact = true`: nothing asked first): one call per item (its
    /// `model_calls`), the grid read from each call's `top_logprobs`.
    pub remote_exact: Way,
    /// Judgelab's wall time over the peer's.
    pub ratio: f64,
    pub peer_concurrency: usize,
    /// Greedy (trial, item) verdicts compared between the two ways, and how many agree.
    pub greedy_compared: usize,
    pub greedy_agree: usize,
    pub n_items: usize,
    pub n_trials: usize,
    /// The floors of the grid's prompts, measured between the two ways: what the
    /// hardware needs for the work both ways must do.
    #[serde(flatten)]
    pub floors: Floors,
}

/// Progress: which phase, and requests answered by the peer.
#[derive(Debug, Clone, PartialEq)]
pub enum PeerEvent {
    Phase(&'static str),
    Peer { done: usize, total: usize },
}

/// Runs the comparison in `dir` (a fresh database and experiment file go there).
pub async fn peer(
    options: &PeerOptions,
    dir: &Path,
    on_event: &mut (dyn FnMut(PeerEvent) + Send),
) -> Result<PeerReport, EngineError> {
    on_event(PeerEvent::Phase("judgelab"));
    let (store, file, judgelab) = grid(options, None).planned(dir, options.threads).await?;
    let sweep = Stored::load(&store, &file).await?;
    let items = sweep.items();
    let floors = sweep
        .floors(
            options.threads,
            options.floor_tool.as_deref(),
            dir,
            &mut |phase| on_event(PeerEvent::Phase(phase)),
        )
        .await?;
    // Item-major, so that the server's prompt cache serves an item's later trials.
    let mut cells = Vec::new();
    let mut requests = Vec::new();
    for &item in &items {
        for trial in &sweep.trials {
            let mut request = sweep.request(trial, item)?;
            request.key = requests.len();
            requests.push(request);
            cells.push((trial, item));
        }
    }
    let (responses, wall_s) = ask_peer(options, requests, on_event).await?;
    let failed = |e: String| EngineError::Judge(format!("the peer at {}: {e}", options.base_url));
    let mut peer = Way {
        wall_s,
        prompt_tokens_decoded: 0,
        model_calls: 0,
    };
    // (trial id, item id) → Judgelab's greedy verdict.
    let mut ours = HashMap::new();
    for trial in sweep.trials.iter().filter(|t| t.params.temperature == 0.0) {
        for v in store.verdicts(trial.id).await? {
            let label = v.outcome.label();
            ours.insert((trial.id, v.item_id), label);
        }
    }
    let r = &sweep.r;
    let (mut greedy_compared, mut greedy_agree) = (0, 0);
    for response in responses {
        let completion = response.result.map_err(|e| failed(e.message))?;
        peer.model_calls += 1;
        peer.prompt_tokens_decoded += u64::from(completion.prompt_tokens);
        let (trial, item) = cells[response.key];
        if let Some(our) = ours.get(&(trial.id, item.id.clone())) {
            let theirs = verdict::parse(r.output, r.dataset.task, &completion.text, false);
            greedy_compared += 1;
            greedy_agree += usize::from(theirs.label() == *our);
        }
    }
    store.close().await;

    on_event(PeerEvent::Phase("judgelab, remote exact"));
    let remote_exact = remote_exact(options, dir).await?;
    Ok(PeerReport {
        judgelab,
        peer,
        remote_exact,
        ratio: judgelab.wall_s / peer.wall_s.max(1e-9),
        peer_concurrency: options.concurrency.max(1),
        greedy_compared,
        greedy_agree,
        n_items: items.len(),
        n_trials: sweep.trials.len(),
        floors,
    })
}

/// The zero-shot grid, on the local default model or through a server (`remote`).
fn grid<'a>(options: &'a PeerOptions, remote: Option<(&'a str, usize)>) -> Grid<'a> {
    Grid {
        name: if remote.is_some() {
            "bench-peer-remote"
        } else {
            "bench-peer"
        },
        dataset: &options.dataset,
        model: match remote {
            Some(_) => options.model.clone(),
            None => "default".into(),
        },
        few_shot: 0,
        items: options.items,
        remote,
    }
}

/// Judgelab's run of the grid through the peer's server, as a remote judge with exact
/// verdicts.
async fn remote_exact(options: &PeerOptions, dir: &Path) -> Result<Way, EngineError> {
    let remote = Some((options.base_url.as_str(), options.concurrency.max(1)));
    let (store, _, way) = grid(options, remote).planned(dir, options.threads).await?;
    store.close().await;
    Ok(way)
}

/// Sends `requests` to the peer as a one-call-per-cell tool does, `concurrency` in flight,
/// after one untimed request: the responses and the seconds they took.
async fn ask_peer(
    options: &PeerOptions,
    requests: Vec<judgelab_core::JudgeRequest>,
    on_event: &mut (dyn FnMut(PeerEvent) + Send),
) -> Result<(Vec<judgelab_core::JudgeResponse>, f64), EngineError> {
    let mut endpoint = Endpoint::new("peer", &options.base_url, &options.model);
    endpoint.stream = false;
    endpoint.concurrency = options.concurrency.max(1);
    endpoint.timeout = Duration::from_secs(120);
    endpoint.max_attempts = 1;
    let judge =
        Arc::new(OpenAiJudge::new(endpoint).map_err(|e| EngineError::Judge(e.to_string()))?);

    on_event(PeerEvent::Phase("peer"));
    let warm_up = requests[0].clone();
    let total = requests.len();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let worker = tokio::task::spawn_blocking({
        let judge = Arc::clone(&judge);
        move || {
            let cancel = Arc::new(AtomicBool::new(false));
            let mut first = Ok(());
            judge.judge_batch(vec![warm_up], &cancel, &mut |r| {
                first = r.result.map(|_| ()).map_err(|e| e.message);
            });
            first?;
            let start = Instant::now();
            judge.judge_batch(requests, &cancel, &mut |r| {
                let _ = tx.send(r);
            });
            Ok::<f64, String>(start.elapsed().as_secs_f64())
        }
    });
    let mut responses = Vec::with_capacity(total);
    // The channel ends when the judge's thread has sent every response.
    while let Some(response) = rx.recv().await {
        responses.push(response);
        on_event(PeerEvent::Peer {
            done: responses.len(),
            total,
        });
    }
    let failed = |e: String| EngineError::Judge(format!("the peer at {}: {e}", options.base_url));
    let wall_s = worker
        .await
        .map_err(|e| EngineError::Judge(format!("the peer loop panicked: {e}")))?
        .map_err(failed)?;
    Ok((responses, wall_s))
}
