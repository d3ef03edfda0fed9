-- Exact verdicts: read from the first output token's exact distribution under the trial's
-- temperature and top_p (one forward pass serves every trial of a sweep), rather than
-- sampled by generating.
ALTER TABLE verdicts ADD COLUMN exact INTEGER NOT NULL DEFAULT 0;  -- 1: drawn from `distribution`
ALTER TABLE verdicts ADD COLUMN distribution TEXT;  -- JSON {label: p, ..., "failed": p}, exact rows only
