//! The SQLite store: datasets and their items, templates by content hash, experiments,
//! trials and every verdict. Migrations version the schema; the database runs in WAL mode
//! behind a single connection, so there is exactly one writer.
//!
//! Each verdict is committed on its own as it arrives; the unique key (trial, item, repeat)
//! makes re-runs idempotent. A verdict whose call failed is recorded with its error and is
//! the only kind of row a later run may overwrite.

mod align;
mod annotations;
mod import;
mod lock;
mod migrations;
mod panels;
mod race;
mod rows;
mod summaries;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

use judgelab_core::{Dataset, Template};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Row, SqlitePool};

pub use import::DatasetWriter;
pub use lock::RunLock;
pub use rows::{DatasetInfo, ExperimentRow, NewExperiment, NewTrial, RampRow, TrialRow};
pub use summaries::StoredSummary;

use judgelab_core::load::LevelRun;
use judgelab_core::results::{TimedCall, VerdictRecord};

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database {path}")]
    Sqlx {
        path: String,
        #[source]
        source: sqlx::Error,
    },
    #[error("database {path}: cannot migrate the schema")]
    Migrate {
        path: String,
        #[source]
        source: sqlx::migrate::MigrateError,
    },
    #[error("a dataset named {name:?} with different content is already imported (from {source_path}); import this file under another name")]
    NameTaken { name: String, source_path: String },
    #[error("database {path}: experiment {name:?}: its stored experiment file no longer parses")]
    Spec {
        path: String,
        name: String,
        #[source]
        source: judgelab_core::experiment::ExperimentError,
    },
    #[error("database {path}: corrupt row: {message}")]
    Corrupt { path: String, message: String },
    #[error("experiment {name:?} is already running{}; wait for that run to end, or stop it, and run again", if holder.is_empty() { String::new() } else { format!(" ({holder})") })]
    Running { name: String, holder: String },
    #[error("cannot take the run lock {path}")]
    Lock {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("database {path}")]
    Read {
        path: String,
        #[source]
        source: rusqlite::Error,
    },
}

pub type Result<T> = std::result::Result<T, StoreError>;

/// A verdict a call answered: its item, repeat, answer order and the criterion the call
/// asked (empty: all of them, or the item's one label).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct DoneKey {
    pub item_id: String,
    pub repeat: u32,
    pub swapped: bool,
    pub criterion: String,
}

impl DoneKey {
    /// The key of a call asking `criterion` (empty: every criterion, or the one label).
    pub fn new(item_id: &str, repeat: u32, swapped: bool, criterion: &str) -> DoneKey {
        DoneKey {
            item_id: item_id.to_string(),
            repeat,
            swapped,
            criterion: criterion.to_string(),
        }
    }
}

/// A Judgelab database file.
#[derive(Debug, Clone)]
pub struct Store {
    pool: SqlitePool,
    path: PathBuf,
}

/// A dataset's row with its count of items without a human label (the row's `n_items`
/// counts the labelled ones).
const SELECT_DATASETS: &str = "SELECT datasets.*, (SELECT COUNT(*) FROM items WHERE items.dataset_id = datasets.id AND items.human_label IS NULL) AS n_unlabelled, (SELECT COUNT(*) FROM items WHERE items.dataset_id = datasets.id AND items.reference IS NOT NULL AND items.reference != '') AS n_with_reference FROM datasets";

impl Store {
    /// Opens (creating if needed) the database at `path` and brings its schema up to date.
    pub async fn open(path: &Path) -> Result<Store> {
        let shown = path.display().to_string();
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent).map_err(|e| StoreError::Sqlx {
                path: shown.clone(),
                source: sqlx::Error::Io(e),
            })?;
        }
        let options = SqliteConnectOptions::from_str("sqlite://")
            .expect("static url")
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(SqliteSynchronous::Normal)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10))
            // sqlx hands rows from its SQLite thread to the caller through a channel of 50
            // by default; reading 100,000 verdicts then spent most of its time switching
            // between the two threads.
            .row_buffer_size(4096);
        let pool = SqlitePoolOptions::new()
            .max_connections(1)
            .connect_with(options)
            .await
            .map_err(|source| StoreError::Sqlx {
                path: shown.clone(),
                source,
            })?;
        migrations::migrator()
            .await
            .run(&pool)
            .await
            .map_err(|source| StoreError::Migrate {
                path: shown,
                source,
            })?;
        Ok(Store {
            pool,
            path: path.to_path_buf(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self) -> impl Fn(sqlx::Error) -> StoreError + '_ {
        move |source| StoreError::Sqlx {
            path: self.path.display().to_string(),
            source,
        }
    }

    fn bad_experiment(&self, e: rows::BadExperiment) -> StoreError {
        match e {
            rows::BadExperiment::Corrupt(message) => self.corrupt(message),
            rows::BadExperiment::Spec(name, source) => StoreError::Spec {
                path: self.path.display().to_string(),
                name,
                source,
            },
        }
    }

    fn corrupt(&self, message: impl std::fmt::Display) -> StoreError {
        StoreError::Corrupt {
            path: self.path.display().to_string(),
            message: message.to_string(),
        }
    }

    // ---- datasets -------------------------------------------------------------------

    pub async fn datasets(&self) -> Result<Vec<DatasetInfo>> {
        let rows = sqlx::query(&format!("{SELECT_DATASETS} ORDER BY id"))
            .fetch_all(&self.pool)
            .await
            .map_err(self.err())?;
        rows.iter().map(|r| self.dataset_info(r)).collect()
    }

    pub async fn dataset_by_hash(&self, content_hash: &str) -> Result<Option<DatasetInfo>> {
        self.dataset_where("content_hash", content_hash).await
    }

    pub async fn dataset_by_name(&self, name: &str) -> Result<Option<DatasetInfo>> {
        self.dataset_where("name", name).await
    }

    async fn dataset_where(
        &self,
        column: &'static str,
        value: &str,
    ) -> Result<Option<DatasetInfo>> {
        let row = sqlx::query(&format!("{SELECT_DATASETS} WHERE {column} = ?"))
            .bind(value)
            .fetch_optional(&self.pool)
            .await
            .map_err(self.err())?;
        row.as_ref().map(|r| self.dataset_info(r)).transpose()
    }

    fn dataset_info(&self, r: &sqlx::sqlite::SqliteRow) -> Result<DatasetInfo> {
        Ok(DatasetInfo {
            id: r.get("id"),
            name: r.get("name"),
            task: serde_json::from_str(r.get::<&str, _>("task")).map_err(|e| self.corrupt(e))?,
            content_hash: r.get("content_hash"),
            source: r.get("source"),
            n_items: r.get::<i64, _>("n_items") as usize,
            n_unlabelled: r.get::<i64, _>("n_unlabelled") as usize,
            n_with_reference: r.get::<i64, _>("n_with_reference") as usize,
            criteria: serde_json::from_str(r.get::<&str, _>("criteria"))
                .map_err(|e| self.corrupt(format!("criteria: {e}")))?,
            mapping: r.get("mapping"),
        })
    }

    /// The time now, UTC, as RFC 3339 to the second (the clock the database's rows use).
    pub async fn now(&self) -> Result<String> {
        sqlx::query_scalar("SELECT strftime('%Y-%m-%dT%H:%M:%SZ', 'now')")
            .fetch_one(&self.pool)
            .await
            .map_err(self.err())
    }

    /// How many of a dataset's labelled items carry each label, in label order (ratings
    /// by rounded value), counted in the database: [`Dataset::label_counts`] without
    /// loading the items.
    pub async fn label_counts(&self, info: &DatasetInfo) -> Result<Vec<(String, usize)>> {
        let rows = sqlx::query(
            "SELECT human_label, COUNT(*) FROM items WHERE dataset_id = ? AND human_label IS NOT NULL GROUP BY human_label",
        )
        .bind(info.id)
        .fetch_all(&self.pool)
        .await
        .map_err(self.err())?;
        let mut counts = std::collections::BTreeMap::<String, usize>::new();
        for r in &rows {
            let text: &str = r.get(0);
            let label = judgelab_core::Label::from_text(text)
                .ok_or_else(|| self.corrupt(format!("human label {text:?}")))?;
            *counts.entry(label.category()).or_default() += r.get::<i64, _>(1) as usize;
        }
        Ok(counts.into_iter().collect())
    }

    /// Loads a dataset with its items, in import order (the unlabelled apart).
    pub async fn load_dataset(&self, info: &DatasetInfo) -> Result<Dataset> {
        let (path, id) = (self.path.clone(), info.id);
        let rows = tokio::task::spawn_blocking(move || rows::read_items(&path, id))
            .await
            .expect("reading items does not panic")
            .map_err(|source| StoreError::Read {
                path: self.path.display().to_string(),
                source,
            })?;
        let (mut items, mut unlabelled) = (Vec::new(), Vec::new());
        for r in rows {
            match rows::item(r).map_err(|e| self.corrupt(e))? {
                (item, Some(label)) => items.push(item.with_label(label)),
                (item, None) => unlabelled.push(item),
            }
        }
        Ok(Dataset {
            name: info.name.clone(),
            task: info.task,
            items,
            unlabelled,
            criteria: info.criteria.clone(),
            content_hash: info.content_hash.clone(),
            source: info.source.clone(),
        })
    }

    // ---- templates ------------------------------------------------------------------

    pub async fn save_template(&self, template: &Template) -> Result<()> {
        sqlx::query("INSERT OR IGNORE INTO templates (hash, name, source) VALUES (?, ?, ?)")
            .bind(&template.hash)
            .bind(&template.name)
            .bind(&template.source)
            .execute(&self.pool)
            .await
            .map_err(self.err())?;
        Ok(())
    }

    /// Milliseconds per prompt token of the model with this file hash, over every successful
    /// call stored: how fast this machine ran it.
    pub async fn ms_per_prompt_token(&self, model_sha256: &str) -> Result<Option<f64>> {
        let row = sqlx::query(
            "SELECT SUM(v.latency_ms) AS ms, SUM(v.prompt_tokens) AS tokens
             FROM verdicts v JOIN trials t ON t.id = v.trial_id
             WHERE t.model_sha256 = ? AND v.error IS NULL AND v.latency_ms IS NOT NULL",
        )
        .bind(model_sha256)
        .fetch_one(&self.pool)
        .await
        .map_err(self.err())?;
        let ms: Option<f64> = row.get("ms");
        let tokens: Option<i64> = row.get("tokens");
        Ok(match (ms, tokens) {
            (Some(ms), Some(tokens)) if tokens > 0 => Some(ms / tokens as f64),
            _ => None,
        })
    }

    /// The template stored under `hash`, if any.
    pub async fn template(&self, hash: &str) -> Result<Option<Template>> {
        let row = sqlx::query("SELECT name, source FROM templates WHERE hash = ?")
            .bind(hash)
            .fetch_optional(&self.pool)
            .await
            .map_err(self.err())?;
        Ok(row.map(|r| Template::new(r.get("name"), r.get("source"))))
    }

    // ---- experiments and trials -----------------------------------------------------

    pub async fn experiments(&self) -> Result<Vec<ExperimentRow>> {
        let rows = sqlx::query("SELECT * FROM experiments ORDER BY id")
            .fetch_all(&self.pool)
            .await
            .map_err(self.err())?;
        rows.iter()
            .map(|r| rows::experiment(r).map_err(|e| self.bad_experiment(e)))
            .collect()
    }

    pub async fn experiment_by_name(&self, name: &str) -> Result<Option<ExperimentRow>> {
        let row = sqlx::query("SELECT * FROM experiments WHERE name = ?")
            .bind(name)
            .fetch_optional(&self.pool)
            .await
            .map_err(self.err())?;
        row.as_ref()
            .map(|r| rows::experiment(r).map_err(|e| self.bad_experiment(e)))
            .transpose()
    }

    /// Creates an experiment and its trials in one transaction, which first deletes the
    /// experiment it replaces (if any): the old one is gone only if the new one is stored.
    pub async fn create_experiment(
        &self,
        experiment: &NewExperiment,
        trials: &[NewTrial],
        replacing: Option<i64>,
    ) -> Result<ExperimentRow> {
        let mut tx = self.pool.begin().await.map_err(self.err())?;
        if let Some(old) = replacing {
            sqlx::query("DELETE FROM experiments WHERE id = ?")
                .bind(old)
                .execute(&mut *tx)
                .await
                .map_err(self.err())?;
        }
        let id: i64 = sqlx::query(
            "INSERT INTO experiments (name, content_hash, spec, dataset_id, pool, judged, test_items, card) VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
        )
        .bind(&experiment.name)
        .bind(&experiment.content_hash)
        .bind(&experiment.spec)
        .bind(experiment.dataset_id)
        .bind(serde_json::to_string(&experiment.pool).expect("ids serialise"))
        .bind(serde_json::to_string(&experiment.judged).expect("ids serialise"))
        .bind(
            (!experiment.test.is_empty())
                .then(|| serde_json::to_string(&experiment.test).expect("ids serialise")),
        )
        .bind(
            experiment
                .card
                .as_ref()
                .map(|c| serde_json::to_string(c).expect("a card serialises")),
        )
        .fetch_one(&mut *tx)
        .await
        .map_err(self.err())?
        .get(0);
        for (trial_idx, t) in trials.iter().enumerate() {
            sqlx::query(
                "INSERT INTO trials (experiment_id, trial_idx, params, template_hash, model_path, model_sha256, examples, judge_identity)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(id)
            .bind(trial_idx as i64)
            .bind(serde_json::to_string(&t.params).expect("params serialise"))
            .bind(&t.template_hash)
            .bind(&t.model_path)
            .bind(&t.model_sha256)
            .bind(serde_json::to_string(&t.examples).expect("ids serialise"))
            .bind(&t.judge_identity)
            .execute(&mut *tx)
            .await
            .map_err(self.err())?;
        }
        tx.commit().await.map_err(self.err())?;
        self.experiment_by_name(&experiment.name)
            .await?
            .ok_or_else(|| self.corrupt("experiment vanished after insert"))
    }

    /// Keeps `spec` as the experiment's file: a resumed run's file may differ from the
    /// stored one in what is outside the identity (budgets, `[trust]`), which the report
    /// reads from the latest.
    pub async fn update_spec(&self, experiment_id: i64, spec: &str) -> Result<()> {
        sqlx::query("UPDATE experiments SET spec = ? WHERE id = ?")
            .bind(spec)
            .bind(experiment_id)
            .execute(&self.pool)
            .await
            .map_err(self.err())?;
        Ok(())
    }

    /// Deletes an experiment with its trials, verdicts and panels.
    pub async fn delete_experiment(&self, experiment_id: i64) -> Result<()> {
        sqlx::query("DELETE FROM experiments WHERE id = ?")
            .bind(experiment_id)
            .execute(&self.pool)
            .await
            .map_err(self.err())?;
        Ok(())
    }

    pub async fn trials(&self, experiment_id: i64) -> Result<Vec<TrialRow>> {
        let rows = sqlx::query("SELECT * FROM trials WHERE experiment_id = ? ORDER BY trial_idx")
            .bind(experiment_id)
            .fetch_all(&self.pool)
            .await
            .map_err(self.err())?;
        rows.iter()
            .map(|r| rows::trial(r).map_err(|e| self.corrupt(e)))
            .collect()
    }

    /// Records that `trial_id`'s calls are computed on `device`: kept as it is where it
    /// says so already, joined with `; ` where a resumed run computes elsewhere.
    pub async fn record_device(&self, trial_id: i64, device: &str) -> Result<()> {
        sqlx::query(
            "UPDATE trials SET device = CASE
                 WHEN device IS NULL OR device = '' THEN ?2
                 WHEN instr('; ' || device || '; ', '; ' || ?2 || '; ') > 0 THEN device
                 ELSE device || '; ' || ?2 END
             WHERE id = ?1",
        )
        .bind(trial_id)
        .bind(device)
        .execute(&self.pool)
        .await
        .map_err(self.err())?;
        Ok(())
    }

    // ---- verdicts -------------------------------------------------------------------

    /// The verdicts of a trial whose call succeeded.
    pub async fn done_keys(&self, trial_id: i64) -> Result<HashSet<DoneKey>> {
        let rows = sqlx::query(
            "SELECT item_id, repeat, swapped, criterion FROM verdicts WHERE trial_id = ? AND error IS NULL",
        )
        .bind(trial_id)
        .fetch_all(&self.pool)
        .await
        .map_err(self.err())?;
        Ok(rows
            .iter()
            .map(|r| DoneKey {
                item_id: r.get(0),
                repeat: r.get::<i64, _>(1) as u32,
                swapped: r.get(2),
                criterion: r.get(3),
            })
            .collect())
    }

    /// Records a verdict, committed at once. An existing row is replaced only if its call
    /// had failed; a successful verdict is never overwritten. Returns whether it was written.
    pub async fn record_verdict(&self, v: &VerdictRecord) -> Result<bool> {
        insert_verdict(&self.pool, v).await.map_err(self.err())
    }

    /// Records the verdicts one call answers (an exact pass answers every trial of its
    /// group), committed together: a run killed meanwhile stores all or none of them, so
    /// no call is made again for part of its verdicts. Returns whether each was written.
    pub async fn record_verdicts(&self, vs: &[VerdictRecord]) -> Result<Vec<bool>> {
        let mut tx = self.pool.begin().await.map_err(self.err())?;
        let mut written = Vec::with_capacity(vs.len());
        for v in vs {
            written.push(insert_verdict(&mut *tx, v).await.map_err(self.err())?);
        }
        tx.commit().await.map_err(self.err())?;
        Ok(written)
    }

    // ---- timed calls -----------------------------------------------------------------

    /// Records a call timed alone, committed at once; it replaces one stored for the same
    /// call only if that one had failed.
    pub async fn record_timed_call(&self, t: &TimedCall) -> Result<()> {
        let query = sqlx::query(
            "INSERT INTO timed_calls (trial_id, concurrency, item_id, swapped, warmup, prompt_tokens,
                                      completion_tokens, latency_ms, ttft_ms, attempts, error)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (trial_id, item_id, swapped, concurrency, warmup) DO UPDATE SET
                prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens,
                latency_ms = excluded.latency_ms, ttft_ms = excluded.ttft_ms,
                attempts = excluded.attempts, error = excluded.error,
                created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
             WHERE timed_calls.error IS NOT NULL",
        )
        .bind(t.trial_id)
        .bind(i64::from(t.concurrency));
        rows::bind_timed(query, &t.request)
            .execute(&self.pool)
            .await
            .map_err(self.err())?;
        Ok(())
    }

    /// A trial's timed calls, warm-ups and failed ones included, in the order they were
    /// made.
    /// The experiment's calls timed successfully (warm-ups left out), over all its trials.
    pub async fn count_timed_calls(&self, experiment_id: i64) -> Result<usize> {
        let n: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM timed_calls JOIN trials ON trials.id = timed_calls.trial_id
             WHERE trials.experiment_id = ? AND timed_calls.warmup = 0
               AND timed_calls.error IS NULL AND timed_calls.latency_ms IS NOT NULL",
        )
        .bind(experiment_id)
        .fetch_one(&self.pool)
        .await
        .map_err(self.err())?;
        Ok(n as usize)
    }

    pub async fn timed_calls(&self, trial_id: i64) -> Result<Vec<TimedCall>> {
        let rows = sqlx::query(&format!(
            "SELECT concurrency, {} FROM timed_calls WHERE trial_id = ? ORDER BY created_at, rowid",
            rows::TIMED_COLUMNS
        ))
        .bind(trial_id)
        .fetch_all(&self.pool)
        .await
        .map_err(self.err())?;
        Ok(rows
            .iter()
            .map(|r| TimedCall {
                trial_id,
                concurrency: r.get::<i64, _>(0) as u32,
                request: rows::timed(r, 1),
            })
            .collect())
    }

    // ---- load ramps -------------------------------------------------------------------

    /// Stores a ramp of `trial_id` with every level's wall time and calls, in one
    /// transaction; returns its id and when it was stored.
    pub async fn save_load_ramp(
        &self,
        trial_id: i64,
        requests: usize,
        warmup: usize,
        slo_ms: Option<f64>,
        levels: &[LevelRun],
    ) -> Result<(i64, String)> {
        let mut tx = self.pool.begin().await.map_err(self.err())?;
        let row = sqlx::query(
            "INSERT INTO load_ramps (trial_id, requests, warmup, slo_ms) VALUES (?, ?, ?, ?)
             RETURNING id, created_at",
        )
        .bind(trial_id)
        .bind(requests as i64)
        .bind(warmup as i64)
        .bind(slo_ms)
        .fetch_one(&mut *tx)
        .await
        .map_err(self.err())?;
        let (id, created_at): (i64, String) = (row.get(0), row.get(1));
        for level in levels {
            sqlx::query("INSERT INTO load_levels (ramp_id, concurrency, wall_s) VALUES (?, ?, ?)")
                .bind(id)
                .bind(i64::from(level.concurrency))
                .bind(level.wall_s)
                .execute(&mut *tx)
                .await
                .map_err(self.err())?;
            for (seq, c) in level.calls.iter().enumerate() {
                let query = sqlx::query(
                    "INSERT INTO load_calls (ramp_id, concurrency, seq, item_id, swapped, warmup, prompt_tokens,
                                             completion_tokens, latency_ms, ttft_ms, attempts, error)
                     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                )
                .bind(id)
                .bind(i64::from(level.concurrency))
                .bind(seq as i64);
                rows::bind_timed(query, c)
                    .execute(&mut *tx)
                    .await
                    .map_err(self.err())?;
            }
        }
        tx.commit().await.map_err(self.err())?;
        Ok((id, created_at))
    }

    /// The load ramps of an experiment's trials, oldest first, each with its levels' wall
    /// times and calls.
    pub async fn load_ramps(&self, experiment_id: i64) -> Result<Vec<(RampRow, Vec<LevelRun>)>> {
        let ramps = sqlx::query(
            "SELECT load_ramps.id, trial_id, requests, warmup, slo_ms, load_ramps.created_at
             FROM load_ramps JOIN trials ON trials.id = load_ramps.trial_id
             WHERE trials.experiment_id = ? ORDER BY load_ramps.id",
        )
        .bind(experiment_id)
        .fetch_all(&self.pool)
        .await
        .map_err(self.err())?;
        let mut out = Vec::new();
        for r in &ramps {
            let ramp = RampRow {
                id: r.get(0),
                trial_id: r.get(1),
                requests: r.get::<i64, _>(2) as usize,
                warmup: r.get::<i64, _>(3) as usize,
                slo_ms: r.get(4),
                created_at: r.get(5),
            };
            let levels = sqlx::query(
                "SELECT concurrency, wall_s FROM load_levels WHERE ramp_id = ? ORDER BY concurrency",
            )
            .bind(ramp.id)
            .fetch_all(&self.pool)
            .await
            .map_err(self.err())?;
            let mut runs = Vec::new();
            for l in &levels {
                let concurrency: i64 = l.get(0);
                let calls = sqlx::query(&format!(
                    "SELECT {} FROM load_calls WHERE ramp_id = ? AND concurrency = ? ORDER BY seq",
                    rows::TIMED_COLUMNS
                ))
                .bind(ramp.id)
                .bind(concurrency)
                .fetch_all(&self.pool)
                .await
                .map_err(self.err())?;
                runs.push(LevelRun {
                    concurrency: concurrency as u32,
                    wall_s: l.get(1),
                    calls: calls.iter().map(|c| rows::timed(c, 0)).collect(),
                });
            }
            out.push((ramp, runs));
        }
        Ok(out)
    }

    /// A cached response (its JSON), if `key` was answered before.
    pub async fn cached_response(&self, key: &str) -> Result<Option<String>> {
        let row = sqlx::query("SELECT completion FROM response_cache WHERE key = ?")
            .bind(key)
            .fetch_optional(&self.pool)
            .await
            .map_err(self.err())?;
        Ok(row.map(|r| r.get(0)))
    }

    /// Keeps a response for `key`; the first one stored stays.
    pub async fn cache_response(&self, key: &str, completion: &str) -> Result<()> {
        sqlx::query("INSERT OR IGNORE INTO response_cache (key, completion) VALUES (?, ?)")
            .bind(key)
            .bind(completion)
            .execute(&self.pool)
            .await
            .map_err(self.err())?;
        Ok(())
    }

    /// A trial's verdicts, by item and repeat.
    pub async fn verdicts(&self, trial_id: i64) -> Result<Vec<VerdictRecord>> {
        let path = self.path.clone();
        tokio::task::spawn_blocking(move || {
            rows::read_verdicts(&path, trial_id).map_err(|source| StoreError::Read {
                path: path.display().to_string(),
                source,
            })
        })
        .await
        .expect("reading verdicts does not panic")
    }

    /// Number of verdict rows of an experiment (with or without errors).
    pub async fn count_verdicts(&self, experiment_id: i64) -> Result<usize> {
        self.count_of_trials("verdicts", experiment_id).await
    }

    /// What an experiment's verdict rows are now: how many, and how many of them are
    /// failed calls. A later run that judges a failed call again replaces its row, which
    /// changes the second and not the first.
    pub async fn verdicts_state(&self, experiment_id: i64) -> Result<(usize, usize)> {
        let row = sqlx::query(
            "SELECT COUNT(*), COUNT(verdicts.error) FROM verdicts
             JOIN trials ON trials.id = verdicts.trial_id WHERE trials.experiment_id = ?",
        )
        .bind(experiment_id)
        .fetch_one(&self.pool)
        .await
        .map_err(self.err())?;
        Ok((row.get::<i64, _>(0) as usize, row.get::<i64, _>(1) as usize))
    }

    /// How many load ramps an experiment's trials have.
    pub async fn count_load_ramps(&self, experiment_id: i64) -> Result<usize> {
        self.count_of_trials("load_ramps", experiment_id).await
    }

    /// The rows of `table` (one with a `trial_id`) that belong to an experiment's trials.
    async fn count_of_trials(&self, table: &'static str, experiment_id: i64) -> Result<usize> {
        let n: i64 = sqlx::query(&format!(
            "SELECT COUNT(*) FROM {table} JOIN trials ON trials.id = {table}.trial_id WHERE trials.experiment_id = ?"
        ))
        .bind(experiment_id)
        .fetch_one(&self.pool)
        .await
        .map_err(self.err())?
        .get(0);
        Ok(n as usize)
    }

    /// Closes the connection, checkpointing the WAL.
    pub async fn close(self) {
        self.pool.close().await;
    }
}

/// Inserts a verdict, replacing a stored one only where its call had failed; whether it
/// was written.
async fn insert_verdict<'e, E>(e: E, v: &VerdictRecord) -> std::result::Result<bool, sqlx::Error>
where
    E: sqlx::Executor<'e, Database = sqlx::Sqlite>,
{
    let done = sqlx::query(
            "INSERT INTO verdicts (trial_id, item_id, repeat, swapped, seed, prompt_hash, raw_output, verdict,
                                   failure_kind, prompt_tokens, completion_tokens, latency_ms, ttft_ms, error,
                                   cost_usd, cached_tokens, attempts, logprobs, cache_hit, exact,
                                   distribution, endpoint, belief, criterion, criteria, uncovered,
                                   input_cut, summary_calls, summary_prompt_tokens,
                                   summary_completion_tokens, summary_cost_usd)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,
                     ?, ?, ?, ?)
             ON CONFLICT (trial_id, item_id, repeat, swapped, criterion) DO UPDATE SET
                seed = excluded.seed, prompt_hash = excluded.prompt_hash, raw_output = excluded.raw_output,
                verdict = excluded.verdict, failure_kind = excluded.failure_kind,
                prompt_tokens = excluded.prompt_tokens, completion_tokens = excluded.completion_tokens,
                latency_ms = excluded.latency_ms, ttft_ms = excluded.ttft_ms, error = excluded.error,
                cost_usd = excluded.cost_usd, cached_tokens = excluded.cached_tokens,
                attempts = excluded.attempts, logprobs = excluded.logprobs, cache_hit = excluded.cache_hit,
                exact = excluded.exact, distribution = excluded.distribution,
                endpoint = excluded.endpoint, belief = excluded.belief,
                criteria = excluded.criteria, uncovered = excluded.uncovered,
                input_cut = excluded.input_cut, summary_calls = excluded.summary_calls,
                summary_prompt_tokens = excluded.summary_prompt_tokens,
                summary_completion_tokens = excluded.summary_completion_tokens,
                summary_cost_usd = excluded.summary_cost_usd,
                created_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
             WHERE verdicts.error IS NOT NULL",
        );
    let (verdict, failure_kind, error) = rows::outcome_columns(&v.outcome);
    let distribution = v.distribution.as_ref().map(rows::distribution_to_json);
    let belief = v.belief.as_ref().map(rows::distribution_to_json);
    let done = done
        .bind(v.trial_id)
        .bind(&v.item_id)
        .bind(v.repeat as i64)
        .bind(v.swapped)
        .bind(v.seed as i64)
        .bind(&v.prompt_hash)
        .bind(&v.raw_output)
        .bind(verdict)
        .bind(failure_kind)
        .bind(v.prompt_tokens as i64)
        .bind(v.completion_tokens as i64)
        .bind(v.latency_ms)
        .bind(v.ttft_ms)
        .bind(error)
        .bind(v.cost_usd)
        .bind(v.cached_tokens.map(i64::from))
        .bind(i64::from(v.attempts))
        .bind(&v.logprobs)
        .bind(v.cache_hit)
        .bind(v.exact)
        .bind(distribution)
        .bind(&v.endpoint)
        .bind(belief)
        .bind(&v.criterion)
        .bind(rows::criteria_to_json(&v.criteria))
        .bind(v.uncovered)
        .bind(v.input_cut.map(i64::from))
        .bind(v.summaries.map(|w| i64::from(w.calls)))
        .bind(v.summaries.map(|w| i64::from(w.prompt_tokens)))
        .bind(v.summaries.map(|w| i64::from(w.completion_tokens)))
        .bind(v.summaries.and_then(|w| w.cost_usd))
        .execute(e)
        .await?;
    Ok(done.rows_affected() > 0)
}
