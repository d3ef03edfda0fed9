-- Calls timed alone. A local judge batches a sweep's calls, so the time a batched call
-- took is its batch's; the latency of one request of a trial's configuration is measured
-- on a seeded sample of its calls made one at a time, with nothing of an earlier call
-- reused (concurrency 1). They are timings, not verdicts: what they answered is not scored.
CREATE TABLE timed_calls (
    trial_id          INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
    item_id           TEXT NOT NULL,
    swapped           INTEGER NOT NULL,
    concurrency       INTEGER NOT NULL,          -- requests in flight while it ran
    warmup            INTEGER NOT NULL,          -- 1: the judge's first timed call of a run
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_ms        REAL,
    ttft_ms           REAL,
    attempts          INTEGER NOT NULL,
    error             TEXT,                      -- the call failed: timed again next run
    created_at        TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')),
    PRIMARY KEY (trial_id, item_id, swapped, concurrency, warmup)
);
