//! Writing a dataset: its items arrive one by one (read from a file as a stream) and go to
//! the database in batches, all in one transaction, so that an import is all or nothing and
//! holds no more than a batch.

use judgelab_core::dataset::Header;
use judgelab_core::{Dataset, Item, Label};
use sqlx::{Row, Sqlite};

use crate::{DatasetInfo, Result, Store, StoreError};

/// Items written per statement (11 values each, well inside SQLite's 32,766).
const BATCH: usize = 256;

/// A dataset being written; dropped before [`DatasetWriter::commit`], nothing of it is kept.
pub struct DatasetWriter<'s> {
    store: &'s Store,
    tx: sqlx::Transaction<'static, Sqlite>,
    info: DatasetInfo,
    batch: Vec<Item<Option<Label>>>,
    /// Items written or batched.
    n: usize,
}

impl Store {
    /// Starts writing the dataset `name` (refused if a dataset has that name), read from
    /// `source` through `mapping` (a mapping file's TOML) where it was.
    pub async fn begin_dataset(
        &self,
        name: &str,
        source: &str,
        content_hash: &str,
        mapping: Option<&str>,
    ) -> Result<DatasetWriter<'_>> {
        if let Some(existing) = self.dataset_by_name(name).await? {
            return Err(StoreError::NameTaken {
                name: name.to_string(),
                source_path: existing.source,
            });
        }
        let mut tx = self.pool.begin().await.map_err(self.err())?;
        // Its task and counts are known at the end: written then, in the same transaction.
        let id: i64 = sqlx::query(
            "INSERT INTO datasets (name, task, content_hash, source, n_items, criteria, mapping) VALUES (?, '', ?, ?, 0, '[]', ?) RETURNING id",
        )
        .bind(name)
        .bind(content_hash)
        .bind(source)
        .bind(mapping)
        .fetch_one(&mut *tx)
        .await
        .map_err(self.err())?
        .get(0);
        Ok(DatasetWriter {
            store: self,
            tx,
            info: DatasetInfo {
                id,
                name: name.to_string(),
                task: judgelab_core::Task::Pairwise,
                content_hash: content_hash.to_string(),
                source: source.to_string(),
                n_items: 0,
                n_unlabelled: 0,
                n_with_reference: 0,
                criteria: Vec::new(),
                mapping: mapping.map(str::to_string),
            },
            batch: Vec::with_capacity(BATCH),
            n: 0,
        })
    }

    /// Inserts a dataset held whole and all its items (the labelled first), in one
    /// transaction: all or nothing.
    pub async fn insert_dataset(&self, dataset: &Dataset) -> Result<DatasetInfo> {
        let mut writer = self
            .begin_dataset(&dataset.name, &dataset.source, &dataset.content_hash, None)
            .await?;
        let labelled = dataset.items.iter().map(|i| {
            let label = i.human_label;
            i.clone().with_label(Some(label))
        });
        let unlabelled = dataset
            .unlabelled
            .iter()
            .map(|i| i.clone().with_label(None));
        for item in labelled.chain(unlabelled) {
            writer.push(item).await?;
        }
        let header = Header {
            task: dataset.task,
            criteria: dataset.criteria.clone(),
        };
        writer.commit(&header).await
    }
}

impl DatasetWriter<'_> {
    /// Adds the next item (its human label, or none).
    pub async fn push(&mut self, item: Item<Option<Label>>) -> Result<()> {
        let given = item.reference.as_deref().is_some_and(|r| !r.is_empty());
        self.info.n_with_reference += given as usize;
        match item.human_label {
            Some(_) => self.info.n_items += 1,
            None => self.info.n_unlabelled += 1,
        }
        self.batch.push(item);
        if self.batch.len() == BATCH {
            self.flush().await?;
        }
        Ok(())
    }

    async fn flush(&mut self) -> Result<()> {
        if self.batch.is_empty() {
            return Ok(());
        }
        let mut insert = sqlx::QueryBuilder::<Sqlite>::new(
            "INSERT INTO items (dataset_id, item_idx, item_id, question, answer_a, answer_b, answer, reference, human_label, human_labels, meta) ",
        );
        let (id, first) = (self.info.id, self.n);
        insert.push_values(self.batch.drain(..).enumerate(), |mut row, (i, item)| {
            let labels = (!item.human_labels.is_empty()).then(|| {
                let by_criterion: std::collections::BTreeMap<&String, String> = item
                    .human_labels
                    .iter()
                    .map(|(c, l)| (c, l.to_text()))
                    .collect();
                serde_json::to_string(&by_criterion).expect("labels serialise")
            });
            row.push_bind(id)
                .push_bind((first + i) as i64)
                .push_bind(item.id)
                .push_bind(item.question)
                .push_bind(item.answer_a)
                .push_bind(item.answer_b)
                .push_bind(item.answer)
                .push_bind(item.reference)
                .push_bind(item.human_label.map(|l| l.to_text()))
                .push_bind(labels)
                .push_bind(item.meta.to_string());
        });
        let n = insert
            .build()
            .execute(&mut *self.tx)
            .await
            .map_err(self.store.err())?
            .rows_affected();
        self.n += n as usize;
        Ok(())
    }

    /// Writes the rest and what the whole says (`header`), and commits: the dataset is
    /// kept.
    pub async fn commit(mut self, header: &Header) -> Result<DatasetInfo> {
        self.flush().await?;
        let task = serde_json::to_string(&header.task).expect("task serialises");
        let criteria = serde_json::to_string(&header.criteria).expect("criteria serialise");
        sqlx::query("UPDATE datasets SET task = ?, n_items = ?, criteria = ? WHERE id = ?")
            .bind(&task)
            .bind(self.info.n_items as i64)
            .bind(&criteria)
            .bind(self.info.id)
            .execute(&mut *self.tx)
            .await
            .map_err(self.store.err())?;
        self.tx.commit().await.map_err(self.store.err())?;
        Ok(DatasetInfo {
            task: header.task,
            criteria: header.criteria.clone(),
            ..self.info
        })
    }
}
