//! `judgelab bench --race`: a race against the full grid, in simulation, over scripted
//! judges of known accuracy (`cargo xtask bench race`).
//!
//! Each seed draws a grid of 48 configurations, 2 templates × 3 few-shot counts × 4
//! temperatures × 2 top_p values, whose true accuracies add one effect per axis level to a
//! base, as a sweep's axes do:
//!
//! - base accuracy uniform in 0.65–0.80;
//! - the second template −0.05 to −0.15;
//! - few-shot: +0.03 to +0.08 for the second count, +0.05 to +0.12 for the third;
//! - temperature: 0, −0 to −0.01, −0.03 to −0.08, −0.10 to −0.20;
//! - top_p: 0, −0 to −0.01;
//! - and ±0.005 of each configuration's own.
//!
//! Each configuration judges the same 400 items, right or wrong by a latent-difficulty
//! model (a Gaussian copula): item i has a difficulty z_i, configuration t a noise e_ti,
//! both standard normal, and t is right on i when √ρ·z_i + √(1−ρ)·e_ti < Φ⁻¹(p_t). Its
//! accuracy is exactly p_t; ρ (0.8 by default, a correlation of about 0.57 between two
//! configurations' correctness) says how much the items that one configuration gets
//! wrong are those every configuration gets wrong, as they are for one judge model's
//! configurations.
//!
//! The race is the engine's: [`race::rounds`] and [`race::Round::decision`] with the
//! default `[selection]` (rounds of 20 items, no drop before 40, Holm at 0.05) on
//! accuracy, and the pick is [`selection::pick`] among the survivors on every dev item.
//! The full grid judges every configuration on every item and picks the same way; its
//! pick's naive score and its selection-corrected one ([`selection::corrected`], the
//! bootstrap bias-corrected estimate) are scored against the pick's true accuracy.

use judgelab_core::dataset::{Choice, Label, Task};
use judgelab_core::experiment::{Selection, Strategy};
use judgelab_core::metrics::{self, BootstrapSpec, Observation, Quality};
use judgelab_core::race;
use judgelab_core::rng::{self, SplitMix64};
use judgelab_core::selection::{self, Ties};
use serde::Serialize;

/// What to simulate.
#[derive(Debug, Clone, Copy)]
pub struct RaceOptions {
    pub seeds: u64,
    pub items: usize,
    /// ρ, the latent correlation between two configurations' correctness on an item.
    pub correlation: f64,
    /// Resamples of each seed's selection-corrected estimate.
    pub resamples: u32,
}

impl Default for RaceOptions {
    fn default() -> Self {
        RaceOptions {
            seeds: 1000,
            items: 400,
            correlation: 0.8,
            resamples: 100,
        }
    }
}

/// The benchmark's figures, over all seeds; its JSON is the last line of the output.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RaceBench {
    pub seeds: u64,
    pub trials: usize,
    pub items: usize,
    /// Seeds whose race picked a configuration within 0.02 of the truly best.
    pub pick_within_0_02: f64,
    /// The race's calls over the full grid's.
    pub calls_fraction: f64,
    /// The full grid's pick's score on its items, and its selection-corrected estimate,
    /// minus its true accuracy, averaged over seeds.
    pub naive_bias: f64,
    pub corrected_bias: f64,
}

/// The same, with what puts them in context.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct RaceReport {
    pub bench: RaceBench,
    /// Seeds whose full grid picked within 0.02 of the best: what the race is to match.
    pub grid_pick_within_0_02: f64,
    /// The truly best accuracy minus the pick's, averaged over seeds.
    pub race_regret: f64,
    pub grid_regret: f64,
    /// Configurations left at the end of the race, on average.
    pub survivors: f64,
    pub correlation: f64,
    pub selection: Selection,
}

/// One seed's outcome.
struct Seed {
    race_within: bool,
    grid_within: bool,
    race_regret: f64,
    grid_regret: f64,
    calls: usize,
    survivors: usize,
    naive_bias: f64,
    corrected_bias: f64,
}

/// The trials of the simulated grid.
pub const TRIALS: usize = 48;

/// Runs `options.seeds` simulated sweeps on all cores.
pub fn bench(options: RaceOptions) -> RaceReport {
    let selection = Selection {
        metric: Quality::Accuracy,
        strategy: Strategy::Race,
        ..Selection::default()
    };
    let seeds: Vec<Seed> = judgelab_core::parallel::map((0..options.seeds).collect(), |seed| {
        one_seed(seed, &options, &selection)
    });
    let n = seeds.len().max(1) as f64;
    let mean = |f: &dyn Fn(&Seed) -> f64| seeds.iter().map(f).sum::<f64>() / n;
    let grid_calls = (TRIALS * options.items) as f64;
    RaceReport {
        bench: RaceBench {
            seeds: options.seeds,
            trials: TRIALS,
            items: options.items,
            pick_within_0_02: mean(&|s| f64::from(u8::from(s.race_within))),
            calls_fraction: mean(&|s| s.calls as f64 / grid_calls),
            naive_bias: mean(&|s| s.naive_bias),
            corrected_bias: mean(&|s| s.corrected_bias),
        },
        grid_pick_within_0_02: mean(&|s| f64::from(u8::from(s.grid_within))),
        race_regret: mean(&|s| s.race_regret),
        grid_regret: mean(&|s| s.grid_regret),
        survivors: mean(&|s| s.survivors as f64),
        correlation: options.correlation,
        selection,
    }
}

fn one_seed(seed: u64, options: &RaceOptions, selection: &Selection) -> Seed {
    let mut rng = SplitMix64::new(rng::mix(&[0x7261_6365, seed]));
    let truth = grid_truth(&mut rng);
    let trials = judged(&truth, options.items, options.correlation, &mut rng);
    let best = truth.iter().copied().fold(f64::MIN, f64::max);
    let no_costs = vec![Ties::default(); TRIALS];
    let accuracy_of = |t: &[Observation]| metrics::value_of(Task::Pairwise, t, Quality::Accuracy);

    // The race, round by round, every survivor on the same first items.
    let mut alive: Vec<usize> = (0..TRIALS).collect();
    let (mut calls, mut judged_items) = (0, 0);
    for round in race::rounds(options.items, selection) {
        calls += alive.len() * (round.n_items - judged_items);
        judged_items = round.n_items;
        let views: Vec<&[Observation]> =
            alive.iter().map(|&t| &trials[t][..round.n_items]).collect();
        let groups: Vec<usize> = (0..alive.len()).collect();
        let decision = round.decision(
            Task::Pairwise,
            selection,
            &views,
            &no_costs[..alive.len()],
            &groups,
        );
        let dropped: Vec<usize> = decision.dropped().collect();
        alive = alive
            .iter()
            .enumerate()
            .filter(|(i, _)| !dropped.contains(i))
            .map(|(_, &t)| t)
            .collect();
    }
    let values: Vec<Option<f64>> = alive.iter().map(|&t| accuracy_of(&trials[t])).collect();
    let race_pick = alive[selection::pick(&values, &no_costs[..alive.len()]).expect("a survivor")];

    // The full grid, and how much its pick's score is inflated by having been chosen.
    let views: Vec<&[Observation]> = trials.iter().map(Vec::as_slice).collect();
    let values: Vec<Option<f64>> = views.iter().map(|t| accuracy_of(t)).collect();
    let grid_pick = selection::pick(&values, &no_costs).expect("a trial");
    let spec = BootstrapSpec {
        resamples: options.resamples,
        seed,
        ..BootstrapSpec::default()
    };
    let corrected =
        selection::corrected(Task::Pairwise, &views, &no_costs, Quality::Accuracy, &spec);
    let true_pick = truth[grid_pick];
    let (naive, value) = corrected
        .and_then(|c| c.naive.zip(c.value))
        .unwrap_or((true_pick, true_pick));
    Seed {
        race_within: truth[race_pick] >= best - 0.02,
        grid_within: true_pick >= best - 0.02,
        race_regret: best - truth[race_pick],
        grid_regret: best - true_pick,
        calls,
        survivors: alive.len(),
        naive_bias: naive - true_pick,
        corrected_bias: value - true_pick,
    }
}

/// Uniform in `[lo, hi)`.
fn uniform(rng: &mut SplitMix64, lo: f64, hi: f64) -> f64 {
    lo + (hi - lo) * (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// Standard normal (Box–Muller).
fn normal(rng: &mut SplitMix64) -> f64 {
    let u = uniform(rng, f64::EPSILON, 1.0);
    let v = uniform(rng, 0.0, 1.0);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// The true accuracies of the grid's configurations, template slowest, top_p fastest.
fn grid_truth(rng: &mut SplitMix64) -> Vec<f64> {
    let base = uniform(rng, 0.65, 0.80);
    let templates = [0.0, -uniform(rng, 0.05, 0.15)];
    let shots = [0.0, uniform(rng, 0.03, 0.08), uniform(rng, 0.05, 0.12)];
    let temperatures = [
        0.0,
        -uniform(rng, 0.0, 0.01),
        -uniform(rng, 0.03, 0.08),
        -uniform(rng, 0.10, 0.20),
    ];
    let top_ps = [0.0, -uniform(rng, 0.0, 0.01)];
    let mut out = Vec::with_capacity(TRIALS);
    for template in templates {
        for shot in shots {
            for temperature in temperatures {
                for top_p in top_ps {
                    let own = uniform(rng, -0.005, 0.005);
                    let p = base + template + shot + temperature + top_p + own;
                    out.push(p.clamp(0.05, 0.95));
                }
            }
        }
    }
    out
}

/// Each configuration's verdicts on `n_items` items whose human labels alternate.
fn judged(truth: &[f64], n_items: usize, rho: f64, rng: &mut SplitMix64) -> Vec<Vec<Observation>> {
    let difficulty: Vec<f64> = (0..n_items).map(|_| normal(rng)).collect();
    let (shared, own) = (rho.sqrt(), (1.0 - rho).sqrt());
    truth
        .iter()
        .map(|&p| {
            let threshold = judgelab_core::normal::quantile(p);
            difficulty
                .iter()
                .enumerate()
                .map(|(unit, z)| {
                    let right = shared * z + own * normal(rng) < threshold;
                    let human = Label::Choice(if unit % 2 == 0 { Choice::A } else { Choice::B });
                    let wrong = Label::Choice(if unit % 2 == 0 { Choice::B } else { Choice::A });
                    Observation::verdict(unit, human, if right { human } else { wrong })
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_configuration_is_right_as_often_as_its_accuracy() {
        let mut rng = SplitMix64::new(5);
        let trials = judged(&[0.7, 0.9], 40_000, 0.8, &mut rng);
        for (t, p) in trials.iter().zip([0.7, 0.9]) {
            let a = metrics::value_of(Task::Pairwise, t, Quality::Accuracy).unwrap();
            assert!((a - p).abs() < 0.01, "{a} against {p}");
        }
    }

    #[test]
    fn a_race_of_a_few_seeds_picks_near_the_best_with_fewer_calls() {
        let report = bench(RaceOptions {
            seeds: 20,
            resamples: 20,
            ..RaceOptions::default()
        });
        assert!(report.bench.pick_within_0_02 >= 0.8, "{report:?}");
        assert!(report.bench.calls_fraction < 0.5, "{report:?}");
        assert!(report.bench.naive_bias > 0.0, "{report:?}");
    }
}
