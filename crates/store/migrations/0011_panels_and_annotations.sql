-- Panels and a labelling queue (issue 17).

-- Panels added to an experiment after its file was written (`judgelab panel`, the app's
-- results view). A panel of the file's own `[[panels]]` lives in its spec, and wins over
-- one of the same name here.
CREATE TABLE panels (
    experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    spec          TEXT NOT NULL,             -- JSON: core::experiment::PanelSpec
    created_at    TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (experiment_id, name)
);

-- Labels given in the labelling queue, one per item and annotator (a new one replaces the
-- annotator's own). They never touch items.human_label, the dataset's original label.
CREATE TABLE annotations (
    dataset_id  INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    item_id     TEXT NOT NULL,
    annotator   TEXT NOT NULL,
    label       TEXT NOT NULL,               -- canonical text, as items.human_label
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (dataset_id, item_id, annotator)
);
