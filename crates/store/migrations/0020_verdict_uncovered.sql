-- A remote judge's exact pass: the probability its server's most likely first tokens left
-- out (at temperature 1), which bounds the error of the verdict's distribution. NULL: a
-- generated verdict, or a local judge's, read from its whole vocabulary.
ALTER TABLE verdicts ADD COLUMN uncovered REAL;
