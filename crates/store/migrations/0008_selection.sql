-- Choosing among trials (issue 15): a test split that only the kept trials judge, and races
-- that drop trials round by round.

-- The test split's item ids (JSON list); NULL: the experiment has none.
ALTER TABLE experiments ADD COLUMN test_items TEXT;
-- Set once the dev split is judged and the trials that judge the test split are chosen.
ALTER TABLE experiments ADD COLUMN selected INTEGER NOT NULL DEFAULT 0;
-- Rounds of a race decided so far.
ALTER TABLE experiments ADD COLUMN race_rounds INTEGER NOT NULL DEFAULT 0;
-- Why the trial judges the test split ('pick', 'indistinguishable', 'best 3'); NULL: it does not.
ALTER TABLE trials ADD COLUMN test_role TEXT;

-- A race's standings after each round: every surviving trial against the round's leader.
-- A trial's drop is its row with dropped = 1: the round, the items judged by then, and the
-- test that dropped it.
CREATE TABLE race_standings (
    trial_id   INTEGER NOT NULL REFERENCES trials(id) ON DELETE CASCADE,
    round      INTEGER NOT NULL,             -- from 1
    n_items    INTEGER NOT NULL,             -- dev items judged by the end of the round
    leader     INTEGER NOT NULL,             -- 1 for the round's leader
    value      REAL,                         -- its selection metric on those items
    difference REAL,                         -- its metric minus the leader's, on shared items
    std_error  REAL,                         -- paired jackknife standard error of the difference
    p_value    REAL,                         -- two-sided t test of the difference
    threshold  REAL,                         -- the p-value Holm asked of it
    dropped    INTEGER NOT NULL,
    PRIMARY KEY (trial_id, round)
);
