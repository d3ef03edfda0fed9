//! judgelab-core's integration tests: the parsers fuzzed, and files of other shapes imported.

mod fuzz;
mod imports;
