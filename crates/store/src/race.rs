//! What choosing among trials leaves in the store: a race's standings after each round
//! (its drops among them) and the trials chosen to judge the test split.

use judgelab_core::race::RoundStanding;
use sqlx::Row;

use crate::{Result, Store};

impl Store {
    /// Every stored standing of the experiment's race, by round, then trial order.
    pub async fn race_standings(&self, experiment_id: i64) -> Result<Vec<RoundStanding>> {
        let rows = sqlx::query(
            "SELECT s.* FROM race_standings s JOIN trials t ON t.id = s.trial_id
             WHERE t.experiment_id = ? ORDER BY s.round, t.trial_idx",
        )
        .bind(experiment_id)
        .fetch_all(&self.pool)
        .await
        .map_err(self.err())?;
        Ok(rows
            .iter()
            .map(|r| RoundStanding {
                trial_id: r.get("trial_id"),
                round: r.get::<i64, _>("round") as u32,
                n_items: r.get::<i64, _>("n_items") as usize,
                leader: r.get::<i64, _>("leader") != 0,
                value: r.get("value"),
                difference: r.get("difference"),
                std_error: r.get("std_error"),
                p_value: r.get("p_value"),
                threshold: r.get("threshold"),
                dropped: r.get::<i64, _>("dropped") != 0,
            })
            .collect())
    }

    /// Records round `round` of the experiment's race: its standings and that it is
    /// decided, in one transaction, so that a run killed meanwhile decides it again.
    pub async fn record_round(
        &self,
        experiment_id: i64,
        round: u32,
        standings: &[RoundStanding],
    ) -> Result<()> {
        let mut tx = self.pool.begin().await.map_err(self.err())?;
        for s in standings {
            sqlx::query(
                "INSERT OR REPLACE INTO race_standings
                 (trial_id, round, n_items, leader, value, difference, std_error, p_value, threshold, dropped)
                 VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            )
            .bind(s.trial_id)
            .bind(i64::from(s.round))
            .bind(s.n_items as i64)
            .bind(i64::from(s.leader))
            .bind(s.value)
            .bind(s.difference)
            .bind(s.std_error)
            .bind(s.p_value)
            .bind(s.threshold)
            .bind(i64::from(s.dropped))
            .execute(&mut *tx)
            .await
            .map_err(self.err())?;
        }
        sqlx::query("UPDATE experiments SET race_rounds = ? WHERE id = ?")
            .bind(i64::from(round))
            .bind(experiment_id)
            .execute(&mut *tx)
            .await
            .map_err(self.err())?;
        tx.commit().await.map_err(self.err())
    }

    /// What the experiment's stored calls spent: model calls (answers from the response
    /// cache left out, and an exact group's verdicts counted once per forward pass: one per
    /// model and prompt) and dollars.
    pub async fn spent(&self, experiment_id: i64) -> Result<(u64, f64)> {
        let row = sqlx::query(
            "SELECT
               (SELECT COUNT(*) FROM verdicts v JOIN trials t ON t.id = v.trial_id
                WHERE t.experiment_id = ?1 AND v.cache_hit = 0 AND v.exact = 0)
             + (SELECT COUNT(DISTINCT t.model_path || ' ' || v.prompt_hash) FROM verdicts v
                JOIN trials t ON t.id = v.trial_id
                WHERE t.experiment_id = ?1 AND v.cache_hit = 0 AND v.exact = 1) AS calls,
               (SELECT COALESCE(SUM(v.cost_usd), 0.0) FROM verdicts v JOIN trials t ON t.id = v.trial_id
                WHERE t.experiment_id = ?1 AND v.cache_hit = 0 AND v.exact = 0)
             + (SELECT COALESCE(SUM(usd), 0.0) FROM
                 (SELECT MAX(v.cost_usd) AS usd FROM verdicts v JOIN trials t ON t.id = v.trial_id
                  WHERE t.experiment_id = ?1 AND v.cache_hit = 0 AND v.exact = 1
                  GROUP BY t.model_path, v.prompt_hash)) AS usd",
        )
        .bind(experiment_id)
        .fetch_one(&self.pool)
        .await
        .map_err(self.err())?;
        Ok((row.get::<i64, _>("calls") as u64, row.get("usd")))
    }

    /// Records which trials judge the test split and why (`roles`: trial id and role),
    /// and that the choice is made.
    pub async fn record_selection(
        &self,
        experiment_id: i64,
        roles: &[(i64, String)],
    ) -> Result<()> {
        let mut tx = self.pool.begin().await.map_err(self.err())?;
        for (trial_id, role) in roles {
            sqlx::query("UPDATE trials SET test_role = ? WHERE id = ? AND experiment_id = ?")
                .bind(role)
                .bind(trial_id)
                .bind(experiment_id)
                .execute(&mut *tx)
                .await
                .map_err(self.err())?;
        }
        sqlx::query("UPDATE experiments SET selected = 1 WHERE id = ?")
            .bind(experiment_id)
            .execute(&mut *tx)
            .await
            .map_err(self.err())?;
        tx.commit().await.map_err(self.err())
    }
}
