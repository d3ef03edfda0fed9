//! Row types of the store and their mapping from SQLite rows.

use std::collections::BTreeMap;

use judgelab_core::metrics::TimedRequest;
use judgelab_core::results::{Outcome, VerdictRecord};
use judgelab_core::sampling::VerdictDistribution;
use judgelab_core::{Experiment, FailureKind, Item, Label, Task, TrialParams, Verdict};
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
    /// Items with a human label, and those without (kept apart: [`judgelab_core::Dataset::unlabelled`]).
    pub n_items: usize,
    pub n_unlabelled: usize,
    /// Items (with a label or without) that carry a reference answer: what a
    /// reference-guided template grades against.
    pub n_with_reference: usize,
    /// The criteria its items carry labels on beside their label (most datasets: none).
    pub criteria: Vec<judgelab_core::dataset::Criterion>,
    /// The mapping its file was read through, as a mapping file (TOML); none: the file was
    /// in Judgelab's own fields.
    pub mapping: Option<String>,
}

/// An experiment about to be created.
#[derive(Debug, Clone)]
pub struct NewExperiment {
    pub name: String,
    pub content_hash: String,
    /// The experiment file as written.
    pub spec: String,
    pub dataset_id: i64,
    /// Item ids of the few-shot pool and of the items every trial judges (the dev split).
    pub pool: Vec<String>,
    pub judged: Vec<String>,
    /// The test split's item ids; empty without one.
    pub test: Vec<String>,
    /// What the judge card it runs defines; none for most.
    pub card: Option<judgelab_core::card::Definition>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExperimentRow {
    pub id: i64,
    pub name: String,
    pub content_hash: String,
    /// The experiment file as written, and the same parsed.
    pub spec: String,
    pub experiment: Experiment,
    pub dataset_id: i64,
    pub pool: Vec<String>,
    /// The items every trial judges: the dev split, where there is a test split.
    pub judged: Vec<String>,
    /// The test split, judged only by the trials the selection keeps; empty without one.
    pub test: Vec<String>,
    /// The trials that judge the test split are chosen ([`TrialRow::test_role`]).
    pub selected: bool,
    /// Rounds of a race decided so far.
    pub race_rounds: u32,
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
    /// Its judge's identity ([`judgelab_core::card::Definition::identity`]).
    pub judge_identity: String,
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
    /// Its judge's identity; none for trials stored before identities were.
    pub judge_identity: Option<String>,
    /// Where its calls were computed (a local judge's devices, `; `-joined where a resumed
    /// run was on another); none for a remote judge or a trial stored before devices were.
    pub device: Option<String>,
    /// Why it judges the test split (`pick`, `indistinguishable`, `best 3`); none: it does
    /// not, or nothing is chosen yet.
    pub test_role: Option<String>,
}

/// An item row, and its label where it has one.
/// An item's columns as stored.
pub(crate) struct ItemColumns {
    item_id: String,
    question: String,
    answer_a: Option<String>,
    answer_b: Option<String>,
    answer: Option<String>,
    reference: Option<String>,
    human_label: Option<String>,
    human_labels: Option<String>,
    meta: String,
}

/// A dataset's items' columns in order, read on a connection of its own (read-only) that
/// steps SQLite directly, as [`read_verdicts`] does: a quarter of a million items took
/// seconds through `sqlx`'s rows.
pub(crate) fn read_items(
    path: &std::path::Path,
    dataset_id: i64,
) -> rusqlite::Result<Vec<ItemColumns>> {
    let conn = read_only(path)?;
    let mut statement = conn.prepare(
        "SELECT item_id, question, answer_a, answer_b, answer, reference, human_label,
                human_labels, meta
         FROM items WHERE dataset_id = ? ORDER BY item_idx",
    )?;
    let rows = statement.query_map([dataset_id], |r| {
        Ok(ItemColumns {
            item_id: r.get(0)?,
            question: r.get(1)?,
            answer_a: r.get(2)?,
            answer_b: r.get(3)?,
            answer: r.get(4)?,
            reference: r.get(5)?,
            human_label: r.get(6)?,
            human_labels: r.get(7)?,
            meta: r.get(8)?,
        })
    })?;
    rows.collect()
}

/// A read-only connection to the database at `path` that maps its pages.
fn read_only(path: &std::path::Path) -> rusqlite::Result<rusqlite::Connection> {
    use rusqlite::OpenFlags;
    let conn = rusqlite::Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(10))?;
    // Mapped, the file's pages are read in place rather than copied into SQLite's cache.
    conn.pragma_update(None, "mmap_size", 1i64 << 30)?;
    Ok(conn)
}

pub(crate) fn item(c: ItemColumns) -> Result<(Item<()>, Option<Label>), String> {
    let label = c
        .human_label
        .map(|l| Label::from_text(&l).ok_or_else(|| format!("bad label {l:?}")))
        .transpose()?;
    let human_labels = match c.human_labels {
        None => Default::default(),
        Some(text) => serde_json::from_str::<std::collections::BTreeMap<String, String>>(&text)
            .map_err(|e| format!("human_labels: {e}"))?
            .into_iter()
            .map(|(criterion, l)| {
                Label::from_text(&l)
                    .map(|l| (criterion.clone(), l))
                    .ok_or_else(|| format!("bad label {l:?} of criterion {criterion:?}"))
            })
            .collect::<Result<_, String>>()?,
    };
    let item = Item {
        id: c.item_id,
        question: c.question,
        answer_a: c.answer_a,
        answer_b: c.answer_b,
        answer: c.answer,
        reference: c.reference,
        human_label: (),
        human_labels,
        meta: serde_json::from_str::<Value>(&c.meta).map_err(|e| e.to_string())?,
    };
    Ok((item, label))
}

fn ids(r: &SqliteRow, column: &str) -> Result<Vec<String>, String> {
    serde_json::from_str(r.get::<&str, _>(column)).map_err(|e| format!("{column}: {e}"))
}

/// Why an experiment row could not be read.
pub(crate) enum BadExperiment {
    Corrupt(String),
    /// Its spec no longer parses: the experiment's name, and why.
    Spec(String, judgelab_core::experiment::ExperimentError),
}

/// An experiment row, its spec parsed.
pub(crate) fn experiment(r: &SqliteRow) -> Result<ExperimentRow, BadExperiment> {
    let name: String = r.get("name");
    let spec: String = r.get("spec");
    let mut experiment = Experiment::from_toml(&format!("{name}.toml (as stored)"), &spec)
        .map_err(|e| BadExperiment::Spec(name.clone(), e))?;
    if let Some(card) = r.get::<Option<&str>, _>("card") {
        let definition =
            serde_json::from_str(card).map_err(|e| BadExperiment::Corrupt(format!("card: {e}")))?;
        experiment = experiment
            .with_card(&definition)
            .map_err(BadExperiment::Corrupt)?;
    }
    Ok(ExperimentRow {
        id: r.get("id"),
        name,
        content_hash: r.get("content_hash"),
        spec,
        experiment,
        dataset_id: r.get("dataset_id"),
        pool: ids(r, "pool").map_err(BadExperiment::Corrupt)?,
        judged: ids(r, "judged").map_err(BadExperiment::Corrupt)?,
        test: match r.get::<Option<&str>, _>("test_items") {
            None => Vec::new(),
            Some(text) => serde_json::from_str(text)
                .map_err(|e| BadExperiment::Corrupt(format!("test_items: {e}")))?,
        },
        selected: r.get::<i64, _>("selected") != 0,
        race_rounds: r.get::<i64, _>("race_rounds") as u32,
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
        judge_identity: r.get("judge_identity"),
        device: r.get("device"),
        test_role: r.get("test_role"),
    })
}

/// A trial's verdicts, read on a connection of its own (read-only) that steps SQLite
/// directly: see the note on `rusqlite` in this crate's Cargo.toml.
pub(crate) fn read_verdicts(
    path: &std::path::Path,
    trial_id: i64,
) -> rusqlite::Result<Vec<VerdictRecord>> {
    let conn = read_only(path)?;
    let mut statement = conn.prepare(
        "SELECT trial_id, item_id, repeat, swapped, seed, prompt_hash, raw_output, verdict,
                failure_kind, prompt_tokens, completion_tokens, latency_ms, ttft_ms, error,
                cost_usd, cached_tokens, attempts, logprobs, cache_hit, exact, distribution,
                endpoint, belief, criterion, criteria, uncovered, input_cut, summary_calls,
                summary_prompt_tokens, summary_completion_tokens, summary_cost_usd
         FROM verdicts WHERE trial_id = ? ORDER BY item_id, repeat, swapped, criterion",
    )?;
    let rows = statement.query_map([trial_id], |r| {
        let bad = |column: usize, message: String| {
            rusqlite::Error::FromSqlConversionFailure(
                column,
                rusqlite::types::Type::Text,
                message.into(),
            )
        };
        // Read in place: a million verdicts copy no label text.
        let text = |i: usize| r.get_ref(i).and_then(|v| Ok(v.as_str_or_null()?));
        let outcome = outcome(text(7)?, text(8)?, text(13)?).map_err(|e| bad(7, e))?;
        let distribution = r
            .get::<_, Option<String>>(20)?
            .map(|json| distribution_from_json(&json))
            .transpose()
            .map_err(|e| bad(20, e))?;
        let belief = r
            .get::<_, Option<String>>(22)?
            .map(|json| distribution_from_json(&json))
            .transpose()
            .map_err(|e| bad(22, e))?;
        let criteria = r
            .get::<_, Option<String>>(24)?
            .map(|json| criteria_from_json(&json))
            .transpose()
            .map_err(|e| bad(24, e))?
            .unwrap_or_default();
        Ok(VerdictRecord {
            trial_id: r.get(0)?,
            item_id: r.get(1)?,
            repeat: r.get::<_, i64>(2)? as u32,
            swapped: r.get(3)?,
            criterion: r.get(23)?,
            seed: r.get::<_, i64>(4)? as u32,
            prompt_hash: r.get(5)?,
            raw_output: r.get(6)?,
            outcome,
            prompt_tokens: r.get::<_, i64>(9)? as u32,
            completion_tokens: r.get::<_, i64>(10)? as u32,
            latency_ms: r.get(11)?,
            ttft_ms: r.get(12)?,
            cost_usd: r.get(14)?,
            cached_tokens: r.get::<_, Option<i64>>(15)?.map(|n| n as u32),
            attempts: r.get::<_, i64>(16)? as u32,
            logprobs: r.get(17)?,
            cache_hit: r.get(18)?,
            exact: r.get(19)?,
            distribution,
            endpoint: r.get(21)?,
            belief,
            criteria,
            uncovered: r.get(25)?,
            input_cut: r.get::<_, Option<i64>>(26)?.map(|n| n as u32),
            summaries: match r.get::<_, Option<i64>>(27)? {
                None => None,
                Some(calls) => Some(judgelab_core::record::Written {
                    calls: calls as u32,
                    prompt_tokens: r.get::<_, i64>(28)? as u32,
                    completion_tokens: r.get::<_, i64>(29)? as u32,
                    cost_usd: r.get(30)?,
                }),
            },
        })
    })?;
    rows.collect()
}

/// The `verdict`, `failure_kind` and `error` columns of a record.
pub(crate) type OutcomeColumns = (Option<String>, Option<String>, Option<String>);

/// The columns an outcome is stored in.
pub(crate) fn outcome_columns(outcome: &Outcome) -> OutcomeColumns {
    match outcome {
        Outcome::Judged(Verdict::Parsed(label)) => (Some(label.to_text()), None, None),
        Outcome::Judged(Verdict::Failed(kind)) => (None, Some(kind.name().to_string()), None),
        Outcome::CallFailed(error) => (None, None, Some(error.clone())),
    }
}

/// An outcome from its columns. A row with neither a verdict nor a failure kind predates
/// failure kinds: the judge answered something that is no label.
fn outcome(
    verdict: Option<&str>,
    failure_kind: Option<&str>,
    error: Option<&str>,
) -> Result<Outcome, String> {
    if let Some(error) = error {
        return Ok(Outcome::CallFailed(error.to_string()));
    }
    let verdict = match (verdict, failure_kind) {
        (Some(text), _) => Verdict::Parsed(
            Label::from_text(text).ok_or_else(|| format!("verdict {text:?} is no label"))?,
        ),
        (None, Some(kind)) => Verdict::Failed(
            kind.parse::<FailureKind>()
                .map_err(|_| format!("failure_kind {kind:?} is unknown"))?,
        ),
        (None, None) => Verdict::Failed(FailureKind::NoLabel),
    };
    Ok(Outcome::Judged(verdict))
}

/// A rubric call's verdicts as stored: `{"criterion": {"label": "2"} | {"failure":
/// "no_label"}}`; none for a call on the item's one label.
pub(crate) fn criteria_to_json(criteria: &BTreeMap<String, Verdict>) -> Option<String> {
    if criteria.is_empty() {
        return None;
    }
    let json: serde_json::Map<String, Value> = criteria
        .iter()
        .map(|(name, verdict)| {
            let v = match verdict {
                Verdict::Parsed(label) => serde_json::json!({ "label": label.to_text() }),
                Verdict::Failed(kind) => serde_json::json!({ "failure": kind.name() }),
            };
            (name.clone(), v)
        })
        .collect();
    Some(Value::Object(json).to_string())
}

fn criteria_from_json(json: &str) -> Result<BTreeMap<String, Verdict>, String> {
    let map: serde_json::Map<String, Value> =
        serde_json::from_str(json).map_err(|e| format!("criteria: {e}"))?;
    map.into_iter()
        .map(|(name, v)| {
            let verdict = match (
                v.get("label").and_then(Value::as_str),
                v.get("failure").and_then(Value::as_str),
            ) {
                (Some(text), _) => Verdict::Parsed(
                    Label::from_text(text)
                        .ok_or_else(|| format!("criteria.{name}: {text:?} is no label"))?,
                ),
                (None, Some(kind)) => Verdict::Failed(
                    kind.parse::<FailureKind>()
                        .map_err(|_| format!("criteria.{name}: failure {kind:?} is unknown"))?,
                ),
                (None, None) => return Err(format!("criteria.{name}: {v} is no verdict")),
            };
            Ok((name, verdict))
        })
        .collect()
}

/// An exact row's distribution as stored: `{label: p, …, "failed": p}`.
pub(crate) fn distribution_to_json(d: &VerdictDistribution) -> String {
    let mut json = serde_json::Map::new();
    for (label, p) in &d.labels {
        json.insert(label.to_text(), (*p).into());
    }
    json.insert("failed".into(), d.failed.into());
    Value::Object(json).to_string()
}

fn distribution_from_json(json: &str) -> Result<VerdictDistribution, String> {
    let map: serde_json::Map<String, Value> =
        serde_json::from_str(json).map_err(|e| format!("distribution: {e}"))?;
    let mut d = VerdictDistribution::default();
    for (key, p) in map {
        let p = p
            .as_f64()
            .ok_or_else(|| format!("distribution: {key:?} is not a probability"))?;
        match key.as_str() {
            "failed" => d.failed = p,
            label => d.labels.push((
                Label::from_text(label)
                    .ok_or_else(|| format!("distribution: {label:?} is no label"))?,
                p,
            )),
        }
    }
    Ok(d)
}

/// A stored load ramp, without its levels.
#[derive(Debug, Clone, PartialEq)]
pub struct RampRow {
    pub id: i64,
    pub trial_id: i64,
    pub requests: usize,
    pub warmup: usize,
    pub slo_ms: Option<f64>,
    pub created_at: String,
}

/// The columns of a [`TimedRequest`], in the order [`bind_timed`] binds and [`timed`] reads
/// them: `timed_calls` and `load_calls` share them.
pub(crate) const TIMED_COLUMNS: &str =
    "item_id, swapped, warmup, prompt_tokens, completion_tokens, latency_ms, ttft_ms, attempts, error";

/// Binds a request's [`TIMED_COLUMNS`] after what `query` has bound.
pub(crate) fn bind_timed<'q>(
    query: sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>>,
    t: &'q TimedRequest,
) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments<'q>> {
    query
        .bind(&t.item_id)
        .bind(t.swapped)
        .bind(t.warmup)
        .bind(i64::from(t.prompt_tokens))
        .bind(i64::from(t.completion_tokens))
        .bind(t.latency_ms)
        .bind(t.ttft_ms)
        .bind(i64::from(t.attempts))
        .bind(&t.error)
}

/// A request's [`TIMED_COLUMNS`], from column `at` of `r` on.
pub(crate) fn timed(r: &SqliteRow, at: usize) -> TimedRequest {
    TimedRequest {
        item_id: r.get(at),
        swapped: r.get(at + 1),
        warmup: r.get(at + 2),
        prompt_tokens: r.get::<i64, _>(at + 3) as u32,
        completion_tokens: r.get::<i64, _>(at + 4) as u32,
        latency_ms: r.get(at + 5),
        ttft_ms: r.get(at + 6),
        attempts: r.get::<i64, _>(at + 7) as u32,
        error: r.get(at + 8),
    }
}
