-- The endpoint that answered a remote call: a judge may be served by a pool of endpoints
-- (`base_url = [...]`), and which one answered is part of the verdict's audit trail.
ALTER TABLE verdicts ADD COLUMN endpoint TEXT;
