-- A pairwise item may be judged with its answers swapped (the sweep's `order` axis), so a
-- verdict is keyed by its order too. SQLite cannot change a UNIQUE constraint in place: the
-- table is rebuilt, every row kept (all earlier verdicts showed the answers in order).
CREATE TABLE verdicts_new (
    id                INTEGER PRIMARY KEY,
    trial_id          INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
    item_id           TEXT NOT NULL,
    repeat            INTEGER NOT NULL,
    swapped           INTEGER NOT NULL DEFAULT 0,  -- 1: answer B was shown first
    seed              INTEGER NOT NULL,
    prompt_hash       TEXT NOT NULL,       -- sha256 of the rendered messages (JSON)
    raw_output        TEXT,                -- as the judge wrote it
    verdict           TEXT,                -- canonical label in the dataset's frame; NULL on failure
    failure_kind      TEXT,                -- empty | no_label | truncated | out_of_range | prompt_too_long
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    latency_ms        REAL,
    ttft_ms           REAL,
    error             TEXT,                -- the call failed; retried on resume
    created_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    UNIQUE (trial_id, item_id, repeat, swapped)
);
INSERT INTO verdicts_new (id, trial_id, item_id, repeat, swapped, seed, prompt_hash, raw_output,
                          verdict, failure_kind, prompt_tokens, completion_tokens, latency_ms,
                          ttft_ms, error, created_at)
SELECT id, trial_id, item_id, repeat, 0, seed, prompt_hash, raw_output, verdict, failure_kind,
       prompt_tokens, completion_tokens, latency_ms, ttft_ms, error, created_at
FROM verdicts;
DROP TABLE verdicts;
ALTER TABLE verdicts_new RENAME TO verdicts;
