//! Row types of the store and their mapping from SQLite rows.

use judgelab_core::{Item, Label, Task, TrialParams};
use serde_json::Value;
use sqlx::sqlite::SqliteRow;
use sqlx::Row;

/// An imported dataset, without its items.
#[derive(Debug, Clone, PartialEq)]
pub struct DatasetInfo {
    pub id: i64,
    pub name: String,
    pub task: Task,
    pub content_hash: String,
    pub source: String,
    pub n_items: usize,
}

/// An experiment about to be created.
#[derive(Debug, Clone)]
pub struct NewExperiment {
    pub name: String,
    pub content_hash: String,
    /// The experiment file as written.
    pub spec: String,
    pub dataset_id: i64,
    /// Item ids of the few-shot pool and of the items judged.
    pub pool: Vec<String>,
    pub judged: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentRow {
    pub id: i64,
    pub name: String,
    pub content_hash: String,
    pub spec: String,
    pub dataset_id: i64,
    pub pool: Vec<String>,
    pub judged: Vec<String>,
    pub created_at: String,
}

/// A trial about to be created.
#[derive(Debug, Clone)]
pub struct NewTrial {
    pub params: TrialParams,
    pub template_hash: String,
    pub model_path: String,
    pub model_sha256: Option<String>,
    /// Item ids of its few-shot examples, in the order shown.
    pub examples: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TrialRow {
    pub id: i64,
    pub experiment_id: i64,
    pub trial_idx: usize,
    pub params: TrialParams,
    pub template_hash: String,
    pub model_path: String,
    pub model_sha256: Option<String>,
    pub examples: Vec<String>,
}

/// One verdict: everything needed to reproduce and audit it.
#[derive(Debug, Clone, PartialEq)]
pub struct VerdictRow {
    pub trial_id: i64,
    pub item_id: String,
    pub repeat: u32,
    /// Answer B was shown first; `verdict` is in the dataset's frame all the same.
    pub swapped: bool,
    pub seed: u32,
    pub prompt_hash: String,
    pub raw_output: Option<String>,
    /// Canonical label text; `None` on a parse failure or a failed call.
    pub verdict: Option<String>,
    pub failure_kind: Option<String>,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub latency_ms: Option<f64>,
    pub ttft_ms: Option<f64>,
    /// The call failed with this message.
    pub error: Option<String>,
    /// What the call cost, where the model has a price.
    pub cost_usd: Option<f64>,
    pub cached_tokens: Option<u32>,
    pub attempts: u32,
    /// Per-token log-probabilities (JSON), where asked for.
    pub logprobs: Option<String>,
    /// Answered from the response cache: no call was made.
    pub cache_hit: bool,
    /// Drawn from the exact first-token distribution below, not sampled by generating.
    pub exact: bool,
    /// Exact rows: `{label: probability, …, "failed": probability}` as JSON, in the
    /// dataset's frame.
    pub distribution: Option<String>,
}

pub(crate) fn item(r: &SqliteRow) -> Result<Item, String> {
    let label: String = r.get("human_label");
    Ok(Item {
        id: r.get("item_id"),
        question: r.get("question"),
        answer_a: r.get("answer_a"),
        answer_b: r.get("answer_b"),
        answer: r.get("answer"),
        reference: r.get("reference"),
        human_label: Label::from_text(&label).ok_or_else(|| format!("bad label {label:?}"))?,
        meta: serde_json::from_str::<Value>(r.get::<&str, _>("meta")).map_err(|e| e.to_string())?,
    })
}

fn ids(r: &SqliteRow, column: &str) -> Result<Vec<String>, String> {
    serde_json::from_str(r.get::<&str, _>(column)).map_err(|e| format!("{column}: {e}"))
}

pub(crate) fn experiment(r: &SqliteRow) -> Result<ExperimentRow, String> {
    Ok(ExperimentRow {
        id: r.get("id"),
        name: r.get("name"),
        content_hash: r.get("content_hash"),
        spec: r.get("spec"),
        dataset_id: r.get("dataset_id"),
        pool: ids(r, "pool")?,
        judged: ids(r, "judged")?,
        created_at: r.get("created_at"),
    })
}

pub(crate) fn trial(r: &SqliteRow) -> Result<TrialRow, String> {
    Ok(TrialRow {
        id: r.get("id"),
        experiment_id: r.get("experiment_id"),
        trial_idx: r.get::<i64, _>("trial_idx") as usize,
        params: serde_json::from_str(r.get::<&str, _>("params"))
            .map_err(|e| format!("params: {e}"))?,
        template_hash: r.get("template_hash"),
        model_path: r.get("model_path"),
        model_sha256: r.get("model_sha256"),
        examples: ids(r, "examples")?,
    })
}

/// A trial's verdicts, read on a connection of its own (read-only) that steps SQLite
/// directly: see the note on `rusqlite` in this crate's Cargo.toml.
pub(crate) fn read_verdicts(
    path: &std::path::Path,
    trial_id: i64,
) -> rusqlite::Result<Vec<VerdictRow>> {
    use rusqlite::OpenFlags;
    let conn = rusqlite::Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    // Mapped, the file's pages are read in place rather than copied into SQLite's cache.
    conn.pragma_update(None, "mmap_size", 1i64 << 30)?;
    let mut statement = conn.prepare(
        "SELECT trial_id, item_id, repeat, swapped, seed, prompt_hash, raw_output, verdict,
                failure_kind, prompt_tokens, completion_tokens, latency_ms, ttft_ms, error,
                cost_usd, cached_tokens, attempts, logprobs, cache_hit, exact, distribution
         FROM verdicts WHERE trial_id = ? ORDER BY item_id, repeat, swapped",
    )?;
    let rows = statement.query_map([trial_id], |r| {
        Ok(VerdictRow {
            trial_id: r.get(0)?,
            item_id: r.get(1)?,
            repeat: r.get::<_, i64>(2)? as u32,
            swapped: r.get(3)?,
            seed: r.get::<_, i64>(4)? as u32,
            prompt_hash: r.get(5)?,
            raw_output: r.get(6)?,
            verdict: r.get(7)?,
            failure_kind: r.get(8)?,
            prompt_tokens: r.get::<_, i64>(9)? as u32,
            completion_tokens: r.get::<_, i64>(10)? as u32,
            latency_ms: r.get(11)?,
            ttft_ms: r.get(12)?,
            error: r.get(13)?,
            cost_usd: r.get(14)?,
            cached_tokens: r.get::<_, Option<i64>>(15)?.map(|n| n as u32),
            attempts: r.get::<_, i64>(16)? as u32,
            logprobs: r.get(17)?,
            cache_hit: r.get(18)?,
            exact: r.get(19)?,
            distribution: r.get(20)?,
        })
    })?;
    rows.collect()
}
