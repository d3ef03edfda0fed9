-- Where a local trial's calls were computed (`CPU`, `CUDA0 NVIDIA H200: 30 of 30 layers`),
-- as its judge reported when it was loaded; devices of a run resumed elsewhere are joined
-- with "; ". NULL: a remote trial, or one stored before devices were.
ALTER TABLE trials ADD COLUMN device TEXT;
