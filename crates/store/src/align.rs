//! What an alignment (`judgelab align`) leaves in the store besides its trials and
//! verdicts: how each candidate was made, its proposer's call among them, the failed calls
//! it sent again, and the outcome of its latest run.

use judgelab_core::align::outcome::AlignOutcome;
use judgelab_core::align::{Candidate, Move, Proposal};
use sqlx::Row;

use crate::rows::{self, NewTrial, TrialRow};
use crate::{Result, Store};

impl Store {
    /// The alignment's candidates, by id.
    pub async fn candidates(&self, experiment_id: i64) -> Result<Vec<Candidate>> {
        let rows = sqlx::query(
            "SELECT * FROM align_candidates WHERE experiment_id = ? ORDER BY candidate",
        )
        .bind(experiment_id)
        .fetch_all(&self.pool)
        .await
        .map_err(self.err())?;
        rows.iter()
            .map(|r| {
                let kind: String = r.get("move");
                let prompt: Option<String> = r.get("proposer_prompt");
                let proposal = match prompt {
                    Some(p) => Some(Proposal {
                        prompt: serde_json::from_str(&p)
                            .map_err(|e| self.corrupt(format!("a proposer prompt: {e}")))?,
                        reply: r.get("proposer_reply"),
                        error: r.get("proposer_error"),
                        cost_usd: r.get("proposer_usd"),
                        sends: r.get::<i64, _>("proposer_sends") as u32,
                    }),
                    None => None,
                };
                Ok(Candidate {
                    id: r.get::<i64, _>("candidate") as u32,
                    parent: r.get::<Option<i64>, _>("parent").map(|p| p as u32),
                    generation: r.get::<i64, _>("generation") as u32,
                    kind: kind
                        .parse::<Move>()
                        .map_err(|e| self.corrupt(format!("a candidate's move: {e}")))?,
                    trial_id: r.get("trial_id"),
                    proposal,
                    rejected: r.get("rejected"),
                })
            })
            .collect()
    }

    /// Stores `candidate` as it is made: with its trial (added to the alignment's
    /// experiment in the same transaction), or, for a proposer's call about to be sent,
    /// with its prompt alone. The trial's row, where it has one.
    pub async fn add_candidate(
        &self,
        experiment_id: i64,
        candidate: &Candidate,
        trial: Option<&NewTrial>,
    ) -> Result<Option<TrialRow>> {
        let mut tx = self.pool.begin().await.map_err(self.err())?;
        let trial_id: Option<i64> = match trial {
            Some(t) => Some(
                sqlx::query(
                    "INSERT INTO trials (experiment_id, trial_idx, params, template_hash, model_path, model_sha256, examples, judge_identity)
                     VALUES (?1, (SELECT COALESCE(MAX(trial_idx) + 1, 0) FROM trials WHERE experiment_id = ?1), ?2, ?3, ?4, ?5, ?6, ?7)
                     RETURNING id",
                )
                .bind(experiment_id)
                .bind(serde_json::to_string(&t.params).expect("params serialise"))
                .bind(&t.template_hash)
                .bind(&t.model_path)
                .bind(&t.model_sha256)
                .bind(serde_json::to_string(&t.examples).expect("ids serialise"))
                .bind(&t.judge_identity)
                .fetch_one(&mut *tx)
                .await
                .map_err(self.err())?
                .get(0),
            ),
            None => candidate.trial_id,
        };
        let prompt = candidate
            .proposal
            .as_ref()
            .map(|p| serde_json::to_string(&p.prompt).expect("messages serialise"));
        sqlx::query(
            "INSERT OR REPLACE INTO align_candidates
             (experiment_id, candidate, parent, generation, move, trial_id, proposer_prompt, proposer_reply, proposer_error, rejected, proposer_usd, proposer_sends)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        )
        .bind(experiment_id)
        .bind(i64::from(candidate.id))
        .bind(candidate.parent.map(i64::from))
        .bind(i64::from(candidate.generation))
        .bind(candidate.kind.name())
        .bind(trial_id)
        .bind(prompt)
        .bind(candidate.proposal.as_ref().and_then(|p| p.reply.clone()))
        .bind(candidate.proposal.as_ref().and_then(|p| p.error.clone()))
        .bind(&candidate.rejected)
        .bind(candidate.proposal.as_ref().and_then(|p| p.cost_usd))
        .bind(candidate.proposal.as_ref().map_or(0, |p| i64::from(p.sends)))
        .execute(&mut *tx)
        .await
        .map_err(self.err())?;
        let row = match trial_id {
            Some(id) => {
                let r = sqlx::query("SELECT * FROM trials WHERE id = ?")
                    .bind(id)
                    .fetch_one(&mut *tx)
                    .await
                    .map_err(self.err())?;
                Some(rows::trial(&r).map_err(|e| self.corrupt(e))?)
            }
            None => None,
        };
        tx.commit().await.map_err(self.err())?;
        Ok(row)
    }

    /// The calls the alignment's trials made: a generated verdict's call each, and an
    /// exact pass one per prompt of a family: a candidate and its sampling moves, which
    /// are judged together, from the same passes. Unlike [`Store::spent`], a prompt two
    /// families share counts twice: they were judged apart, each with its own pass (as a
    /// debiased child shows its parent's prompts in one of its orders).
    pub async fn calls_made(&self, experiment_id: i64) -> Result<u64> {
        let row = sqlx::query(
            "SELECT
               (SELECT COUNT(*) FROM verdicts v JOIN trials t ON t.id = v.trial_id
                WHERE t.experiment_id = ?1 AND v.cache_hit = 0 AND v.exact = 0)
             + (SELECT COUNT(DISTINCT COALESCE(p.trial_id, t.id) || ' ' || v.prompt_hash)
                FROM verdicts v
                JOIN trials t ON t.id = v.trial_id
                LEFT JOIN align_candidates c
                  ON c.experiment_id = ?1 AND c.trial_id = t.id AND c.move = 'sampling'
                LEFT JOIN align_candidates p
                  ON p.experiment_id = ?1 AND p.candidate = c.parent
                WHERE t.experiment_id = ?1 AND v.cache_hit = 0 AND v.exact = 1) AS calls",
        )
        .bind(experiment_id)
        .fetch_one(&self.pool)
        .await
        .map_err(self.err())?;
        Ok(row.get::<i64, _>("calls") as u64)
    }

    /// The failed calls stored for `trial_ids` (each to be sent again).
    pub async fn failed_calls(&self, trial_ids: &[i64]) -> Result<u64> {
        let mut n = 0;
        for id in trial_ids {
            let row = sqlx::query(
                "SELECT COUNT(*) FROM verdicts WHERE trial_id = ? AND error IS NOT NULL",
            )
            .bind(id)
            .fetch_one(&self.pool)
            .await
            .map_err(self.err())?;
            n += row.get::<i64, _>(0) as u64;
        }
        Ok(n)
    }

    /// Counts `n` more failed calls of the alignment as sent again.
    pub async fn add_retried(&self, experiment_id: i64, n: u64) -> Result<()> {
        sqlx::query(
            "INSERT INTO align_retries (experiment_id, calls) VALUES (?1, ?2)
             ON CONFLICT (experiment_id) DO UPDATE SET calls = calls + ?2",
        )
        .bind(experiment_id)
        .bind(n as i64)
        .execute(&self.pool)
        .await
        .map_err(self.err())?;
        Ok(())
    }

    /// Failed calls of the alignment sent again so far.
    pub async fn retried(&self, experiment_id: i64) -> Result<u64> {
        let row = sqlx::query(
            "SELECT COALESCE(SUM(calls), 0) FROM align_retries WHERE experiment_id = ?",
        )
        .bind(experiment_id)
        .fetch_one(&self.pool)
        .await
        .map_err(self.err())?;
        Ok(row.get::<i64, _>(0) as u64)
    }

    /// Keeps `outcome` as the alignment's latest.
    pub async fn set_align_outcome(
        &self,
        experiment_id: i64,
        outcome: &AlignOutcome,
    ) -> Result<()> {
        sqlx::query("INSERT OR REPLACE INTO align_outcomes (experiment_id, outcome) VALUES (?, ?)")
            .bind(experiment_id)
            .bind(serde_json::to_string(outcome).expect("an outcome serialises"))
            .execute(&self.pool)
            .await
            .map_err(self.err())?;
        Ok(())
    }

    /// The outcome of the latest run of the alignment named `experiment`; none where it
    /// is not an alignment, or no run of it has ended yet.
    pub async fn align_outcome(&self, experiment: &str) -> Result<Option<AlignOutcome>> {
        let row = sqlx::query(
            "SELECT o.outcome FROM align_outcomes o JOIN experiments e ON e.id = o.experiment_id
             WHERE e.name = ?",
        )
        .bind(experiment)
        .fetch_optional(&self.pool)
        .await
        .map_err(self.err())?;
        row.map(|r| {
            serde_json::from_str(&r.get::<String, _>(0))
                .map_err(|e| self.corrupt(format!("an alignment's outcome: {e}")))
        })
        .transpose()
    }

    /// Copies `from`'s verdicts to trial `to` (the same judge, in another experiment): what
    /// it judged is not judged again. The copies are marked as answered from a cache, so
    /// that no budget counts them as calls made.
    pub async fn copy_verdicts(&self, from: i64, to: i64) -> Result<u64> {
        let columns: Vec<String> = sqlx::query("SELECT name FROM pragma_table_info('verdicts')")
            .fetch_all(&self.pool)
            .await
            .map_err(self.err())?
            .iter()
            .map(|r| r.get::<String, _>(0))
            .filter(|c| c != "id" && c != "trial_id")
            .collect();
        let list = columns.join(", ");
        let selected = columns
            .iter()
            .map(|c| if c == "cache_hit" { "1" } else { c.as_str() })
            .collect::<Vec<_>>()
            .join(", ");
        let done = sqlx::query(&format!(
            "INSERT OR IGNORE INTO verdicts (trial_id, {list}) SELECT ?, {selected} FROM verdicts WHERE trial_id = ?"
        ))
        .bind(to)
        .bind(from)
        .execute(&self.pool)
        .await
        .map_err(self.err())?;
        Ok(done.rows_affected())
    }
}
