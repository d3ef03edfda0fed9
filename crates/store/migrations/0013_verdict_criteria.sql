-- Rubrics (issue 36): a call may ask every criterion a rubric template declares, or one of
-- them (a checklist's call per criterion), so a verdict is keyed by the criterion its call
-- asks too: '' for a call that asks every criterion or the item's one label, else the
-- criterion's name. What it answered per criterion is `criteria`, JSON
-- {"criterion": {"label": "2"} | {"failure": "no_label"}}, NULL for a call on the item's one
-- label. SQLite cannot change a UNIQUE constraint in place: the table is rebuilt, every row
-- kept (all earlier verdicts were on the item's one label).
CREATE TABLE verdicts_new (
    id                INTEGER PRIMARY KEY,
    trial_id          INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
    item_id           TEXT NOT NULL,
    repeat            INTEGER NOT NULL,
    swapped           INTEGER NOT NULL DEFAULT 0,  -- 1: answer B was shown first
    criterion         TEXT NOT NULL DEFAULT '',    -- the criterion the call asks; '': all or none
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
    cost_usd          REAL,                -- NULL: no price for the model
    cached_tokens     INTEGER,             -- prompt tokens the server had cached
    attempts          INTEGER NOT NULL DEFAULT 1,
    logprobs          TEXT,                -- JSON, as the server sent it
    cache_hit         INTEGER NOT NULL DEFAULT 0,  -- 1: answered from response_cache
    exact             INTEGER NOT NULL DEFAULT 0,  -- 1: drawn from `distribution`
    distribution      TEXT,                -- JSON {label: p, ..., "failed": p}, exact rows only
    endpoint          TEXT,                -- the endpoint that answered a remote call
    belief            TEXT,                -- JSON, the model's own distribution over the verdicts
    criteria          TEXT,                -- JSON, the call's verdict per criterion it asks
    UNIQUE (trial_id, item_id, repeat, swapped, criterion)
);
INSERT INTO verdicts_new (id, trial_id, item_id, repeat, swapped, criterion, seed, prompt_hash,
                          raw_output, verdict, failure_kind, prompt_tokens, completion_tokens,
                          latency_ms, ttft_ms, error, created_at, cost_usd, cached_tokens,
                          attempts, logprobs, cache_hit, exact, distribution, endpoint, belief,
                          criteria)
SELECT id, trial_id, item_id, repeat, swapped, '', seed, prompt_hash, raw_output, verdict,
       failure_kind, prompt_tokens, completion_tokens, latency_ms, ttft_ms, error, created_at,
       cost_usd, cached_tokens, attempts, logprobs, cache_hit, exact, distribution, endpoint,
       belief, NULL
FROM verdicts;
DROP TABLE verdicts;
ALTER TABLE verdicts_new RENAME TO verdicts;
