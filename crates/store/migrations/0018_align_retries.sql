-- Calls a search (`judgelab align`) sent again after they failed: a retry replaces its
-- failed row, so only this count keeps the first send against the budget.
CREATE TABLE align_retries (
    experiment_id   INTEGER PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
    calls           INTEGER NOT NULL DEFAULT 0
);
