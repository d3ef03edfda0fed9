-- A trial with an input budget (`input_max_tokens`): the tokens cut from the inputs the
-- call showed, 0 where none was cut. NULL: a trial without one.
ALTER TABLE verdicts ADD COLUMN input_cut INTEGER;
