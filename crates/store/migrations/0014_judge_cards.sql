-- Judge cards: the card an experiment runs (its definition, JSON), and each trial's judge
-- identity (sha256 of what changes its verdicts; NULL for trials stored before).
ALTER TABLE experiments ADD COLUMN card TEXT;
ALTER TABLE trials ADD COLUMN judge_identity TEXT;
