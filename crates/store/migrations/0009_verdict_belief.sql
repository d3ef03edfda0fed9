-- How far to trust a judge (issue 16): an exact verdict's confidence is read from the
-- model's own distribution over the verdicts (temperature 1, no top_p, after a grammar's
-- mask), which its trial's sampling distribution (`distribution`) is not: at temperature 0
-- that one is certain of every verdict. Stored as `distribution` is, in the dataset's
-- frame; NULL for generated verdicts and for exact rows written before it was kept.
ALTER TABLE verdicts ADD COLUMN belief TEXT;
