//! Panels added to a stored experiment after its file was written (the file's own
//! `[[panels]]` live in its spec).

use judgelab_core::experiment::PanelSpec;
use sqlx::Row;

use crate::{Result, Store};

impl Store {
    /// The panels added to the experiment, oldest first.
    pub async fn panels(&self, experiment_id: i64) -> Result<Vec<PanelSpec>> {
        let rows = sqlx::query(
            "SELECT name, spec FROM panels WHERE experiment_id = ? ORDER BY created_at, rowid",
        )
        .bind(experiment_id)
        .fetch_all(&self.pool)
        .await
        .map_err(self.err())?;
        rows.iter()
            .map(|r| {
                let name: String = r.get("name");
                serde_json::from_str(r.get("spec"))
                    .map_err(|e| self.corrupt(format!("panel {name:?}: {e}")))
            })
            .collect()
    }

    /// Adds `panel` to the experiment, or replaces the one of its name.
    pub async fn save_panel(&self, experiment_id: i64, panel: &PanelSpec) -> Result<()> {
        let spec = serde_json::to_string(panel).expect("a panel serialises");
        sqlx::query(
            "INSERT INTO panels (experiment_id, name, spec) VALUES (?, ?, ?)
             ON CONFLICT (experiment_id, name) DO UPDATE SET spec = excluded.spec",
        )
        .bind(experiment_id)
        .bind(&panel.name)
        .bind(spec)
        .execute(&self.pool)
        .await
        .map_err(self.err())?;
        Ok(())
    }

    /// Removes the experiment's added panel `name`; whether there was one.
    pub async fn delete_panel(&self, experiment_id: i64, name: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM panels WHERE experiment_id = ? AND name = ?")
            .bind(experiment_id)
            .bind(name)
            .execute(&self.pool)
            .await
            .map_err(self.err())?;
        Ok(done.rows_affected() > 0)
    }
}
