-- Concurrency ramps (`judgelab load`) against one trial's configuration: per level, the
-- wall time of its timed requests, and every request made (warm-ups marked).
CREATE TABLE load_ramps (
    id          INTEGER PRIMARY KEY,
    trial_id    INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
    requests    INTEGER NOT NULL,            -- timed requests per level
    warmup      INTEGER NOT NULL,            -- warm-up requests per level
    slo_ms      REAL,                        -- the bound on p99 TTFT the knee keeps
    created_at  TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

CREATE TABLE load_levels (
    ramp_id     INTEGER NOT NULL REFERENCES load_ramps(id) ON DELETE CASCADE,
    concurrency INTEGER NOT NULL,            -- requests in flight
    wall_s      REAL NOT NULL,               -- from the first timed request sent to the last back
    PRIMARY KEY (ramp_id, concurrency)
);

CREATE TABLE load_calls (
    ramp_id           INTEGER NOT NULL REFERENCES load_ramps(id) ON DELETE CASCADE,
    concurrency       INTEGER NOT NULL,
    seq               INTEGER NOT NULL,      -- in the order the requests returned
    warmup            INTEGER NOT NULL,
    item_id           TEXT NOT NULL,
    swapped           INTEGER NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_ms        REAL,                  -- from its first attempt, retries included
    ttft_ms           REAL,
    attempts          INTEGER NOT NULL,
    error             TEXT,
    PRIMARY KEY (ramp_id, concurrency, seq)
);
