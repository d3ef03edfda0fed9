-- Alignments (issue 51). `judgelab align` searches for a better judge from one trial; its
-- candidates are trials of an experiment of their own (the alignment), with its source's
-- few-shot pool, dev and test splits. A row here says how a candidate was made. A
-- proposer's call is stored before it is sent (its prompt, no reply yet), so that a run
-- killed meanwhile counts it as spent.
CREATE TABLE align_candidates (
    experiment_id   INTEGER NOT NULL REFERENCES experiments(id) ON DELETE CASCADE,
    candidate       INTEGER NOT NULL,         -- from 0, the start
    parent          INTEGER,                  -- NULL for the start
    generation      INTEGER NOT NULL,         -- 0 for the start
    move            TEXT NOT NULL,            -- core::align::Move
    trial_id        INTEGER REFERENCES trials(id) ON DELETE CASCADE,
                                              -- NULL: no trial (rejected, or its proposer
                                              -- call not answered yet)
    proposer_prompt TEXT,                     -- JSON: the messages sent
    proposer_reply  TEXT,
    proposer_error  TEXT,                     -- the proposer's call failed
    rejected        TEXT,                     -- why its reply made no candidate
    proposer_usd    REAL,
    proposer_sends  INTEGER NOT NULL DEFAULT 0,  -- times its call was sent: a call in
                                              -- flight when a run stopped is sent again
    PRIMARY KEY (experiment_id, candidate)
);
