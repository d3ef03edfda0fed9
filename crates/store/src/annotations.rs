//! Labels given in the labelling queue, one per item and annotator, beside (never in
//! place of) the dataset's own.

use judgelab_core::annotation::Annotation;
use judgelab_core::Label;
use sqlx::Row;

use crate::{Result, Store};

impl Store {
    /// Every label given of the dataset's items, oldest first.
    pub async fn annotations(&self, dataset_id: i64) -> Result<Vec<Annotation>> {
        let rows = sqlx::query(
            "SELECT item_id, annotator, label, created_at FROM annotations
             WHERE dataset_id = ? ORDER BY created_at, rowid",
        )
        .bind(dataset_id)
        .fetch_all(&self.pool)
        .await
        .map_err(self.err())?;
        rows.iter()
            .map(|r| {
                let text: String = r.get("label");
                let label = Label::from_text(&text).ok_or_else(|| {
                    self.corrupt(format!("annotation label {text:?} is not a label"))
                })?;
                Ok(Annotation {
                    item_id: r.get("item_id"),
                    annotator: r.get("annotator"),
                    label,
                    created_at: r.get("created_at"),
                })
            })
            .collect()
    }

    /// Whether the dataset has an item `item_id` (with a label or without).
    pub async fn has_item(&self, dataset_id: i64, item_id: &str) -> Result<bool> {
        let found = sqlx::query("SELECT 1 FROM items WHERE dataset_id = ? AND item_id = ?")
            .bind(dataset_id)
            .bind(item_id)
            .fetch_optional(&self.pool)
            .await
            .map_err(self.err())?;
        Ok(found.is_some())
    }

    /// Stores `annotator`'s `label` of the item, replacing their earlier one (its time is
    /// the new label's).
    pub async fn annotate(
        &self,
        dataset_id: i64,
        item_id: &str,
        annotator: &str,
        label: Label,
    ) -> Result<()> {
        sqlx::query(
            "INSERT INTO annotations (dataset_id, item_id, annotator, label) VALUES (?, ?, ?, ?)
             ON CONFLICT (dataset_id, item_id, annotator) DO UPDATE SET
                 label = excluded.label, created_at = excluded.created_at",
        )
        .bind(dataset_id)
        .bind(item_id)
        .bind(annotator)
        .bind(label.to_text())
        .execute(&self.pool)
        .await
        .map_err(self.err())?;
        Ok(())
    }

    /// Removes `annotator`'s label of the item (an undo); whether there was one.
    pub async fn unannotate(
        &self,
        dataset_id: i64,
        item_id: &str,
        annotator: &str,
    ) -> Result<bool> {
        let done = sqlx::query(
            "DELETE FROM annotations WHERE dataset_id = ? AND item_id = ? AND annotator = ?",
        )
        .bind(dataset_id)
        .bind(item_id)
        .bind(annotator)
        .execute(&self.pool)
        .await
        .map_err(self.err())?;
        Ok(done.rows_affected() > 0)
    }
}
