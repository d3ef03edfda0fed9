-- Items may carry no human label (issue 16): an estimate judges them and corrects the judge
-- with the labelled items; no metric scores them. SQLite cannot drop a NOT NULL
-- constraint, so the table is made anew with the same rows. Unlabelled rows follow the
-- labelled ones in item_idx.
CREATE TABLE items_new (
    dataset_id   INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    item_idx     INTEGER NOT NULL,
    item_id      TEXT NOT NULL,
    question     TEXT NOT NULL,
    answer_a     TEXT,
    answer_b     TEXT,
    answer       TEXT,
    reference    TEXT,
    human_label  TEXT,                     -- NULL: no human label
    meta         TEXT NOT NULL,            -- JSON
    PRIMARY KEY (dataset_id, item_idx),
    UNIQUE (dataset_id, item_id)
);
INSERT INTO items_new (dataset_id, item_idx, item_id, question, answer_a, answer_b, answer, reference, human_label, meta)
    SELECT dataset_id, item_idx, item_id, question, answer_a, answer_b, answer, reference, human_label, meta FROM items;
DROP TABLE items;
ALTER TABLE items_new RENAME TO items;
