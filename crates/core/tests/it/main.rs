//! judgelab-core's integration tests: the parsers fuzzed.

mod fuzz;
