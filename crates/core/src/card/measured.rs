//! What a judge card says was measured of its judge where it was tuned: the experiment,
//! the data and split, its agreement on dev and test with intervals, parse failures,
//! calibration, the selective threshold, tokens, cost, latency and load ramps. Written by
//! `engine::card`, rendered by `report::card`; nothing reads it back to judge.

use serde::{Deserialize, Serialize};

use crate::metrics::{Percentiles, Quality};
use crate::trust::belief::ConfidenceKind;
use crate::trust::selective::{Accepted, Target};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    pub experiment: String,
    /// The trial's store id there.
    pub trial: i64,
    pub dataset: Data,
    pub split: Split,
    /// The metric `dev` and `test` are in: the experiment's selection metric.
    pub metric: Quality,
    pub dev: Score,
    /// None where the trial did not judge the test split.
    pub test: Option<Score>,
    pub parse_failure_rate: Option<f64>,
    /// Calls that failed (no verdict).
    pub failed_calls: usize,
    pub calibration: Option<Calibration>,
    pub selective: Option<Selective>,
    pub prompt_tokens_per_item: Option<f64>,
    pub completion_tokens_per_item: Option<f64>,
    pub usd_per_1k_items: Option<f64>,
    pub latency_ms: Percentiles,
    /// Requests in flight when the latency was measured (none: one).
    pub latency_concurrency: Option<u32>,
    /// Where it was computed (the device's name).
    pub device: Option<String>,
    pub load_ramps: Vec<Ramp>,
}

/// The dataset it was tuned on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Data {
    pub name: String,
    pub content_hash: String,
    pub n_items: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Split {
    pub dev_items: usize,
    pub test_items: usize,
    pub few_shot_pool: usize,
    pub repeats: u32,
}

/// The metric on a split: verdicts, value and 95% interval.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Score {
    pub n: usize,
    pub value: Option<f64>,
    pub ci: Option<[f64; 2]>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    pub confidence: ConfidenceKind,
    pub ece: Option<f64>,
    pub ece_ci: Option<[f64; 2]>,
    pub brier: Option<f64>,
    pub brier_ci: Option<[f64; 2]>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Selective {
    pub target: Target,
    pub threshold: Option<f64>,
    pub dev: Option<Accepted>,
    pub test: Option<Accepted>,
}

/// A load ramp of its judge: when, its knee and SLO, and each level's figures.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ramp {
    pub created_at: String,
    pub knee: Option<u32>,
    pub slo_ms: Option<f64>,
    pub levels: Vec<Level>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Level {
    pub concurrency: u32,
    pub throughput_vps: f64,
    pub latency_ms: Percentiles,
    pub error_rate: f64,
}
