//! Summaries written for `input_strategy = "summary"` ([`judgelab_core::cut`]): stored as
//! each arrives, by a key that hashes the summariser and its request, and read back by
//! every later trial, run or experiment that asks the same.

use std::collections::HashMap;

use sqlx::Row;

use crate::{Result, Store};

/// A summary as stored, with what writing it cost.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredSummary {
    pub key: String,
    /// The summariser's name as the experiment wrote it, for people reading the file.
    pub summariser: String,
    pub max_tokens: u32,
    pub input_sha256: String,
    pub summary: String,
    pub prompt_tokens: u32,
    pub completion_tokens: u32,
    pub latency_ms: Option<f64>,
    pub cost_usd: Option<f64>,
}

impl Store {
    /// The stored summaries of `keys`, by key; those never written are missing.
    pub async fn summaries(&self, keys: &[String]) -> Result<HashMap<String, StoredSummary>> {
        let mut out = HashMap::new();
        // In chunks under SQLite's limit on bound parameters.
        for chunk in keys.chunks(500) {
            let marks = vec!["?"; chunk.len()].join(", ");
            let sql = format!(
                "SELECT key, summariser, max_tokens, input_sha256, summary, prompt_tokens,
                        completion_tokens, latency_ms, cost_usd
                 FROM summaries WHERE key IN ({marks})"
            );
            let mut query = sqlx::query(&sql);
            for key in chunk {
                query = query.bind(key);
            }
            let rows = query.fetch_all(&self.pool).await.map_err(self.err())?;
            for r in rows {
                let s = StoredSummary {
                    key: r.get("key"),
                    summariser: r.get("summariser"),
                    max_tokens: r.get::<i64, _>("max_tokens") as u32,
                    input_sha256: r.get("input_sha256"),
                    summary: r.get("summary"),
                    prompt_tokens: r.get::<i64, _>("prompt_tokens") as u32,
                    completion_tokens: r.get::<i64, _>("completion_tokens") as u32,
                    latency_ms: r.get("latency_ms"),
                    cost_usd: r.get("cost_usd"),
                };
                out.insert(s.key.clone(), s);
            }
        }
        Ok(out)
    }

    /// Stores a summary the moment it is written; one already stored under its key stays.
    pub async fn insert_summary(&self, s: &StoredSummary) -> Result<()> {
        sqlx::query(
            "INSERT INTO summaries (key, summariser, max_tokens, input_sha256, summary,
                                    prompt_tokens, completion_tokens, latency_ms, cost_usd)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING",
        )
        .bind(&s.key)
        .bind(&s.summariser)
        .bind(i64::from(s.max_tokens))
        .bind(&s.input_sha256)
        .bind(&s.summary)
        .bind(i64::from(s.prompt_tokens))
        .bind(i64::from(s.completion_tokens))
        .bind(s.latency_ms)
        .bind(s.cost_usd)
        .execute(&self.pool)
        .await
        .map_err(self.err())?;
        Ok(())
    }
}
