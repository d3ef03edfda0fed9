-- Judgelab store, schema version 1.

CREATE TABLE datasets (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    task         TEXT NOT NULL,            -- JSON of core::Task
    content_hash TEXT NOT NULL UNIQUE,     -- sha256 of the imported file
    source       TEXT NOT NULL,
    n_items      INTEGER NOT NULL,
    imported_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE items (
    dataset_id   INTEGER NOT NULL REFERENCES datasets(id) ON DELETE CASCADE,
    item_idx     INTEGER NOT NULL,
    item_id      TEXT NOT NULL,
    question     TEXT NOT NULL,
    answer_a     TEXT,
    answer_b     TEXT,
    answer       TEXT,
    reference    TEXT,
    human_label  TEXT NOT NULL,
    meta         TEXT NOT NULL,            -- JSON
    PRIMARY KEY (dataset_id, item_idx),
    UNIQUE (dataset_id, item_id)
);

CREATE TABLE templates (
    hash         TEXT PRIMARY KEY,         -- sha256 of source
    name         TEXT NOT NULL,
    source       TEXT NOT NULL
);

CREATE TABLE experiments (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL UNIQUE,
    content_hash TEXT NOT NULL,            -- experiment + dataset + templates + models
    spec         TEXT NOT NULL,            -- the experiment file as written
    dataset_id   INTEGER NOT NULL REFERENCES datasets(id),
    pool         TEXT NOT NULL,            -- JSON array of few-shot pool item ids
    judged       TEXT NOT NULL,            -- JSON array of judged item ids
    created_at   TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE trials (
    id            INTEGER PRIMARY KEY,
    experiment_id INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    trial_idx     INTEGER NOT NULL,
    params        TEXT NOT NULL,           -- JSON of core::TrialParams
    template_hash TEXT NOT NULL REFERENCES templates(hash),
    model_path    TEXT NOT NULL,
    model_sha256  TEXT,
    examples      TEXT NOT NULL,           -- JSON array of few-shot example item ids
    UNIQUE (experiment_id, trial_idx)
);

CREATE TABLE verdicts (
    id                INTEGER PRIMARY KEY,
    trial_id          INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
    item_id           TEXT NOT NULL,
    repeat            INTEGER NOT NULL,
    seed              INTEGER NOT NULL,
    prompt_hash       TEXT NOT NULL,       -- sha256 of the rendered messages (JSON)
    raw_output        TEXT,
    verdict           TEXT,                -- canonical label; NULL on failure
    failure_kind      TEXT,                -- empty | no_label | truncated | out_of_range
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    latency_ms        REAL,
    ttft_ms           REAL,
    error             TEXT,                -- the call failed; retried on resume
    created_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (trial_id, item_id, repeat)
);
