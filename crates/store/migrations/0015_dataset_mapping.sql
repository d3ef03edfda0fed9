-- The mapping a dataset was imported through (a mapping file's TOML); NULL: the file was in
-- Judgelab's own fields.
ALTER TABLE datasets ADD COLUMN mapping TEXT;
