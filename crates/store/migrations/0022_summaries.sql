-- Summaries written for `input_strategy = "summary"`, once each and reused by every trial,
-- run and experiment that shows the same input to the same summariser at the same budget:
-- `key` hashes the summariser's identity and the request it was sent (prompt and budget).
CREATE TABLE summaries (
    key TEXT PRIMARY KEY,
    summariser TEXT NOT NULL,
    max_tokens INTEGER NOT NULL,
    input_sha256 TEXT NOT NULL,
    summary TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    latency_ms REAL,
    cost_usd REAL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);

-- What writing the summaries an item's inputs show cost, carried by the first call of each
-- (trial, item): counted once per item in the trial's tokens and cost. NULL: none.
ALTER TABLE verdicts ADD COLUMN summary_calls INTEGER;
ALTER TABLE verdicts ADD COLUMN summary_prompt_tokens INTEGER;
ALTER TABLE verdicts ADD COLUMN summary_completion_tokens INTEGER;
ALTER TABLE verdicts ADD COLUMN summary_cost_usd REAL;
