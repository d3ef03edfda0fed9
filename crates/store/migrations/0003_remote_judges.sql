-- Remote judges: what a call cost, how many attempts it took, what the server cached and
-- its log-probabilities; and a cache of responses so that no call is paid for twice.
ALTER TABLE verdicts ADD COLUMN cost_usd REAL;              -- NULL: no price for the model
ALTER TABLE verdicts ADD COLUMN cached_tokens INTEGER;      -- prompt tokens the server had cached
ALTER TABLE verdicts ADD COLUMN attempts INTEGER NOT NULL DEFAULT 1;
ALTER TABLE verdicts ADD COLUMN logprobs TEXT;              -- JSON, as the server sent it
ALTER TABLE verdicts ADD COLUMN cache_hit INTEGER NOT NULL DEFAULT 0;  -- 1: answered from response_cache

-- Keyed by a hash of (endpoint, model, messages, sampling parameters, seed, repeat).
CREATE TABLE response_cache (
    key        TEXT PRIMARY KEY,
    completion TEXT NOT NULL,                               -- JSON of the completion
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
);
