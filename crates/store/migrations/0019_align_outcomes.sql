-- The outcome of an alignment's latest run (`judgelab align`), as JSON
-- (`core::align::outcome::AlignOutcome`): what the report's "Alignment" section reads. A
-- run that resumes or continues the search writes it again.
CREATE TABLE align_outcomes (
    experiment_id   INTEGER PRIMARY KEY REFERENCES experiments(id) ON DELETE CASCADE,
    outcome         TEXT NOT NULL
);
