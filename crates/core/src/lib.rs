//! Judgelab's domain: datasets, templates, experiments and their sweeps, verdicts and metrics.
//!
//! Everything here is pure: no IO beyond parsing bytes handed in, no async runtime, no
//! database, no HTTP, no UI. The `Judge` trait is the one seam through which the engine
//! reaches a model; `llama` (and later `openai`) implement it.

pub mod align;
pub mod annotation;
pub mod card;
pub mod composed;
pub mod cut;
pub mod dataset;
pub mod experiment;
pub mod hash;
pub mod judge;
pub mod load;
pub mod metrics;
pub mod names;
pub mod normal;
pub mod panel;
pub mod parallel;
pub mod pareto;
pub mod quantization;
pub mod race;
pub mod record;
#[cfg(test)]
mod reference;
pub mod results;
pub mod rng;
pub mod rubric;
pub mod sampling;
pub mod selection;
pub mod split;
pub mod sweep;
pub mod template;
pub mod trust;
pub mod verdict;

pub use dataset::{Choice, Dataset, Item, ItemText, Label, Task};
pub use experiment::{Constraint, Experiment, Order, TrialParams};
pub use judge::{Judge, JudgeRequest, JudgeResponse, Message, Sampling};
pub use template::Template;
pub use verdict::{FailureKind, OutputKind, Verdict};

/// File name of the embedded default judge model inside the user cache directory.
pub const DEFAULT_MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
/// sha256 of the embedded default judge model (SmolLM2-135M-Instruct, Q4_1 GGUF).
pub const DEFAULT_MODEL_SHA256: &str =
    "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";
